"""Throughput benchmark (``motivegym bench`` / ``benchmarks/throughput.py``).

For each env: single-env steps/s through ``gymnasium.make`` and ``motivegym.parallel_env`` (random
actions, resets on episode end), and batched env-steps/s of the jitted, vmapped step with
same-step auto-reset over 1, 64, 1024, 8192 envs (a ``lax.scan`` of random-action steps; compile
time excluded by a warm-up call; the timed call uses a fresh key). The batched program sums the
observations into its result, so they are really computed. The batch is split across all local
devices; on a CPU host ``motivegym bench`` first makes one XLA host device per core (``--host-devices``),
so both cores of a 2-core machine step envs.

Single-env Gymnasium stepping is also measured in child processes, side by side with this one
(``--compare``): ``defaults-off`` runs with ``MOTIVEGYM_XLA_DEFAULTS=0`` (XLA's own CPU scheduler
and asynchronous dispatch; see ``motivegym.core.cpu_defaults``), ``pinned`` is pinned to one core
before JAX starts (Linux; ``taskset -c 0 python ...``), which removes cross-core wake-ups.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

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
    #: single-env Gymnasium steps/s of the ``--compare`` child processes, by comparison name
    compared_gymnasium_steps_per_s: dict[str, float] = field(default_factory=dict)
    #: the ``preset=`` keyword the env was made with (``motivegym bench --preset``); None: no keyword
    preset: str | None = None

    def as_dict(self) -> dict:
        return asdict(self)


def single_env_steps_per_second(make_env, api: str, seconds: float, seed: int = 0, windows: int = 3) -> float:
    """Median steps/s over ``windows`` timed windows of a host-side env with random actions.

    Resets on episode end are included in the timing; compilation is not: one whole episode and a
    seedless reset (a separately compiled path) run before the clock starts.
    """
    env = make_env()
    if api == "gymnasium":
        env.action_space.seed(seed)
        samples = [env.action_space.sample() for _ in range(256)]

        def step(action) -> bool:
            _, _, terminated, truncated, _ = env.step(action)
            return terminated or truncated

        env.reset(seed=seed)
    else:
        for agent in env.possible_agents:
            env.action_space(agent).seed(seed)
        samples = [{a: env.action_space(a).sample() for a in env.possible_agents} for _ in range(256)]

        def step(actions) -> bool:
            env.step(actions)
            return not env.agents

        env.reset(seed=seed)
    for k in range(100_000):  # warm-up: until the first episode ends, then the seedless reset
        if step(samples[k % len(samples)]):
            break
    env.reset()
    rates = []
    for _ in range(windows):
        steps, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds / windows:
            for action in samples:
                steps += 1
                if step(action):
                    env.reset()
        rates.append(steps / (time.perf_counter() - start))
    return float(np.median(rates))


def sharded_random_rollout(env, params, num_envs: int, num_steps: int, devices: list) -> Callable[[jax.Array], jax.Array]:
    """A jitted ``run(key) -> [len(devices)] totals``: :func:`random_rollout` with the envs split evenly across ``devices``.

    On a CPU host started with ``XLA_FLAGS=--xla_force_host_platform_device_count=K`` each of the
    ``K`` host devices runs its share of the batch on its own thread, so all cores step envs.
    """
    from motivegym.core.batching import random_rollout, split_across_devices

    if num_envs % len(devices):
        raise ValueError(f"{num_envs} envs do not split evenly across {len(devices)} devices")
    local = random_rollout(env, params, num_envs // len(devices), num_steps)
    run = split_across_devices(jax.vmap(local), devices)  # one key, and one share of the envs, per device
    return jax.jit(lambda key: run(jax.random.split(key, len(devices))))


def batched_env_steps_per_second(env_id: str, num_envs: int, min_seconds: float, **env_kwargs: Any) -> float:
    """Env-steps/s of ``num_envs`` vmapped envs stepped in one jitted scan (compile excluded).

    Observations are computed (see :func:`motivegym.core.batching.random_rollout`). The batch is
    split across all local devices when it divides evenly (:func:`sharded_random_rollout`).
    """
    from motivegym.core.registry import make_jax

    env, params = make_jax(env_id, **env_kwargs)
    # about 200k env steps per call: dispatch is negligible next to it, and slow envs (CrafterTeam at
    # ~10k env-steps/s) still finish a call in seconds
    num_steps = min(max(16, 200_000 // num_envs), 2000)
    devices = jax.local_devices()
    devices = devices if num_envs % len(devices) == 0 else devices[:1]
    run = sharded_random_rollout(env, params, num_envs, num_steps, devices)
    run(jax.random.PRNGKey(0)).block_until_ready()  # compile + warm-up
    steps, start, calls = 0, time.perf_counter(), 0
    while time.perf_counter() - start < min_seconds or calls == 0:
        run(jax.random.PRNGKey(calls + 1)).block_until_ready()
        steps += num_envs * num_steps
        calls += 1
    return steps / (time.perf_counter() - start)


def gymnasium_rates(env_ids: list[str], seconds: float, **env_kwargs: Any) -> dict[str, float]:
    """Single-env Gymnasium steps/s of each env in this process (made with ``env_kwargs``)."""
    import gymnasium

    import motivegym  # noqa: F401  (registers the envs)

    return {
        e: single_env_steps_per_second(
            functools.partial(gymnasium.make, f"motivegym/{e}", disable_env_checker=True, **env_kwargs), "gymnasium", seconds
        )
        for e in env_ids
    }


#: child-process comparisons of ``motivegym bench --compare``: (column title, extra env vars, pin to one core)
COMPARISONS: dict[str, tuple[str, dict[str, str], bool]] = {
    "defaults-off": ("XLA defaults off", {"MOTIVEGYM_XLA_DEFAULTS": "0"}, False),
    "pinned": ("1 core pinned", {}, True),
}


def child_gymnasium_rates(env_ids: list[str], seconds: float, comparison: str, **env_kwargs: Any) -> dict[str, float] | None:
    """:func:`gymnasium_rates` in a child process set up as ``COMPARISONS[comparison]`` says.

    None for ``pinned`` where the OS has no CPU affinity (not Linux).
    """
    _, extra_env, pin = COMPARISONS[comparison]
    if pin and not hasattr(os, "sched_setaffinity"):
        return None
    preexec = None
    if pin:
        core = min(os.sched_getaffinity(0))
        preexec = lambda: os.sched_setaffinity(0, {core})  # noqa: E731
    code = (
        "import json, sys; from motivegym.experiments.throughput import gymnasium_rates; "
        "print(json.dumps(gymnasium_rates(sys.argv[1].split(','), float(sys.argv[2]), **json.loads(sys.argv[3]))))"
    )
    env = {k: v for k, v in os.environ.items() if k != "MOTIVEGYM_XLA_DEFAULTS"} | extra_env
    result = subprocess.run(
        [sys.executable, "-c", code, ",".join(env_ids), str(seconds), json.dumps(env_kwargs)],
        capture_output=True, text=True, check=True, preexec_fn=preexec, env=env,
    )  # fmt: skip
    return json.loads(result.stdout.strip().splitlines()[-1])


def measure(
    env_ids: list[str],
    seconds: float = 1.0,
    batch_sizes: tuple[int, ...] = BATCH_SIZES,
    progress: bool = True,
    compare: tuple[str, ...] = tuple(COMPARISONS),
    presets: tuple[str | None, ...] = (None,),
) -> list[ThroughputRow]:
    """One row per env and preset (``presets``: the ``preset=`` keywords to measure, None for none), all in this
    process (plus the ``compare`` child processes)."""
    from tqdm import tqdm

    import motivegym

    unknown = sorted(set(compare) - set(COMPARISONS))
    if unknown:
        raise ValueError(f"unknown comparison(s) {unknown}; valid: {sorted(COMPARISONS)}")
    rows = []
    for preset in presets:
        kwargs = {} if preset is None else {"preset": preset}
        child_rates = {}
        for name in compare:
            rates = child_gymnasium_rates(env_ids, seconds, name, **kwargs)
            if rates is not None:
                child_rates[COMPARISONS[name][0]] = rates
        for env_id in tqdm(env_ids, desc="throughput", disable=not progress):
            gym_rate = gymnasium_rates([env_id], seconds, **kwargs)[env_id]
            pz_rate = single_env_steps_per_second(functools.partial(motivegym.parallel_env, env_id, **kwargs), "pettingzoo", seconds)
            batched = {b: batched_env_steps_per_second(env_id, b, seconds, **kwargs) for b in batch_sizes}
            env, params = motivegym.make_jax(env_id, **kwargs)
            compared = {title: rates[env_id] for title, rates in child_rates.items()}
            rows.append(ThroughputRow(env_id, env.n_agents(params), gym_rate, pz_rate, batched, compared, preset))
    return rows


def format_table(rows: list[ThroughputRow]) -> str:
    """A markdown table; ratios vs the reference where the issue quotes a reference figure."""
    sizes = sorted({b for r in rows for b in r.batched_env_steps_per_s})
    titles = list(dict.fromkeys(t for r in rows for t in r.compared_gymnasium_steps_per_s))
    header = ["env", "n", "Gymnasium steps/s"] + [f"Gymnasium, {t}" for t in titles] + ["PettingZoo steps/s"]
    header += [f"batched {b} env-steps/s" for b in sizes]
    header += ["ref steps/s", "Gymnasium / ref"] + [f"{t} / ref" for t in titles] + [f"batched {sizes[-1]} / ref"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        ref = REFERENCE_STEPS_PER_SECOND.get(r.env_id)
        compared = [r.compared_gymnasium_steps_per_s.get(t) for t in titles]
        label = r.env_id if r.preset is None else f"{r.env_id} preset={r.preset}"
        cells = [label, str(r.n_agents), f"{r.gymnasium_steps_per_s:,.0f}"]
        cells += [f"{c:,.0f}" if c is not None else "–" for c in compared]
        cells += [f"{r.pettingzoo_steps_per_s:,.0f}"]
        cells += [f"{r.batched_env_steps_per_s[b]:,.0f}" for b in sizes]
        if ref:
            top = r.batched_env_steps_per_s[sizes[-1]]
            cells += [f"{ref:,.0f}", f"{r.gymnasium_steps_per_s / ref:.1f}x"]
            cells += [f"{c / ref:.1f}x" if c is not None else "–" for c in compared]
            cells.append(f"{top / ref:,.0f}x")
        else:
            cells += ["–"] * (3 + len(titles))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def bench_cli(
    env_ids: list[str],
    seconds: float,
    batch_sizes: tuple[int, ...],
    json_out: str | None,
    compare: tuple[str, ...] = tuple(COMPARISONS),
    presets: tuple[str | None, ...] = (None,),
) -> int:
    from motivegym.core.cpu_defaults import active_cpu_settings

    rows = measure(env_ids, seconds, batch_sizes, compare=compare, presets=presets)
    print(
        f"jax {jax.__version__} on {jax.default_backend()} ({len(jax.local_devices())} x {jax.devices()[0].device_kind}), numpy {np.__version__}"
    )
    print(f"this process's CPU settings: {active_cpu_settings()}")
    print(format_table(rows))
    if json_out:
        with open(json_out, "w") as handle:
            json.dump([r.as_dict() for r in rows], handle, indent=2)
    return 0
