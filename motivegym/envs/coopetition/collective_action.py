"""TR-3 collective-action envs: TeamProduction, LoyaltyTeam, CoalitionFormation, ApacheProject, PublicGoods (spec §4.11–§4.16).

**World vs motive.** The world pays the TR-3 team-production game itself, ``π_i^team = Q(a)/n − c·a_i``
(PublicGoods: the classic ``e − a_i + m·Σa/n``). The team's *institutions* — the free-rider penalty,
the sustained-loyalty bonus, the coordination bonus, coalition exclusion and membership bonus — are rules
of the world, so they multiply the payoff (:func:`~motivegym.envs.coopetition.team_production.scale_payoff`).
The TR-3 *loyalty motive* ``L_i = θ_i(φ_B π̄_{−i} + φ_C c a_i)`` is part of the agent: the env reports it in
``info["loyalty_modifier"]`` and the :class:`~motivegym.reward_layers.motives.Loyalty` layer adds it.

The reference instead pays the TR-1 integrated utility (log value on 50-unit endowments) times the
multipliers and reports the TR-3 quantities only in info (spec §4.11, §7.2); see ``docs/deviations_tr3_tr4.md``.
Trust (TR-2) evolves exactly as in the reference, so ``info["interdependence_weights"]`` (trust-gated W)
and the T/R trajectories agree with it.

Shared state (``state.extra``): the env loyalty θ (the reference's 0.02/0.05 rule), a ring buffer of the last
``loyalty_horizon`` contribution rates (the history loyalty score that drives the loyalty bonus, current step
included as in the reference) and the multipliers of the last step.
"""

from __future__ import annotations

from typing import Any, ClassVar

import jax.numpy as jnp
import numpy as np

from motivegym.core.pytree import pytree_dataclass, static_field
from motivegym.core.thresholds import at_least, below, exactly_at_least, exactly_below, ratio
from motivegym.envs.coopetition.base import CoopetitionEnv, CoopetitionParams, coopetition_params
from motivegym.envs.coopetition.interdependence import symmetric_interdependence
from motivegym.envs.coopetition.team_production import (
    cohesion,
    collective_multipliers,
    history_loyalty_score,
    loyalty_modifier,
    loyalty_update,
    nash_effort,
    optimal_effort,
    push_rates,
    scale_payoff,
    team_output,
    team_payoff,
)
from motivegym.envs.coopetition.trust import trust_params


@pytree_dataclass
class CollectiveActionParams(CoopetitionParams):
    """TR-3 parameters (spec §1.9, §4.11) on top of the shared coopetition params."""

    omega: Any = 25.0  # team productivity ω
    production_exponent: Any = 0.7  # returns to scale β of Q = ω(Σa)^β
    effort_cost: Any = 1.0  # effort cost c
    phi_b: Any = 0.0  # loyalty welfare weight φ_B (motive, info only)
    phi_c: Any = 0.0  # loyalty cost-tolerance weight φ_C (motive, info only)
    initial_loyalty: Any = 0.5  # θ at reset
    loyalty_cap: Any = 1.0  # θ is clipped to [0, loyalty_cap]
    free_rider_threshold: Any = 0.3
    free_rider_penalty: Any = 0.5
    loyalty_threshold: Any = 0.6
    loyalty_bonus_rate: Any = 0.15
    coordination_threshold: Any = 0.5
    coordination_bonus: Any = 0.2
    shirking_threshold: Any = 0.2  # TeamProduction's light penalty
    shirking_penalty: Any = 0.9
    loyalty_horizon: int = static_field(10)
    collective_multipliers: bool = static_field(True)


@pytree_dataclass
class CoalitionParams(CollectiveActionParams):
    min_coalition_size: Any = 3.0
    exit_threshold: Any = 0.15
    reentry_cooldown: Any = 5.0
    readmission_threshold: Any = 0.4
    exclusion_penalty: Any = 0.5
    membership_bonus: Any = 1.1


