"""KeyDoorGift-v0: one key, one door per agent; the collective bonus needs the key to be passed on."""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import jax
import jax.numpy as jnp
import numpy as np

from motivegym.core.env import FunctionalEnv, Info
from motivegym.core.params import override_params
from motivegym.core.pytree import pytree_dataclass, static_field
from motivegym.envs.sparse.grid import DIRECTIONS, agent_colours, matches, occupancy, paint_cells, top_cells, upscale

Array = jax.Array

ACTION_NAMES = ("noop", "move_up", "move_down", "move_left", "move_right", "pickup_drop")
N_ACTIONS = len(ACTION_NAMES)
NOOP, PICKUP_DROP = 0, 5
NO_HOLDER = -1
#: the one achievement per agent, reported as ``info["achievements"] [n, 1]``
ACHIEVEMENT_NAMES = ("open_own_door",)


def border_cells(size: int) -> np.ndarray:
    """The non-corner border cells of a ``size × size`` grid, clockwise from the top-left."""
    top = [(0, c) for c in range(1, size - 1)]
    right = [(r, size - 1) for r in range(1, size - 1)]
    bottom = [(size - 1, c) for c in range(size - 2, 0, -1)]
    left = [(r, 0) for r in range(size - 2, 0, -1)]
    return np.array(top + right + bottom + left, dtype=np.int32)


def door_cells(size: int, n: int) -> np.ndarray:
    """``[n, 2]`` door positions, evenly spread along the border (agent ``i`` owns door ``i``)."""
    border = border_cells(size)
    offset = (size - 2) // 2  # start at the middle of the top wall
    picks = (offset + np.round(np.arange(n) * len(border) / n).astype(int)) % len(border)
    return border[picks]


@pytree_dataclass
class KeyDoorParams:
    max_steps: Array  # int32 horizon
    door_payoff: Array  # individual payoff to agent i when it opens its own door
    collective_payoff: Array  # payoff to EVERY agent on the step the last door opens
    n_agents: int = static_field(2)
    size: int = static_field(7)


@pytree_dataclass
class KeyDoorState:
    positions: Array  # [n, 2] int32
    key_position: Array  # [2] int32 (where the key lies when nobody holds it)
    holder: Array  # int32 agent index holding the key, or -1
    doors_open: Array  # [n] bool
    t: Array  # int32


def agent_move(state: KeyDoorState, i: Array, action: Array, doors: Array, size: int) -> KeyDoorState:
    """Agent ``i`` moves (interior cells and open doors; its own closed door opens if it holds the key) or picks up / drops."""
    n = doors.shape[0]
    action = jnp.where((action >= 0) & (action < N_ACTIONS), action, NOOP)
    position = state.positions[i]
    is_move = (action >= 1) & (action <= 4)
    target = position + jnp.asarray(DIRECTIONS)[jnp.clip(action - 1, 0, 3)]
    interior = jnp.all((target >= 1) & (target <= size - 2))
    at_door = matches(doors, target, jnp.ones(n, bool))
    own_door = at_door[i]
    opens = is_move & own_door & ~state.doors_open[i] & (state.holder == i)
    door_passable = jnp.any(at_door & (state.doors_open | ((jnp.arange(n) == i) & opens)))
    occupied = jnp.any(matches(state.positions, target, jnp.arange(n) != i))
    moved = is_move & (interior | door_passable) & ~occupied
    opens = opens & moved
    position = jnp.where(moved, target, position)

    toggling = action == PICKUP_DROP
    drops = toggling & (state.holder == i)
    picks = toggling & (state.holder == NO_HOLDER) & jnp.all(state.key_position == position)
    holder = jnp.where(drops, NO_HOLDER, jnp.where(picks, i, state.holder))
    return dataclasses.replace(
        state,
        positions=state.positions.at[i].set(position),
        key_position=jnp.where(drops, position, state.key_position),
        holder=holder.astype(jnp.int32),
        doors_open=state.doors_open.at[i].set(state.doors_open[i] | opens),
    )


