"""Benchmark envs: RecoveryRace-v0 and SynergySearch-v0 (spec §4.5, §4.6)."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from motivegym.core.pytree import pytree_dataclass, static_field
from motivegym.core.thresholds import at_least
from motivegym.envs.coopetition.base import CoopetitionEnv, CoopetitionParams, coopetition_params
from motivegym.envs.coopetition.interdependence import symmetric_interdependence
from motivegym.envs.coopetition.trust import off_diagonal_mean, trust_params


@pytree_dataclass
class RecoveryRaceParams(CoopetitionParams):
    recovery_target: Any = 0.90


class RecoveryRace(CoopetitionEnv):
    """Post-crisis trust recovery: start with low trust under a reputation-damage ceiling.

    * **Mechanism:** TR-2 hysteresis; trust can only be rebuilt below the ceiling ``1 − R`` while
      damage decays by δ_R per cooperative step.
    * **Agents:** 2 symmetric, e=100.
    * **Actions:** ``a_i ∈ [0, 100]``.
    * **Observation:** global state 15; per-agent presets.
    * **Payoff:** ``π_i`` with θ=20, γ=0.6.
    * **Termination (success):** mean trust ≥ ``recovery_target`` (0.90); truncation at 150.
      As in the reference this target is unreachable within 150 steps (spec §7.27): the ceiling
      ``1 − 0.5·0.99^t`` passes 0.9 only after t ≥ 160. Raise ``max_steps`` or lower the target.
    * **Defaults:** b=35, D=0.55; trust λ⁺=.08, λ⁻=.35, μ_R=.7, δ_R=.01, ξ=.4, κ=1, T₀=.25, R₀=.5.
    * **Info:** ``peak_trust``, ``recovery_step`` (−1 until reached), ``trust_ceiling``, ``recovery_progress``.
    """

    name = "RecoveryRace"

    def make_params(self) -> Any:
        return coopetition_params(
            endowments=[100.0, 100.0],
            alpha=[0.5, 0.5],
            baselines=[35.0, 35.0],
            interdependence=symmetric_interdependence(2, 0.55),
            theta=20.0,
            gamma=0.60,
            trust=trust_params(0.08, 0.35, 0.70, 0.01, 0.40, 1.0, 0.25, 0.50),
            max_steps=150,
            params_class=RecoveryRaceParams,
            recovery_target=0.90,
        )

    def initial_extra(self, key, params) -> dict:
        return {"peak_trust": params.trust.initial_trust, "recovery_step": jnp.int32(-1)}

    def world_step(self, key, state, actions, payoffs, trust, reputation, params):
        mean_trust = off_diagonal_mean(trust, 1.0)
        reached = at_least(mean_trust, params.recovery_target) & (state.extra["recovery_step"] < 0)
        extra = {
            "peak_trust": jnp.maximum(state.extra["peak_trust"], mean_trust),
            "recovery_step": jnp.where(reached, state.t + 1, state.extra["recovery_step"]),
        }
        return extra, payoffs

    def terminated(self, state, params):
        return at_least(off_diagonal_mean(state.trust, 1.0), params.recovery_target)

    def extra_info(self, state, params) -> dict:
        initial = params.trust.initial_trust
        return {
            "peak_trust": state.extra["peak_trust"],
            "recovery_step": state.extra["recovery_step"],
            "trust_ceiling": 1.0 - off_diagonal_mean(state.reputation, 0.0),
            "recovery_progress": (off_diagonal_mean(state.trust, 1.0) - initial) / (params.recovery_target - initial),
        }


@pytree_dataclass
class SynergySearchParams(CoopetitionParams):
    gamma_low: Any = 0.20
    gamma_high: Any = 0.90
    reveal_gamma: bool = static_field(False)


class SynergySearch(CoopetitionEnv):
    """The complementarity γ is hidden and redrawn every episode; agents must infer it from payoffs.

    * **Mechanism:** TR-1 with an unknown synergy weight, γ ~ U(gamma_low, gamma_high) drawn from the
      reset key (seeded; spec §7.25 fixed: the reference draws it before seeding).
    * **Agents:** 2 symmetric, e=100.
    * **Actions:** ``a_i ∈ [0, 100]``.
    * **Observation:** global state 15 (16 with ``reveal_gamma=True``, γ appended).
    * **Payoff:** ``π_i`` with θ=20 and the episode's γ.
    * **Termination:** none; truncation at 100.
    * **Defaults:** b=40, D=0.5; trust λ⁺=.10, λ⁻=.30, μ_R=.6, δ_R=.03, ξ=.5, κ=1, T₀=.55.
    * **Info:** ``true_gamma`` only when revealed (the reference leaks ``gamma_type`` always, spec §7.26).
    """

    name = "SynergySearch"

    def make_params(self) -> Any:
        return coopetition_params(
            endowments=[100.0, 100.0],
            alpha=[0.5, 0.5],
            baselines=[40.0, 40.0],
            interdependence=symmetric_interdependence(2, 0.5),
            theta=20.0,
            gamma=0.5,  # unused: γ is drawn per episode
            trust=trust_params(lambda_plus=0.10, lambda_minus=0.30, initial_trust=0.55),
            max_steps=100,
            params_class=SynergySearchParams,
            gamma_low=0.20,
            gamma_high=0.90,
        )

    def initial_extra(self, key, params) -> dict:
        return {"gamma": jax.random.uniform(key, (), jnp.float32, params.gamma_low, params.gamma_high)}

    def synergy_gamma(self, state, params):
        return state.extra["gamma"]

    def extra_observation_bounds(self, params):
        """The revealed synergy weight ``γ ∈ [gamma_low, gamma_high]``."""
        return (float(params.gamma_low), float(params.gamma_high)) if params.reveal_gamma else (0.0, 0.0)

    def extra_observation(self, state, params):
        if params.reveal_gamma:
            return state.extra["gamma"][None]
        return jnp.zeros((0,), jnp.float32)

    def extra_info(self, state, params) -> dict:
        return {"true_gamma": state.extra["gamma"]} if params.reveal_gamma else {}