@pytree_dataclass
class ApacheParams(CollectiveActionParams):
    expected_effort: Any = 22.0
    phase: str = static_field("maturity")


#: the TR-3 trust parameters shared by environments 11–15 (spec §4.0)
TR3_TRUST = (0.10, 0.25, 0.40, 0.02, 0.50, 1.0, 0.50, 0.0)


def collective_action_params(
    n_agents: int,
    max_steps: int,
    omega: float,
    production_exponent: float,
    effort_cost: float = 1.0,
    phi_b: float = 0.0,
    phi_c: float = 0.0,
    a_max: float = 50.0,
    params_class: type = CollectiveActionParams,
    **extra: Any,
) -> Any:
    """The TR-3 base configuration (spec §4.11): e = a_max, α = 1/n, b = 0.4e, D = 0.55, θ=20, γ=0.65, TR-3 trust."""
    if n_agents < 2:
        raise ValueError(f"n_agents must be >= 2, got {n_agents}")
    endowments = np.full(n_agents, a_max, np.float32)
    fields = {
        "omega": omega,
        "production_exponent": production_exponent,
        "effort_cost": effort_cost,
        "phi_b": phi_b,
        "phi_c": phi_c,
        "initial_loyalty": 0.5,
        "loyalty_cap": 1.0,
        "free_rider_threshold": 0.3,
        "free_rider_penalty": 0.5,
        "loyalty_threshold": 0.6,
        "loyalty_bonus_rate": 0.15,
        "coordination_threshold": 0.5,
        "coordination_bonus": 0.2,
        "shirking_threshold": 0.2,
        "shirking_penalty": 0.9,
    }
    fields.update(extra)
    return coopetition_params(
        endowments=endowments,
        alpha=np.full(n_agents, 1.0 / n_agents),
        baselines=0.4 * endowments,
        interdependence=symmetric_interdependence(n_agents, 0.55),
        theta=20.0,
        gamma=0.65,
        trust=trust_params(*TR3_TRUST),
        max_steps=max_steps,
        params_class=params_class,
        **fields,
    )


