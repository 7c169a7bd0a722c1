"""Cooperative Mining (CoopMining-v0): iron a miner extracts alone, gold that pays only to a pair mining it together.

Melting Pot's ``coop_mining`` substrate (``meltingpot/configs/substrates/coop_mining.py`` and
``meltingpot/lua/levels/coop_mining/components.lua``: ``Ore``, ``MineBeam``, ``FixedRateRegrow``) as a JAX grid world.
It is a spatial stag hunt: iron is the hare (a sure, small payoff), gold the stag (a large payoff that needs a partner
in the same few steps, nothing otherwise).
"""

from __future__ import annotations

from typing import Any, ClassVar

import jax
import jax.numpy as jnp
import numpy as np

from motivegym.core.env import Info
from motivegym.core.pytree import pytree_dataclass, static_field
from motivegym.envs.spatial.base import RGB_SCALE, GridSubstrate
from motivegym.envs.spatial.grid import (
    ACTION_NAMES as GRID_ACTION_NAMES,
)
from motivegym.envs.spatial.grid import (
    CELL_COLOURS,
    MELTINGPOT_VIEW,
    AgentState,
    agent_status,
    beam_cells,
    beam_reach,
    decode_actions,
    draw_agents,
    floor_canvas,
    global_state_vector,
    initial_agents,
    occupancy,
    read_cells,
    render_rgb_grid,
    turn_and_move,
    validate_layout,
    validate_view,
    views_of_others,
    window_size,
)
from motivegym.envs.spatial.grid_extensions import countdown_then_fire, first_stops

Array = jax.Array

#: Melting Pot's 27×27 ``coop_mining`` map in this package's legend (:data:`motivegym.envs.spatial.grid.LEGEND`):
#: ``#`` wall, ``a`` ore cell (empty at reset, Melting Pot's ``O`` in state ``oreWait``), ``P`` spawn point (18)
COOP_MINING_LAYOUT = (
    "###########################",
    "#aaaaaaaaaaaaaaaaaaaaaaaaa#",
    "#aPaaaaaaaaaPaaaaaPaaaaaPa#",
    "#aaaaaaaa#aaaaaaaaaaaaaaaa#",
    "#aaaaaaaa#aaaaaaaaaa#aaaaa#",
    "#aaaaaaaa#aaaaaaaaaa#aaaaa#",
    "#aaaaaaaa#######aaaa#aaaPa#",
    "#aPa##aaaa#aaaaaaaaa#aaaaa#",
    "#aaaaaaaaa#aaPaaaaaaaaaaaa#",
    "#aaaaaaaaa#aaaaa###aaaaaaa#",
    "#aaaaaaaaa#aaaaaaaaaaaaaaa#",
    "#aaaaaaaaaaaaaaaaaaaaaaaPa#",
    "#aPaaa###aaaaaa########aaa#",
    "#aa####aaaaaaaaaaaaaaaaaaa#",
    "#aaaaa#aaaa#aaaaaPaaaaaaaa#",
    "#aaaaa#aaaa#aaaaaaaaaaaaPa#",
    "#aaaaa#aaaaa#aaaaaaaa#aaaa#",
    "#aaaaaa#aaaaa####aaaa#aaaa#",
    "#aPaaaaa#aaaaaaaaaaaa#aaaa#",
    "#aaaaaaaa#aaaPaaaaaaaaaaPa#",
    "#aaaaaaaaa#aaaaaaaa#aaaaaa#",
    "#aaaa#aaaaaaaaaaaaa#aaaaaa#",
    "#aaaa#aaaaaaaaa########aaa#",
    "#aaaa#aaaaaaaaaaaa#aaaaaaa#",
    "#aPaaaaaaPaaaaaaaPaaaaaaPa#",
    "#aaaaaaaaaaaaaaaaaaaaaaaaa#",
    "###########################",
)

