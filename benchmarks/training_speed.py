"""Training speed: our JAX IPPO vs Stable-Baselines3 PPO through our SB3 adapter, side by side.

    python benchmarks/training_speed.py [--env TrustDilemma-v0] [--ippo-steps 200000] [--sb3-steps 20000]

Reports env-steps/s (one env step = all agents acting once; SB3 counts each agent as a sub-env, so
its timesteps are divided by n_agents). Compile time is excluded for IPPO (the jitted program is
run once before timing with another key). The 21-run comparison times 7 seeds × 3 reward layers
as ONE vmapped IPPO call against 21 sequential SB3 runs at the same per-run budget, the latter
extrapolated from the measured SB3 rate (running 21 SB3 runs would take ~21× the measured time).
"""

from __future__ import annotations

import argparse
import time

import jax
import numpy as np

import motivegym
from motivegym.baselines.ppo import MultiAgentPPO, PPOConfig
from motivegym.reward_layers import cooperative, integrated, private


def ippo_rate(env_id: str, steps: int, seeds: int = 1, layers: tuple = (private(),)) -> tuple[float, float]:
    """(env-steps/s summed over all runs, seconds) of one vmapped call over seeds × layers."""
    env, params = motivegym.make_jax(env_id)
    config = PPOConfig(total_steps=steps, num_envs=16, num_steps=128)
    algo = MultiAgentPPO(env, params, layers, config)
    train = jax.jit(jax.vmap(jax.vmap(algo.make_train(), in_axes=(0, None)), in_axes=(None, 0)))
    indices = np.arange(len(layers))
    jax.block_until_ready(train(jax.random.split(jax.random.PRNGKey(0), seeds), indices))  # compile
    start = time.perf_counter()
    jax.block_until_ready(train(jax.random.split(jax.random.PRNGKey(1), seeds), indices))
    seconds = time.perf_counter() - start
    done = config.num_updates * config.num_envs * config.num_steps * seeds * len(layers)
    return done / seconds, seconds


def sb3_rate(env_id: str, timesteps: int) -> tuple[float, float]:
    from stable_baselines3 import PPO

    from motivegym.adapters.sb3 import vec_env

    env = vec_env(env_id, num_envs=8, reward="private")
    model = PPO("MlpPolicy", env, n_steps=128, batch_size=256, device="cpu", verbose=0, seed=0)
    model.learn(total_timesteps=1024)  # warm-up (JAX compile of the env step, torch init)
    start = time.perf_counter()
    model.learn(total_timesteps=timesteps, reset_num_timesteps=False)
    seconds = time.perf_counter() - start
    return timesteps / env.n_agents / seconds, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--env", default="TrustDilemma-v0")
    parser.add_argument("--ippo-steps", type=int, default=200_000)
    parser.add_argument("--sb3-steps", type=int, default=20_000)
    args = parser.parse_args()
    print(f"jax {jax.__version__} on {jax.default_backend()}; env {args.env}")
    sb3, sb3_seconds = sb3_rate(args.env, args.sb3_steps)
    single, single_seconds = ippo_rate(args.env, args.ippo_steps)
    many, many_seconds = ippo_rate(args.env, args.ippo_steps, seeds=7, layers=(private(), integrated(), cooperative()))
    sequential_sb3_seconds = 21 * args.ippo_steps / sb3
    print("| run | env-steps/s | wall s | ratio |")
    print("|---|---|---|---|")
    print(f"| SB3 PPO (our SB3 adapter, 8 envs) | {sb3:,.0f} | {sb3_seconds:.1f} | 1x |")
    print(f"| motivegym IPPO, 1 seed | {single:,.0f} | {single_seconds:.1f} | {single / sb3:,.0f}x |")
    print(f"| motivegym IPPO, 7 seeds × 3 reward layers in one call | {many:,.0f} | {many_seconds:.1f} | {many / sb3:,.0f}x |")
    print(f"| 21 sequential SB3 PPO runs of {args.ippo_steps:,} env-steps (extrapolated) | {sb3:,.0f} | {sequential_sb3_seconds:,.0f} | "
          f"vmapped call is {sequential_sb3_seconds / many_seconds:,.0f}x faster |")


if __name__ == "__main__":
    main()
