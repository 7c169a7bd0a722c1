"""Social outcome metrics of Perolat et al. (2017), "A multi-agent reinforcement learning model of
common-pool resource appropriation" (Sec. 3), for any env's payoffs.

Two equivalent forms, both jittable (``jax.vmap`` them over episodes):

* trajectory form: per-step arrays ``[T, n]`` (time, agent), ``payoffs[t, i] = r_i^t`` and, for
  peace, ``removed[t, i]`` (agent ``i`` off the map at step ``t``);
* streaming form :func:`outcomes_from_totals`: the running sums an episode rollout accumulates
  (:class:`SocialTotals`), so evaluations need not store trajectories.

``R_i = Σ_t r_i^t`` is agent i's return. Time is 1-based (the payoff of the first step happens at
``t = 1``).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from motivegym.core.pytree import pytree_dataclass

Array = jax.Array
SOCIAL_METRICS = ("efficiency", "equality", "sustainability", "peace")


@pytree_dataclass
class SocialTotals:
    """Running sums of one episode: ``returns[i] = Σ_t r_i^t``, ``positive_steps[i] = #{t: r_i^t > 0}``,
    ``positive_time[i] = Σ_{t: r_i^t > 0} t``, ``removed_steps = Σ_t Σ_i removed_i^t`` and ``length = T``."""

    returns: Array
    positive_steps: Array
    positive_time: Array
    removed_steps: Array
    length: Array


def empty_totals(n_agents: int) -> SocialTotals:
    zeros = jnp.zeros((n_agents,), jnp.float32)
    return SocialTotals(zeros, zeros, zeros, jnp.float32(0.0), jnp.float32(0.0))


def add_step(totals: SocialTotals, payoffs: Array, removed: Array, live: Array) -> SocialTotals:
    """Add one step (``live`` = 1 while the episode runs, 0 after it ended) to ``totals``."""
    live = jnp.asarray(live, jnp.float32)
    t = totals.length + live
    positive = (payoffs > 0).astype(jnp.float32) * live
    return SocialTotals(
        returns=totals.returns + live * payoffs,
        positive_steps=totals.positive_steps + positive,
        positive_time=totals.positive_time + positive * t,
        removed_steps=totals.removed_steps + live * jnp.sum(jnp.asarray(removed, jnp.float32)),
        length=t,
    )


def outcomes_from_totals(totals: SocialTotals) -> dict[str, Array]:
    """The four metrics from an episode's running sums (definitions in the trajectory functions below)."""
    returns, steps = totals.returns, jnp.maximum(totals.length, 1.0)
    n = returns.shape[-1]
    spread = jnp.sum(jnp.abs(returns[:, None] - returns[None, :]))
    total = jnp.sum(returns)
    gini = spread / (2 * n * jnp.where(total == 0, 1.0, total))
    equal = jnp.where(total == 0, jnp.where(spread == 0, 1.0, jnp.nan), 1.0 - gini)
    rewarded = totals.positive_steps > 0
    mean_time = totals.positive_time / jnp.maximum(totals.positive_steps, 1.0)
    n_rewarded = jnp.sum(rewarded)
    sustain = jnp.where(n_rewarded > 0, jnp.sum(jnp.where(rewarded, mean_time, 0.0)) / jnp.maximum(n_rewarded, 1), jnp.nan)
    return {
        "efficiency": total / steps,
        "equality": equal,
        "sustainability": sustain,
        "peace": (n * totals.length - totals.removed_steps) / steps,
    }


def _check_trajectory(array: Array, name: str) -> Array:
    array = jnp.asarray(array)
    if array.ndim != 2 or array.shape[0] < 1 or array.shape[1] < 1:
        raise ValueError(f"{name} must have shape [T, n] with T, n >= 1, got {array.shape}")
    return array


def trajectory_totals(payoffs: Array, removed: Array | None = None) -> SocialTotals:
    """:class:`SocialTotals` of a whole trajectory ``[T, n]`` (``removed`` defaults to nobody removed)."""
    payoffs = _check_trajectory(payoffs, "payoffs").astype(jnp.float32)
    removed = jnp.zeros(payoffs.shape, bool) if removed is None else _check_trajectory(removed, "removed")
    if removed.shape != payoffs.shape:
        raise ValueError(f"removed must have the shape of payoffs {payoffs.shape}, got {removed.shape}")

    def step(totals, row):
        return add_step(totals, row[0], row[1], 1.0), None

    totals, _ = jax.lax.scan(step, empty_totals(payoffs.shape[1]), (payoffs, removed.astype(jnp.float32)))
    return totals


def utilitarian_efficiency(payoffs: Array) -> Array:
    """``U = Σ_i R_i / T``: collective return per step (Perolat et al. 2017)."""
    return outcomes_from_totals(trajectory_totals(payoffs))["efficiency"]


def equality(payoffs: Array) -> Array:
    """``E = 1 − Σ_i Σ_j |R_i − R_j| / (2 n Σ_i R_i)``: one minus the Gini coefficient of the returns.

    When ``Σ_i R_i = 0`` the Gini is undefined: ``E = 1`` if all returns are equal (e.g. all zero), else NaN.
    """
    return outcomes_from_totals(trajectory_totals(payoffs))["equality"]


def sustainability(payoffs: Array) -> Array:
    """``S = (1/n) Σ_i t_i`` with ``t_i = E[t | r_i^t > 0]``: the mean time at which payoffs were received.

    Agents that never receive a positive payoff have no ``t_i`` and are left out of the mean; NaN if no agent has one.
    """
    return outcomes_from_totals(trajectory_totals(payoffs))["sustainability"]


def peace(removed: Array) -> Array:
    """``P = (n T − Σ_i Σ_t removed_i^t) / T``: the average number of agents not tagged out per step."""
    removed = _check_trajectory(removed, "removed")
    return outcomes_from_totals(trajectory_totals(jnp.zeros(removed.shape), removed))["peace"]


def social_outcomes(payoffs: Array, removed: Array | None = None) -> dict[str, Array]:
    """All four metrics ``{"efficiency", "equality", "sustainability", "peace"}``; peace needs ``removed``
    (without it every agent counts as present, ``P = n``)."""
    return outcomes_from_totals(trajectory_totals(payoffs, removed))