#: ore states of a cell (``CoopMiningState.ore``)
EMPTY, IRON, GOLD, GOLD_PARTIAL = 0, 1, 2, 3
ORE_NAMES = ("empty", "iron", "gold", "gold_partial")
#: the mine action (Melting Pot's ``MINE``, the eighth action)
MINE = 7
ACTION_NAMES = GRID_ACTION_NAMES[:7] + ("mine",)
#: render colours (Melting Pot's ore palettes, mid tones)
ORE_COLOURS = {"ore_cell": (45, 40, 45), "iron": (140, 120, 140), "gold": (180, 180, 40), "gold_partial": (255, 255, 140)}


@pytree_dataclass
class CoopMiningParams:
    max_steps: Array  # int32 horizon
    iron_reward: Array  # payoff to the miner who extracts an iron ore
    gold_reward: Array  # payoff to each of the miners who extract a gold ore together
    iron_regrowth_prob: Array  # per empty ore cell and step
    gold_regrowth_prob: Array  # per empty ore cell and step (drawn after iron)
    gold_miners: int = static_field()  # distinct miners a gold ore needs (Melting Pot's minNumMiners: 2)
    gold_window: int = static_field()  # steps a partly mined gold ore waits for the other miners (miningWindow: 3)
    mine_cooldown: int = static_field()  # steps between two mine beams of one agent (cooldownTime: 3)
    mine_beam_length: int = static_field()  # cells ahead the mine beam reaches (beamLength: 3)
    layout: tuple[str, ...] = static_field()
    n_agents: int = static_field()
    view_ahead: int = static_field()
    view_behind: int = static_field()
    view_side: int = static_field()


@pytree_dataclass
class CoopMiningState:
    agents: AgentState
    ore: Array  # [H, W] int32: EMPTY, IRON, GOLD, GOLD_PARTIAL
    gold_countdown: Array  # [H, W] int32: steps a partly mined gold ore keeps its miners (0 elsewhere)
    pending_gold: Array  # [n, 2] int32: the partly mined gold ore each agent is a miner of, (-1, -1) if none
    cooldown: Array  # [n] int32: steps until the mine beam is ready (0 = ready)
    t: Array  # int32 steps taken


def mine_targets(pos: Array, orient: Array, firing: Array, live_ore: Array, walls: Array, length: int) -> tuple[Array, Array]:
    """``(hit [n] bool, cell [n, 2])``: the first live ore within ``length`` cells straight ahead of each firing agent.

    Melting Pot's mine beam (``beamRadius=0``): one lane, stopped by walls (``BeamBlocker``) and absorbed by the first
    raw or partly mined ore (``Ore:onHit`` returns true); agents do not block it
    (:func:`~motivegym.envs.spatial.grid_extensions.first_stops` with no targetable agent). ``cell`` is ``(-1, -1)``
    without a hit.
    """
    cells = beam_cells(pos, orient, length, 1)
    nobody = jnp.zeros(pos.shape[0], bool)
    _, ore_hits = first_stops(cells, beam_reach(cells, walls), firing, pos, nobody, live_ore)
    ore_hits, cells = ore_hits[:, 0], cells[:, 0]  # the one lane: [n, L], [n, L, 2]
    hit = jnp.any(ore_hits, axis=1)
    cell = jnp.take_along_axis(cells, jnp.argmax(ore_hits, axis=1)[:, None, None], axis=1)[:, 0]
    return hit, jnp.where(hit[:, None], cell, -1)


