"""Commons Harvest (Harvest-v0): a common-pool resource whose apples regrow only near other apples."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from motivegym.core.pytree import pytree_dataclass, static_field
from motivegym.envs.spatial import meltingpot_rules, ssd_rules
from motivegym.envs.spatial.base import GridDilemma, GridParams, StepContext, grid_params
from motivegym.envs.spatial.grid import (
    AgentState,
    Layout,
    bernoulli_at_cells,
    decode_actions,
    occupancy,
    on_map,
    remove_and_respawn,
)
from motivegym.envs.spatial.meltingpot_maps import (
    HARVEST_MP_CLOSED_LAYOUT,
    HARVEST_MP_OPEN_LAYOUT,
    HARVEST_MP_PARTNERSHIP_LAYOUT,
    MP_COLOURS,
    MP_COMMON_PARAMS,
    MP_HARVEST_OPEN,
    MP_HARVEST_ROOMS,
)
from motivegym.envs.spatial.ssd_maps import HARVEST_SSD_LAYOUT, SSD_COMMON_PARAMS

Array = jax.Array

#: the default map (own design after the Leibo et al. 2017 / Perolat et al. 2017 commons): 8 apple
#: patches, 16 spawn points; legend in :data:`motivegym.envs.spatial.grid.LEGEND`
HARVEST_LAYOUT = (
    "##############################",
    "#P   P    P    A    P       P#",
    "#    A        AAA        A   #",
    "#   AAA      AAAAA      AAA  #",
    "#  AAAAA    AAAAAAA    AAAAA #",
    "#   AAA      AAAAA      AAA  #",
    "#    A        AAA        A   #",
    "#              A             #",
    "#P   P   A     P     A      P#",
    "#       AAA         AAA      #",
    "#      AAAAA       AAAAA     #",
    "#       AAA         AAA      #",
    "#P  A    A     A     A    A P#",
    "#  AAA        AAA        AAA #",
    "# AAAAA        A        AAAAA#",
    "#  AAA                   AAA #",
    "#P  A     P    P    P     A P#",
    "##############################",
)

#: lower bounds of the neighbour-count bins that index ``regrowth_probs``: 0, 1–2, 3–4, ≥ 5
REGROWTH_BIN_EDGES = (1, 3, 5)


@pytree_dataclass
class HarvestParams(GridParams):
    regrowth_probs: Array  # [4] regrowth probability per neighbour-count bin (0, 1-2, 3-4, >=5; SSD and Melting Pot: 0, 1, 2, >=3)
    zap_cooldown: Array  # int32 steps a zap beam cools down (rules="meltingpot" only; Melting Pot Zapper.cooldownTime)
    regrowth_radius: int = static_field()


@pytree_dataclass
class HarvestState:
    agents: AgentState
    apples: Array  # [H, W] bool
    t: Array  # int32 steps taken


@pytree_dataclass
class MeltingPotHarvestState(HarvestState):
    """``rules="meltingpot"``: the Harvest state plus each player's zap cooldown timer."""

    zap_cooldown: Array  # [n] int32 steps until the zap beam is ready (0 = ready)


def neighbour_offsets(radius: int) -> np.ndarray:
    """``[k, 2]`` offsets ``(dr, dc)`` with ``0 < dr² + dc² ≤ radius²`` (Euclidean disc without its centre)."""
    span = range(-radius, radius + 1)
    return np.array([(dr, dc) for dr in span for dc in span if 0 < dr * dr + dc * dc <= radius * radius], np.int32).reshape(-1, 2)


def neighbour_count(apples: Array, radius: int) -> Array:
    """int32 ``[H, W]``: apples within Euclidean distance ``radius`` of each cell (the cell excluded)."""
    h, w = apples.shape
    padded = jnp.pad(apples.astype(jnp.int32), radius)
    shifted = [padded[radius + dr : radius + dr + h, radius + dc : radius + dc + w] for dr, dc in neighbour_offsets(radius)]
    return sum(shifted, jnp.zeros((h, w), jnp.int32))


def regrowth_probability(counts: Array, regrowth_probs: Array) -> Array:
    """``p(cell) = regrowth_probs[bin(count)]`` with bins 0, 1–2, 3–4, ≥ 5 (Perolat et al. 2017)."""
    steps = [(counts >= edge) * (regrowth_probs[k + 1] - regrowth_probs[k]) for k, edge in enumerate(REGROWTH_BIN_EDGES)]
    return regrowth_probs[0] + sum(steps)  # a sum of steps, not a table lookup: gathers are slow on CPU


