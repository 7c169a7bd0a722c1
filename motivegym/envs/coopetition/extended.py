"""Extended envs: CooperativeNegotiation-v0 and ReputationMarket-v0 (spec §4.9, §4.10).

Their defining mechanics (breach penalties, reputation tiers) are part of the world, so they act
on the **payoff**; every reward layer then sees them (DESIGN: world mechanics belong in the payoff).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from motivegym.core.pytree import pytree_dataclass, static_field
from motivegym.core.thresholds import above, at_most, below, ratio
from motivegym.envs.coopetition.base import CoopetitionEnv, CoopetitionParams, coopetition_params
from motivegym.envs.coopetition.interdependence import symmetric_interdependence
from motivegym.envs.coopetition.trust import trust_params


@pytree_dataclass
class NegotiationParams(CoopetitionParams):
    agreement_threshold: Any = 10.0
    breach_penalty: Any = 3.0


class CooperativeNegotiation(CoopetitionEnv):
    """Actions are both proposals and executed investments; close proposals form a binding agreement.

    * **Mechanism:** ``|a_0 − a_1| ≤ agreement_threshold`` forms the agreement ``a`` (in force from the
      next step). A step on which an agreement is in force and any agent deviates from its agreed
      level by more than the threshold is a breach: **every** agent pays
      ``breach_penalty·|a_i − agreement_i|`` (as in the reference).
    * **Agents:** 2 symmetric, e=100.
    * **Actions:** ``a_i ∈ [0, 100]``.
    * **Observation:** global state 15 then ``[agreement_0, agreement_1, has_agreement]`` (18), the
      agreement in force **after** this step (the reference shows the previous one, spec §7.15).
    * **Payoff:** ``π_i − breach·breach_penalty·|a_i − agreement_i|`` with θ=20, γ=0.6.
    * **Termination:** none; truncation at 100.
    * **Defaults:** b=35, D=0.55; trust λ⁺=.12, λ⁻=.40, μ_R=.65, δ_R=.02, ξ=.55, κ=1.2, T₀=.5.
    * **Info:** ``agreement_reached``, ``current_agreement``, ``has_agreement``, ``breach_occurred``,
      ``total_agreements``, ``total_breaches``, ``proposal_convergence = 1 − |a_0 − a_1|/100``.
    """

    name = "CooperativeNegotiation"

    def make_params(self) -> Any:
        return coopetition_params(
            endowments=[100.0, 100.0],
            alpha=[0.5, 0.5],
            baselines=[35.0, 35.0],
            interdependence=symmetric_interdependence(2, 0.55),
            theta=20.0,
            gamma=0.60,
            trust=trust_params(0.12, 0.40, 0.65, 0.02, 0.55, 1.2, 0.50, 0.0),
            max_steps=100,
            params_class=NegotiationParams,
        )

    def initial_extra(self, key, params) -> dict:
        return {
            "agreement": jnp.zeros(2, jnp.float32),
            "has_agreement": jnp.bool_(False),
            "agreement_reached": jnp.bool_(False),
            "breach_occurred": jnp.bool_(False),
            "total_agreements": jnp.int32(0),
            "total_breaches": jnp.int32(0),
        }

    def world_step(self, key, state, actions, payoffs, trust, reputation, params):
        extra = state.extra
        deviation = jnp.abs(actions - extra["agreement"])
        breach = extra["has_agreement"] & jnp.any(above(deviation, params.agreement_threshold))
        payoffs = payoffs - jnp.where(breach, params.breach_penalty * deviation, 0.0)
        reached = at_most(jnp.abs(actions[0] - actions[1]), params.agreement_threshold)
        new_extra = {
            "agreement": jnp.where(reached, actions, extra["agreement"]),
            "has_agreement": extra["has_agreement"] | reached,
            "agreement_reached": reached,
            "breach_occurred": breach,
            "total_agreements": extra["total_agreements"] + reached,
            "total_breaches": extra["total_breaches"] + breach,
        }
        return new_extra, payoffs

    def extra_observation_bounds(self, params):
        """The agreed actions (in ``[0, max e]``) and the has-agreement flag."""
        return 0.0, float(np.max(params.endowments))

    def extra_observation(self, state, params):
        extra = state.extra
        return jnp.concatenate([extra["agreement"], extra["has_agreement"].astype(jnp.float32)[None]])

    def extra_info(self, state, params) -> dict:
        extra = state.extra
        return {
            "agreement_reached": extra["agreement_reached"],
            "current_agreement": extra["agreement"],
            "has_agreement": extra["has_agreement"],
            "breach_occurred": extra["breach_occurred"],
            "total_agreements": extra["total_agreements"],
            "total_breaches": extra["total_breaches"],
            "proposal_convergence": 1.0 - jnp.abs(state.actions[0] - state.actions[1]) / 100.0,
        }


#: (name, lower bound of public reputation, payoff multiplier), tested in order (spec §4.10)
REPUTATION_TIERS = (("premium", 0.80, 1.30), ("standard", 0.50, 1.00), ("probation", 0.25, 0.70), ("excluded", 0.0, 0.40))


@pytree_dataclass
class ReputationMarketParams(CoopetitionParams):
    reputation_visibility: Any = 1.0
    tier_enabled: bool = static_field(True)


def reputation_tier(reputation: jax.Array) -> jax.Array:
    """Tier index (0 = premium … 3 = excluded) of each public reputation."""
    bounds = jnp.array([tier[1] for tier in REPUTATION_TIERS[:-1]], jnp.float32)
    return jnp.sum(below(reputation[..., None], bounds), axis=-1)


class ReputationMarket(CoopetitionEnv):
    """A market where public reputation places each agent in a payoff tier.

    * **Mechanism:** public reputation ``p ← clip(p + 0.1(a/e − 0.5), 0, 1)``; the tier of the updated
      ``p`` multiplies the agent's payoff: premium (p ≥ .8) ×1.3, standard (≥ .5) ×1.0,
      probation (≥ .25) ×0.7, excluded ×0.4.
    * **Agents:** ``n_agents`` (default 5), e=100, α=1/n.
    * **Actions:** ``a_i ∈ [0, 100]``.
    * **Observation:** global state ``n + 3n² + 1`` then observed reputations (86 for n=5):
      ``clip(p + N(0, 1 − reputation_visibility), 0, 1)``, post-step (no lag, spec §7.15).
    * **Payoff:** ``tier(p_i)·π_i`` with θ=18, γ=0.5 (``tier_enabled=False``: ``π_i``).
    * **Termination:** none; truncation at 100.
    * **Defaults:** b=35, D=0.35; trust λ⁺=.10, λ⁻=.30, μ_R=.55, δ_R=.015, ξ=.45, κ=1, T₀=.5.
    * **Info:** ``public_reputations``, ``reputation_ranking``, ``agent_tiers`` (tier indices),
      ``mean_reputation``, ``reputation_inequality`` (std of p).
    """

    name = "ReputationMarket"

    def make_params(self, n_agents: int = 5) -> Any:
        if n_agents < 2:
            raise ValueError(f"n_agents must be >= 2, got {n_agents}")
        return coopetition_params(
            endowments=np.full(n_agents, 100.0),
            alpha=np.full(n_agents, 1.0 / n_agents),
            baselines=np.full(n_agents, 35.0),
            interdependence=symmetric_interdependence(n_agents, 0.35),
            theta=18.0,
            gamma=0.50,
            trust=trust_params(0.10, 0.30, 0.55, 0.015, 0.45, 1.0, 0.50, 0.0),
            max_steps=100,
            params_class=ReputationMarketParams,
        )

    def initial_extra(self, key, params) -> dict:
        reputation = jnp.full_like(params.endowments, 0.5)
        return {"public_reputation": reputation, "observed_reputation": reputation}

    def world_step(self, key, state, actions, payoffs, trust, reputation, params):
        public = jnp.clip(state.extra["public_reputation"] + 0.1 * (ratio(actions, params.endowments) - 0.5), 0.0, 1.0)
        if params.tier_enabled:
            multipliers = jnp.array([tier[2] for tier in REPUTATION_TIERS], jnp.float32)
            payoffs = payoffs * multipliers[reputation_tier(public)]
        noise = jax.random.normal(key, public.shape) * (1.0 - params.reputation_visibility)
        return {"public_reputation": public, "observed_reputation": jnp.clip(public + noise, 0.0, 1.0)}, payoffs

    def extra_observation_bounds(self, params):
        """Observed reputations, clipped to ``[0, 1]``."""
        return 0.0, 1.0

    def extra_observation(self, state, params):
        return state.extra["observed_reputation"]

    def extra_info(self, state, params) -> dict:
        public = state.extra["public_reputation"]
        return {
            "public_reputations": public,
            "reputation_ranking": jnp.argsort(-public, stable=True),
            "agent_tiers": reputation_tier(public),
            "mean_reputation": jnp.mean(public),
            "reputation_inequality": jnp.std(public),
        }
