"""Generate ``motivegym/envs/dilemma_strength.json``: random, equilibrium and optimum welfare of every env.

``python -m motivegym.experiments.dilemma_strength [--envs A,B] [--episodes N] [--seed S] [--output PATH]``

rewrites the named envs' rows (default: every registered env) and keeps the others. Every number is
the payoff welfare ``W = mean over episodes of Σ_i Σ_t π_i,t`` (undiscounted, default params, the
env's full horizon ``env.max_episode_steps(params)``), i.e. ``evaluation.summarize(...)["welfare"]``,
and every policy of an env is rolled out on the same episode keys ``evaluation.episode_keys(seed,
episodes)`` (common random numbers). Definitions of the stored fields: :mod:`motivegym.envs.strength`.

How each number is obtained, per env family:

* **random** (all envs): ``policies.Random`` (uniform over each agent's action range / actions).
* **coopetition** (continuous actions): ``best_constant`` is the best common level ``a_i = c·e_i``
  (``oracles.best_common_level`` on the total payoff, then ``Constant(c)`` on the evaluation keys);
  ``nash`` is ``oracle:nash``, the stationary equilibrium of the *selfish* game (each agent plays a
  constant maximising its own payoff return Π_i). It is chosen over the env's reference oracle because
  it is the one equilibrium that does not depend on a reward layer or on a behavioural motive: the
  dilemma strength is a property of the payoffs. ``optimum`` is ``oracle:social_optimum`` (per-agent
  constants maximising ``Σ_i Π_i``): the same stationary policy class, so the gap compares like with like.
* **matrix games**: the stage game is played every round; its payoffs do not depend on the history,
  so the welfare of a profile is rounds × stage welfare (rolled out through the env all the same).
  Two-player symmetric 2×2 games (PD, Stag Hunt, Chicken) are analysed from ``params.payoff_table``:
  ``nash`` is the symmetric stage equilibrium: the unique symmetric pure one (PD: mutual defection);
  among several symmetric pure ones the risk-dominant one (Harsanyi–Selten: the larger product of
  deviation losses; Stag Hunt: hare/hare, the one independent learners tend to reach, while stag/stag
  coincides with the optimum and would make the gap 0 by choice); without a symmetric pure one the
  symmetric mixed equilibrium (Chicken: swerve with probability 1/2, the only equilibrium a symmetric
  pair of agents can play without a tie-breaking role; welfare taken as the exact expectation over the
  four joint actions; the asymmetric pure equilibria would give 250 instead of 200). ``optimum`` is the
  joint action with the largest stage welfare, every round. Public goods with punishment: contributing
  0 strictly dominates (MPCR ``r/n < 1``) and punishing only costs the punisher, so the subgame-perfect
  stage equilibrium contributes nothing and never punishes; the optimum contributes everything and
  never punishes (contributions add ``(r − 1)·c``, punishment only destroys payoff). Donor game: giving
  costs ``c`` and is never paid back within the stage, so refusing strictly dominates (unique
  subgame-perfect equilibrium of the finite game by backward induction); the optimum is everybody
  giving (``b > c``). ``best_constant``: every agent plays action ``k`` at every step, best ``k``.
* **grid dilemmas** (Harvest, Cleanup, CoinGame; ``estimate: true``): the scripted policies of
  :mod:`motivegym.baselines.heuristics`. ``optimum`` is the best of a list of scripted team profiles
  (Harvest: every agent a forager that only eats apples with at least ``k`` visible neighbours,
  ``k = 0..8``, with or without tagging; Cleanup: ``m = 0..n`` river cleaners, the rest foragers;
  CoinGame: every combination of "chase any coin" / "own colour only"). ``nash`` is an equilibrium of
  the *restricted game* whose strategies are the selfish scripted strategies (greedy foraging, with
  and without tagging; chasing any coin) plus the strategies of the best team profile: for each
  symmetric profile we measure ``ε`` = the largest mean gain (over agents) of one agent switching to
  another strategy; among the profiles with ``ε <= 0`` the one with the highest welfare is taken
  (the smallest ``ε`` when none qualifies), and ``ε`` is stored in the notes. The Melting Pot substrates
  (CoopMining, Mushrooms, the two in-the-Matrix games, GiftRefinement, Territory) use the same analysis over
  their two scripted roles (``bots.BOT_TABLE``): strategies cooperator and defector bot, team profiles
  ``m = 0..n`` cooperators (:func:`role_game`).
* **sparse worlds**: CooperativeNavigation pays every agent the same team payoff (common interest), so
  the optimum is an equilibrium and the gap is 0 by construction; its optimum is the upper bound
  ``n·success_payoff`` (paid once), attained by ``heuristics.LandmarkAssignment``. KeyDoorGift is not
  common-interest, but the optimum ``n·(door_payoff + collective_payoff)`` (every door opened once)
  gives every agent its individual maximum, so no agent can gain by deviating: the optimum is an
  equilibrium; it is attained by ``heuristics.KeyPasser``. CrafterTeam: no oracle and no scripted
  policy exists; both numbers are the upper bound ``n·17`` (every achievement once per agent, health
  ending full), with a structural argument for gap 0 in the notes (``estimate: true``).

``dilemma_strength_table()`` renders the stored data as a markdown table (for ``docs/environments.md``).
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from tqdm import tqdm

from motivegym.baselines.bots import JaxMARLCoinChaser, make_bot
from motivegym.baselines.heuristics import CoinChaser, GridForager, KeyPasser, LandmarkAssignment
from motivegym.baselines.oracles import best_common_level, shared_env, solve_oracle
from motivegym.baselines.policies import Constant, Mixed, Policy, PolicyState, Random
from motivegym.core.env import FunctionalEnv
from motivegym.core.registry import REGISTRY, get_spec, list_envs, make_jax
from motivegym.envs import strength
from motivegym.experiments.evaluation import episode_keys, rollout_batch
from motivegym.reward_layers import reward_layer

DEFAULT_EPISODES = 32
DEFAULT_SEED = 0
PRIVATE = reward_layer("private")
ROUND = 4  # decimals of the stored welfare numbers
GAP_ROUND = 6


# ----------------------------------------------------------------------------------------------
# rollouts
# ----------------------------------------------------------------------------------------------


def stack_states(states: list[PolicyState]) -> PolicyState:
    return jax.tree.map(lambda *leaves: jnp.stack(leaves), *states)


def payoff_means(
    env: FunctionalEnv, params: Any, policy: Policy, state: PolicyState, keys: jax.Array, batched: bool = False
) -> np.ndarray:
    """Mean payoff return per agent ``[n]`` (``[S, n]`` for a stacked batch of ``S`` policy states)."""
    stats = rollout_batch(env, params, (PRIVATE,), policy, env.max_episode_steps(params), state, keys, batched_states=batched)
    return np.asarray(stats.payoff_returns, np.float64).mean(axis=-2)


def welfare_of(env: FunctionalEnv, params: Any, policy: Policy, keys: jax.Array, state: PolicyState | None = None) -> float:
    state = policy.init(env, params) if state is None else state
    return float(payoff_means(env, params, policy, state, keys).sum())


@dataclasses.dataclass(frozen=True)
class ActionCycle(Policy):
    """Joint action ``table[t mod L]`` at step ``t`` (``table`` ``[L, n]`` in the state): the named matrix-game profiles."""

    @property
    def name(self) -> str:
        return "action_cycle"

    def init(self, env: FunctionalEnv, params: Any, table: Any = None) -> PolicyState:
        table = np.zeros((1, env.n_agents(params)), np.int32) if table is None else np.asarray(table, np.int32)
        return {"table": jnp.asarray(table), "t": jnp.int32(0)}

    def __call__(self, key, obs, state):
        table = state["table"]
        return table[state["t"] % table.shape[0]], {**state, "t": state["t"] + 1}


def cycle_welfare(env: FunctionalEnv, params: Any, tables: list[Any], keys: jax.Array) -> np.ndarray:
    """Welfare ``[S]`` of joint-action cycles of one length (one batched rollout)."""
    policy = ActionCycle()
    states = stack_states([policy.init(env, params, table) for table in tables])
    return payoff_means(env, params, policy, states, keys, batched=True).sum(axis=-1)


# ----------------------------------------------------------------------------------------------
# one row per family
# ----------------------------------------------------------------------------------------------


#: observations about single envs that the generated numbers cannot show by themselves
EXTRA_NOTES = {
    "ReputationMarket-v0": "The stationary oracles all stop at the same common level here; docs/reference_policies.md reports a "
    "higher private return for oracle:trust_aware (4-block schedules, an equilibrium over schedules), so the true optimum "
    "is higher than the stored stationary one and non-stationary selfish play reaches beyond it: no dilemma either way.",
}


def describe_actions(actions: np.ndarray) -> str:
    actions = np.asarray(actions, np.float64)
    if np.ptp(actions) < 1e-3:
        return f"every agent {round(float(actions[0]), 3)}"
    return str([round(float(a), 3) for a in actions])


def coopetition_row(env: FunctionalEnv, params: Any, keys: jax.Array) -> dict[str, Any]:
    level, _ = best_common_level(env, params, None)
    nash = solve_oracle("nash", env, params, PRIVATE)
    optimum = solve_oracle("social_optimum", env, params, PRIVATE)
    welfare = {r.name: float(payoff_means(env, params, r.policy, r.policy_state, keys).sum()) for r in (nash, optimum)}
    welfare["constant"] = welfare_of(env, params, Constant(level), keys)
    optimum_source = (
        "oracle:social_optimum — per-agent constants maximising the total payoff return (coordinate ascent from the best "
        "common level)"
    )
    notes = (
        f"nash actions: {describe_actions(nash.actions)}; social-optimum actions: {describe_actions(optimum.actions)}. "
        "Both oracles range over stationary (constant) policies, so a non-stationary schedule can beat the stored optimum."
    )
    best = max(welfare, key=welfare.get)
    if welfare[best] > welfare["social_optimum"]:  # stochastic envs: the oracles are solved on 8 sample keys, scored on ours
        runner_up = {"nash": "the oracle:nash policy", "constant": f"the best common level c = {level:.4f}"}[best]
        optimum_source = (
            f"{runner_up} — it beats oracle:social_optimum on the evaluation episodes (any policy bounds the optimum from below)"
        )
        notes += (
            f" On the evaluation episodes oracle:social_optimum scores {welfare['social_optimum']:.6g}, below {runner_up} "
            "(the oracles are solved on their own sample episodes of this stochastic env); the optimum is the best of them."
        )
    return {
        "best_constant": welfare["constant"],
        "best_constant_level": round(level, 4),
        "nash": welfare["nash"],
        "nash_source": "oracle:nash — stationary equilibrium of the selfish game: each agent plays a constant a_i "
        f"maximising its own payoff return (iterated grid best response, ε = {max(nash.max_gain, 0.0):.3g})",
        "optimum": welfare[best],
        "optimum_source": optimum_source,
        "estimate": False,
        "notes": notes,
    }


def symmetric_stage_equilibrium(table: np.ndarray, names: tuple[str, ...]) -> tuple[str, list[tuple[float, tuple[int, int]]]]:
    """The symmetric equilibrium of a symmetric 2×2 stage game (module docstring): ``(source, [(prob, joint action)])``."""
    u = np.asarray(table, np.float64)[..., 0]  # the row player's payoff u[a_0, a_1]
    if not np.allclose(np.asarray(table)[..., 1], u.T):
        raise ValueError("the stage-game analysis needs a symmetric 2x2 table")
    pure = [a for a in (0, 1) if u[a, a] >= u[1 - a, a]]
    if len(pure) == 1:
        a = pure[0]
        return f"analytic — ({names[a]}, {names[a]}) every round: the unique symmetric pure stage equilibrium", [(1.0, (a, a))]
    if len(pure) == 2:
        loss = [(u[a, a] - u[1 - a, a]) ** 2 for a in (0, 1)]
        a = int(np.argmax(loss))
        return (
            f"analytic — ({names[a]}, {names[a]}) every round: the risk-dominant of the two symmetric pure stage equilibria "
            f"(deviation-loss products {loss[a]:g} vs {loss[1 - a]:g})",
            [(1.0, (a, a))],
        )
    p = (u[1, 1] - u[0, 1]) / (u[0, 0] - u[0, 1] - u[1, 0] + u[1, 1])  # probability of action 0 making the partner indifferent
    mix = [p, 1.0 - p]
    return (
        f"analytic — the symmetric mixed stage equilibrium every round ({names[0]} with probability {p:.4g}); "
        "exact expectation over the four joint actions",
        [(mix[a] * mix[b], (a, b)) for a in (0, 1) for b in (0, 1)],
    )


def matrix_row(env: FunctionalEnv, params: Any, keys: jax.Array) -> dict[str, Any]:
    n, k = env.n_agents(params), env.num_actions(params)
    constants = cycle_welfare(env, params, [[[a] * n] for a in range(k)], keys)
    best = int(np.argmax(constants))
    row: dict[str, Any] = {"best_constant": float(constants[best]), "best_constant_level": float(best), "estimate": False}
    if env.name in ("PrisonersDilemma", "StagHunt", "Chicken"):
        names = env.action_names
        source, mixture = symmetric_stage_equilibrium(np.asarray(params.payoff_table), names)
        joint = [(a, b) for a in range(k) for b in range(k)]
        welfare = dict(zip(joint, cycle_welfare(env, params, [[list(j)] for j in joint], keys)))
        top = max(joint, key=lambda j: welfare[j])
        row["nash"], row["nash_source"] = float(sum(p * welfare[j] for p, j in mixture)), source
        row["optimum"] = float(welfare[top])
        row["optimum_source"] = (
            f"analytic — ({names[top[0]]}, {names[top[1]]}) every round: the joint action with the largest stage welfare"
        )
        row["notes"] = "stage welfare per round: " + ", ".join(
            f"({names[a]}, {names[b]}) {welfare[(a, b)] / int(params.max_steps):g}" for a, b in joint
        )
        if env.name == "Chicken":
            pure = welfare[(0, 1)]
            row["notes"] += (
                f". The mixed equilibrium (swerve 1/2) is uniform random play, so nash equals the random policy's expectation; "
                f"an asymmetric pure equilibrium (one swerves) would give {pure:g}"
            )
        if env.name == "StagHunt":
            row["notes"] += ". The payoff-dominant equilibrium (stag, stag) equals the optimum (gap 0 if it were chosen)"
        return row
    if env.name == "PublicGoodsPunishment":
        top = k - 1
        nash, optimum = cycle_welfare(env, params, [[[0] * n, [0] * n], [[top] * n, [0] * n]], keys)
        row.update(
            nash=float(nash),
            nash_source="analytic — contribute 0 and never punish, every round: contributing is strictly dominated "
            "(MPCR r/n < 1) and punishing only costs the punisher (unique subgame-perfect equilibrium of the finite game)",
            optimum=float(optimum),
            optimum_source="analytic — everybody contributes the whole endowment and nobody punishes: welfare n·e + (r − 1)·Σc "
            "grows with every contribution and punishment only destroys payoff",
            notes="steps alternate contribution and punishment phases; the best constant action (contribute everything, "
            "'punish' in the punishment phase) punishes nobody because nobody is below the mean, so it equals the optimum",
        )
        return row
    if env.name == "DonorGame":
        nash, optimum = cycle_welfare(env, params, [[[0] * n], [[1] * n]], keys)
        row.update(
            nash=float(nash),
            nash_source="analytic — nobody gives, every round: giving costs c and is never repaid within the round, so refusing "
            "strictly dominates; the payoffs do not depend on image scores, so backward induction makes it the unique "
            "subgame-perfect equilibrium of the finite game",
            optimum=float(optimum),
            optimum_source="analytic — everybody gives every round (b > c): n·(b − c) per round",
            notes="image scores only matter through other agents' strategies (indirect reciprocity), which the finite-horizon "
            "equilibrium unravels",
        )
        return row
    raise ValueError(f"{env.name}: no matrix-game analysis")


@dataclasses.dataclass(frozen=True)
class ScriptedGame:
    """A restricted game over scripted strategies (one strategy per agent; ``make`` builds the policy of a profile)."""

    make: Callable[[tuple[Any, ...]], Policy]
    label: Callable[[Any], str]
    strategies: tuple[Any, ...]  # the restricted game's strategies; strategies[0] is the plain selfish one
    team: Callable[[int], list[tuple[Any, ...]]]  # candidate profiles for the optimum
    policy_name: str


def forager_profile(profile: tuple[tuple[int, bool, bool], ...]) -> GridForager:
    restraint, tag, clean = zip(*profile)
    return GridForager(restraint=tuple(restraint), tag=tuple(tag), cleaners=tuple(clean))


def forager_label(strategy: tuple[int, bool, bool]) -> str:
    restraint, tag, clean = strategy
    base = "clean the river" if clean else ("greedy forager" if restraint == 0 else f"restrained forager (k={restraint})")
    return base + (" + tag" if tag else "")


SCRIPTED_GAMES = {
    "Harvest": ScriptedGame(
        make=forager_profile,
        label=forager_label,
        strategies=tuple((k, tag, False) for tag in (False, True) for k in range(7)),
        team=lambda n: [((k, tag, False),) * n for k in range(9) for tag in (False, True)],
        policy_name="heuristics.GridForager",
    ),
    "Cleanup": ScriptedGame(
        make=forager_profile,
        label=forager_label,
        strategies=((0, False, False), (0, True, False), (0, False, True)),
        team=lambda n: [((0, False, True),) * m + ((0, False, False),) * (n - m) for m in range(n + 1)],
        policy_name="heuristics.GridForager",
    ),
    "CoinGame": ScriptedGame(
        make=lambda profile: CoinChaser(own_only=tuple(profile)),
        label=lambda own_only: "own colour only" if own_only else "any coin",
        strategies=(False, True),
        team=lambda n: list(itertools.product((False, True), repeat=n)),
        policy_name="heuristics.CoinChaser",
    ),
    "CoinGameJaxMARL": ScriptedGame(
        make=lambda profile: JaxMARLCoinChaser(own_only=tuple(profile)),
        label=lambda own_only: "own coin only" if own_only else "nearer coin",
        strategies=(False, True),
        team=lambda n: list(itertools.product((False, True), repeat=n)),
        policy_name="bots.JaxMARLCoinChaser",
    ),
}


@dataclasses.dataclass(frozen=True)
class RoleProfile(Policy):
    """Agent ``i`` plays the env's ``cooperator`` bot where ``profile[i] == "cooperator"``, else its ``defector`` bot
    (:mod:`motivegym.baselines.bots`); the profile lives in the state, so one compiled policy plays every profile."""

    cooperator: Policy
    defector: Policy
    profile: tuple[str, ...] = dataclasses.field(default=(), compare=False)

    @property
    def name(self) -> str:
        return f"roles({self.cooperator.name} / {self.defector.name})"

    def init(self, env: FunctionalEnv, params: Any) -> PolicyState:
        mask = [role == "cooperator" for role in self.profile]
        return Mixed.init_states(mask, self.cooperator.init(env, params), self.defector.init(env, params))

    def __call__(self, key, obs, state):
        return Mixed(self.cooperator, self.defector)(key, obs, state)


def role_game(env_id: str) -> ScriptedGame:
    """The restricted game over the env's two scripted roles: every mix of cooperator and defector bots."""
    return ScriptedGame(
        make=lambda profile: RoleProfile(make_bot(env_id, "cooperator"), make_bot(env_id, "defector"), tuple(profile)),
        label=lambda role: f"{role} bot",
        strategies=("defector", "cooperator"),
        team=lambda n: [("cooperator",) * m + ("defector",) * (n - m) for m in range(n + 1)],
        policy_name="bots.BOT_TABLE",
    )