class KeyDoorGift(FunctionalEnv):
    """Hidden-gift key/door room: one key opens every agent's own door, but only while that agent holds it.

    * **Mechanism:** sparse reward with a hidden gift: the key holder earns its own door payoff,
      then can give the key away (drop it) at no direct gain; only when every door is open does
      everyone receive the larger collective payoff, so the gift pays off through the team.
    * **Agents:** ``n_agents`` (default 2) on the interior of a walled ``size × size`` room; agent
      ``i`` owns door ``i`` (colour-coded, on the border wall, spread evenly from the top middle).
      Agents and the key spawn on distinct random interior cells; agents never share a cell and act
      in index order within a step.
    * **Actions:** ``Discrete(6)``: 0 noop, 1 up, 2 down, 3 left, 4 right, 5 pickup/drop (pick up
      the key lying on the own cell; drop it onto the own cell when holding it). Moving into the own
      closed door while holding the key opens it and steps onto it; open doors are walkable by all;
      walls and closed doors block. Out-of-range actions are noop.
    * **Observation:** per agent, a flattened ``[size, size, 8]`` grid (wall, own closed door, other
      closed doors, open doors, key on the floor, self, other agents, other agent holding the key),
      then holding-the-key flag, own-door-open flag and ``t/max_steps``: ``8·size² + 3`` (395).
      Global state: ``[size, size, 4 + n]`` (wall, closed doors, open doors, key on the floor, one
      position channel per agent) flattened, holder one-hot (``n + 1``, last = on the floor),
      doors open (``n``), ``t/max_steps``.
    * **Payoff:** ``π_i = door_payoff·[i opened its door this step] + collective_payoff·[the last
      door opened this step]`` (each door opens once, so each term is paid at most once).
    * **Info:** ``doors_open`` ``[n]``, ``achievements`` ``[n, 1]`` (the same flags under the
      achievement name ``open_own_door``, for achievement-based evaluation), ``key_holder``
      (``-1`` on the floor), ``all_doors_open``.
    * **Termination:** all doors open; truncation at ``max_steps``.
    * **Defaults:** 2 agents, 7×7 room, door_payoff 1, collective_payoff 3, max_steps 100.
    """

    name: ClassVar[str] = "KeyDoorGift"
    action_kind: ClassVar[str] = "discrete"

    def default_params(self, **overrides: Any) -> KeyDoorParams:
        params = KeyDoorParams(max_steps=jnp.int32(100), door_payoff=jnp.float32(1.0), collective_payoff=jnp.float32(3.0))
        params = override_params(params, overrides, self.name)
        if not (isinstance(params.size, int) and params.size >= 4):
            raise ValueError(f"{self.name}: size must be an int >= 4, got {params.size!r}")
        interior = (params.size - 2) ** 2
        if not (isinstance(params.n_agents, int) and 2 <= params.n_agents <= min(8, interior - 1, len(border_cells(params.size)))):
            raise ValueError(f"{self.name}: n_agents must be an int in [2, 8] with room for agents, key and doors, got {params.n_agents!r}")
        if int(params.max_steps) < 1:
            raise ValueError(f"{self.name}: max_steps must be >= 1, got {int(params.max_steps)}")
        return params

    def parameter_names(self) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(KeyDoorParams))

    def n_agents(self, params: KeyDoorParams) -> int:
        return params.n_agents

    def num_actions(self, params: KeyDoorParams) -> int:
        return N_ACTIONS

    def static_info(self, params: KeyDoorParams) -> Info:
        return {"action_names": ACTION_NAMES, "achievement_names": ACHIEVEMENT_NAMES}

    def reset(self, key: Array, params: KeyDoorParams) -> tuple[KeyDoorState, Array]:
        n, size = params.n_agents, params.size
        inside = np.zeros((size, size), bool)
        inside[1:-1, 1:-1] = True
        cells = top_cells(jax.random.uniform(key, (size, size)), jnp.asarray(inside), n + 1)
        state = KeyDoorState(
            positions=cells[:n],
            key_position=cells[n],
            holder=jnp.int32(NO_HOLDER),
            doors_open=jnp.zeros(n, bool),
            t=jnp.int32(0),
        )
        return state, self.observe(state, params)

    def step(self, key: Array, state: KeyDoorState, actions: Array, params: KeyDoorParams):
        actions = jnp.asarray(actions, jnp.int32).reshape(params.n_agents)
        doors = jnp.asarray(door_cells(params.size, params.n_agents))
        before = state.doors_open
        state = jax.lax.fori_loop(0, params.n_agents, lambda i, s: agent_move(s, i, actions[i], doors, params.size), state)
        opened = state.doors_open & ~before
        completed = jnp.all(state.doors_open) & ~jnp.all(before)
        payoffs = params.door_payoff * opened + params.collective_payoff * completed
        state = dataclasses.replace(state, t=state.t + 1)
        info = self.describe(state, params)
        info["terminated"] = jnp.all(state.doors_open)
        info["truncated"] = state.t >= params.max_steps
        return state, self.observe(state, params), payoffs.astype(jnp.float32), info["terminated"] | info["truncated"], info

    def describe(self, state: KeyDoorState, params: KeyDoorParams) -> Info:
        return {
            "step": state.t,
            "doors_open": state.doors_open,
            "achievements": state.doors_open[:, None],
            "key_holder": state.holder,
            "all_doors_open": jnp.all(state.doors_open),
        }

    # ----- observations -----
    def key_on_floor(self, state: KeyDoorState, params: KeyDoorParams) -> Array:
        size = params.size
        return occupancy(state.key_position[None], (state.holder == NO_HOLDER)[None], size, size)

    def layout(self, state: KeyDoorState, params: KeyDoorParams) -> tuple[Array, Array, Array]:
        """``[n, size, size]`` door masks per owner, closed and open, and the ``[size, size]`` wall mask."""
        n, size = params.n_agents, params.size
        doors = door_cells(size, n)
        door_masks = np.zeros((n, size, size), bool)
        door_masks[np.arange(n), doors[:, 0], doors[:, 1]] = True
        wall = np.ones((size, size), bool)
        wall[1:-1, 1:-1] = False
        wall &= ~door_masks.any(axis=0)
        open_mask = state.doors_open[:, None, None]
        return jnp.asarray(door_masks) & ~open_mask, jnp.asarray(door_masks) & open_mask, jnp.asarray(wall)

    def observation_bounds(self, params: Any) -> tuple[float, float]:
        """Every observation and global-state entry lies in ``[0.0, 1.0]``: occupancy channels, holder and door flags, ``t / max_steps``."""
        return 0.0, 1.0

    def observe(self, state: KeyDoorState, params: KeyDoorParams) -> Array:
        n, size = params.n_agents, params.size
        closed, opened, wall = self.layout(state, params)
        key = self.key_on_floor(state, params)
        agents = jax.vmap(lambda p: occupancy(p[None], jnp.ones(1, bool), size, size))(state.positions)  # [n, s, s]
        holding = jnp.arange(n) == state.holder
        holder_cell = jnp.any(agents & holding[:, None, None], axis=0)

        def row(i: int) -> Array:
            others = jnp.arange(n) != i
            channels = jnp.stack(
                [
                    wall,
                    closed[i],
                    jnp.any(closed & others[:, None, None], axis=0),
                    jnp.any(opened, axis=0),
                    key,
                    agents[i],
                    jnp.any(agents & others[:, None, None], axis=0),
                    holder_cell & ~agents[i],
                ],
                axis=-1,
            ).astype(jnp.float32)
            flags = jnp.array([holding[i], state.doors_open[i], state.t / params.max_steps], jnp.float32)
            return jnp.concatenate([channels.ravel(), flags])

        return jnp.stack([row(i) for i in range(n)])

    def global_state(self, state: KeyDoorState, params: KeyDoorParams) -> Array:
        n, size = params.n_agents, params.size
        closed, opened, wall = self.layout(state, params)
        agents = jax.vmap(lambda p: occupancy(p[None], jnp.ones(1, bool), size, size))(state.positions)
        grid = jnp.concatenate(
            [jnp.stack([wall, jnp.any(closed, axis=0), jnp.any(opened, axis=0), self.key_on_floor(state, params)]), agents]
        ).astype(jnp.float32)
        holder = jax.nn.one_hot(jnp.where(state.holder == NO_HOLDER, n, state.holder), n + 1, dtype=jnp.float32)
        progress = (state.t / params.max_steps).astype(jnp.float32)[None]
        return jnp.concatenate([jnp.moveaxis(grid, 0, -1).ravel(), holder, state.doors_open.astype(jnp.float32), progress])

    # ----- rendering -----
    def render_rgb(self, state: KeyDoorState, params: KeyDoorParams, cell: int = 16) -> np.ndarray:
        """Floor light grey, walls dark grey, doors in their owner's colour (open: pale), key yellow, agents coloured."""
        n, size = params.n_agents, params.size
        colours = agent_colours(n)
        base = np.full((size, size, 3), 220, np.uint8)
        base[0, :] = base[-1, :] = base[:, 0] = base[:, -1] = 70
        doors = door_cells(size, n)
        is_open = np.asarray(state.doors_open)
        base[doors[:, 0], doors[:, 1]] = np.where(is_open[:, None], (colours // 2 + 128).astype(np.uint8), colours)
        image = upscale(base, cell)
        paint_cells(image, np.asarray(state.positions), colours, cell, margin=3)
        holder = int(state.holder)
        key_cell = np.asarray(state.positions[holder] if holder != NO_HOLDER else state.key_position)[None]
        paint_cells(image, key_cell, np.array([[250, 210, 0]], np.uint8), cell, margin=cell // 2 - 2)
        return image

    def render_text(self, state: KeyDoorState, params: KeyDoorParams) -> str:
        n, size = params.n_agents, params.size
        grid = [["#" if r in (0, size - 1) or c in (0, size - 1) else "." for c in range(size)] for r in range(size)]
        for i, (r, c) in enumerate(door_cells(size, n)):
            letter = chr(ord("A") + i)
            grid[r][c] = letter.lower() if bool(state.doors_open[i]) else letter
        holder = int(state.holder)
        if holder == NO_HOLDER:
            r, c = np.asarray(state.key_position)
            grid[r][c] = "k"
        for i, (r, c) in enumerate(np.asarray(state.positions)):
            grid[r][c] = str(i)
        lines = [f"{self.name}  step {int(state.t)}/{int(params.max_steps)}  n={n}"] + ["".join(row) for row in grid]
        lines.append(f"  key: {'on the floor (k)' if holder == NO_HOLDER else f'held by agent_{holder}'}")
        lines.append("  doors (A.. closed, a.. open): " + " ".join(f"agent_{i}={'open' if bool(o) else 'closed'}" for i, o in enumerate(np.asarray(state.doors_open))))
        return "\n".join(lines)
