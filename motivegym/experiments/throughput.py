"""Throughput benchmark (``motivegym bench`` / ``benchmarks/throughput.py``).

For each env: single-env steps/s through ``gymnasium.make`` and ``motivegym.parallel_env`` (random
actions, resets on episode end), and batched env-steps/s of the jitted, vmapped step with
same-step auto-reset over 1, 64, 1024, 8192 envs (a ``lax.scan`` of random-action steps; compile
time excluded by a warm-up call; the timed call uses a fresh key).
"""

from __future__ import annotations

import functools
import time
from dataclasses import asdict, dataclass

import jax
import numpy as np

#: the reference implementation's single-env Gymnasium throughput on this machine class (issue 2)
REFERENCE_STEPS_PER_SECOND = {"TrustDilemma-v0": 5700.0, "PlatformEcosystem-v0": 1800.0, "ApacheProject-v0": 37.0}
BATCH_SIZES = (1, 64, 1024, 8192)


@dataclass
class ThroughputRow:
    env_id: str
    n_agents: int
    gymnasium_steps_per_s: float
    pettingzoo_steps_per_s: float
    batched_env_steps_per_s: dict[int, float]

    def as_dict(self) -> dict:
        return asdict(self)


def single_env_steps_per_second(make_env, api: str, seconds: float, seed: int = 0) -> float:
    """Steps/s of a host-side env with random actions (includes resets; first step excluded)."""
    env = make_env()
    if api == "gymnasium":
        env.action_space.seed(seed)
        env.reset(seed=seed)
        env.step(env.action_space.sample())
        actions = [env.action_space.sample() for _ in range(256)]
        steps, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            for action in actions:
                _, _, terminated, truncated, _ = env.step(action)
                steps += 1
                if terminated or truncated:
                    env.reset()
        return steps / (time.perf_counter() - start)
    env.reset(seed=seed)
    for agent in env.possible_agents:
        env.action_space(agent).seed(seed)
    samples = [{a: env.action_space(a).sample() for a in env.possible_agents} for _ in range(256)]
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for actions in samples:
            env.step(actions)
            steps += 1
            if not env.agents:
                env.reset()
    return steps / (time.perf_counter() - start)


def batched_env_steps_per_second(env_id: str, num_envs: int, min_seconds: float) -> float:
    """Env-steps/s of ``num_envs`` vmapped envs stepped in one jitted scan (compile excluded)."""
    from motivegym.core.batching import random_rollout
    from motivegym.core.registry import make_jax

    env, params = make_jax(env_id)
    num_steps = max(16, int(2_000_000 // num_envs))
    num_steps = min(num_steps, 2000)
    run = jax.jit(random_rollout(env, params, num_envs, num_steps))
    run(jax.random.PRNGKey(0)).block_until_ready()  # compile + warm-up
    steps, start, calls = 0, time.perf_counter(), 0
    while time.perf_counter() - start < min_seconds or calls == 0:
        run(jax.random.PRNGKey(calls + 1)).block_until_ready()
        steps += num_envs * num_steps
        calls += 1
    return steps / (time.perf_counter() - start)


def measure(env_ids: list[str], seconds: float = 1.0, batch_sizes: tuple[int, ...] = BATCH_SIZES, progress: bool = True) -> list[ThroughputRow]:
    import gymnasium
    from tqdm import tqdm

    import motivegym

    rows = []
    for env_id in tqdm(env_ids, desc="throughput", disable=not progress):
        gym_rate = single_env_steps_per_second(functools.partial(gymnasium.make, f"motivegym/{env_id}", disable_env_checker=True), "gymnasium", seconds)
        pz_rate = single_env_steps_per_second(functools.partial(motivegym.parallel_env, env_id), "pettingzoo", seconds)
        batched = {b: batched_env_steps_per_second(env_id, b, seconds) for b in batch_sizes}
        env, params = motivegym.make_jax(env_id)
        rows.append(ThroughputRow(env_id, env.n_agents(params), gym_rate, pz_rate, batched))
    return rows


def format_table(rows: list[ThroughputRow]) -> str:
    """A markdown table; ratios vs the reference where the issue quotes a reference figure."""
    sizes = sorted({b for r in rows for b in r.batched_env_steps_per_s})
    header = ["env", "n", "Gymnasium steps/s", "PettingZoo steps/s"] + [f"batched {b} env-steps/s" for b in sizes]
    header += ["ref steps/s", "Gymnasium / ref", f"batched {sizes[-1]} / ref"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        ref = REFERENCE_STEPS_PER_SECOND.get(r.env_id)
        cells = [r.env_id, str(r.n_agents), f"{r.gymnasium_steps_per_s:,.0f}", f"{r.pettingzoo_steps_per_s:,.0f}"]
        cells += [f"{r.batched_env_steps_per_s[b]:,.0f}" for b in sizes]
        if ref:
            top = r.batched_env_steps_per_s[sizes[-1]]
            cells += [f"{ref:,.0f}", f"{r.gymnasium_steps_per_s / ref:.1f}x", f"{top / ref:,.0f}x"]
        else:
            cells += ["–", "–", "–"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def bench_cli(env_ids: list[str], seconds: float, batch_sizes: tuple[int, ...], json_out: str | None) -> int:
    rows = measure(env_ids, seconds, batch_sizes)
    print(f"jax {jax.__version__} on {jax.default_backend()} ({jax.devices()[0].device_kind}), numpy {np.__version__}")
    print(format_table(rows))
    if json_out:
        import json

        with open(json_out, "w") as handle:
            json.dump([r.as_dict() for r in rows], handle, indent=2)
    return 0
