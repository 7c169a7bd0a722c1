"""Cost of the intrinsic reward layers inside the jitted IPPO loop, relative to no bonus, in one process.

    python benchmarks/intrinsic_cost.py [--envs CrafterTeam-v0,KeyDoorGift-v0] [--layers none,count,...] [--steps 16384]

For each env and each entry of ``--layers`` it builds ``MultiAgentPPO`` on the reward ``private`` (``none``) or
``private+0.01*<layer>``, compiles ``make_train`` and runs it once with another key (compile time excluded), and
reports env-steps/s (one env step = all agents acting once, summed over the ``--num-envs`` parallel envs) and the
ratio to ``none`` of the same env, measured in the same process. The layers use their default options.
"""

from __future__ import annotations

import argparse
import time

import jax

import motivegym
from motivegym.baselines.ppo import MultiAgentPPO, PPOConfig
from motivegym.reward_layers import INTRINSIC_LAYER_NAMES

NO_LAYER = "none"


def ppo_rate(env_id: str, layer: str, steps: int, num_envs: int, num_steps: int) -> tuple[float, float, float]:
    """``(env-steps/s, timed seconds, compile-and-first-run seconds)`` of one IPPO run on ``private`` (+ ``layer``)."""
    env, params = motivegym.make_jax(env_id)
    reward = "private" if layer == NO_LAYER else f"private+0.01*{layer}"
    config = PPOConfig(total_steps=steps, num_envs=num_envs, num_steps=num_steps)
    algo = MultiAgentPPO(env, params, reward, config)
    train = jax.jit(algo.make_train())
    start = time.perf_counter()
    jax.block_until_ready(train(jax.random.PRNGKey(0), 0))  # compile + first run
    first = time.perf_counter() - start
    start = time.perf_counter()
    jax.block_until_ready(train(jax.random.PRNGKey(1), 0))
    seconds = time.perf_counter() - start
    return config.num_updates * num_envs * num_steps / seconds, seconds, first


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--envs", default="CrafterTeam-v0,KeyDoorGift-v0")
    parser.add_argument("--layers", default=",".join((NO_LAYER, *INTRINSIC_LAYER_NAMES)))
    parser.add_argument("--steps", type=int, default=16384, help="env steps per run (summed over parallel envs)")
    parser.add_argument("--num-envs", type=int, default=16)
    parser.add_argument("--num-steps", type=int, default=128)
    args = parser.parse_args()
    layers = [name.strip() for name in args.layers.split(",") if name.strip()]
    unknown = [name for name in layers if name != NO_LAYER and name not in INTRINSIC_LAYER_NAMES]
    if unknown:
        raise SystemExit(f"unknown layers {unknown}; choose from none, {', '.join(INTRINSIC_LAYER_NAMES)}")
    layers = [NO_LAYER] + [name for name in layers if name != NO_LAYER]  # the baseline first
    print(f"jax {jax.__version__} on {jax.default_backend()}; {args.steps} env-steps per run, {args.num_envs} envs × {args.num_steps} steps per update")
    print("| env | layer | env-steps/s | ratio to none | timed s | compile + first run s |")
    print("|---|---|---|---|---|---|")
    for env_id in [e.strip() for e in args.envs.split(",") if e.strip()]:
        base = None
        for layer in layers:
            rate, seconds, first = ppo_rate(env_id, layer, args.steps, args.num_envs, args.num_steps)
            base = rate if base is None else base
            print(f"| {env_id} | {layer} | {rate:,.0f} | {rate / base:.2f} | {seconds:.1f} | {first:.1f} |", flush=True)


if __name__ == "__main__":
    main()
