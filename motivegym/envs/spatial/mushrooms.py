"""Externality Mushrooms (Mushrooms-v0): mushrooms whose payoff goes to the eater, to everyone, or to everyone else.

Melting Pot's ``externality_mushrooms`` substrate on its ``__dense`` map (``meltingpot/configs/substrates/
externality_mushrooms.py`` and ``externality_mushrooms__dense.py``; rules in ``meltingpot/lua/levels/
externality_mushrooms/components.lua``: ``MushroomEating``, ``MushroomRegrowth``, ``Perishable``, ``Destroyable``; the
zapper's ``GraduatedSanctionsMarking`` in ``meltingpot/lua/modules/avatar_library.lua``) as a JAX grid world. An
immediate-feedback collective action problem: a mushroom pays off the moment it is eaten, but the ones worth most to
the group pay the eater little or nothing and freeze it longest while it digests.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, ClassVar

import jax
import jax.numpy as jnp
import numpy as np

from motivegym.core.env import Info
from motivegym.core.pytree import pytree_dataclass, static_field
from motivegym.envs.spatial.base import RGB_SCALE, GridSubstrate
from motivegym.envs.spatial.grid import ACTION_NAMES as GRID_ACTION_NAMES
from motivegym.envs.spatial.grid import (
    FIRE_TAG,
    FORWARD,
    MELTINGPOT_VIEW,
    NOOP,
    TURN_RIGHT,
    AgentState,
    agent_status,
    beam_cells,
    beam_grid,
    beam_hits,
    beam_reach,
    char_grid,
    decode_actions,
    draw_agents,
    global_state_vector,
    initial_agents,
    occupancy,
    on_map,
    read_cells,
    remove_and_respawn,
    render_rgb_grid,
    turn_and_move,
    views_of_others,
    window_size,
)
from motivegym.envs.spatial.grid_extensions import countdown_then_fire, graduated_sanctions

Array = jax.Array

#: Melting Pot's ``externality_mushrooms__dense`` map (14×23; its fence and wall-shadow tiles are walls ``#``):
#: every floor cell ``' '`` is a spawn point and a potential mushroom; ``R G B O`` hold a red, green, blue, orange
#: mushroom at reset
MUSHROOMS_LAYOUT = (
    "#######################",
    "#######################",
    "#                     #",
    "# R             G     #",
    "#        R            #",
    "#                     #",
    "#           G         #",
    "#   B     O           #",
    "#                  B  #",
    "#        R            #",
    "#                     #",
    "#    B        G       #",
    "#                     #",
    "#######################",
)
#: mushroom kinds of a cell (``MushroomsState.mushroom``); Melting Pot's names in ``MELTING_POT_NAMES``
EMPTY, RED, GREEN, BLUE, ORANGE = range(5)
KIND_NAMES = ("red", "green", "blue", "orange")
MELTING_POT_NAMES = (
    "fullInternalityZeroExternality",
    "halfInternalityHalfExternality",
    "zeroInternalityFullExternality",
    "negativeInternalityNegativeExternality",
)
LEGEND = {"#": "wall", " ": "floor: spawn point and potential mushroom", "R": "red mushroom at reset",
          "G": "green mushroom at reset", "B": "blue mushroom at reset", "O": "orange mushroom at reset"}  # fmt: skip
#: the zap action (Melting Pot's ``FIRE_ZAP``, the eighth action)
ZAP = FIRE_TAG
ACTION_NAMES = GRID_ACTION_NAMES[:7] + ("zap",)
#: at most this many spores per eaten mushroom (Melting Pot: 3); fixes the shape of the regrowth draws
MAX_SPORES = 3
#: Melting Pot's ``mushroomsToProbabilities``: row = kind eaten, column = kind that may grow (red, green, blue, orange)
REGROWTH_PROBS = (
    (0.25, 0.0, 0.0, 0.0),
    (0.25, 0.4, 0.0, 0.0),
    (0.25, 0.4, 0.6, 0.0),
    (0.0, 0.0, 0.0, 1.0),
)
KIND_COLOURS = np.array([[40, 40, 40], [220, 50, 50], [60, 190, 60], [60, 110, 230], [245, 150, 30]], np.uint8)
WALL_COLOUR = (130, 110, 80)


@dataclasses.dataclass(frozen=True)
class MushroomLayout:
    """A parsed mushroom map (numpy, host side)."""

    walls: np.ndarray  # [H, W] bool
    mushroom_cells: np.ndarray  # [K, 2] int32: every cell a mushroom can grow on (floor and R/G/B/O)
    initial: np.ndarray  # [H, W] int32 kind at reset
    spawn_points: np.ndarray  # [S, 2] int32: the floor cells ' '

    @property
    def shape(self) -> tuple[int, int]:
        return self.walls.shape


@functools.lru_cache(maxsize=32)
def parse_mushroom_layout(rows: tuple[str, ...]) -> MushroomLayout:
    """Parse a map in :data:`LEGEND`; ragged rows or unknown characters raise ``ValueError``."""
    grid = char_grid(rows, LEGEND)
    initial = np.zeros(grid.shape, np.int32)
    for kind, char in enumerate("RGBO", start=1):
        initial[grid == char] = kind
    return MushroomLayout(
        walls=grid == "#",
        mushroom_cells=np.argwhere(grid != "#").astype(np.int32).reshape(-1, 2),
        initial=initial,
        spawn_points=np.argwhere(grid == " ").astype(np.int32).reshape(-1, 2),
    )


@pytree_dataclass
class MushroomsParams:
    max_steps: Array  # int32 horizon
    mushroom_rewards: Array  # [4] total payoff of eating red, green, blue, orange (1, 2, 3, −1)
    digestion_steps: Array  # [4] steps the eater cannot move or turn (0, 10, 15, 15)
    spores: Array  # [4] regrowth draws per eaten mushroom, at most MAX_SPORES (3, 3, 3, 1)
    regrowth_probs: Array  # [4, 4] P(kind column grows | a spore of kind row) (REGROWTH_PROBS)
    perish_steps: Array  # [4] steps an uneaten mushroom lasts (200, 100, 75, 1e7)
    orange_destroys_red: Array  # probability that each red mushroom vanishes when an orange one is eaten (0.25)
    zap_freeze_steps: Array  # int32 steps a first zap freezes its target (25)
    zap_timeout: Array  # int32 steps a second zap removes its target from the map (50)
    sanction_recovery: Array  # int32 steps after which a marked agent is unmarked (50)
    zap_cooldown: int = static_field()  # steps between two zaps (3)
    zap_beam_length: int = static_field()  # 3
    zap_beam_width: int = static_field()  # 3 (Melting Pot's beamRadius 1)
    layout: tuple[str, ...] = static_field()
    n_agents: int = static_field()
    view_ahead: int = static_field()
    view_behind: int = static_field()
    view_side: int = static_field()


@pytree_dataclass
class MushroomsState:
    agents: AgentState
    mushroom: Array  # [H, W] int32: EMPTY, RED, GREEN, BLUE, ORANGE
    age: Array  # [H, W] int32 steps each mushroom has existed
    frozen: Array  # [n] int32 steps the agent cannot move or turn (digestion, zap freeze)
    zap_blocked: Array  # [n] int32 steps the agent cannot zap (zap freeze)
    cooldown: Array  # [n] int32 steps until the zapper is ready
    marked: Array  # [n] bool: zapped once (Melting Pot's sanction level 2)
    marked_for: Array  # [n] int32 steps since the agent was marked
    t: Array  # int32 steps taken


def shares(n: int) -> tuple[np.ndarray, np.ndarray]:
    """``(eater, each_other)`` share of a mushroom's total reward, per kind (Melting Pot ``MushroomEating``):
    red all to the eater; green ``1/n`` to everyone; blue ``1/(n−1)`` to everyone but the eater; orange ``1/n`` to
    everyone."""
    eater = np.array([1.0, 1.0 / n, 0.0, 1.0 / n], np.float32)
    other = np.array([0.0, 1.0 / n, 1.0 / (n - 1), 1.0 / n], np.float32)
    return eater, other


def eating_payoffs(eaten: Array, rewards: Array, n: int) -> Array:
    """float32 ``[n]``: ``π_j = Σ_k R_k (eater_k·[j ate k] + other_k·#{i ≠ j ate k})`` for ``eaten [n]`` kinds (0 = none)."""
    ate = jax.nn.one_hot(eaten - 1, 4, dtype=jnp.float32)  # [n, 4]; kind 0 -> all zeros
    eater, other = shares(n)
    per_kind_others = jnp.sum(ate, axis=0)[None, :] - ate  # [n, 4] others who ate kind k
    return jnp.sum(rewards[None, :] * (ate * eater[None, :] + per_kind_others * other[None, :]), axis=1)


def spore_regrowth(key: Array, mushroom: Array, eaten: Array, blocked: Array, params: MushroomsParams, cells: np.ndarray) -> tuple[Array, Array]:
    """Melting Pot ``MushroomRegrowth:grow``: ``(mushroom, grown [H, W])`` after the spores of the eaten mushrooms.

    Each eaten mushroom of kind ``k`` releases ``spores[k]`` spores; each spore tries every kind ``m`` in turn and, with
    probability ``regrowth_probs[k, m]``, picks a uniformly random empty mushroom cell and grows ``m`` there unless an
    agent stands on it. Draws are ordered (eater index, spore, kind); a later draw overwrites an earlier one on the
    same cell, as the sequential Lua does.
    """
    n = eaten.shape[0]
    h, w = mushroom.shape
    cells = jnp.asarray(cells)
    kinds = jnp.clip(eaten - 1, 0, 3)
    spore = jnp.arange(MAX_SPORES)
    active = (eaten[:, None, None] > 0) & (spore[None, :, None] < params.spores[kinds][:, None, None])  # [n, S, 1]
    chance_key, cell_key = jax.random.split(key)
    shape = (n, MAX_SPORES, 4)
    grows = active & (jax.random.uniform(chance_key, shape) < params.regrowth_probs[kinds][:, None, :])
    empty = mushroom[cells[:, 0], cells[:, 1]] == EMPTY  # [K]
    count = jnp.sum(empty)
    ranks = jnp.cumsum(empty)
    pick = jnp.floor(jax.random.uniform(cell_key, shape) * count).astype(jnp.int32)
    index = jnp.clip(jnp.searchsorted(ranks, pick + 1, side="left"), 0, cells.shape[0] - 1)
    target = cells[index]  # [n, S, 4, 2]
    lands = grows & (count >= 1) & ~blocked[target[..., 0], target[..., 1]]
    order = jnp.arange(n * MAX_SPORES * 4).reshape(shape)
    last = jnp.full((h, w), -1, jnp.int32).at[target[..., 0], target[..., 1]].max(jnp.where(lands, order, -1))
    grown_kind = (jnp.maximum(last, 0) % 4 + 1).astype(jnp.int32)  # the kind index is the last axis of ``order``
    grown = last >= 0
    return jnp.where(grown, grown_kind, mushroom), grown


class Mushrooms(GridSubstrate):
    """Externality Mushrooms: red pays the eater, green everyone, blue everyone else, orange costs everyone.

    * **Mechanism:** immediate-feedback collective action problem (Melting Pot ``externality_mushrooms__dense``).
      Eating a mushroom (stepping onto it) pays, with ``R = mushroom_rewards`` (1, 2, 3, −1) and ``n`` agents:
      **red** ``R_red`` to the eater; **green** ``R_green/n`` to every agent, eater included; **blue** ``R_blue/(n−1)``
      to every agent but the eater; **orange** ``R_orange/n`` to every agent (a cost shared by all). The eater then
      digests, unable to move or turn, for ``digestion_steps`` (0, 10, 15, 15) steps.
    * **Regrowth (spores):** each eaten mushroom of kind ``k`` releases ``spores[k]`` (3, 3, 3, 1) spores; each spore
      grows kind ``m`` with probability ``regrowth_probs[k, m]`` on a uniformly random empty cell not under an agent
      (red spores grow red 0.25; green spores red 0.25, green 0.4; blue spores red 0.25, green 0.4, blue 0.6; orange
      spores orange 1.0), so prosocial eating is what sustains the prosocial mushrooms. Eating an orange mushroom also
      destroys each red mushroom with probability ``orange_destroys_red`` (0.25). An uneaten mushroom perishes after
      ``perish_steps`` (red 200, green 100, blue 75, orange never in practice: 1e7).
    * **Zapping:** ``zap`` fires a beam ``zap_beam_width`` (3) lanes × ``zap_beam_length`` (3) cells ahead, stopped by
      walls, at most once per ``zap_cooldown`` (3) steps. It destroys every mushroom it covers. An agent hit the first
      time is frozen (no move, turn or zap) for ``zap_freeze_steps`` (25) and marked; hit again while marked (or twice
      in one step) it is removed for ``zap_timeout`` (50) steps and unmarked; a mark fades after
      ``sanction_recovery`` (50) steps on the map (Melting Pot's graduated sanctions). Zapping pays nothing.
    * **Agents:** ``n_agents`` (default 5, the dense map's default; at least 2) on random floor cells.
    * **Actions:** ``Discrete(8)`` in Melting Pot order: 0 noop, 1 forward, 2 backward, 3 step left, 4 step right,
      5 turn left, 6 turn right, 7 zap; out-of-range indices act as noop; frozen agents' moves and turns, and blocked
      agents' zaps, act as noop. Moves and collisions as :func:`motivegym.envs.spatial.grid.move`.
    * **Observation:** per agent ``[(view_ahead + view_behind + 1)·(2·view_side + 1)·6 + 2]``: the egocentric window
      (default 9 ahead, 1 behind, 5 each side) one-hot over (wall, red, green, blue, orange, other agent), off-grid
      cells read wall, flattened row-major (row, column, channel); then the ready-to-zap flag and the removed flag (a
      removed agent sees zeros). Global state: map channels (red, green, blue, orange, agent) ``H·W·5``, per-agent
      features ``7n``, ready flags ``n``, ``t/max_steps``.
    * **Payoff:** the eating payoffs above, summed per agent over the step's eaters (red to the eater, green and orange
      to all, blue to all but the eater); zapping, digestion and sanctions pay nothing.
    * **Step order:** decode; turn, move; eat (payoffs, digestion); spores and orange's red blight; zaps (mushrooms
      destroyed, sanctions); mushrooms age and perish; timers count down, removals and respawns; ``t ← t + 1``.
    * **Termination:** never terminates; truncation at ``max_steps`` (1000; Melting Pot ends at random after 1000).
    * **Info:** ``step``, ``red_count``, ``green_count``, ``blue_count``, ``orange_count``, ``removed [n]``; after a step
      also ``eaten [n]`` (kind eaten, 0 none), ``fired_zap [n]``, ``zap_hits [n, n]`` (firer, target), ``frozen [n]``.
    * **Defaults:** Melting Pot's ``externality_mushrooms__dense`` config values (in parentheses above; where its
      module docstring states other numbers the config's are used) and its dense map, 5 agents, 11×11 view, 1000 steps.
    * Differences from Melting Pot and SocialJax: ``docs/mining_mushrooms.md``.
    """

    name: ClassVar[str] = "Mushrooms"
    substrate_actions: ClassVar[tuple[str, ...]] = ACTION_NAMES
    channel_names: ClassVar[tuple[str, ...]] = ("wall", "red", "green", "blue", "orange", "agent")

    # ----- params -----
    def make_params(self) -> MushroomsParams:
        return MushroomsParams(
            max_steps=jnp.int32(1000),
            mushroom_rewards=jnp.asarray([1.0, 2.0, 3.0, -1.0], jnp.float32),
            digestion_steps=jnp.asarray([0.0, 10.0, 15.0, 15.0], jnp.float32),
            spores=jnp.asarray([3.0, 3.0, 3.0, 1.0], jnp.float32),
            regrowth_probs=jnp.asarray(REGROWTH_PROBS, jnp.float32),
            perish_steps=jnp.asarray([200.0, 100.0, 75.0, 1e7], jnp.float32),
            orange_destroys_red=jnp.float32(0.25),
            zap_freeze_steps=jnp.int32(25),
            zap_timeout=jnp.int32(50),
            sanction_recovery=jnp.int32(50),
            zap_cooldown=3,
            zap_beam_length=3,
            zap_beam_width=3,
            layout=MUSHROOMS_LAYOUT,
            n_agents=5,
            **MELTINGPOT_VIEW,
        )

    def validate(self, params: MushroomsParams) -> None:
        """Raise ``ValueError`` on params the dynamics cannot honour."""
        layout = self.layout(params)
        if params.n_agents < 2:
            raise ValueError(f"{self.name}: n_agents must be >= 2 (blue mushrooms pay the others), got {params.n_agents}")
        if len(layout.spawn_points) < params.n_agents:
            raise ValueError(f"{self.name}: the layout has {len(layout.spawn_points)} floor cells (spawn points) for {params.n_agents} agents")
        spores = np.asarray(params.spores)
        if np.any(spores < 0) or np.any(spores > MAX_SPORES):
            raise ValueError(f"{self.name}: spores must lie in [0, {MAX_SPORES}], got {spores.tolist()}")
        for name in ("zap_cooldown", "zap_beam_length"):
            if int(getattr(params, name)) < 1:
                raise ValueError(f"{self.name}: {name} must be >= 1, got {getattr(params, name)}")
        if params.zap_beam_width < 1 or params.zap_beam_width % 2 == 0:
            raise ValueError(f"{self.name}: zap_beam_width must be odd and >= 1, got {params.zap_beam_width}")

    def layout(self, params: MushroomsParams) -> MushroomLayout:
        """The parsed map (this module's :data:`LEGEND`)."""
        return parse_mushroom_layout(tuple(params.layout))

    # ----- reset / step -----
    def reset(self, key: Array, params: MushroomsParams) -> tuple[MushroomsState, Array]:
        layout = self.layout(params)
        n = params.n_agents
        zeros = jnp.zeros(n, jnp.int32)
        state = MushroomsState(
            agents=initial_agents(key, layout.spawn_points, n),
            mushroom=jnp.asarray(layout.initial),
            age=jnp.zeros(layout.shape, jnp.int32),
            frozen=zeros,
            zap_blocked=zeros,
            cooldown=zeros,
            marked=jnp.zeros(n, bool),
            marked_for=zeros,
            t=jnp.int32(0),
        )
        return state, self.observe(state, params)

    def step(self, key: Array, state: MushroomsState, actions: Array, params: MushroomsParams):
        layout = self.layout(params)
        walls = jnp.asarray(layout.walls)
        move_key, spore_key, blight_key, respawn_key = jax.random.split(key, 4)
        n = params.n_agents
        active = on_map(state.agents)
        decoded = decode_actions(actions, self.num_actions(params), active)
        moving_or_turning = (decoded >= FORWARD) & (decoded <= TURN_RIGHT)
        decoded = jnp.where(moving_or_turning & (state.frozen > 0), NOOP, decoded)
        decoded = jnp.where((decoded == ZAP) & (state.zap_blocked > 0), NOOP, decoded)
        agents = turn_and_move(move_key, state.agents, decoded, walls)

        # eating (Melting Pot MushroomEating:onEnter)
        under = read_cells(state.mushroom, agents.pos, outside=EMPTY)
        eaten = jnp.where(active, under, EMPTY)
        ate = eaten > EMPTY
        payoffs = eating_payoffs(eaten, params.mushroom_rewards, n)
        mushroom = jnp.where(occupancy(agents.pos, ate, layout.shape), EMPTY, state.mushroom)
        digestion = params.digestion_steps[jnp.clip(eaten - 1, 0, 3)].astype(jnp.int32)
        frozen = jnp.where(ate, jnp.maximum(state.frozen, digestion), state.frozen)

        # spores, then orange's blight on red
        blocked = occupancy(agents.pos, active, layout.shape)
        mushroom, grown = spore_regrowth(spore_key, mushroom, eaten, blocked, params, layout.mushroom_cells)
        oranges = jnp.sum(eaten == ORANGE)
        survive = (1.0 - params.orange_destroys_red) ** oranges
        blight = (mushroom == RED) & (jax.random.uniform(blight_key, mushroom.shape) >= survive)
        mushroom = jnp.where(blight, EMPTY, mushroom)

        # zaps (Zapper + Destroyable + GraduatedSanctionsMarking)
        fired, cooldown = countdown_then_fire(state.cooldown, (decoded == ZAP) & active, params.zap_cooldown)
        cells = beam_cells(agents.pos, agents.orient, params.zap_beam_length, params.zap_beam_width)
        reach = beam_reach(cells, walls)
        mushroom = jnp.where(beam_grid(cells, reach, fired, layout.shape), EMPTY, mushroom)
        hits = beam_hits(cells, reach, fired, agents.pos, active)
        hit = jnp.any(hits, axis=0)
        frozen_by_zap, removed_now = graduated_sanctions(jnp.sum(hits, axis=0), state.marked)
        frozen = jnp.where(frozen_by_zap, jnp.maximum(frozen, params.zap_freeze_steps), frozen)
        zap_blocked = jnp.where(frozen_by_zap, jnp.maximum(state.zap_blocked, params.zap_freeze_steps), state.zap_blocked)
        marked = (state.marked | frozen_by_zap) & ~removed_now
        marked_for = jnp.where(hit, 0, state.marked_for + (marked & active).astype(jnp.int32))
        recovered = marked & (marked_for >= params.sanction_recovery)
        marked, marked_for = marked & ~recovered, jnp.where(recovered, 0, marked_for)

        # mushrooms age and perish (Perishable)
        kind = jnp.clip(mushroom - 1, 0, 3)
        age = jnp.where(grown | (mushroom == EMPTY), 0, state.age + 1)
        perished = (mushroom > EMPTY) & (age.astype(jnp.float32) >= params.perish_steps[kind])
        mushroom = jnp.where(perished, EMPTY, mushroom)
        age = jnp.where(perished, 0, age)

        # timers, removal and respawn
        frozen = jnp.where(ate | frozen_by_zap, frozen, jnp.maximum(frozen - 1, 0))
        zap_blocked = jnp.where(frozen_by_zap, zap_blocked, jnp.maximum(zap_blocked - 1, 0))
        agents = remove_and_respawn(respawn_key, agents, removed_now, params.zap_timeout, layout.spawn_points)
        frozen = jnp.where(removed_now, 0, frozen)
        zap_blocked = jnp.where(removed_now, 0, zap_blocked)
        new_state = MushroomsState(agents=agents, mushroom=mushroom, age=age, frozen=frozen, zap_blocked=zap_blocked,
                                   cooldown=cooldown, marked=marked, marked_for=marked_for, t=state.t + 1)  # fmt: skip

        return self.finish_step(new_state, params, payoffs, {"eaten": eaten, "fired_zap": fired, "zap_hits": hits, "frozen": frozen > 0})

    def describe(self, state: MushroomsState, params: Any) -> Info:
        counts = {f"{name}_count": jnp.sum(state.mushroom == k + 1).astype(jnp.int32) for k, name in enumerate(KIND_NAMES)}
        return {"step": state.t, **counts, "removed": ~on_map(state.agents)}

    # ----- observations -----
    def grid_channels(self, state: MushroomsState, params: MushroomsParams) -> Array:
        """bool ``[H, W, 6]``: wall, red, green, blue, orange, agent (on the map)."""
        layout = self.layout(params)
        agents = occupancy(state.agents.pos, on_map(state.agents), layout.shape)
        kinds = [state.mushroom == k for k in (RED, GREEN, BLUE, ORANGE)]
        return jnp.stack([jnp.asarray(layout.walls), *kinds, agents], axis=-1)

    def ready(self, state: MushroomsState) -> Array:
        """float32 ``[n]``: 1 where the zapper can fire next step."""
        return ((state.cooldown <= 1) & (state.zap_blocked <= 1) & on_map(state.agents)).astype(jnp.float32)

    def observe(self, state: MushroomsState, params: MushroomsParams) -> Array:
        channels = self.grid_channels(state, params)
        views = views_of_others(channels, state.agents.pos, state.agents.orient, params.view_ahead, params.view_behind, params.view_side)
        active = on_map(state.agents)
        flags = jnp.stack([self.ready(state), (~active).astype(jnp.float32)], axis=1)
        return jnp.concatenate([views * active[:, None], flags], axis=1)

    def observation_size(self, params: MushroomsParams) -> int:
        return window_size(params.view_ahead, params.view_behind, params.view_side) * len(self.channel_names) + 2

    def global_state(self, state: MushroomsState, params: MushroomsParams) -> Array:
        return global_state_vector(self.grid_channels(state, params)[..., 1:], state.agents, state.t, params.max_steps, self.ready(state))

    # ----- rendering -----
    def render_text(self, state: MushroomsState, params: MushroomsParams) -> str:
        """``#`` wall, ``R G B O`` mushrooms, digits on-map agents."""
        layout = self.layout(params)
        chars = np.full(layout.shape, " ")
        chars[layout.walls] = "#"
        kinds = np.asarray(state.mushroom)
        for kind, char in enumerate("RGBO", start=1):
            chars[kinds == kind] = char
        draw_agents(chars, state.agents)
        frozen, on = np.asarray(state.frozen), np.asarray(on_map(state.agents))
        status = [word + (f"(frozen {frozen[i]})" if on[i] and frozen[i] else "") for i, word in enumerate(agent_status(state.agents))]
        return "\n".join([self.step_header(state, params)] + ["".join(row) for row in chars] + ["agents: " + " ".join(status)])

    def render_rgb(self, state: MushroomsState, params: MushroomsParams) -> np.ndarray:
        """uint8 ``[H·8, W·8, 3]``: mushrooms in their colours, walls brown (Melting Pot's fence)."""
        layout = self.layout(params)
        rgb = KIND_COLOURS[np.asarray(state.mushroom)]
        rgb[layout.walls] = WALL_COLOUR
        return render_rgb_grid(rgb, state.agents, scale=RGB_SCALE)


__all__ = ["Mushrooms", "MushroomsParams", "MushroomsState", "MUSHROOMS_LAYOUT", "eating_payoffs", "shares"]
