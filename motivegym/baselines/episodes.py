"""Episode bookkeeping shared by the jitted learners (PPO, value-based): running episode returns,
the returns of episodes that finished during a rollout, and the staged ``lax.scan`` over updates."""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp

from motivegym.core.batching import reset_finished, split_step_and_reset_keys

Array = jax.Array


def episode_accumulators(num_envs: int, n_agents: int) -> dict[str, Array]:
    """Zeroed ``discounted_return`` / ``episode_payoff`` / ``episode_reward`` ``[num_envs, n]`` for the runner."""
    zeros = jnp.zeros((num_envs, n_agents))
    return {"discounted_return": zeros, "episode_payoff": zeros, "episode_reward": zeros}


def accumulate_episodes(runner: dict, payoffs: Array, rewards: Array, done: Array, gamma: float) -> tuple[dict, dict, Array]:
    """One step of bookkeeping.

    Returns ``(accumulators, finished, discounted)``: the accumulators after the step (zeroed where an
    episode ended), ``{"finished_payoff", "finished_reward"}`` (the episode totals where ``done``, else 0)
    and the discounted return ``G ← γG + r`` before the reset (what reward normalisation tracks).
    """
    discounted = runner["discounted_return"] * gamma + rewards
    payoff = runner["episode_payoff"] + payoffs
    reward = runner["episode_reward"] + rewards
    ended = done[:, None]
    accumulators = {
        "discounted_return": jnp.where(ended, 0.0, discounted),
        "episode_payoff": jnp.where(ended, 0.0, payoff),
        "episode_reward": jnp.where(ended, 0.0, reward),
    }
    finished = {"finished_payoff": jnp.where(ended, payoff, 0.0), "finished_reward": jnp.where(ended, reward, 0.0)}
    return accumulators, finished, discounted


def finished_episode_metrics(records: dict) -> dict[str, Array]:
    """Per-agent mean payoff / reward of the episodes that finished in a rollout ``[steps, envs, …]`` and their count."""
    finished = jnp.maximum(jnp.sum(records["done"]), 1)
    return {
        "episode_payoff": jnp.sum(records["finished_payoff"], axis=(0, 1)) / finished,
        "episode_reward": jnp.sum(records["finished_reward"], axis=(0, 1)) / finished,
        "episodes": jnp.sum(records["done"]),
    }


def staged_scan(init: Callable, update: Callable, num_updates: int) -> tuple[Callable, Callable, Callable]:
    """``(train, init, run)``: ``run(runner, k)`` scans ``update`` k times; ``train(key, reward_index)`` is
    ``run(init(key, reward_index), num_updates)``, so a host loop can train in chunks with the same result."""

    def run(runner: dict, updates: int) -> tuple[dict, dict]:
        return jax.lax.scan(update, runner, None, length=updates)

    def train(key: Array, reward_index: Array) -> tuple[dict, dict]:
        return run(init(key, reward_index), num_updates)

    return train, init, run


def learner_batch_step(env, params, keys: Array, states, actions: Array):
    """One batched env step (``keys [B]``) with same-step auto-reset for the learners.

    Returns ``(states, obs, global_states, payoffs, final_obs, final_global_states, info)``; ``final_*`` are
    the pre-reset ones (what a transition stores as its next observation).
    """
    step_keys, reset_keys = split_step_and_reset_keys(keys)
    next_states, next_obs, payoffs, done, info = jax.vmap(env.step, in_axes=(0, 0, 0, None))(step_keys, states, actions, params)
    final_global = jax.vmap(env.global_state, in_axes=(0, None))(next_states, params)
    views = (lambda s: env.observe(s, params), lambda s: env.global_state(s, params))
    states, (obs, global_states) = reset_finished(env, params, reset_keys, done, next_states, (next_obs, final_global), views)
    return states, obs, global_states, payoffs, next_obs, final_global, info
