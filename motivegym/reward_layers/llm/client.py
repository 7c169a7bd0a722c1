"""A small OpenAI-compatible ``/chat/completions`` client (standard library only).

Works with any server that speaks the OpenAI chat API: vLLM, llama.cpp ``llama-server``, Ollama
(``http://localhost:11434/v1``), or ``examples/llm_server.py``. Settings come from arguments or the
environment: ``MOTIVEGYM_LLM_BASE_URL`` (fallback ``OPENAI_BASE_URL``), ``MOTIVEGYM_LLM_MODEL``,
``MOTIVEGYM_LLM_API_KEY`` (fallback ``OPENAI_API_KEY``).

Every call is bounded:

* **one deadline** of ``timeout`` seconds (default :data:`DEFAULT_TIMEOUT_S`) for the whole call:
  connecting, every read and all retries with their waits; a server that trickles bytes cannot
  stretch it (a watchdog shuts the socket at the deadline);
* retries with exponential backoff (``backoff · 2^attempt`` s, or the server's ``Retry-After``: a
  non-negative number of seconds or an HTTP date, at most :data:`MAX_RETRY_AFTER_S`; anything else
  is ignored) on HTTP 429/5xx, connection errors and answers cut short; other 4xx fail at once;
* answers larger than ``max_response_bytes`` (default :data:`MAX_RESPONSE_BYTES`) are refused;
* an answer shorter than its ``Content-Length`` is reported as cut short (:class:`LLMTruncatedError`);
* :meth:`LLMClient.chat_many` runs a batch on a thread pool of ``max_workers``;
* an on-disk JSON-lines cache keyed by ``sha256(model, messages, params)``: a rerun sends nothing
  that was already answered. A process killed mid-append leaves at worst one torn line, which the
  next load skips with a warning (:func:`read_json_lines`) and the next append starts after.
"""

from __future__ import annotations

import email.utils
import hashlib
import http.client
import json
import math
import os
import socket
import threading
import time
import urllib.parse
import warnings
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

Message = dict[str, str]

RETRYABLE_STATUS = frozenset({429, 500, 502, 503, 504})
MAX_RETRY_AFTER_S = 30.0
DEFAULT_TIMEOUT_S = 120.0
MAX_RESPONSE_BYTES = 8 * 2**20
_READ_CHUNK = 64 * 1024


class LLMError(RuntimeError):
    """Base class of the client's errors."""


class LLMUnavailableError(LLMError):
    """The server could not be reached (connection refused, DNS, resets) after every retry."""


class LLMTimeoutError(LLMUnavailableError):
    """The call's deadline passed before an answer arrived."""


class LLMResponseError(LLMError):
    """The server answered, but with an error status, a body that is not a chat completion, or one too large."""


class LLMTruncatedError(LLMResponseError):
    """The server's answer ended before the length it announced (after every retry)."""


def first_setting(explicit: str | None, *variables: str) -> str | None:
    """``explicit`` if given, else the first non-empty environment variable of ``variables``."""
    if explicit:
        return explicit
    for variable in variables:
        if os.environ.get(variable):
            return os.environ[variable]
    return None


