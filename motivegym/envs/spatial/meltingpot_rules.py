"""Pure-JAX rules of Melting Pot's ``commons_harvest__*`` and ``clean_up`` substrates (``rules="meltingpot"``).

Each function reproduces one rule of google-deepmind/meltingpot (commit 81ee2e7) and of the dmlab2d grid engine it
runs on (google-deepmind/lab2d, ``dmlab2d/system/grid_world/grid.cc``), cited by file and function; the code is this
package's own. Orientations are this package's (0 north, 1 east, 2 south, 3 west); actions are Melting Pot's
``ACTION_SET`` order, the same as :data:`motivegym.envs.spatial.grid.ACTION_NAMES`.

How a dmlab2d frame runs, as far as these rules need it: the components' ``update`` functions run first (apple and
dirt growth read the map as it was at the end of the previous frame), then every registered updater queues its
actions in priority order (``Avatar`` move 150, ``Zapper``/``Cleaner`` beams 140, respawn 135, ``DensityRegrow``
sprouts 10; the pieces of each updater in a random order), then the queue is processed in that order, each action
seeing the effects of the earlier ones. State changes requested from inside a callback (an apple eaten on entry, a
player or a dirt cell hit by a beam) are queued behind the whole first pass, so every beam of a frame sees the same
players and the same dirt.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from motivegym.envs.spatial.grid import DIRECTIONS, AgentState, in_bounds, movement_direction, read_cells

Array = jax.Array


# ----- reset -----
def initial_agents(key: Array, spawn_points: np.ndarray, inside_points: np.ndarray, n: int) -> AgentState:
    """Agents at reset (``Avatar.start``, ``create_avatar_objects``): the first ``min(n, 2, Q)`` players on distinct
    random inside spawn points ``Q`` (commons_harvest's ``insideSpawnPoints``), the others on distinct random ``P``
    points; every facing uniformly random (``randomizeInitialOrientation`` defaults to true)."""
    inside_key, outside_key, orient_key = jax.random.split(key, 3)
    n_inside = min(n, 2, len(inside_points))
    outside = jnp.asarray(spawn_points)[jax.random.permutation(outside_key, len(spawn_points))[: n - n_inside]]
    if n_inside:
        inside = jnp.asarray(inside_points)[jax.random.permutation(inside_key, len(inside_points))[:n_inside]]
        outside = jnp.concatenate([inside, outside])
    orient = jax.random.randint(orient_key, (n,), 0, 4, jnp.int32)
    return AgentState(pos=outside.astype(jnp.int32), orient=orient, timeout=jnp.zeros(n, jnp.int32))


# ----- cooldowns -----
def cooldown_fire(cooldown: Array, on_map: Array, pressed: Array, cooldown_time: Array) -> tuple[Array, Array]:
    """``(fires [n], cooldown after the step [n])`` of ``Zapper``/``Cleaner`` (``avatar_library.lua``, ``zap``): a
    player on the map with a positive timer counts it down by one and cannot fire this step; with the timer at 0 the
    fire action fires and sets the timer to ``cooldown_time``. A player fires at most every ``cooldown_time + 1``
    steps; the timer stands still while the player is removed."""
    cooling = cooldown > 0
    fires = on_map & ~cooling & pressed
    after = jnp.where(on_map & cooling, cooldown - 1, jnp.where(fires, cooldown_time, cooldown))
    return fires, after.astype(jnp.int32)


def ready_to_shoot(cooldown: Array, on_map: Array, cooldown_time: Array) -> Array:
    """``READY_TO_SHOOT`` (``Zapper:readyToShoot``): ``max(1 − timer / cooldown_time, 0)`` on the map, 0 removed."""
    ready = jnp.where(cooldown_time > 0, jnp.maximum(1.0 - cooldown / jnp.maximum(cooldown_time, 1), 0.0), 1.0)
    return jnp.where(on_map, ready, 0.0).astype(jnp.float32)


# ----- movement -----
def sequential_moves(key: Array, pos: Array, orient: Array, actions: Array, walls: Array, on_map: Array) -> Array:
    """Positions ``[n, 2]`` after the move actions, processed one player after another in a uniformly random order
    (dmlab2d ``Grid::PushPieceActual`` over the shuffled queue): a move fails into a wall, off the map or into a cell
    an on-map player holds at that moment, so a player can step into a cell vacated earlier in the same step; removed
    players neither move nor block."""
    n = pos.shape[0]
    moving, direction = movement_direction(orient, actions)
    moving = moving & on_map
    target = pos + jnp.asarray(DIRECTIONS)[direction] * moving[:, None]
    into_wall = read_cells(walls, target, outside=True)
    order = jax.random.permutation(key, n)
    index = jnp.arange(n)

    def visit(k, pos):
        i = order[k]
        taken = jnp.any(jnp.all(pos == target[i], axis=-1) & on_map & (index != i))
        go = moving[i] & ~into_wall[i] & ~taken
        return pos.at[i].set(jnp.where(go, target[i], pos[i]))

    return jax.lax.fori_loop(0, n, visit, pos)


# ----- beams -----
def beam_lanes(length: int, radius: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[list[int]]]:
    """Static geometry of dmlab2d ``Grid::HitBeamActual(length, radius)``: ``(lateral [k], ahead [k, L], valid [k, L],
    inner lanes per lane)``. The side lanes at lateral offset ``±r`` (``r = 1..radius``) start level with the firer and
    run ``length − r + 1`` cells forward; the centre lane runs ``1..length`` cells ahead. A side lane is skipped when a
    lane nearer the firer on the same side was blocked at its first cell (``break`` in ``HitBeamActual``)."""
    lateral, starts, lengths, inner = [], [], [], []
    for side in (-1, 1):
        for r in range(1, radius + 1):
            lateral.append(side * r)
            starts.append(0)
            lengths.append(length - r + 1)
            inner.append([len(lateral) - 1 - q for q in range(1, r)])
    lateral.append(0)
    starts.append(1)
    lengths.append(length)
    inner.append([])
    steps = np.arange(length)
    ahead = np.array(starts)[:, None] + steps[None, :]
    valid = steps[None, :] < np.array(lengths)[:, None]
    return np.array(lateral, np.int32), ahead.astype(np.int32), valid, inner


def beam_cells(pos: Array, orient: Array, length: int, radius: int) -> tuple[Array, np.ndarray, list[list[int]]]:
    """``(cells [n, k, L, 2], valid [k, L], inner lanes)`` of every player's beam (:func:`beam_lanes`)."""
    lateral, ahead, valid, inner = beam_lanes(length, radius)
    forward = jnp.asarray(DIRECTIONS)[orient]
    right = jnp.asarray(DIRECTIONS)[(orient + 1) % 4]
    cells = (
        pos[:, None, None, :]
        + jnp.asarray(lateral)[None, :, None, None] * right[:, None, None, :]
        + jnp.asarray(ahead)[None, :, :, None] * forward[:, None, None, :]
    )
    return cells, valid, inner


def lane_reach(cells: Array, valid: np.ndarray, inner: list[list[int]], walls: Array, stops: Array) -> Array:
    """bool ``[n, k, L]``: the cells each lane hits (dmlab2d ``CheckHitLineSegment``). A lane ends before a wall or the
    map edge (``BeamBlocker``) and after the first cell where ``stops`` holds (a player for the zap, dirt for the clean
    beam: their ``onHit`` returns true); a lane skipped by :func:`beam_lanes`' rule hits nothing."""
    open_cell = in_bounds(cells, walls.shape) & ~read_cells(walls, cells, outside=True) & jnp.asarray(valid)
    stopping = stops & open_cell
    reach = (jnp.cumprod(open_cell, axis=-1) > 0) & ~((jnp.cumsum(stopping, axis=-1) - stopping) > 0)
    blocked_first = ~open_cell[..., 0] | stopping[..., 0]  # [n, k]
    enabled = [jnp.all(~blocked_first[:, lanes], axis=1) if lanes else jnp.ones(cells.shape[0], bool) for lanes in inner]
    return reach & jnp.stack(enabled, axis=1)[..., None]


def zap_beams(pos: Array, orient: Array, fires: Array, on_map: Array, walls: Array, length: int, radius: int) -> Array:
    """bool ``[firer, target]``: the zap hits of one step (``Zapper`` ``hitBeam('zapHit', length, radius)``). Every lane
    stops at the first player it reaches, who is hit (``Zapper:onHit`` returns true). All beams of a step see the same
    players: removals are queued behind the beams, so two players can zap each other and one player can be hit by
    several beams."""
    n = pos.shape[0]
    cells, valid, inner = beam_cells(pos, orient, length, radius)
    present = jnp.all(cells[..., None, :] == pos, axis=-1) & on_map  # [n, k, L, n]
    reach = lane_reach(cells, valid, inner, walls, jnp.any(present, axis=-1)) & fires[:, None, None]
    return jnp.any(reach[..., None] & present, axis=(1, 2)) & ~jnp.eye(n, dtype=bool)


def clean_beams(pos: Array, orient: Array, fires: Array, waste: Array, walls: Array, length: int, radius: int) -> tuple[Array, Array]:
    """``(waste after cleaning, dirt cells cleaned per player [n])`` of the clean beams (``Cleaner``
    ``hitBeam('cleanHit', length, radius)``): each lane cleans the first dirt cell it reaches and stops there
    (``DirtCleaning:onHit`` returns true); players do not stop it. All beams see the dirt of the start of the beam
    phase, so two beams may clean (and both be credited with) the same cell."""
    cells, valid, inner = beam_cells(pos, orient, length, radius)
    dirty = read_cells(waste, cells, outside=False)
    hit = lane_reach(cells, valid, inner, walls, dirty) & dirty & fires[:, None, None]
    h, _ = waste.shape
    rows = jnp.where(hit, cells[..., 0], h).ravel()
    cleaned = jnp.zeros(waste.shape, bool).at[rows, cells[..., 1].ravel()].set(True, mode="drop")
    return waste & ~cleaned, jnp.sum(hit, axis=(1, 2)).astype(jnp.int32)


# ----- apples and dirt -----
def disc_offsets(radius: int) -> np.ndarray:
    """``[k, 2]`` offsets with ``0 < dr² + dc² ≤ radius²``: dmlab2d ``queryDisc`` without the centre cell."""
    span = range(-radius, radius + 1)
    return np.array([(a, b) for a in span for b in span if 0 < a * a + b * b <= radius * radius], np.int32).reshape(-1, 2)


def disc_count(apples: Array, radius: int) -> Array:
    """int32 ``[H, W]``: live apples within the disc of ``radius`` around each cell, the cell excluded (off the map
    counts nothing: the ``BOUNDED`` topology)."""
    h, w = apples.shape
    padded = jnp.pad(apples.astype(jnp.int32), radius)
    return sum((padded[radius + a : radius + a + h, radius + b : radius + b + w] for a, b in disc_offsets(radius)), jnp.zeros((h, w), jnp.int32))


def density_sprouts(key: Array, apples: Array, spawn_cells: np.ndarray, probs: Array, radius: int) -> Array:
    """bool ``[H, W]``: the apple cells that sprout this step (``DensityRegrow``): every apple cell without a live apple
    draws once with ``probs[min(count, len(probs) − 1)]`` (``REGROWTH_PROBABILITIES``), ``count`` its live neighbours
    (:func:`disc_count`) on the map of the start of the step (the wait-state category refreshed in ``update``)."""
    counts = disc_count(apples, radius)[spawn_cells[:, 0], spawn_cells[:, 1]]
    probability = probs[jnp.minimum(counts, probs.shape[0] - 1)]
    draws = jax.random.uniform(key, (spawn_cells.shape[0],)) < probability
    grows = jnp.zeros(apples.shape, bool).at[spawn_cells[:, 0], spawn_cells[:, 1]].set(draws)
    return grows & ~apples


def grow_under_players(apples: Array, grows: Array, pos: Array, on_map: Array) -> tuple[Array, Array]:
    """``(apples, eaten [n])`` after new apples appear: one that appears under a player is eaten by it at once (the new
    apple's ``onEnter`` meets the standing avatar, ``Edible:onEnter``; ``canRegrowIfOccupied`` is true), the others
    stay."""
    under = read_cells(grows, pos, outside=False) & on_map
    rows = jnp.where(under, pos[:, 0], apples.shape[0])
    eaten_cells = jnp.zeros(apples.shape, bool).at[rows, pos[:, 1]].set(True, mode="drop")
    return (apples | grows) & ~eaten_cells, under


def dirt_fraction(waste: Array, river: Array) -> Array:
    """``d = dirt / (dirt + clean)`` over the potential-dirt cells (``RiverMonitor``)."""
    return jnp.sum(waste & river) / jnp.maximum(jnp.sum(river), 1)


def apple_growth_probability(fraction: Array, max_rate: Array, depletion: Array, restoration: Array) -> Array:
    """``AppleGrow:update``: ``max_rate · min((d − depletion) / (restoration − depletion), 1)``; negative above
    depletion, i.e. no growth there."""
    interpolation = jnp.minimum((fraction - depletion) / (restoration - depletion), 1.0)
    return jnp.maximum(max_rate * interpolation, 0.0)


def spawn_dirt(key: Array, waste: Array, river: Array, probability: Array, active: Array) -> Array:
    """``DirtSpawner:update``: while ``active`` (after ``delayStartOfDirtSpawning`` frames), with ``probability`` one
    clean potential-dirt cell chosen uniformly becomes dirt (no density gate; nothing when the river is all dirt)."""
    gate_key, pick_key = jax.random.split(key)
    clean = river & ~waste
    scores = jnp.where(clean, jax.random.uniform(pick_key, waste.shape), -1.0)
    pick = (jnp.arange(waste.size) == jnp.argmax(scores.ravel())).reshape(waste.shape) & clean
    return waste | (pick & active & (jax.random.uniform(gate_key) < probability))
