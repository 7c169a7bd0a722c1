"""A new MARL algorithm written by a user in one file, benchmarked against motivegym's IPPO and MAPPO in one command.

    python examples/new_algorithm.py                                   # 3 matrix dilemmas, 5 seeds, ~5 min on 2 CPU cores
    python examples/new_algorithm.py --suite dilemmas --seeds 10 --steps 200000 --out runs/ia2c
    motivegym report runs/new_algorithm                                # figures and per-env tables afterwards

The algorithm: **independent advantage actor-critic (IA2C)**, PureJaxRL style. One parameter-shared MLP (the agent's
one-hot appended to its observation) with a categorical policy head and a value head; ``num_envs`` envs step
``num_steps`` times, n-step returns bootstrap from the value of the last observation, one Adam step per update on
``−log π(a|o)·A + 0.5·(G − V)² − ent_coef·H(π)``. Every agent learns from its own reward. The whole run is one
``jax.jit`` program and seeds are ``jax.vmap``-ed by the benchmark.

What makes it benchmarkable (``motivegym.benchmark``'s protocol): a ``name``, ``act(policy_params, obs, key) ->
actions`` (greedy here) and ``train(key, env, env_params, total_steps) -> policy_params``, where ``env`` returns the
reward layer's rewards and ``info["payoffs"]``. ``motivegym.benchmark.evaluate`` trains it and our baselines on the
same envs, reward layers, seeds and budget, scores every final policy on payoffs on the same episode keys, and
aggregates with the IQM and stratified-bootstrap intervals of ``motivegym report``.
"""

from __future__ import annotations

import argparse
from typing import Any

import jax
import jax.numpy as jnp
import optax

import motivegym.benchmark as benchmark

Array = jax.Array


def mlp_init(key: Array, sizes: tuple[int, ...]) -> list[dict]:
    keys = jax.random.split(key, len(sizes) - 1)
    return [{"w": jax.random.normal(k, (a, b)) * jnp.sqrt(2.0 / a), "b": jnp.zeros(b)} for k, a, b in zip(keys, sizes[:-1], sizes[1:])]


def mlp(layers: list[dict], x: Array) -> Array:
    for layer in layers[:-1]:
        x = jnp.tanh(x @ layer["w"] + layer["b"])
    return x @ layers[-1]["w"] + layers[-1]["b"]


def with_agent_id(obs: Array) -> Array:
    """``[..., n, d] -> [..., n, d + n]``: the agent's one-hot appended (one shared network for every agent)."""
    n = obs.shape[-2]
    return jnp.concatenate([obs, jnp.broadcast_to(jnp.eye(n), obs.shape[:-2] + (n, n))], axis=-1)


class IndependentA2C:
    """Independent advantage actor-critic with a shared network (``Discrete`` action envs)."""

    name = "ia2c"

    def __init__(self, num_envs: int = 16, num_steps: int = 16, lr: float = 3e-3, gamma: float = 0.99, ent_coef: float = 0.01, hidden: int = 64):
        self.num_envs, self.num_steps, self.gamma, self.ent_coef, self.hidden = num_envs, num_steps, gamma, ent_coef, hidden
        self.optimizer = optax.chain(optax.clip_by_global_norm(0.5), optax.adam(lr))

    def outputs(self, params: dict, obs: Array) -> tuple[Array, Array]:
        """``(logits [..., n, A], values [..., n])``."""
        x = with_agent_id(obs)
        return mlp(params["actor"], x), mlp(params["critic"], x)[..., 0]

    def act(self, params: dict, obs: Array, key: Array) -> Array:
        return jnp.argmax(self.outputs(params, obs)[0], axis=-1)

    def train(self, key: Array, env: Any, env_params: Any, total_steps: int) -> dict:
        if env.action_kind != "discrete":
            raise ValueError(f"{self.name} needs Discrete actions, {env.name} has {env.action_kind} ones")
        n, num_actions, obs_size = env.n_agents(env_params), env.num_actions(env_params), env.observation_size(env_params)
        num_updates = max(1, total_steps // (self.num_envs * self.num_steps))
        key, actor_key, critic_key, reset_key = jax.random.split(key, 4)
        params = {"actor": mlp_init(actor_key, (obs_size + n, self.hidden, num_actions)),
                  "critic": mlp_init(critic_key, (obs_size + n, self.hidden, 1))}  # fmt: skip
        opt_state = self.optimizer.init(params)
        env_state, obs = env.batch_reset(reset_key, env_params, self.num_envs)

        def loss(params, batch, last_obs):
            logits, values = self.outputs(params, batch["obs"])  # [T, B, n, A], [T, B, n]
            bootstrap = self.outputs(params, last_obs)[1]

            def discount(carry, step):
                reward, done = step
                carry = reward + self.gamma * carry * (1.0 - done[..., None])
                return carry, carry

            _, returns = jax.lax.scan(discount, jax.lax.stop_gradient(bootstrap), (batch["rewards"], batch["done"]), reverse=True)
            advantages = jax.lax.stop_gradient(returns - values)
            log_probs = jax.nn.log_softmax(logits)
            taken = jnp.take_along_axis(log_probs, batch["actions"][..., None], axis=-1)[..., 0]
            entropy = -jnp.sum(jnp.exp(log_probs) * log_probs, axis=-1)
            return jnp.mean(-taken * advantages + 0.5 * (returns - values) ** 2 - self.ent_coef * entropy)

        def update(carry, _):
            params, opt_state, env_state, obs, key = carry

            def env_step(carry, step_key):
                env_state, obs = carry
                action_key, env_key = jax.random.split(step_key)
                logits = self.outputs(params, obs)[0]
                actions = jax.random.categorical(action_key, logits)
                env_state, next_obs, rewards, done, _ = env.batch_step(jax.random.split(env_key, self.num_envs), env_state, actions, env_params)
                return (env_state, next_obs), {"obs": obs, "actions": actions, "rewards": rewards, "done": done.astype(jnp.float32)}

            key, rollout_key = jax.random.split(key)
            (env_state, obs), batch = jax.lax.scan(env_step, (env_state, obs), jax.random.split(rollout_key, self.num_steps))
            grads = jax.grad(loss)(params, batch, obs)
            updates, opt_state = self.optimizer.update(grads, opt_state, params)
            return (optax.apply_updates(params, updates), opt_state, env_state, obs, key), None

        (params, *_), _ = jax.lax.scan(update, (params, opt_state, env_state, obs, key), None, num_updates)
        return params


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--suite", default="PrisonersDilemma-v0,StagHunt-v0,Chicken-v0", help="env ids (Discrete actions) or a preset")
    parser.add_argument("--rewards", default="private,cooperative")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=50_000, help="env steps per run (every algorithm gets the same)")
    parser.add_argument("--out", default="runs/new_algorithm")
    args = parser.parse_args()
    result = benchmark.evaluate(
        IndependentA2C(), suite=args.suite.split(","), seeds=args.seeds, rewards=args.rewards.split(","), steps=args.steps,
        out=args.out, baselines=("ippo", "mappo"),
    )  # fmt: skip
    print(result.summary())
    print(f"\nper-run table: {result.out / 'results.csv'}; figures: motivegym report {result.out}")


if __name__ == "__main__":
    main()
