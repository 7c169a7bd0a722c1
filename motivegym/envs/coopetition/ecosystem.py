"""Ecosystem envs: PlatformEcosystem-v0 and DynamicPartnerSelection-v0 (spec §4.3, §4.4)."""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
import numpy as np

from motivegym.core.thresholds import below, ratio
from motivegym.envs.coopetition.base import CoopetitionEnv, coopetition_params
from motivegym.envs.coopetition.interdependence import hub_spoke_interdependence, symmetric_interdependence
from motivegym.envs.coopetition.trust import trust_params


class PlatformEcosystem(CoopetitionEnv):
    """A platform (agent 0) and N developers in a hub-and-spoke dependence structure.

    * **Mechanism:** TR-1/TR-2 hub-spoke; the ecosystem dies when developers stop trusting the platform.
    * **Agents:** 1 platform (e=150, α=platform_share) + ``n_developers`` developers (e=80, α=(1−share)/N).
    * **Actions:** ``a_0 ∈ [0, 150]``, developers ``a_i ∈ [0, 80]``.
    * **Observation:** global state ``n + 3n² + 1`` (81 for N=4); per-agent presets of spec §5.2.
    * **Payoff:** ``π_i`` (TR-1 Eq. 11) with θ=25, γ=0.75.
    * **Termination:** mean developer trust in the platform ``mean_i≥1 T[i,0] < 0.15``; truncation at 100.
    * **Defaults:** b = 0.3e; D[0,j] = platform_dependency=.25, D[i,0] = developer_dependency=.75;
      trust λ⁺=.08, λ⁻=.25, μ_R=.45, δ_R=.02, ξ=.4, κ=1, T₀=.6.
    """

    name = "PlatformEcosystem"
    exit_threshold = 0.15

    def make_params(
        self,
        n_developers: int = 4,
        platform_share: float = 0.30,
        platform_dependency: float = 0.25,
        developer_dependency: float = 0.75,
    ) -> Any:
        if n_developers < 1 or not 0 < platform_share < 1:
            raise ValueError(f"need n_developers >= 1 and 0 < platform_share < 1, got {n_developers}, {platform_share}")
        endowments = np.array([150.0] + [80.0] * n_developers, np.float32)
        alpha = np.array([platform_share] + [(1 - platform_share) / n_developers] * n_developers, np.float32)
        return coopetition_params(
            endowments=endowments,
            alpha=alpha,
            baselines=0.3 * endowments,
            interdependence=hub_spoke_interdependence(n_developers, platform_dependency, developer_dependency),
            theta=25.0,
            gamma=0.75,
            trust=trust_params(0.08, 0.25, 0.45, 0.02, 0.40, 1.0, 0.60, 0.0),
            max_steps=100,
        )

    def agent_names(self, params) -> tuple[str, ...]:
        return ("platform",) + tuple(f"developer_{i}" for i in range(self.n_agents(params) - 1))

    def developer_trust(self, state):
        return jnp.mean(state.trust[1:, 0])

    def terminated(self, state, params):
        return below(self.developer_trust(state), self.exit_threshold)

    def extra_info(self, state, params) -> dict:
        developers = state.actions[1:]
        return {
            "platform_investment": state.actions[0],
            "mean_developer_investment": jnp.mean(developers),
            "developer_investment_std": jnp.std(developers),
            "developer_trust_in_platform": self.developer_trust(state),
            "developer_exits": jnp.where(self.terminated(state, params), developers.shape[0], 0),
        }


class DynamicPartnerSelection(CoopetitionEnv):
    """A pool of agents with a public reputation score (an exponential average of contribution rates).

    * **Mechanism:** one N-player TR-1/TR-2 game per step; every agent's public reputation
      ``ρ ← 0.9ρ + 0.1·a/e`` is observed by all. (No partner matching: spec §7.31.)
    * **Agents:** ``n_agents`` (default 6), e=100, α=1/n.
    * **Actions:** ``a_i ∈ [0, 100]``.
    * **Observation:** global state ``n + 3n² + 1`` then ρ (121 for n=6); ρ is appended to every
      per-agent observation. ρ is the **post-step** value (the reference lags it one step).
    * **Payoff:** ``π_i`` with θ=18, γ=0.55; reputation never enters the payoff.
    * **Termination:** none; truncation at 50.
    * **Defaults:** b=35, D=0.40 off-diagonal; trust λ⁺=.12, λ⁻=.35, μ_R=.6, δ_R=.015, ξ=.45, κ=1.2, T₀=.5.
    * **Info:** ``reputation_scores``, ``reputation_ranking`` (indices by descending ρ).
    """

    name = "DynamicPartnerSelection"

    def make_params(self, n_agents: int = 6) -> Any:
        if n_agents < 2:
            raise ValueError(f"n_agents must be >= 2, got {n_agents}")
        return coopetition_params(
            endowments=np.full(n_agents, 100.0),
            alpha=np.full(n_agents, 1.0 / n_agents),
            baselines=np.full(n_agents, 35.0),
            interdependence=symmetric_interdependence(n_agents, 0.40),
            theta=18.0,
            gamma=0.55,
            trust=trust_params(0.12, 0.35, 0.60, 0.015, 0.45, 1.2, 0.50, 0.0),
            max_steps=50,
        )

    def initial_extra(self, key, params) -> dict:
        return {"reputation_scores": jnp.zeros_like(params.endowments)}

    def world_step(self, key, state, actions, payoffs, trust, reputation, params):
        scores = 0.9 * state.extra["reputation_scores"] + 0.1 * ratio(actions, params.endowments)
        return {"reputation_scores": scores}, payoffs

    def extra_observation_bounds(self, params):
        """Reputation scores: moving averages of effort rates ``a / e ∈ [0, 1]``."""
        return 0.0, 1.0

    def extra_observation(self, state, params):
        return state.extra["reputation_scores"]

    def extra_info(self, state, params) -> dict:
        scores = state.extra["reputation_scores"]
        return {"reputation_scores": scores, "reputation_ranking": jnp.argsort(-scores, stable=True)}
