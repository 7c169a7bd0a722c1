"""A tiny deterministic OpenAI-compatible server, so the LLM reward tools can be tried offline.

    python examples/llm_server.py --port 8000            # serve http://127.0.0.1:8000/v1
    python examples/llm_server.py --demo                 # serve on a free port and run the whole pipeline

It is not a language model: it reads the prompts motivegym sends and answers by rule.

* preference prompts (Motif): prefers the situation whose caption has the larger ``<key>=<number>``
  (``--prefer-key``, default ``mean_trust``); ``tie`` when equal or absent;
* reward-code prompts (Eureka): one of a few fixed reward functions, chosen by the request's ``seed``;
* judge prompts: ``Score: 10 · <key>`` of the episode's final caption (clipped to [0, 10]);
* goal prompts (ELLM): two fixed goals about the key;
* progress-function prompts (Sarukkai et al. 2024): a fixed progress function for KeyDoorGift (key held,
  own door open) and for CrafterTeam (the fraction of achievements unlocked), for other envs the observation's
  last entry clipped to [0, 1].

``--delay s`` waits ``s`` seconds before every answer (a slow model, e.g. for ``motivegym oni``).

Endpoints: ``POST /v1/chat/completions`` and ``GET /v1/models``. Standard library only.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

REWARD_CODES = (
    "def reward(obs, actions, payoffs, next_obs, info):\n    return payoffs / 100.0\n",
    "def reward(obs, actions, payoffs, next_obs, info):\n    return payoffs / 100.0 + info[\"mean_trust\"]\n",
    "def reward(obs, actions, payoffs, next_obs, info):\n    team = jnp.mean(payoffs)\n    return (0.5 * payoffs + 0.5 * team) / 100.0 + 0.5 * info[\"mean_trust\"]\n",
)

#: KeyDoorGift-v0's observation: a [7, 7, 8] grid flattened (channel 4: key on the floor, 5: self), then
#: holding-the-key, own-door-open and t/max_steps
KEY_DOOR_PROGRESS = """def progress(obs, info):
    on_key = jnp.sum(obs[:, 4:-3:8] * obs[:, 5:-3:8], axis=1)
    holding = obs[:, -3]
    own_door_open = obs[:, -2]
    return jnp.clip(0.25 * on_key + 0.5 * holding + own_door_open, 0.0, 1.0)
"""
#: CrafterTeam-v0: the fraction of its achievements each agent has unlocked (info["achievements"] [n, K], cumulative)
CRAFTER_PROGRESS = """def progress(obs, info):
    return jnp.mean(jnp.where(info["achievements"], 1.0, 0.0), axis=1)
"""
GENERIC_PROGRESS = "def progress(obs, info):\n    return jnp.clip(obs[:, -1], 0.0, 1.0)\n"


def value_of(key: str, text: str) -> float | None:
    """The last ``key=<number>`` in ``text``."""
    found = re.findall(rf"\b{re.escape(key)}=(-?\d+(?:\.\d+)?(?:e[-+]?\d+)?)", text)
    return float(found[-1]) if found else None


def answer(payload: dict, key: str) -> str:
    prompt = payload["messages"][-1]["content"]
    if "Situation 1:" in prompt:
        match = re.search(r"Situation 1:\n(.*?)\n\nSituation 2:\n(.*?)\n\nWhich situation", prompt, re.S)
        first, second = (value_of(key, part) for part in match.groups()) if match else (None, None)
        if first is None or second is None or first == second:
            return f"Both situations have the same {key}.\nAnswer: tie"
        better = 1 if first > second else 2
        return f"Situation {better} has the higher {key}.\nAnswer: {better}"
    if "def progress(obs, info)" in prompt:
        code = KEY_DOOR_PROGRESS if "Environment: KeyDoorGift" in prompt else CRAFTER_PROGRESS if "Environment: CrafterTeam" in prompt else GENERIC_PROGRESS
        return f"Progress grows as the task advances.\n```python\n{code}```"
    if "def reward(" in prompt:
        code = REWARD_CODES[int(payload.get("seed") or 0) % len(REWARD_CODES)]
        return f"This reward balances payoff and {key}.\n```python\n{code}```"
    if "Episode:" in prompt:
        value = value_of(key, prompt.split("Episode:", 1)[1])
        if value is None:
            return f"The episode does not report {key}.\nScore: 0"
        return f"The final {key} is {value:g}.\nScore: {min(max(10.0 * value, 0.0), 10.0):.1f}"
    if "Suggest up to" in prompt:
        return f"- raise {key}\n- increase cooperation_rate"
    return "This toy server only answers motivegym's prompts."


def make_handler(key: str, delay: float = 0.0):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def send_json(self, status: int, data: dict) -> None:
            body = json.dumps(data).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            if self.path.rstrip("/").endswith("/models"):
                return self.send_json(200, {"object": "list", "data": [{"id": "toy", "object": "model"}]})
            self.send_json(404, {"error": f"unknown path {self.path}"})

        def do_POST(self):
            if not self.path.endswith("/chat/completions"):
                return self.send_json(404, {"error": f"unknown path {self.path}"})
            try:
                payload = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                content = answer(payload, key)
                if delay:
                    time.sleep(delay)
            except (ValueError, KeyError, IndexError, TypeError) as error:
                return self.send_json(400, {"error": f"bad request: {error}"})
            self.send_json(200, {"object": "chat.completion", "model": payload.get("model", "toy"), "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}]})

    return Handler


def serve(port: int = 8000, key: str = "mean_trust", host: str = "127.0.0.1", delay: float = 0.0) -> ThreadingHTTPServer:
    """A started server (in a daemon thread); ``server.shutdown()`` stops it. ``delay``: seconds before every answer."""
    server = ThreadingHTTPServer((host, port), make_handler(key, delay))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def demo(out_dir: str | Path, pairs: int = 200, env_id: str = "TrustDilemma-v0") -> int:
    """Annotate → distill → judge → a short rollout on the learned reward, all against a local server."""
    from motivegym.cli import main

    server = serve(port=0)
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    out = Path(out_dir)
    client = ["--base-url", url, "--model", "toy"]
    try:
        steps = [
            ["llm", "annotate", env_id, "--pairs", str(pairs), "--out", str(out / "motif"), "--param", "max_steps=20", *client],
            ["llm", "distill", str(out / "motif"), "--steps", "500"],
            ["llm", "judge", env_id, "--episodes", "2", "--policy", "constant:0.8", "--param", "max_steps=20", "--cache", str(out / "judge_cache.jsonl"), *client],
            ["run", env_id, "--reward", f"learned:{out / 'motif' / 'reward_model.npz'}", "--steps", "5", "--policy", "constant:0.8"],
        ]
        for argv in steps:
            print(f"\n$ motivegym {' '.join(argv)}")
            code = main(argv)
            if code:
                return code
        return 0
    finally:
        server.shutdown()
        server.server_close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--prefer-key", default="mean_trust", help="caption key whose larger value is preferred / scored")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds to wait before every answer (a slow model)")
    parser.add_argument("--demo", action="store_true", help="run annotate → distill → judge → run against a server on a free port")
    parser.add_argument("--out", default=None, help="demo output folder (default: a temporary folder)")
    args = parser.parse_args(argv)
    if args.demo:
        if args.out:
            return demo(args.out)
        with tempfile.TemporaryDirectory() as folder:
            return demo(folder)
    server = ThreadingHTTPServer((args.host, args.port), make_handler(args.prefer_key, args.delay))
    server.daemon_threads = True
    print(f"serving a toy OpenAI-compatible API on http://{args.host}:{args.port}/v1 (Ctrl-C stops)")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