class CollectiveActionEnv(CoopetitionEnv):
    """Shared TR-3 pipeline: loyalty θ, rate history, institution multipliers on the team payoff."""

    name = "CollectiveAction"
    #: whether the env loyalty θ follows the 0.02/0.05 rule (TeamProduction keeps θ = 0.5)
    updates_loyalty: ClassVar[bool] = True
    #: whether ``[θ, history loyalty score]`` is appended to the observation
    observes_loyalty: ClassVar[bool] = True

    # ----- world payoff -----
    def team_payoffs(self, actions, params) -> Any:
        """The world's payoff before institution multipliers: ``π_i^team = Q(a)/n − c·a_i``."""
        return team_payoff(actions, params.omega, params.production_exponent, params.effort_cost)

    def institution_multipliers(self, rates, scores, extra: dict, params) -> tuple[dict, Any]:
        """``(extra, multipliers)``: the reference's collective-action modifiers (spec §1.9)."""
        multipliers = collective_multipliers(
            rates,
            scores,
            params.free_rider_threshold,
            params.free_rider_penalty,
            params.loyalty_threshold,
            params.loyalty_bonus_rate,
            params.coordination_threshold,
            params.coordination_bonus,
        )
        return extra, multipliers

    # ----- hooks -----
    def initial_extra(self, key, params) -> dict:
        n = params.endowments.shape[0]
        return {
            "loyalty": jnp.full((n,), params.initial_loyalty, jnp.float32),
            "rate_history": jnp.zeros((params.loyalty_horizon, n), jnp.float32),
            "history_length": jnp.int32(0),
            "multipliers": jnp.ones((n,), jnp.float32),
        }

    def world_step(self, key, state, actions, payoffs, trust, reputation, params):
        rates = ratio(actions, params.endowments)
        extra = dict(state.extra)
        if self.updates_loyalty:
            extra["loyalty"] = loyalty_update(extra["loyalty"], rates, params.loyalty_cap)
        extra["rate_history"], extra["history_length"] = push_rates(extra["rate_history"], extra["history_length"], rates)
        scores = history_loyalty_score(extra["rate_history"], extra["history_length"])
        extra, multipliers = self.institution_multipliers(rates, scores, extra, params)
        if not params.collective_multipliers:
            multipliers = jnp.ones_like(multipliers)
        extra["multipliers"] = multipliers
        return extra, scale_payoff(self.team_payoffs(actions, params), multipliers)

    def extra_observation_bounds(self, params):
        """Loyalty ``θ ∈ [0, loyalty_cap]`` and history loyalty scores (mean effort rates) in ``[0, 1]``."""
        return (0.0, max(1.0, float(params.loyalty_cap))) if self.observes_loyalty else (0.0, 0.0)

    def extra_observation(self, state, params):
        if not self.observes_loyalty:
            return jnp.zeros((0,), jnp.float32)
        scores = history_loyalty_score(state.extra["rate_history"], state.extra["history_length"])
        return jnp.concatenate([state.extra["loyalty"], scores])

    def extra_info(self, state, params) -> dict:
        actions, loyalty = state.actions, state.extra["loyalty"]
        n = actions.shape[0]
        omega, beta, cost = params.omega, params.production_exponent, params.effort_cost
        a_max = jnp.max(params.endowments)
        rates = ratio(actions, params.endowments)
        optimum = optimal_effort(n, omega, beta, cost, a_max)
        free_riders = below(rates, params.free_rider_threshold)
        return {
            "team_output": team_output(actions, omega, beta),
            "nash_equilibrium": nash_effort(n, omega, beta, cost, a_max),
            "social_optimum": optimum,
            "mean_loyalty": jnp.mean(loyalty),
            "loyalty_scores": loyalty,
            "history_loyalty_scores": history_loyalty_score(state.extra["rate_history"], state.extra["history_length"]),
            "team_cohesion": cohesion(loyalty, jnp.mean(params.interdependence, axis=1)),
            "free_rider_count": jnp.sum(free_riders).astype(jnp.int32),
            "free_riders": free_riders,
            "efficiency_ratio": jnp.where(optimum > 0, jnp.mean(actions) / jnp.where(optimum > 0, optimum, 1.0), 0.0),
            "coordination": jnp.all(at_least(rates, params.coordination_threshold)),
            "team_payoffs": self.team_payoffs(actions, params),
            "loyalty_modifier": loyalty_modifier(actions, loyalty, omega, beta, cost, params.phi_b, params.phi_c),
            "collective_multiplier": state.extra["multipliers"],
        }


