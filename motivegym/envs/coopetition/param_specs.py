"""Types and valid ranges of the Coopetition-Gym parameters (checked by ``motivegym.core.params``).

Ranges follow the model (spec §1): the value function needs ``θ > 0``, ``0 < β ≤ 1``, ``0 ≤ γ ≤ 1`` and the
trust dynamics ``λ⁺, λ⁻ ∈ (0, 1]``, ``μ_R, δ_R, T₀, R₀ ∈ [0, 1]``, ``ξ ≥ 0``, ``κ > 0`` (the reference raises
for the same values); dependencies ``D_ij ∈ [0, 1]`` with a zero diagonal (TR-1 Eq. 1); bargaining shares
``α_i ∈ [0, 1]`` summing to 1 (the reference renormalises other sums); expected actions ``0 ≤ b_i ≤ e_i``
(actions are clipped to ``[0, e_i]``); rates, thresholds and loyalty are fractions in ``[0, 1]``, penalties
multipliers in ``(0, 1]``, bonuses non-negative. Keys are env class names, merged along the class's MRO.
"""

from __future__ import annotations

import numpy as np

from motivegym.core.params import ParamRule, ParamSpec, choice, flag, integer, real, real_array
from motivegym.envs.coopetition.base import OBSERVATION_PRESETS

#: the most agents a family-size argument accepts: observations and the trust/dependency state are n × n
MAX_AGENTS = 1024

FRACTION = real(0.0, 1.0)
RATE = real(0.0, 1.0, low_open=True)  # a rate or a penalty multiplier in (0, 1]
POSITIVE = real(0.0, low_open=True)
NON_NEGATIVE = real(0.0)
AGENTS = integer(2, MAX_AGENTS, note="observations grow as n²")


def zero_diagonal(matrix: np.ndarray) -> bool:
    return bool(np.all(np.diagonal(matrix) == 0))


COOPETITION: dict[str, ParamSpec] = {
    "endowments": real_array(("n",), 0.0, low_open=True, note="actions are clipped to [0, e_i]"),
    "alpha": real_array(("n",), 0.0, 1.0, note="bargaining shares, summing to 1"),
    "baselines": real_array(("n",), 0.0, note="expected actions, at most the endowments"),
    "interdependence": real_array(("n", "n"), 0.0, 1.0, check=zero_diagonal, requirement="a zero diagonal"),
    "theta": POSITIVE,
    "beta": real(0.0, 1.0, low_open=True),
    "gamma": FRACTION,
    "max_steps": integer(1),
    "value_form": choice("log", "power"),
    "trust_enabled": flag(),
    "observation": choice(*OBSERVATION_PRESETS),
    "lambda_plus": RATE,
    "lambda_minus": RATE,
    "mu_r": FRACTION,
    "delta_r": FRACTION,
    "xi": NON_NEGATIVE,
    "kappa": POSITIVE,
    "initial_trust": FRACTION,
    "initial_reputation": FRACTION,
}

COLLECTIVE_ACTION: dict[str, ParamSpec] = {
    "omega": POSITIVE,
    "production_exponent": real(0.0, 1.0, low_open=True),
    "effort_cost": POSITIVE,
    "phi_b": FRACTION,
    "phi_c": FRACTION,
    "initial_loyalty": FRACTION,
    "loyalty_cap": FRACTION,
    "free_rider_threshold": FRACTION,
    "free_rider_penalty": RATE,
    "loyalty_threshold": FRACTION,
    "loyalty_bonus_rate": NON_NEGATIVE,
    "coordination_threshold": FRACTION,
    "coordination_bonus": NON_NEGATIVE,
    "shirking_threshold": FRACTION,
    "shirking_penalty": RATE,
    "loyalty_horizon": integer(1),
    "collective_multipliers": flag(),
}

TEAM_CONSTRUCTOR: dict[str, ParamSpec] = {
    "n_agents": AGENTS,
    "omega": POSITIVE,
    "beta": real(0.0, 1.0, low_open=True, note="the production exponent, not the value-function β"),
    "c": real(0.0, low_open=True, note="the effort cost"),
}

