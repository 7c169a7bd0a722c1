"""Cleanup (Cleanup-v0): a public-goods dilemma where apples grow only while someone cleans the river."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from motivegym.core.pytree import pytree_dataclass, static_field
from motivegym.envs.spatial import meltingpot_rules, ssd_rules
from motivegym.envs.spatial.base import GridDilemma, GridParams, StepContext, grid_params
from motivegym.envs.spatial.grid import (
    FIRE_CLEAN,
    AgentState,
    Layout,
    beam_cells,
    beam_grid,
    beam_reach,
    bernoulli_at_cells,
    decode_actions,
    occupancy,
    on_map,
    read_cells,
    remove_and_respawn,
)
from motivegym.envs.spatial.meltingpot_maps import CLEANUP_MP_LAYOUT, MP_CLEAN_UP, MP_COLOURS, MP_COMMON_PARAMS
from motivegym.envs.spatial.ssd_maps import CLEANUP_SSD_LAYOUT, SSD_COLOURS, SSD_COMMON_PARAMS

Array = jax.Array

#: the default map (own design after Hughes et al. 2018 / Melting Pot ``clean_up``): a 3×18 river
#: (54 cells, 6 polluted at reset) at the top, a 4×18 orchard (72 cells) at the bottom, 12 spawn points
CLEANUP_LAYOUT = (
    "####################",
    "#~~~~*~~~~~~*~~~~~~#",
    "#~~*~~~~~~~~~~~*~~~#",
    "#~~~~~~~*~~~~~~~~~*#",
    "#                  #",
    "# P  P  P  P  P  P #",
    "#                  #",
    "# P  P  P  P  P  P #",
    "#                  #",
    "#aaaaaaaaaaaaaaaaaa#",
    "#aaaAaaaaaaaaAaaaaa#",
    "#aaaaaaaaAaaaaaaaaa#",
    "#aaaaaaaaaaaaaaaaaa#",
    "####################",
)


@pytree_dataclass
class CleanupParams(GridParams):
    waste_spawn_prob: Array  # per clean river cell and step
    apple_respawn_prob: Array  # per empty orchard cell and step at pollution <= threshold_restoration
    threshold_depletion: Array  # pollution fraction at and above which no apple grows
    threshold_restoration: Array  # pollution fraction at and below which apples grow at the full rate
    clean_cost: Array  # payoff cost of firing the clean beam
    zap_cooldown: Array  # int32 (rules="meltingpot" only) Melting Pot Zapper.cooldownTime
    clean_cooldown: Array  # int32 (rules="meltingpot" only) Melting Pot Cleaner.cooldownTime
    waste_spawn_delay: Array  # int32 (rules="meltingpot" only) steps before dirt spawns (DirtSpawner.delayStartOfDirtSpawning)
    clean_beam_length: int = static_field()
    clean_beam_width: int = static_field()


@pytree_dataclass
class CleanupState:
    agents: AgentState
    apples: Array  # [H, W] bool
    waste: Array  # [H, W] bool (river cells only)
    t: Array  # int32 steps taken


@pytree_dataclass
class MeltingPotCleanupState(CleanupState):
    """``rules="meltingpot"``: the Cleanup state plus each player's zap and clean cooldown timers."""

    zap_cooldown: Array  # [n] int32 (0 = ready)
    clean_cooldown: Array  # [n] int32 (0 = ready)


def pollution_fraction(waste: Array, river: Array) -> Array:
    """``d = |waste| / |river|``."""
    return jnp.sum(waste & river) / jnp.maximum(jnp.sum(river), 1)


def apple_spawn_probability(pollution: Array, apple_respawn_prob: Array, threshold_depletion: Array, threshold_restoration: Array) -> Array:
    """``p = p_apple · clip((θ_dep − d) / (θ_dep − θ_res), 0, 1)``: full below restoration, 0 from depletion
    (Hughes et al. 2018; Melting Pot ``clean_up``)."""
    scale = (threshold_depletion - pollution) / (threshold_depletion - threshold_restoration)
    return apple_respawn_prob * jnp.clip(scale, 0.0, 1.0)


