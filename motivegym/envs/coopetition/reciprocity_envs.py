"""TR-4 reciprocity envs: ReciprocalDilemma, GiftExchange, IndirectReciprocity, GraduatedSanction, AppleAppStore (spec §4.17–§4.22).

**World vs motive.** The world pays the TR-1 private payoff ``π_i`` (Eq. 11) under TR-2 trust, and keeps the
action history (a ring buffer of the last ``memory_window`` joint actions in ``state.extra``). From it the env
computes the TR-4 quantities of the step — memory averages, cooperation signals, the Eq. 44 pair terms and the
reciprocity modifier ``m_i`` — and reports them in info. Reciprocity (TR-4 Eq. 44) is the *agent's* conditional
response to its partners' cooperation, a motive, so it is applied by the reward layer
:class:`~motivegym.reward_layers.motives.Reciprocity` (``r_i = m_i·base_i``; with the ``integrated`` base this
is the reference's reward). The reference multiplies its reward by ``m_i`` inside the env (spec §2.1 step 8).

**Memory average.** The paper's Eq. 20 (default): the mean of the *previous* ``min(k, t−1)`` actions, excluding
the current one. ``memory_includes_current=True`` reproduces the reference (spec §1.10, §7.8): the window of
the same length is taken after appending the current action. Both give ``ā = 0`` on the first step.
"""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
import numpy as np

from motivegym.core.pytree import pytree_dataclass, static_field
from motivegym.envs.coopetition.base import CoopetitionEnv, CoopetitionParams, coopetition_params
from motivegym.envs.coopetition.interdependence import symmetric_interdependence
from motivegym.envs.coopetition.reciprocity import (
    cooperation_signals,
    memory_average,
    push_actions,
    recent_mean,
    reciprocity_effects,
    reciprocity_modifier,
)
from motivegym.envs.coopetition.trust import trust_params


@pytree_dataclass
class ReciprocityParams(CoopetitionParams):
    """TR-4 parameters (spec §1.10) on top of the shared coopetition params."""

    rho_0: Any = 1.0  # ρ₀ base reciprocity sensitivity
    eta: Any = 1.0  # η dependence exponent of ρ_ij = ρ₀ D_ij^η
    response_kappa: Any = 1.0  # κ of the bounded response tanh(κ s) (the trust κ is ``kappa``)
    lambda_r: Any = 1.0  # λ_R reciprocity weight
    reciprocity_omega: Any = 0.6  # ω interdependence amplification (1 + ω D_ij)
    memory_window: int = static_field(5)  # k
    memory_includes_current: bool = static_field(False)


#: the canonical TR-4 trust parameters (spec §4.0): λ⁺ .10, λ⁻ .30, μ_R .60, δ_R .03, ξ .50, κ 1, T₀ .50
TR4_TRUST = (0.10, 0.30, 0.60, 0.03, 0.50, 1.0, 0.50, 0.0)


def reciprocity_params(
    endowments: Any,
    baselines: Any,
    interdependence: Any,
    rho_0: float,
    eta: float,
    response_kappa: float,
    memory_window: int,
    lambda_r: float,
    reciprocity_omega: float,
    max_steps: int,
    initial_trust: float = 0.50,
    memory_includes_current: bool = False,
) -> Any:
    """A TR-4 configuration: log value θ=20, γ=0.65, α=1/n, canonical trust with the given T₀."""
    if int(memory_window) < 1:
        raise ValueError(f"memory_window must be >= 1, got {memory_window}")
    endowments = np.asarray(endowments, np.float32)
    n = endowments.shape[0]
    trust = TR4_TRUST[:6] + (initial_trust, 0.0)
    return coopetition_params(
        endowments=endowments,
        alpha=np.full(n, 1.0 / n),
        baselines=baselines,
        interdependence=interdependence,
        theta=20.0,
        gamma=0.65,
        trust=trust_params(*trust),
        max_steps=max_steps,
        params_class=ReciprocityParams,
        rho_0=rho_0,
        eta=eta,
        response_kappa=response_kappa,
        lambda_r=lambda_r,
        reciprocity_omega=reciprocity_omega,
        memory_window=int(memory_window),
        memory_includes_current=bool(memory_includes_current),
    )


