"""Shared pure-JAX mechanics of the grid worlds (Harvest, Cleanup and the Melting Pot substrates: CoopMining,
Mushrooms, GiftRefinement, Territory, the in-the-Matrix games; beams that stop at the first agent, cooldowns and
sanctions are in :mod:`motivegym.envs.spatial.grid_extensions`).

* **Layouts are data:** an ASCII map (a tuple of equal-length strings, a static param) is parsed
  once on the host into numpy arrays (:func:`parse_layout`); jitted code embeds them as constants.
* **Agents:** ``AgentState`` holds positions ``[n, 2]`` (row, col), orientations ``[n]``
  (0 north/up, 1 east, 2 south, 3 west) and removal timeouts ``[n]`` (0 = on the map).
* **Actions** (Melting Pot order): see :data:`ACTION_NAMES`. Out-of-range indices act as ``noop``.
* **Movement:** one cell per step relative to the orientation. A move fails into a wall (or off the
  grid), into a cell occupied by any on-map agent at the start of the step (so agents never swap or
  follow each other in one step), or when a higher-priority agent moves into the same cell.
  Priorities are uniform random numbers drawn from the step key, so collisions are resolved
  deterministically for a given key and fairly across keys.
* **Beams:** ``width`` parallel lanes of ``length`` cells ahead of the firer, centred on its facing
  line; each lane stops at the first wall. Beams pass through agents and hit every on-map agent in
  their cells except the firer.
* **Removal:** an agent hit by a tag beam leaves the map for ``tag_timeout`` steps (its actions are
  ignored and it is invisible); it then respawns at a random free spawn point with a random orientation.
* **Egocentric views:** a window ``view_ahead`` rows ahead, ``view_behind`` behind and ``view_side``
  columns to each side, rotated so the agent faces up; row 0 is the farthest row ahead, column 0 the
  leftmost. Cells outside the grid read as walls.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from motivegym.core.pytree import pytree_dataclass

Array = jax.Array

NOOP, FORWARD, BACKWARD, STEP_LEFT, STEP_RIGHT, TURN_LEFT, TURN_RIGHT, FIRE_TAG, FIRE_CLEAN = range(9)
ACTION_NAMES = ("noop", "forward", "backward", "step_left", "step_right", "turn_left", "turn_right", "fire_tag", "fire_clean")
#: unit steps (row, col) of the orientations north, east, south, west
DIRECTIONS = np.array([[-1, 0], [0, 1], [1, 0], [0, -1]], np.int32)
ORIENTATION_ARROWS = "^>v<"

#: ASCII map legend
WALL, FLOOR, SPAWN, APPLE, APPLE_SPAWN_EMPTY, RIVER, WASTE, STREAM = "#", " ", "P", "A", "a", "~", "*", "="
INSIDE_SPAWN = "Q"
LEGEND = {
    WALL: "wall",
    FLOOR: "floor",
    SPAWN: "agent spawn point",
    APPLE: "apple spawn point with an apple at reset",
    APPLE_SPAWN_EMPTY: "apple spawn point, empty at reset",
    RIVER: "river (clean water)",
    WASTE: "river with waste at reset",
    STREAM: "stream: walkable floor drawn like the river, never polluted (SSD Cleanup's 'S')",
    INSIDE_SPAWN: "inside spawn point (Melting Pot's 'Q'): the first two agents' reset cells under rules='meltingpot', floor otherwise",
}


@dataclasses.dataclass(frozen=True)
class Layout:
    """A parsed ASCII map (numpy, host side)."""

    walls: np.ndarray  # [H, W] bool
    apple_spawn: np.ndarray  # [H, W] bool
    initial_apples: np.ndarray  # [H, W] bool
    river: np.ndarray  # [H, W] bool
    initial_waste: np.ndarray  # [H, W] bool
    stream: np.ndarray  # [H, W] bool
    spawn_points: np.ndarray  # [K, 2] int32 (row, col) in reading order
    inside_spawn_points: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros((0, 2), np.int32))  # [Q, 2] 'Q' cells

    @property
    def apple_cells(self) -> np.ndarray:
        """``[K, 2]`` (row, col) of the apple spawn cells."""
        return np.argwhere(self.apple_spawn).astype(np.int32).reshape(-1, 2)

    @property
    def river_cells(self) -> np.ndarray:
        """``[K, 2]`` (row, col) of the river cells."""
        return np.argwhere(self.river).astype(np.int32).reshape(-1, 2)

    @property
    def shape(self) -> tuple[int, int]:
        return self.walls.shape


def layout_keyword_as_rows(overrides: dict[str, Any]) -> None:
    """A ``layout`` keyword given as one multi-line string or a list of rows becomes a tuple of rows (in place), the
    form the params field holds; other values are left for the params check to refuse."""
    if isinstance(overrides.get("layout"), str):
        overrides["layout"] = tuple(overrides["layout"].strip("\n").split("\n"))
    elif "layout" in overrides:
        overrides["layout"] = tuple(overrides["layout"])


def char_grid(rows: tuple[str, ...], legend: dict[str, str]) -> np.ndarray:
    """``[H, W]`` array of the characters of an ASCII map (every env's parser starts here). Ragged or empty rows, or
    characters that are not keys of ``legend``, raise ``ValueError`` (the message lists the legend)."""
    if not rows or len({len(r) for r in rows}) != 1 or not rows[0]:
        raise ValueError(f"layout rows must be non-empty strings of equal length, got lengths {[len(r) for r in rows]}")
    grid = np.array([list(r) for r in rows])
    unknown = sorted(set(grid.ravel()) - set(legend))
    if unknown:
        raise ValueError(f"layout has unknown characters {unknown}; legend: {legend}")
    return grid


@functools.lru_cache(maxsize=64)
def parse_layout(rows: tuple[str, ...]) -> Layout:
    """Parse an ASCII map (see :data:`LEGEND`); ragged rows or unknown characters raise ``ValueError``."""
    grid = char_grid(rows, LEGEND)
    spawn_points = np.argwhere(grid == SPAWN).astype(np.int32)
    return Layout(
        walls=grid == WALL,
        apple_spawn=(grid == APPLE) | (grid == APPLE_SPAWN_EMPTY),
        initial_apples=grid == APPLE,
        river=(grid == RIVER) | (grid == WASTE),
        initial_waste=grid == WASTE,
        stream=grid == STREAM,
        spawn_points=spawn_points.reshape(-1, 2),
        inside_spawn_points=np.argwhere(grid == INSIDE_SPAWN).astype(np.int32).reshape(-1, 2),
    )


#: Melting Pot's 11×11 egocentric window (9 rows ahead, 1 behind, 5 columns each side), the default view of its substrates
MELTINGPOT_VIEW = {"view_ahead": 9, "view_behind": 1, "view_side": 5}


def validate_view(params: Any, where: str) -> None:
    """Raise ``ValueError`` unless ``params.view_ahead``, ``view_behind`` and ``view_side`` are all ``>= 0``."""
    for name in ("view_ahead", "view_behind", "view_side"):
        if int(getattr(params, name)) < 0:
            raise ValueError(f"{where}: {name} must be >= 0, got {getattr(params, name)}")


def validate_layout(layout: Layout, n_agents: int, where: str) -> None:
    """Raise ``ValueError`` unless the map has at least one spawn point per agent."""
    if n_agents < 1:
        raise ValueError(f"{where}: n_agents must be >= 1, got {n_agents}")
    if len(layout.spawn_points) < n_agents:
        raise ValueError(f"{where}: the layout has {len(layout.spawn_points)} spawn points ('P') for {n_agents} agents")


@pytree_dataclass
class AgentState:
    """Bodies of the agents on a grid."""

    pos: Array  # [n, 2] int32 (row, col); meaningless while removed
    orient: Array  # [n] int32, 0 north, 1 east, 2 south, 3 west
    timeout: Array  # [n] int32 steps left off the map (0 = on the map)


def on_map(agents: AgentState) -> Array:
    """``[n]`` bool: agents currently on the map."""
    return agents.timeout == 0


def decode_actions(actions: Array, num_actions: int, active: Array) -> Array:
    """int32 ``[n]`` actions; out-of-range indices and removed agents become ``NOOP``."""
    actions = jnp.asarray(actions).astype(jnp.int32)
    valid = (actions >= 0) & (actions < num_actions) & active
    return jnp.where(valid, actions, NOOP)


def turn(orient: Array, actions: Array) -> Array:
    """Orientation after ``turn_left`` (−1 mod 4) / ``turn_right`` (+1 mod 4)."""
    delta = jnp.where(actions == TURN_LEFT, 3, 0) + jnp.where(actions == TURN_RIGHT, 1, 0)
    return (orient + delta) % 4


def movement_direction(orient: Array, actions: Array) -> tuple[Array, Array]:
    """``(moving [n] bool, absolute direction [n])`` of the move actions relative to ``orient``."""
    relative = jnp.select(
        [actions == FORWARD, actions == STEP_RIGHT, actions == BACKWARD, actions == STEP_LEFT], [0, 1, 2, 3], 0
    )
    moving = (actions >= FORWARD) & (actions <= STEP_RIGHT)
    return moving, (orient + relative) % 4


def in_bounds(cells: Array, shape: tuple[int, int]) -> Array:
    """``[...]`` bool: ``cells[..., 2]`` inside a grid of ``shape``."""
    return (cells[..., 0] >= 0) & (cells[..., 0] < shape[0]) & (cells[..., 1] >= 0) & (cells[..., 1] < shape[1])


def read_cells(grid: Array, cells: Array, outside: bool | float = True) -> Array:
    """``grid`` at ``cells[..., 2]`` (any leading shape); cells off the grid read ``outside``."""
    h, w = grid.shape[:2]
    inside = in_bounds(cells, (h, w))
    values = grid[jnp.clip(cells[..., 0], 0, h - 1), jnp.clip(cells[..., 1], 0, w - 1)]
    mask = inside.reshape(inside.shape + (1,) * (values.ndim - inside.ndim))
    return jnp.where(mask, values, jnp.asarray(outside, values.dtype))


def move(key: Array, agents: AgentState, actions: Array, walls: Array) -> Array:
    """New positions ``[n, 2]`` after the move actions (collision rules in the module docstring)."""
    n = agents.pos.shape[0]
    active = on_map(agents)
    moving, direction = movement_direction(agents.orient, actions)
    moving = moving & active
    target = agents.pos + jnp.asarray(DIRECTIONS)[direction] * moving[:, None]
    free_of_walls = ~read_cells(walls, target, outside=True)
    same_cell = jnp.all(target[:, None, :] == agents.pos[None, :, :], axis=-1)  # [i, j]: i's target is j's cell
    others = ~jnp.eye(n, dtype=bool)
    occupied = jnp.any(same_cell & others & active[None, :], axis=1)
    candidate = moving & free_of_walls & ~occupied
    priority = jax.random.uniform(key, (n,))  # ties (probability ~0) go to the lower index
    index = jnp.arange(n)
    beats = (priority[None, :] > priority[:, None]) | ((priority[None, :] == priority[:, None]) & (index[None, :] < index[:, None]))
    contested = jnp.all(target[:, None, :] == target[None, :, :], axis=-1) & others & candidate[None, :]
    outranked = jnp.any(contested & beats, axis=1)
    succeeds = candidate & ~outranked
    return jnp.where(succeeds[:, None], target, agents.pos)


def turn_and_move(key: Array, agents: AgentState, actions: Array, walls: Array) -> AgentState:
    """Agents after the turn and move actions of one step: first ``turn_left`` / ``turn_right`` (:func:`turn`), then
    the moves relative to the new orientation under the collision rules of :func:`move` (``actions`` decoded)."""
    agents = dataclasses.replace(agents, orient=turn(agents.orient, actions))
    return dataclasses.replace(agents, pos=move(key, agents, actions, walls))


def beam_cells(pos: Array, orient: Array, length: int, width: int) -> Array:
    """int32 ``[n, width, length, 2]``: lane ``w`` (left to right), distance ``d+1`` ahead of each agent."""
    directions = jnp.asarray(DIRECTIONS)
    forward = directions[orient]  # [n, 2]
    right = directions[(orient + 1) % 4]
    lateral = jnp.arange(width) - (width - 1) // 2
    ahead = jnp.arange(1, length + 1)
    return (
        pos[:, None, None, :]
        + lateral[None, :, None, None] * right[:, None, None, :]
        + ahead[None, None, :, None] * forward[:, None, None, :]
    )


def beam_reach(cells: Array, walls: Array) -> Array:
    """bool ``[n, width, length]``: beam cells reached (each lane stops at its first wall or the grid edge)."""
    open_cell = ~read_cells(walls, cells, outside=True)
    return jnp.cumprod(open_cell, axis=-1).astype(bool)


def beam_hits(cells: Array, reach: Array, firing: Array, agents_pos: Array, targetable: Array) -> Array:
    """bool ``[n_firer, n_target]``: firing agents' beams covering targetable agents (never oneself)."""
    n = agents_pos.shape[0]
    covers = jnp.all(cells[:, :, :, None, :] == agents_pos[None, None, None, :, :], axis=-1) & reach[..., None]
    hit = jnp.any(covers, axis=(1, 2))
    return hit & firing[:, None] & targetable[None, :] & ~jnp.eye(n, dtype=bool)


def beam_grid(cells: Array, reach: Array, firing: Array, shape: tuple[int, int]) -> Array:
    """bool ``[H, W]``: cells covered by the beams of the firing agents."""
    covered = (reach & firing[:, None, None]).ravel()
    rows = jnp.where(covered, cells[..., 0].ravel(), shape[0])  # out of range -> dropped
    return jnp.zeros(shape, bool).at[rows, cells[..., 1].ravel()].set(True, mode="drop")


def occupancy(pos: Array, active: Array, shape: tuple[int, int]) -> Array:
    """bool ``[H, W]``: cells holding an on-map agent."""
    rows = jnp.where(active, pos[:, 0], shape[0])
    return jnp.zeros(shape, bool).at[rows, pos[:, 1]].set(True, mode="drop")


def bernoulli_at_cells(key: Array, cells: np.ndarray, probability: Array, shape: tuple[int, int]) -> Array:
    """bool ``[H, W]``: independent draws ``u < probability`` at the static ``cells [K, 2]``, False elsewhere.

    Drawing only where something can happen keeps the step cheap: random bits dominate its cost on CPU.
    """
    cells = jnp.asarray(cells)
    draws = jax.random.uniform(key, (cells.shape[0],)) < probability
    return jnp.zeros(shape, bool).at[cells[:, 0], cells[:, 1]].set(draws)


def free_spawn_slots(key: Array, spawn_points: Array, blocked: Array, count: int) -> Array:
    """``[count, 2]`` distinct spawn points in random order, free ones (``~blocked[k]``) first."""
    scores = jax.random.uniform(key, (spawn_points.shape[0],)) + blocked.astype(jnp.float32)
    return spawn_points[jnp.argsort(scores)[:count]]


def initial_agents(key: Array, spawn_points: np.ndarray, n: int) -> AgentState:
    """Agents on ``n`` distinct random spawn points with random orientations."""
    pos_key, orient_key = jax.random.split(key)
    points = jnp.asarray(spawn_points)
    pos = free_spawn_slots(pos_key, points, jnp.zeros(points.shape[0], bool), n)
    orient = jax.random.randint(orient_key, (n,), 0, 4, jnp.int32)
    return AgentState(pos=pos.astype(jnp.int32), orient=orient, timeout=jnp.zeros(n, jnp.int32))


def remove_and_respawn(key: Array, agents: AgentState, tagged: Array, tag_timeout: Array, spawn_points: np.ndarray) -> AgentState:
    """Count down removals, respawn agents whose timeout ends, remove newly tagged agents.

    A removed agent's timeout drops by one per step; the step it reaches 0 the agent reappears at
    a random spawn point not occupied by an on-map agent, facing a random direction. Tagged agents
    get ``timeout = tag_timeout`` and are off the map for exactly that many following steps.
    """
    n = agents.pos.shape[0]
    slot_key, orient_key = jax.random.split(key)
    was_removed = agents.timeout > 0
    countdown = jnp.maximum(agents.timeout - 1, 0)
    returning = was_removed & (countdown == 0)
    staying = ~was_removed & ~tagged
    points = jnp.asarray(spawn_points)
    blocked = jnp.any(jnp.all(points[:, None, :] == agents.pos[None, :, :], axis=-1) & staying[None, :], axis=1)
    slots = free_spawn_slots(slot_key, points, blocked, n)
    rank = jnp.cumsum(returning) - 1
    pos = jnp.where(returning[:, None], slots[jnp.clip(rank, 0, n - 1)], agents.pos)
    orient = jnp.where(returning, jax.random.randint(orient_key, (n,), 0, 4, jnp.int32), agents.orient)
    timeout = jnp.where(tagged & ~was_removed, tag_timeout, countdown).astype(jnp.int32)
    return AgentState(pos=pos.astype(jnp.int32), orient=orient, timeout=timeout)


def view_cells(pos: Array, orient: Array, ahead: int, behind: int, side: int) -> Array:
    """int32 ``[n, ahead+behind+1, 2*side+1, 2]``: grid cells of each agent's rotated window."""
    directions = jnp.asarray(DIRECTIONS)
    forward = directions[orient]
    right = directions[(orient + 1) % 4]
    distance = jnp.arange(ahead, -behind - 1, -1)  # row 0 = farthest ahead
    lateral = jnp.arange(-side, side + 1)
    return (
        pos[:, None, None, :]
        + distance[None, :, None, None] * forward[:, None, None, :]
        + lateral[None, None, :, None] * right[:, None, None, :]
    )


def egocentric_views(channels: Array, pos: Array, orient: Array, ahead: int, behind: int, side: int, wall_channel: int = 0) -> Array:
    """float32 ``[n, window_rows * window_cols * C]``: ``channels [H, W, C]`` read at :func:`view_cells`.

    Cells outside the grid are one-hot on ``wall_channel``. Flattened row-major (row, column, channel).
    The channels are bit-packed into one int per cell and the grid padded by the view radius, so each
    window cell is a single unchecked 1-D gather (about 1.5x faster on CPU than gathering C-vectors).
    """
    h, w, c = channels.shape
    radius = max(ahead, behind, side)
    code = jnp.sum(channels.astype(jnp.int32) << jnp.arange(c, dtype=jnp.int32), axis=-1)
    padded = jnp.pad(code, radius, constant_values=1 << wall_channel)
    cells = view_cells(pos, orient, ahead, behind, side) + radius
    values = padded.ravel()[cells[..., 0] * (w + 2 * radius) + cells[..., 1]]
    bits = (values[..., None] >> jnp.arange(c, dtype=jnp.int32)) & 1
    return bits.reshape(pos.shape[0], -1).astype(jnp.float32)


def own_body_mask(ahead: int, behind: int, side: int, channels: int, body_channels: int = 1) -> np.ndarray:
    """float32 ``[window·channels]`` static mask of a flattened view (:func:`egocentric_views` layout): 0 on the last
    ``body_channels`` channels of the observer's own cell (:func:`view_centre`), 1 elsewhere."""
    keep = np.ones(window_size(ahead, behind, side) * channels, np.float32)
    row, col = view_centre(ahead, side)
    centre = (row * (2 * side + 1) + col) * channels
    keep[centre + channels - body_channels : centre + channels] = 0.0
    return keep


def views_of_others(channels: Array, pos: Array, orient: Array, ahead: int, behind: int, side: int, body_channels: int = 1) -> Array:
    """float32 ``[n, window·C]``: :func:`egocentric_views` with the observer's own body hidden. The last
    ``body_channels`` channels of ``channels [H, W, C]`` mark agents; on the observer's own cell they read 0
    (:func:`own_body_mask`, a static mask, not a scatter), so an agent sees the other agents, never itself."""
    views = egocentric_views(channels, pos, orient, ahead, behind, side)
    return views * own_body_mask(ahead, behind, side, channels.shape[-1], body_channels)


def window_size(ahead: int, behind: int, side: int) -> int:
    """Number of cells of an egocentric window."""
    return (ahead + behind + 1) * (2 * side + 1)


def view_centre(ahead: int, side: int) -> tuple[int, int]:
    """(row, col) of the agent's own cell inside its window."""
    return ahead, side


def agent_features(agents: AgentState, shape: tuple[int, int]) -> Array:
    """float32 ``[n, 7]`` per agent: row/H, col/W, orientation one-hot (4), removed flag."""
    scale = jnp.asarray(shape, jnp.float32)
    active = on_map(agents)
    return jnp.concatenate(
        [
            agents.pos.astype(jnp.float32) / scale * active[:, None],
            jax.nn.one_hot(agents.orient, 4) * active[:, None],
            (~active).astype(jnp.float32)[:, None],
        ],
        axis=1,
    )


def global_state_vector(maps: Array, agents: AgentState, t: Array, max_steps: Array, *extras: Array) -> Array:
    """float32 ``[H·W·C + 7n + Σ extras + 1]``: the layout of every grid env's global state: ``maps [H, W, C]``
    (ravelled row-major), :func:`agent_features` ``[n, 7]`` (ravelled), each of ``extras`` (ravelled, float32), then
    ``t / max_steps``."""
    features = agent_features(agents, maps.shape[:2]).ravel()
    progress = (t.astype(jnp.float32) / max_steps)[None]
    flat = [jnp.ravel(x).astype(jnp.float32) for x in extras]
    return jnp.concatenate([maps.astype(jnp.float32).ravel(), features, *flat, progress])


# ----- rendering (host side, numpy) -----

AGENT_COLOURS = np.array(
    [
        [230, 60, 60], [60, 110, 230], [240, 180, 40], [160, 70, 200], [40, 190, 200],
        [240, 120, 30], [230, 90, 170], [120, 120, 120], [150, 100, 50], [80, 80, 180],
    ],
    np.uint8,
)  # fmt: skip
CELL_COLOURS = {
    "floor": (40, 40, 40),
    "wall": (130, 130, 130),
    "apple": (60, 200, 60),
    "apple_spawn": (45, 70, 45),
    "river": (60, 120, 200),
    "waste": (120, 100, 40),
    "stream": (60, 120, 200),
}


def agent_symbol(i: int) -> str:
    """One character per agent: 0-9, then a-z."""
    return "0123456789abcdefghijklmnopqrstuvwxyz"[i % 36]


def draw_agents(chars: np.ndarray, agents: AgentState) -> None:
    """Write each on-map agent's :func:`agent_symbol` at its cell of ``chars [H, W]`` (in place; removed agents are not
    drawn, a later index overwrites an earlier one on a shared cell)."""
    pos, timeout = np.asarray(agents.pos), np.asarray(agents.timeout)
    for i in range(pos.shape[0]):
        if timeout[i] == 0:
            chars[pos[i, 0], pos[i, 1]] = agent_symbol(i)


def agent_status(agents: AgentState) -> list[str]:
    """One word per agent for text renders: its symbol and facing arrow (``0^``), or ``0:out k`` while it is removed
    for ``k`` more steps."""
    orient, timeout = np.asarray(agents.orient), np.asarray(agents.timeout)
    return [f"{agent_symbol(i)}{ORIENTATION_ARROWS[orient[i]]}" if timeout[i] == 0 else f"{agent_symbol(i)}:out {timeout[i]}" for i in range(len(orient))]


def floor_canvas(shape: tuple[int, int]) -> np.ndarray:
    """uint8 ``[H, W, 3]`` filled with the floor colour (``CELL_COLOURS["floor"]``): the start of every ``render_rgb``."""
    return np.full(tuple(shape) + (3,), CELL_COLOURS["floor"], np.uint8)


def render_text_grid(layout: Layout, agents: AgentState, apples: np.ndarray, waste: np.ndarray | None = None) -> str:
    """ASCII picture: ``#`` wall, ``A`` apple, ``~`` river, ``*`` waste, digits for on-map agents."""
    chars = np.full(layout.shape, FLOOR)
    chars[layout.walls] = WALL
    chars[layout.river] = RIVER
    chars[layout.stream] = STREAM
    if waste is not None:
        chars[np.asarray(waste)] = WASTE
    chars[np.asarray(apples)] = APPLE
    draw_agents(chars, agents)
    lines = ["".join(row) for row in chars]
    return "\n".join(lines + ["agents: " + " ".join(agent_status(agents))])


def render_rgb_grid(cell_rgb: np.ndarray, agents: AgentState, scale: int = 8) -> np.ndarray:
    """uint8 ``[H*scale, W*scale, 3]``: cell colours scaled up, agents as coloured squares with a
    white bar on the side they face."""
    pos, orient, timeout = (np.asarray(x) for x in (agents.pos, agents.orient, agents.timeout))
    image = np.repeat(np.repeat(np.asarray(cell_rgb, np.uint8), scale, axis=0), scale, axis=1)
    bar = max(scale // 4, 1)
    for i in range(pos.shape[0]):
        if timeout[i] != 0:
            continue
        r, c = pos[i] * scale
        image[r : r + scale, c : c + scale] = AGENT_COLOURS[i % len(AGENT_COLOURS)]
        rows, cols = [(slice(r, r + bar), slice(c, c + scale)), (slice(r, r + scale), slice(c + scale - bar, c + scale)),
                      (slice(r + scale - bar, r + scale), slice(c, c + scale)), (slice(r, r + scale), slice(c, c + bar))][orient[i]]  # fmt: skip
        image[rows, cols] = 255
    return image


def base_cell_colours(layout: Layout, apples: np.ndarray, waste: np.ndarray | None = None) -> np.ndarray:
    """uint8 ``[H, W, 3]`` colours of walls, river, waste, apple spawn cells and apples."""
    rgb = floor_canvas(layout.shape)
    rgb[layout.apple_spawn] = CELL_COLOURS["apple_spawn"]
    rgb[layout.river] = CELL_COLOURS["river"]
    rgb[layout.stream] = CELL_COLOURS["stream"]
    if waste is not None:
        rgb[np.asarray(waste)] = CELL_COLOURS["waste"]
    rgb[np.asarray(apples)] = CELL_COLOURS["apple"]
    rgb[layout.walls] = CELL_COLOURS["wall"]
    return rgb
