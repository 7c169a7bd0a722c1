"""Pure-JAX rules of the Sequential Social Dilemma games (``rules="ssd"``, selected by ``preset="ssd"``).

Each function reproduces one rule of eugenevinitsky/sequential_social_dilemma_games (SSD), cited by
file and method; the code is this package's own. Orientations are this package's (0 north/up,
1 east/right, 2 south/down, 3 west/left); actions are SSD's (:mod:`motivegym.envs.spatial.ssd_maps`).
Where SSD draws from Python/NumPy's global random state (agent order, spawn draws), these functions draw
from a JAX key with the same distribution.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from motivegym.envs.spatial.grid import DIRECTIONS, in_bounds, read_cells
from motivegym.envs.spatial.ssd_maps import (
    CLEAN,
    FIRE,
    MOVE_DOWN,
    MOVE_LEFT,
    MOVE_RIGHT,
    MOVE_UP,
    SSD_MOVE_TURNS,
    STAY,
    TURN_CLOCKWISE,
    TURN_COUNTERCLOCKWISE,
)

Array = jax.Array


# ----- actions -----
def decode(actions: Array, num_actions: int) -> Array:
    """int32 ``[n]`` SSD actions; out-of-range indices become ``STAY`` (SSD itself raises ``KeyError``)."""
    actions = jnp.asarray(actions).astype(jnp.int32)
    return jnp.where((actions >= 0) & (actions < num_actions), actions, STAY)


def turn(orient: Array, actions: Array) -> Array:
    """``TURN_CLOCKWISE`` +1, ``TURN_COUNTERCLOCKWISE`` −1 quarter turn (``map_env.update_rotation``)."""
    return (orient + jnp.where(actions == TURN_CLOCKWISE, 1, 0) + jnp.where(actions == TURN_COUNTERCLOCKWISE, 3, 0)) % 4


def is_mover(actions: Array) -> Array:
    """``[n]`` bool: MOVE_* and STAY actions, the ones ``map_env.update_moves`` reserves a cell for."""
    return actions <= STAY


def move_targets(pos: Array, orient: Array, actions: Array, walls: Array) -> Array:
    """``[n, 2]`` reserved cells: the egocentric step of a MOVE action (``map_env.rotate_action``), the own
    cell for STAY and for a step into a wall or off the map (``agent.return_valid_pos``)."""
    turns = jnp.select([actions == MOVE_UP, actions == MOVE_RIGHT, actions == MOVE_DOWN, actions == MOVE_LEFT], [SSD_MOVE_TURNS[a] for a in (MOVE_UP, MOVE_RIGHT, MOVE_DOWN, MOVE_LEFT)], 0)
    stepping = actions < STAY
    target = pos + jnp.asarray(DIRECTIONS)[(orient + turns) % 4] * stepping[:, None]
    blocked = read_cells(walls, target, outside=True)
    return jnp.where(blocked[:, None], pos, target)


# ----- collisions -----
def _highest_index(mask: Array) -> Array:
    """Largest index where ``mask`` holds (−1 if none): SSD's ``agent_by_pos`` keeps the last agent of a cell."""
    return jnp.max(jnp.where(mask, jnp.arange(mask.shape[0]), -1))


