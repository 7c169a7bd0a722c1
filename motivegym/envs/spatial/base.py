"""The base class of every grid env (:class:`GridSubstrate`) and the step pipeline shared by the gridded apple
dilemmas (Harvest, Cleanup: :class:`GridDilemma`).

:class:`GridSubstrate` holds what the grid envs share besides their rules (Harvest, Cleanup, CoopMining, Mushrooms,
GiftRefinement, Territory, the in-the-Matrix games): the accessors (``n_agents``, ``num_actions``, ``action_names``,
``layout``, ``parameter_names``), ``default_params`` with presets and the ``layout`` keyword, and the end of a step
(truncation at ``max_steps``, never terminated; ``info`` = ``describe`` + the step's facts).

Step order of :class:`GridDilemma` (every env of this module):

1. decode actions (out-of-range indices and removed agents do ``noop``);
2. turn, then move (collision rules in :mod:`motivegym.envs.spatial.grid`);
3. agents standing on an apple eat it (payoff ``+apple_reward``);
4. tag beams fire from the post-move cells; hit agents are tagged (removed after this step);
5. the env's world update (apple regrowth; Cleanup: clean beams, waste, orchard);
6. removal countdown and respawn; ``t ← t + 1``; truncation at ``t ≥ max_steps`` (never terminated).

Observations and info are built from the post-step state.

``rules="ssd"`` (set by ``preset="ssd"``) swaps this pipeline for the Sequential Social Dilemma games'
(:meth:`GridDilemma.ssd_step`, rules in :mod:`motivegym.envs.spatial.ssd_rules`):

1. decode SSD actions (out-of-range indices do ``STAY``); turn; reserve cells and resolve moves by SSD's
   conflict rules (:func:`~motivegym.envs.spatial.ssd_rules.resolve_moves`);
2. agents on an apple eat it (the lowest index first where agents share a cell);
3. FIRE beams (per-lane stop at the first agent, side lanes level with the firer): ``−tag_cost`` per beam
   fired, ``−tag_penalty`` per hit taken; nobody is removed (``tag_timeout`` is unused);
4. the env's SSD world update (:meth:`GridDilemma.ssd_world`: Cleanup's clean beams, then the spawn pass);
5. ``t ← t + 1``, truncation at ``max_steps``.

Reset runs the spawn pass once after placing the agents, as SSD's ``reset`` does.

``rules="meltingpot"`` (set by ``preset="meltingpot"`` and Harvest's ``"meltingpot_closed"`` /
``"meltingpot_partnership"``) swaps in Melting Pot's substrate rules (:mod:`motivegym.envs.spatial.meltingpot_rules`,
the step in each env's ``meltingpot_step``): moves one player after another in random order, beams that stop at the
first player, zap and clean cooldowns, removal for ``tag_timeout = framesTillRespawn + 1`` steps, apples that appear
under a player are eaten by it, ``READY_TO_SHOOT`` in place of the removed flag.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, ClassVar

import jax
import jax.numpy as jnp
import numpy as np

from motivegym.core.env import FunctionalEnv, Info
from motivegym.core.params import override_params
from motivegym.core.pytree import pytree_dataclass, static_field
from motivegym.envs.spatial import meltingpot_rules, ssd_rules
from motivegym.envs.spatial.grid import ACTION_NAMES as GRID_ACTION_NAMES
from motivegym.envs.spatial.grid import (
    FIRE_TAG,
    AgentState,
    Layout,
    base_cell_colours,
    beam_cells,
    beam_hits,
    beam_reach,
    decode_actions,
    global_state_vector,
    initial_agents,
    layout_keyword_as_rows,
    occupancy,
    on_map,
    read_cells,
    remove_and_respawn,
    render_rgb_grid,
    render_text_grid,
    turn,
    turn_and_move,
    validate_layout,
    validate_view,
    view_cells,
    view_centre,
    views_of_others,
    window_size,
)
from motivegym.envs.spatial.grid_extensions import parse_layout_with
from motivegym.envs.spatial.meltingpot_maps import MAX_MP_RGB_AGENTS, MP_AVATAR_COLOURS, MP_COLOURS
from motivegym.envs.spatial.ssd_maps import MAX_SSD_AGENTS, SSD_ACTION_NAMES, SSD_AGENT_COLOURS, SSD_COLOURS

Array = jax.Array

#: pixels per grid cell in ``render_rgb``
RGB_SCALE = 8


@pytree_dataclass
class GridParams:
    """Params shared by the grid dilemmas (subclasses add their own)."""

    max_steps: Array  # int32 horizon
    tag_timeout: Array  # int32 steps a tagged agent is off the map
    apple_reward: Array  # payoff per apple eaten
    tag_cost: Array  # payoff cost of firing the tag beam
    tag_penalty: Array  # payoff cost of being tagged
    layout: tuple[str, ...] = static_field()
    n_agents: int = static_field()
    view_ahead: int = static_field()
    view_behind: int = static_field()
    view_side: int = static_field()
    tag_beam_length: int = static_field()
    tag_beam_width: int = static_field()
    rules: str = static_field()  # "motivegym" (this package's), "ssd" (the Sequential Social Dilemma games') or "meltingpot"
    view_encoding: str = static_field()  # "onehot" cell channels or "rgb" (SSD / Melting Pot colours, 0..255); not with rules="motivegym"


#: the names ``preset=`` accepts in every grid dilemma (an env adds its own: :meth:`GridDilemma.preset_makers`)
PRESETS = ("default", "ssd")
#: params stored as int32 (the rest are float32)
INT_PARAMS = ("max_steps", "tag_timeout", "zap_cooldown", "clean_cooldown", "waste_spawn_delay")
#: the values of the static ``rules`` param
RULES = ("motivegym", "ssd", "meltingpot")


def grid_params(params_class: type, /, int_names: tuple[str, ...] = INT_PARAMS, bool_names: tuple[str, ...] = (), **values: Any) -> Any:
    """``params_class`` from plain values: static fields as given, ``int_names`` (counts, horizons) as int32,
    ``bool_names`` as bool, the rest float32."""
    static = {f.name for f in dataclasses.fields(params_class) if f.metadata.get("static")}
    arrays = {}
    for name, value in values.items():
        if name in static:
            continue
        dtype = jnp.int32 if name in int_names else jnp.bool_ if name in bool_names else jnp.float32
        arrays[name] = jnp.asarray(value, dtype)
    return params_class(**arrays, **{k: v for k, v in values.items() if k in static})


class GridSubstrate(FunctionalEnv):
    """Base of the grid envs (all but the Coin Games): subclasses set ``name`` and ``substrate_actions`` (or override :meth:`action_names`),
    implement ``make_params`` and ``validate`` (and :meth:`preset_makers` where they have presets), then ``reset``,
    ``step``, ``observe``."""

    action_kind: ClassVar[str] = "discrete"
    #: the names of actions ``0 .. num_actions − 1`` (Melting Pot's order)
    substrate_actions: ClassVar[tuple[str, ...]] = ()
    #: map characters beyond :data:`~motivegym.envs.spatial.grid.LEGEND`: ``(char, " " floor or "#" wall stand-in)``
    extra_chars: ClassVar[tuple[tuple[str, str], ...]] = ()

    # ----- params -----
    def make_params(self) -> Any:  # pragma: no cover - interface
        raise NotImplementedError

    def validate(self, params: Any) -> None:  # pragma: no cover - interface
        """Raise ``ValueError`` on params the dynamics cannot honour."""
        raise NotImplementedError

    def preset_makers(self) -> dict[str, Callable[[], Any]]:
        """``{preset name: params factory}``, the default preset first; empty (one set of defaults, no ``preset``
        keyword) unless the env overrides it."""
        return {}

    def adapt_base_params(self, base: Any, overrides: dict[str, Any]) -> Any:
        """The preset's params before ``overrides`` are applied (an env whose field shapes follow another keyword,
        e.g. ``levels``, reshapes them here); unchanged by default."""
        return base

    def default_params(self, **overrides: Any) -> Any:
        """Params of ``preset`` (see :meth:`preset_makers`) with overrides; ``layout`` may be a tuple/list of rows or one
        multi-line string."""
        makers = self.preset_makers()
        make, extra_valid = self.make_params, ()
        if makers:
            preset = overrides.pop("preset", next(iter(makers)))
            if preset not in makers:
                raise ValueError(f"{self.name}: preset={preset!r} is invalid: unknown preset; preset must be one of {', '.join(map(repr, makers))}")
            make, extra_valid = makers[preset], ("preset",)
        layout_keyword_as_rows(overrides)
        base = self.adapt_base_params(make(), overrides)
        params = override_params(base, overrides, self.name, extra_valid=extra_valid)
        self.validate(params)
        return params

    def parameter_names(self) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(self.make_params())) + (("preset",) if self.preset_makers() else ())

    # ----- accessors -----
    def layout(self, params: Any) -> Any:
        """The parsed map (:func:`~motivegym.envs.spatial.grid.parse_layout`; :attr:`extra_chars` read as their stand-ins)."""
        return parse_layout_with(tuple(params.layout), self.extra_chars)[0]

    def layout_masks(self, params: Any) -> dict[str, np.ndarray]:
        """``{char: bool [H, W]}``: the cells of each of :attr:`extra_chars`."""
        return parse_layout_with(tuple(params.layout), self.extra_chars)[1]

    def n_agents(self, params: Any) -> int:
        return int(params.n_agents)

    def num_actions(self, params: Any) -> int:
        return len(self.action_names(params))

    def action_names(self, params: Any) -> tuple[str, ...]:
        return self.substrate_actions

    def observation_bounds(self, params: Any) -> tuple[float, float]:
        """One-hot cells, flags, readiness, positions / map size and ``t / max_steps``: all in ``[0, 1]``."""
        return 0.0, 1.0

    # ----- the end of a step -----
    def finish_step(self, new_state: Any, params: Any, payoffs: Array, step_info: Info) -> tuple[Any, Array, Array, Array, Info]:
        """``(state, obs, payoffs, done, info)`` of a finished step: truncation at ``t ≥ max_steps``, never terminated;
        ``info`` = ``describe(new_state)``, then ``step_info`` (what happened this step), then the two flags."""
        truncated = new_state.t >= params.max_steps
        terminated = jnp.bool_(False)
        info = self.describe(new_state, params)
        info.update({**step_info, "terminated": terminated, "truncated": truncated})
        return new_state, self.observe(new_state, params), payoffs, terminated | truncated, info

    def step_header(self, state: Any, params: Any) -> str:
        """The first line of ``render_text``: ``<name>  step t/max_steps``."""
        return f"{self.name}  step {int(state.t)}/{int(params.max_steps)}"


@dataclasses.dataclass(frozen=True)
class StepContext:
    """What the world update of one step sees (post-move, pre-respawn)."""

    agents: AgentState  # turned and moved, not yet respawned
    actions: Array  # decoded actions [n]
    active: Array  # [n] on the map at the start of the step
    tagged: Array  # [n] hit by a tag beam this step


class GridDilemma(GridSubstrate):
    """Base of the grid dilemmas: subclasses set ``num_grid_actions`` and implement the hooks."""

    num_grid_actions: ClassVar[int] = 8
    #: names of the one-hot cell channels of :meth:`grid_channels` (walls first, agents last)
    channel_names: ClassVar[tuple[str, ...]] = ("wall", "agent")

    # ----- params -----
    def validate(self, params: Any) -> None:
        """Raise ``ValueError`` on params the dynamics cannot honour."""
        where = self.name
        validate_layout(self.layout(params), params.n_agents, where)
        validate_view(params, where)
        if params.tag_beam_length < 1 or params.tag_beam_width < 1 or params.tag_beam_width % 2 == 0:
            raise ValueError(f"{where}: tag beam needs length >= 1 and an odd width >= 1, got {params.tag_beam_length}, {params.tag_beam_width}")
        if int(params.max_steps) < 1:
            raise ValueError(f"{where}: max_steps must be >= 1, got {int(params.max_steps)}")
        if int(params.tag_timeout) < 1:
            raise ValueError(f"{where}: tag_timeout must be >= 1, got {int(params.tag_timeout)}")
        if params.rules not in RULES:
            raise ValueError(f"{where}: rules must be one of {', '.join(map(repr, RULES))}, got {params.rules!r}")
        if params.view_encoding not in ("onehot", "rgb"):
            raise ValueError(f"{where}: view_encoding must be 'onehot' or 'rgb', got {params.view_encoding!r}")
        if params.rules == "ssd":
            if not params.view_ahead == params.view_behind == params.view_side:
                raise ValueError(
                    f"{where}: rules='ssd' uses SSD's square view: view_ahead, view_behind and view_side must be equal, "
                    f"got {params.view_ahead}, {params.view_behind}, {params.view_side}"
                )
            if params.n_agents > MAX_SSD_AGENTS:
                raise ValueError(f"{where}: rules='ssd' supports at most {MAX_SSD_AGENTS} agents (SSD's agent colours), got {params.n_agents}")
            for beam in ("tag", "clean"):
                width = getattr(params, f"{beam}_beam_width", 3)
                if width not in (1, 3):
                    raise ValueError(f"{where}: rules='ssd' beams are 1 or 3 lanes wide (SSD update_map_fire), got {beam}_beam_width={width}")
        elif params.rules == "meltingpot":
            if params.view_encoding == "rgb" and params.n_agents > MAX_MP_RGB_AGENTS:
                raise ValueError(f"{where}: rules='meltingpot' with view_encoding='rgb' supports at most {MAX_MP_RGB_AGENTS} agents, got {params.n_agents}")
        elif params.view_encoding == "rgb":
            raise ValueError(f"{where}: view_encoding='rgb' (SSD's / Melting Pot's colour view) needs rules='ssd' or 'meltingpot'")

    def make_ssd_params(self) -> Any:  # pragma: no cover - interface
        """The params of ``preset="ssd"``: the Sequential Social Dilemma games' map and rules."""
        raise NotImplementedError

    def preset_makers(self) -> dict:
        """``{preset name: params factory}``: ``"default"``, ``"ssd"`` and the env's Melting Pot presets."""
        return {"default": self.make_params, "ssd": self.make_ssd_params}

    def num_actions(self, params: Any) -> int:
        return self.num_grid_actions

    def is_ssd(self, params: Any) -> bool:
        return params.rules == "ssd"

    def is_meltingpot(self, params: Any) -> bool:
        return params.rules == "meltingpot"

    def action_names(self, params: Any) -> tuple[str, ...]:
        """The names of actions ``0 .. num_actions − 1``: :data:`~motivegym.envs.spatial.grid.ACTION_NAMES`
        (Melting Pot order) or, under ``rules="ssd"``, SSD's (:data:`~motivegym.envs.spatial.ssd_maps.SSD_ACTION_NAMES`)."""
        names = SSD_ACTION_NAMES if self.is_ssd(params) else GRID_ACTION_NAMES
        return tuple(names[: self.num_actions(params)])

    # ----- hooks -----
    def initial_world(self, key: Array, layout: Layout, params: Any) -> dict:
        """State fields besides ``agents`` and ``t`` at reset (``apples`` at least)."""
        return {"apples": jnp.asarray(layout.initial_apples)}

    def world_step(self, key: Array, state: Any, apples: Array, context: StepContext, params: Any) -> tuple[dict, Array, Info]:
        """Env-specific update: ``(state field changes, extra payoffs [n], extra step info)``."""
        raise NotImplementedError  # pragma: no cover - interface

    def ssd_world(self, key: Array, fields: dict, agents: AgentState, context: StepContext | None, params: Any) -> tuple[dict, Info]:
        """SSD rules: the env's world update after the beams (``context``) or at reset (``context=None``):
        ``(state field changes, extra step info)``; ``fields`` holds the current ``apples`` (and ``waste``)."""
        raise NotImplementedError  # pragma: no cover - interface

    def ssd_cell_colours(self, state: Any, params: Any) -> Array:
        """int32 ``[H, W, 3]`` SSD colours of the map without agents (walls, apples; Cleanup's river and waste)."""
        layout = self.layout(params)
        floor = np.asarray(SSD_COLOURS["floor"], np.int32)
        base = np.where(layout.walls[..., None], np.asarray(SSD_COLOURS["wall"], np.int32), floor)
        return jnp.where(state.apples[..., None], jnp.asarray(SSD_COLOURS["apple"], jnp.int32), jnp.asarray(base))

    def grid_channels(self, state: Any, params: Any) -> Array:
        """bool ``[H, W, C]`` one-hot cell channels; channel 0 is walls, the last one agents."""
        raise NotImplementedError  # pragma: no cover - interface

    def state_class(self) -> type:  # pragma: no cover - interface
        raise NotImplementedError

    # ----- pipeline -----
    def reset(self, key: Array, params: Any) -> tuple[Any, Array]:
        if self.is_meltingpot(params):
            return self.meltingpot_reset(key, params)
        layout = self.layout(params)
        agent_key, world_key = jax.random.split(key)
        agents = initial_agents(agent_key, layout.spawn_points, params.n_agents)
        world = self.initial_world(world_key, layout, params)
        if self.is_ssd(params):  # SSD's reset ends with one spawn pass (custom_map_update)
            changes, _ = self.ssd_world(jax.random.fold_in(world_key, 1), world, agents, None, params)
            world = {**world, **changes}
        state = self.state_class()(agents=agents, t=jnp.int32(0), **world)
        return state, self.observe(state, params)

    def step(self, key: Array, state: Any, actions: Array, params: Any):
        if self.is_ssd(params):
            return self.ssd_step(key, state, actions, params)
        if self.is_meltingpot(params):
            return self.meltingpot_step(key, state, actions, params)
        layout = self.layout(params)
        walls = jnp.asarray(layout.walls)
        move_key, world_key, respawn_key = jax.random.split(key, 3)
        active = on_map(state.agents)
        decoded = decode_actions(actions, self.num_actions(params), active)
        agents = turn_and_move(move_key, state.agents, decoded, walls)

        eaten = active & read_cells(state.apples, agents.pos, outside=False)
        apples = state.apples & ~occupancy(agents.pos, eaten, layout.shape)

        fired_tag = decoded == FIRE_TAG
        cells = beam_cells(agents.pos, agents.orient, params.tag_beam_length, params.tag_beam_width)
        hits = beam_hits(cells, beam_reach(cells, walls), fired_tag, agents.pos, active)
        tagged = jnp.any(hits, axis=0)
        payoffs = (
            params.apple_reward * eaten.astype(jnp.float32)
            - params.tag_cost * fired_tag.astype(jnp.float32)
            - params.tag_penalty * tagged.astype(jnp.float32)
        )

        context = StepContext(agents=agents, actions=decoded, active=active, tagged=tagged)
        changes, extra_payoffs, extra_info = self.world_step(world_key, state, apples, context, params)
        agents = remove_and_respawn(respawn_key, agents, tagged, params.tag_timeout, layout.spawn_points)
        new_state = dataclasses.replace(state, agents=agents, t=state.t + 1, **changes)

        return self.step_result(new_state, params, payoffs + extra_payoffs, eaten, fired_tag, tagged, hits, extra_info)

    def ssd_step(self, key: Array, state: Any, actions: Array, params: Any):
        """One step under SSD's rules (order in the module docstring)."""
        layout = self.layout(params)
        walls = jnp.asarray(layout.walls)
        move_key, world_key = jax.random.split(key)
        n = params.n_agents
        decoded = ssd_rules.decode(actions, self.num_actions(params))
        orient = ssd_rules.turn(state.agents.orient, decoded)
        target = ssd_rules.move_targets(state.agents.pos, orient, decoded, walls)
        pos = ssd_rules.resolve_moves(move_key, state.agents.pos, target, ssd_rules.is_mover(decoded), layout.shape[1])
        agents = dataclasses.replace(state.agents, pos=pos, orient=orient)

        eaten = ssd_rules.first_at_cell(pos) & read_cells(state.apples, pos, outside=False)
        apples = state.apples & ~occupancy(pos, eaten, layout.shape)
        fired_tag, _ = ssd_rules.fired(decoded)
        hits, _ = ssd_rules.tag_hits(pos, orient, fired_tag, walls, params.tag_beam_length, params.tag_beam_width)
        hits_taken = jnp.sum(hits, axis=0)
        payoffs = (
            params.apple_reward * eaten.astype(jnp.float32)
            - params.tag_cost * fired_tag.astype(jnp.float32)
            - params.tag_penalty * hits_taken.astype(jnp.float32)
        )
        context = StepContext(agents=agents, actions=decoded, active=jnp.ones(n, bool), tagged=hits_taken > 0)
        fields = {name: getattr(state, name) for name in ("apples", "waste") if hasattr(state, name)}
        fields["apples"] = apples
        changes, extra_info = self.ssd_world(world_key, fields, agents, context, params)
        extra_payoffs = extra_info.pop("payoffs", jnp.zeros(n, jnp.float32))
        new_state = dataclasses.replace(state, agents=agents, t=state.t + 1, **{**fields, **changes})
        return self.step_result(new_state, params, payoffs + extra_payoffs, eaten, fired_tag, hits_taken > 0, hits, extra_info)

    def step_result(self, new_state: Any, params: Any, payoffs: Array, eaten: Array, fired_tag: Array, tagged: Array, hits: Array, extra_info: Info):
        """``(state, obs, payoffs, done, info)`` of a finished step (both rule sets): truncation at ``max_steps``, never
        terminated; ``info`` = ``describe`` + what happened this step."""
        step_info = {"apples_eaten": eaten.astype(jnp.int32), "fired_tag": fired_tag, "tagged": tagged, "tag_hits": hits, **extra_info}
        return self.finish_step(new_state, params, payoffs, step_info)

    def describe(self, state: Any, params: Any) -> Info:
        return {"step": state.t, "apple_count": jnp.sum(state.apples).astype(jnp.int32), "removed": ~on_map(state.agents)}

    def observation_bounds(self, params: Any) -> tuple[float, float]:
        """Every observation and global-state entry lies in ``[0.0, 1.0]``: one-hot map channels, removed flags, positions / map size and ``t / max_steps``.
        With ``view_encoding="rgb"`` the view holds SSD's / Melting Pot's colour values, ``[0.0, 255.0]``."""
        return (0.0, 255.0) if params.view_encoding == "rgb" else (0.0, 1.0)

    def ssd_observe(self, state: Any, params: Any) -> Array:
        """SSD's ``curr_obs``, flattened row-major (row, column, channel): ``[n, V·V·3]`` colour values 0..255
        (``view_encoding="rgb"``) or ``[n, V·V·C]`` one-hot channels, ``V = 2·view_side + 1`` (SSD: 15), the
        window rotated as ``map_env.color_view`` (:func:`~motivegym.envs.spatial.ssd_rules.view_offsets`),
        zeros off the map. Every agent is drawn, the observer too (a shared cell shows the highest index);
        at reset SSD has not drawn the agents yet, so the reset observation shows none."""
        pos, orient = state.agents.pos, state.agents.orient
        n = pos.shape[0]
        drawn = state.t > 0
        if params.view_encoding == "rgb":
            cells = self.ssd_cell_colours(state, params)
            h, w = cells.shape[:2]
            painter = jnp.full((h, w), -1, jnp.int32).at[pos[:, 0], pos[:, 1]].max(jnp.arange(n, dtype=jnp.int32))
            colours = jnp.asarray(SSD_AGENT_COLOURS)[jnp.maximum(painter, 0)]
            cells = jnp.where(((painter >= 0) & drawn)[..., None], colours, cells)
        else:
            channels = self.grid_channels(state, params)
            cells = channels.at[..., -1].set(channels[..., -1] & drawn)
        views = ssd_rules.window_views(cells, pos, orient, params.view_side)
        return views.reshape(n, -1).astype(jnp.float32)

    # ----- Melting Pot rules (rules="meltingpot") -----
    #: index offset of the other players' colours in ``MP_AVATAR_COLOURS`` (clean_up pops the first for "self")
    meltingpot_colour_offset: ClassVar[int] = 0
    #: the colour of the observer's own body (``TARGET_SPRITE_SELF``)
    meltingpot_self_colour: ClassVar[str] = "self"

    def meltingpot_state_class(self) -> type:  # pragma: no cover - interface
        """The state class under ``rules="meltingpot"`` (the env's state plus cooldown timers)."""
        raise NotImplementedError

    def meltingpot_timers(self, params: Any) -> dict:
        """Cooldown timers at reset (all ready): ``zap_cooldown [n]`` (Cleanup adds ``clean_cooldown``)."""
        return {"zap_cooldown": jnp.zeros(params.n_agents, jnp.int32)}

    def meltingpot_reset(self, key: Array, params: Any) -> tuple[Any, Array]:
        """Melting Pot's reset: the first two players on the inside spawn points ``Q`` (where the map has them), the
        others on random ``P`` points (:func:`~motivegym.envs.spatial.meltingpot_rules.initial_agents`), timers ready."""
        layout = self.layout(params)
        agent_key, world_key = jax.random.split(key)
        agents = meltingpot_rules.initial_agents(agent_key, layout.spawn_points, layout.inside_spawn_points, params.n_agents)
        world = self.initial_world(world_key, layout, params)
        state = self.meltingpot_state_class()(agents=agents, t=jnp.int32(0), **world, **self.meltingpot_timers(params))
        return state, self.observe(state, params)

    def meltingpot_step(self, key: Array, state: Any, actions: Array, params: Any):  # pragma: no cover - interface
        raise NotImplementedError

    def meltingpot_move_and_eat(self, key: Array, state: Any, actions: Array, active: Array, apples: Array, params: Any) -> tuple[AgentState, Array, Array]:
        """``(agents, eaten [n], apples)``: turn, then moves one player after another in random order
        (:func:`~motivegym.envs.spatial.meltingpot_rules.sequential_moves`); a player entering a cell with an apple
        eats it (``Edible:onEnter``)."""
        layout = self.layout(params)
        orient = turn(state.agents.orient, actions)
        pos = meltingpot_rules.sequential_moves(key, state.agents.pos, orient, actions, jnp.asarray(layout.walls), active)
        agents = dataclasses.replace(state.agents, pos=pos, orient=orient)
        eaten = active & read_cells(apples, pos, outside=False)
        return agents, eaten, apples & ~occupancy(pos, eaten, layout.shape)

    def meltingpot_zap(self, agents: AgentState, actions: Array, active: Array, cooldown: Array, params: Any) -> tuple[Array, Array, Array]:
        """``(fires [n], zap cooldown [n], hits [firer, target])``: the zap cooldown
        (:func:`~motivegym.envs.spatial.meltingpot_rules.cooldown_fire`) and the beams that stop at the first player
        (:func:`~motivegym.envs.spatial.meltingpot_rules.zap_beams`), ``tag_beam_width = 2·beamRadius + 1``."""
        fires, cooldown = meltingpot_rules.cooldown_fire(cooldown, active, actions == FIRE_TAG, params.zap_cooldown)
        walls = jnp.asarray(self.layout(params).walls)
        hits = meltingpot_rules.zap_beams(agents.pos, agents.orient, fires, active, walls, params.tag_beam_length, (params.tag_beam_width - 1) // 2)
        return fires, cooldown, hits

    def meltingpot_cell_colours(self, state: Any, params: Any) -> Array:  # pragma: no cover - interface
        """int32 ``[H, W, 3]`` Melting Pot colours of the map without players."""
        raise NotImplementedError

    def meltingpot_observe(self, state: Any, params: Any) -> Array:
        """``[n, window·C + 1]`` (one-hot, the default preset's window and channels) or ``[n, window·3 + 1]``
        (``view_encoding="rgb"``: one Melting Pot colour per cell, others in their avatar colours, the observer's own
        cell in the "self" colour, black off the map), then ``READY_TO_SHOOT``. A removed player sees zeros."""
        active = on_map(state.agents)
        ready = meltingpot_rules.ready_to_shoot(state.zap_cooldown, active, params.zap_cooldown)
        if params.view_encoding != "rgb":
            channels = self.grid_channels(state, params)
            views = views_of_others(channels, state.agents.pos, state.agents.orient, params.view_ahead, params.view_behind, params.view_side)
            return jnp.concatenate([views * active[:, None], ready[:, None]], axis=1)
        cells = self.meltingpot_cell_colours(state, params)
        h, w = cells.shape[:2]
        n = params.n_agents
        painter = jnp.full((h, w), -1, jnp.int32).at[jnp.where(active, state.agents.pos[:, 0], h), state.agents.pos[:, 1]].set(jnp.arange(n, dtype=jnp.int32), mode="drop")
        colours = jnp.asarray(MP_AVATAR_COLOURS)[jnp.maximum(painter, 0) + self.meltingpot_colour_offset]
        cells = jnp.where((painter >= 0)[..., None], colours, cells)
        radius = max(params.view_ahead, params.view_behind, params.view_side)
        padded = jnp.pad(cells, ((radius, radius), (radius, radius), (0, 0)))
        where = view_cells(state.agents.pos, state.agents.orient, params.view_ahead, params.view_behind, params.view_side) + radius
        views = padded[where[..., 0], where[..., 1]]  # [n, rows, cols, 3]
        row, col = view_centre(params.view_ahead, params.view_side)
        views = views.at[:, row, col].set(jnp.asarray(MP_COLOURS[self.meltingpot_self_colour], jnp.int32))
        views = views.reshape(n, -1).astype(jnp.float32) * active[:, None]
        return jnp.concatenate([views, ready[:, None]], axis=1)

    def observe(self, state: Any, params: Any) -> Array:
        """``[n, window * C + 1]``: the rotated window of one-hot channels (other agents only), then a
        removed flag; a removed agent sees zeros and the flag 1. ``rules="ssd"``: :meth:`ssd_observe`."""
        if self.is_ssd(params):
            return self.ssd_observe(state, params)
        if self.is_meltingpot(params):
            return self.meltingpot_observe(state, params)
        channels = self.grid_channels(state, params)
        views = views_of_others(channels, state.agents.pos, state.agents.orient, params.view_ahead, params.view_behind, params.view_side)
        active = on_map(state.agents)
        return jnp.concatenate([views * active[:, None], (~active).astype(jnp.float32)[:, None]], axis=1)

    def observation_size(self, params: Any) -> int:
        if self.is_ssd(params):
            cells = (2 * params.view_side + 1) ** 2
            return cells * (3 if params.view_encoding == "rgb" else len(self.channel_names))
        if self.is_meltingpot(params) and params.view_encoding == "rgb":
            return window_size(params.view_ahead, params.view_behind, params.view_side) * 3 + 1
        return window_size(params.view_ahead, params.view_behind, params.view_side) * len(self.channel_names) + 1

    def render_text(self, state: Any, params: Any) -> str:
        return self.step_header(state, params) + "\n" + render_text_grid(self.layout(params), state.agents, state.apples, getattr(state, "waste", None))

    def render_rgb(self, state: Any, params: Any) -> np.ndarray:
        cells = base_cell_colours(self.layout(params), state.apples, getattr(state, "waste", None))
        return render_rgb_grid(cells, state.agents, scale=RGB_SCALE)

    def global_state(self, state: Any, params: Any) -> Array:
        """Full map channels except walls (``H·W·(C−1)``), per-agent features (7n), ``t/max_steps``."""
        return global_state_vector(self.grid_channels(state, params)[..., 1:], state.agents, state.t, params.max_steps)