class TeamProduction(CollectiveActionEnv):
    """Team production with free-riding incentives: output ``Q = ω(Σa)^β`` is shared equally, effort is private.

    * **Mechanism:** TR-3 team production. Each agent's share ``Q/n`` falls short of its marginal
      cost, so the Nash effort ``a*_NE`` is far below the social optimum ``a_opt``; TR-2 trust evolves
      from contributions against the baseline 20.
    * **Agents:** ``n_agents`` (default 4) symmetric members, e=50, α=1/n.
    * **Actions:** effort ``a_i ∈ [0, 50]`` (clipped).
    * **Observation:** global state ``[a, T, R, D, t]`` (53 for n=4; the env θ is constant and not observed);
      per-agent presets of spec §5.2.
    * **Payoff (world):** ``π_i = m_i·(Q(a)/n − c·a_i)`` with the light shirking penalty ``m_i = 0.9`` when
      ``a_i/e_i < 0.2`` else 1 (the reference's TeamProduction modifier). ``collective_multipliers=False``: m=1.
    * **Motive:** none (φ_B = φ_C = 0, so ``loyalty_modifier`` is 0); use any social layer.
    * **Termination:** none; truncation at 100.
    * **Defaults:** ω=25, β=0.7 (``production_exponent``), c=1 (``effort_cost``); a*_NE=34.240,
      a_opt=3478.57 (n=4); b=20, D=0.55; trust λ⁺=.10, λ⁻=.25, μ_R=.40, δ_R=.02, ξ=.5, κ=1, T₀=.5.
    * **Info:** ``team_output``, ``nash_equilibrium``, ``social_optimum``, ``mean_loyalty``, ``loyalty_scores``,
      ``history_loyalty_scores``, ``team_cohesion``, ``free_rider_count``, ``free_riders`` (mask, rate < 0.3),
      ``efficiency_ratio = mean(a)/a_opt``, ``coordination``, ``team_payoffs`` (π^team), ``loyalty_modifier``,
      ``collective_multiplier`` (m).
    """

    name = "TeamProduction"
    updates_loyalty = False
    observes_loyalty = False

    def make_params(self, n_agents: int = 4, omega: float = 25.0, beta: float = 0.7, c: float = 1.0) -> Any:
        return collective_action_params(n_agents, 100, omega, beta, c)

    def institution_multipliers(self, rates, scores, extra, params):
        shirking = below(rates, params.free_rider_threshold) & below(rates, params.shirking_threshold)
        return extra, jnp.where(shirking, params.shirking_penalty, 1.0)


class LoyaltyTeam(CollectiveActionEnv):
    """Team production whose institutions reward sustained contribution and punish free riding.

    * **Mechanism:** TR-3 team production plus the reference's collective-action rules and the env
      loyalty θ (``θ + 0.02 r`` if the rate ``r ≥ 0.5`` else ``θ − 0.05(0.5 − r)``).
    * **Agents:** ``n_agents`` (default 4), e=50, α=1/n.
    * **Actions:** effort ``a_i ∈ [0, 50]``.
    * **Observation:** global state 53 then ``[θ (n), history loyalty score (n)]`` (61 for n=4); both blocks
      are appended to every agent's observation (the reference observes neither, spec §7.50).
    * **Payoff (world):** ``π_i = m_i·(Q/n − c a_i)``, ``m_i`` = free-rider ×0.5 (rate < 0.3) · loyalty bonus
      ``×(1 + 0.15·score_i)`` (score = mean rate over the last ≤ 10 steps incl. this one, ≥ 0.6) ·
      coordination ×1.2 (every rate ≥ 0.5). Negative payoffs are divided by ``m`` (``scale_payoff``).
    * **Motive (reward layer):** ``info["loyalty_modifier"] = θ_i(φ_B π̄_{−i} + φ_C c a_i)``, added by
      ``motivegym.reward_layers.motives.Loyalty`` to give the TR-3 loyalty-augmented utility.
    * **Termination:** none; truncation at 100.
    * **Defaults:** ω=25, β=0.7, c=1, φ_B=0.8, φ_C=0.3; b=20, D=0.55; TR-3 trust (as TeamProduction).
    * **Info:** TeamProduction's keys plus ``loyalty_lift = Q(a)/Q(a*_NE·1)`` (1 before the first step).
    """

    name = "LoyaltyTeam"

    def make_params(
        self, n_agents: int = 4, omega: float = 25.0, beta: float = 0.7, c: float = 1.0, phi_B: float = 0.8, phi_C: float = 0.3
    ) -> Any:
        return collective_action_params(n_agents, 100, omega, beta, c, phi_B, phi_C)

    def extra_info(self, state, params) -> dict:
        info = super().extra_info(state, params)
        n = state.actions.shape[0]
        nash_output = team_output(jnp.full((n,), info["nash_equilibrium"]), params.omega, params.production_exponent)
        lift = jnp.where(nash_output > 0, info["team_output"] / jnp.where(nash_output > 0, nash_output, 1.0), 1.0)
        info["loyalty_lift"] = jnp.where(state.extra["history_length"] > 0, lift, 1.0)
        return info


