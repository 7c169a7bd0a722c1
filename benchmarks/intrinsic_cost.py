"""Cost of the intrinsic reward layers inside the jitted IPPO loop, relative to no bonus, in one process.

    python benchmarks/intrinsic_cost.py [--envs CrafterTeam-v0,KeyDoorGift-v0] [--layers none,count,...] [--steps 16384]

For each env and each entry of ``--layers`` it builds ``MultiAgentPPO`` on the reward ``private`` (``none``) or
``private+0.01*<layer>``, compiles ``make_train`` and runs it ``--repeats`` more times with other keys (compile
time excluded), and reports the best env-steps/s (one env step = all agents acting once, summed over the
``--num-envs`` parallel envs) and its ratio to ``none`` of the same env, measured in the same process. ``none`` is
measured again after the last layer (``none (again)``) to show how much the machine's speed drifted during the
run. The layers use their default options; a layer that learns a model trains per step, or once per PPO update on
the rollout with the suffix ``@rollout`` (``--layers none,rnd,rnd@rollout``). Entries are checked as the intrinsic
experiment's ``--layers`` are (``label=spec`` names a row).
"""

from __future__ import annotations

import argparse
import math
import time

import jax

import motivegym
from motivegym.baselines.ppo import MultiAgentPPO, PPOConfig
from motivegym.experiments.intrinsic import NO_LAYER, layer_entry, parse_layers
from motivegym.reward_layers import INTRINSIC_LAYER_NAMES


def ppo_rate(env_id: str, layer: str, steps: int, num_envs: int, num_steps: int, repeats: int) -> tuple[float, float, float]:
    """``(env-steps/s, timed seconds, compile-and-first-run seconds)`` of the fastest of ``repeats`` IPPO runs on
    ``private`` (+ ``layer``)."""
    env, params = motivegym.make_jax(env_id)
    reward = "private" if layer == NO_LAYER else f"private+0.01*{layer}"
    config = PPOConfig(total_steps=steps, num_envs=num_envs, num_steps=num_steps)
    algo = MultiAgentPPO(env, params, reward, config)
    train = jax.jit(algo.make_train())
    start = time.perf_counter()
    jax.block_until_ready(train(jax.random.PRNGKey(0), 0))  # compile + first run
    first = time.perf_counter() - start
    seconds = math.inf
    for repeat in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(train(jax.random.PRNGKey(1 + repeat), 0))
        seconds = min(seconds, time.perf_counter() - start)
    return config.num_updates * num_envs * num_steps / seconds, seconds, first


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--envs", default="CrafterTeam-v0,KeyDoorGift-v0")
    parser.add_argument("--layers", default=",".join((NO_LAYER, *INTRINSIC_LAYER_NAMES)))
    parser.add_argument("--steps", type=int, default=16384, help="env steps per run (summed over parallel envs)")
    parser.add_argument("--num-envs", type=int, default=16)
    parser.add_argument("--num-steps", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per layer (the fastest is reported)")
    args = parser.parse_args()
    try:
        layers = parse_layers(args.layers)  # the experiment's own check: none, intrinsic layers (…@rollout), LLM bonuses
    except ValueError as error:
        raise SystemExit(str(error)) from None
    layers = [NO_LAYER] + [entry for entry in layers if entry != NO_LAYER] + [NO_LAYER]  # the baseline first and last
    print(
        f"jax {jax.__version__} on {jax.default_backend()}; {args.steps} env-steps per run, {args.num_envs} envs × "
        f"{args.num_steps} steps per update, best of {args.repeats}"
    )
    print("| env | layer | env-steps/s | ratio to none | timed s | compile + first run s |")
    print("|---|---|---|---|---|---|")
    for env_id in [e.strip() for e in args.envs.split(",") if e.strip()]:
        base = None
        for position, entry in enumerate(layers):
            label, spec = layer_entry(entry)
            rate, seconds, first = ppo_rate(env_id, spec, args.steps, args.num_envs, args.num_steps, args.repeats)
            base = rate if base is None else base
            label = f"{label} (again)" if position == len(layers) - 1 else label
            print(f"| {env_id} | {label} | {rate:,.0f} | {rate / base:.2f} | {seconds:.2f} | {first:.1f} |", flush=True)


if __name__ == "__main__":
    main()
