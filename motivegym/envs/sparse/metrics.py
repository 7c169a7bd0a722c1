"""The Crafter score (Hafner 2021, §3.3): a geometric mean over achievement success rates.

``S = exp((1/N) Σ_i ln(1 + s_i)) − 1`` with ``s_i ∈ [0, 100]`` the percentage of episodes in which
achievement ``i`` was unlocked at least once. Pure jnp functions over achievement flags as reported in
``info["achievements"]`` at the end of each episode (``[episodes, n_agents, n_achievements]`` bool).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

Array = jax.Array


def crafter_score(success_rates: Array) -> Array:
    """``exp(mean_i ln(1 + s_i)) − 1`` over the last axis (``s_i`` in percent)."""
    rates = jnp.asarray(success_rates, jnp.float32)
    return jnp.exp(jnp.mean(jnp.log1p(rates), axis=-1)) - 1.0


def success_rates(episode_flags: Array) -> Array:
    """Percent of episodes (axis 0) in which each achievement was unlocked: ``[episodes, ...] → [...]``."""
    return 100.0 * jnp.mean(jnp.asarray(episode_flags, jnp.float32), axis=0)


def agent_scores(episode_flags: Array) -> Array:
    """``[episodes, n, A] → [n]``: each agent's Crafter score over its own success rates."""
    return crafter_score(success_rates(episode_flags))


def team_score(episode_flags: Array) -> Array:
    """``[episodes, n, A] → scalar``: the score of the team, counting an achievement when ANY agent unlocked it."""
    return crafter_score(success_rates(jnp.any(jnp.asarray(episode_flags, bool), axis=1)))
