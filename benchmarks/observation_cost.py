"""What building observations costs in a batched rollout: env-steps/s with the observations consumed
(as ``motivegym bench`` measures) next to the same program with them discarded, which XLA then skips.

    python benchmarks/observation_cost.py [--envs Harvest-v0,Cleanup-v0,TrustDilemma-v0] [--num-envs 1024] [--seconds 3]
"""

import argparse
import time

import jax
import jax.numpy as jnp

from motivegym.core.batching import auto_reset_batch_step, batched_reset, random_actions, random_rollout
from motivegym.core.registry import make_jax


def rollout_discarding_observations(env, params, num_envs: int, num_steps: int):
    """:func:`random_rollout` without the observations in its result (so XLA drops their computation)."""
    step = auto_reset_batch_step(env)

    def run(key):
        key, reset_key = jax.random.split(key)
        states, _ = batched_reset(env, params, reset_key, num_envs)

        def body(carry, _):
            states, key, total = carry
            key, action_key, step_key = jax.random.split(key, 3)
            actions = random_actions(env, params, action_key, (num_envs,))
            states, _, payoffs, _, _ = step(jax.random.split(step_key, num_envs), states, actions, params)
            return (states, key, total + jnp.sum(payoffs)), None

        return jax.lax.scan(body, (states, key, jnp.float32(0)), None, length=num_steps)[0][2]

    return run


def rate(run, num_envs: int, num_steps: int, seconds: float) -> float:
    run = jax.jit(run)
    run(jax.random.PRNGKey(0)).block_until_ready()  # compile
    start, calls = time.perf_counter(), 0
    while time.perf_counter() - start < seconds or calls == 0:
        run(jax.random.PRNGKey(calls + 1)).block_until_ready()
        calls += 1
    return calls * num_envs * num_steps / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", default="Harvest-v0,Cleanup-v0,TrustDilemma-v0")
    parser.add_argument("--num-envs", type=int, default=1024)
    parser.add_argument("--num-steps", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args()
    print("| env | with observations | observations discarded | ratio |\n|---|---|---|---|")
    for env_id in args.envs.split(","):
        env, params = make_jax(env_id)
        shape = (args.num_envs, args.num_steps, args.seconds)
        kept = rate(random_rollout(env, params, args.num_envs, args.num_steps), *shape)
        dropped = rate(rollout_discarding_observations(env, params, args.num_envs, args.num_steps), *shape)
        print(f"| {env_id} | {kept:,.0f} | {dropped:,.0f} | {dropped / kept:.1f}x |")


if __name__ == "__main__":
    main()
