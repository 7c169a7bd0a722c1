"""Wall time of the issue-6 sweep (20 coopetition envs × 3 reward layers × 7 seeds at the reference budgets), per env.

    python benchmarks/sweep_time.py [--algos ippo,mappo] [--updates 4] [--envs ...] [--json out.json]

For each env × algorithm this builds exactly the program ``motivegym sweep --steps reference`` runs
(``motivegym.experiments.sweep.group_program``: all 21 runs vmapped, split across one XLA host
device per core), initialises the runs and compiles one chunk of ``--updates`` updates ahead of time
(timed together), then times that chunk (``--updates`` PPO updates of all 21 runs). PPO's cost is linear in the number of
updates (every update is the same rollout + epochs), so a group's training time at the reference
budget is ``time per update × budget / (num_envs × num_steps)``; the table prints that projection
next to what was measured, and the sum over envs. Evaluation (16 greedy episodes per run) and the
random/oracle baselines are not included; they take seconds per env.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from motivegym.core.cpu_defaults import use_host_devices  # noqa: E402  (before JAX starts)

use_host_devices()

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402

import jax  # noqa: E402

import motivegym  # noqa: E402
from motivegym.baselines.train import build_learner  # noqa: E402
from motivegym.experiments.sweep import group_program  # noqa: E402

REWARDS = ("private", "integrated", "cooperative")
SEEDS = 7


def time_group(env_id: str, algo: str, updates: int, num_envs: int = 16, num_steps: int = 128) -> dict:
    pending = [(reward, seed) for reward in REWARDS for seed in range(SEEDS)]
    learner, _, _ = build_learner(algo, env_id, REWARDS, updates * num_envs * num_steps, num_envs, num_steps, bins=11)
    program = group_program(learner, pending, REWARDS)
    start = time.perf_counter()
    runners = jax.block_until_ready(program.init(program.keys, program.reward_index))
    compiled = program.chunk(updates).lower(runners).compile()
    compile_s = time.perf_counter() - start
    start = time.perf_counter()
    jax.block_until_ready(compiled(runners))
    measured_s = time.perf_counter() - start
    budget = motivegym.get_spec(env_id).reference_steps
    projected_updates = max(1, budget // (num_envs * num_steps))
    return {
        "env": env_id, "algo": algo, "n_agents": learner.n_agents, "budget": budget, "measured_updates": updates,
        "compile_s": compile_s, "measured_s": measured_s,
        "env_steps_per_s": len(pending) * updates * num_envs * num_steps / measured_s,
        "projected_s": compile_s + measured_s * projected_updates / updates,
    }  # fmt: skip


def main() -> None:
    from tqdm import tqdm

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--algos", default="ippo,mappo")
    parser.add_argument("--updates", type=int, default=4, help="PPO updates timed per env (each: 16 envs × 128 steps × 21 runs)")
    parser.add_argument("--envs", default=None, help="comma-separated ids (default: the 20 coopetition envs)")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    env_ids = args.envs.split(",") if args.envs else [e for e in motivegym.list_envs() if motivegym.get_spec(e).reference_steps]
    algos = args.algos.split(",")
    print(f"jax {jax.__version__}, {len(jax.local_devices())} x {jax.devices()[0].device_kind}; {len(env_ids)} envs × {len(REWARDS)} rewards × {SEEDS} seeds")
    rows = []
    for env_id, algo in tqdm([(e, a) for a in algos for e in env_ids], desc="groups"):
        rows.append(time_group(env_id, algo, args.updates))
        if args.json:
            with open(args.json, "w") as handle:
                json.dump(rows, handle, indent=1)
    print("| algo | env | n | budget/run | compile s | env-steps/s (21 runs) | projected group h |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['algo']} | {r['env']} | {r['n_agents']} | {r['budget']:,} | {r['compile_s']:.0f} | {r['env_steps_per_s']:,.0f} | {r['projected_s'] / 3600:.2f} |")
    for algo in algos:
        total = sum(r["projected_s"] for r in rows if r["algo"] == algo)
        print(f"{algo}: projected full sweep {total / 3600:.2f} h ({len([r for r in rows if r['algo'] == algo])} envs)")


if __name__ == "__main__":
    main()
