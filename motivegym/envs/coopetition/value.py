"""Value creation and appropriation (TR-1 §3): value function, synergy, total value, private payoff."""

from __future__ import annotations

import jax
import jax.numpy as jnp

Array = jax.Array

EPSILON = 1e-10


def individual_value(actions: Array, theta: Array, beta: Array, form: str = "log") -> Array:
    """``f(a)``: ``θ·ln(1 + max(a, 0))`` (log, TR-1 Eq. 3) or ``max(a, ε)^β`` (power, Eq. 2)."""
    if form == "log":
        return theta * jnp.log1p(jnp.maximum(actions, 0.0))
    if form == "power":
        return jnp.maximum(actions, EPSILON) ** beta
    raise ValueError(f"unknown value form {form!r}; valid forms: 'log', 'power'")


def synergy(actions: Array) -> Array:
    """``g(a) = (∏ a_i)^(1/n)`` (TR-1 Eq. 5); 0 as soon as any ``a_i ≤ ε``."""
    positive = jnp.all(actions > EPSILON, axis=-1)
    geometric_mean = jnp.exp(jnp.mean(jnp.log(jnp.maximum(actions, EPSILON)), axis=-1))
    return jnp.where(positive, geometric_mean, 0.0)


def total_value(actions: Array, theta: Array, beta: Array, gamma: Array, form: str = "log") -> Array:
    """``V(a) = Σ_i f(a_i) + γ·g(a)`` (TR-1 Eq. 6)."""
    return jnp.sum(individual_value(actions, theta, beta, form), axis=-1) + gamma * synergy(actions)


def private_payoff(
    actions: Array, endowments: Array, alpha: Array, theta: Array, beta: Array, gamma: Array, form: str = "log"
) -> Array:
    """``π_i(a) = (e_i − a_i) + f(a_i) + α_i·γ·g(a)`` (TR-1 Eq. 11)."""
    surplus = gamma * synergy(actions)
    return (endowments - actions) + individual_value(actions, theta, beta, form) + alpha * surplus[..., None]