class ReciprocityEnv(CoopetitionEnv):
    """Shared TR-4 pipeline: TR-1/TR-2 world plus the action memory and the Eq. 44 quantities in info."""

    name = "Reciprocity"

    def initial_extra(self, key, params) -> dict:
        n = params.endowments.shape[0]
        return {
            "action_history": jnp.zeros((params.memory_window, n), jnp.float32),
            "history_length": jnp.int32(0),
            "memory_averages": jnp.zeros((n,), jnp.float32),
            "cooperation_signals": jnp.zeros((n, n), jnp.float32),
            "reciprocity_effects": jnp.zeros((n, n), jnp.float32),
        }

    def world_step(self, key, state, actions, payoffs, trust, reputation, params):
        history, length = state.extra["action_history"], state.extra["history_length"]
        memory = memory_average(history, length, actions, params.memory_includes_current)
        signals = cooperation_signals(actions, memory)
        effects = reciprocity_effects(
            signals,
            trust,
            params.interdependence,
            params.lambda_r,
            params.reciprocity_omega,
            params.rho_0,
            params.eta,
            params.response_kappa,
        )
        history, length = push_actions(history, length, actions)
        extra = {
            "action_history": history,
            "history_length": length,
            "memory_averages": memory,
            "cooperation_signals": signals,
            "reciprocity_effects": effects,
        }
        return extra, payoffs

    def next_memory_average(self, state, params):
        """The paper-form memory average the next step's signals are measured against (observed)."""
        history, length = state.extra["action_history"], state.extra["history_length"]
        return recent_mean(history, length, jnp.minimum(history.shape[0], length))

    def extra_observation_bounds(self, params):
        """Memory averages: means of past actions, in ``[0, max e]``."""
        return 0.0, float(np.max(params.endowments))

    def extra_observation(self, state, params):
        return self.next_memory_average(state, params)

    def extra_info(self, state, params) -> dict:
        effects = state.extra["reciprocity_effects"]
        started = state.extra["history_length"] > 0
        return {
            "memory_averages": state.extra["memory_averages"],
            "cooperation_signals": state.extra["cooperation_signals"],
            "reciprocity_effects": effects,
            "reciprocity_utility": jnp.sum(effects, axis=1),
            "reciprocity_modifier": jnp.where(started, reciprocity_modifier(effects, params.endowments), 1.0),
            "tr4_memory_window": jnp.int32(params.memory_window),
        }


class ReciprocalDilemma(ReciprocityEnv):
    """Continuous prisoner's dilemma between two firms that reciprocate each other's changes in cooperation.

    * **Mechanism:** TR-1/TR-2 dyad plus TR-4 memory: a partner investing above its recent average is a
      positive signal, below it a negative one.
    * **Agents:** 2 symmetric firms, e=100.
    * **Actions:** ``a_i ∈ [0, 100]``.
    * **Observation:** global state 15 then the memory average for the next step (n) = 17.
    * **Payoff (world):** ``π_i`` (TR-1 Eq. 11) with θ=20, γ=0.65, α=1/n.
    * **Motive (reward layer):** ``Reciprocity(base)``: ``r_i = m_i·base_i``, ``m_i`` = ``info["reciprocity_modifier"]``
      (with ``memory_includes_current=True`` and the ``integrated`` base: the reference's reward).
    * **Termination:** none; truncation at ``max_steps``.
    * **Defaults:** b=30, D=0.5; TR-4 ρ₀=1, η=1, κ=1 (``response_kappa``), k=5 (``memory_window``), λ_R=1,
      ω=0.6 (``reciprocity_omega``); trust λ⁺=.10, λ⁻=.30, μ_R=.60, δ_R=.03, ξ=.5, κ=1, T₀=.5; 100 steps.
    * **Info:** ``memory_averages`` ā (n), ``cooperation_signals`` s_ij (n×n), ``reciprocity_effects`` (Eq. 44 pair
      terms, n×n), ``reciprocity_utility`` (row sums), ``reciprocity_modifier`` m (1 at reset), ``tr4_memory_window``.
    """

    name = "ReciprocalDilemma"

    def make_params(self) -> Any:
        return reciprocity_params([100.0, 100.0], [30.0, 30.0], symmetric_interdependence(2, 0.5), 1.0, 1.0, 1.0, 5, 1.0, 0.6, 100)


