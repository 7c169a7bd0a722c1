"""A real OpenAI-compatible HTTP server on loopback that answers deterministically from the prompt.

* preference prompts (``Situation 1:`` / ``Situation 2:``): ``server.prefer(first, second)`` decides
  (default: more occurrences of ``server.keyword``);
* Eureka prompts (``def reward(``): ``server.reward_codes[seed % len]`` in a python block;
* judge prompts (``Episode:``): ``server.judge(episode_text)``;
* goal prompts (``Suggest up to``): ``server.goals`` as ``- goal`` lines.

``server.fail_next`` answers that many requests with ``server.fail_status`` (HTTP 500; with
``server.retry_after`` as its ``Retry-After`` header), ``server.bad_json`` sends a body that is not
JSON, ``server.sleep`` delays every answer. ``server.requests`` records every request body.

Misbehaviours for the client's bounds: ``server.trickle = s`` sends the whole response (status line,
headers, body) one byte every ``s`` seconds; ``server.truncate`` announces the full ``Content-Length``
but sends half the body and closes; ``server.huge = n`` answers a valid completion of ``n`` bytes
(``server.huge_length`` says whether ``Content-Length`` announces it, else the end is the close).
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest


class FakeLLM:
    def __init__(self):
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        self.fail_next = 0
        self.fail_status = 500
        self.retry_after: str | None = None
        self.bad_json = False
        self.trickle = 0.0
        self.truncate = False
        self.huge = 0
        self.huge_length = True
        self.sleep = 0.0
        self.keyword = "cooperate"
        self.prefer = self.prefer_keyword
        self.reward_codes = ["def reward(obs, actions, payoffs, next_obs, info):\n    return payoffs\n"]
        self.judge = lambda episode: "Looks fine.\nScore: 7"
        self.goals = ["build trust", "cooperate more"]
        self.in_flight = 0
        self.max_in_flight = 0
        self.lock = threading.Lock()
        self.base_url = ""

    def prefer_keyword(self, first: str, second: str) -> str:
        a, b = first.count(self.keyword), second.count(self.keyword)
        return "1" if a > b else "2" if b > a else "tie"

    def answer(self, payload: dict) -> str:
        prompt = payload["messages"][-1]["content"]
        if "Situation 1:" in prompt:
            first, second = re.search(r"Situation 1:\n(.*?)\n\nSituation 2:\n(.*?)\n\nWhich situation", prompt, re.S).groups()
            return f"Comparing both.\nAnswer: {self.prefer(first, second)}"
        if "def reward(" in prompt:
            code = self.reward_codes[int(payload.get("seed", 0)) % len(self.reward_codes)]
            return f"Here is a reward.\n```python\n{code}```\n"
        if "Episode:" in prompt:
            return self.judge(prompt.split("Episode:\n", 1)[1])
        if "Suggest up to" in prompt:
            return "Goals:\n" + "\n".join(f"- {goal}" for goal in self.goals)
        return "I do not understand."

    @property
    def num_requests(self) -> int:
        return len(self.requests)


def make_handler(fake: FakeLLM):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            body = self.rfile.read(int(self.headers["Content-Length"]))
            with fake.lock:
                fake.requests.append(json.loads(body))
                fake.headers.append(dict(self.headers))
                fake.in_flight += 1
                fake.max_in_flight = max(fake.max_in_flight, fake.in_flight)
                fail = fake.fail_next > 0
                fake.fail_next -= int(fail)
            headers = {}
            try:
                if fake.sleep:
                    time.sleep(fake.sleep)
                if not self.path.endswith("/chat/completions"):
                    status, reply = 404, b'{"error": "not found"}'
                elif fail:
                    status, reply = fake.fail_status, b'{"error": "overloaded"}'
                    if fake.retry_after is not None:
                        headers["Retry-After"] = fake.retry_after
                elif fake.bad_json:
                    status, reply = 200, b"<html>not json"
                else:
                    content = fake.answer(json.loads(body))
                    message = {"index": 0, "message": {"role": "assistant", "content": content}}
                    status, reply = 200, json.dumps({"id": "x", "object": "chat.completion", "choices": [message]}).encode()
            finally:
                # Leave the in-flight count before answering: once the client has the answer it may send
                # its next request, which must not overlap this one in the count.
                with fake.lock:
                    fake.in_flight -= 1
            try:
                if fake.huge and status == 200:
                    self.reply_huge(fake.huge, fake.huge_length)
                elif fake.trickle:
                    self.reply_trickling(status, reply, fake.trickle)
                else:
                    self.reply(status, reply, headers)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout and size tests)
                self.close_connection = True

        def reply(self, status: int, body: bytes, headers: dict[str, str] | None = None):
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            if fake.truncate:
                self.wfile.write(body[: len(body) // 2])
                self.close_connection = True
            else:
                self.wfile.write(body)

        def reply_trickling(self, status: int, body: bytes, seconds: float):
            raw = f"HTTP/1.1 {status} OK\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body
            for k in range(len(raw)):
                self.wfile.write(raw[k : k + 1])
                self.wfile.flush()
                time.sleep(seconds)
            self.close_connection = True

        def reply_huge(self, size: int, announce: bool):
            head, tail = b'{"choices": [{"index": 0, "message": {"role": "assistant", "content": "', b'"}}]}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            if announce:
                self.send_header("Content-Length", str(size))
            self.end_headers()
            self.wfile.write(head)
            left, chunk = size - len(head) - len(tail), b"x" * 2**20
            while left > 0:
                self.wfile.write(chunk[:left])
                left -= len(chunk)
            self.wfile.write(tail)
            self.close_connection = True

    return Handler


@pytest.fixture
def llm_server():
    fake = FakeLLM()
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(fake))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    fake.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    yield fake
    server.shutdown()
    server.server_close()


@pytest.fixture
def unused_url():
    """A loopback URL nobody listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"
