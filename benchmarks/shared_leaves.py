"""A rollout-fitted layer's read-only leaves carried once for all envs against one copy per env, side by side.

    python benchmarks/shared_leaves.py [--before d1258b4~1] [--envs CrafterTeam-v0,KeyDoorGift-v0]
        [--layers rnd@rollout,e3b@rollout,auto@rollout] [--steps 8192] [--repeats 3]

Since commit d1258b4 ``MultiAgentPPO`` takes every leaf of a ``@rollout`` layer's state that the env step only reads
(the model, its Adam state, fixed random networks, ``auto``'s bandit) out of the vmap over envs
(:class:`motivegym.baselines.ppo.SharedAcrossEnvs`). ``--before`` names a commit whose
``motivegym/baselines/ppo.py`` (read with ``git show``) is the learner that keeps one copy per env. Both learners
build the same IPPO run (``private + 0.01·layer``, 16 envs × 128 steps per update), are compiled, then timed in turns
(the fastest of ``--repeats`` runs each, compile excluded); the last column is the largest absolute difference
between the two learners' per-update reward components (the same program up to floating-point order).
"""

from __future__ import annotations

import argparse
import math
import subprocess
import sys
import time
import types
from pathlib import Path

import jax
import jax.numpy as jnp

import motivegym
from motivegym.baselines.ppo import MultiAgentPPO, PPOConfig

ROOT = Path(__file__).resolve().parents[1]


def learner_at(revision: str) -> type:
    """``MultiAgentPPO`` as ``motivegym/baselines/ppo.py`` was at ``revision``."""
    source = subprocess.run(
        ["git", "show", f"{revision}:motivegym/baselines/ppo.py"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    module = types.ModuleType("ppo_before")
    sys.modules[module.__name__] = module  # dataclasses look their module up
    exec(compile(source, f"{revision}:motivegym/baselines/ppo.py", "exec"), module.__dict__)
    return module.MultiAgentPPO


def compiled_run(learner: type, env_id: str, layer: str, config: PPOConfig):
    env, params = motivegym.make_jax(env_id)
    train = jax.jit(learner(env, params, f"private+0.01*{layer}", config).make_train())
    metrics = jax.block_until_ready(train(jax.random.PRNGKey(0), 0))[1]  # compile + first run
    return train, metrics["components"]


def timed(train) -> float:
    start = time.perf_counter()
    jax.block_until_ready(train(jax.random.PRNGKey(1), 0))
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", default="d1258b4~1", help="a commit whose learner keeps one layer copy per env")
    parser.add_argument("--envs", default="CrafterTeam-v0,KeyDoorGift-v0")
    parser.add_argument("--layers", default="rnd@rollout,e3b@rollout,auto@rollout")
    parser.add_argument("--steps", type=int, default=8192, help="env steps per run (summed over parallel envs)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    before = learner_at(args.before)
    config = PPOConfig(total_steps=args.steps, num_envs=16, num_steps=128)
    print(f"jax {jax.__version__} on {jax.default_backend()}; {args.steps} env-steps per run, best of {args.repeats}; before = {args.before}")
    print("| env | layer | one copy per env, env-steps/s | read-only leaves once, env-steps/s | speed-up | max abs Δ components |")
    print("|---|---|---|---|---|---|")
    for env_id in args.envs.split(","):
        for layer in args.layers.split(","):
            (old, old_parts), (new, new_parts) = (compiled_run(learner, env_id, layer, config) for learner in (before, MultiAgentPPO))
            old_s = new_s = math.inf
            for _ in range(args.repeats):
                old_s, new_s = min(old_s, timed(old)), min(new_s, timed(new))
            steps = config.num_updates * config.num_envs * config.num_steps
            delta = max(float(jnp.max(jnp.abs(a - b))) for a, b in zip(jax.tree.leaves(old_parts), jax.tree.leaves(new_parts)))
            print(f"| {env_id} | {layer} | {steps / old_s:,.0f} | {steps / new_s:,.0f} | {old_s / new_s:.2f}x | {delta:.1e} |", flush=True)


if __name__ == "__main__":
    main()
