"""N-player linear public goods game with optional peer punishment (Fehr & Gächter 2000)."""

from __future__ import annotations

from typing import Any, ClassVar

import jax
import jax.numpy as jnp
import numpy as np

from motivegym.core.env import FunctionalEnv, Info
from motivegym.core.params import override_params
from motivegym.core.pytree import pytree_dataclass, static_field
from motivegym.core.thresholds import below
from motivegym.envs.matrix.base import interdependence_matrix, resolve_rounds

Array = jax.Array


@pytree_dataclass
class PublicGoodsParams:
    endowment: Array  # e
    multiplier: Array  # r (MPCR = r / n)
    punish_cost: Array  # cost to the punisher per punished agent
    punish_fine: Array  # payoff removed from a punished agent per punisher
    interdependence: Array  # W [n, n] for the integrated layer
    max_steps: Array  # horizon in env steps (int32); a round is 2 steps with punishment, 1 without
    n_agents: int = static_field(4)
    contribution_levels: int = static_field(5)
    punishment: bool = static_field(True)


@pytree_dataclass
class PublicGoodsState:
    contributions: Array  # [n] fraction of the endowment contributed in the current/last round
    punished: Array  # [n] number of punishers each agent faced in the last punishment stage
    phase: Array  # int32: 0 = contribute, 1 = punish
    round: Array  # int32 rounds completed
    t: Array  # int32 steps taken


def steps_per_round(punishment: bool) -> int:
    """Env steps per round: contribute, then punish (with ``punishment``)."""
    return 2 if punishment else 1


def contribution_payoffs(fractions: Array, endowment: Array, multiplier: Array) -> Array:
    """``π_i = e − c_i + (r/n) Σ_j c_j`` with ``c = fractions · e`` (linear public goods)."""
    contributions = fractions * endowment
    return endowment - contributions + multiplier * jnp.mean(contributions)


def free_riders(fractions: Array) -> Array:
    """``F[p, j] = 1`` when ``j ≠ p`` contributed less than the group mean (whom punisher p targets)."""
    under = below(fractions, jnp.mean(fractions))
    n = fractions.shape[0]
    return under[None, :] & ~jnp.eye(n, dtype=bool)


def punishment_payoffs(punish: Array, fractions: Array, cost: Array, fine: Array) -> tuple[Array, Array]:
    """Punisher ``p`` (``punish[p]``) pays ``cost`` per free rider; each free rider loses ``fine`` per punisher.

    Returns ``(payoffs [n], punishers faced [n])``.
    """
    targets = free_riders(fractions) & punish[:, None]
    faced = jnp.sum(targets, axis=0)
    payoffs = -cost * jnp.sum(targets, axis=1) - fine * faced
    return payoffs.astype(jnp.float32), faced.astype(jnp.int32)