class CoalitionFormation(CollectiveActionEnv):
    """A team whose coalition excludes members with collapsed loyalty and re-admits them after a cooldown.

    * **Mechanism:** LoyaltyTeam's rules, then membership: a member with θ < ``exit_threshold`` (0.15) is
      excluded while the coalition is larger than ``min_coalition_size`` (3), in index order; an excluded
      agent's timer starts at ``reentry_cooldown`` (5) and is decremented every step including the step of
      exclusion; it is re-admitted when the timer is ≤ 0 and θ ≥ 0.4 (so 4 steps after exclusion at the
      earliest). Membership lives in ``state.extra`` and is the same in every API (spec §7.24 fixed).
    * **Agents:** ``n_agents`` (default 6), e=50, α=1/n.
    * **Actions:** effort ``a_i ∈ [0, 50]``.
    * **Observation:** global state 115 then ``[θ (n), history score (n), member mask (n)]`` (133 for n=6).
    * **Payoff (world):** LoyaltyTeam's ``m_i·(Q/n − c a_i)``, then excluded agents ×0.5 and, while the coalition
      has ≥ ``min_coalition_size`` members, members ×1.1.
    * **Motive (reward layer):** ``info["loyalty_modifier"]`` with φ_B=0.7, φ_C=0.3 (``Loyalty`` layer).
    * **Termination:** coalition size < ``min_coalition_size`` (unreachable: exclusion stops at the minimum,
      as in the reference, spec §7.29); truncation at 150.
    * **Defaults:** ω=25, β=0.7, c=1; a*_NE=5.908, a_opt=2319.04 (n=6); b=20, D=0.55; TR-3 trust.
    * **Info:** LoyaltyTeam's keys (no lift) plus ``coalition_size``, ``coalition_members`` (mask),
      ``excluded_agents`` (mask), ``exclusion_timers``, ``coalition_stability = size/n``.
    """

    name = "CoalitionFormation"

    def make_params(
        self,
        n_agents: int = 6,
        min_coalition_size: int = 3,
        exit_threshold: float = 0.15,
        reentry_cooldown: int = 5,
        omega: float = 25.0,
        beta: float = 0.7,
    ) -> Any:
        if not 1 <= min_coalition_size <= n_agents:
            raise ValueError(f"need 1 <= min_coalition_size <= n_agents, got {min_coalition_size} and {n_agents}")
        return collective_action_params(
            n_agents,
            150,
            omega,
            beta,
            1.0,
            0.7,
            0.3,
            params_class=CoalitionParams,
            min_coalition_size=float(min_coalition_size),
            exit_threshold=exit_threshold,
            reentry_cooldown=float(reentry_cooldown),
            readmission_threshold=0.4,
            exclusion_penalty=0.5,
            membership_bonus=1.1,
        )

    def initial_extra(self, key, params) -> dict:
        n = params.endowments.shape[0]
        extra = super().initial_extra(key, params)
        extra["members"] = jnp.ones((n,), bool)
        extra["exclusion_timers"] = jnp.zeros((n,), jnp.int32)
        return extra

    def institution_multipliers(self, rates, scores, extra, params):
        extra, multipliers = super().institution_multipliers(rates, scores, extra, params)
        loyalty, members, timers = extra["loyalty"], extra["members"], extra["exclusion_timers"]
        size = jnp.sum(members)
        candidates = members & exactly_below(loyalty, params.exit_threshold)  # reference: step 14 at θ = 0.15⁻
        removed = candidates & (jnp.cumsum(candidates) <= size - params.min_coalition_size)
        members = members & ~removed
        timers = jnp.where(removed, params.reentry_cooldown.astype(jnp.int32), timers)
        timers = jnp.where(~members, timers - 1, timers)
        readmitted = ~members & (timers <= 0) & exactly_at_least(loyalty, params.readmission_threshold)
        members = members | readmitted
        timers = jnp.where(members, 0, timers)
        multipliers = multipliers * jnp.where(members, 1.0, params.exclusion_penalty)
        quorum = jnp.sum(members) >= params.min_coalition_size
        multipliers = multipliers * jnp.where(members & quorum, params.membership_bonus, 1.0)
        return {**extra, "members": members, "exclusion_timers": timers}, multipliers

    def terminated(self, state, params):
        return jnp.sum(state.extra["members"]) < params.min_coalition_size

    def extra_observation_bounds(self, params):
        """The loyalty block's bounds and the 0/1 coalition membership flags."""
        return 0.0, max(1.0, super().extra_observation_bounds(params)[1])

    def extra_observation(self, state, params):
        return jnp.concatenate([super().extra_observation(state, params), state.extra["members"].astype(jnp.float32)])

    def extra_info(self, state, params) -> dict:
        info = super().extra_info(state, params)
        members = state.extra["members"]
        size = jnp.sum(members).astype(jnp.int32)
        info.update(
            {
                "coalition_size": size,
                "coalition_members": members,
                "excluded_agents": ~members,
                "exclusion_timers": state.extra["exclusion_timers"],
                "coalition_stability": size / members.shape[0],
            }
        )
        return info


