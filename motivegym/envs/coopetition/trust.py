"""Trust and reputation dynamics (TR-2 §4), updated for every ordered pair simultaneously."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from motivegym.core.pytree import pytree_dataclass

Array = jax.Array


@pytree_dataclass
class TrustParams:
    """TR-2 trust parameters (defaults: spec §1.7)."""

    lambda_plus: Array  # λ⁺ trust-building rate
    lambda_minus: Array  # λ⁻ trust-erosion rate
    mu_r: Array  # μ_R reputation-damage severity
    delta_r: Array  # δ_R reputation decay
    xi: Array  # ξ interdependence amplification of erosion
    kappa: Array  # κ signal sensitivity
    initial_trust: Array  # T₀
    initial_reputation: Array  # R₀


TRUST_FIELDS = ("lambda_plus", "lambda_minus", "mu_r", "delta_r", "xi", "kappa", "initial_trust", "initial_reputation")


def trust_params(
    lambda_plus: float = 0.10,
    lambda_minus: float = 0.30,
    mu_r: float = 0.60,
    delta_r: float = 0.03,
    xi: float = 0.50,
    kappa: float = 1.0,
    initial_trust: float = 0.50,
    initial_reputation: float = 0.0,
) -> TrustParams:
    """Build :class:`TrustParams` (float32 scalars), validating the ranges of spec §1.7."""
    for name, value, low, high in [
        ("lambda_plus", lambda_plus, 0.0, 1.0),
        ("lambda_minus", lambda_minus, 0.0, 1.0),
        ("mu_r", mu_r, 0.0, 1.0),
        ("delta_r", delta_r, 0.0, 1.0),
        ("initial_trust", initial_trust, 0.0, 1.0),
        ("initial_reputation", initial_reputation, 0.0, 1.0),
    ]:
        if not low <= float(value) <= high:
            raise ValueError(f"{name}={value} is outside [{low}, {high}]")
    if float(xi) < 0 or float(kappa) <= 0:
        raise ValueError(f"need xi >= 0 and kappa > 0, got xi={xi}, kappa={kappa}")
    values = dict(locals())
    return TrustParams(**{k: jnp.float32(values[k]) for k in TRUST_FIELDS})


def initial_trust_state(n_agents: int, params: TrustParams) -> tuple[Array, Array]:
    """``T`` filled with T₀ (diagonal 1) and ``R`` with R₀ (diagonal 0)."""
    eye = jnp.eye(n_agents, dtype=bool)
    trust = jnp.where(eye, 1.0, jnp.full((n_agents, n_agents), params.initial_trust, jnp.float32))
    reputation = jnp.where(eye, 0.0, jnp.full((n_agents, n_agents), params.initial_reputation, jnp.float32))
    return trust, reputation


def trust_update(
    trust: Array, reputation: Array, actions: Array, baselines: Array, interdependence: Array, params: TrustParams
) -> tuple[Array, Array]:
    """One TR-2 update of trust ``T[i,j]`` and reputation damage ``R[i,j]`` (TR-2 Eqs. 7–10).

    ``s_j = tanh(κ(a_j − b_j))``; building ``λ⁺ s max(0, (1 − R) − T)`` for ``s > 0``, erosion
    ``λ⁻ s T (1 + ξ D_ij)`` for ``s < 0``; damage ``μ_R (−s)(1 − R)`` on violation, decay ``−δ_R R``
    otherwise; ``T`` is clipped to the *pre-update* ceiling ``1 − R`` (as the reference does).
    """
    signal = jnp.tanh(params.kappa * (actions - baselines))[None, :]
    ceiling = 1.0 - reputation
    building = params.lambda_plus * signal * jnp.maximum(0.0, ceiling - trust)
    erosion = params.lambda_minus * signal * trust * (1.0 + params.xi * interdependence)
    delta_trust = jnp.where(signal > 0, building, jnp.where(signal < 0, erosion, 0.0))
    delta_reputation = jnp.where(signal < 0, params.mu_r * (-signal) * (1.0 - reputation), -params.delta_r * reputation)
    eye = jnp.eye(trust.shape[-1], dtype=bool)
    new_trust = jnp.where(eye, 1.0, jnp.clip(trust + delta_trust, 0.0, ceiling))
    new_reputation = jnp.where(eye, 0.0, jnp.clip(reputation + delta_reputation, 0.0, 1.0))
    return new_trust, new_reputation


def effective_trust(trust: Array, reputation: Array) -> Array:
    """``min(T, 1 − R)``: trust capped by the reputation ceiling (TR-2 Eq. 11)."""
    return jnp.minimum(trust, 1.0 - reputation)


def off_diagonal_mean(matrix: Array, empty_value: float) -> Array:
    """Mean of the off-diagonal entries of a square matrix (``empty_value`` when n ≤ 1)."""
    n = matrix.shape[-1]
    if n <= 1:
        return jnp.float32(empty_value)
    mask = ~jnp.eye(n, dtype=bool)
    return jnp.sum(jnp.where(mask, matrix, 0.0), axis=(-2, -1)) / (n * (n - 1))
