"""Social reward layers: private, integrated, cooperative, mutuality (DESIGN "Reward semantics").

With payoffs ``π`` and effective interdependence weights ``W`` (zero diagonal, ``info["interdependence_weights"]``):

* ``private``:      ``r_i = π_i``
* ``integrated``:   ``r_i = π_i + Σ_{j≠i} W_ij π_j``                      (TR-1 Eq. 13, trust-gated W of TR-2)
* ``cooperative``:  ``r_i = mean_j π_j``                                   (team payoff shared equally)
  ``cooperative(variant="mean_integrated")``: ``r_i = mean_k U_k``         (the reference's variant, spec §7.1)
* ``mutuality(ρ)``: ``r_i = (1 − ρ) π_i + ρ mean_j π_j``                  (ρ=0 private, ρ=1 cooperative)
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp

from motivegym.core.env import Transition
from motivegym.reward_layers.base import RewardLayer

Array = jax.Array


def interdependence_weights(transition: Transition, layer: str) -> Array:
    """``W`` from the env's info; an env without it cannot use partner-weighted layers."""
    if "interdependence_weights" not in transition.info:
        raise ValueError(
            f"the {layer!r} reward layer needs info['interdependence_weights'] (the effective W), "
            "which this environment does not provide; use 'private', 'cooperative' or 'mutuality'"
        )
    return transition.info["interdependence_weights"]


def integrated_utility(payoffs: Array, weights: Array) -> Array:
    """``U_i = π_i + Σ_j W_ij π_j`` (TR-1 Eq. 13); ``W`` has a zero diagonal."""
    return payoffs + jnp.einsum("...ij,...j->...i", weights, payoffs)


def team_mean(values: Array) -> Array:
    """Each agent gets the mean over agents (last axis)."""
    return jnp.broadcast_to(jnp.mean(values, axis=-1, keepdims=True), values.shape)


@dataclasses.dataclass(frozen=True)
class Private(RewardLayer):
    """``r_i = π_i``."""

    name: str = "private"

    def apply(self, state, transition):
        payoffs = transition.payoffs.astype(jnp.float32)
        return state, payoffs, {"payoff": payoffs}


@dataclasses.dataclass(frozen=True)
class Integrated(RewardLayer):
    """``r_i = π_i + Σ_{j≠i} W_ij π_j`` with the env's trust-gated ``W`` (TR-1 Eq. 13)."""

    name: str = "integrated"

    def apply(self, state, transition):
        payoffs = transition.payoffs.astype(jnp.float32)
        weights = interdependence_weights(transition, self.name)
        partner = integrated_utility(payoffs, weights) - payoffs
        return state, payoffs + partner, {"payoff": payoffs, "partner": partner}


COOPERATIVE_VARIANTS = ("mean_payoff", "mean_integrated")


@dataclasses.dataclass(frozen=True)
class Cooperative(RewardLayer):
    """``r_i = mean_j π_j``; ``variant="mean_integrated"`` gives the reference's ``mean_k U_k``."""

    variant: str = "mean_payoff"
    name: str = "cooperative"

    def __post_init__(self):
        if self.variant not in COOPERATIVE_VARIANTS:
            raise ValueError(f"unknown cooperative variant {self.variant!r}; valid: {', '.join(COOPERATIVE_VARIANTS)}")

    def apply(self, state, transition):
        payoffs = transition.payoffs.astype(jnp.float32)
        if self.variant == "mean_integrated":
            payoffs = integrated_utility(payoffs, interdependence_weights(transition, self.name))
        rewards = team_mean(payoffs)
        return state, rewards, {"team": rewards}


@dataclasses.dataclass(frozen=True)
class Mutuality(RewardLayer):
    """``r_i = (1 − ρ) π_i + ρ mean_j π_j``: a continuous dial from private (ρ=0) to cooperative (ρ=1)."""

    rho: float = 0.5
    name: str = "mutuality"

    def __post_init__(self):
        if not 0.0 <= float(self.rho) <= 1.0:
            raise ValueError(f"mutuality rho must be in [0, 1], got {self.rho}")

    def apply(self, state, transition):
        payoffs = transition.payoffs.astype(jnp.float32)
        own = (1.0 - self.rho) * payoffs
        team = self.rho * team_mean(payoffs)
        return state, own + team, {"own": own, "team": team}


def private() -> Private:
    return Private()


def integrated() -> Integrated:
    return Integrated()


def cooperative(variant: str = "mean_payoff") -> Cooperative:
    return Cooperative(variant)


def mutuality(rho: float) -> Mutuality:
    return Mutuality(float(rho))