#: Melting Pot substrates: their scripted cooperator/defector bots are the restricted game
for _name in ("CoopMining", "Mushrooms", "PrisonersDilemmaInTheMatrix", "StagHuntInTheMatrix", "GiftRefinement", "Territory"):
    SCRIPTED_GAMES[_name] = role_game(f"{_name}-v0")


def profile_label(game: ScriptedGame, profile: tuple[Any, ...]) -> str:
    if len(set(profile)) == 1:
        return f"every agent: {game.label(profile[0])}"
    return "; ".join(f"agent {i}: {game.label(s)}" for i, s in enumerate(profile))


def scripted_row(env: FunctionalEnv, params: Any, keys: jax.Array) -> dict[str, Any]:
    """Optimum: the best scripted team profile. Nash: symmetric best-response dynamics in the restricted game.

    From each start (the plain selfish strategy and every strategy of the best team profile) the symmetric profile
    moves to the deviation with the largest mean gain (over the agents, each deviating alone) until no deviation
    gains (a restricted-game equilibrium) or a profile repeats. The stored nash is the best equilibrium reached
    (so the gap is a conservative estimate); without any, the least unstable profile visited.
    """
    game, n = SCRIPTED_GAMES[env.name], env.n_agents(params)

    def payoffs(profiles: list[tuple[Any, ...]]) -> np.ndarray:
        states = stack_states([game.make(p).init(env, params) for p in profiles])
        return payoff_means(env, params, game.make(profiles[0]), states, keys, batched=True)  # [P, n]

    team = game.team(n)
    team_welfare = payoffs(team).sum(axis=-1)
    best = team[int(np.argmax(team_welfare))]
    strategies = tuple(dict.fromkeys(game.strategies + best))
    analysed: dict[Any, tuple[float, dict[Any, float]]] = {}  # strategy -> (welfare, mean gain per deviation)

    def analyse(s: Any) -> tuple[float, dict[Any, float]]:
        if s not in analysed:
            others = [d for d in strategies if d != s]
            table = payoffs([(s,) * n] + [tuple(d if j == i else s for j in range(n)) for d in others for i in range(n)])
            base, rows = table[0], table[1:].reshape(len(others), n, n)
            analysed[s] = (
                float(base.sum()),
                {d: float(np.mean(rows[k, np.arange(n), np.arange(n)] - base)) for k, d in enumerate(others)},
            )
        return analysed[s]

    equilibria: set[Any] = set()
    for start in dict.fromkeys((strategies[0],) + best):
        s, seen = start, set()
        while s not in seen:
            seen.add(s)
            gains = analyse(s)[1]
            move = max(gains, key=gains.get)
            if gains[move] <= 0.0:
                equilibria.add(s)
                break
            s = move
    epsilon = {s: max(gains.values()) for s, (_, gains) in analysed.items()}
    welfare = {s: w for s, (w, _) in analysed.items()}
    nash = max(equilibria, key=welfare.get) if equilibria else min(epsilon, key=epsilon.get)
    candidates = {profile_label(game, p): float(w) for p, w in zip(team, team_welfare)}
    for s, w in welfare.items():
        label = profile_label(game, (s,) * n)
        candidates[label] = max(w, candidates.get(label, -np.inf))
    top = max(candidates, key=candidates.get)
    visited = "; ".join(f"{game.label(s)}: W {welfare[s]:.4g}, ε {epsilon[s]:.3g}" for s in analysed)
    found = ", ".join(game.label(s) for s in equilibria) or "none (no profile without a profitable deviation)"
    return {
        "best_constant": None,
        "best_constant_level": None,
        "nash": welfare[nash],
        "nash_source": f"estimate: scripted — every agent: {game.label(nash)} ({game.policy_name}); "
        f"{'the best equilibrium reached by' if equilibria else 'the least unstable profile visited by'} symmetric "
        f"best-response dynamics in the restricted game over {len(strategies)} scripted strategies, "
        f"max mean unilateral gain ε = {epsilon[nash]:.3g}",
        "optimum": candidates[top],
        "optimum_source": f"estimate: scripted — {top} ({game.policy_name}); the best of {len(candidates)} scripted "
        "profiles (team profiles and the symmetric profiles visited in the restricted game)",
        "estimate": True,
        "notes": f"restricted-game strategies: {', '.join(game.label(s) for s in strategies)}. Equilibria reached: {found}. "
        f"Symmetric profiles visited (welfare, ε = best mean unilateral gain): {visited}. A constant action is meaningless "
        "in a grid world (best_constant null). Learned policies may do better or worse than these scripted references.",
    }


