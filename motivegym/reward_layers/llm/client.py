"""A small OpenAI-compatible ``/chat/completions`` client (standard library only).

Works with any server that speaks the OpenAI chat API: vLLM, llama.cpp ``llama-server``, Ollama
(``http://localhost:11434/v1``), or ``examples/llm_server.py``. Settings come from arguments or the
environment: ``MOTIVEGYM_LLM_BASE_URL`` (fallback ``OPENAI_BASE_URL``), ``MOTIVEGYM_LLM_MODEL``,
``MOTIVEGYM_LLM_API_KEY`` (fallback ``OPENAI_API_KEY``).

* retries with exponential backoff (``backoff · 2^attempt`` s, or the server's ``Retry-After``) on
  HTTP 429/5xx, timeouts and connection errors; other 4xx fail at once;
* a per-request timeout;
* :meth:`LLMClient.chat_many` runs a batch on a thread pool of ``max_workers``;
* an on-disk JSON-lines cache keyed by ``sha256(model, messages, params)``: a rerun sends nothing
  that was already answered.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

Message = dict[str, str]

RETRYABLE_STATUS = frozenset({429, 500, 502, 503, 504})
MAX_RETRY_AFTER_S = 30.0


class LLMError(RuntimeError):
    """Base class of the client's errors."""


class LLMUnavailableError(LLMError):
    """The server could not be reached (connection refused, DNS, timeouts) after every retry."""


class LLMTimeoutError(LLMUnavailableError):
    """The server did not answer within the timeout (after every retry)."""


class LLMResponseError(LLMError):
    """The server answered, but with an error status or a body that is not a chat completion."""


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
        answers = {}
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                answers[row["key"]] = row["content"]
            except (json.JSONDecodeError, KeyError, TypeError) as error:
                raise ValueError(f"corrupt LLM cache {path} line {number}: {error}") from None
        return answers

    def get(self, key: str) -> str | None:
        with self._lock:
            return self._answers.get(key)

    def put(self, key: str, content: str) -> None:
        with self._lock:
            self._answers[key] = content
            if self.path is not None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                with open(self.path, "a", encoding="utf-8") as handle:
                    handle.write(json.dumps({"key": key, "content": content}, ensure_ascii=False) + "\n")

    def __len__(self) -> int:
        return len(self._answers)


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


class LLMClient:
    """``client.chat(messages, temperature=0.0) -> str`` against an OpenAI-compatible server."""

    def __init__(
        self,
        base_url: str | None = None,
        model: str | None = None,
        api_key: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 3,
        backoff: float = 0.5,
        max_workers: int = 4,
        cache_path: str | Path | None = None,
    ):
        base_url = first_setting(base_url, "MOTIVEGYM_LLM_BASE_URL", "OPENAI_BASE_URL")
        if not base_url:
            raise ValueError("no LLM server: pass base_url= (or --base-url) or set MOTIVEGYM_LLM_BASE_URL, e.g. http://localhost:11434/v1")
        model = first_setting(model, "MOTIVEGYM_LLM_MODEL")
        if not model:
            raise ValueError("no LLM model name: pass model= (or --model) or set MOTIVEGYM_LLM_MODEL")
        if timeout <= 0 or max_retries < 0 or backoff < 0 or max_workers < 1:
            raise ValueError(f"need timeout > 0, max_retries >= 0, backoff >= 0, max_workers >= 1; got {timeout}, {max_retries}, {backoff}, {max_workers}")
        self.base_url = base_url.rstrip("/")
        self.url = self.base_url + "/chat/completions"
        self.model = model
        self.api_key = first_setting(api_key, "MOTIVEGYM_LLM_API_KEY", "OPENAI_API_KEY")
        self.timeout, self.max_retries, self.backoff, self.max_workers = timeout, max_retries, backoff, max_workers
        self.cache = ResponseCache(cache_path)
        self.requests_sent = 0
        self.cache_hits = 0
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
        last_error: Exception | None = None
        for attempt in range(self.max_retries + 1):
            if attempt:
                time.sleep(self._delay(attempt, last_error))
            try:
                return self._post(payload)
            except urllib.error.HTTPError as error:
                if error.code not in RETRYABLE_STATUS:
                    detail = error.read()[:300].decode("utf-8", "replace")
                    raise LLMResponseError(f"{self.url} answered HTTP {error.code}: {detail}") from None
                last_error = error
            except TimeoutError as error:
                last_error = error
            except urllib.error.URLError as error:
                last_error = error.reason if isinstance(error.reason, TimeoutError) else error
            except (OSError, http.client.HTTPException) as error:  # resets and truncated responses
                last_error = error
        tries = self.max_retries + 1
        if isinstance(last_error, urllib.error.HTTPError):
            raise LLMResponseError(f"{self.url} answered HTTP {last_error.code} on all {tries} attempts")
        if isinstance(last_error, TimeoutError):
            raise LLMTimeoutError(f"{self.url} did not answer within {self.timeout} s ({tries} attempts)")
        raise LLMUnavailableError(
            f"cannot reach the LLM server at {self.url} ({tries} attempts): {last_error}. "
            "Is it running? Set --base-url / MOTIVEGYM_LLM_BASE_URL."
        )

    def _delay(self, attempt: int, error: Exception | None) -> float:
        if isinstance(error, urllib.error.HTTPError) and error.headers.get("Retry-After"):
            try:
                return min(float(error.headers["Retry-After"]), MAX_RETRY_AFTER_S)
            except ValueError:
                pass  # an HTTP date: use the exponential schedule
        return self.backoff * 2 ** (attempt - 1)

    def _post(self, payload: dict[str, Any]) -> str:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(self.url, data=json.dumps(payload).encode("utf-8"), headers=headers, method="POST")
        with self._count_lock:
            self.requests_sent += 1
        with urllib.request.urlopen(request, timeout=self.timeout) as response:
            body = response.read()
        return completion_content(body, self.url)
