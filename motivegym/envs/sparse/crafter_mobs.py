"""Zombies, skeletons, arrows, spawning cows and plants of :class:`~motivegym.envs.sparse.crafter.CrafterTeam`
under ``rules="crafter"`` (Craftax-Classic ``game_logic.update_mobs``, ``spawn_mobs``, ``update_plants``; Crafter
``objects.Zombie``, ``Skeleton``, ``Arrow``, ``Plant`` and ``env._balance_object``).

Fixed-size arrays with a presence mask (a mob is present while its health is above 0, an arrow or a plant while
its ``alive`` flag is set), so the step stays jit/vmap-safe. Mobs act one after another in index order (zombies,
cows, skeletons, then arrows) on a shared occupancy grid, as in Craftax-Classic; with several agents each mob
acts on its *target*: the nearest living agent (Manhattan distance, lowest index on ties; ``mob_target="nearest"``)
or the lowest-indexed living agent (``mob_target="first"``). Distances for spawning and despawning are to the
nearest living agent.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from motivegym.core.pytree import pytree_dataclass
from motivegym.envs.sparse import crafter_rules as R
from motivegym.envs.sparse.grid import DIRECTIONS, in_bounds
from motivegym.envs.sparse.worldgen import FURNACE, GRASS, N_MATERIALS, OUT, PATH, SAND, TABLE, WATER

Array = jax.Array

FAR = 1 << 20  # distance to "no living agent"
MOB_WALKABLE = np.isin(np.arange(N_MATERIALS + 1), [GRASS, SAND, PATH])
#: materials an arrow flies over (Craftax-Classic: anything not solid, and water; Crafter ``Arrow.walkable``)
ARROW_PASSABLE = np.isin(np.arange(N_MATERIALS + 1), [GRASS, SAND, PATH, WATER, 10])  # 10: lava


@pytree_dataclass
class Mobs:
    """``k`` mobs of one kind: present while ``health > 0``; ``cooldown``: steps until the next attack or arrow."""

    position: Array  # [k, 2] int32
    health: Array  # [k] int32
    cooldown: Array  # [k] int32


@pytree_dataclass
class Arrows:
    """``k`` arrow slots: each flies one cell per step along ``direction`` while ``alive``."""

    position: Array  # [k, 2] int32
    direction: Array  # [k, 2] int32
    alive: Array  # [k] bool


@pytree_dataclass
class Plants:
    """``k`` plant slots (saplings placed on grass): ripe once ``age >= plant_ripe_age``; they block the cell."""

    position: Array  # [k, 2] int32
    age: Array  # [k] int32
    alive: Array  # [k] bool


def empty_mobs(k: int) -> Mobs:
    return Mobs(jnp.zeros((k, 2), jnp.int32), jnp.zeros(k, jnp.int32), jnp.zeros(k, jnp.int32))


def empty_arrows(k: int) -> Arrows:
    return Arrows(jnp.zeros((k, 2), jnp.int32), jnp.zeros((k, 2), jnp.int32), jnp.zeros(k, bool))


def empty_plants(k: int) -> Plants:
    return Plants(jnp.zeros((k, 2), jnp.int32), jnp.zeros(k, jnp.int32), jnp.zeros(k, bool))


def ripe(plants: Plants, ripe_age: Array) -> Array:
    """``[k]`` bool: present plants old enough to eat (Craftax-Classic: age >= 600; Crafter: grown > 300)."""
    return plants.alive & (plants.age >= ripe_age)


def grow_plants(plants: Plants) -> Plants:
    """Every present plant ages by one step."""
    return dataclasses.replace(plants, age=jnp.where(plants.alive, plants.age + 1, 0))


def manhattan(a: Array, b: Array) -> Array:
    return jnp.sum(jnp.abs(a - b), axis=-1)


def target_of(point: Array, agents: Array, alive: Array, mode: str) -> tuple[Array, Array]:
    """``(index, distance)`` of the agent a mob at ``point`` acts on (``FAR`` when no agent lives)."""
    distance = jnp.where(alive, manhattan(agents, point[None, :]), FAR)
    index = jnp.argmax(alive) if mode == "first" else jnp.argmin(distance)
    return index, distance[index]


def toward(source: Array, target: Array, tie: Array) -> Array:
    """Unit step from ``source`` towards ``target`` along the axis of the larger gap (ties: rows when ``tie < 0.5``)."""
    gap = target - source
    rows_first = (jnp.abs(gap[0]) > jnp.abs(gap[1])) | ((jnp.abs(gap[0]) == jnp.abs(gap[1])) & (tie < 0.5))
    return jnp.where(rows_first, jnp.array([1, 0]) * jnp.sign(gap[0]), jnp.array([0, 1]) * jnp.sign(gap[1])).astype(jnp.int32)


def random_step(u: Array) -> Array:
    return jnp.asarray(DIRECTIONS)[jnp.minimum((u * 4).astype(jnp.int32), 3)]


def cell_at(grid: Array, position: Array, outside: Any) -> Array:
    size = grid.shape[0]
    safe = jnp.clip(position, 0, size - 1)
    return jnp.where(in_bounds(position, size, size), grid[safe[0], safe[1]], outside)


def taken(world: World, position: Array) -> Array:
    """Whether an agent, a present mob or a plant stands on ``position`` (a scan of the short entity list, no grid)."""
    return jnp.any(world.occupied & jnp.all(world.occupants == position[None, :], axis=-1))


def can_enter(world: World, position: Array) -> Array:
    """A mob may step on in-map grass, sand or path that no agent, mob or plant occupies."""
    return jnp.asarray(MOB_WALKABLE)[cell_at(world.terrain, position, OUT)] & ~taken(world, position)


def moved(world: World, index: int, position: Array, present: Array) -> dict[str, Array]:
    """The entity list after entity ``index`` moved to ``position`` (``present``: whether it is still there)."""
    return {"occupants": world.occupants.at[index].set(position), "occupied": world.occupied.at[index].set(present)}


@dataclasses.dataclass
class World:
    """What the mob phase reads and changes (a plain carry, unpacked from and into the env state)."""

    terrain: Array
    occupants: Array  # [E, 2]: agents, cows, zombies, skeletons, plants (in that order; see ``first``)
    occupied: Array  # [E] bool: living agents, present mobs, plants
    agents: Array  # [n, 2]
    health: Array  # [n] int32
    sleeping: Array  # [n] bool
    woke: Array  # [n] bool: woken by a zombie this step (counts as wake_up, as in Craftax-Classic)
    cows: Mobs
    zombies: Mobs
    skeletons: Mobs
    arrows: Arrows
    first: dict  # index of each kind's first entry in ``occupants``: {"cows": n, "zombies": …, "skeletons": …}


def settle(world: World, kind: str, j: int, proposed: Array, moves: Array, distance: Array, params: Any,
           acted: Array | None = None, reload: int = 0) -> tuple[Mobs, dict[str, Array]]:
    """Mob ``j`` of ``kind`` after its turn: at ``proposed`` where it ``moves``, gone once ``mob_despawn_distance``
    from every agent; its cooldown restarts at ``reload`` where it ``acted`` and else counts down (unchanged when
    ``acted`` is None). Returns the mob list and the updated entity entries."""
    mobs = getattr(world, kind)
    position, present = mobs.position[j], mobs.health[j] > 0
    new_position = jnp.where(moves, proposed, position)
    stays = present & (distance < params.mob_despawn_distance)
    entries = moved(world, world.first[kind] + j, new_position, stays)
    cooldown = mobs.cooldown if acted is None else mobs.cooldown.at[j].set(jnp.where(acted, reload, mobs.cooldown[j] - 1))
    mobs = Mobs(
        position=mobs.position.at[j].set(new_position),
        health=mobs.health.at[j].set(jnp.where(stays, mobs.health[j], 0)),
        cooldown=cooldown,
    )
    return mobs, entries


def zombie_turn(world: World, j: int, u: Array, params: Any) -> World:
    """Zombie ``j`` (Craftax-Classic ``_move_zombie``): next to its target with the cooldown over it attacks
    (2 damage, 7 to a sleeper, which it wakes; cooldown 5) and stays; otherwise it walks towards the target with
    probability 0.75 when closer than 10, else one random step; the cooldown counts down every step. A zombie as far
    as ``mob_despawn_distance`` from every agent disappears."""
    z = world.zombies
    position, present = z.position[j], z.health[j] > 0
    target, distance = target_of(position, world.agents, world.health > 0, params.mob_target)
    chase = (distance < R.ZOMBIE_CHASE_DISTANCE) & (u[2] < R.ZOMBIE_CHASE_PROB)
    step = jnp.where(chase, toward(position, world.agents[target], u[1]), random_step(u[0]))
    attack = present & (distance == 1) & (z.cooldown[j] <= 0)
    damage = jnp.where(world.sleeping[target], R.ZOMBIE_SLEEP_DAMAGE, R.ZOMBIE_DAMAGE) * attack
    health = world.health.at[target].set(jnp.maximum(world.health[target] - damage, 0))
    woke = world.woke.at[target].set(world.woke[target] | (attack & world.sleeping[target]))
    sleeping = world.sleeping.at[target].set(world.sleeping[target] & ~attack)
    proposed = position + step
    moves = present & ~attack & can_enter(world, proposed)
    zombies, entries = settle(world, "zombies", j, proposed, moves, distance, params, attack, R.ZOMBIE_COOLDOWN)
    return dataclasses.replace(world, health=health, woke=woke, sleeping=sleeping, zombies=zombies, **entries)


def cow_turn(world: World, j: int, u: Array, params: Any) -> World:
    """Cow ``j`` (Craftax-Classic ``_move_cow``): with probability 1/2 one random step, else stays; despawns far away."""
    c = world.cows
    position, present = c.position[j], c.health[j] > 0
    _, distance = target_of(position, world.agents, world.health > 0, "nearest")
    proposed = position + random_step(u[0])
    moves = present & (u[1] < 0.5) & can_enter(world, proposed)
    cows, entries = settle(world, "cows", j, proposed, moves, distance, params)
    return dataclasses.replace(world, cows=cows, **entries)


def skeleton_turn(world: World, j: int, u: Array, params: Any) -> World:
    """Skeleton ``j`` (Craftax-Classic ``_move_skeleton``): intent: approach its target from 10 or farther, retreat
    within 3, else a random step; it follows the intent with probability 0.15, else a random step. With the reload
    over it shoots (an arrow from its own cell towards the target; reload 4) and stays, when the target is 4–5 away
    or when it is within 3 and cannot take its step."""
    s = world.skeletons
    position, present = s.position[j], s.health[j] > 0
    target, distance = target_of(position, world.agents, world.health > 0, params.mob_target)
    aim = toward(position, world.agents[target], u[1])
    random_move = position + random_step(u[0])
    intent = jnp.where(distance >= R.SKELETON_FAR, position + aim, random_move)
    intent = jnp.where(distance <= R.SKELETON_NEAR, position - aim, intent)
    proposed = jnp.where(u[2] < R.SKELETON_INTENT_PROB, intent, random_move)
    enterable = can_enter(world, proposed)
    low, high = R.SKELETON_SHOOT
    shoots = ((distance >= low) & (distance <= high)) | ((distance <= R.SKELETON_NEAR) & ~enterable)
    shoots = present & shoots & (s.cooldown[j] <= 0)
    arrows = world.arrows
    if arrows.alive.shape[0] > 0:
        slot = jnp.argmin(arrows.alive)
        fires = shoots & ~arrows.alive[slot]
        arrows = Arrows(
            position=arrows.position.at[slot].set(jnp.where(fires, position, arrows.position[slot])),
            direction=arrows.direction.at[slot].set(jnp.where(fires, aim, arrows.direction[slot])),
            alive=arrows.alive.at[slot].set(arrows.alive[slot] | fires),
        )
    moves = present & ~shoots & enterable
    skeletons, entries = settle(world, "skeletons", j, proposed, moves, distance, params, shoots, R.SKELETON_RELOAD)
    return dataclasses.replace(world, arrows=arrows, skeletons=skeletons, **entries)


def arrow_turn(world: World, j: int) -> World:
    """Arrow ``j`` (Craftax-Classic ``_move_arrow``): flies one cell; it stops at the map edge, at anything but
    grass/sand/path/water/lava, at a mob or plant, and at an agent, which loses 2 health and wakes up; an arrow
    that stops on a table or furnace turns it into path."""
    a = world.arrows
    alive = a.alive[j]
    proposed = a.position[j] + a.direction[j]
    size = world.terrain.shape[0]
    inside = in_bounds(proposed, size, size)
    material = cell_at(world.terrain, proposed, OUT)
    hit = alive & jnp.all(world.agents == proposed[None, :], axis=-1) & (world.health > 0)
    flies = alive & inside & jnp.asarray(ARROW_PASSABLE)[material] & ~taken(world, proposed)
    breaks = alive & inside & ((material == TABLE) | (material == FURNACE))
    safe = jnp.clip(proposed, 0, size - 1)
    terrain = world.terrain.at[safe[0], safe[1]].set(jnp.where(breaks, PATH, world.terrain[safe[0], safe[1]]))
    arrows = dataclasses.replace(a, position=a.position.at[j].set(jnp.where(alive, proposed, a.position[j])), alive=a.alive.at[j].set(flies))
    return dataclasses.replace(
        world,
        terrain=terrain,
        health=jnp.maximum(world.health - R.ARROW_DAMAGE * hit, 0),
        sleeping=world.sleeping & ~hit,
        arrows=arrows,
    )


def pick_cell(u: Array, allowed: Array) -> tuple[Array, Array]:
    """``(found, (row, col))``: the ``⌊u·count⌋``-th allowed cell in row-major order (a uniform pick from one draw).

    Two levels (the row holding that rank, then the column within the row) keep the prefix sums 1-D and short: a
    flat prefix sum over the whole map lowers to a quadratic reduce-window on XLA's CPU backend."""
    per_row = jnp.sum(allowed, axis=1, dtype=jnp.int32)
    count = jnp.sum(per_row)
    rank = jnp.minimum((u * count).astype(jnp.int32), jnp.maximum(count - 1, 0))
    before = jnp.cumsum(per_row)
    row = jnp.argmax(before > rank)
    within = rank - (before[row] - per_row[row])
    col = jnp.argmax(jnp.cumsum(allowed[row].astype(jnp.int32)) > within)
    return count > 0, jnp.stack([row, col]).astype(jnp.int32)