def sparse_row(env: FunctionalEnv, params: Any, keys: jax.Array) -> dict[str, Any]:
    n = env.n_agents(params)
    row: dict[str, Any] = {"best_constant": None, "best_constant_level": None}
    if env.name == "CooperativeNavigation":
        bound = n * float(params.success_payoff)
        welfare = welfare_of(env, params, LandmarkAssignment(), keys)
        attained = math.isclose(welfare, bound, rel_tol=1e-6)
        row.update(
            nash=welfare,
            nash_source="common interest — every agent is paid the same team payoff, so the optimum is an equilibrium",
            optimum=welfare,
            optimum_source=f"analytic — the upper bound n·success_payoff = {bound:g} (paid once, on success), "
            f"{'attained on every episode' if attained else 'NOT attained on every episode'} by heuristics.LandmarkAssignment",
            estimate=not attained,
            notes="common-interest payoffs: the gap is 0 by construction; the env tests exploration and coordination, "
            "not a social dilemma. A constant action is meaningless here (best_constant null).",
        )
        return row
    if env.name == "KeyDoorGift":
        bound = n * float(params.door_payoff + params.collective_payoff)
        welfare = welfare_of(env, params, KeyPasser(), keys)
        attained = math.isclose(welfare, bound, rel_tol=1e-6)
        row.update(
            nash=welfare,
            nash_source="analytic — the optimum pays every agent its individual maximum door_payoff + collective_payoff, "
            "so no agent gains by deviating: it is an equilibrium (passing the key costs the giver nothing and pays it "
            "the collective payoff)",
            optimum=welfare,
            optimum_source=f"analytic — the upper bound n·(door_payoff + collective_payoff) = {bound:g} (each door opens once), "
            f"{'attained on every episode' if attained else 'NOT attained on every episode'} by heuristics.KeyPasser",
            estimate=not attained,
            notes="not common-interest, but the key-passing optimum is an equilibrium, so the gap is 0 by construction: the "
            "difficulty is the sparse, delayed credit for the gift, not a conflict of interest. A constant action is "
            "meaningless here (best_constant null).",
        )
        return row
    if env.name == "CrafterTeam":
        achievements = len(env.static_info(params)["achievement_names"])
        bound = float(n * achievements)
        row.update(
            nash=bound,
            nash_source=f"estimate: upper bound — n·{achievements} (structural argument in the notes; not measured)",
            optimum=bound,
            optimum_source=f"estimate: upper bound — every agent unlocks all {achievements} achievements once and ends at full "
            "health (Σ_t 0.1·Δhealth ≤ 0 since health starts at its maximum); not attained by any policy in this repo",
            estimate=True,
            notes="payoffs are per-agent achievements and friendly fire is off (agent_attack_damage 0): an agent's payoff "
            "does not depend on the others' except through shared finite resources (cows, rare diamonds, cells), where a "
            "race only changes who unlocks an achievement, not the total, and hindering others earns nothing; so selfish "
            "play loses no welfare to first order and the gap is taken as 0. Both numbers are the upper bound, so "
            "normalized scores on this env are conservative. A constant action is meaningless here (best_constant null).",
        )
        return row
    raise ValueError(f"{env.name}: no sparse-world analysis")