class GiftExchange(ReciprocityEnv):
    """Employer–worker gift exchange: a wage "gift" above the norm invites effort above the norm, and vice versa.

    * **Mechanism:** as ReciprocalDilemma with asymmetric dependence (the worker depends more on the employer).
    * **Agents:** 0 = employer (e=100), 1 = worker (e=80).
    * **Actions:** ``a_0 ∈ [0, 100]``, ``a_1 ∈ [0, 80]`` (per-agent bounds).
    * **Observation:** global state 15 + 2 = 17.
    * **Payoff (world):** ``π_i`` (TR-1 Eq. 11) with θ=20, γ=0.65, α=1/n.
    * **Motive (reward layer):** ``Reciprocity(base)``: ``r_i = m_i·base_i``, ``m_i`` = ``info["reciprocity_modifier"]``
      (with ``memory_includes_current=True`` and the ``integrated`` base: the reference's reward).
    * **Termination:** none; truncation at ``max_steps``.
    * **Defaults:** b=(30, 24), D=[[0, .4], [.7, 0]]; TR-4 ρ₀=1.2, η=1.5, κ=1, k=3, λ_R=1.2, ω=0.8
      (ρ₀₁=0.3036, ρ₁₀=0.7028); canonical TR-4 trust; 100 steps.
    * **Info:** ``memory_averages`` ā (n), ``cooperation_signals`` s_ij (n×n), ``reciprocity_effects`` (Eq. 44 pair
      terms, n×n), ``reciprocity_utility`` (row sums), ``reciprocity_modifier`` m (1 at reset), ``tr4_memory_window``.
    """

    name = "GiftExchange"
    agent_labels = ("employer", "worker")

    def make_params(self) -> Any:
        interdependence = np.array([[0.0, 0.4], [0.7, 0.0]], np.float32)
        return reciprocity_params([100.0, 80.0], [30.0, 24.0], interdependence, 1.2, 1.5, 1.0, 3, 1.2, 0.8, 100)


class IndirectReciprocity(ReciprocityEnv):
    """Four agents, each reciprocating the whole group: the Eq. 44 sum runs over every partner.

    * **Mechanism:** TR-4 with n=4; "indirect" reciprocity is only the sum over all partners (no image
      scores, as in the reference, spec §7.32).
    * **Agents:** 4 symmetric, e=100.
    * **Actions:** ``a_i ∈ [0, 100]``.
    * **Observation:** global state 53 + 4 = 57.
    * **Payoff (world):** ``π_i`` (TR-1 Eq. 11) with θ=20, γ=0.65, α=1/n.
    * **Motive (reward layer):** ``Reciprocity(base)``: ``r_i = m_i·base_i``, ``m_i`` = ``info["reciprocity_modifier"]``
      (with ``memory_includes_current=True`` and the ``integrated`` base: the reference's reward).
    * **Termination:** none; truncation at ``max_steps``.
    * **Defaults:** b=30, D=0.4; TR-4 ρ₀=0.8, η=1, κ=1, k=7, λ_R=1.5, ω=0.5 (ρ=0.32); canonical trust; 150 steps.
    * **Info:** ``memory_averages`` ā (n), ``cooperation_signals`` s_ij (n×n), ``reciprocity_effects`` (Eq. 44 pair
      terms, n×n), ``reciprocity_utility`` (row sums), ``reciprocity_modifier`` m (1 at reset), ``tr4_memory_window``.
    """

    name = "IndirectReciprocity"

    def make_params(self) -> Any:
        return reciprocity_params(np.full(4, 100.0), np.full(4, 30.0), symmetric_interdependence(4, 0.4), 0.8, 1.0, 1.0, 7, 1.5, 0.5, 150)


