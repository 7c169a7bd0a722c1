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
from motivegym.core.params import check_arguments, real
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
    """``U_i = π_i + Σ_j W_ij π_j`` (TR-1 Eq. 13); ``W`` has a zero diagonal.

    Written as a broadcast multiply-and-sum rather than a matmul: XLA fuses it with its neighbours,
    while a tiny CPU ``dot`` goes through the Eigen thread pool and costs ~10x the whole env step.
    """
    return payoffs + jnp.sum(weights * payoffs[..., None, :], axis=-1)


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
        check_arguments(self.name, {"rho": self.rho}, {"rho": real(0.0, 1.0)})

    def apply(self, state, transition):
        payoffs = transition.payoffs.astype(jnp.float32)
        own = (1.0 - self.rho) * payoffs
        team = self.rho * team_mean(payoffs)
        return state, own + team, {"own": own, "team": team}


def inequity_penalties(smoothed: Array, envy: float, guilt: float) -> tuple[Array, Array]:
    """Fehr-Schmidt terms on smoothed payoffs ``e`` (Hughes et al. 2018 Eq. 1):
    ``envy_i = α/(N−1) Σ_j max(e_j − e_i, 0)``, ``guilt_i = β/(N−1) Σ_j max(e_i − e_j, 0)``."""
    gaps = smoothed[..., None, :] - smoothed[..., :, None]  # gaps[i, j] = e_j − e_i
    scale = 1.0 / max(smoothed.shape[-1] - 1, 1)
    disadvantage = envy * scale * jnp.sum(jnp.maximum(gaps, 0.0), axis=-1)
    advantage = guilt * scale * jnp.sum(jnp.maximum(-gaps, 0.0), axis=-1)
    return disadvantage, advantage


#: envy α and guilt β are non-negative weights; smoothing γλ in [0, 1) keeps the smoothed payoff bounded
INEQUITY_AVERSION_ARGUMENTS = {"envy": real(0.0), "guilt": real(0.0), "smoothing": real(0.0, 1.0, high_open=True)}


@dataclasses.dataclass(frozen=True)
class InequityAversion(RewardLayer):
    """``r_i = π_i − α/(N−1) Σ_j max(e_j − e_i, 0) − β/(N−1) Σ_j max(e_i − e_j, 0)`` (Hughes et al. 2018).

    ``e_i ← smoothing · e_i + π_i`` is the temporally smoothed payoff (``γλ`` in the paper), kept in
    the layer state and reset to zero after an episode ends. Defaults α=5, β=0.05 (the paper's
    advantageous/disadvantageous settings), smoothing 0.97.
    """

    envy: float = 5.0
    guilt: float = 0.05
    smoothing: float = 0.97
    name: str = "inequity_aversion"

    def __post_init__(self):
        check_arguments(self.name, vars(self), INEQUITY_AVERSION_ARGUMENTS)

    def init(self, key, spec):
        return jnp.zeros(spec.n_agents, jnp.float32)

    def apply(self, state, transition):
        payoffs = transition.payoffs.astype(jnp.float32)
        smoothed = self.smoothing * state + payoffs
        envy, guilt = inequity_penalties(smoothed, self.envy, self.guilt)
        done = transition.terminated | transition.truncated
        next_state = jnp.where(done, jnp.zeros_like(smoothed), smoothed)
        return next_state, payoffs - envy - guilt, {"payoff": payoffs, "envy": -envy, "guilt": -guilt}


def social_value_angle(payoffs: Array) -> Array:
    """``θ_i = atan2(mean_{j≠i} π_j, π_i)`` in degrees (McKee et al. 2020 Eq. 2)."""
    n = payoffs.shape[-1]
    others = (jnp.sum(payoffs, axis=-1, keepdims=True) - payoffs) / max(n - 1, 1)
    return jnp.degrees(jnp.arctan2(others, payoffs))


#: the target angle lies on the SVO circle's meaningful arc (−90° martyr … 180°); the weight is non-negative
SVO_ARGUMENTS = {"target_degrees": real(-90.0, 180.0), "weight": real(0.0)}


@dataclasses.dataclass(frozen=True)
class SocialValueOrientation(RewardLayer):
    """``r_i = π_i − w · |θ_target − θ_i|`` with the reward angle ``θ_i`` (McKee et al. 2020).

    ``target_degrees``: 0 = individualistic, 45 = prosocial, 90 = altruistic.
    """

    target_degrees: float = 45.0
    weight: float = 0.1
    name: str = "svo"

    def __post_init__(self):
        check_arguments(self.name, vars(self), SVO_ARGUMENTS)

    def apply(self, state, transition):
        payoffs = transition.payoffs.astype(jnp.float32)
        penalty = self.weight * jnp.abs(self.target_degrees - social_value_angle(payoffs))
        return state, payoffs - penalty, {"payoff": payoffs, "svo": -penalty}


def private() -> Private:
    return Private()


def integrated() -> Integrated:
    return Integrated()


def cooperative(variant: str = "mean_payoff") -> Cooperative:
    return Cooperative(variant)


def mutuality(rho: float) -> Mutuality:
    return Mutuality(float(rho))


def inequity_aversion(envy: float = 5.0, guilt: float = 0.05, smoothing: float = 0.97) -> InequityAversion:
    return InequityAversion(float(envy), float(guilt), float(smoothing))


def svo(target_degrees: float = 45.0, weight: float = 0.1) -> SocialValueOrientation:
    return SocialValueOrientation(float(target_degrees), float(weight))
