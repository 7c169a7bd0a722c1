"""Repeated two-player matrix games with closed-form payoffs (IPD, Stag Hunt, Chicken).

A game is a payoff table ``P[a_0, a_1] = (π_0, π_1)`` played for ``max_steps`` rounds, one env step each
(``max_steps=1`` is the one-shot game). Each agent observes the previous joint action (memory-1, the standard
setting of Axelrod tournaments and LOLA/M-FOS experiments) and the round index.

**Horizon.** ``max_steps`` (env steps) is the horizon of every motivegym env. The matrix games also accept
``rounds`` as a documented alias (:func:`resolve_rounds`): ``rounds=k`` sets ``max_steps`` to ``k`` rounds' steps,
and giving both with different horizons raises ``ValueError`` rather than letting one silently win.
"""

from __future__ import annotations

from typing import Any, ClassVar

import jax
import jax.numpy as jnp
import numpy as np

from motivegym.core.env import FunctionalEnv, Info
from motivegym.core.params import is_traced, override_params
from motivegym.core.pytree import pytree_dataclass

Array = jax.Array


@pytree_dataclass
class MatrixGameParams:
    payoff_table: Array  # [k, k, 2]: payoffs of (row, column) player for joint action (a_0, a_1)
    interdependence: Array  # W [2, 2], zero diagonal: the other-regarding weight of the integrated layer
    max_steps: Array  # horizon in env steps = rounds (int32)


@pytree_dataclass
class MatrixGameState:
    last_actions: Array  # [2] int32, -1 before the first round
    t: Array  # rounds played (int32)
    totals: Array  # [2] cumulative payoffs


def resolve_rounds(overrides: dict[str, Any], where: str, steps_per_round: int = 1) -> dict[str, Any]:
    """``overrides`` with the ``rounds`` alias turned into ``max_steps = rounds · steps_per_round``.

    ``max_steps`` counts env steps (what PettingZoo's ``max_cycles`` and Gymnasium's ``TimeLimit`` count).
    Giving both names with different horizons (or a traced value for either) raises ``ValueError``.
    """
    if "rounds" not in overrides:
        return dict(overrides)
    resolved = {k: v for k, v in overrides.items() if k != "rounds"}
    rounds = overrides["rounds"]
    steps = rounds if is_traced(rounds) else int(rounds) * steps_per_round
    if "max_steps" in overrides:
        given = overrides["max_steps"]
        if is_traced(rounds) or is_traced(given) or int(given) != steps:
            relation = "rounds" if steps_per_round == 1 else f"{steps_per_round} · rounds"
            raise ValueError(
                f"{where}: rounds={rounds} conflicts with max_steps={given}: give one horizon (max_steps counts env "
                f"steps; rounds is its alias, max_steps = {relation})"
            )
    resolved["max_steps"] = steps
    return resolved


def interdependence_matrix(n: int, weight: float) -> np.ndarray:
    """``W = weight · (1 − I) / (n − 1)``: the partners' payoffs together weigh ``weight``."""
    return (weight * (1.0 - np.eye(n)) / max(n - 1, 1)).astype(np.float32)


def symmetric_table(reward: float, sucker: float, temptation: float, punishment: float) -> np.ndarray:
    """The symmetric 2x2 table with action 0 = cooperate, 1 = defect::

        P[C,C] = (R, R)   P[C,D] = (S, T)
        P[D,C] = (T, S)   P[D,D] = (P, P)
    """
    return np.array(
        [[[reward, reward], [sucker, temptation]], [[temptation, sucker], [punishment, punishment]]], np.float32
    )


def joint_action_payoffs(table: Array, actions: Array) -> Array:
    """``(π_0, π_1) = P[a_0, a_1]``."""
    return table[actions[0], actions[1]]


