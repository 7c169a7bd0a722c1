"""One RLlib PPO iteration on a motivegym PettingZoo env (shared policy), for the recipe in docs/pettingzoo.md.

RLlib pins gymnasium (ray[rllib]==2.60.0 needs gymnasium==1.2.2), so run it in its own venv:

    python -m venv /tmp/rllib && /tmp/rllib/bin/pip install torch==2.13.0 "ray[rllib]==2.60.0" -e .
    /tmp/rllib/bin/python examples/rllib_ppo.py --env PrisonersDilemma-v0 --reward cooperative --iterations 1
"""

from __future__ import annotations

import argparse
import time

import ray
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.env.wrappers.pettingzoo_env import ParallelPettingZooEnv
from ray.tune.registry import register_env

import motivegym


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env", default="PrisonersDilemma-v0")
    parser.add_argument("--reward", default="cooperative")
    parser.add_argument("--iterations", type=int, default=1)
    args = parser.parse_args()
    register_env("motivegym", lambda _: ParallelPettingZooEnv(motivegym.parallel_env(args.env, reward=args.reward)))
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    config = (
        PPOConfig()
        .environment("motivegym")
        .env_runners(num_env_runners=0)
        .multi_agent(policies={"shared"}, policy_mapping_fn=lambda agent_id, episode, **kwargs: "shared")
        .training(train_batch_size_per_learner=1000, minibatch_size=250, num_epochs=2)
    )
    algo = config.build_algo()
    for iteration in range(args.iterations):
        start = time.perf_counter()
        result = algo.train()
        returns = result["env_runners"].get("episode_return_mean")
        print(f"iteration {iteration + 1}: {time.perf_counter() - start:.1f} s, episode return mean {returns}")
    algo.stop()
    ray.shutdown()


if __name__ == "__main__":
    main()