def resolve_moves(key: Array, pos: Array, target: Array, mover: Array, width: int) -> Array:
    """New positions ``[n, 2]`` by SSD's conflict resolution (``map_env.update_moves``), step for step.

    Cells are ids ``row·width + col``; ``target`` comes from :func:`move_targets`, ``mover`` from :func:`is_mover`.

    1. **Contested cells** (reserved by more than one mover), in ascending (row, col) order (``np.unique``):
       the cell is *blocked* when an agent stands on it (the highest-index one, as SSD's ``agent_by_pos``)
       that has no move, stays (its reservation is its own cell, possibly rewritten by an earlier
       contest), or swaps with one of the contenders. Otherwise the contender first in a uniformly random
       order of the movers (SSD: ``np.random.shuffle``; here ``jax.random.permutation``) moves in at once,
       even while the occupant has not left yet. All contenders then reserve their current cells.
    2. **Passes** in agent index order until every reservation is settled: a mover whose reserved cell is
       free moves; one whose cell is taken stays if the occupant (highest index in the pass's snapshot) is
       itself, has no pending move or stays; both stay if they would swap; otherwise it waits for the next
       pass. A pass in which nobody settles moves every waiting agent at once (rotations of 3 or more).

    SSD's quirk is kept: step 1 can move a winner onto an occupant that later fails to leave, and the two
    then share a cell (SSD's ``test_envs`` never builds that case).
    """
    n = pos.shape[0]
    index = jnp.arange(n)
    cur0 = pos[:, 0] * width + pos[:, 1]
    goal0 = target[:, 0] * width + target[:, 1]
    rank = jax.random.permutation(key, n)
    same = (goal0[:, None] == goal0[None, :]) & mover[:, None] & mover[None, :]
    contested = mover & (jnp.sum(same, axis=1) > 1)
    big = jnp.iinfo(jnp.int32).max
    order = jnp.argsort(jnp.where(contested, goal0, big), stable=True)

    def contest(s, carry):
        cur, goal = carry
        agent = order[s]
        previous = order[jnp.maximum(s - 1, 0)]
        first = contested[agent] & ((s == 0) | (goal0[previous] != goal0[agent]))
        cell = goal0[agent]
        contenders = mover & (goal0 == cell)
        occupant = _highest_index(cur == cell)
        occupied = occupant >= 0
        occupant = jnp.maximum(occupant, 0)
        occupant_goal = goal[occupant]
        blocked = occupied & (~mover[occupant] | (occupant_goal == cur[occupant]) | jnp.any(contenders & (cur == occupant_goal)))
        winner = jnp.argmin(jnp.where(contenders, rank, n))
        cur = jnp.where(first & ~blocked & (index == winner), cell, cur)
        goal = jnp.where(first & contenders, cur, goal)
        return cur, goal

    cur, goal = jax.lax.fori_loop(0, n, contest, (cur0, goal0))

    def one_pass(_, carry):
        cur, pending, done = carry
        snapshot, keys = cur, pending

        def visit(i, inner):
            cur, live = inner
            acting = keys[i] & live[i] & ~done
            cell = goal[i]
            occupied = jnp.any(cur == cell)
            in_snapshot = _highest_index(snapshot == cell)
            occupant = jnp.where(in_snapshot >= 0, in_snapshot, _highest_index(cur == cell))
            occupant = jnp.maximum(occupant, 0)
            occupant_cell = cur[occupant]
            occupant_move = jnp.where(live[occupant], goal[occupant], occupant_cell)
            stays = (occupant == i) | ~keys[occupant] | (occupant_cell == occupant_move)
            swap = ~stays & (goal[occupant] == cur[i]) & (cell == occupant_cell)
            settles = acting & (~occupied | stays | swap)
            cur = jnp.where(acting & ~occupied & (index == i), cell, cur)
            live = live & ~(settles & (index == i)) & ~(acting & occupied & swap & (index == occupant))
            return cur, live

        cur, live = jax.lax.fori_loop(0, n, visit, (cur, pending))
        stuck = ~done & jnp.any(pending) & (jnp.sum(live) == jnp.sum(pending))
        cur = jnp.where(stuck & live, goal, cur)
        live = live & ~stuck
        return cur, live, done | stuck | ~jnp.any(live)

    cur, _, _ = jax.lax.fori_loop(0, n + 1, one_pass, (cur, mover, ~jnp.any(mover)))
    return jnp.stack([cur // width, cur % width], axis=-1).astype(jnp.int32)


# ----- beams -----
def beam_cells(pos: Array, orient: Array, length: int, width: int) -> Array:
    """int32 ``[n, width, length, 2]`` (``map_env.update_map_fire``): the centre lane runs ``1..length``
    cells ahead; the two side lanes (width 3) start level with the firer, one cell to each side, and run
    ``0..length−1`` cells ahead."""
    directions = jnp.asarray(DIRECTIONS)
    forward = directions[orient]
    right = directions[(orient + 1) % 4]
    lateral = np.arange(width) - (width - 1) // 2
    start = np.where(lateral == 0, 1, 0)
    ahead = start[:, None] + np.arange(length)[None, :]  # [width, length]
    return (
        pos[:, None, None, :]
        + jnp.asarray(lateral)[None, :, None, None] * right[:, None, None, :]
        + jnp.asarray(ahead)[None, :, :, None] * forward[:, None, None, :]
    )


def _exclusive_any(mask: Array) -> Array:
    """``[..., L]``: any ``mask`` strictly before each position along the last axis."""
    return (jnp.cumsum(mask, axis=-1) - mask) > 0


def lane_reach(cells: Array, walls: Array, stops_after: Array) -> Array:
    """bool ``[..., L]``: cells a lane covers. It ends before a wall or the map edge and after the first
    cell where ``stops_after`` holds (an agent; for the clean beam also waste)."""
    open_cell = in_bounds(cells, walls.shape) & ~read_cells(walls, cells, outside=True)
    return (jnp.cumprod(open_cell, axis=-1) > 0) & ~_exclusive_any(stops_after & open_cell)


def agents_at(cells: Array, pos: Array) -> Array:
    """bool ``[..., n]``: agent ``j`` stands on each cell."""
    return jnp.all(cells[..., None, :] == pos, axis=-1)


def tag_hits(pos: Array, orient: Array, firing: Array, walls: Array, length: int, width: int) -> tuple[Array, Array]:
    """``(hits [firer, target] bool, covered [n, width, length] bool)`` of the FIRE beams.

    Each lane stops at the first agent, who is hit (the highest-index one on a shared cell, SSD's
    ``agent_by_pos``); waste and apples do not stop it. The firer is never in its own lanes.
    """
    n = pos.shape[0]
    cells = beam_cells(pos, orient, length, width)
    present = agents_at(cells, pos)  # [n, w, L, n]
    occupied = jnp.any(present, axis=-1)
    covered = lane_reach(cells, walls, occupied) & firing[:, None, None]
    victim = jnp.max(jnp.where(present, jnp.arange(n), -1), axis=-1)
    hit_here = covered & occupied
    hits = jnp.any(hit_here[..., None] & (victim[..., None] == jnp.arange(n)), axis=(1, 2))
    return hits, covered


def clean_beams(key: Array, pos: Array, orient: Array, cleaning: Array, waste: Array, walls: Array, length: int, width: int) -> tuple[Array, Array]:
    """``(waste after cleaning, cells cleaned per agent [n])`` of the CLEAN beams, fired one agent after
    another in a uniformly random order (``map_env.update_custom_moves`` shuffles the agents).

    Each lane stops at the first agent or at the first waste cell, which it cleans (``cleanup.custom_action``:
    ``blocking_cells=[H]``); a later beam sees the waste the earlier ones removed.
    """
    n = pos.shape[0]
    cells = beam_cells(pos, orient, length, width)
    occupied = jnp.any(agents_at(cells, pos), axis=-1)  # [n, w, L]
    order = jax.random.permutation(key, n)
    h, w = waste.shape

    def fire(k, carry):
        waste, cleaned = carry
        i = order[k]
        lane_cells = cells[i]
        dirty = read_cells(waste, lane_cells, outside=False)
        reach = lane_reach(lane_cells, walls, occupied[i] | dirty) & cleaning[i]
        hit = reach & dirty
        rows = jnp.where(hit, lane_cells[..., 0], h).ravel()
        waste = waste.at[rows, lane_cells[..., 1].ravel()].set(False, mode="drop")
        return waste, cleaned.at[i].set(jnp.sum(hit))

    return jax.lax.fori_loop(0, n, fire, (waste, jnp.zeros(n, jnp.int32)))


def fired(actions: Array) -> tuple[Array, Array]:
    """``(FIRE [n], CLEAN [n])`` masks."""
    return actions == FIRE, actions == CLEAN


# ----- apples and waste -----
def window_offsets(radius: int) -> np.ndarray:
    """``[k, 2]`` offsets with ``j² + k² ≤ radius`` (SSD compares with ``APPLE_RADIUS``, not its square: radius 2
    is the 3×3 window, centre included)."""
    span = range(-radius, radius + 1)
    return np.array([(j, k) for j in span for k in span if j * j + k * k <= radius], np.int32).reshape(-1, 2)


def window_count(apples: Array, radius: int) -> Array:
    """int32 ``[H, W]``: apples in :func:`window_offsets` around each cell (off-map cells count 0)."""
    h, w = apples.shape
    pad = radius
    padded = jnp.pad(apples.astype(jnp.int32), pad)
    return sum((padded[pad + j : pad + j + h, pad + k : pad + k + w] for j, k in window_offsets(radius)), jnp.zeros((h, w), jnp.int32))


def harvest_regrowth(key: Array, apples: Array, spawn_cells: np.ndarray, occupied: Array, probs: Array, radius: int) -> Array:
    """Apples after SSD's ``harvest.spawn_apples``: every apple cell without an apple or an agent grows one with
    probability ``probs[min(count, 3)]`` (SSD ``SPAWN_PROB = [0, 0.005, 0.02, 0.05]``), ``count`` from
    :func:`window_count` on the map before this draw."""
    counts = window_count(apples, radius)[spawn_cells[:, 0], spawn_cells[:, 1]]
    probability = probs[jnp.minimum(counts, 3)]
    draws = jax.random.uniform(key, (spawn_cells.shape[0],)) < probability
    grows = jnp.zeros(apples.shape, bool).at[spawn_cells[:, 0], spawn_cells[:, 1]].set(draws)
    return apples | (grows & ~occupied)


def cleanup_probabilities(waste_count: Array, potential: int, apple_p: Array, waste_p: Array, depletion: Array, restoration: Array) -> tuple[Array, Array, Array]:
    """``(density, apple probability, waste probability)`` of ``cleanup.compute_probabilities``:
    ``d = waste / potential``; ``d ≥ depletion`` stops both; else waste ``waste_p`` and apples ``apple_p`` at
    ``d ≤ restoration``, ``(1 − (d − restoration)/(depletion − restoration))·apple_p`` above."""
    density = waste_count.astype(jnp.float32) / jnp.float32(max(potential, 1))
    depleted = density >= depletion
    apples = jnp.where(density <= restoration, apple_p, (1.0 - (density - restoration) / (depletion - restoration)) * apple_p)
    return density, jnp.where(depleted, 0.0, apples), jnp.where(depleted, 0.0, waste_p)


def cleanup_spawn(key: Array, apples: Array, waste: Array, apple_cells: np.ndarray, river: Array, occupied: Array, apple_p: Array, waste_p: Array) -> tuple[Array, Array]:
    """``cleanup.spawn_apples_and_waste``: each apple cell without apple or agent grows one with ``apple_p``;
    then at most one waste cell: SSD visits the clean river cells in random order and pollutes the first
    whose draw is below ``waste_p``, i.e. with probability ``1 − (1 − waste_p)^F`` (``F`` clean cells) one
    uniformly chosen clean cell. Waste may appear under an agent."""
    apple_key, gate_key, pick_key = jax.random.split(key, 3)
    draws = jax.random.uniform(apple_key, (apple_cells.shape[0],)) < apple_p
    grows = jnp.zeros(apples.shape, bool).at[apple_cells[:, 0], apple_cells[:, 1]].set(draws)
    apples = apples | (grows & ~occupied)
    clean = river & ~waste
    free = jnp.sum(clean)
    spawn = (jax.random.uniform(gate_key) < 1.0 - (1.0 - waste_p) ** free) & (free > 0)
    scores = jnp.where(clean, jax.random.uniform(pick_key, waste.shape), -1.0)
    pick = jnp.argmax(scores.ravel())
    waste = waste | ((jnp.arange(waste.size) == pick).reshape(waste.shape) & spawn)
    return apples, waste


def first_at_cell(pos: Array) -> Array:
    """``[n]`` bool: no lower-index agent shares the cell (SSD lets agents consume in index order)."""
    n = pos.shape[0]
    same = jnp.all(pos[:, None, :] == pos[None, :, :], axis=-1)
    return ~jnp.any(same & (jnp.arange(n)[None, :] < jnp.arange(n)[:, None]), axis=1)


# ----- observations -----
def view_offsets(view_len: int) -> np.ndarray:
    """int32 ``[4, V, V, 2]`` (V = 2·view_len + 1): offsets (row, col) from the agent of each view cell per
    orientation, exactly ``map_env.color_view``: the north-up window as is (UP), ``np.rot90`` (LEFT),
    ``np.rot90(k=2)`` (DOWN), ``np.rot90(axes=(1, 0))`` (RIGHT). SSD's LEFT/RIGHT views put the facing
    direction at the bottom, its UP/DOWN views at the top; kept as is."""
    span = np.arange(-view_len, view_len + 1)
    north_up = np.stack(np.meshgrid(span, span, indexing="ij"), axis=-1)
    by_orient = {0: north_up, 3: np.rot90(north_up), 2: np.rot90(north_up, k=2), 1: np.rot90(north_up, k=1, axes=(1, 0))}
    return np.stack([by_orient[o] for o in range(4)]).astype(np.int32)


def window_views(cell_values: Array, pos: Array, orient: Array, view_len: int) -> Array:
    """``[n, V, V, C]``: ``cell_values [H, W, C]`` read through :func:`view_offsets`, zeros off the map
    (SSD pads its colour map with black)."""
    offsets = jnp.asarray(view_offsets(view_len))[orient]  # [n, V, V, 2]
    padded = jnp.pad(cell_values, ((view_len, view_len), (view_len, view_len), (0, 0)))
    cells = pos[:, None, None, :] + view_len + offsets
    return padded[cells[..., 0], cells[..., 1]]