def resolve_mining(
    ore: Array, countdown: Array, pending: Array, hit: Array, cell: Array, gold_miners: int, gold_window: int
) -> tuple[Array, Array, Array, Array, Array]:
    """One step of Melting Pot's ``Ore`` components: ``(ore, countdown, pending, iron_extracted [n], gold_extracted [n])``.

    * An iron ore hit is extracted at once (``minNumMiners=1``) by the hitter of lowest index; others' beams are absorbed.
    * A gold ore hit adds the hitter to the ore's miners (each agent counts once; its record is ``pending``), turns the ore
      partly mined and restarts its countdown at ``gold_window``. When the miners reach ``gold_miners`` the ore is
      extracted: every pending miner and the first new hitters (lowest index first) up to ``gold_miners`` are paid and
      the ore is gone. Melting Pot processes hits one by one, so later hitters of the same step find it gone.
    """
    n = hit.shape[0]
    h, w = ore.shape
    kind = jnp.where(hit, ore[jnp.clip(cell[:, 0], 0, h - 1), jnp.clip(cell[:, 1], 0, w - 1)], EMPTY)
    same = jnp.all(cell[:, None, :] == cell[None, :, :], axis=-1) & hit[:, None] & hit[None, :]  # [i, j] same target
    earlier = jnp.arange(n)[None, :] < jnp.arange(n)[:, None]  # [i, j]: j < i

    iron_extracted = (kind == IRON) & ~jnp.any(same & earlier, axis=1)

    on_gold = hit & ((kind == GOLD) | (kind == GOLD_PARTIAL))
    pending_on = jnp.all(pending[None, :, :] == cell[:, None, :], axis=-1) & on_gold[:, None]  # [i, j]: j already mines i's ore
    already = jnp.any(pending_on & jnp.eye(n, dtype=bool), axis=1)  # i re-hits its own pending ore
    new = on_gold & ~already
    same_new = same & new[:, None] & new[None, :]
    rank = jnp.sum(same_new & earlier, axis=1)  # new hitters of the same ore before i
    existing = jnp.sum(pending_on, axis=1)  # pending miners of i's ore
    total = existing + jnp.sum(same_new, axis=1)
    completes = on_gold & (total >= gold_miners)  # i's ore is extracted this step
    paid_new = completes & new & (existing + rank < gold_miners)
    pending_paid = jnp.any(pending_on & completes[:, None], axis=0)  # j is a pending miner of an extracted ore
    gold_extracted = paid_new | pending_paid

    rows, cols = jnp.where(hit, cell[:, 0], h), cell[:, 1]  # rows out of range are dropped
    mined_out = (kind == IRON) | completes
    left_partial = on_gold & ~completes
    ore = ore.at[jnp.where(left_partial, rows, h), cols].set(GOLD_PARTIAL, mode="drop")
    ore = ore.at[jnp.where(mined_out, rows, h), cols].set(EMPTY, mode="drop")
    countdown = countdown.at[jnp.where(left_partial, rows, h), cols].set(gold_window, mode="drop")
    countdown = countdown.at[jnp.where(completes, rows, h), cols].set(0, mode="drop")
    pending = jnp.where(pending_paid[:, None], -1, pending)
    pending = jnp.where(left_partial[:, None], cell, pending)  # an agent's record follows its latest gold hit
    return ore, countdown, pending, iron_extracted, gold_extracted


def expire_partial_gold(ore: Array, countdown: Array, pending: Array) -> tuple[Array, Array, Array]:
    """Melting Pot's ``Ore:update``: each partly mined gold ore's countdown drops by one; at 0 it reverts to raw gold and
    forgets its miners (run before the step's hits, so a first hit at step ``t`` accepts partners until ``t + window − 1``)."""
    partial = ore == GOLD_PARTIAL
    countdown = jnp.where(partial, jnp.maximum(countdown - 1, 0), 0)
    expired = partial & (countdown == 0)
    ore = jnp.where(expired, GOLD, ore)
    pending_cell_expired = read_cells(expired, pending, outside=False)
    return ore, countdown, jnp.where(pending_cell_expired[:, None], -1, pending)


def regrow_ore(key: Array, ore: Array, ore_cells: np.ndarray, blocked: Array, iron_prob: Array, gold_prob: Array) -> Array:
    """Melting Pot's ``FixedRateRegrow``: each empty ore cell not under an agent turns iron with ``iron_prob``, else gold
    with ``gold_prob`` (independent per cell and step). One uniform ``u`` per ore cell decides both: iron if
    ``u < iron_prob``, gold if ``iron_prob ≤ u < iron_prob + (1 − iron_prob)·gold_prob`` (the same probabilities as two
    draws, half the random bits: random bits dominate the step's cost on CPU)."""
    cells = jnp.asarray(ore_cells)
    u = jax.random.uniform(key, (cells.shape[0],))
    kind = jnp.where(u < iron_prob, IRON, jnp.where(u < iron_prob + (1.0 - iron_prob) * gold_prob, GOLD, EMPTY))
    grows = jnp.zeros(ore.shape, jnp.int32).at[cells[:, 0], cells[:, 1]].set(kind)
    return jnp.where((ore == EMPTY) & ~blocked, grows, ore)


