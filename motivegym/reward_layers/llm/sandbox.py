"""Run one function in a fresh child process with a wall-clock and a memory bound (standard library only).

:func:`run_bounded` starts ``python -m motivegym.reward_layers.llm.sandbox``; the child imports the
target module, runs an optional ``prepare`` function (JAX's backend warms up here, before any bound
applies), says ``ready``, then limits itself and calls ``target(payload)``:

* **memory:** ``RLIMIT_AS`` = the address space in use after ``prepare`` + ``memory_mb`` (Linux; on
  systems without ``/proc/self/status`` only the time bound applies). An allocation past it raises
  ``MemoryError``;
* **time:** the parent kills the child ``seconds`` after ``ready`` (``RLIMIT_CPU`` backs this up);
* **startup:** a child that is not ``ready`` within ``startup_seconds`` is killed and
  :class:`SandboxStartError` raised (a broken environment, not the payload's fault).

Target and ``prepare`` are ``"module:function"`` names chosen by the caller, never by the payload. The
child sees ``JAX_PLATFORMS=cpu``: it traces abstractly and must not claim a GPU. Defaults come from
:class:`Bounds`, overridable with ``MOTIVEGYM_SANDBOX_SECONDS``, ``MOTIVEGYM_SANDBOX_MEMORY_MB`` and
``MOTIVEGYM_SANDBOX_STARTUP_SECONDS``.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import math
import os
import queue
import subprocess
import sys
import tempfile
import threading
from typing import Any

READY = "ready"
ENVIRONMENT = {"seconds": "MOTIVEGYM_SANDBOX_SECONDS", "memory_mb": "MOTIVEGYM_SANDBOX_MEMORY_MB", "startup_seconds": "MOTIVEGYM_SANDBOX_STARTUP_SECONDS"}


@dataclasses.dataclass(frozen=True)
class Bounds:
    """``seconds`` of wall clock and ``memory_mb`` of extra address space for the target; ``startup_seconds`` for imports."""

    seconds: float = 10.0
    memory_mb: int = 1024
    startup_seconds: float = 120.0

    def __post_init__(self):
        for name in ("seconds", "memory_mb", "startup_seconds"):
            value = getattr(self, name)
            if not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
                raise ValueError(f"sandbox bound {name} must be a positive number, got {value!r}")


def bounds_from_environment(default: Bounds = Bounds()) -> Bounds:
    """``default`` with each field replaced by its ``MOTIVEGYM_SANDBOX_*`` variable when set."""
    values = {}
    for field, variable in ENVIRONMENT.items():
        text = os.environ.get(variable, "").strip()
        if not text:
            continue
        try:
            values[field] = int(text) if field == "memory_mb" else float(text)
        except ValueError:
            raise ValueError(f"{variable} must be a number, got {text!r}") from None
    return dataclasses.replace(default, **values)


class SandboxError(RuntimeError):
    """Base class: the bounded child could not give an answer."""


class SandboxStartError(SandboxError):
    """The child did not start (imports failed or took longer than ``startup_seconds``)."""


class BoundExceededError(SandboxError):
    """The target ran past a bound: ``kind`` is ``"time"``, ``"memory"`` or ``"crash"`` (the child died)."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


def _child_environment() -> dict[str, str]:
    return dict(os.environ, JAX_PLATFORMS="cpu", PYTHONUNBUFFERED="1")


def _reader(stream, lines: queue.Queue) -> None:
    for line in stream:
        lines.put(line.rstrip("\n"))
    lines.put(None)  # end of output


def _tail(handle, limit: int = 800) -> str:
    handle.seek(0)
    text = handle.read().decode("utf-8", "replace").strip()
    return text[-limit:] if text else "(no output)"


def run_bounded(target: str, payload: Any, bounds: Bounds, prepare: str | None = None) -> Any:
    """``target(payload)`` (JSON in, JSON out) run in a child under ``bounds``; see the module docstring."""
    request = {"target": target, "prepare": prepare, "payload": payload, "seconds": bounds.seconds, "memory_mb": bounds.memory_mb}
    with tempfile.TemporaryFile() as stderr:
        child = subprocess.Popen(
            [sys.executable, "-m", __name__],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            env=_child_environment(),
            text=True,
            encoding="utf-8",
        )
        lines: queue.Queue = queue.Queue()
        reader = threading.Thread(target=_reader, args=(child.stdout, lines), daemon=True)
        reader.start()
        try:
            child.stdin.write(json.dumps(request) + "\n")
            child.stdin.close()
            return _answer(child, lines, bounds, stderr)
        finally:
            if child.poll() is None:
                child.kill()
            child.wait()
            reader.join(timeout=5)


def _answer(child: subprocess.Popen, lines: queue.Queue, bounds: Bounds, stderr) -> Any:
    """The child's answer; its output lines arrive on ``lines`` (``None`` at its end)."""
    try:
        first = lines.get(timeout=bounds.startup_seconds)
    except queue.Empty:
        raise SandboxStartError(f"the sandbox process did not start within {bounds.startup_seconds:g} s (MOTIVEGYM_SANDBOX_STARTUP_SECONDS)") from None
    if first != READY:
        child.wait()
        raise SandboxStartError(f"the sandbox process failed to start (exit code {child.returncode}): {_tail(stderr)}")
    try:
        line = lines.get(timeout=bounds.seconds)
    except queue.Empty:
        child.kill()
        raise BoundExceededError("time", f"did not finish within {bounds.seconds:g} s (the sandbox's time bound; MOTIVEGYM_SANDBOX_SECONDS)") from None
    if line is None:
        child.wait()
        raise BoundExceededError("crash", f"the sandbox process died (exit code {child.returncode}) without an answer: {_tail(stderr)}")
    answer = json.loads(line)
    if "bound" in answer:
        raise BoundExceededError(answer["bound"], answer["message"])
    return answer["result"]


# ----- the child -----
def _address_space_bytes() -> int | None:
    """The process's current virtual memory size (``VmSize``), or ``None`` where ``/proc`` is missing."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _limit_self(seconds: float, memory_mb: int) -> None:
    import resource

    used = _address_space_bytes()
    if used is not None:
        limit = used + memory_mb * 2**20
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        resource.setrlimit(resource.RLIMIT_AS, (limit if hard == resource.RLIM_INFINITY else min(limit, hard), hard))
    cpu = resource.getrusage(resource.RUSAGE_SELF)
    budget = math.ceil(cpu.ru_utime + cpu.ru_stime + seconds) + 2
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    resource.setrlimit(resource.RLIMIT_CPU, (budget if hard == resource.RLIM_INFINITY else min(budget, hard), hard))


def _function(name: str):
    module, _, function = name.partition(":")
    return getattr(importlib.import_module(module), function)


def main() -> None:
    request = json.loads(sys.stdin.readline())
    target = _function(request["target"])
    if request.get("prepare"):
        _function(request["prepare"])()
    print(READY, flush=True)
    _limit_self(request["seconds"], request["memory_mb"])
    try:
        answer = {"result": target(request["payload"])}
    except MemoryError:
        answer = {"bound": "memory", "message": f"needed more than the sandbox's memory bound of {request['memory_mb']} MiB (MOTIVEGYM_SANDBOX_MEMORY_MB)"}
    print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main()
