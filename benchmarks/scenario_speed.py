"""Scenario evaluation speed: episodes/s of one compiled call over all seeds × episodes, side by side with the same
compiled episode called once per episode from a Python loop.

    python benchmarks/scenario_speed.py
    python benchmarks/scenario_speed.py --scenarios Harvest-v0/defector --seeds 4 --episodes 64

For each scenario the focal population is a scripted bot (``--focal``) with ``--seeds`` copies of its state
stacked (what a population of trained seeds looks like to the evaluator). ``batched``: ``scenario_payoffs`` rolls
seeds × episodes in one ``jax.jit``-ed ``vmap``; ``looped``: the same function with one seed and one episode, called
``--loop-episodes`` times. Compile time is excluded (one warm-up call each); the best of ``--repeats`` timings.
"""

from __future__ import annotations

import argparse
import time

import jax
import numpy as np

import motivegym
from motivegym.experiments.scenarios import get_scenario, resolve_population, scenario_payoffs


def timed(fn, repeats: int) -> float:
    fn()  # compile
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def measure(name: str, focal: str, seeds: int, episodes: int, loop_episodes: int, repeats: int) -> dict[str, float]:
    scenario = get_scenario(name)
    env, params = motivegym.make_jax(scenario.env_id)
    policy, state, _ = resolve_population(focal, scenario.env_id, env, params)
    stacked = jax.tree.map(lambda x: np.stack([np.asarray(x)] * seeds), state)
    horizon = env.max_episode_steps(params)
    batched = timed(lambda: scenario_payoffs(scenario, env, params, policy, stacked, True, episodes, 0), repeats)

    def loop():
        for k in range(loop_episodes):
            scenario_payoffs(scenario, env, params, policy, state, False, 1, k)

    looped = timed(loop, 1)
    total = seeds * episodes
    return {
        "episodes": total,
        "horizon": horizon,
        "batched_episodes_per_s": total / batched,
        "batched_env_steps_per_s": total * horizon / batched,
        "looped_episodes_per_s": loop_episodes / looped,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scenarios", default="Harvest-v0/defector,TeamProduction-v0/reciprocator")
    parser.add_argument("--focal", default="bot:cooperator")
    parser.add_argument("--seeds", type=int, default=4)
    parser.add_argument("--episodes", type=int, default=64, help="episodes per seed")
    parser.add_argument("--loop-episodes", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(f"jax {jax.__version__}, devices {jax.devices()}")
    print(f"{'scenario':<32} {'episodes':>8} {'T':>5} {'batched ep/s':>13} {'env-steps/s':>12} {'looped ep/s':>12} {'ratio':>7}")
    for name in args.scenarios.split(","):
        r = measure(name, args.focal, args.seeds, args.episodes, args.loop_episodes, args.repeats)
        ratio = r["batched_episodes_per_s"] / r["looped_episodes_per_s"]
        print(f"{name:<32} {r['episodes']:>8} {r['horizon']:>5} {r['batched_episodes_per_s']:>13,.1f} "
              f"{r['batched_env_steps_per_s']:>12,.0f} {r['looped_episodes_per_s']:>12,.1f} {ratio:>6.1f}x")  # fmt: skip


if __name__ == "__main__":
    main()
