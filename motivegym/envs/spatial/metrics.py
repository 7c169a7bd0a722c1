"""Social outcome metrics of Perolat et al. (2017), "A multi-agent reinforcement learning model of
common-pool resource appropriation" (Sec. 3), as pure functions of one episode.

Inputs are per-step arrays of shape ``[T, n]`` (time, agent): ``payoffs[t, i] = r_i^t`` and, for
peace, ``removed[t, i]`` (agent ``i`` off the map at step ``t``). ``R_i = Σ_t r_i^t`` is agent i's
return. Time is 1-based (the payoff of the first step happens at ``t = 1``). All functions are jittable;
``jax.vmap`` them for batches of episodes.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

Array = jax.Array


def _check_trajectory(array: Array, name: str) -> Array:
    array = jnp.asarray(array)
    if array.ndim != 2 or array.shape[0] < 1 or array.shape[1] < 1:
        raise ValueError(f"{name} must have shape [T, n] with T, n >= 1, got {array.shape}")
    return array


def utilitarian_efficiency(payoffs: Array) -> Array:
    """``U = Σ_i R_i / T``: collective return per step (Perolat et al. 2017)."""
    payoffs = _check_trajectory(payoffs, "payoffs")
    return jnp.sum(payoffs) / payoffs.shape[0]


def equality(payoffs: Array) -> Array:
    """``E = 1 − Σ_i Σ_j |R_i − R_j| / (2 n Σ_i R_i)``: one minus the Gini coefficient of the returns.

    When ``Σ_i R_i = 0`` the Gini is undefined: ``E = 1`` if all returns are equal (e.g. all zero), else NaN.
    """
    payoffs = _check_trajectory(payoffs, "payoffs")
    returns = jnp.sum(payoffs, axis=0)
    n = returns.shape[0]
    spread = jnp.sum(jnp.abs(returns[:, None] - returns[None, :]))
    total = jnp.sum(returns)
    safe_total = jnp.where(total == 0, 1.0, total)
    gini = spread / (2 * n * safe_total)
    return jnp.where(total == 0, jnp.where(spread == 0, 1.0, jnp.nan), 1.0 - gini)


def sustainability(payoffs: Array) -> Array:
    """``S = (1/n) Σ_i t_i`` with ``t_i = E[t | r_i^t > 0]``: the mean time at which payoffs were received.

    Agents that never receive a positive payoff have no ``t_i`` and are left out of the mean; NaN if no agent has one.
    """
    payoffs = _check_trajectory(payoffs, "payoffs")
    positive = payoffs > 0
    times = jnp.arange(1, payoffs.shape[0] + 1, dtype=jnp.float32)[:, None]
    counts = jnp.sum(positive, axis=0)
    mean_time = jnp.sum(positive * times, axis=0) / jnp.maximum(counts, 1)
    rewarded = counts > 0
    n_rewarded = jnp.sum(rewarded)
    return jnp.where(n_rewarded > 0, jnp.sum(jnp.where(rewarded, mean_time, 0.0)) / jnp.maximum(n_rewarded, 1), jnp.nan)


def peace(removed: Array) -> Array:
    """``P = (n T − Σ_i Σ_t removed_i^t) / T``: the average number of agents not tagged out per step."""
    removed = _check_trajectory(removed, "removed").astype(bool)
    steps, n = removed.shape
    return (n * steps - jnp.sum(removed)) / steps


def social_outcomes(payoffs: Array, removed: Array | None = None) -> dict[str, Array]:
    """All four metrics ``{"efficiency", "equality", "sustainability", "peace"}``; peace needs ``removed``
    (without it every agent counts as present, ``P = n``)."""
    payoffs = _check_trajectory(payoffs, "payoffs")
    removed = jnp.zeros(payoffs.shape, bool) if removed is None else _check_trajectory(removed, "removed")
    if removed.shape != payoffs.shape:
        raise ValueError(f"removed must have the shape of payoffs {payoffs.shape}, got {removed.shape}")
    return {
        "efficiency": utilitarian_efficiency(payoffs),
        "equality": equality(payoffs),
        "sustainability": sustainability(payoffs),
        "peace": peace(removed),
    }