def row_builder(env_id: str) -> Callable[[FunctionalEnv, Any, jax.Array], dict[str, Any]]:
    spec = get_spec(env_id)
    module = spec.env_class.__module__
    if spec.family == "coopetition":
        return coopetition_row
    if module.startswith("motivegym.envs.matrix"):
        return matrix_row
    if module.startswith("motivegym.envs.spatial"):
        return scripted_row
    if module.startswith("motivegym.envs.sparse"):
        return sparse_row
    raise ValueError(f"{env_id}: no dilemma-strength method for family {spec.family!r} ({module})")


def gap_of(optimum: float, nash: float, random: float) -> float | None:
    """``(W_opt − W_nash)/(W_opt − W_random)``; when the optimum does not beat random play: 0 if nash reaches it, else None."""
    if optimum > random:
        return (optimum - nash) / (optimum - random)
    return 0.0 if nash >= optimum else None


def compute_row(env_id: str, episodes: int = DEFAULT_EPISODES, seed: int = DEFAULT_SEED) -> dict[str, Any]:
    """The JSON row of one env (see the module docstring)."""
    spec = get_spec(env_id)
    env, params = make_jax(spec.id)
    env = shared_env(env)
    keys = episode_keys(seed, episodes)
    row = {"random": welfare_of(env, params, Random(), keys)}
    row.update(row_builder(spec.id)(env, params, keys))
    if spec.id in EXTRA_NOTES:
        row["notes"] += " " + EXTRA_NOTES[spec.id]
    for name in ("random", "best_constant", "nash", "optimum"):
        if row[name] is not None:
            row[name] = round(float(row[name]), ROUND)
    gap = gap_of(row["optimum"], row["nash"], row["random"])
    ordered = {
        "random": row["random"],
        "best_constant": row["best_constant"],
        "best_constant_level": row["best_constant_level"],
        "nash": row["nash"],
        "nash_source": row["nash_source"],
        "optimum": row["optimum"],
        "optimum_source": row["optimum_source"],
        "estimate": bool(row["estimate"]),
        "gap": None if gap is None else round(gap, GAP_ROUND),
        "episodes": episodes,
        "seed": seed,
        "notes": row["notes"],
    }
    return ordered


