"""Training seeds together under ``vmap``: the auto-reset's branch taken once for all runs vs every branch.

    python benchmarks/seed_vmap.py [--envs CrafterTeam-v0:preset=crafter,KeyDoorGift-v0] [--seeds 5] [--updates 4]

``reset_finished`` (``core/batching.py``) picks one of three branches per step — nothing finished, rebuild the
few finished envs, rebuild every env. Under an outer ``vmap`` over runs (the intrinsic experiment's and the sweeps'
seeds) a batched branch index turns the ``lax.switch`` into a select that runs all three, so every step builds a
fresh world for every env; ``max_over_mapped_axes`` keeps the index one number (the highest any run needs). This
script times ``jit(vmap(MultiAgentPPO.make_train()))`` over ``--seeds`` keys (IPPO, private reward, 16 envs × 128
steps per update) both ways in one process — "every branch" replaces ``max_over_mapped_axes`` by the identity, the
code before the change — compile excluded, best of ``--repeats`` interleaved calls, and reports the total env-steps/s
over all seeds (one env step = all agents acting once) and the ratio.
"""

from __future__ import annotations

import argparse
import time

import jax

import motivegym
import motivegym.core.batching as batching
from motivegym.baselines.ppo import MultiAgentPPO, PPOConfig

MODES = {"one branch (max over runs)": batching.max_over_mapped_axes, "every branch (before)": lambda x: x}


def parse_env(entry: str) -> tuple[str, dict]:
    """``"CrafterTeam-v0:preset=crafter"`` → ``("CrafterTeam-v0", {"preset": "crafter"})``."""
    env_id, _, rest = entry.partition(":")
    return env_id, dict(pair.split("=", 1) for pair in rest.split(";") if pair)


def compiled_runs(env_id: str, kwargs: dict, seeds: int, updates: int):
    """Per mode, the jitted vmapped training (compiled here, with that mode's branch index)."""
    env, params = motivegym.make_jax(env_id, **kwargs)
    config = PPOConfig(total_steps=updates * 16 * 128)
    train = MultiAgentPPO(env, params, "private", config).make_train()
    runs = {}
    for mode, index in MODES.items():
        batching.max_over_mapped_axes = index  # read by reset_finished when the program is traced
        jax.clear_caches()  # inner jitted functions would otherwise reuse the other mode's trace
        keys = jax.random.split(jax.random.PRNGKey(0), seeds)
        runs[mode] = jax.jit(jax.vmap(lambda key: train(key, 0))).lower(keys).compile()  # kept past clear_caches
        jax.block_until_ready(runs[mode](keys))
    batching.max_over_mapped_axes = MODES["one branch (max over runs)"]
    return runs, config.total_steps * seeds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--envs", default="CrafterTeam-v0:preset=crafter,KeyDoorGift-v0")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--updates", type=int, default=4, help="PPO updates per seed (16 × 128 env steps each)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print("| env | seeds | " + " | ".join(f"{mode} env-steps/s" for mode in MODES) + " | ratio |")
    print("|---|---|" + "---|" * (len(MODES) + 1))
    for entry in args.envs.split(","):
        env_id, kwargs = parse_env(entry)
        runs, steps = compiled_runs(env_id, kwargs, args.seeds, args.updates)
        best = dict.fromkeys(runs, float("inf"))
        for repeat in range(args.repeats):
            for mode, run in runs.items():  # interleaved, so drift hits both modes alike
                keys = jax.random.split(jax.random.PRNGKey(repeat + 1), args.seeds)
                start = time.perf_counter()
                jax.block_until_ready(run(keys))
                best[mode] = min(best[mode], time.perf_counter() - start)
        rates = [steps / best[mode] for mode in MODES]
        print(f"| {entry} | {args.seeds} | " + " | ".join(f"{r:,.0f}" for r in rates) + f" | **{rates[0] / rates[1]:.2f}x** |", flush=True)


if __name__ == "__main__":
    main()
