"""A persistent XLA compilation cache in the user's cache directory, so a second process starts fast.

The first ``gymnasium.make(...)`` → ``step`` of a process traces and compiles the env's step program
(1-7 s on a 2-core CPU). JAX can keep compiled executables on disk and reuse them in later processes;
JAX leaves that off unless asked. On ``import motivegym`` :func:`enable_compilation_cache` turns it on
with these settings (measured in ``benchmarks/README.md``, "Cold start"):

* directory ``$MOTIVEGYM_CACHE_DIR``, else ``$XDG_CACHE_HOME/motivegym/jax``, else ``~/.cache/motivegym/jax``;
* entries of programs that compiled in at least :data:`MIN_COMPILE_SECONDS` (JAX's default of 1 s would skip
  most env steps, which compile in 0.1-1 s);
* at most :data:`MAX_CACHE_BYTES` on disk (JAX evicts the least recently used entries beyond it).

The user's choice wins: nothing is changed when ``JAX_COMPILATION_CACHE_DIR`` or ``jax_compilation_cache_dir``
is already set, when JAX already compiled something with a cache decision made, or when
``MOTIVEGYM_COMPILATION_CACHE=0`` (opt-out). JAX keys entries by the program, the backend, the jax/jaxlib
versions and the compile options, so a stale entry is never used for a different program.
"""

from __future__ import annotations

import os
from pathlib import Path

import jax

from motivegym.core.cpu_defaults import switched_off

OPT_OUT_VARIABLE = "MOTIVEGYM_COMPILATION_CACHE"
DIRECTORY_VARIABLE = "MOTIVEGYM_CACHE_DIR"
#: programs that compile faster than this are not written (they are as fast to recompile as to load)
MIN_COMPILE_SECONDS = 0.05
#: disk bound of the cache (least recently used entries are evicted beyond it)
MAX_CACHE_BYTES = 1 << 30


def cache_directory() -> Path:
    """``$MOTIVEGYM_CACHE_DIR``, else ``$XDG_CACHE_HOME/motivegym/jax``, else ``~/.cache/motivegym/jax``."""
    if os.environ.get(DIRECTORY_VARIABLE):
        return Path(os.environ[DIRECTORY_VARIABLE]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "motivegym" / "jax"


def enable_compilation_cache() -> Path | None:
    """Point JAX's persistent compilation cache at :func:`cache_directory`; returns it, or ``None`` when left alone.

    Left alone: opted out, the user set a cache directory, or the directory cannot be created (a read-only
    home): a cold start is slower but nothing fails.
    """
    if switched_off(OPT_OUT_VARIABLE) or os.environ.get("JAX_COMPILATION_CACHE_DIR") or jax.config.jax_compilation_cache_dir:
        return None
    directory = cache_directory()
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    if not os.access(directory, os.W_OK):
        return None
    jax.config.update("jax_compilation_cache_dir", str(directory))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", MIN_COMPILE_SECONDS)
    jax.config.update("jax_compilation_cache_max_size", MAX_CACHE_BYTES)
    return directory
