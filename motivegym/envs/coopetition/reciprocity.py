"""TR-4 reciprocity mathematics (spec §1.10): action memory, cooperation signal, bounded response, Eq. 44 modifier.

With the action history kept in a fixed-size ring buffer ``[k, n]`` (jit-safe) and ``c`` actions recorded
before the current step:

* memory average (TR-4 Eq. 20, the **paper** form): ``ā_j = mean`` of the previous ``w = min(k, c)`` actions
  of j, **excluding** the current one; ``ā_j = 0`` when there is no previous action (``c = 0``), as in the
  reference's ``t ≤ 1`` rule. ``include_current=True`` reproduces the reference instead: the window has the
  same length ``w`` but is taken *after* appending the current action, so it contains it (spec §1.10, §7.8).
* cooperation signal ``s_ij = a_j − ā_j``                                   (TR-4 Eq. 19)
* bounded response ``φ(x) = tanh(κ x)``                                     (TR-4 Eq. 21)
* reciprocity sensitivity ``ρ_ij = ρ₀·D_ij^η``                              (TR-4 Eq. 23)
* pair term ``λ_R·T_ij·(1 + ω D_ij)·ρ_ij·φ(s_ij)`` with raw trust ``T``     (TR-4 Eq. 44 inner term)
* modifier ``m_i = max(0.01, 1 + Σ_{j≠i} pair_ij / mean(e))``              (the reference's Eq. 44 multiplier)
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

Array = jax.Array

MINIMUM_MODIFIER = 0.01


def push_actions(history: Array, length: Array, actions: Array) -> tuple[Array, Array]:
    """Record ``actions`` in the ``[k, n]`` ring buffer at slot ``length mod k``; returns ``(history, length + 1)``."""
    window = history.shape[0]
    return history.at[length % window].set(actions), length + 1


def recent_mean(history: Array, length: Array, window: Array) -> Array:
    """Mean of the last ``window`` recorded actions (``window ≤ min(length, k)``); 0 when ``window = 0``.

    Slot ``s`` holds the action recorded ``age_s = (length − 1 − s) mod k`` steps ago.
    """
    k = history.shape[0]
    age = jnp.mod(length - 1 - jnp.arange(k), k)
    selected = (age < window)[:, None]
    total = jnp.sum(jnp.where(selected, history, 0.0), axis=0)
    return jnp.where(window > 0, total / jnp.maximum(window, 1).astype(jnp.float32), 0.0)


def memory_average(history: Array, length: Array, actions: Array, include_current: bool = False) -> Array:
    """``ā_j`` of the current step (TR-4 Eq. 20) from the history **before** ``actions`` are recorded.

    Paper form (default): the previous ``min(k, c)`` actions. ``include_current=True``: the reference's
    window of the same length taken after recording ``actions`` (so it includes them).
    """
    window = jnp.minimum(history.shape[0], length)
    if include_current:
        history, length = push_actions(history, length, actions)
    return recent_mean(history, length, window)


def cooperation_signals(actions: Array, memory: Array) -> Array:
    """``s_ij = a_j − ā_j`` as an ``[n, n]`` matrix (row i observes partner j; zero diagonal) (TR-4 Eq. 19)."""
    n = actions.shape[-1]
    signal = jnp.broadcast_to((actions - memory)[..., None, :], actions.shape[:-1] + (n, n))
    return jnp.where(jnp.eye(n, dtype=bool), 0.0, signal)


def bounded_response(signals: Array, kappa: Array) -> Array:
    """``φ(s) = tanh(κ s)`` (TR-4 Eq. 21)."""
    return jnp.tanh(kappa * signals)


def reciprocity_sensitivity(interdependence: Array, rho_0: Array, eta: Array) -> Array:
    """``ρ_ij = ρ₀·D_ij^η`` (TR-4 Eq. 23); 0 where ``D_ij = 0``."""
    positive = interdependence > 0
    return jnp.where(positive, rho_0 * jnp.where(positive, interdependence, 1.0) ** eta, 0.0)


def reciprocity_effects(
    signals: Array,
    trust: Array,
    interdependence: Array,
    lambda_r: Array,
    omega: Array,
    rho_0: Array,
    eta: Array,
    kappa: Array,
) -> Array:
    """Pair terms ``λ_R·T_ij·(1 + ω D_ij)·ρ₀ D_ij^η·tanh(κ s_ij)`` (TR-4 Eq. 44 inner term; zero diagonal).

    ``trust`` is the raw post-update trust ``T`` (not the effective ``min(T, 1 − R)``), as in the reference.
    """
    n = trust.shape[-1]
    sensitivity = reciprocity_sensitivity(interdependence, rho_0, eta)
    effects = lambda_r * trust * (1.0 + omega * interdependence) * sensitivity * bounded_response(signals, kappa)
    return jnp.where(jnp.eye(n, dtype=bool), 0.0, effects)


def reciprocity_modifier(effects: Array, endowments: Array) -> Array:
    """``m_i = max(0.01, 1 + Σ_j pair_ij / mean(e))`` (the reference's Eq. 44 reward multiplier)."""
    utility = jnp.sum(effects, axis=-1)
    return jnp.maximum(MINIMUM_MODIFIER, 1.0 + utility / jnp.mean(endowments, axis=-1, keepdims=True))
