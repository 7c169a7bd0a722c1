"""Named scripted co-players ("bots") for the dilemma envs: the background populations of scenarios and the
cooperator/defector policies of Schelling diagrams.

Every dilemma env has three roles, looked up with ``make_bot(env_id, role)``:

* ``cooperator`` — the "exploitable partner": cooperates unconditionally;
* ``reciprocator`` — cooperates first, then returns what its partners did (absent in the grid envs, whose
  scripted policies do not observe who did what);
* ``defector`` — the selfish strategy of the env's equilibrium.

What each role plays (``BOT_TABLE`` is the data; ``describe_bot`` prints a row):

* coopetition envs (continuous, ``a_i ∈ [0, e_i]``): ``Constant(1.0)`` / ``TitForTat(relative=True)`` (copies
  the partners' mean cooperation rate ``a_j/e_j``) / ``Constant(0.0)``;
* two-player matrix games (PrisonersDilemma, StagHunt, Chicken; action 0 = cooperate): always 0 /
  tit-for-tat (0 first, then the partner's last action, read from the observation) / always 1;
* PublicGoodsPunishment: full contribution, never punishes / conditional cooperator (Fischbacher et al.
  2001): full contribution first, then the partners' mean contribution of the last round rounded to a
  level, and punishes free riders / contributes nothing, never punishes;
* DonorGame (1 = give): always gives / discriminator (Nowak & Sigmund 1998): gives iff the recipient's
  image score is ≥ 0 / never gives;
* Harvest: restrained forager ``GridForager(restraint=4)`` (the scripted optimum profile) / — / greedy
  forager that tags ``GridForager(restraint=0, tag=True)`` (the scripted equilibrium's selfish strategy);
  under ``preset="ssd"`` (pass ``view_encoding="onehot"``) the greedy forager does not tag, since SSD's beam
  removes nobody and only costs (−1 to fire, −50 to the hit agent);
* Cleanup: cleaning forager ``CleaningForager()`` (cleans the river while the stretch it sees is dirty, eats
  otherwise; its docstring states the switching rule) / — / greedy forager that tags (not under
  ``preset="ssd"``); ``make_river_cleaners(env, params)`` is the former cooperator, every agent a river
  cleaner ``GridForager(cleaners=n)`` that never eats (as in ``dilemma_strength``'s Cleanup profiles);
* CoinGame: ``CoinChaser(own_only=True)`` / — / ``CoinChaser(own_only=False)``;
* PrisonersDilemmaInTheMatrix / StagHuntInTheMatrix: ``InventoryBot(strategy=0)`` (collects only cooperate / stag
  resources, then seeks a ready partner and interacts) / — / ``InventoryBot(strategy=1)`` (only defect / hare);
  see :mod:`motivegym.baselines.matrix_bots`;
* GiftRefinement: ``TokenTrader(gift=True)`` (gifts lower tokens to the agents it meets, consumes top-level ones) / — /
  ``TokenTrader(gift=False)`` (consumes every token at once); Territory: ``TerritoryBot(aggressive=False)`` (claims
  only unclaimed resources, never zaps) / — / ``TerritoryBot(aggressive=True)`` (zaps and steals claims); both in
  :mod:`motivegym.baselines.gift_territory_bots`;
* CoinGameJaxMARL: ``JaxMARLCoinChaser(own_only=True)`` (walks to its own coin, around the other's coin where
  a second shortest path exists) / — / ``JaxMARLCoinChaser(own_only=False)`` (walks to the nearer coin);
* CoopMining: gold miner ``OreMiner(gold=True)`` (the stag: mines gold, joins partly mined gold, re-mines its gold
  while waiting for a partner) / — / iron miner ``OreMiner(gold=False)`` (the hare);
* Mushrooms: ``MushroomEater(kinds=(2, 3))`` (eats green and blue, whose payoff goes to all / to the others) / — /
  ``MushroomEater(kinds=(1,))`` (eats only red, all payoff to itself); neither eats orange or zaps
  (``motivegym/baselines/mining_bots.py``).

Bots are ordinary joint policies (:class:`motivegym.baselines.policies.Policy`): they emit every agent's
action; a scenario keeps the background slots' actions only.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

from motivegym.baselines.gift_territory_bots import TerritoryBot, TokenTrader
from motivegym.baselines.heuristics import CleaningForager, CoinChaser, GridForager, per_agent
from motivegym.baselines.matrix_bots import InventoryBot
from motivegym.baselines.mining_bots import MushroomEater, OreMiner
from motivegym.baselines.policies import Constant, Policy, PolicyState, TitForTat
from motivegym.core.env import FunctionalEnv

Array = jax.Array

ROLES = ("cooperator", "reciprocator", "defector")


@dataclasses.dataclass(frozen=True)
class FixedAction(Policy):
    """Every agent plays discrete action ``action`` every step."""

    action: int = 0

    @property
    def name(self) -> str:
        return f"action:{self.action}"

    def init(self, env: FunctionalEnv, params: Any) -> PolicyState:
        check_discrete(env, self.name)
        k = env.num_actions(params)
        if not 0 <= self.action < k:
            raise ValueError(f"{env.name}: action {self.action} out of range (the env has {k} actions)")
        return {"actions": jnp.full(env.n_agents(params), self.action, jnp.int32)}

    def __call__(self, key, obs, state):
        return state["actions"], state


@dataclasses.dataclass(frozen=True)
class MatrixTitForTat(Policy):
    """Two-player matrix games: cooperate (action 0) in round 1, then play the partner's last action.

    Reads the memory-1 observation ``[own last (k), partner's last (k), first round, t/T]``."""

    @property
    def name(self) -> str:
        return "titfortat"

    def init(self, env: FunctionalEnv, params: Any) -> PolicyState:
        check_discrete(env, self.name)
        return {"k": jnp.zeros(env.num_actions(params))}

    def __call__(self, key, obs, state):
        k = state["k"].shape[0]
        partner_last = jnp.argmax(obs[:, k : 2 * k], axis=-1)
        first_round = obs[:, 2 * k] > 0.5
        return jnp.where(first_round, 0, partner_last).astype(jnp.int32), state


@dataclasses.dataclass(frozen=True)
class PublicGoodsBot(Policy):
    """PublicGoodsPunishment: contribute ``level`` (a fraction of the endowment, or ``"match"`` = the partners'
    mean contribution of the last round, full in round 1) and punish free riders iff ``punish``."""

    level: float | str = 1.0
    punish: bool = False

    @property
    def name(self) -> str:
        return f"public_goods(level={self.level}, punish={self.punish})"

    def init(self, env: FunctionalEnv, params: Any) -> PolicyState:
        check_discrete(env, self.name)
        if self.level != "match" and not 0.0 <= float(self.level) <= 1.0:
            raise ValueError(f"level must be a fraction in [0, 1] or 'match', got {self.level!r}")
        return {"levels": jnp.int32(env.num_actions(params)), "n": jnp.zeros(env.n_agents(params))}

    def __call__(self, key, obs, state):
        n, top = state["n"].shape[0], state["levels"] - 1
        punish_phase = obs[:, 0] > 0.5
        if self.level == "match":
            own, mean = obs[:, 1], obs[:, 2 + n]
            partners = (n * mean - own) / (n - 1)
            first_round = obs[:, -1] <= 0.0
            fraction = jnp.where(first_round, 1.0, partners)
        else:
            fraction = jnp.full((n,), float(self.level))
        contribute = jnp.round(fraction * top).astype(jnp.int32)
        return jnp.where(punish_phase, jnp.int32(self.punish), contribute), state


@dataclasses.dataclass(frozen=True)
class Discriminator(Policy):
    """DonorGame: give (action 1) iff the shown recipient's image score is ≥ 0 (observation entry 0)."""

    @property
    def name(self) -> str:
        return "discriminator"

    def init(self, env: FunctionalEnv, params: Any) -> PolicyState:
        check_discrete(env, self.name)
        return {}

    def __call__(self, key, obs, state):
        return (obs[:, 0] >= 0.0).astype(jnp.int32), state


@dataclasses.dataclass(frozen=True)
class JaxMARLCoinChaser(Policy):
    """CoinGameJaxMARL: a shortest torus walk to a coin, read from the ``[3, 3, 4]`` observation (own position,
    other player, own coin, other coin); stays while standing on its target (a coin respawned under it).

    ``own_only=True`` targets the own coin and, when both a row and a column move are shortest, takes the one
    not entering the other's coin (on a 3×3 torus that avoids it unless the coins share a cell);
    ``own_only=False`` targets the nearer coin (ties: the own coin) and ignores what it steps on."""

    own_only: bool | tuple[bool, ...] = False

    @property
    def name(self) -> str:
        return f"jaxmarl_coin_chaser(own_only={self.own_only})"

    def init(self, env: FunctionalEnv, params: Any) -> PolicyState:
        check_discrete(env, self.name)
        return {"own_only": per_agent(self.own_only, env.n_agents(params), bool)}

    def __call__(self, key, obs, state):
        from motivegym.envs.spatial.coin_game_jaxmarl import GRID_SIZE, MOVES, STAY

        g = GRID_SIZE
        coords = jnp.stack(jnp.unravel_index(jnp.arange(g * g), (g, g)), axis=1)
        moves = jnp.asarray(MOVES)

        def act(row, own_only):
            planes = row.reshape(g * g, 4)
            me, own, other = (coords[jnp.argmax(planes[:, c])] for c in (0, 2, 3))
            offset = lambda cell: (cell - me + g // 2) % g - g // 2  # noqa: E731 - torus offset in [-g/2, g/2)
            own_delta, other_delta = offset(own), offset(other)
            other_nearer = jnp.sum(jnp.abs(other_delta)) < jnp.sum(jnp.abs(own_delta))
            delta = jnp.where(~own_only & other_nearer, other_delta, own_delta)
            row_move = jnp.where(delta[0] > 0, 2, 3)  # "up" is row +1, "down" row −1 (JaxMARL's names)
            col_move = jnp.where(delta[1] > 0, 0, 1)  # "right" column +1, "left" column −1
            row_enters_other = jnp.all((me + moves[row_move]) % g == other)
            prefer_col = (delta[1] != 0) & ((delta[0] == 0) | (own_only & row_enters_other))
            return jnp.where(jnp.all(delta == 0), STAY, jnp.where(prefer_col, col_move, row_move)).astype(jnp.int32)

        return jax.vmap(act)(obs, state["own_only"]), state


def check_discrete(env: FunctionalEnv, policy: str) -> None:
    if env.action_kind != "discrete":
        raise ValueError(f"{env.name}: the {policy} bot needs discrete actions, got action_kind={env.action_kind!r}")


def make_river_cleaners(env: FunctionalEnv, params: Any) -> Policy:
    """Cleanup's former ``cooperator``: every agent cleans the river and never eats (a pure public-good provider,
    which earns 0 whatever the others do; kept for comparison, e.g. ``schelling_diagram(..., cooperator=…)``)."""
    return GridForager(cleaners=env.n_agents(params))


def _cleaning_forager(env: FunctionalEnv, params: Any) -> Policy:
    """Cleanup's cooperator: cleans while the river it sees is dirty and eats otherwise (:class:`CleaningForager`)."""
    return CleaningForager()


def _greedy_forager(env: FunctionalEnv, params: Any) -> Policy:
    """Greedy forager; it tags only where tagging removes the hit agent (the default preset). Under
    ``rules="ssd"`` a hit agent stays on the map and only the firer (−1) and the hit agent (−50) pay, so
    tagging gains the tagger nothing and the selfish strategy does not tag."""
    return GridForager(restraint=0, tag=not env.is_ssd(params))


MATRIX_PAIR = {"cooperator": lambda env, params: FixedAction(0), "reciprocator": lambda env, params: MatrixTitForTat(),
               "defector": lambda env, params: FixedAction(1)}  # fmt: skip
#: env name (without "-v0") → role → ``factory(env, params) -> Policy``; coopetition envs use COOPETITION_BOTS
BOT_TABLE: dict[str, dict[str, Callable[[FunctionalEnv, Any], Policy]]] = {
    "PrisonersDilemma": MATRIX_PAIR,
    "StagHunt": MATRIX_PAIR,
    "Chicken": MATRIX_PAIR,
    "PublicGoodsPunishment": {
        "cooperator": lambda env, params: PublicGoodsBot(1.0, punish=False),
        "reciprocator": lambda env, params: PublicGoodsBot("match", punish=True),
        "defector": lambda env, params: PublicGoodsBot(0.0, punish=False),
    },
    "DonorGame": {
        "cooperator": lambda env, params: FixedAction(1),
        "reciprocator": lambda env, params: Discriminator(),
        "defector": lambda env, params: FixedAction(0),
    },
    "Harvest": {
        "cooperator": lambda env, params: GridForager(restraint=4),
        "defector": _greedy_forager,
    },
    "Cleanup": {"cooperator": _cleaning_forager, "defector": _greedy_forager},
    "CoinGame": {
        "cooperator": lambda env, params: CoinChaser(own_only=True),
        "defector": lambda env, params: CoinChaser(own_only=False),
    },
    "CoinGameJaxMARL": {
        "cooperator": lambda env, params: JaxMARLCoinChaser(own_only=True),
        "defector": lambda env, params: JaxMARLCoinChaser(own_only=False),
    },
    "CoopMining": {"cooperator": lambda env, params: OreMiner(gold=True), "defector": lambda env, params: OreMiner(gold=False)},
    "Mushrooms": {
        "cooperator": lambda env, params: MushroomEater(kinds=(2, 3)),
        "defector": lambda env, params: MushroomEater(kinds=(1,)),
    },
    "GiftRefinement": {
        "cooperator": lambda env, params: TokenTrader(gift=True),
        "defector": lambda env, params: TokenTrader(gift=False),
    },
    "Territory": {
        "cooperator": lambda env, params: TerritoryBot(aggressive=False),
        "defector": lambda env, params: TerritoryBot(aggressive=True),
    },
}
IN_THE_MATRIX_BOTS = {"cooperator": lambda env, params: InventoryBot(strategy=0), "defector": lambda env, params: InventoryBot(strategy=1)}
BOT_TABLE["PrisonersDilemmaInTheMatrix"] = IN_THE_MATRIX_BOTS
BOT_TABLE["StagHuntInTheMatrix"] = IN_THE_MATRIX_BOTS
COOPETITION_BOTS: dict[str, Callable[[FunctionalEnv, Any], Policy]] = {
    "cooperator": lambda env, params: Constant(1.0),
    "reciprocator": lambda env, params: TitForTat(relative=True),
    "defector": lambda env, params: Constant(0.0),
}


def bot_table(env_id: str) -> dict[str, Callable[[FunctionalEnv, Any], Policy]]:
    """The roles available on ``env_id`` (``ValueError`` for an env without bots)."""
    from motivegym.core.registry import get_spec

    spec = get_spec(env_id)
    if spec.family == "coopetition":
        return COOPETITION_BOTS
    name = spec.id.removesuffix("-v0")
    if name not in BOT_TABLE:
        with_bots = ", ".join(f"{n}-v0" for n in BOT_TABLE)
        raise ValueError(f"{spec.id} has no scripted bots; envs with bots: every coopetition env, {with_bots}")
    return BOT_TABLE[name]


def bot_roles(env_id: str) -> tuple[str, ...]:
    """The roles ``make_bot`` accepts on ``env_id``, in ``ROLES`` order."""
    return tuple(role for role in ROLES if role in bot_table(env_id))


def make_bot(env_id: str, role: str, env: FunctionalEnv | None = None, params: Any = None) -> Policy:
    """The scripted ``role`` bot of ``env_id`` (a joint policy) for ``env``/``params`` (default ``make_jax(env_id)``;
    pass the env and params of a preset, e.g. ``make_jax("Harvest-v0", preset="ssd", view_encoding="onehot")``)."""
    table = bot_table(env_id)
    if role not in table:
        raise ValueError(f"{env_id}: no {role!r} bot; roles on this env: {', '.join(bot_roles(env_id))}")
    if env is None:
        from motivegym.core.registry import make_jax

        env, params = make_jax(env_id)
    return table[role](env, params)