def cache_key(model: str, messages: list[Message], params: dict[str, Any]) -> str:
    """``sha256`` of the canonical JSON of ``(model, messages, params)``."""
    payload = json.dumps({"model": model, "messages": messages, "params": params}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def parse_retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header: a finite number ``>= 0`` or an HTTP date (past dates: 0);
    ``None`` when absent or anything else (``-1``, ``nan``, ``inf``, garbage)."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        return max((when - (now or datetime.now(UTC))).total_seconds(), 0.0)
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


# ----- JSON-lines files that survive a kill mid-write -----
def read_json_lines(path: str | Path, what: str) -> list[tuple[int, Any]]:
    """``(line number, value)`` of each JSON line of ``path``. A line that is not JSON (or not UTF-8) was torn by a
    kill mid-write: it is skipped with a warning naming it; the file is never refused for it."""
    rows, torn = [], []
    for number, raw in enumerate(Path(path).read_bytes().split(b"\n"), 1):
        if not raw.strip():
            continue
        try:
            rows.append((number, json.loads(raw.decode("utf-8"))))
        except (UnicodeDecodeError, json.JSONDecodeError):
            torn.append(number)
    if torn:
        shown = ", ".join(map(str, torn[:10])) + (" …" if len(torn) > 10 else "")
        warnings.warn(f"{what} {path}: skipped {len(torn)} torn line(s) that are not JSON (a write cut short): line {shown}", stacklevel=2)
    return rows


def append_json_lines(path: str | Path, rows: list[Any]) -> None:
    """Append one JSON line per row in one write; when the file ends mid-line (a torn last line) start on a new line."""
    data = b"".join(json.dumps(row, ensure_ascii=False).encode("utf-8") + b"\n" for row in rows)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as handle:
        if handle.seek(0, os.SEEK_END):
            handle.seek(-1, os.SEEK_END)
            if handle.read(1) != b"\n":
                data = b"\n" + data
        handle.write(data)


class ResponseCache:
    """Answers keyed by :func:`cache_key`, kept in memory and appended to a JSON-lines file."""

    def __init__(self, path: str | Path | None):
        self.path = Path(path) if path is not None else None
        self._answers: dict[str, str] = {}
        self._lock = threading.Lock()
        if self.path is not None and self.path.exists():
            self._answers = self._load(self.path)

    @staticmethod
    def _load(path: Path) -> dict[str, str]:
        if not path.is_file():
            raise ValueError(f"LLM cache {path} is not a file")
        answers = {}
        for number, row in read_json_lines(path, "LLM cache"):
            if not (isinstance(row, dict) and isinstance(row.get("key"), str) and isinstance(row.get("content"), str)):
                raise ValueError(f"{path} line {number} is not an LLM cache row {{'key': …, 'content': …}}: is this file an LLM cache?")
            answers[row["key"]] = row["content"]
        return answers

    def get(self, key: str) -> str | None:
        with self._lock:
            return self._answers.get(key)

    def put(self, key: str, content: str) -> None:
        with self._lock:
            self._answers[key] = content
            if self.path is not None:
                append_json_lines(self.path, [{"key": key, "content": content}])

    def __len__(self) -> int:
        return len(self._answers)

    def __getstate__(self) -> dict:  # picklable (ONI's feedback process gets a copy): the lock is not
        return {k: v for k, v in vars(self).items() if k != "_lock"}

    def __setstate__(self, state: dict) -> None:
        vars(self).update(state)
        self._lock = threading.Lock()


def completion_content(body: bytes, url: str) -> str:
    """The first choice's ``message.content`` of a chat-completion JSON body."""
    try:
        data = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise LLMResponseError(f"{url} returned a body that is not JSON ({error}): {body[:200]!r}") from None
    try:
        content = data["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise LLMResponseError(f"{url} returned JSON without choices[0].message.content: {str(data)[:200]}") from None
    if not isinstance(content, str):
        raise LLMResponseError(f"{url} returned a non-string message content: {content!r}")
    return content


# ----- transport -----
class _CutShort(Exception):
    def __init__(self, received: int, expected: int | None):
        super().__init__(f"the answer was cut short after {received:,} of {expected:,} bytes" if expected is not None else f"the answer was cut short after {received:,} bytes")


class _Watchdog:
    """Shuts the connection's socket at the deadline, so no read can outlive it."""

    def __init__(self, connection: http.client.HTTPConnection, seconds: float):
        self.connection, self.fired = connection, False
        self._timer = threading.Timer(max(seconds, 0.0), self._fire)
        self._timer.daemon = True

    def _fire(self) -> None:
        self.fired = True
        sock = self.connection.sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def __enter__(self) -> _Watchdog:
        self._timer.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._timer.cancel()


def read_capped(response: http.client.HTTPResponse, limit: int) -> bytes:
    """The body of ``response``: refused past ``limit`` bytes (by ``Content-Length`` or while reading), :class:`_CutShort`
    when it ends before its ``Content-Length`` or mid-chunk."""
    length = response.getheader("Content-Length")
    expected = int(length) if length is not None and length.strip().isdigit() else None
    if expected is not None and expected > limit:
        raise LLMResponseError(f"the answer is {expected:,} bytes; the client accepts at most {limit:,} (max_response_bytes)")
    body = bytearray()
    while True:
        try:
            chunk = response.read(_READ_CHUNK)
        except http.client.IncompleteRead as error:
            raise _CutShort(len(body) + len(error.partial), expected) from None
        if not chunk:
            break
        body += chunk
        if len(body) > limit:
            raise LLMResponseError(f"the answer exceeds {limit:,} bytes, the most the client accepts (max_response_bytes)")
    if expected is not None and len(body) < expected:
        raise _CutShort(len(body), expected)
    return bytes(body)


class LLMClient:
    """``client.chat(messages, temperature=0.0) -> str`` against an OpenAI-compatible server (bounds: module docstring)."""

    def __init__(
        self,
        base_url: str | None = None,
        model: str | None = None,
        api_key: str | None = None,
        timeout: float = DEFAULT_TIMEOUT_S,
        max_retries: int = 3,
        backoff: float = 0.5,
        max_workers: int = 4,
        cache_path: str | Path | None = None,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
    ):
        base_url = first_setting(base_url, "MOTIVEGYM_LLM_BASE_URL", "OPENAI_BASE_URL")
        if not base_url:
            raise ValueError("no LLM server: pass base_url= (or --base-url) or set MOTIVEGYM_LLM_BASE_URL, e.g. http://localhost:11434/v1")
        model = first_setting(model, "MOTIVEGYM_LLM_MODEL")
        if not model:
            raise ValueError("no LLM model name: pass model= (or --model) or set MOTIVEGYM_LLM_MODEL")
        if not (math.isfinite(timeout) and timeout > 0) or max_retries < 0 or not (math.isfinite(backoff) and backoff >= 0) or max_workers < 1 or max_response_bytes < 1:
            raise ValueError(
                "need timeout > 0, max_retries >= 0, backoff >= 0, max_workers >= 1, max_response_bytes >= 1; "
                f"got {timeout}, {max_retries}, {backoff}, {max_workers}, {max_response_bytes}"
            )
        self.base_url = base_url.rstrip("/")
        self.url = self.base_url + "/chat/completions"
        parts = urllib.parse.urlsplit(self.url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"the LLM base URL must be http(s)://host[:port]/…, got {base_url!r}")
        self.model = model
        self.api_key = first_setting(api_key, "MOTIVEGYM_LLM_API_KEY", "OPENAI_API_KEY")
        self.timeout, self.max_retries, self.backoff, self.max_workers = timeout, max_retries, backoff, max_workers
        self.max_response_bytes = max_response_bytes
        self.cache = ResponseCache(cache_path)
        self.requests_sent = 0
        self.cache_hits = 0
        self._count_lock = threading.Lock()

    def __getstate__(self) -> dict:  # picklable (ONI's feedback process gets a copy): the lock is not
        return {k: v for k, v in vars(self).items() if k != "_count_lock"}

    def __setstate__(self, state: dict) -> None:
        vars(self).update(state)
        self._count_lock = threading.Lock()

    def chat(self, messages: list[Message], **params: Any) -> str:
        """The assistant's reply to ``messages``; ``params`` (``temperature``, ``max_tokens``, ``seed`` …) go into the request."""
        key = cache_key(self.model, messages, params)
        cached = self.cache.get(key)
        if cached is not None:
            with self._count_lock:
                self.cache_hits += 1
            return cached
        content = self._post_with_retries({"model": self.model, "messages": messages, **params})
        self.cache.put(key, content)
        return content

    def chat_many(self, batch: list[list[Message]], **params: Any) -> list[str]:
        """Replies to each conversation of ``batch`` (in order), at most ``max_workers`` requests in flight."""
        if not batch:
            return []
        with ThreadPoolExecutor(max_workers=min(self.max_workers, len(batch))) as pool:
            return list(pool.map(lambda messages: self.chat(messages, **params), batch))

    def ask(self, prompt: str, system: str | None = None, **params: Any) -> str:
        """:meth:`chat` with one user message (and an optional system message)."""
        messages = ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": prompt}]
        return self.chat(messages, **params)

    # ----- transport -----
    def _post_with_retries(self, payload: dict[str, Any]) -> str:
        """Attempts until an answer, a non-retryable error, ``max_retries`` retries or the call's deadline."""
        deadline = time.monotonic() + self.timeout
        body = json.dumps(payload).encode("utf-8")
        failure: Exception | int | None = None  # the last attempt's: an exception or a retryable HTTP status
        retry_after: float | None = None
        attempts = 0
        for attempt in range(self.max_retries + 1):
            if attempt:
                delay = min(retry_after, MAX_RETRY_AFTER_S) if retry_after is not None else self.backoff * 2 ** (attempt - 1)
                if time.monotonic() + delay >= deadline:
                    break  # waiting would pass the deadline
                time.sleep(delay)
            attempts += 1
            try:
                status, headers, data = self._post(body, deadline)
            except TimeoutError as error:
                failure = error
                break
            except (_CutShort, OSError, http.client.HTTPException) as error:
                failure, retry_after = error, None
                continue
            except LLMResponseError as error:  # too large: not retried
                raise LLMResponseError(f"{self.url}: {error}") from None
            if 200 <= status < 300:
                return completion_content(data, self.url)
            if status not in RETRYABLE_STATUS:
                raise LLMResponseError(f"{self.url} answered HTTP {status}: {data[:300].decode('utf-8', 'replace')}")
            failure, retry_after = status, parse_retry_after(headers.get("Retry-After"))
        raise self._failure(failure, attempts)

    def _failure(self, failure: Exception | int | None, attempts: int) -> LLMError:
        tries = f"{attempts} attempt{'s' if attempts != 1 else ''}"
        cut = "" if attempts == self.max_retries + 1 else f"; the {self.timeout:g} s deadline left no time for a retry"
        if isinstance(failure, int):
            return LLMResponseError(f"{self.url} answered HTTP {failure} on all {tries}{cut}")
        if isinstance(failure, TimeoutError):
            return LLMTimeoutError(f"{self.url} did not answer within {self.timeout:g} s ({tries}, retries included)")
        if isinstance(failure, _CutShort):
            return LLMTruncatedError(f"{self.url}: {failure} ({tries}{cut})")
        return LLMUnavailableError(
            f"cannot reach the LLM server at {self.url} ({tries}{cut}): {failure}. Is it running? Set --base-url / MOTIVEGYM_LLM_BASE_URL."
        )

    def _post(self, body: bytes, deadline: float) -> tuple[int, http.client.HTTPMessage, bytes]:
        """One POST, all of it before ``deadline``: ``(status, headers, body)``; ``TimeoutError`` at the deadline."""
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("deadline passed")
        parts = urllib.parse.urlsplit(self.url)
        connection_class = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        connection = connection_class(parts.hostname, parts.port, timeout=remaining)
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        with self._count_lock:
            self.requests_sent += 1
        with _Watchdog(connection, remaining) as watchdog:
            try:
                connection.connect()
                if watchdog.fired:
                    raise TimeoutError("deadline passed while connecting")
                connection.request("POST", path, body=body, headers=headers)
                response = connection.getresponse()
                data = read_capped(response, self.max_response_bytes)
                if watchdog.fired:  # the shutdown may read as an early end of the body
                    raise TimeoutError("deadline passed while reading")
                return response.status, response.headers, data
            except (OSError, http.client.HTTPException, _CutShort):
                if watchdog.fired:
                    raise TimeoutError("deadline passed") from None
                raise
            finally:
                connection.close()
