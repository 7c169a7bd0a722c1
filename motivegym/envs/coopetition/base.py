"""The shared Coopetition-Gym pipeline (spec §2.1, §3): params → state → reset → step → observe.

Every coopetition env is this pipeline plus a few hooks (extra state, world mechanics that change
payoffs, termination, extra observation/info blocks). The step order is:

1. clip each action to ``[0, e_i]`` (documented; NaN/inf are rejected by the adapters);
2. trust update (TR-2) from the pre-step trust state;
3. private payoff ``π`` (TR-1 Eq. 11), then the env's world mechanics (``world_step``);
4. ``t ← t + 1``; terminated / truncated (``t ≥ max_steps``);
5. observation and info built from the **post-step** state (no one-step lag, spec §7.15).
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any, ClassVar

import jax
import jax.numpy as jnp
import numpy as np

from motivegym.core.env import FunctionalEnv, Info
from motivegym.core.errors import check_names
from motivegym.core.params import override_params
from motivegym.core.pytree import pytree_dataclass, static_field
from motivegym.envs.coopetition.trust import (
    TRUST_FIELDS,
    TrustParams,
    effective_trust,
    initial_trust_state,
    off_diagonal_mean,
    trust_params,
    trust_update,
)
from motivegym.envs.coopetition.value import private_payoff, total_value

Array = jax.Array

OBSERVATION_PRESETS = ("full", "egocentric", "minimal")


@pytree_dataclass
class CoopetitionParams:
    """Parameters shared by all coopetition envs (spec §3.1). Arrays are float32."""

    endowments: Array  # e [n]
    alpha: Array  # bargaining shares α [n]
    baselines: Array  # expected actions b [n]
    interdependence: Array  # D [n, n], zero diagonal
    theta: Array  # log value scale θ
    beta: Array  # power value exponent β (power form only)
    gamma: Array  # complementarity γ
    trust: TrustParams
    max_steps: Array  # horizon (int32)
    value_form: str = static_field("log")
    trust_enabled: bool = static_field(True)
    observation: str = static_field("full")


@pytree_dataclass
class CoopetitionState:
    """State shared by all coopetition envs; ``extra`` holds env-specific arrays."""

    actions: Array  # last clipped actions [n] (baselines after reset)
    trust: Array  # T [n, n]
    reputation: Array  # R [n, n]
    t: Array  # steps taken (int32)
    extra: dict


def coopetition_params(
    endowments: Any,
    alpha: Any,
    baselines: Any,
    interdependence: Any,
    theta: float,
    gamma: float,
    trust: TrustParams,
    max_steps: int,
    beta: float = 0.75,
    params_class: type = CoopetitionParams,
    **extra: Any,
) -> Any:
    """Build a params dataclass with float32 arrays, checking shapes."""
    endowments = np.asarray(endowments, np.float32)
    n = endowments.shape[0]
    arrays = {
        "endowments": endowments,
        "alpha": np.asarray(alpha, np.float32),
        "baselines": np.asarray(baselines, np.float32),
        "interdependence": np.asarray(interdependence, np.float32),
    }
    for name, value in arrays.items():
        expected = (n, n) if name == "interdependence" else (n,)
        if value.shape != expected:
            raise ValueError(f"{name} must have shape {expected}, got {value.shape}")
    static = {f.name for f in dataclasses.fields(params_class) if f.metadata.get("static")}
    dynamic_extra = {k: jnp.asarray(v, jnp.float32) for k, v in extra.items() if k not in static}
    static_extra = {k: v for k, v in extra.items() if k in static}
    return params_class(
        **{k: jnp.asarray(v) for k, v in arrays.items()},
        theta=jnp.float32(theta),
        beta=jnp.float32(beta),
        gamma=jnp.float32(gamma),
        trust=trust,
        max_steps=jnp.int32(max_steps),
        **dynamic_extra,
        **static_extra,
    )


def apply_overrides(params: Any, overrides: dict[str, Any], where: str, extra_valid: tuple[str, ...] = ()) -> Any:
    """Return ``params`` with field overrides applied; unknown names raise ``ValueError``.

    Trust fields (``lambda_plus`` …) are addressed by their own names. Array overrides must keep
    their shape; static fields (``value_form``, ``observation`` …) are validated by the env.
    """
    valid = [f.name for f in dataclasses.fields(params) if f.name != "trust"] + list(TRUST_FIELDS) + list(extra_valid)
    check_names("keyword argument", overrides, valid, where)
    trust_changes = {k: v for k, v in overrides.items() if k in TRUST_FIELDS}
    if trust_changes:
        current = {k: float(getattr(params.trust, k)) for k in TRUST_FIELDS}
        params = dataclasses.replace(params, trust=trust_params(**{**current, **trust_changes}))
    params = override_params(params, {k: v for k, v in overrides.items() if k not in TRUST_FIELDS}, where)
    if params.value_form not in ("log", "power"):
        raise ValueError(f"{where}: value_form must be 'log' or 'power', got {params.value_form!r}")
    if params.observation not in OBSERVATION_PRESETS:
        raise ValueError(f"{where}: observation must be one of {OBSERVATION_PRESETS}, got {params.observation!r}")
    if int(params.max_steps) < 1:
        raise ValueError(f"{where}: max_steps must be >= 1, got {int(params.max_steps)}")
    return params


def others_index(n: int) -> np.ndarray:
    """``[n, n-1]`` indices of every agent's partners in index order."""
    return np.array([[j for j in range(n) if j != i] for i in range(n)], dtype=np.int32).reshape(n, n - 1)