class PublicGoodsPunishment(FunctionalEnv):
    """Repeated N-player public goods game with an optional peer-punishment stage (Fehr & Gächter 2000).

    * **Mechanism:** each round every agent contributes a share of its endowment to a pot that is
      multiplied by ``r < n`` and split equally (free riding dominates, full contribution is
      efficient); with ``punishment=True`` a second step follows in which each agent may punish every
      partner who contributed below the group mean, at a cost to itself.
    * **Agents:** ``n_agents`` symmetric players (default 4).
    * **Actions:** ``Discrete(contribution_levels)`` (default 5). Contribution step: level ``k`` gives
      ``c_i = k/(K−1) · e``. Punishment step: ``0`` = do not punish, any ``k > 0`` = punish all free
      riders. Out-of-range indices are clipped.
    * **Observation:** per agent ``[phase, own contribution, all contributions (n), mean contribution,
      punishers faced (n, /n), rounds completed · steps per round / max_steps]`` (contributions as fractions
      of e). Global state: agent 0's row.
    * **Payoff:** contribution step ``π_i = e − c_i + (r/n) Σ_j c_j``; punishment step
      ``π_i = −cost · #targets_i − fine · #punishers_i``.
    * **Termination:** none; truncation after ``max_steps`` env steps (a round is 2 steps with punishment, 1
      without; an odd ``max_steps`` with punishment ends after a contribution step). ``rounds=k`` is the
      documented alias ``max_steps = k · steps per round`` (``rounds=1`` is one-shot); giving both with
      different horizons raises ``ValueError``.
    * **Defaults:** n=4, e=20, r=1.6 (MPCR 0.4), K=5, punishment on, cost=1, fine=3, 10 rounds
      (``max_steps=20``; 10 without punishment),
      ``partner_weight=0.5`` (``W = 0.5(1−I)/(n−1)``).
    """

    name: ClassVar[str] = "PublicGoodsPunishment"
    action_kind: ClassVar[str] = "discrete"
    structural = ("n_agents", "contribution_levels", "punishment")

    def default_params(self, **overrides: Any) -> PublicGoodsParams:
        structural = {k: overrides.pop(k) for k in self.structural if k in overrides}
        punishment = bool(structural.get("punishment", True))
        overrides = resolve_rounds(overrides, f"{self.name}-v0", steps_per_round(punishment))
        weight = float(overrides.pop("partner_weight", 0.5))
        n = int(structural.get("n_agents", 4))
        levels = int(structural.get("contribution_levels", 5))
        if n < 2 or levels < 2:
            raise ValueError(f"{self.name}-v0: need n_agents >= 2 and contribution_levels >= 2, got {n}, {levels}")
        params = PublicGoodsParams(
            endowment=jnp.float32(20.0),
            multiplier=jnp.float32(1.6),
            punish_cost=jnp.float32(1.0),
            punish_fine=jnp.float32(3.0),
            interdependence=jnp.asarray(interdependence_matrix(n, weight)),
            max_steps=jnp.int32(10 * steps_per_round(punishment)),
            n_agents=n,
            contribution_levels=levels,
            punishment=punishment,
        )
        params = override_params(params, overrides, f"{self.name}-v0", ("partner_weight", *self.structural))
        if int(params.max_steps) < 1:
            raise ValueError(f"{self.name}-v0: max_steps must be >= 1, got {int(params.max_steps)}")
        return params

    def parameter_names(self) -> tuple[str, ...]:
        return ("endowment", "multiplier", "punish_cost", "punish_fine", "interdependence", "max_steps", "rounds", "partner_weight", *self.structural)

    def n_agents(self, params: Any) -> int:
        return params.n_agents

    def num_actions(self, params: Any) -> int:
        return params.contribution_levels

    def reset(self, key: Array, params: PublicGoodsParams):
        n = params.n_agents
        state = PublicGoodsState(
            contributions=jnp.zeros(n, jnp.float32),
            punished=jnp.zeros(n, jnp.int32),
            phase=jnp.int32(0),
            round=jnp.int32(0),
            t=jnp.int32(0),
        )
        return state, self.observe(state, params)

    def step(self, key: Array, state: PublicGoodsState, actions: Array, params: PublicGoodsParams):
        levels = jnp.clip(jnp.asarray(actions, jnp.int32), 0, params.contribution_levels - 1)
        contributing = state.phase == 0
        fractions = jnp.where(contributing, levels / (params.contribution_levels - 1), state.contributions)
        stage1 = contribution_payoffs(fractions, params.endowment, params.multiplier)
        stage2, faced = punishment_payoffs(levels > 0, state.contributions, params.punish_cost, params.punish_fine)
        payoffs = jnp.where(contributing, stage1, stage2)
        round_over = jnp.logical_or(not params.punishment, ~contributing)
        new_state = PublicGoodsState(
            contributions=fractions.astype(jnp.float32),
            punished=jnp.where(contributing, jnp.zeros_like(faced), faced),
            phase=jnp.where(round_over, 0, 1).astype(jnp.int32),
            round=state.round + round_over.astype(jnp.int32),
            t=state.t + 1,
        )
        truncated = new_state.t >= params.max_steps
        info = self.describe(new_state, params)
        info.update(interdependence_weights=params.interdependence, terminated=jnp.bool_(False), truncated=truncated)
        return new_state, self.observe(new_state, params), payoffs.astype(jnp.float32), truncated, info

    def observation_bounds(self, params: Any) -> tuple[float, float]:
        """Every observation and global-state entry lies in ``[0.0, 1.0]``: phase flag, contributed fractions, punishers / n and completed rounds' steps / ``max_steps``."""
        return 0.0, 1.0

    def observe(self, state: PublicGoodsState, params: PublicGoodsParams) -> Array:
        n = params.n_agents
        shared = jnp.concatenate(
            [
                state.contributions,
                jnp.mean(state.contributions)[None],
                state.punished.astype(jnp.float32) / n,
                (state.round.astype(jnp.float32) * steps_per_round(params.punishment) / params.max_steps)[None],
            ]
        )
        phase = jnp.broadcast_to(state.phase.astype(jnp.float32), (n, 1))
        return jnp.concatenate([phase, state.contributions[:, None], jnp.broadcast_to(shared, (n, shared.shape[0]))], axis=1)

    def global_state(self, state: PublicGoodsState, params: PublicGoodsParams) -> Array:
        return self.observe(state, params)[0]

    def describe(self, state: PublicGoodsState, params: PublicGoodsParams) -> Info:
        return {
            "step": state.t,
            "round": state.round,
            "phase": state.phase,
            "contributions": state.contributions,
            "cooperation_rate": jnp.mean(state.contributions),  # mean contributed fraction of e
            "punishers_faced": state.punished,
        }

    def render_text(self, state: PublicGoodsState, params: PublicGoodsParams) -> str:
        phase = "contribute" if int(state.phase) == 0 else "punish"
        shares = np.round(np.asarray(state.contributions), 2).tolist()
        return f"{self.name} round {int(state.round)}/{-(-int(params.max_steps) // steps_per_round(params.punishment))} next: {phase}  contributions {shares}"
