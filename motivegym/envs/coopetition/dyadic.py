"""Dyadic coopetition envs: TrustDilemma-v0 and PartnerHoldUp-v0 (spec §4.1, §4.2)."""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp

from motivegym.core.thresholds import below
from motivegym.envs.coopetition.base import CoopetitionEnv, CoopetitionState, coopetition_params
from motivegym.envs.coopetition.interdependence import asymmetric_interdependence, symmetric_interdependence
from motivegym.envs.coopetition.trust import off_diagonal_mean, trust_params


class TrustDilemma(CoopetitionEnv):
    """Continuous iterated prisoner's dilemma whose partner weights are gated by hidden trust.

    * **Mechanism:** TR-1 value creation with TR-2 trust; investing at or above the baseline (40)
      builds trust, investing below it erodes trust and accrues reputation damage.
    * **Agents:** 2 symmetric firms, endowment 100 each.
    * **Actions:** investment ``a_i ∈ [0, 100]`` (clipped).
    * **Observation:** per agent (``full`` preset): own action, partner action, T (4), own R row,
      partner public damage, own D row, t/T. Global state: ``[a, T, R, D, t]`` (15).
    * **Payoff:** ``π_i = (100 − a_i) + 20 ln(1 + a_i) + 0.5·0.7·√(a_0 a_1)`` (TR-1 Eq. 11).
    * **Termination:** mean off-diagonal trust < 0.05 (trust collapse); truncation at 100 steps.
    * **Defaults:** θ=20, γ=0.7, α=(.5,.5), b=(40,40), D=0.6 symmetric; trust λ⁺=.15, λ⁻=.45,
      μ_R=.5, δ_R=.02, ξ=.6, κ=1.5, T₀=.5.
    * **Info:** ``cooperation_counts`` / ``defection_counts`` (clipped ``a_i ≥ b_i``) and ``cooperation_rates``.
    """

    name = "TrustDilemma"
    collapse_threshold = 0.05

    def make_params(self) -> Any:
        return coopetition_params(
            endowments=[100.0, 100.0],
            alpha=[0.5, 0.5],
            baselines=[40.0, 40.0],
            interdependence=symmetric_interdependence(2, 0.6),
            theta=20.0,
            gamma=0.7,
            trust=trust_params(0.15, 0.45, 0.50, 0.02, 0.60, 1.5, 0.50, 0.0),
            max_steps=100,
        )

    def initial_extra(self, key, params) -> dict:
        return {"cooperation_counts": jnp.zeros(2, jnp.int32), "defection_counts": jnp.zeros(2, jnp.int32)}

    def world_step(self, key, state, actions, payoffs, trust, reputation, params):
        cooperated = actions >= params.baselines
        extra = {
            "cooperation_counts": state.extra["cooperation_counts"] + cooperated,
            "defection_counts": state.extra["defection_counts"] + (~cooperated),
        }
        return extra, payoffs

    def terminated(self, state: CoopetitionState, params) -> Any:
        return below(off_diagonal_mean(state.trust, 1.0), self.collapse_threshold)

    def extra_info(self, state, params) -> dict:
        cooperations = state.extra["cooperation_counts"]
        total = cooperations + state.extra["defection_counts"]
        return {
            "cooperation_counts": cooperations,
            "defection_counts": state.extra["defection_counts"],
            "cooperation_rates": jnp.where(total > 0, cooperations / jnp.maximum(total, 1), 0.0),
        }


class PartnerHoldUp(CoopetitionEnv):
    """Asymmetric vertical relationship: a strong manufacturer (agent 0) and a weak supplier (agent 1).

    * **Mechanism:** TR-1/TR-2 with asymmetric dependence; the supplier exits when its trust in
      the manufacturer collapses.
    * **Agents:** 0 = strong (e=120, α=.6), 1 = weak (e=80, α=.4).
    * **Actions:** ``a_0 ∈ [0, 120]``, ``a_1 ∈ [0, 80]`` (per-agent bounds; spec §7.22 fixed).
    * **Observation:** as TrustDilemma (global state 15).
    * **Payoff:** ``π_i`` (TR-1 Eq. 11) with θ=20, γ=0.6.
    * **Termination:** weak agent's trust in the strong one ``T[1,0] < 0.10``; truncation at 100.
    * **Defaults:** b = 0.35e = (42, 28); D = [[0, strong_dependency=.35], [weak_dependency=.85, 0]];
      trust λ⁺=.10, λ⁻=.35, μ_R=.55, δ_R=.025, ξ=.7, κ=1.2, T₀=.55.
    * **Info:** ``trust_asymmetry = T[1,0] − T[0,1]``, ``power_asymmetry``, ``strong_agent_payoff`` /
      ``weak_agent_payoff`` (the real payoffs; always 0 in the reference, spec §7.10).
    """

    name = "PartnerHoldUp"
    agent_labels = ("strong", "weak")
    exit_threshold = 0.10

    def make_params(self, strong_dependency: float = 0.35, weak_dependency: float = 0.85) -> Any:
        endowments = jnp.array([120.0, 80.0])
        return coopetition_params(
            endowments=endowments,
            alpha=[0.6, 0.4],
            baselines=0.35 * endowments,
            interdependence=asymmetric_interdependence(strong_dependency, weak_dependency),
            theta=20.0,
            gamma=0.6,
            trust=trust_params(0.10, 0.35, 0.55, 0.025, 0.70, 1.2, 0.55, 0.0),
            max_steps=100,
        )

    def initial_extra(self, key, params) -> dict:
        return {"payoffs": jnp.zeros(2, jnp.float32)}

    def world_step(self, key, state, actions, payoffs, trust, reputation, params):
        return {"payoffs": payoffs}, payoffs

    def terminated(self, state, params):
        return below(state.trust[1, 0], self.exit_threshold)

    def extra_info(self, state, params) -> dict:
        return {
            "trust_asymmetry": state.trust[1, 0] - state.trust[0, 1],
            "power_asymmetry": params.interdependence[1, 0] - params.interdependence[0, 1],
            "strong_agent_payoff": state.extra["payoffs"][0],
            "weak_agent_payoff": state.extra["payoffs"][1],
        }