def write_table(rows: dict[str, dict[str, Any]], path: str | Path = strength.DATA_PATH) -> Path:
    """Merge ``rows`` into the JSON at ``path`` (other envs kept) and write it in registry order."""
    path = Path(path)
    existing = json.loads(path.read_text()) if path.exists() else {}
    existing.update(rows)
    ordered = {env_id: existing[env_id] for env_id in REGISTRY if env_id in existing}
    ordered.update({k: v for k, v in existing.items() if k not in ordered})  # rows of envs no longer registered stay last
    path.write_text(json.dumps(ordered, indent=2, ensure_ascii=False) + "\n")
    strength._load.cache_clear()
    return path


def generate(
    envs: list[str] | None = None,
    episodes: int = DEFAULT_EPISODES,
    seed: int = DEFAULT_SEED,
    path: str | Path = strength.DATA_PATH,
    progress: bool = True,
) -> dict[str, dict[str, Any]]:
    """Recompute the rows of ``envs`` (default: all registered) and merge them into ``path``."""
    env_ids = [get_spec(e).id for e in (envs or list_envs())]
    rows = {}
    bar = tqdm(env_ids, desc="dilemma strength", disable=not progress)
    for env_id in bar:
        bar.set_postfix_str(env_id)
        rows[env_id] = compute_row(env_id, episodes, seed)
    write_table(rows, path)
    return rows