#: phase → (n_agents, loyalty cap/multiplier, ω, expected effort, years)   (spec §4.15)
APACHE_PHASES = {
    "emergence": (8, 1.00, 20.0, 35.0, "1995-1999"),
    "growth": (15, 0.85, 25.0, 30.0, "2000-2005"),
    "maturity": (40, 0.70, 30.0, 22.0, "2006-2015"),
    "evolution": (35, 0.60, 28.0, 18.0, "2016-2023"),
}


class ApacheProject(CollectiveActionEnv):
    """Apache HTTP Server developer community (TR-3 case study) in one of four historical phases.

    * **Mechanism:** LoyaltyTeam's rules with a phase-specific team size, productivity and loyalty cap:
      θ starts at ``0.5·cap`` and is clipped to ``[0, cap]`` after every update.
    * **Agents:** ``phase`` emergence 8 / growth 15 / **maturity 40** (default) / evolution 35 developers, e=50.
    * **Actions:** effort ``a_i ∈ [0, 50]``.
    * **Observation:** default per-agent preset ``params.observation="egocentric"`` (own trust row instead of the
      full T: 5n + 2n = 280 floats per agent for n=40, against 1760 + 80 for ``"full"``); global state
      ``n + 3n² + 1 + 2n`` (4921 for maturity). The extra block is ``[θ (n), history loyalty score (n)]``.
    * **Payoff (world):** ``m_i·(Q/n − c a_i)`` with LoyaltyTeam's multipliers.
    * **Motive (reward layer):** ``info["loyalty_modifier"]`` with φ_B=0.75, φ_C=0.25 (``Loyalty`` layer).
    * **Termination:** none; truncation at 60.
    * **Defaults:** ω by phase (20/25/30/28), β=0.7, c=1; a*_NE = 0.807 / 0.111 / 0.00292 / 0.00414,
      a_opt = 826.68 / 927.62 / 638.76 / 580.03; b=20, D=0.55; TR-3 trust. All per-step work is O(n²)
      array code (no per-agent Python loops), so the 40-agent default batches well.
    * **Info:** LoyaltyTeam's keys (no lift) plus ``phase_loyalty`` (cap), ``expected_effort``,
      ``effort_deviation = |mean(a) − expected|/expected`` and ``validation_accuracy = max(0, 1 − deviation)``
      (0 and 1 before the first step); ``phase`` and ``phase_years`` are static info.
      The reset info shows the scaled θ (the reference shows 0.5, spec §7.33).
    """

    name = "ApacheProject"

    def make_params(self, phase: str = "maturity") -> Any:
        key = str(phase).lower()
        if key not in APACHE_PHASES:
            raise ValueError(f"unknown phase {phase!r}; valid phases: {', '.join(APACHE_PHASES)}")
        n_agents, cap, omega, expected, _ = APACHE_PHASES[key]
        return collective_action_params(
            n_agents,
            60,
            omega,
            0.7,
            1.0,
            0.75,
            0.25,
            params_class=ApacheParams,
            initial_loyalty=0.5 * cap,
            loyalty_cap=cap,
            expected_effort=expected,
            phase=key,
            observation="egocentric",
        )

    def static_info(self, params) -> dict:
        return {"phase": params.phase, "phase_years": APACHE_PHASES.get(params.phase, (0, 0, 0, 0, ""))[4]}

    def extra_info(self, state, params) -> dict:
        info = super().extra_info(state, params)
        deviation = jnp.abs(jnp.mean(state.actions) - params.expected_effort) / params.expected_effort
        started = state.extra["history_length"] > 0
        info.update(
            {
                "phase_loyalty": params.loyalty_cap,
                "expected_effort": params.expected_effort,
                "effort_deviation": jnp.where(started, deviation, 0.0),
                "validation_accuracy": jnp.where(started, jnp.maximum(0.0, 1.0 - deviation), 1.0),
            }
        )
        return info