class GraduatedSanction(ReciprocityEnv):
    """Six agents whose response to partners' defection grows smoothly with its size (tanh response).

    * **Mechanism:** TR-4 with n=6; the "graduated" sanction is only the bounded tanh response within Eq. 44
      (no common pool or sanction escalation, as in the reference, spec §4.21, §7.32).
    * **Agents:** 6 symmetric, e=100.
    * **Actions:** ``a_i ∈ [0, 100]``.
    * **Observation:** global state 115 + 6 = 121.
    * **Payoff (world):** ``π_i`` (TR-1 Eq. 11) with θ=20, γ=0.65, α=1/n.
    * **Motive (reward layer):** ``Reciprocity(base)``: ``r_i = m_i·base_i``, ``m_i`` = ``info["reciprocity_modifier"]``
      (with ``memory_includes_current=True`` and the ``integrated`` base: the reference's reward).
    * **Termination:** none; truncation at ``max_steps``.
    * **Defaults:** b=40, D=0.35; TR-4 ρ₀=0.6, η=1.5, κ=0.8, k=10, λ_R=1.8, ω=1.0 (ρ=0.1242); canonical trust; 200 steps.
    * **Info:** ``memory_averages`` ā (n), ``cooperation_signals`` s_ij (n×n), ``reciprocity_effects`` (Eq. 44 pair
      terms, n×n), ``reciprocity_utility`` (row sums), ``reciprocity_modifier`` m (1 at reset), ``tr4_memory_window``.
    """

    name = "GraduatedSanction"

    def make_params(self) -> Any:
        return reciprocity_params(np.full(6, 100.0), np.full(6, 40.0), symmetric_interdependence(6, 0.35), 0.6, 1.5, 0.8, 10, 1.8, 1.0, 200)


#: quarter ranges of the five historical phases (documentation and validation only; spec §4.22, §6.4)
APPLE_PHASES = (("Symbiosis", 0, 16), ("Maturation", 16, 36), ("Tension", 36, 48), ("Crisis", 48, 54), ("Adjustment", 54, 66))


class AppleAppStore(ReciprocityEnv):
    """Apple iOS App Store ecosystem (TR-4 case study, 2008–2024, one step per quarter).

    * **Mechanism:** TR-4 with strongly asymmetric dependence: developers depend on Apple far more than
      Apple on them. The historical phases have no dynamics in the env (as in the reference); ``info["phase_index"]``
      labels the quarter (0 Symbiosis … 4 Adjustment) for analysis.
    * **Agents:** 0 = Apple (e=100), 1 = major developers (e=80), 2 = small developers (e=60).
    * **Actions:** ``a_i ∈ [0, e_i]``.
    * **Observation:** global state 31 + 3 = 34.
    * **Payoff (world):** ``π_i`` (TR-1 Eq. 11) with θ=20, γ=0.65, α=1/n.
    * **Motive (reward layer):** ``Reciprocity(base)``: ``r_i = m_i·base_i``, ``m_i`` = ``info["reciprocity_modifier"]``
      (with ``memory_includes_current=True`` and the ``integrated`` base: the reference's reward).
    * **Termination:** none; truncation at ``max_steps``.
    * **Defaults:** b=(30, 24, 18), D=[[0, .3, .2], [.8, 0, .15], [.85, .1, 0]]; TR-4 ρ₀=1, η=1.2, κ=0.8, k=4,
      λ_R=1, ω=0.8; trust as TR-4 with **T₀ = 0.60**; 66 steps.
    * **Info:** ``memory_averages`` ā (n), ``cooperation_signals`` s_ij (n×n), ``reciprocity_effects`` (Eq. 44 pair
      terms, n×n), ``reciprocity_utility`` (row sums), ``reciprocity_modifier`` m (1 at reset), ``tr4_memory_window``, ``phase_index``.
    """

    name = "AppleAppStore"
    agent_labels = ("Apple", "MajorDevelopers", "SmallDevelopers")

    def make_params(self) -> Any:
        interdependence = np.array([[0.0, 0.3, 0.2], [0.8, 0.0, 0.15], [0.85, 0.1, 0.0]], np.float32)
        return reciprocity_params(
            [100.0, 80.0, 60.0], [30.0, 24.0, 18.0], interdependence, 1.0, 1.2, 0.8, 4, 1.0, 0.8, 66, initial_trust=0.60
        )

    def extra_info(self, state, params) -> dict:
        info = super().extra_info(state, params)
        starts = jnp.array([start for _, start, _ in APPLE_PHASES[1:]], jnp.int32)
        quarter = jnp.maximum(state.t - 1, 0)  # the quarter of the last step (0-based)
        info["phase_index"] = jnp.sum(quarter >= starts).astype(jnp.int32)
        return info
