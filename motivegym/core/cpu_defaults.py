"""Process-level XLA CPU settings for the small programs a host step loop runs.

One env step is 30-80 tiny XLA ops. On a few-core host, XLA's default CPU configuration spends more
on thread hand-offs than on the ops themselves:

* the concurrency-optimised scheduler spreads independent ops over the thunk executor's pool, so a
  step ping-pongs between cores (``--xla_cpu_enable_concurrency_optimized_scheduler=false`` keeps the
  schedule sequential);
* asynchronous dispatch returns before the computation ran and synchronises on the next host read,
  which for a 15 µs program costs a second thread wake-up (``jax_cpu_enable_async_dispatch=False``
  runs it inline).

Measured on the 2-vCPU CI machine (``benchmarks/README.md``, ``motivegym bench --compare defaults-off``):
single-env Gymnasium steps/s PlatformEcosystem 7.5k -> 10.3k, ApacheProject 3.7k -> 8.2k; batched
throughput is not affected, and a PureJaxRL-style training loop (one jitted IPPO call) shows no
difference beyond round-to-round noise in any of the four combinations (``benchmarks/xla_defaults.py``,
2026-12-06). Both settings are CPU-only and must be in place before JAX creates its CPU client, so :func:`apply_cpu_defaults` runs on ``import motivegym``. A setting the user already
chose (``XLA_FLAGS`` naming the scheduler flag, ``JAX_CPU_ENABLE_ASYNC_DISPATCH``) is left alone;
``MOTIVEGYM_XLA_DEFAULTS=0`` turns the whole thing off.
"""

from __future__ import annotations

import os

import jax

SCHEDULER_FLAG = "--xla_cpu_enable_concurrency_optimized_scheduler=false"
OPT_OUT_VARIABLE = "MOTIVEGYM_XLA_DEFAULTS"


def switched_off(variable: str) -> bool:
    """Whether the environment variable ``variable`` turns a motivegym default off (``0``, ``false``, ``no``, ``off``)."""
    return os.environ.get(variable, "1").strip().lower() in {"0", "false", "no", "off"}


def backends_initialized() -> bool:
    """Whether JAX has created its backends (after which XLA flags and client settings no longer apply)."""
    from jax._src import xla_bridge

    return xla_bridge.backends_are_initialized()


def apply_cpu_defaults() -> dict[str, bool]:
    """Set the scheduler flag and inline CPU dispatch unless the user chose otherwise.

    Returns which of the two settings this call applied. Nothing is applied once JAX's backends exist
    (the settings would silently not take effect) or when ``MOTIVEGYM_XLA_DEFAULTS=0``.
    """
    applied = {"sequential_scheduler": False, "inline_dispatch": False}
    if switched_off(OPT_OUT_VARIABLE):
        return applied
    if backends_initialized():
        return applied
    flags = os.environ.get("XLA_FLAGS", "")
    if "xla_cpu_enable_concurrency_optimized_scheduler" not in flags:
        os.environ["XLA_FLAGS"] = f"{flags} {SCHEDULER_FLAG}".strip()
        applied["sequential_scheduler"] = True
    if "JAX_CPU_ENABLE_ASYNC_DISPATCH" not in os.environ:
        jax.config.update("jax_cpu_enable_async_dispatch", False)
        applied["inline_dispatch"] = True
    return applied


def active_cpu_settings() -> dict[str, bool]:
    """What this process runs with (for benchmark headers and bug reports)."""
    flags = os.environ.get("XLA_FLAGS", "")
    return {
        "sequential_scheduler": SCHEDULER_FLAG in flags,
        "inline_dispatch": not jax.config.read("jax_cpu_enable_async_dispatch"),
    }


def use_host_devices(count: int | None = None) -> int:
    """Make ``count`` XLA host (CPU) devices (default: one per usable core) so sharded work uses every core.

    Returns the device count now requested. Leaves an explicit ``--xla_force_host_platform_device_count``
    in ``XLA_FLAGS`` alone (and returns its value); raises once JAX's backends exist, because the flag
    would then silently not apply.
    """
    flags = os.environ.get("XLA_FLAGS", "")
    for flag in flags.split():
        if flag.startswith("--xla_force_host_platform_device_count="):
            return int(flag.split("=", 1)[1])
    if backends_initialized():
        raise RuntimeError("use_host_devices() must run before JAX creates its backends (before the first array)")
    if count is None:
        count = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if count < 1:
        raise ValueError(f"count must be at least 1, got {count}")
    os.environ["XLA_FLAGS"] = f"{flags} --xla_force_host_platform_device_count={count}".strip()
    return count


def request_host_devices(requested: str = "auto") -> None:
    """``--host-devices``: 'auto' = one host device per core if JAX has not started yet (else nothing); N = exactly N."""
    if requested == "auto":
        if not backends_initialized():
            use_host_devices()
        return
    if not requested.isdigit():
        raise ValueError(f"--host-devices must be 'auto' or a positive integer, got {requested!r}")
    use_host_devices(int(requested))