class PublicGoods(CollectiveActionEnv):
    """The classic linear public-goods game: contributions are multiplied and shared equally.

    * **Mechanism:** TR-3 with linear production (β=1): ``Q = m·Σa``; with ``m/n < 1`` contributing nothing
      is dominant (a*_NE = 0) while full contribution is socially optimal (a_opt = e).
    * **Agents:** ``n_agents`` (default 5), e=``endowment`` (50), α=1/n.
    * **Actions:** contribution ``a_i ∈ [0, e]``.
    * **Observation:** global state 81 then ``[θ (n), history loyalty score (n)]`` (91 for n=5).
    * **Payoff (world):** ``ψ_i = e − a_i + m·Σa/n`` (= ``e + π_i^team`` with ω=m, β=1, c=1). No institution
      multipliers by default (``collective_multipliers=False``): they would change the game's equilibrium;
      set it to True for the reference's LoyaltyTeam rules on top.
    * **Motive (reward layer):** ``info["loyalty_modifier"]`` with φ_B=0.6, φ_C=0.2 (``Loyalty`` layer).
    * **Termination:** none; truncation at 100.
    * **Defaults:** m=2 (``multiplier``, stored as ``omega``), b=0.4e=20, D=0.55; TR-3 trust.
    * **Info:** TeamProduction's keys plus ``total_contribution = Σa``, ``public_good = m·Σa``,
      ``contribution_rate = Σa/(e·n)`` and ``social_efficiency = Σ(ψ + L)(a) / Σ(ψ + L)(e·1)`` (loyalty term
      included, as the reference: 0.65 at reset).
    """

    name = "PublicGoods"

    def make_params(self, n_agents: int = 5, multiplier: float = 2.0, endowment: float = 50.0) -> Any:
        return collective_action_params(
            n_agents, 100, multiplier, 1.0, 1.0, 0.6, 0.2, a_max=endowment, collective_multipliers=False
        )

    def team_payoffs(self, actions, params):
        return params.endowments + super().team_payoffs(actions, params)

    def extra_info(self, state, params) -> dict:
        info = super().extra_info(state, params)
        actions, loyalty = state.actions, state.extra["loyalty"]
        omega, beta, cost = params.omega, params.production_exponent, params.effort_cost

        def welfare(a):
            motive = loyalty_modifier(a, loyalty, omega, beta, cost, params.phi_b, params.phi_c)
            return jnp.sum(self.team_payoffs(a, params) + motive)

        full = welfare(params.endowments)
        total = jnp.sum(actions)
        info.update(
            {
                "total_contribution": total,
                "public_good": omega * total,
                "contribution_rate": total / jnp.sum(params.endowments),
                "social_efficiency": jnp.where(full > 0, welfare(actions) / jnp.where(full > 0, full, 1.0), 0.0),
            }
        )
        return info