class CoopetitionEnv(FunctionalEnv):
    """Base of the Coopetition-Gym family. Subclasses define ``make_params`` and optional hooks."""

    name: ClassVar[str] = "Coopetition"
    agent_labels: ClassVar[tuple[str, ...] | None] = None

    # ----- params -----
    def make_params(self, **structural: Any) -> Any:  # pragma: no cover - interface
        raise NotImplementedError

    def structural_arguments(self) -> tuple[str, ...]:
        """Constructor arguments of ``make_params`` (they change shapes or several fields at once)."""
        return tuple(inspect.signature(self.make_params).parameters)

    def default_params(self, **overrides: Any) -> Any:
        structural_names = self.structural_arguments()
        structural = {k: overrides.pop(k) for k in list(overrides) if k in structural_names}
        params = self.make_params(**structural)
        return apply_overrides(params, overrides, where=self.name, extra_valid=structural_names)

    def parameter_names(self) -> tuple[str, ...]:
        fields = [f.name for f in dataclasses.fields(self.make_params()) if f.name != "trust"]
        return tuple(fields) + TRUST_FIELDS + self.structural_arguments()

    def n_agents(self, params: Any) -> int:
        return int(params.endowments.shape[0])

    def action_bounds(self, params: Any) -> tuple[Array, Array]:
        return jnp.zeros_like(params.endowments), params.endowments

    def agent_names(self, params: Any) -> tuple[str, ...]:
        return self.agent_labels or super().agent_names(params)

    # ----- hooks -----
    def initial_extra(self, key: Array, params: Any) -> dict:
        """Env-specific state at reset."""
        return {}

    def synergy_gamma(self, state: CoopetitionState, params: Any) -> Array:
        """The complementarity γ in force (SynergySearch draws it per episode)."""
        return params.gamma

    def world_step(
        self, key: Array, state: CoopetitionState, actions: Array, payoffs: Array, trust: Array, reputation: Array, params: Any
    ) -> tuple[dict, Array]:
        """World mechanics beyond TR-1/TR-2: returns ``(new_extra, payoffs)``."""
        return state.extra, payoffs

    def terminated(self, state: CoopetitionState, params: Any) -> Array:
        return jnp.bool_(False)

    def extra_observation(self, state: CoopetitionState, params: Any) -> Array:
        """A block appended to the global state and to every agent's observation."""
        return jnp.zeros((0,), jnp.float32)

    def extra_observation_bounds(self, params: Any) -> tuple[float, float]:
        """``(low, high)`` of the extra block's entries: empty by default, unbounded for an env that adds a block
        without declaring its bounds."""
        declared = type(self).extra_observation is CoopetitionEnv.extra_observation
        return (0.0, 0.0) if declared else (-float("inf"), float("inf"))

    def observation_bounds(self, params: Any) -> tuple[float, float]:
        """One range that holds every entry: actions in ``[0, max e]``, trust and reputation damage in ``[0, 1]``,
        the ``D`` entries, ``t`` (raw in the global state) up to ``max_steps``, and the extra block's bounds."""
        d = np.asarray(params.interdependence, np.float64)
        extra_low, extra_high = self.extra_observation_bounds(params)
        low = min(0.0, float(d.min(initial=0.0)), extra_low)
        high = max(1.0, float(np.max(params.endowments)), float(params.max_steps), float(d.max(initial=0.0)), extra_high)
        return low, high

    def extra_info(self, state: CoopetitionState, params: Any) -> Info:
        return {}

    # ----- pipeline -----
    def reset(self, key: Array, params: Any) -> tuple[CoopetitionState, Array]:
        n = self.n_agents(params)
        if params.trust_enabled:
            trust, reputation = initial_trust_state(n, params.trust)
        else:
            trust, reputation = jnp.ones((n, n), jnp.float32), jnp.zeros((n, n), jnp.float32)
        state = CoopetitionState(
            actions=params.baselines,
            trust=trust,
            reputation=reputation,
            t=jnp.int32(0),
            extra=self.initial_extra(key, params),
        )
        return state, self.observe(state, params)

    def step(self, key: Array, state: CoopetitionState, actions: Array, params: Any):
        actions = jnp.clip(jnp.asarray(actions, jnp.float32).reshape(params.endowments.shape), 0.0, params.endowments)
        if params.trust_enabled:
            trust, reputation = trust_update(
                state.trust, state.reputation, actions, params.baselines, params.interdependence, params.trust
            )
        else:
            trust, reputation = state.trust, state.reputation
        gamma = self.synergy_gamma(state, params)
        payoffs = private_payoff(
            actions, params.endowments, params.alpha, params.theta, params.beta, gamma, params.value_form
        )
        extra, payoffs = self.world_step(key, state, actions, payoffs, trust, reputation, params)
        new_state = CoopetitionState(actions=actions, trust=trust, reputation=reputation, t=state.t + 1, extra=extra)
        terminated = jnp.asarray(self.terminated(new_state, params), bool)
        truncated = new_state.t >= params.max_steps
        info = self.describe(new_state, params)
        info["interdependence_weights"] = self.interdependence_weights(new_state, params)
        info["terminated"] = terminated
        info["truncated"] = truncated
        return new_state, self.observe(new_state, params), payoffs, terminated | truncated, info

    def interdependence_weights(self, state: CoopetitionState, params: Any) -> Array:
        """``W = D ⊙ min(T, 1 − R)`` with trust, else ``D`` (TR-2 Eq. 13; zero diagonal)."""
        if not params.trust_enabled:
            return params.interdependence
        return params.interdependence * effective_trust(state.trust, state.reputation)

    def describe(self, state: CoopetitionState, params: Any) -> Info:
        """Info of a state (spec §3.2 base keys plus the env's extras)."""
        gamma = self.synergy_gamma(state, params)
        info = {
            "step": state.t,
            "actions": state.actions,
            "mean_trust": off_diagonal_mean(state.trust, 1.0),
            "mean_reputation_damage": off_diagonal_mean(state.reputation, 0.0),
            "total_value": total_value(state.actions, params.theta, params.beta, gamma, params.value_form),
            "mean_cooperation": jnp.mean(state.actions),
            "cooperation_rate": jnp.mean(state.actions / params.endowments),
        }
        info.update(self.extra_info(state, params))
        return info

    def global_state(self, state: CoopetitionState, params: Any) -> Array:
        """Legacy full layout (spec §3.2): ``[a, T, R, D, t]`` (raw t) plus the env's extra block."""
        return jnp.concatenate(
            [
                state.actions,
                state.trust.ravel(),
                state.reputation.ravel(),
                params.interdependence.ravel(),
                state.t.astype(jnp.float32)[None],
                self.extra_observation(state, params),
            ]
        )

    def observe(self, state: CoopetitionState, params: Any) -> Array:
        """Per-agent observations ``[n, d]`` for a preset of spec §5.2 (``params.observation``).

        * ``full``: own action, partners' actions, ``T`` (n²), own damage row ``R[i,:]``, partners'
          public reputation damage (column mean of ``R``, spec §7.21 fixed), own ``D`` row, ``t/max_steps``.
        * ``egocentric``: as ``full`` with only the own trust row ``T[i,:]`` instead of ``T`` (5n).
        * ``minimal``: own action and own trust row (1 + n).

        The env's extra block (reputations, agreements, …) is appended in every preset.
        """
        n = self.n_agents(params)
        others = others_index(n)
        own = state.actions[:, None]
        extra = jnp.broadcast_to(self.extra_observation(state, params), (n, self.extra_observation(state, params).shape[0]))
        if params.observation == "minimal":
            return jnp.concatenate([own, state.trust, extra], axis=1)
        column_damage = jnp.sum(state.reputation, axis=0) / max(n - 1, 1)
        trust_block = jnp.broadcast_to(state.trust.ravel(), (n, n * n)) if params.observation == "full" else state.trust
        progress = jnp.broadcast_to(state.t.astype(jnp.float32) / params.max_steps, (n, 1))
        return jnp.concatenate(
            [own, state.actions[others], trust_block, state.reputation, column_damage[others], params.interdependence, progress, extra],
            axis=1,
        )

    def render_text(self, state: CoopetitionState, params: Any) -> str:
        names = self.agent_names(params)
        actions = np.asarray(state.actions)
        endowments = np.asarray(params.endowments)
        lines = [f"{self.name}  step {int(state.t)}/{int(params.max_steps)}  n={len(names)}"]
        for i, name in enumerate(names):
            lines.append(f"  {name:>12}: action {actions[i]:8.3f} / {endowments[i]:.0f}")
        lines.append(f"  cooperation rate {100 * float(np.mean(actions / endowments)):.1f}%")
        lines.append("  trust matrix:\n" + np.array2string(np.round(np.asarray(state.trust), 3), prefix="    "))
        lines.append(f"  mean trust {float(off_diagonal_mean(state.trust, 1.0)):.3f}")
        return "\n".join(lines)
