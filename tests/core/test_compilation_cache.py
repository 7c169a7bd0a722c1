"""The persistent compilation cache: a second process loads the env's step instead of compiling it; opt-out and
the user's own cache directory are honoured. Each case runs fresh processes (the cache is set up on import)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

PROBE = r"""
import json, jax
hits = []
jax.monitoring.register_event_listener(lambda event, **kw: hits.append(event) if event.endswith("cache_hits") else None)
import gymnasium, motivegym
env = gymnasium.make("motivegym/PrisonersDilemma-v0")
env.reset(seed=0)
env.step(env.action_space.sample())
print(json.dumps({"directory": None if motivegym.COMPILATION_CACHE_DIR is None else str(motivegym.COMPILATION_CACHE_DIR),
                  "jax_directory": jax.config.jax_compilation_cache_dir, "hits": len(hits)}))
"""


def run_probe(**variables: str) -> dict:
    environment = {k: v for k, v in os.environ.items() if k not in ("JAX_COMPILATION_CACHE_DIR", "MOTIVEGYM_COMPILATION_CACHE")}
    out = subprocess.run([sys.executable, "-c", PROBE], env={**environment, **variables}, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def cache_entries(directory: Path) -> list[Path]:
    return [p for p in directory.rglob("*") if p.is_file() and p.name.endswith("-cache")]


def test_a_second_process_loads_the_compiled_step_from_the_cache(tmp_path):
    first = run_probe(MOTIVEGYM_CACHE_DIR=str(tmp_path))
    assert first["directory"] == str(tmp_path) == first["jax_directory"]
    written = cache_entries(tmp_path)
    assert written, "the first process wrote no cache entry"
    second = run_probe(MOTIVEGYM_CACHE_DIR=str(tmp_path))
    assert second["hits"] > 0
    assert first["hits"] == 0


def test_opting_out_writes_nothing(tmp_path):
    result = run_probe(MOTIVEGYM_CACHE_DIR=str(tmp_path), MOTIVEGYM_COMPILATION_CACHE="0")
    assert result["directory"] is None and result["jax_directory"] is None
    assert not cache_entries(tmp_path)


def test_the_users_own_cache_directory_is_left_alone(tmp_path):
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    result = run_probe(MOTIVEGYM_CACHE_DIR=str(ours), JAX_COMPILATION_CACHE_DIR=str(theirs))
    assert result["directory"] is None and result["jax_directory"] == str(theirs)
    assert not ours.exists() or not cache_entries(ours)