class MatrixGame(FunctionalEnv):
    """Base of the 2x2 games; subclasses set :attr:`default_table`, :attr:`action_names`, :attr:`default_rounds`."""

    action_kind: ClassVar[str] = "discrete"
    default_table: ClassVar[np.ndarray]
    action_names: ClassVar[tuple[str, ...]] = ("cooperate", "defect")
    default_rounds: ClassVar[int] = 50

    def default_params(self, **overrides: Any) -> MatrixGameParams:
        overrides = resolve_rounds(overrides, f"{self.name}-v0")
        weight = overrides.pop("partner_weight", 0.5)
        params = MatrixGameParams(
            payoff_table=jnp.asarray(self.default_table),
            interdependence=jnp.asarray(interdependence_matrix(2, float(weight))),
            max_steps=jnp.int32(self.default_rounds),
        )
        params = override_params(params, overrides, f"{self.name}-v0", ("rounds", "partner_weight"))
        if int(params.max_steps) < 1:
            raise ValueError(f"{self.name}-v0: max_steps (rounds) must be >= 1, got {int(params.max_steps)}")
        return params

    def parameter_names(self) -> tuple[str, ...]:
        return ("payoff_table", "interdependence", "max_steps", "rounds", "partner_weight")

    def n_agents(self, params: Any) -> int:
        return 2

    def num_actions(self, params: Any) -> int:
        return int(params.payoff_table.shape[0])

    def reset(self, key: Array, params: MatrixGameParams) -> tuple[MatrixGameState, Array]:
        state = MatrixGameState(last_actions=jnp.full(2, -1, jnp.int32), t=jnp.int32(0), totals=jnp.zeros(2, jnp.float32))
        return state, self.observe(state, params)

    def step(self, key: Array, state: MatrixGameState, actions: Array, params: MatrixGameParams):
        k = self.num_actions(params)
        actions = jnp.clip(jnp.asarray(actions, jnp.int32), 0, k - 1)
        payoffs = joint_action_payoffs(params.payoff_table, actions)
        new_state = MatrixGameState(last_actions=actions, t=state.t + 1, totals=state.totals + payoffs)
        truncated = new_state.t >= params.max_steps
        terminated = jnp.bool_(False)
        info = self.describe(new_state, params)
        info["interdependence_weights"] = params.interdependence
        info["terminated"] = terminated
        info["truncated"] = truncated
        return new_state, self.observe(new_state, params), payoffs, terminated | truncated, info

    def observation_bounds(self, params: Any) -> tuple[float, float]:
        """Every observation and global-state entry lies in ``[0.0, 1.0]``: one-hot last actions, the first-round flag and ``t / T``."""
        return 0.0, 1.0

    def observe(self, state: MatrixGameState, params: MatrixGameParams) -> Array:
        """Row i: ``[one-hot own last action (k), one-hot partner's last action (k), first round, t/T]``."""
        k = self.num_actions(params)
        one_hot = jax.nn.one_hot(state.last_actions, k)  # all zeros before the first round
        first = (state.t == 0).astype(jnp.float32)
        progress = state.t.astype(jnp.float32) / params.max_steps
        rows = [jnp.concatenate([one_hot[i], one_hot[1 - i], first[None], progress[None]]) for i in range(2)]
        return jnp.stack(rows)

    def global_state(self, state: MatrixGameState, params: MatrixGameParams) -> Array:
        return self.observe(state, params)[0]

    def describe(self, state: MatrixGameState, params: MatrixGameParams) -> Info:
        return {
            "step": state.t,
            "last_actions": state.last_actions,
            "total_payoffs": state.totals,
            "cooperation_rate": jnp.mean((state.last_actions == 0).astype(jnp.float32)),  # action 0 = cooperate
        }

    def static_info(self, params: Any) -> Info:
        return {"action_names": self.action_names}

    def render_text(self, state: MatrixGameState, params: MatrixGameParams) -> str:
        last = [self.action_names[a] if a >= 0 else "-" for a in np.asarray(state.last_actions)]
        totals = np.round(np.asarray(state.totals), 2).tolist()
        return f"{self.name} round {int(state.t)}/{int(params.max_steps)}  last {last}  totals {totals}"


