"""TR-3 collective action: team production, loyalty and the collective-action rules (spec §1.9, §4.11).

Closed forms of the TR-3 paper as the reference states them (spec §1.9; ``n`` agents, productivity ω, returns to scale β, effort cost c):

* team output ``Q(a) = ω·(Σ_i a_i)^β`` (``Q = 0`` when ``Σa ≤ 0``)                     (TR-3 team production)
* base team payoff ``π_i^team = Q(a)/n − c·a_i``                                          (TR-3 base team payoff)
* loyalty modifier ``L_i = θ_i·(φ_B·π̄_{−i} + φ_C·c·a_i)``, ``π̄_{−i} = mean_{j≠i} π_j^team`` (TR-3 loyalty modifier)
* free-riding Nash effort ``a*_NE = (ωβ / (c·n^(2−β)))^(1/(1−β))`` (linear β=1: 0 if ω/n < c else a_max)
* social optimum per agent ``a_opt = (ωβ/c)^(1/(1−β)) / n`` (β=1: a_max if ω > c else 0; not clipped)
* cohesion ``C = Σ_i w_i θ_i / Σ_i w_i`` (0.5 when ``Σw < 1e-8``)

The collective-action rules (the reference's ``CollectiveActionModel``, spec §1.9) act on contribution
rates ``r_i = a_i/e_i``: free riders (``r_i < 0.3``) are multiplied by 0.5, agents whose history loyalty
score (mean rate over the last ≤ 10 steps, current one included) is ≥ 0.6 by ``1 + 0.15·score``, and
everyone by 1.2 when all rates are ≥ 0.5. Every threshold rule is decided by ``motivegym.core.thresholds``
(a rate within 1e-5 of a threshold counts as on it, so compilation cannot flip it). All functions are pure
JAX and jit/vmap-safe.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from motivegym.core.thresholds import at_least, below

Array = jax.Array

LINEAR_TOLERANCE = 1e-9


def team_output(actions: Array, omega: Array, beta: Array) -> Array:
    """``Q(a) = ω·(Σ_i a_i)^β`` over the last axis; 0 when ``Σa ≤ 0`` (TR-3 team production)."""
    total = jnp.sum(actions, axis=-1)
    return jnp.where(total > 0, omega * jnp.maximum(total, 1e-30) ** beta, 0.0)


def team_payoff(actions: Array, omega: Array, beta: Array, cost: Array) -> Array:
    """Base team payoff ``π_i^team = Q(a)/n − c·a_i`` for every agent (TR-3 base team payoff)."""
    n = actions.shape[-1]
    return team_output(actions, omega, beta)[..., None] / n - cost * actions


def partner_mean(values: Array) -> Array:
    """``mean_{j≠i} values_j`` for every i (0 when n ≤ 1); O(n)."""
    n = values.shape[-1]
    if n <= 1:
        return jnp.zeros_like(values)
    return (jnp.sum(values, axis=-1, keepdims=True) - values) / (n - 1)


def loyalty_modifier(
    actions: Array, loyalty: Array, omega: Array, beta: Array, cost: Array, phi_b: Array, phi_c: Array
) -> Array:
    """``L_i = θ_i·(φ_B·mean_{j≠i} π_j^team + φ_C·c·a_i)`` (TR-3 loyalty: welfare internalisation + cost tolerance)."""
    partners = partner_mean(team_payoff(actions, omega, beta, cost))
    return loyalty * (phi_b * partners + phi_c * cost * actions)


def nash_effort(n_agents: int, omega: Array, beta: Array, cost: Array, a_max: Array) -> Array:
    """Symmetric free-riding Nash effort ``a*_NE = (ωβ/(c n^(2−β)))^(1/(1−β))`` (TR-3 free-riding equilibrium).

    This is the interior root of ``∂π_i^team/∂a_i = ωβ(Σa)^(β−1)/n − c = 0`` at a symmetric profile.
    For linear production (``|β − 1| < 1e-9``) it is ``0`` if ``ω/n < c`` else ``a_max``. Not clipped.
    """
    linear = jnp.abs(beta - 1.0) < LINEAR_TOLERANCE
    safe_exponent = 1.0 / jnp.where(linear, 0.5, 1.0 - beta)
    interior = (omega * beta / (cost * n_agents ** (2.0 - beta))) ** safe_exponent
    return jnp.where(linear, jnp.where(omega / n_agents < cost, 0.0, a_max), interior)


def optimal_effort(n_agents: int, omega: Array, beta: Array, cost: Array, a_max: Array) -> Array:
    """Per-agent social optimum ``a_opt = (ωβ/c)^(1/(1−β))/n`` (TR-3 social optimum): the root of ``∂(Q − cΣa)/∂Σa = 0``.

    Not clipped to ``a_max`` (as the reference). Linear production: ``a_max`` if ``ω > c`` else 0.
    """
    linear = jnp.abs(beta - 1.0) < LINEAR_TOLERANCE
    safe_exponent = 1.0 / jnp.where(linear, 0.5, 1.0 - beta)
    interior = (omega * beta / cost) ** safe_exponent / n_agents
    return jnp.where(linear, jnp.where(omega > cost, a_max, 0.0), interior)


def cohesion(loyalty: Array, weights: Array) -> Array:
    """Team cohesion ``C = Σ w_i θ_i / Σ w_i`` (TR-3 cohesion); 0.5 when ``Σw < 1e-8``."""
    total = jnp.sum(weights, axis=-1)
    return jnp.where(total < 1e-8, 0.5, jnp.sum(weights * loyalty, axis=-1) / jnp.where(total < 1e-8, 1.0, total))


def loyalty_update(loyalty: Array, rates: Array, cap: Array) -> Array:
    """The env loyalty θ update (spec §4.11): ``θ + 0.02 r`` if ``r ≥ 0.5`` else ``θ − 0.05 (0.5 − r)``, clipped to ``[0, cap]``."""
    grown = jnp.minimum(1.0, loyalty + 0.02 * rates)
    decayed = jnp.maximum(0.0, loyalty - 0.05 * (0.5 - rates))
    return jnp.clip(jnp.where(at_least(rates, 0.5), grown, decayed), 0.0, cap)


def push_rates(history: Array, length: Array, rates: Array) -> tuple[Array, Array]:
    """Write ``rates`` into the ``[horizon, n]`` ring buffer at slot ``length mod horizon``."""
    horizon = history.shape[0]
    return history.at[length % horizon].set(rates), length + 1


def history_loyalty_score(history: Array, length: Array) -> Array:
    """Mean contribution rate over the last ``min(length, horizon)`` entries, clipped to [0, 1]; 0.5 if empty.

    The ring buffer holds exactly the last ``horizon`` entries, so the window is every valid slot.
    """
    horizon = history.shape[0]
    valid = (jnp.arange(horizon) < jnp.minimum(length, horizon))[:, None]
    count = jnp.minimum(length, horizon).astype(jnp.float32)
    mean = jnp.sum(jnp.where(valid, history, 0.0), axis=0) / jnp.maximum(count, 1.0)
    return jnp.where(length > 0, jnp.clip(mean, 0.0, 1.0), 0.5)


def collective_multipliers(
    rates: Array,
    scores: Array,
    free_rider_threshold: Array,
    free_rider_penalty: Array,
    loyalty_threshold: Array,
    loyalty_bonus_rate: Array,
    coordination_threshold: Array,
    coordination_bonus: Array,
) -> Array:
    """The reference's ``compute_reward_modifiers`` (spec §1.9): free-rider penalty × loyalty bonus × coordination bonus."""
    multiplier = jnp.where(below(rates, free_rider_threshold), free_rider_penalty, 1.0)
    multiplier = multiplier * jnp.where(at_least(scores, loyalty_threshold), 1.0 + loyalty_bonus_rate * scores, 1.0)
    coordinated = jnp.all(at_least(rates, coordination_threshold), axis=-1, keepdims=True)
    return multiplier * jnp.where(coordinated, 1.0 + coordination_bonus, 1.0)


def scale_payoff(payoffs: Array, multipliers: Array) -> Array:
    """Apply payoff multipliers so that ``m > 1`` always helps and ``m < 1`` always hurts.

    ``π·m`` for ``π ≥ 0`` (the reference's product) and ``π/m`` for ``π < 0`` (a product would turn a
    penalty into a smaller loss). The reference only ever multiplies positive TR-1 utilities.
    """
    return jnp.where(payoffs >= 0, payoffs * multipliers, payoffs / jnp.maximum(multipliers, 1e-6))