# ----------------------------------------------------------------------------------------------
# markdown (for docs/environments.md)
# ----------------------------------------------------------------------------------------------


def _number(value: float | None) -> str:
    return "—" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.6g}"


def _source_tag(source: str, estimate: bool) -> str:
    """The short head of a source string (before " — "), marked "(estimate)" for estimated rows."""
    head = source.split(" — ")[0]
    return head if head.startswith("estimate") or not estimate else f"{head} (estimate)"


def dilemma_strength_table(path: str | Path = strength.DATA_PATH) -> str:
    """Markdown table of the stored dilemma strength of every registered env (registry order)."""
    lines = [
        f"Welfare `W = Σ_i Σ_t π_i,t` (mean over episodes, default params). `gap = (W_opt − W_nash)/(W_opt − W_random)`; "
        f"envs with gap ≥ {strength.DILEMMA_GAP_THRESHOLD:g} are the ablation preset (`motivegym.envs.strength.dilemma_env_ids()`). "
        f"Regenerate with `{strength.REGENERATE_COMMAND}`.",
        "",
        "| env | random | best constant | Nash (source) | optimum (source) | gap | ablation preset |",
        "|---|---:|---:|---|---|---:|:---:|",
    ]
    table = strength.load_table(path)
    for env_id in REGISTRY:
        if env_id not in table:
            continue
        row = strength.dilemma_strength(env_id, path)
        constant = _number(row.best_constant)
        if row.best_constant is not None and row.best_constant_level is not None:
            constant += f" ({row.best_constant_level:g})"

        lines.append(
            f"| {env_id} | {_number(row.random)} | {constant} | {_number(row.nash)} ({_source_tag(row.nash_source, row.estimate)}) | "
            f"{_number(row.optimum)} ({_source_tag(row.optimum_source, row.estimate)}) | {_number(row.gap)} | "
            f"{'yes' if row.is_dilemma else 'no'} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", default="", help="comma-separated env ids (default: every registered env)")
    parser.add_argument("--episodes", type=int, default=DEFAULT_EPISODES)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--output", default=str(strength.DATA_PATH))
    args = parser.parse_args(argv)
    envs = [e.strip() for e in args.envs.split(",") if e.strip()] or None
    start = time.time()
    rows = generate(envs, args.episodes, args.seed, args.output)
    print(f"wrote {len(rows)} row(s) to {args.output} in {time.time() - start:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