class PrisonersDilemma(MatrixGame):
    """Iterated Prisoner's Dilemma (Axelrod 1984), memory-1 observations.

    * **Mechanism:** social dilemma: defection dominates each round (T > R > P > S), mutual
      cooperation is Pareto-better (2R > T + S); repetition lets reciprocity (tit-for-tat) pay.
    * **Agents:** 2 symmetric players.
    * **Actions:** ``Discrete(2)``: 0 = cooperate, 1 = defect (out-of-range indices are clipped).
    * **Observation:** per agent ``[one-hot own last action (2), one-hot partner's last action (2),
      first-round flag, t/T]`` (6; all-zero one-hots before round 1). Global state: agent 0's row.
    * **Payoff:** ``P[C,C]=(3,3), P[C,D]=(0,5), P[D,C]=(5,0), P[D,D]=(1,1)`` (R=3, S=0, T=5, P=1).
    * **Termination:** none; truncation after ``max_steps`` rounds (``max_steps=1``: the one-shot game).
      ``rounds`` is an alias of ``max_steps``; giving both with different values raises ``ValueError``.
    * **Defaults:** ``max_steps=50``; ``partner_weight=0.5`` sets ``W = 0.5(1 − I)`` for the
      ``integrated`` layer (``U_i = π_i + 0.5 π_j``); ``payoff_table`` overridable ([2, 2, 2]).
    """

    name = "PrisonersDilemma"
    default_table = symmetric_table(reward=3.0, sucker=0.0, temptation=5.0, punishment=1.0)


class StagHunt(MatrixGame):
    """Repeated Stag Hunt (Skyrms 2004): a coordination game with a risky efficient equilibrium.

    * **Mechanism:** two pure Nash equilibria: (stag, stag) payoff-dominant, (hare, hare) risk-dominant.
    * **Agents:** 2 symmetric hunters.
    * **Actions:** ``Discrete(2)``: 0 = stag (cooperate), 1 = hare (clipped).
    * **Observation:** per agent ``[one-hot own last action (2), one-hot partner's last action (2),
      first-round flag, t/T]`` (6). Global state: agent 0's row.
    * **Payoff:** ``P[S,S]=(4,4), P[S,H]=(0,3), P[H,S]=(3,0), P[H,H]=(2,2)`` (R=4 > T=3 > P=2 > S=0).
    * **Termination:** none; truncation after ``max_steps`` rounds (``max_steps=1``: one-shot; alias ``rounds``).
    * **Defaults:** ``max_steps=50``, ``partner_weight=0.5``.
    """

    name = "StagHunt"
    action_names = ("stag", "hare")
    default_table = symmetric_table(reward=4.0, sucker=0.0, temptation=3.0, punishment=2.0)


class Chicken(MatrixGame):
    """Repeated game of Chicken (Hawk-Dove): anti-coordination with a disastrous mutual escalation.

    * **Mechanism:** two asymmetric pure equilibria (one swerves, one goes straight) and a mixed one;
      mutual straight is the worst outcome (T > R > S > P).
    * **Agents:** 2 symmetric drivers.
    * **Actions:** ``Discrete(2)``: 0 = swerve (cooperate), 1 = straight (clipped).
    * **Observation:** per agent ``[one-hot own last action (2), one-hot partner's last action (2),
      first-round flag, t/T]`` (6). Global state: agent 0's row.
    * **Payoff:** ``P[W,W]=(3,3), P[W,S]=(1,4), P[S,W]=(4,1), P[S,S]=(0,0)``.
    * **Termination:** none; truncation after ``max_steps`` rounds (``max_steps=1``: one-shot; alias ``rounds``).
    * **Defaults:** ``max_steps=50``, ``partner_weight=0.5``.
    """

    name = "Chicken"
    action_names = ("swerve", "straight")
    default_table = symmetric_table(reward=3.0, sucker=1.0, temptation=4.0, punishment=0.0)