def regrow_apples(key: Array, apples: Array, spawn_cells: np.ndarray, blocked: Array, regrowth_probs: Array, radius: int) -> Array:
    """Apples after one regrowth draw: each empty, unblocked spawn cell grows with :func:`regrowth_probability`."""
    counts = neighbour_count(apples, radius)[spawn_cells[:, 0], spawn_cells[:, 1]]
    grows = bernoulli_at_cells(key, spawn_cells, regrowth_probability(counts, regrowth_probs), apples.shape)
    return apples | (grows & ~blocked)


class Harvest(GridDilemma):
    """Commons Harvest: N agents eat apples that regrow only next to other apples; tagging removes rivals.

    * **Mechanism:** common-pool resource (Perolat et al. 2017; Leibo et al. 2017; Melting Pot
      ``commons_harvest``). Each step every empty apple spawn cell not under an agent grows an apple
      with probability ``regrowth_probs[b]``, ``b`` the bin (0, 1–2, 3–4, ≥ 5) of the number of apples
      within Euclidean distance ``regrowth_radius``: a patch harvested bare never regrows.
    * **Agents:** ``n_agents`` (default 5) identical foragers, ``agent_i`` → digit ``i`` in renders.
    * **Actions:** ``Discrete(8)``: 0 noop, 1 forward, 2 backward, 3 step left, 4 step right,
      5 turn left, 6 turn right, 7 fire tag beam. Moves are relative to the orientation; out-of-range
      indices act as noop. Collisions: walls block; a move into a cell occupied at the start of the
      step fails; two agents entering the same cell: the one with the higher random priority (drawn
      from the step key) moves, the other stays. Tag beam: ``tag_beam_width`` lanes of
      ``tag_beam_length`` cells ahead, stopped by walls; every other agent hit is removed from the map
      for ``tag_timeout`` steps, then respawns at a random free spawn point.
    * **Observation:** per agent ``[(view_ahead + view_behind + 1)·(2·view_side + 1)·3 + 1]``: the
      egocentric window rotated to the agent's facing (row 0 farthest ahead, column 0 leftmost), each
      cell one-hot over (wall, apple, other agent), cells off the grid read wall; flattened
      row-major (row, column, channel); then a removed flag (a removed agent sees zeros and flag 1).
      Global state: the full map's (apple, agent) channels ``H·W·2``, per agent
      (row/H, col/W, orientation one-hot, removed) ``7n``, and ``t/max_steps``.
    * **Payoff:** ``+apple_reward`` (1) per apple eaten (by stepping onto it), ``−tag_cost`` per tag
      beam fired, ``−tag_penalty`` when tagged (both 0 by default).
    * **Termination:** never terminates; truncation at ``max_steps``.
    * **Presets:** ``preset="ssd"`` gives the Sequential Social Dilemma games' Harvest (SSD's 16×38 map,
      actions ``MOVE_LEFT, MOVE_RIGHT, MOVE_UP, MOVE_DOWN, STAY, TURN_CLOCKWISE, TURN_COUNTERCLOCKWISE, FIRE``,
      15×15 RGB view ``[675]`` values 0..255, SSD's collisions, beams, −1/−50 beam costs, no removal, 3×3
      regrowth window with ``[0, 0.005, 0.02, 0.05]``): :meth:`make_ssd_params`,
      :mod:`motivegym.envs.spatial.ssd_rules`, ``docs/spatial_presets.md`` (deviations row by row).
      ``preset="meltingpot"`` gives Melting Pot's ``commons_harvest__open`` (18×24 map, 7 players, regrowth by the exact
      live-neighbour count 0/1/2/≥3, zaps that stop at the first player with a cooldown, removal timing, apples regrowing
      under a player eaten at once, ``READY_TO_SHOOT`` as the last observation entry); ``"meltingpot_closed"`` /
      ``"meltingpot_partnership"`` its ``commons_harvest__closed`` / ``__partnership``: :meth:`make_meltingpot_params`,
      :meth:`meltingpot_step`, :mod:`motivegym.envs.spatial.meltingpot_rules`.
    * **Defaults:** 5 agents on the 18×30 map :data:`HARVEST_LAYOUT` (108 apple cells, 16 spawn
      points), ``max_steps=1000``, ``regrowth_probs=(0, 0.01, 0.05, 0.1)``, ``regrowth_radius=2``,
      ``tag_timeout=25``, tag beam 3 long × 3 wide, view 9 ahead, 1 behind, 5 each side (11×11).
    * **Info:** ``step``, ``apple_count``, ``removed [n]``; after a step also ``apples_eaten [n]``,
      ``fired_tag [n]``, ``tagged [n]``, ``tag_hits [n, n]`` (firer, target), ``apples_regrown``.
    """

    name = "Harvest"
    num_grid_actions = 8
    channel_names = ("wall", "apple", "agent")

    def make_params(self) -> HarvestParams:
        return grid_params(
            HarvestParams,
            max_steps=1000,
            tag_timeout=25,
            apple_reward=1.0,
            tag_cost=0.0,
            tag_penalty=0.0,
            regrowth_probs=[0.0, 0.01, 0.05, 0.1],
            regrowth_radius=2,
            layout=HARVEST_LAYOUT,
            n_agents=5,
            view_ahead=9,
            view_behind=1,
            view_side=5,
            tag_beam_length=3,
            tag_beam_width=3,
            rules="motivegym",
            view_encoding="onehot",
            zap_cooldown=0,
        )

    def make_meltingpot_params(self, variant: str = "open") -> HarvestParams:
        """``preset="meltingpot"`` (``variant="open"``): Melting Pot's ``commons_harvest__open`` (18×24 map, 7 players,
        regrowth ``[0, 0.0025, 0.005, 0.025]`` by live neighbours 0/1/2/≥3 within radius 2, zap 3 long × 3 wide with a
        2-step cooldown, removal for ``framesTillRespawn = 4`` frames). ``"closed"`` / ``"partnership"``:
        ``commons_harvest__closed`` / ``__partnership`` (rooms, regrowth ``[0, 0.001, 0.005, 0.025]``, zap 4 long with
        a 1-step cooldown, removal for 100 frames)."""
        layouts = {"open": HARVEST_MP_OPEN_LAYOUT, "closed": HARVEST_MP_CLOSED_LAYOUT, "partnership": HARVEST_MP_PARTNERSHIP_LAYOUT}
        rules = MP_HARVEST_OPEN if variant == "open" else MP_HARVEST_ROOMS
        return grid_params(HarvestParams, **MP_COMMON_PARAMS, **rules, layout=layouts[variant])

    def preset_makers(self) -> dict:
        return {
            **super().preset_makers(),
            "meltingpot": self.make_meltingpot_params,
            "meltingpot_closed": lambda: self.make_meltingpot_params("closed"),
            "meltingpot_partnership": lambda: self.make_meltingpot_params("partnership"),
        }

    def make_ssd_params(self) -> HarvestParams:
        """``preset="ssd"``: SSD's ``HarvestEnv`` (16×38 map, 5 agents as in its training scripts, horizon
        1000, FIRE costs 1 and each hit 50, beam 5 long × 3 wide, ``SPAWN_PROB = [0, 0.005, 0.02, 0.05]`` over
        the 3×3 window, 15×15 RGB view)."""
        return grid_params(
            HarvestParams, **SSD_COMMON_PARAMS, regrowth_probs=[0.0, 0.005, 0.02, 0.05], regrowth_radius=2, layout=HARVEST_SSD_LAYOUT,
            zap_cooldown=0,
        )

    def validate(self, params: Any) -> None:
        super().validate(params)
        probs = np.asarray(params.regrowth_probs)
        if np.any(probs < 0) or np.any(probs > 1):
            raise ValueError(f"{self.name}: regrowth_probs must lie in [0, 1], got {probs.tolist()}")
        if params.regrowth_radius < 1:
            raise ValueError(f"{self.name}: regrowth_radius must be >= 1, got {params.regrowth_radius}")
        if int(params.zap_cooldown) < 0:
            raise ValueError(f"{self.name}: zap_cooldown must be >= 0, got {int(params.zap_cooldown)}")

    def state_class(self) -> type:
        return HarvestState

    def initial_world(self, key: Array, layout: Layout, params: Any) -> dict:
        return {"apples": jnp.asarray(layout.initial_apples)}

    def world_step(self, key: Array, state: HarvestState, apples: Array, context: StepContext, params: Any):
        layout = self.layout(params)
        blocked = occupancy(context.agents.pos, context.active, layout.shape)
        regrown = regrow_apples(key, apples, layout.apple_cells, blocked, params.regrowth_probs, params.regrowth_radius)
        n = params.n_agents
        info = {"apples_regrown": jnp.sum(regrown & ~apples).astype(jnp.int32)}
        return {"apples": regrown}, jnp.zeros(n, jnp.float32), info

    def ssd_world(self, key: Array, fields: dict, agents: AgentState, context: StepContext | None, params: Any):
        """SSD ``harvest.spawn_apples`` (:func:`~motivegym.envs.spatial.ssd_rules.harvest_regrowth`); with SSD's
        rule ``regrowth_radius`` is its ``APPLE_RADIUS`` (window ``j² + k² ≤ radius``) and ``regrowth_probs``
        index the counts 0, 1, 2, ≥ 3."""
        layout = self.layout(params)
        apples = fields["apples"]
        occupied = occupancy(agents.pos, jnp.ones(params.n_agents, bool), layout.shape)
        regrown = ssd_rules.harvest_regrowth(key, apples, layout.apple_cells, occupied, params.regrowth_probs, params.regrowth_radius)
        return {"apples": regrown}, {"apples_regrown": jnp.sum(regrown & ~apples).astype(jnp.int32)}

    def meltingpot_state_class(self) -> type:
        return MeltingPotHarvestState

    def meltingpot_step(self, key: Array, state: MeltingPotHarvestState, actions: Array, params: Any):
        """One step of ``commons_harvest`` (order of a dmlab2d frame, :mod:`~motivegym.envs.spatial.meltingpot_rules`):

        1. the apple cells that will sprout this step are drawn from the map at the start of the step
           (:func:`~motivegym.envs.spatial.meltingpot_rules.density_sprouts`);
        2. turn, then moves one player after another in random order; a player entering an apple eats it (+1);
        3. zap: cooldown, beams stopping at the first player; every player hit is removed (``−tag_penalty`` per hit);
        4. the sprouts appear; one under a player (on the map at the start of the step) is eaten by it at once (+1);
        5. removal countdown and respawn at a random free ``P`` point; ``t ← t + 1``; truncation at ``max_steps``.
        """
        layout = self.layout(params)
        sprout_key, move_key, respawn_key = jax.random.split(key, 3)
        active = on_map(state.agents)
        decoded = decode_actions(actions, self.num_actions(params), active)
        grows = meltingpot_rules.density_sprouts(sprout_key, state.apples, layout.apple_cells, params.regrowth_probs, params.regrowth_radius)
        agents, eaten, apples = self.meltingpot_move_and_eat(move_key, state, decoded, active, state.apples, params)
        fires, zap_cooldown, hits = self.meltingpot_zap(agents, decoded, active, state.zap_cooldown, params)
        tagged = jnp.any(hits, axis=0)
        apples, eaten_at_sprout = meltingpot_rules.grow_under_players(apples, grows, agents.pos, active)
        eaten_total = eaten.astype(jnp.int32) + eaten_at_sprout.astype(jnp.int32)
        payoffs = (
            params.apple_reward * eaten_total.astype(jnp.float32)
            - params.tag_cost * fires.astype(jnp.float32)
            - params.tag_penalty * jnp.sum(hits, axis=0).astype(jnp.float32)
        )
        agents = remove_and_respawn(respawn_key, agents, tagged, params.tag_timeout, layout.spawn_points)
        new_state = MeltingPotHarvestState(agents=agents, apples=apples, t=state.t + 1, zap_cooldown=zap_cooldown)
        info = {"apples_regrown": jnp.sum(grows).astype(jnp.int32)}
        return self.step_result(new_state, params, payoffs, eaten_total, fires, tagged, hits, info)

    def meltingpot_cell_colours(self, state: HarvestState, params: Any) -> Array:
        """Floor, walls, apples; an empty apple cell shows grass while a live apple lies within ``regrowth_radius``
        and dry floor otherwise (``DensityRegrow``'s ``dessicated`` grass)."""
        layout = self.layout(params)
        colour = {k: jnp.asarray(v, jnp.int32) for k, v in MP_COLOURS.items()}
        alive = meltingpot_rules.disc_count(state.apples, params.regrowth_radius) > 0
        cells = jnp.where(jnp.asarray(layout.walls)[..., None], colour["wall"], colour["floor"])
        cells = jnp.where((jnp.asarray(layout.apple_spawn) & alive)[..., None], colour["grass"], cells)
        return jnp.where(state.apples[..., None], colour["apple"], cells)

    def grid_channels(self, state: HarvestState, params: Any) -> Array:
        layout = self.layout(params)
        agents = occupancy(state.agents.pos, state.agents.timeout == 0, layout.shape)
        return jnp.stack([jnp.asarray(layout.walls), state.apples, agents], axis=-1)
