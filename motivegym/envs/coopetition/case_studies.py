"""TR-1/TR-2 case studies: SLCD-v0 (Samsung–Sony) and RenaultNissan-v0 (spec §4.7, §4.8)."""

from __future__ import annotations

from typing import Any

from motivegym.envs.coopetition.base import CoopetitionEnv, coopetition_params
from motivegym.envs.coopetition.interdependence import asymmetric_interdependence
from motivegym.envs.coopetition.trust import trust_params


class SLCD(CoopetitionEnv):
    """Samsung–Sony S-LCD joint venture (TR-1 case study, 2004–2011).

    * **Mechanism:** TR-1 value creation with asymmetric dependence (Sony depends more on Samsung).
    * **Agents:** 0 = Samsung (α=.55), 1 = Sony (α=.45), e=100 each.
    * **Actions:** ``a_i ∈ [0, 100]``.
    * **Observation:** global state 15; per-agent presets.
    * **Payoff:** ``π_i`` with θ=20, γ=0.65.
    * **Termination:** none; truncation at 100.
    * **Defaults:** b=(30,30), D=[[0,.64],[.86,0]]; trust λ⁺=.08, λ⁻=.28, μ_R=.5, δ_R=.02, ξ=.45,
      κ=1, T₀=.65. ``trust_enabled=False`` keeps T=1, R=0 and uses the unweighted D.
    """

    name = "SLCD"
    agent_labels = ("Samsung", "Sony")

    def make_params(self, trust_enabled: bool = True) -> Any:
        return coopetition_params(
            endowments=[100.0, 100.0],
            alpha=[0.55, 0.45],
            baselines=[30.0, 30.0],
            interdependence=asymmetric_interdependence(0.64, 0.86),
            theta=20.0,
            gamma=0.65,
            trust=trust_params(0.08, 0.28, 0.50, 0.02, 0.45, 1.0, 0.65, 0.0),
            max_steps=100,
            trust_enabled=bool(trust_enabled),
        )

    def extra_info(self, state, params) -> dict:
        return {"samsung_investment": state.actions[0], "sony_investment": state.actions[1]}


#: phase → (D[Nissan→Renault], D[Renault→Nissan], T₀, R₀, period)   (spec §1.6, §4.8)
RENAULT_NISSAN_PHASES = {
    "formation": (0.78, 0.66, 0.45, 0.05, "1999-2002"),
    "mature": (0.51, 0.66, 0.70, 0.02, "2002-2018"),
    "crisis": (0.35, 0.72, 0.30, 0.45, "2018-2020"),
    "strained": (0.28, 0.65, 0.40, 0.35, "2020-2025"),
}


class RenaultNissan(CoopetitionEnv):
    """Renault–Nissan alliance (TR-2 case study) in one of four historical phases.

    * **Mechanism:** TR-2 trust dynamics under phase-specific dependence and initial trust/damage;
      the phase is fixed for the episode.
    * **Agents:** 0 = Nissan (e=90, α=.48), 1 = Renault (e=100, α=.52).
    * **Actions:** ``a_0 ∈ [0, 90]``, ``a_1 ∈ [0, 100]``.
    * **Observation:** global state 15; per-agent presets.
    * **Payoff:** ``π_i`` with θ=22, γ=0.58.
    * **Termination:** none; truncation at 100.
    * **Defaults:** ``phase="mature"`` (formation / mature / crisis / strained); b=(27,30);
      trust λ⁺=.08, λ⁻=.25, μ_R=.55, δ_R=.02, ξ=.5, κ=1, (T₀, R₀) from the phase.
    """

    name = "RenaultNissan"
    agent_labels = ("Nissan", "Renault")

    def make_params(self, phase: str = "mature") -> Any:
        key = str(phase).lower()
        if key not in RENAULT_NISSAN_PHASES:
            raise ValueError(f"unknown phase {phase!r}; valid phases: {', '.join(RENAULT_NISSAN_PHASES)}")
        d_nissan, d_renault, t0, r0, _ = RENAULT_NISSAN_PHASES[key]
        return coopetition_params(
            endowments=[90.0, 100.0],
            alpha=[0.48, 0.52],
            baselines=[27.0, 30.0],
            interdependence=asymmetric_interdependence(d_nissan, d_renault),
            theta=22.0,
            gamma=0.58,
            trust=trust_params(0.08, 0.25, 0.55, 0.02, 0.50, 1.0, t0, r0),
            max_steps=100,
        )

    def static_info(self, params) -> dict:
        for phase, (d01, d10, *_rest, period) in RENAULT_NISSAN_PHASES.items():
            if abs(float(params.interdependence[0, 1]) - d01) < 1e-6 and abs(float(params.interdependence[1, 0]) - d10) < 1e-6:
                return {"phase": phase, "period": period}
        return {"phase": "custom", "period": ""}