def spawn(mobs: Mobs, u_gate: Array, u_cell: Array, chance: Array, allowed: Array, health: int) -> tuple[Mobs, Array, Array]:
    """At most one new mob per step (Craftax-Classic ``spawn_mobs``): with probability ``chance``, while a slot is free,
    on a uniformly drawn allowed cell. Returns the mobs, whether one spawned and where."""
    slot = jnp.argmin(mobs.health > 0)
    found, cell = pick_cell(u_cell, allowed)
    spawned = (mobs.health[slot] <= 0) & (u_gate < chance) & found
    return (
        Mobs(
            position=mobs.position.at[slot].set(jnp.where(spawned, cell, mobs.position[slot])),
            health=mobs.health.at[slot].set(jnp.where(spawned, health, mobs.health[slot])),
            cooldown=mobs.cooldown.at[slot].set(jnp.where(spawned, 0, mobs.cooldown[slot])),
        ),
        spawned,
        cell,
    )


def spawn_all(world: World, u: Array, light: Array, params: Any) -> World:
    """Cows on grass farther than 3 from every agent (chance ``cow_spawn_prob``), zombies on grass or path farther
    than 9 (chance ``zombie_spawn_base + zombie_spawn_night·(1 − light)²``), skeletons on path farther than 9
    (chance ``skeleton_spawn_prob``), each closer than ``mob_despawn_distance`` to some agent, on a free cell."""
    size = world.terrain.shape[0]
    cells = jnp.arange(size)
    alive = world.health > 0
    gaps = jnp.abs(cells[None, :, None] - world.agents[:, 0, None, None]) + jnp.abs(cells[None, None, :] - world.agents[:, 1, None, None])
    nearest = jnp.min(jnp.where(alive[:, None, None], gaps, FAR), axis=0)
    blocked = jnp.zeros((size, size), bool).at[world.occupants[:, 0], world.occupants[:, 1]].max(world.occupied)
    reachable = (nearest < params.mob_despawn_distance) & ~blocked
    grass, path = world.terrain == GRASS, world.terrain == PATH
    kinds = (
        ("cows", grass & (nearest > R.COW_SPAWN_MIN_DISTANCE), params.cow_spawn_prob, R.COW_HEALTH),
        ("zombies", (grass | path) & (nearest > R.HOSTILE_SPAWN_MIN_DISTANCE), R.zombie_spawn_chance(light, params.zombie_spawn_base, params.zombie_spawn_night), R.ZOMBIE_HEALTH),
        ("skeletons", path & (nearest > R.HOSTILE_SPAWN_MIN_DISTANCE), params.skeleton_spawn_prob, R.SKELETON_HEALTH),
    )
    changes = {}
    for k, (name, allowed, chance, health) in enumerate(kinds):
        mobs = getattr(world, name)
        if mobs.health.shape[0] == 0:
            continue
        mobs, spawned, cell = spawn(mobs, u[2 * k], u[2 * k + 1], chance, allowed & reachable & ~blocked, health)
        blocked = blocked.at[cell[0], cell[1]].set(blocked[cell[0], cell[1]] | spawned)
        changes[name] = mobs
    return dataclasses.replace(world, **changes)


def mob_phase(key: Array, world: World, light: Array, params: Any) -> World:
    """Zombies, cows, skeletons and arrows act in that order (each kind in index order), then spawning."""
    n_zombies, n_cows, n_skeletons = world.zombies.health.shape[0], world.cows.health.shape[0], world.skeletons.health.shape[0]
    draws = jax.random.uniform(key, (n_zombies + n_cows + n_skeletons + 2, 3))
    row = 0
    for j in range(n_zombies):
        world = zombie_turn(world, j, draws[row], params)
        row += 1
    for j in range(n_cows):
        world = cow_turn(world, j, draws[row], params)
        row += 1
    for j in range(n_skeletons):
        world = skeleton_turn(world, j, draws[row], params)
        row += 1
    for j in range(world.arrows.alive.shape[0]):
        world = arrow_turn(world, j)
    return spawn_all(world, draws[row:].ravel(), light, params)