class Cleanup(GridDilemma):
    """Cleanup: apples grow in the orchard only while the river is kept clean, which pays nobody.

    * **Mechanism:** public-goods sequential social dilemma (Hughes et al. 2018; Melting Pot
      ``clean_up``). Each step every clean river cell becomes polluted with probability
      ``waste_spawn_prob``; every empty orchard cell not under an agent grows an apple with probability
      ``p = apple_respawn_prob · clip((threshold_depletion − d) / (threshold_depletion −
      threshold_restoration), 0, 1)`` where ``d`` is the polluted fraction of the river after this
      step's cleaning. The clean beam removes waste from the cells it covers.
    * **Agents:** ``n_agents`` (default 5) identical agents, ``agent_i`` → digit ``i`` in renders.
    * **Actions:** ``Discrete(9)``: 0 noop, 1 forward, 2 backward, 3 step left, 4 step right,
      5 turn left, 6 turn right, 7 fire tag beam, 8 fire clean beam. Moves are relative to the
      orientation; out-of-range indices act as noop; river cells (clean or polluted) are walkable.
      Collisions: walls block; a move into a cell occupied at the start of the step fails; two agents
      entering the same cell: the one with the higher random priority (from the step key) moves.
      Beams: ``width`` lanes of ``length`` cells ahead, stopped by walls; the tag beam removes every
      other agent hit for ``tag_timeout`` steps (respawn at a random free spawn point).
    * **Observation:** per agent ``[(view_ahead + view_behind + 1)·(2·view_side + 1)·5 + 1]``: the
      egocentric window rotated to the agent's facing (row 0 farthest ahead, column 0 leftmost), each
      cell one-hot over (wall, apple, waste, clean river, other agent), off-grid cells read wall;
      flattened row-major (row, column, channel); then a removed flag (a removed agent sees zeros).
      Global state: the map's (apple, waste, clean river, agent) channels ``H·W·4``, per agent
      (row/H, col/W, orientation one-hot, removed) ``7n``, and ``t/max_steps``.
    * **Payoff:** ``+apple_reward`` (1) per apple eaten; ``−clean_cost`` per clean beam fired,
      ``−tag_cost`` per tag beam fired, ``−tag_penalty`` when tagged (all 0 by default).
    * **Termination:** never terminates; truncation at ``max_steps``.
    * **Presets:** ``preset="ssd"`` gives the Sequential Social Dilemma games' Cleanup (SSD's 25×18 map,
      SSD's 9 actions, 15×15 RGB view ``[675]`` values 0..255, SSD's collisions and beams, the clean beam
      stopping at the first waste of each lane, at most one new waste cell a step gated at density 0.4,
      the spawn pass at reset): :meth:`make_ssd_params`, :mod:`motivegym.envs.spatial.ssd_rules`,
      ``docs/spatial_presets.md``. ``preset="meltingpot"`` gives Melting Pot's ``clean_up`` (21×30 map, 7 players,
      ``AppleGrow``, ``DirtSpawner`` after 50 steps, zap and clean cooldowns, zaps stopping at the first player, clean
      beams stopping at the first dirt, removal for 50 frames): :meth:`make_meltingpot_params`, :meth:`meltingpot_step`,
      :mod:`motivegym.envs.spatial.meltingpot_rules`.
    * **Defaults:** 5 agents on the 14×20 map :data:`CLEANUP_LAYOUT`, ``max_steps=1000``,
      ``waste_spawn_prob=0.01`` (≈ 0.5 new waste cells per step on the 54-cell river),
      ``apple_respawn_prob=0.05``, ``threshold_depletion=0.4``, ``threshold_restoration=0.0``,
      ``tag_timeout=25``, tag and clean beams 3 long × 3 wide, view 9 ahead, 1 behind, 5 each side.
    * **Info:** ``step``, ``apple_count``, ``removed [n]``, ``pollution`` (``d``); after a step also
      ``apples_eaten``, ``fired_tag``, ``tagged``, ``tag_hits [n, n]``, ``fired_clean``,
      ``waste_cleaned [n]`` (waste cells under each agent's clean beam), ``apple_spawn_prob``.
    """

    name = "Cleanup"
    num_grid_actions = 9
    channel_names = ("wall", "apple", "waste", "river", "agent")

    def make_params(self) -> CleanupParams:
        return grid_params(
            CleanupParams,
            max_steps=1000,
            tag_timeout=25,
            apple_reward=1.0,
            tag_cost=0.0,
            tag_penalty=0.0,
            waste_spawn_prob=0.01,
            apple_respawn_prob=0.05,
            threshold_depletion=0.4,
            threshold_restoration=0.0,
            clean_cost=0.0,
            layout=CLEANUP_LAYOUT,
            n_agents=5,
            view_ahead=9,
            view_behind=1,
            view_side=5,
            tag_beam_length=3,
            tag_beam_width=3,
            clean_beam_length=3,
            clean_beam_width=3,
            rules="motivegym",
            view_encoding="onehot",
            zap_cooldown=0,
            clean_cooldown=0,
            waste_spawn_delay=0,
        )

    def make_meltingpot_params(self) -> CleanupParams:
        """``preset="meltingpot"``: Melting Pot's ``clean_up`` (21×30 map, 7 players, ``AppleGrow`` 0.05 with thresholds
        0.4 / 0.0, ``DirtSpawner`` one cell with probability 0.5 a step after 50 steps, zap 3 × 3 with a 10-step cooldown
        and removal for 50 frames, clean beam 3 × 3 with a 2-step cooldown)."""
        return grid_params(CleanupParams, **MP_COMMON_PARAMS, **MP_CLEAN_UP, layout=CLEANUP_MP_LAYOUT)

    def preset_makers(self) -> dict:
        return {**super().preset_makers(), "meltingpot": self.make_meltingpot_params}

    def make_ssd_params(self) -> CleanupParams:
        """``preset="ssd"``: SSD's ``CleanupEnv`` (25×18 map, 5 agents, horizon 1000, FIRE costs 1 and each hit
        50, CLEAN free, both beams 5 long × 3 wide, ``wasteSpawnProbability = 0.5`` per visited clean cell
        with at most one new waste cell a step, ``appleRespawnProbability = 0.05``, thresholds 0.4 / 0.0,
        15×15 RGB view)."""
        return grid_params(
            CleanupParams, **SSD_COMMON_PARAMS, waste_spawn_prob=0.5, apple_respawn_prob=0.05, threshold_depletion=0.4,
            threshold_restoration=0.0, clean_cost=0.0, layout=CLEANUP_SSD_LAYOUT, clean_beam_length=5, clean_beam_width=3,
            zap_cooldown=0, clean_cooldown=0, waste_spawn_delay=0,
        )  # fmt: skip

    def validate(self, params: Any) -> None:
        super().validate(params)
        for name in ("waste_spawn_prob", "apple_respawn_prob"):
            value = float(getattr(params, name))
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{self.name}: {name} must lie in [0, 1], got {value}")
        depletion, restoration = float(params.threshold_depletion), float(params.threshold_restoration)
        if not 0.0 <= restoration < depletion <= 1.0:
            raise ValueError(f"{self.name}: need 0 <= threshold_restoration < threshold_depletion <= 1, got {restoration}, {depletion}")
        if params.clean_beam_length < 1 or params.clean_beam_width < 1 or params.clean_beam_width % 2 == 0:
            raise ValueError(f"{self.name}: clean beam needs length >= 1 and an odd width >= 1")
        for name in ("zap_cooldown", "clean_cooldown", "waste_spawn_delay"):
            if int(getattr(params, name)) < 0:
                raise ValueError(f"{self.name}: {name} must be >= 0, got {int(getattr(params, name))}")
        if not self.layout(params).river.any():
            raise ValueError(f"{self.name}: the layout needs river cells ('~' or '*')")

    def state_class(self) -> type:
        return CleanupState

    def initial_world(self, key: Array, layout: Layout, params: Any) -> dict:
        return {"apples": jnp.asarray(layout.initial_apples), "waste": jnp.asarray(layout.initial_waste)}

    def world_step(self, key: Array, state: CleanupState, apples: Array, context: StepContext, params: Any):
        layout = self.layout(params)
        river, walls = jnp.asarray(layout.river), jnp.asarray(layout.walls)
        apple_key, waste_key = jax.random.split(key)
        fired_clean = context.actions == FIRE_CLEAN
        cells = beam_cells(context.agents.pos, context.agents.orient, params.clean_beam_length, params.clean_beam_width)
        reach = beam_reach(cells, walls)
        under_beam = read_cells(state.waste, cells, outside=False) & reach & fired_clean[:, None, None]
        waste = state.waste & ~beam_grid(cells, reach, fired_clean, layout.shape)

        pollution = pollution_fraction(waste, river)
        probability = apple_spawn_probability(pollution, params.apple_respawn_prob, params.threshold_depletion, params.threshold_restoration)
        blocked = occupancy(context.agents.pos, context.active, layout.shape)
        apples = apples | (bernoulli_at_cells(apple_key, layout.apple_cells, probability, layout.shape) & ~blocked)
        waste = waste | bernoulli_at_cells(waste_key, layout.river_cells, params.waste_spawn_prob, layout.shape)

        payoffs = -params.clean_cost * fired_clean.astype(jnp.float32)
        info = {
            "fired_clean": fired_clean,
            "waste_cleaned": jnp.sum(under_beam, axis=(1, 2)).astype(jnp.int32),
            "apple_spawn_prob": probability.astype(jnp.float32),
        }
        return {"apples": apples, "waste": waste}, payoffs, info

    def ssd_world(self, key: Array, fields: dict, agents: AgentState, context: StepContext | None, params: Any):
        """SSD Cleanup after the FIRE beams: the CLEAN beams in random agent order (each lane cleans and stops at
        its first waste cell, :func:`~motivegym.envs.spatial.ssd_rules.clean_beams`), ``−clean_cost`` per
        CLEAN, then ``compute_probabilities`` and ``spawn_apples_and_waste``
        (:func:`~motivegym.envs.spatial.ssd_rules.cleanup_spawn`). At reset (``context=None``) only the spawn."""
        layout = self.layout(params)
        river, walls = jnp.asarray(layout.river), jnp.asarray(layout.walls)
        n = params.n_agents
        clean_key, spawn_key = jax.random.split(key)
        waste = fields["waste"]
        info: dict = {}
        if context is not None:
            _, fired_clean = ssd_rules.fired(context.actions)
            waste, cleaned = ssd_rules.clean_beams(
                clean_key, agents.pos, agents.orient, fired_clean, waste, walls, params.clean_beam_length, params.clean_beam_width
            )
            info = {"fired_clean": fired_clean, "waste_cleaned": cleaned, "payoffs": -params.clean_cost * fired_clean.astype(jnp.float32)}
        _, apple_p, waste_p = ssd_rules.cleanup_probabilities(
            jnp.sum(waste & river), int(layout.river.sum()), params.apple_respawn_prob, params.waste_spawn_prob,
            params.threshold_depletion, params.threshold_restoration,
        )  # fmt: skip
        occupied = occupancy(agents.pos, jnp.ones(n, bool), layout.shape)
        apples, waste = ssd_rules.cleanup_spawn(spawn_key, fields["apples"], waste, layout.apple_cells, river, occupied, apple_p, waste_p)
        if context is not None:
            info["apple_spawn_prob"] = apple_p.astype(jnp.float32)
        return {"apples": apples, "waste": waste}, info

    meltingpot_colour_offset = 1
    meltingpot_self_colour = "cleanup_self"

    def meltingpot_state_class(self) -> type:
        return MeltingPotCleanupState

    def meltingpot_timers(self, params: Any) -> dict:
        return {**super().meltingpot_timers(params), "clean_cooldown": jnp.zeros(params.n_agents, jnp.int32)}

    def meltingpot_step(self, key: Array, state: MeltingPotCleanupState, actions: Array, params: Any):
        """One step of ``clean_up`` (order of a dmlab2d frame, :mod:`~motivegym.envs.spatial.meltingpot_rules`):

        1. ``AppleGrow``: every empty apple cell grows an apple with ``p(d)``, ``d`` the dirt fraction of the start of
           the step (:func:`~motivegym.envs.spatial.meltingpot_rules.apple_growth_probability`); one that grows under a
           player is eaten by it at once (+1). ``DirtSpawner``: from step ``waste_spawn_delay`` on, with probability
           ``waste_spawn_prob`` one clean river cell becomes dirty;
        2. turn, then moves one player after another in random order; a player entering an apple eats it (+1);
        3. zap and clean beams with their cooldowns (the zap stops at the first player and removes it; the clean beam
           cleans the first dirt cell of each lane and passes players); ``−tag_penalty`` per hit, ``−tag_cost`` per zap,
           ``−clean_cost`` per clean beam;
        4. removal countdown and respawn at a random free ``P`` point; ``t ← t + 1``; truncation at ``max_steps``.
        """
        layout = self.layout(params)
        river, walls = jnp.asarray(layout.river), jnp.asarray(layout.walls)
        grow_key, dirt_key, move_key, respawn_key = jax.random.split(key, 4)
        active = on_map(state.agents)
        decoded = decode_actions(actions, self.num_actions(params), active)
        fraction = meltingpot_rules.dirt_fraction(state.waste, river)
        probability = meltingpot_rules.apple_growth_probability(fraction, params.apple_respawn_prob, params.threshold_depletion, params.threshold_restoration)
        grows = bernoulli_at_cells(grow_key, layout.apple_cells, probability, layout.shape) & ~state.apples
        apples, eaten_at_growth = meltingpot_rules.grow_under_players(state.apples, grows, state.agents.pos, active)
        waste = meltingpot_rules.spawn_dirt(dirt_key, state.waste, river, params.waste_spawn_prob, state.t >= params.waste_spawn_delay)

        agents, eaten, apples = self.meltingpot_move_and_eat(move_key, state, decoded, active, apples, params)
        fires, zap_cooldown, hits = self.meltingpot_zap(agents, decoded, active, state.zap_cooldown, params)
        fired_clean, clean_cooldown = meltingpot_rules.cooldown_fire(state.clean_cooldown, active, decoded == FIRE_CLEAN, params.clean_cooldown)
        waste, cleaned = meltingpot_rules.clean_beams(
            agents.pos, agents.orient, fired_clean, waste, walls, params.clean_beam_length, (params.clean_beam_width - 1) // 2
        )
        tagged = jnp.any(hits, axis=0)
        eaten_total = eaten.astype(jnp.int32) + eaten_at_growth.astype(jnp.int32)
        payoffs = (
            params.apple_reward * eaten_total.astype(jnp.float32)
            - params.tag_cost * fires.astype(jnp.float32)
            - params.tag_penalty * jnp.sum(hits, axis=0).astype(jnp.float32)
            - params.clean_cost * fired_clean.astype(jnp.float32)
        )
        agents = remove_and_respawn(respawn_key, agents, tagged, params.tag_timeout, layout.spawn_points)
        new_state = MeltingPotCleanupState(
            agents=agents, apples=apples, waste=waste, t=state.t + 1, zap_cooldown=zap_cooldown, clean_cooldown=clean_cooldown
        )
        info = {"fired_clean": fired_clean, "waste_cleaned": cleaned, "apple_spawn_prob": probability.astype(jnp.float32)}
        return self.step_result(new_state, params, payoffs, eaten_total, fires, tagged, hits, info)

    def meltingpot_cell_colours(self, state: CleanupState, params: Any) -> Array:
        """Sand, walls, water (river and stream), dirt, grass under the potential apples, apples."""
        layout = self.layout(params)
        colour = {k: jnp.asarray(v, jnp.int32) for k, v in MP_COLOURS.items()}
        cells = jnp.where(jnp.asarray(layout.walls)[..., None], colour["wall"], colour["sand"])
        cells = jnp.where(jnp.asarray(layout.river | layout.stream)[..., None], colour["water"], cells)
        cells = jnp.where(state.waste[..., None], colour["dirt"], cells)
        cells = jnp.where(jnp.asarray(layout.apple_spawn)[..., None], colour["cleanup_grass"], cells)
        return jnp.where(state.apples[..., None], colour["cleanup_apple"], cells)

    def ssd_cell_colours(self, state: CleanupState, params: Any) -> Array:
        """SSD ``CLEANUP_COLORS``: river and stream brown-grey, waste blue-grey, apples green, walls grey."""
        layout = self.layout(params)
        cells = super().ssd_cell_colours(state, params)
        river_like = jnp.asarray(layout.river | layout.stream)[..., None]
        cells = jnp.where(river_like, jnp.asarray(SSD_COLOURS["river"], jnp.int32), cells)
        return jnp.where(state.waste[..., None], jnp.asarray(SSD_COLOURS["waste"], jnp.int32), cells)

    def describe(self, state: CleanupState, params: Any) -> dict:
        info = super().describe(state, params)
        info["pollution"] = pollution_fraction(state.waste, jnp.asarray(self.layout(params).river)).astype(jnp.float32)
        return info

    def grid_channels(self, state: CleanupState, params: Any) -> Array:
        layout = self.layout(params)
        agents = occupancy(state.agents.pos, state.agents.timeout == 0, layout.shape)
        clean_river = jnp.asarray(layout.river) & ~state.waste
        return jnp.stack([jnp.asarray(layout.walls), state.apples, state.waste, clean_river, agents], axis=-1)