class CoopMining(GridSubstrate):
    """Cooperative Mining: mine iron alone for 1, or gold with a partner within 3 steps for 8 each.

    * **Mechanism:** spatial stag hunt (Melting Pot ``coop_mining``). Ore appears at random on empty ore cells; agents
      extract it with a mine beam. **Iron** is extracted by one hit: ``+iron_reward`` (1) to the hitter. **Gold** needs
      ``gold_miners`` (2) distinct agents: the first hit makes it *partly mined* (it flashes in Melting Pot) and starts a
      countdown of ``gold_window`` (3) steps, restarted by every further hit; when the miners reach ``gold_miners`` the
      ore is extracted and each of them gets ``+gold_reward`` (8). If the countdown runs out first, the ore reverts to raw
      gold and its miners are forgotten (they get nothing). A first hit at step ``t`` accepts partners at steps
      ``t .. t + gold_window − 1``.
    * **Regrowth:** each step every empty ore cell not under an agent grows iron with probability
      ``iron_regrowth_prob`` (0.0002), else gold with ``gold_regrowth_prob`` (0.00008); every ore cell is empty at
      reset, as in Melting Pot (``oreWait``).
    * **Agents:** ``n_agents`` (default 6, Melting Pot's default) identical miners on distinct random spawn points.
    * **Actions:** ``Discrete(8)`` in Melting Pot order: 0 noop, 1 forward, 2 backward, 3 step left, 4 step right,
      5 turn left, 6 turn right, 7 mine; out-of-range indices act as noop. Moves and collisions as in
      :func:`motivegym.envs.spatial.grid.move`; agents walk over ore. The mine beam reaches ``mine_beam_length`` (3)
      cells straight ahead, stops at walls and at the first raw or partly mined ore (agents do not block it), and can
      fire once every ``mine_cooldown`` (3) steps. Hits of one step on the same ore are processed in agent-index order.
    * **Observation:** per agent ``[(view_ahead + view_behind + 1)·(2·view_side + 1)·5 + 1]``: the egocentric window
      (default 9 ahead, 1 behind, 5 to each side: 11×11) rotated to the agent's facing, each cell one-hot over (wall,
      iron, gold, partly mined gold, other agent), cells off the grid read wall, flattened row-major (row, column,
      channel); then Melting Pot's ``READY_TO_SHOOT`` flag (1 when the beam can fire next step).
      Global state: the map's (iron, gold, partly mined gold, agent) channels ``H·W·4``, per agent (row/H, col/W,
      orientation one-hot, removed = 0) ``7n``, the ready flags ``n`` and ``t/max_steps``.
    * **Payoff:** ``iron_reward·[extracted an iron ore] + gold_reward·[among the miners of an extracted gold ore]``.
      Nothing else (Melting Pot's role rewards are 0 for the default role).
    * **Termination:** never terminates; truncation at ``max_steps`` (1000; Melting Pot ends episodes at random
      after 1000 steps).
    * **Info:** ``step``, ``iron_count``, ``gold_count``, ``partial_gold_count``; after a step also ``mine_fired [n]``,
      ``iron_extracted [n]``, ``gold_extracted [n]`` (bool), ``gold_hits [n]`` (hits on gold that did not extract it).
    * **Defaults:** Melting Pot's ``coop_mining`` values and its 27×27 map (538 ore cells), 6 agents, 11×11 view,
      ``iron_reward`` 1, ``gold_reward`` 8, ``gold_miners`` 2, ``gold_window`` 3, beam 3 cells with cooldown 3,
      1000 steps (the numbers in parentheses above).
    * Differences from Melting Pot and SocialJax: ``docs/mining_mushrooms.md``.
    """

    name: ClassVar[str] = "CoopMining"
    substrate_actions: ClassVar[tuple[str, ...]] = ACTION_NAMES
    channel_names: ClassVar[tuple[str, ...]] = ("wall", "iron", "gold", "gold_partial", "agent")

    # ----- params -----
    def make_params(self) -> CoopMiningParams:
        return CoopMiningParams(
            max_steps=jnp.int32(1000),
            iron_reward=jnp.float32(1.0),
            gold_reward=jnp.float32(8.0),
            iron_regrowth_prob=jnp.float32(0.0002),
            gold_regrowth_prob=jnp.float32(0.00008),
            gold_miners=2,
            gold_window=3,
            mine_cooldown=3,
            mine_beam_length=3,
            layout=COOP_MINING_LAYOUT,
            n_agents=6,
            **MELTINGPOT_VIEW,
        )

    def validate(self, params: CoopMiningParams) -> None:
        """Raise ``ValueError`` on params the dynamics cannot honour."""
        layout = self.layout(params)
        validate_layout(layout, params.n_agents, self.name)
        if not layout.apple_spawn.any():
            raise ValueError(f"{self.name}: the layout has no ore cells ('a')")
        if not 1 <= params.gold_miners <= params.n_agents:
            raise ValueError(f"{self.name}: gold_miners must lie in [1, n_agents={params.n_agents}], got {params.gold_miners}")
        for name in ("gold_window", "mine_cooldown", "mine_beam_length"):
            if int(getattr(params, name)) < 1:
                raise ValueError(f"{self.name}: {name} must be >= 1, got {getattr(params, name)}")
        validate_view(params, self.name)

    # ----- reset / step -----
    def reset(self, key: Array, params: CoopMiningParams) -> tuple[CoopMiningState, Array]:
        layout = self.layout(params)
        n = params.n_agents
        state = CoopMiningState(
            agents=initial_agents(key, layout.spawn_points, n),
            ore=jnp.zeros(layout.shape, jnp.int32),
            gold_countdown=jnp.zeros(layout.shape, jnp.int32),
            pending_gold=jnp.full((n, 2), -1, jnp.int32),
            cooldown=jnp.zeros(n, jnp.int32),
            t=jnp.int32(0),
        )
        return state, self.observe(state, params)

    def step(self, key: Array, state: CoopMiningState, actions: Array, params: CoopMiningParams):
        """Order: decode; turn, move; partly mined gold counts down (expiry); beams fire from the new cells and hit
        (iron, gold); regrowth on empty ore cells not under an agent; ``t ← t + 1``; truncation at ``max_steps``."""
        layout = self.layout(params)
        walls = jnp.asarray(layout.walls)
        move_key, regrow_key = jax.random.split(key)
        n = params.n_agents
        decoded = decode_actions(actions, self.num_actions(params), jnp.ones(n, bool))
        agents = turn_and_move(move_key, state.agents, decoded, walls)

        ore, countdown, pending = expire_partial_gold(state.ore, state.gold_countdown, state.pending_gold)
        fired, cooldown = countdown_then_fire(state.cooldown, decoded == MINE, params.mine_cooldown)
        hit, cell = mine_targets(agents.pos, agents.orient, fired, ore != EMPTY, walls, params.mine_beam_length)
        kind = read_cells(ore, jnp.where(hit[:, None], cell, 0), outside=EMPTY)
        ore, countdown, pending, iron, gold = resolve_mining(ore, countdown, pending, hit, cell, params.gold_miners, params.gold_window)
        payoffs = params.iron_reward * iron.astype(jnp.float32) + params.gold_reward * gold.astype(jnp.float32)

        blocked = occupancy(agents.pos, jnp.ones(n, bool), layout.shape)
        ore = regrow_ore(regrow_key, ore, layout.apple_cells, blocked, params.iron_regrowth_prob, params.gold_regrowth_prob)
        new_state = CoopMiningState(agents=agents, ore=ore, gold_countdown=countdown, pending_gold=pending, cooldown=cooldown, t=state.t + 1)

        gold_hits = hit & ((kind == GOLD) | (kind == GOLD_PARTIAL)) & ~gold
        step_info = {"mine_fired": fired, "iron_extracted": iron, "gold_extracted": gold, "gold_hits": gold_hits}
        return self.finish_step(new_state, params, payoffs, step_info)

    def describe(self, state: CoopMiningState, params: Any) -> Info:
        return {
            "step": state.t,
            "iron_count": jnp.sum(state.ore == IRON).astype(jnp.int32),
            "gold_count": jnp.sum(state.ore == GOLD).astype(jnp.int32),
            "partial_gold_count": jnp.sum(state.ore == GOLD_PARTIAL).astype(jnp.int32),
        }

    # ----- observations -----
    def grid_channels(self, state: CoopMiningState, params: CoopMiningParams) -> Array:
        """bool ``[H, W, 5]``: wall, iron, gold, partly mined gold, agent."""
        layout = self.layout(params)
        agents = occupancy(state.agents.pos, jnp.ones(params.n_agents, bool), layout.shape)
        ore = state.ore
        return jnp.stack([jnp.asarray(layout.walls), ore == IRON, ore == GOLD, ore == GOLD_PARTIAL, agents], axis=-1)

    def ready(self, state: CoopMiningState) -> Array:
        """float32 ``[n]``: 1 where the mine beam can fire next step (cooldown ≤ 1)."""
        return (state.cooldown <= 1).astype(jnp.float32)

    def observe(self, state: CoopMiningState, params: CoopMiningParams) -> Array:
        """``[n, window·5 + 1]``: the rotated window of one-hot channels (other agents only), then the ready flag."""
        channels = self.grid_channels(state, params)
        views = views_of_others(channels, state.agents.pos, state.agents.orient, params.view_ahead, params.view_behind, params.view_side)
        return jnp.concatenate([views, self.ready(state)[:, None]], axis=1)

    def observation_size(self, params: CoopMiningParams) -> int:
        return window_size(params.view_ahead, params.view_behind, params.view_side) * len(self.channel_names) + 1

    def global_state(self, state: CoopMiningState, params: CoopMiningParams) -> Array:
        return global_state_vector(self.grid_channels(state, params)[..., 1:], state.agents, state.t, params.max_steps, self.ready(state))

    # ----- rendering -----
    def render_text(self, state: CoopMiningState, params: CoopMiningParams) -> str:
        """``#`` wall, ``.`` ore cell, ``i`` iron, ``g`` gold, ``G`` partly mined gold, digits agents."""
        layout = self.layout(params)
        chars = np.full(layout.shape, " ")
        chars[layout.apple_spawn] = "."
        chars[layout.walls] = "#"
        ore = np.asarray(state.ore)
        for value, symbol in ((IRON, "i"), (GOLD, "g"), (GOLD_PARTIAL, "G")):
            chars[ore == value] = symbol
        draw_agents(chars, state.agents)
        return "\n".join([self.step_header(state, params)] + ["".join(row) for row in chars] + ["agents: " + " ".join(agent_status(state.agents))])

    def render_rgb(self, state: CoopMiningState, params: CoopMiningParams) -> np.ndarray:
        """uint8 ``[H·8, W·8, 3]``: walls grey, ore cells dark, iron mauve, gold yellow, partly mined gold pale yellow."""
        layout = self.layout(params)
        rgb = floor_canvas(layout.shape)
        rgb[layout.apple_spawn] = ORE_COLOURS["ore_cell"]
        ore = np.asarray(state.ore)
        rgb[ore == IRON] = ORE_COLOURS["iron"]
        rgb[ore == GOLD] = ORE_COLOURS["gold"]
        rgb[ore == GOLD_PARTIAL] = ORE_COLOURS["gold_partial"]
        rgb[layout.walls] = CELL_COLOURS["wall"]
        return render_rgb_grid(rgb, state.agents, scale=RGB_SCALE)


__all__ = ["CoopMining", "CoopMiningParams", "CoopMiningState", "COOP_MINING_LAYOUT"]