RECIPROCITY: dict[str, ParamSpec] = {
    "rho_0": NON_NEGATIVE,
    "eta": NON_NEGATIVE,
    "response_kappa": POSITIVE,
    "lambda_r": NON_NEGATIVE,
    "reciprocity_omega": NON_NEGATIVE,
    "memory_window": integer(1),
    "memory_includes_current": flag(),
}

PARAM_SPECS: dict[str, dict[str, ParamSpec]] = {
    "CoopetitionEnv": COOPETITION,
    "RecoveryRace": {"recovery_target": real(0.0, 1.0, low_open=True)},
    "SynergySearch": {"gamma_low": FRACTION, "gamma_high": FRACTION, "reveal_gamma": flag()},
    "CooperativeNegotiation": {"agreement_threshold": NON_NEGATIVE, "breach_penalty": NON_NEGATIVE},
    "ReputationMarket": {"reputation_visibility": FRACTION, "tier_enabled": flag()},
    "CollectiveActionEnv": COLLECTIVE_ACTION,
    "CoalitionFormation": {
        "min_coalition_size": integer(1),
        "exit_threshold": FRACTION,
        "reentry_cooldown": integer(0),
        "readmission_threshold": FRACTION,
        "exclusion_penalty": RATE,
        "membership_bonus": real(1.0),
    },
    "ApacheProject": {
        "expected_effort": POSITIVE,
        "phase": choice("emergence", "growth", "maturity", "evolution", ignore_case=True),
    },
    "ReciprocityEnv": RECIPROCITY,
}

#: constructor arguments (``make_params``) that are not fields, or mean something else than the field of that name
KEYWORD_SPECS: dict[str, dict[str, ParamSpec]] = {
    "PartnerHoldUp": {"strong_dependency": FRACTION, "weak_dependency": FRACTION},
    "PlatformEcosystem": {
        "n_developers": integer(1, MAX_AGENTS - 1),
        "platform_share": real(0.0, 1.0, low_open=True, high_open=True),
        "platform_dependency": FRACTION,
        "developer_dependency": FRACTION,
    },
    "DynamicPartnerSelection": {"n_agents": AGENTS},
    "RenaultNissan": {"phase": choice("formation", "mature", "crisis", "strained", ignore_case=True)},
    "ReputationMarket": {"n_agents": AGENTS},
    "TeamProduction": TEAM_CONSTRUCTOR,
    "LoyaltyTeam": {**TEAM_CONSTRUCTOR, "phi_B": FRACTION, "phi_C": FRACTION},
    "CoalitionFormation": {"n_agents": AGENTS, "omega": POSITIVE, "beta": TEAM_CONSTRUCTOR["beta"]},
    "PublicGoods": {"n_agents": AGENTS, "multiplier": POSITIVE, "endowment": POSITIVE},
}

PARAM_RULES: dict[str, tuple[ParamRule, ...]] = {
    "CoopetitionEnv": (
        ParamRule(
            ("alpha",), lambda p: abs(float(np.sum(p["alpha"])) - 1.0) <= 1e-3, "the shares alpha must sum to 1 (within 1e-3)"
        ),
        ParamRule(
            ("baselines", "endowments"),
            lambda p: bool(np.all(p["baselines"] <= p["endowments"])),
            "each baseline must be at most its endowment (actions are clipped to [0, e_i])",
        ),
    ),
    "RecoveryRace": (
        ParamRule(
            ("recovery_target", "initial_trust"),
            lambda p: float(p["recovery_target"]) > float(p["initial_trust"]),
            "recovery_target must exceed initial_trust (trust has to recover)",
        ),
    ),
    "SynergySearch": (
        ParamRule(
            ("gamma_low", "gamma_high"),
            lambda p: float(p["gamma_low"]) <= float(p["gamma_high"]),
            "gamma_low must be at most gamma_high",
        ),
    ),
    "CollectiveActionEnv": (
        ParamRule(
            ("initial_loyalty", "loyalty_cap"),
            lambda p: float(p["initial_loyalty"]) <= float(p["loyalty_cap"]),
            "initial_loyalty must be at most loyalty_cap",
        ),
    ),
    "CoalitionFormation": (
        ParamRule(
            ("min_coalition_size", "n_agents"),
            lambda p: float(p["min_coalition_size"]) <= int(p["n_agents"]),
            "min_coalition_size must be at most n_agents",
        ),
    ),
}
