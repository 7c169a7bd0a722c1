"""CrafterTeam-v0: a multi-agent Crafter-like open world with sparse achievement payoffs.

Rules follow Crafter (Hafner 2021, "Benchmarking the Spectrum of Agent Capabilities", and its
``data.yaml``); Craftax (Matthews et al. 2024) is the JAX anchor. Two rule sets share this module:
``rules="team"`` (the default: 17 achievements, no mobs but cows, no daylight) and ``rules="crafter"``
(``preset="crafter"``: all 22 achievements, daylight, zombies, skeletons, arrows, saplings and plants on
Craftax-Classic's rules, with mobs and plants in :mod:`~motivegym.envs.sparse.crafter_mobs`). The module reads
top to bottom: tables (materials, items, achievements, recipes) → params → state → reset → step (agent turns,
cows or mobs, vitals, payoff) → observe → rendering.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import jax
import jax.numpy as jnp
import numpy as np

from motivegym.core.env import FunctionalEnv, Info
from motivegym.core.params import override_params
from motivegym.core.pytree import pytree_dataclass, static_field
from motivegym.core.thresholds import above, below
from motivegym.envs.sparse import crafter_mobs, worldgen
from motivegym.envs.sparse import crafter_rules as rules_
from motivegym.envs.sparse.crafter_mobs import Arrows, Mobs, Plants
from motivegym.envs.sparse.grid import (
    DIRECTIONS,
    agent_colours,
    cell_value,
    in_bounds,
    local_window,
    matches,
    occupancy,
    paint_cells,
    upscale,
)
from motivegym.envs.sparse.worldgen import (
    COAL,
    DIAMOND,
    FURNACE,
    GRASS,
    IRON,
    LAVA,
    MATERIAL_NAMES,
    N_MATERIALS,
    OUT,
    PATH,
    SAND,
    STONE,
    TABLE,
    TREE,
    WATER,
)

Array = jax.Array

# ----- items (vitals are items too, as in Crafter) -----
ITEM_NAMES = (
    "health", "food", "drink", "energy",
    "wood", "stone", "coal", "iron", "diamond",
    "wood_pickaxe", "stone_pickaxe", "iron_pickaxe", "wood_sword", "stone_sword", "iron_sword",
    "sapling",
)  # fmt: skip
ITEM = {name: i for i, name in enumerate(ITEM_NAMES)}
N_ITEMS = len(ITEM_NAMES)
N_TEAM_ITEMS = N_ITEMS - 1  # rules="team" has no saplings (observation and text show the first 15)
VITALS = slice(0, 4)
MAX_ITEM = 9  # every item and vital is capped at 9 (Crafter)
HEALTH, FOOD, DRINK, ENERGY = range(4)

# ----- achievements -----
ACHIEVEMENT_NAMES = (
    "collect_wood", "place_table", "make_wood_pickaxe", "make_wood_sword",
    "collect_stone", "place_stone", "make_stone_pickaxe", "make_stone_sword",
    "place_furnace", "collect_coal", "collect_iron", "make_iron_pickaxe", "make_iron_sword",
    "collect_diamond", "collect_drink", "eat_cow", "wake_up",
)  # fmt: skip
#: rules="crafter": Crafter's 22 achievements (the 17 above, then the five that need mobs or plants)
CRAFTER_ACHIEVEMENT_NAMES = ACHIEVEMENT_NAMES + ("collect_sapling", "place_plant", "eat_plant", "defeat_zombie", "defeat_skeleton")
ACHIEVEMENT = {name: i for i, name in enumerate(CRAFTER_ACHIEVEMENT_NAMES)}
N_ACHIEVEMENTS = len(ACHIEVEMENT_NAMES)
N_ALL_ACHIEVEMENTS = len(CRAFTER_ACHIEVEMENT_NAMES)  # width of the state's achievement arrays under both rule sets

# ----- actions -----
ACTION_NAMES = (
    "noop", "move_up", "move_down", "move_left", "move_right", "do", "sleep",
    "place_table", "place_stone", "place_furnace",
    "make_wood_pickaxe", "make_stone_pickaxe", "make_iron_pickaxe",
    "make_wood_sword", "make_stone_sword", "make_iron_sword",
)  # fmt: skip
CRAFTER_ACTION_NAMES = ACTION_NAMES + ("place_plant",)  # rules="crafter": Crafter's 17 actions
ACTION = {name: i for i, name in enumerate(CRAFTER_ACTION_NAMES)}
N_ACTIONS = len(ACTION_NAMES)
N_ALL_ACTIONS = len(CRAFTER_ACTION_NAMES)
NOOP, DO, SLEEP, PLACE_PLANT = ACTION["noop"], ACTION["do"], ACTION["sleep"], ACTION["place_plant"]

PLAYER_WALKABLE = np.isin(np.arange(N_MATERIALS + 1), [GRASS, SAND, PATH, LAVA])
COW_WALKABLE = np.isin(np.arange(N_MATERIALS + 1), [GRASS, SAND, PATH])
COW_HEALTH = rules_.COW_HEALTH
COW_FOOD = rules_.COW_FOOD  # food gained by eating a cow (Crafter)
RESPAWN_TRIES = 16


def _collect_table() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per material: item received (-1: not collectible), tool required (-1: none), material left, achievement."""
    item = np.full(N_MATERIALS + 1, -1, np.int32)
    tool = np.full(N_MATERIALS + 1, -1, np.int32)
    leaves = np.arange(N_MATERIALS + 1, dtype=np.int32)
    achievement = np.full(N_MATERIALS + 1, -1, np.int32)
    rules = {
        TREE: ("wood", None, TREE, "collect_wood"),
        STONE: ("stone", "wood_pickaxe", PATH, "collect_stone"),
        COAL: ("coal", "wood_pickaxe", PATH, "collect_coal"),
        IRON: ("iron", "stone_pickaxe", PATH, "collect_iron"),
        DIAMOND: ("diamond", "iron_pickaxe", PATH, "collect_diamond"),
        WATER: ("drink", None, WATER, "collect_drink"),
    }
    for material, (gain, needs, left, name) in rules.items():
        item[material] = ITEM[gain]
        tool[material] = -1 if needs is None else ITEM[needs]
        leaves[material] = left
        achievement[material] = ACHIEVEMENT[name]
    return item, tool, leaves, achievement


COLLECT_ITEM, COLLECT_TOOL, COLLECT_LEAVES, COLLECT_ACHIEVEMENT = _collect_table()


@dataclasses.dataclass(frozen=True)
class Recipe:
    """A place or make rule (Crafter ``data.yaml``): costs, nearby stations, placed material or item made."""

    action: str
    uses: dict[str, int]
    achievement: str
    gives: str | None = None  # item made
    places: int = -1  # material placed on the facing cell
    where: tuple[int, ...] = ()  # materials the facing cell may hold for placing
    nearby: tuple[int, ...] = ()  # stations required within ``nearby_distance``


RECIPES = (
    Recipe("place_table", {"wood": 1}, "place_table", places=TABLE, where=(GRASS, SAND, PATH)),
    Recipe("place_stone", {"stone": 1}, "place_stone", places=STONE, where=(GRASS, SAND, PATH, WATER, LAVA)),
    Recipe("place_furnace", {"stone": 1}, "place_furnace", places=FURNACE, where=(GRASS, SAND, PATH), nearby=(TABLE,)),
    Recipe("make_wood_pickaxe", {"wood": 1}, "make_wood_pickaxe", gives="wood_pickaxe", nearby=(TABLE,)),
    Recipe("make_stone_pickaxe", {"wood": 1, "stone": 1}, "make_stone_pickaxe", gives="stone_pickaxe", nearby=(TABLE,)),
    Recipe("make_iron_pickaxe", {"wood": 1, "coal": 1, "iron": 1}, "make_iron_pickaxe", gives="iron_pickaxe", nearby=(TABLE, FURNACE)),
    Recipe("make_wood_sword", {"wood": 1}, "make_wood_sword", gives="wood_sword", nearby=(TABLE,)),
    Recipe("make_stone_sword", {"wood": 1, "stone": 1}, "make_stone_sword", gives="stone_sword", nearby=(TABLE,)),
    Recipe("make_iron_sword", {"wood": 1, "coal": 1, "iron": 1}, "make_iron_sword", gives="iron_sword", nearby=(TABLE, FURNACE)),
)


def _recipe_tables() -> dict[str, np.ndarray]:
    """Recipes as arrays indexed by action (rows of non-recipe actions are inert)."""
    tables = {
        "is_recipe": np.zeros(N_ALL_ACTIONS, bool),
        "cost": np.zeros((N_ALL_ACTIONS, N_ITEMS), np.int32),
        "gain": np.zeros((N_ALL_ACTIONS, N_ITEMS), np.int32),
        "places": np.full(N_ALL_ACTIONS, -1, np.int32),
        "where": np.zeros((N_ALL_ACTIONS, N_MATERIALS + 1), bool),
        "needs_table": np.zeros(N_ALL_ACTIONS, bool),
        "needs_furnace": np.zeros(N_ALL_ACTIONS, bool),
        "achievement": np.zeros(N_ALL_ACTIONS, np.int32),
    }
    for recipe in RECIPES:
        a = ACTION[recipe.action]
        tables["is_recipe"][a] = True
        for item, amount in recipe.uses.items():
            tables["cost"][a, ITEM[item]] = amount
        if recipe.gives is not None:
            tables["gain"][a, ITEM[recipe.gives]] = 1
        tables["places"][a] = recipe.places
        tables["where"][a, list(recipe.where)] = True
        tables["needs_table"][a] = TABLE in recipe.nearby
        tables["needs_furnace"][a] = FURNACE in recipe.nearby
        tables["achievement"][a] = ACHIEVEMENT[recipe.achievement]
    return tables


RECIPE_TABLES = _recipe_tables()


@pytree_dataclass
class CrafterParams:
    """CrafterTeam parameters; vitals thresholds are Crafter's (``objects.Player.update``)."""

    max_steps: Array  # int32 horizon
    health_reward_scale: Array  # payoff per unit of health change (Crafter: 0.1)
    hunger_threshold: Array  # food −1 when the hunger counter exceeds it (+1 per step, +0.5 asleep)
    thirst_threshold: Array  # drink −1 when the thirst counter exceeds it
    fatigue_threshold: Array  # energy −1 when the fatigue counter exceeds it (+1 per step awake)
    rest_threshold: Array  # energy +1 when the fatigue counter falls below it (−1 per step asleep)
    recover_threshold: Array  # health +1 when the recover counter exceeds it
    degen_threshold: Array  # health −1 when the recover counter falls below it
    cow_move_prob: Array  # probability a cow tries a random move each step
    agent_attack_damage: Array  # int32 health an agent's `do` takes from another agent (0: no friendly fire)
    table_wood: Array  # int32 wood a table costs (team 1; Crafter and Craftax-Classic 2)
    furnace_stone: Array  # int32 stone a furnace costs (team 1; Craftax-Classic 1; Crafter 4)
    day_length: Array  # float32 steps per day (0: always day); daylight = crafter_rules.light_level
    cow_spawn_prob: Array  # rules="crafter": per-step chance that a cow spawns (while fewer than n_cows)
    zombie_spawn_base: Array  # rules="crafter": per-step zombie spawn chance by day ...
    zombie_spawn_night: Array  # ... plus this times (1 - daylight)^2
    skeleton_spawn_prob: Array  # rules="crafter": per-step chance that a skeleton spawns on a path cell
    mob_despawn_distance: Array  # int32 rules="crafter": mobs this far (Manhattan) from every agent vanish
    plant_ripe_age: Array  # int32 rules="crafter": steps until a sapling is a ripe plant
    n_agents: int = static_field(2)
    world_size: int = static_field(32)
    n_cows: int = static_field(8)
    view_height: int = static_field(7)
    view_width: int = static_field(9)
    nearby_distance: int = static_field(1)
    lava: bool = static_field(True)
    rules: str = static_field("team")  # "team" (17 achievements) or "crafter" (22, mobs, daylight, plants)
    max_zombies: int = static_field(0)  # slots (rules="crafter")
    max_skeletons: int = static_field(0)
    max_arrows: int = static_field(0)
    max_plants: int = static_field(0)
    mob_target: str = static_field("nearest")  # which agent a mob chases/attacks: "nearest" living or "first" living
    shared_achievements: bool = static_field(False)  # True: an unlock by any agent counts (and pays) for every agent


@pytree_dataclass
class CrafterState:
    """World and agents. ``counters`` columns: hunger, thirst, fatigue, recover (Crafter's hidden counters)."""

    terrain: Array  # [H, W] int32 material
    positions: Array  # [n, 2] int32 (row, col)
    facing: Array  # [n] int32 direction index (0 up, 1 down, 2 left, 3 right)
    inventory: Array  # [n, N_ITEMS] int32 (vitals first)
    counters: Array  # [n, 4] float32
    sleeping: Array  # [n] bool
    achievements: Array  # [n, N_ACHIEVEMENTS] bool, unlocked so far this episode
    new_achievements: Array  # [n, N_ACHIEVEMENTS] bool, unlocked by the last step
    cow_positions: Array  # [c, 2] int32
    cow_health: Array  # [c] int32 (≤ 0: killed or despawned; rules="team": respawns in the cow phase)
    t: Array  # int32 steps taken
    zombies: Mobs  # rules="crafter" (0 slots otherwise)
    skeletons: Mobs
    arrows: Arrows
    plants: Plants
    light: Array  # float32 daylight in [0, 1] at step t


def initial_inventory(n: int) -> Array:
    """Full vitals (9 each), empty inventory."""
    return jnp.zeros((n, N_ITEMS), jnp.int32).at[:, VITALS].set(MAX_ITEM)


def alive_mask(state: CrafterState) -> Array:
    """``[n]`` bool: health above zero."""
    return state.inventory[:, HEALTH] > 0


def station_nearby(terrain: Array, position: Array, station: int, distance: int) -> Array:
    """True when ``station`` lies within Chebyshev ``distance`` of ``position`` (Crafter's ``world.nearby``)."""
    offsets = jnp.arange(-distance, distance + 1)
    rows, cols = position[0] + offsets, position[1] + offsets
    height, width = terrain.shape
    inside = ((rows >= 0) & (rows < height))[:, None] & ((cols >= 0) & (cols < width))[None, :]
    cells = terrain[jnp.clip(rows, 0, height - 1)[:, None], jnp.clip(cols, 0, width - 1)[None, :]]
    return jnp.any(inside & (cells == station))


def sword_damage(inventory_row: Array) -> Array:
    """Damage of a `do` hit: 1 bare-handed, 2/3/5 with the best wood/stone/iron sword (Crafter)."""
    swords = jnp.array([ITEM["wood_sword"], ITEM["stone_sword"], ITEM["iron_sword"]])
    damages = jnp.array([2, 3, 5], jnp.int32)
    return jnp.maximum(1, jnp.max(jnp.where(inventory_row[swords] > 0, damages, 0)))


def effective_action(action: Array, alive: Array, sleeping: Array, n_actions: int = N_ACTIONS) -> Array:
    """Out-of-range actions (``n_actions``: 16 under rules="team", 17 under rules="crafter"), dead agents and sleepers do ``noop``."""
    valid = (action >= 0) & (action < n_actions)
    return jnp.where(valid & alive & ~sleeping, action, NOOP).astype(jnp.int32)


def full_rules(params: CrafterParams) -> bool:
    """Whether ``params`` select Crafter's full rules (``rules="crafter"``)."""
    return params.rules == "crafter"


def hit_mobs(mobs: Mobs, hit: Array, damage: Array) -> tuple[Mobs, Array]:
    """Mobs after a `do` of ``damage`` on the ``hit`` ones, and whether one of them died."""
    health = mobs.health - jnp.where(hit, damage, 0)
    return dataclasses.replace(mobs, health=health), jnp.any(hit & (health <= 0))


def recipe_costs(tables: dict[str, Array], action: Array, params: CrafterParams) -> Array:
    """The item costs of ``action``: the recipe table with ``table_wood``/``furnace_stone``; under rules="crafter"
    the iron pickaxe and sword also cost 1 stone (Craftax-Classic ``do_crafting``)."""
    cost = tables["cost"]
    cost = cost.at[ITEM["wood"]].add(jnp.where(action == ACTION["place_table"], params.table_wood - 1, 0))
    cost = cost.at[ITEM["stone"]].add(jnp.where(action == ACTION["place_furnace"], params.furnace_stone - 1, 0))
    if full_rules(params):
        iron_tool = (action == ACTION["make_iron_pickaxe"]) | (action == ACTION["make_iron_sword"])
        cost = cost.at[ITEM["stone"]].add(iron_tool.astype(jnp.int32))
    return cost


def agent_turn(state: CrafterState, i: Array, action: Array, params: CrafterParams, key: Array | None = None) -> CrafterState:
    """Agent ``i`` acts on the world (move, do, sleep, place, make); unlocks go to ``new_achievements``.

    Under rules="crafter" (``key`` draws the sapling chance) a `do` also hits zombies (defeat_zombie) and
    skeletons (defeat_skeleton), eats a ripe plant (+4 food, eat_plant; the plant starts growing again), and on
    grass gives a sapling with probability 0.1 (collect_sapling); eating and drinking reset the hunger and thirst
    counters (Crafter ``Player._do_object``/``_do_material``); trees turn into grass when cut (Crafter
    ``data.yaml``, Craftax-Classic); furnaces need no table nearby (Craftax-Classic ``place_block``);
    ``place_plant`` puts a sapling on facing grass (place_plant).
    """
    full = full_rules(params)
    n = params.n_agents
    inventory = state.inventory
    row = inventory[i]
    counters = state.counters[i]
    alive = alive_mask(state)
    action = effective_action(action, alive[i], state.sleeping[i], N_ALL_ACTIONS if full else N_ACTIONS)
    position = state.positions[i]

    is_move = (action >= ACTION["move_up"]) & (action <= ACTION["move_right"])
    facing = jnp.where(is_move, action - ACTION["move_up"], state.facing[i])
    target = position + jnp.asarray(DIRECTIONS)[facing]
    size = params.world_size
    inside = in_bounds(target, size, size)
    material = cell_value(state.terrain, target, OUT)
    others = alive & (jnp.arange(n) != i)
    agent_hit = matches(state.positions, target, others)
    cow_hit = matches(state.cow_positions, target, state.cow_health > 0)
    zombie_hit = matches(state.zombies.position, target, state.zombies.health > 0)
    skeleton_hit = matches(state.skeletons.position, target, state.skeletons.health > 0)
    plant_hit = matches(state.plants.position, target, state.plants.alive)
    occupied = jnp.any(agent_hit) | jnp.any(cow_hit) | jnp.any(zombie_hit) | jnp.any(skeleton_hit) | jnp.any(plant_hit)
    free = inside & ~occupied
    gained = jnp.zeros(N_ALL_ACHIEVEMENTS, bool)

    # move (walking into lava is fatal)
    moved = is_move & free & jnp.asarray(PLAYER_WALKABLE)[material]
    position = jnp.where(moved, target, position)
    row = row.at[HEALTH].set(jnp.where(moved & (material == LAVA), 0, row[HEALTH]))

    # do: hit a cow, a zombie, a skeleton or an agent, eat a ripe plant, or collect from the facing material
    doing = action == DO
    damage = sword_damage(row)
    cow_damage = jnp.where(doing & cow_hit, damage, 0)
    cow_health = state.cow_health - cow_damage
    ate = jnp.any((cow_damage > 0) & (cow_health <= 0))
    row = row.at[FOOD].set(jnp.where(ate, jnp.minimum(row[FOOD] + COW_FOOD, MAX_ITEM), row[FOOD]))
    gained = gained.at[ACHIEVEMENT["eat_cow"]].set(ate)
    zombies, defeated_zombie = hit_mobs(state.zombies, doing & zombie_hit, damage)
    skeletons, defeated_skeleton = hit_mobs(state.skeletons, doing & skeleton_hit, damage)
    gained = gained.at[ACHIEVEMENT["defeat_zombie"]].set(defeated_zombie).at[ACHIEVEMENT["defeat_skeleton"]].set(defeated_skeleton)
    attack = jnp.where(doing & agent_hit, params.agent_attack_damage, 0)
    inventory = inventory.at[:, HEALTH].set(jnp.maximum(inventory[:, HEALTH] - attack, 0))

    eaten = doing & plant_hit & crafter_mobs.ripe(state.plants, params.plant_ripe_age)
    ate_plant = jnp.any(eaten)
    row = row.at[FOOD].set(jnp.where(ate_plant, jnp.minimum(row[FOOD] + rules_.PLANT_FOOD, MAX_ITEM), row[FOOD]))
    gained = gained.at[ACHIEVEMENT["eat_plant"]].set(ate_plant)
    plants = dataclasses.replace(state.plants, age=jnp.where(eaten, 0, state.plants.age))

    item, tool = jnp.asarray(COLLECT_ITEM)[material], jnp.asarray(COLLECT_TOOL)[material]
    has_tool = (tool < 0) | (row[jnp.maximum(tool, 0)] > 0)
    collected = doing & free & (item >= 0) & has_tool
    gained_item = jnp.maximum(item, 0)
    row = row.at[gained_item].set(jnp.where(collected, jnp.minimum(row[gained_item] + 1, MAX_ITEM), row[gained_item]))
    leaves = jnp.asarray(COLLECT_LEAVES)
    if full:
        leaves = leaves.at[TREE].set(GRASS)
        sapling = doing & free & (material == GRASS) & (jax.random.uniform(key) < rules_.SAPLING_PROB)
        row = row.at[ITEM["sapling"]].set(jnp.where(sapling, jnp.minimum(row[ITEM["sapling"]] + 1, MAX_ITEM), row[ITEM["sapling"]]))
        gained = gained.at[ACHIEVEMENT["collect_sapling"]].set(sapling)
        drank = collected & (material == WATER)
        counters = counters.at[rules_.HUNGER].set(jnp.where(ate | ate_plant, 0.0, counters[rules_.HUNGER]))
        counters = counters.at[rules_.THIRST].set(jnp.where(drank, 0.0, counters[rules_.THIRST]))
    new_material = jnp.where(collected, leaves[material], material)
    gained = gained.at[jnp.maximum(jnp.asarray(COLLECT_ACHIEVEMENT)[material], 0)].max(collected)

    # place or make
    tables = {k: jnp.asarray(v)[action] for k, v in RECIPE_TABLES.items()}
    cost = recipe_costs(tables, action, params)
    distance = params.nearby_distance
    needs_table = tables["needs_table"] & ~(full & (action == ACTION["place_furnace"]))
    stations_ok = (~needs_table | station_nearby(state.terrain, position, TABLE, distance)) & (
        ~tables["needs_furnace"] | station_nearby(state.terrain, position, FURNACE, distance)
    )
    placing = tables["places"] >= 0
    target_ok = ~placing | (free & tables["where"][material])
    crafted = tables["is_recipe"] & jnp.all(row >= cost) & stations_ok & target_ok
    row = jnp.where(crafted, jnp.minimum(row - cost + tables["gain"], MAX_ITEM), row)
    new_material = jnp.where(crafted & placing, tables["places"], new_material)
    gained = gained.at[tables["achievement"]].max(crafted)

    # plant a sapling (rules="crafter"): facing grass, free, with a free plant slot
    if plants.alive.shape[0] > 0:
        slot = jnp.argmin(plants.alive)
        planted = (action == PLACE_PLANT) & (row[ITEM["sapling"]] > 0) & free & (material == GRASS) & ~plants.alive[slot]
        row = row.at[ITEM["sapling"]].add(-planted.astype(jnp.int32))
        gained = gained.at[ACHIEVEMENT["place_plant"]].set(planted)
        plants = Plants(
            position=plants.position.at[slot].set(jnp.where(planted, target, plants.position[slot])),
            age=plants.age.at[slot].set(jnp.where(planted, 0, plants.age[slot])),
            alive=plants.alive.at[slot].set(plants.alive[slot] | planted),
        )

    # sleep (only when not fully rested, as in Crafter)
    falls_asleep = (action == SLEEP) & (row[ENERGY] < MAX_ITEM)

    row_t, col_t = jnp.clip(target, 0, size - 1)
    terrain = state.terrain.at[row_t, col_t].set(jnp.where(inside, new_material, state.terrain[row_t, col_t]))
    inventory = inventory.at[i].set(row)
    unlocked = gained & ~state.achievements[i]
    return dataclasses.replace(
        state,
        terrain=terrain,
        positions=state.positions.at[i].set(position),
        facing=state.facing.at[i].set(facing),
        inventory=inventory,
        counters=state.counters.at[i].set(counters),
        sleeping=state.sleeping.at[i].set(state.sleeping[i] | falls_asleep),
        new_achievements=state.new_achievements.at[i].set(state.new_achievements[i] | unlocked),
        cow_health=cow_health,
        zombies=zombies,
        skeletons=skeletons,
        plants=plants,
    )


def cow_phase(key: Array, state: CrafterState, params: CrafterParams) -> CrafterState:
    """Cows random-walk (each tries a move with ``cow_move_prob``); killed cows respawn on a free grass cell.

    Moves are simultaneous: a cow moves only onto a cow-walkable cell that no agent or cow occupies and
    that no lower-indexed cow also claims. A killed cow tries ``RESPAWN_TRIES`` random cells and takes the
    first free grass cell (not claimed by an earlier respawner); otherwise it retries next step.
    """
    c, size = params.n_cows, params.world_size
    draws = jax.random.uniform(key, (c, 2 + 2 * RESPAWN_TRIES))  # one PRNG call: cheap to compile
    live = state.cow_health > 0
    agents = occupancy(state.positions, alive_mask(state), size, size)
    cows = occupancy(state.cow_positions, live, size, size)
    earlier = jnp.tril(jnp.ones((c, c), bool), k=-1)  # earlier[a, b]: b < a

    def free_cell(cells: Array, blocked: Array, allowed: Array) -> Array:
        safe = jnp.clip(cells, 0, size - 1)
        material = jnp.where(in_bounds(cells, size, size), state.terrain[safe[..., 0], safe[..., 1]], OUT)
        return allowed[material] & ~blocked[safe[..., 0], safe[..., 1]] & in_bounds(cells, size, size)

    directions = jnp.minimum((draws[:, 1] * 4).astype(jnp.int32), 3)
    targets = state.cow_positions + jnp.asarray(DIRECTIONS)[directions]
    wants = live & (draws[:, 0] < params.cow_move_prob)
    can = wants & free_cell(targets, agents | cows, jnp.asarray(COW_WALKABLE))
    same_target = jnp.all(targets[:, None, :] == targets[None, :, :], axis=-1)
    moves = can & ~jnp.any(same_target & earlier & can[None, :], axis=1)
    positions = jnp.where(moves[:, None], targets, state.cow_positions)

    grass_only = jnp.zeros(N_MATERIALS + 1, bool).at[GRASS].set(True)
    walked = occupancy(positions, live, size, size)
    candidates = jnp.minimum((draws[:, 2:] * size).astype(jnp.int32), size - 1).reshape(c, RESPAWN_TRIES, 2)
    valid = free_cell(candidates, agents | walked, grass_only)
    choice = candidates[jnp.arange(c), jnp.argmax(valid, axis=1)]
    respawning = ~live & jnp.any(valid, axis=1)
    same_choice = jnp.all(choice[:, None, :] == choice[None, :, :], axis=-1)
    respawns = respawning & ~jnp.any(same_choice & earlier & respawning[None, :], axis=1)
    return dataclasses.replace(
        state,
        cow_positions=jnp.where(respawns[:, None], choice, positions),
        cow_health=jnp.where(respawns, COW_HEALTH, state.cow_health),
    )


def update_vitals(state: CrafterState, params: CrafterParams) -> CrafterState:
    """Crafter's life dynamics for living agents (``objects.Player._update_life_stats``, ``_recover_health``, ``_wake_up``).

    hunger/thirst += 1 (0.5 asleep), past the threshold food/drink −1; fatigue += 1 awake,
    ``min(fatigue − 1, 0)`` asleep, past ±thresholds energy ∓1; recover += 1 (2 asleep) while food,
    drink and energy (or sleep) are all non-zero, else −1 (−0.5 asleep); past the thresholds health ±1.
    A sleeper with full energy wakes up (``wake_up``): after the update under rules="team"; before it under
    rules="crafter", as in Crafter (``Player.update``) and Craftax-Classic (``update_player_intrinsics``).
    """
    alive = alive_mask(state)
    sleeping = state.sleeping
    inv = state.inventory
    wake_index = ACHIEVEMENT["wake_up"]
    new_achievements = state.new_achievements
    if full_rules(params):
        woke_first = alive & sleeping & (inv[:, ENERGY] >= MAX_ITEM)
        sleeping = sleeping & ~woke_first
        new_achievements = new_achievements.at[:, wake_index].max(woke_first & ~state.achievements[:, wake_index])
    hunger, thirst, fatigue, recover = (state.counters[:, k] for k in range(4))
    rate = jnp.where(sleeping, 0.5, 1.0)

    hunger = hunger + rate
    hungry = above(hunger, params.hunger_threshold)
    thirst = thirst + rate
    thirsty = above(thirst, params.thirst_threshold)
    fatigue = jnp.where(sleeping, jnp.minimum(fatigue - 1.0, 0.0), fatigue + 1.0)
    rested, tired = below(fatigue, params.rest_threshold), above(fatigue, params.fatigue_threshold)
    food = jnp.maximum(inv[:, FOOD] - hungry, 0)
    drink = jnp.maximum(inv[:, DRINK] - thirsty, 0)
    energy = jnp.clip(inv[:, ENERGY] + rested - tired, 0, MAX_ITEM)

    necessities = (food > 0) & (drink > 0) & ((energy > 0) | sleeping)
    recover = recover + jnp.where(necessities, jnp.where(sleeping, 2.0, 1.0), jnp.where(sleeping, -0.5, -1.0))
    heal, hurt = above(recover, params.recover_threshold), below(recover, params.degen_threshold)
    health = jnp.clip(inv[:, HEALTH] + heal - hurt, 0, MAX_ITEM)

    counters = jnp.stack(
        [
            jnp.where(hungry, 0.0, hunger),
            jnp.where(thirsty, 0.0, thirst),
            jnp.where(rested | tired, 0.0, fatigue),
            jnp.where(heal | hurt, 0.0, recover),
        ],
        axis=1,
    )
    vitals = jnp.stack([health, food, drink, energy], axis=1).astype(jnp.int32)
    woke = alive & sleeping & (energy >= MAX_ITEM) & (not full_rules(params))
    unlocked = new_achievements.at[:, wake_index].max(woke & ~state.achievements[:, wake_index])
    return dataclasses.replace(
        state,
        inventory=inv.at[:, VITALS].set(jnp.where(alive[:, None], vitals, inv[:, VITALS])),
        counters=jnp.where(alive[:, None], counters, state.counters),
        sleeping=jnp.where(alive, sleeping & ~woke, state.sleeping),
        new_achievements=unlocked,
    )


def mob_and_plant_phase(key: Array, state: CrafterState, params: CrafterParams) -> CrafterState:
    """rules="crafter": zombies, cows, skeletons and arrows act, mobs spawn (:func:`crafter_mobs.mob_phase`), plants grow.

    A zombie that wakes a sleeping agent unlocks ``wake_up`` for it (Craftax-Classic ``_move_zombie``).
    """
    positions, present, _ = entity_list(state, params)
    n, cows, zombies = params.n_agents, params.n_cows, params.max_zombies
    world = crafter_mobs.World(
        terrain=state.terrain,
        occupants=positions,
        occupied=present,
        first={"cows": n, "zombies": n + cows, "skeletons": n + cows + zombies},
        agents=state.positions,
        health=state.inventory[:, HEALTH],
        sleeping=state.sleeping,
        woke=jnp.zeros(params.n_agents, bool),
        cows=Mobs(state.cow_positions, state.cow_health, jnp.zeros_like(state.cow_health)),
        zombies=state.zombies,
        skeletons=state.skeletons,
        arrows=state.arrows,
    )
    world = crafter_mobs.mob_phase(key, world, state.light, params)
    wake_index = ACHIEVEMENT["wake_up"]
    woke = world.woke & ~state.achievements[:, wake_index]
    return dataclasses.replace(
        state,
        terrain=world.terrain,
        inventory=state.inventory.at[:, HEALTH].set(world.health),
        sleeping=world.sleeping,
        new_achievements=state.new_achievements.at[:, wake_index].max(woke),
        cow_positions=world.cows.position,
        cow_health=world.cows.health,
        zombies=world.zombies,
        skeletons=world.skeletons,
        arrows=world.arrows,
        plants=crafter_mobs.grow_plants(state.plants),
    )


def entity_list(state: CrafterState, params: CrafterParams) -> tuple[Array, Array, Array]:
    """Every cell-blocking entity in one list: ``positions [E, 2]``, ``present [E]`` (agents, cows, zombies,
    skeletons, plants; :data:`ENTITY_NAMES` order) and, third, each one's observation code (1-based, ripe plants 6)."""
    ripe = crafter_mobs.ripe(state.plants, params.plant_ripe_age)
    kinds = (
        (state.positions, alive_mask(state), jnp.full(params.n_agents, 1)),
        (state.cow_positions, state.cow_health > 0, jnp.full(params.n_cows, 2)),
        (state.zombies.position, state.zombies.health > 0, jnp.full(params.max_zombies, 3)),
        (state.skeletons.position, state.skeletons.health > 0, jnp.full(params.max_skeletons, 4)),
        (state.plants.position, state.plants.alive, jnp.where(ripe, 6, 5)),
    )
    positions = jnp.concatenate([k[0] for k in kinds]).astype(jnp.int32)
    present = jnp.concatenate([k[1] for k in kinds])
    codes = jnp.concatenate([k[2] for k in kinds]).astype(jnp.int32)
    return positions, present, codes


def share_achievements(state: CrafterState, params: CrafterParams) -> CrafterState:
    """``shared_achievements``: an achievement first unlocked by any agent this step is new for every agent."""
    if not params.shared_achievements:
        return state
    team_new = jnp.any(state.new_achievements, axis=0) & ~jnp.any(state.achievements, axis=0)
    return dataclasses.replace(state, new_achievements=jnp.broadcast_to(team_new, state.new_achievements.shape))


def achievement_payoff(new_achievements: Array, health_before: Array, health_after: Array, scale: Array) -> Array:
    """Crafter reward (Hafner 2021, §3): ``+1`` per newly unlocked achievement ``+ scale · Δhealth``."""
    return jnp.sum(new_achievements, axis=1).astype(jnp.float32) + scale * (health_after - health_before).astype(jnp.float32)


MATERIAL_COLOURS = np.array(
    [
        [95, 160, 60],  # grass
        [225, 205, 140],  # sand
        [50, 100, 200],  # water
        [30, 90, 30],  # tree
        [120, 120, 120],  # stone
        [40, 40, 40],  # coal
        [190, 140, 110],  # iron
        [160, 240, 240],  # diamond
        [150, 100, 50],  # table
        [200, 80, 40],  # furnace
        [240, 90, 10],  # lava
        [170, 160, 145],  # path
    ],
    dtype=np.uint8,
)
MATERIAL_CHARS = ".:~TScid+fLp"
COW_COLOUR = np.array([250, 250, 250], np.uint8)
#: observation entity channels of rules="crafter" (after the 13 material channels; arrows have their own flag)
ENTITY_NAMES = ("agent", "cow", "zombie", "skeleton", "plant", "ripe_plant")
#: text characters and colours of agents (drawn by index), cows, zombies, skeletons, arrows, plants, ripe plants
ENTITY_CHARS = "0MZK*pP"
ENTITY_COLOURS = np.array(
    [[0, 0, 0], COW_COLOUR, [40, 140, 60], [235, 235, 210], [90, 60, 30], [120, 200, 80], [220, 60, 120]], dtype=np.uint8
)


class CrafterTeam(FunctionalEnv):
    """Multi-agent Crafter: a procedurally generated survival-and-crafting world with sparse achievements.

    * **Mechanism:** sparse-reward open world (Crafter, Hafner 2021): 2–6 agents share one map, its
      resources and its cows; each unlocks its own achievements (collect, place, make, eat, drink,
      wake up) along Crafter's tech tree: wood → table → wood pickaxe → stone → stone pickaxe /
      furnace → coal + iron → iron pickaxe → diamond. Shared resources and the option to help or
      hinder (placing stones, tables that others can use, optional friendly fire) make it mixed-motive.
    * **Agents:** ``n_agents`` (default 2) identical players spawning on distinct cells of a
      cleared 5×5 square at the map centre; agents act in index order within a step (an earlier
      agent can take a resource or a cell first). Dead agents (health 0) leave the map.
    * **Actions:** ``Discrete(16)``: 0 noop, 1 move_up, 2 move_down, 3 move_left, 4 move_right
      (turn to face that way, move if the cell is grass/sand/path/lava and free), 5 do (on the
      facing cell: hit a cow, hit an agent, collect a material, drink water), 6 sleep, 7
      place_table, 8 place_stone, 9 place_furnace, 10 make_wood_pickaxe, 11 make_stone_pickaxe,
      12 make_iron_pickaxe, 13 make_wood_sword, 14 make_stone_sword, 15 make_iron_sword.
      Out-of-range actions are ``noop``; sleepers and dead agents always ``noop``.
      Recipes (Crafter ``data.yaml``; "near" = within ``nearby_distance`` cells, Chebyshev):
      table 1 wood (on grass/sand/path); stone 1 stone (on grass/sand/path/water/lava); furnace
      1 stone near a table; wood pickaxe/sword 1 wood near a table; stone pickaxe/sword 1 wood +
      1 stone near a table; iron pickaxe/sword 1 wood + 1 coal + 1 iron near a table and a furnace.
      Collecting: tree → wood (tree stays); stone, coal → need a wood pickaxe; iron → stone
      pickaxe; diamond → iron pickaxe (mined cells become path); water → +1 drink. A cow has 3
      health; a hit does 1 (2/3/5 with a wood/stone/iron sword); killing it gives +6 food.
      All items and vitals are capped at 9.
    * **Observation:** per agent, flattened ``[view_height=7, view_width=9, 15]`` egocentric window
      (one-hot of the 12 materials + out-of-map, then a living-agent channel (self at the centre) and
      a cow channel), then facing one-hot (4), inventory/9 (15: health, food, drink, energy, wood,
      stone, coal, iron, diamond, 3 pickaxes, 3 swords) and a sleeping flag: 965 floats.
      Global state: the agents' observation rows concatenated (``n · 965``).
    * **Payoff:** ``π_i = #(achievements agent i unlocks for the first time this step) + 0.1·Δhealth_i``
      (Crafter's reward, per agent). Info: ``achievements`` / ``new_achievements`` ``[n, 17]`` bool
      (names in ``static_info()["achievement_names"]``), ``team_achievements`` ``[17]`` (any agent),
      vitals ``health``/``food``/``drink``/``energy`` and ``alive`` ``[n]``.
    * **Termination:** all agents dead (health 0: starvation, thirst, exhaustion, lava or attacks);
      truncation at ``max_steps``.
    * **Defaults:** 32×32 world, 2 agents, 8 cows, lava on, max_steps 10000, health_reward_scale 0.1;
      vitals start at 9 and decay as in Crafter (hunger 25, thirst 20, fatigue 30 / rest −10,
      recover 25 / degen −15); agent_attack_damage 0 (no friendly fire). No zombies, skeletons,
      saplings or daylight (so 17 of Crafter's 22 achievements).
    * **Crafter's rules:** ``preset="crafter"`` (``rules="crafter"``, 1–6 agents): 64×64 Crafter-style world,
      daylight cycle, zombies, skeletons and arrows, spawning and despawning cows, saplings and plants, all 22
      achievements, 17 actions (``place_plant``), a 1,282-float observation; Craftax-Classic's rules where Crafter
      and Craftax-Classic differ. Multi-agent switches: ``shared_achievements``, ``mob_target``,
      ``agent_attack_damage``. Rules, params and every deviation: ``docs/crafter.md``.
    """

    name: ClassVar[str] = "CrafterTeam"
    action_kind: ClassVar[str] = "discrete"

    # ----- params -----
    def default_params(self, **overrides: Any) -> CrafterParams:
        """Defaults (``rules="team"``), or ``preset="crafter"``: :data:`crafter_rules.CRAFTER_PRESET` under the overrides."""
        preset = overrides.pop("preset", "team")
        if preset not in rules_.PRESETS:
            raise ValueError(f"{self.name}-v0: preset={preset!r} is invalid: preset must be one of {', '.join(map(repr, rules_.PRESETS))}")
        overrides = {**rules_.PRESETS[preset], **overrides}
        params = CrafterParams(
            max_steps=jnp.int32(10000),
            health_reward_scale=jnp.float32(0.1),
            hunger_threshold=jnp.float32(25.0),
            thirst_threshold=jnp.float32(20.0),
            fatigue_threshold=jnp.float32(30.0),
            rest_threshold=jnp.float32(-10.0),
            recover_threshold=jnp.float32(25.0),
            degen_threshold=jnp.float32(-15.0),
            cow_move_prob=jnp.float32(0.5),
            agent_attack_damage=jnp.int32(0),
            table_wood=jnp.int32(1),
            furnace_stone=jnp.int32(1),
            day_length=jnp.float32(0.0),
            cow_spawn_prob=jnp.float32(0.1),
            zombie_spawn_base=jnp.float32(0.02),
            zombie_spawn_night=jnp.float32(0.1),
            skeleton_spawn_prob=jnp.float32(0.05),
            mob_despawn_distance=jnp.int32(14),
            plant_ripe_age=jnp.int32(600),
        )
        params = override_params(params, overrides, self.name, ("preset",))
        validate_params(params, self.name)
        return params

    def parameter_names(self) -> tuple[str, ...]:
        return (*(f.name for f in dataclasses.fields(CrafterParams)), "preset")

    def n_agents(self, params: CrafterParams) -> int:
        return params.n_agents

    def num_actions(self, params: CrafterParams) -> int:
        return N_ALL_ACTIONS if full_rules(params) else N_ACTIONS

    def static_info(self, params: CrafterParams) -> Info:
        full = full_rules(params)
        return {
            "achievement_names": CRAFTER_ACHIEVEMENT_NAMES if full else ACHIEVEMENT_NAMES,
            "action_names": CRAFTER_ACTION_NAMES if full else ACTION_NAMES,
            "material_names": MATERIAL_NAMES,
        }

    def n_achievements(self, params: CrafterParams) -> int:
        """17 under rules="team", 22 under rules="crafter" (the width of ``info["achievements"]``)."""
        return N_ALL_ACHIEVEMENTS if full_rules(params) else N_ACHIEVEMENTS

    # ----- dynamics -----
    def reset(self, key: Array, params: CrafterParams) -> tuple[CrafterState, Array]:
        if full_rules(params):
            return self._reset_crafter(key, params)
        k_terrain, k_agents, k_cows = jax.random.split(key, 3)
        n, size = params.n_agents, params.world_size
        terrain = worldgen.generate_terrain(k_terrain, size, params.lava)
        positions = worldgen.spawn_positions(k_agents, size, n)
        grass_free = (terrain == GRASS) & ~occupancy(positions, jnp.ones(n, bool), size, size)
        state = CrafterState(
            terrain=terrain,
            positions=positions,
            facing=jnp.full(n, 1, jnp.int32),
            inventory=initial_inventory(n),
            counters=jnp.zeros((n, 4), jnp.float32),
            sleeping=jnp.zeros(n, bool),
            achievements=jnp.zeros((n, N_ALL_ACHIEVEMENTS), bool),
            new_achievements=jnp.zeros((n, N_ALL_ACHIEVEMENTS), bool),
            cow_positions=worldgen.random_cells(k_cows, grass_free, params.n_cows),
            cow_health=jnp.full(params.n_cows, COW_HEALTH, jnp.int32),
            t=jnp.int32(0),
            zombies=crafter_mobs.empty_mobs(0),
            skeletons=crafter_mobs.empty_mobs(0),
            arrows=crafter_mobs.empty_arrows(0),
            plants=crafter_mobs.empty_plants(0),
            light=jnp.float32(1.0),
        )
        return state, self.observe(state, params)

    def _reset_crafter(self, key: Array, params: CrafterParams) -> tuple[CrafterState, Array]:
        """rules="crafter": Crafter-style terrain (:func:`worldgen.generate_crafter_terrain`), one agent at the centre
        (several: distinct cells of the cleared 5×5 centre square), no mobs yet (they spawn; Craftax-Classic)."""
        k_terrain, k_agents = jax.random.split(key)
        n, size = params.n_agents, params.world_size
        radius = 0 if n == 1 else worldgen.SPAWN_RADIUS
        terrain = worldgen.generate_crafter_terrain(k_terrain, size, radius)
        if not params.lava:
            terrain = jnp.where(terrain == LAVA, STONE, terrain)
        state = CrafterState(
            terrain=terrain,
            positions=worldgen.centre_spawn_positions(k_agents, size, n, radius),
            facing=jnp.full(n, 1, jnp.int32),
            inventory=initial_inventory(n),
            counters=jnp.zeros((n, 4), jnp.float32),
            sleeping=jnp.zeros(n, bool),
            achievements=jnp.zeros((n, N_ALL_ACHIEVEMENTS), bool),
            new_achievements=jnp.zeros((n, N_ALL_ACHIEVEMENTS), bool),
            cow_positions=jnp.zeros((params.n_cows, 2), jnp.int32),
            cow_health=jnp.zeros(params.n_cows, jnp.int32),
            t=jnp.int32(0),
            zombies=crafter_mobs.empty_mobs(params.max_zombies),
            skeletons=crafter_mobs.empty_mobs(params.max_skeletons),
            arrows=crafter_mobs.empty_arrows(params.max_arrows),
            plants=crafter_mobs.empty_plants(params.max_plants),
            light=rules_.light_level(0, params.day_length),
        )
        return state, self.observe(state, params)

    def step(self, key: Array, state: CrafterState, actions: Array, params: CrafterParams):
        actions = jnp.asarray(actions, jnp.int32).reshape(params.n_agents)
        health_before = state.inventory[:, HEALTH]
        state = dataclasses.replace(state, new_achievements=jnp.zeros_like(state.new_achievements))
        if full_rules(params):
            k_agents, k_mobs = jax.random.split(key)
            turn = lambda i, s: agent_turn(s, i, actions[i], params, jax.random.fold_in(k_agents, i))  # noqa: E731
            state = jax.lax.fori_loop(0, params.n_agents, turn, state)
            state = mob_and_plant_phase(k_mobs, state, params)
        else:
            # agents act in index order (a loop, not an unroll: compile time stays flat in n_agents)
            state = jax.lax.fori_loop(0, params.n_agents, lambda i, s: agent_turn(s, i, actions[i], params), state)
            state = cow_phase(key, state, params)
        state = update_vitals(state, params)
        state = share_achievements(state, params)
        payoffs = achievement_payoff(state.new_achievements, health_before, state.inventory[:, HEALTH], params.health_reward_scale)
        state = dataclasses.replace(
            state,
            achievements=state.achievements | state.new_achievements,
            t=state.t + 1,
            light=rules_.light_level(state.t + 1, params.day_length),
        )
        terminated = ~jnp.any(alive_mask(state))
        truncated = state.t >= params.max_steps
        info = self.describe(state, params)
        info["terminated"] = terminated
        info["truncated"] = truncated
        return state, self.observe(state, params), payoffs, terminated | truncated, info

    def describe(self, state: CrafterState, params: CrafterParams) -> Info:
        width = self.n_achievements(params)
        achievements = state.achievements[:, :width]
        info = {
            "step": state.t,
            "achievements": achievements,
            "new_achievements": state.new_achievements[:, :width],
            "team_achievements": jnp.any(achievements, axis=0),
            "health": state.inventory[:, HEALTH],
            "food": state.inventory[:, FOOD],
            "drink": state.inventory[:, DRINK],
            "energy": state.inventory[:, ENERGY],
            "alive": alive_mask(state),
        }
        if full_rules(params):
            info["light"] = state.light
            info["sleeping"] = state.sleeping
        return info

    # ----- observations -----
    def observation_bounds(self, params: Any) -> tuple[float, float]:
        """Every observation and global-state entry lies in ``[0.0, 1.0]``: one-hot window, facing, inventory / max item count, sleeping flag."""
        return 0.0, 1.0

    def observe(self, state: CrafterState, params: CrafterParams) -> Array:
        """``[n, 965]``: egocentric window one-hot (materials + out-of-map, agents, cows), facing, inventory/9, sleeping.

        rules="crafter": ``[n, 1282]``: the window's cells one-hot over the 13 materials, then the entity on the cell
        (agent, cow, zombie, skeleton, growing plant, ripe plant: one-hot, none: zeros), then an arrow flag (20
        channels), facing (4), inventory/9 (16, saplings last), sleeping, daylight.
        """
        if full_rules(params):
            return self._observe_crafter(state, params)
        size, height, width = params.world_size, params.view_height, params.view_width
        agents = occupancy(state.positions, alive_mask(state), size, size).astype(jnp.int32)
        cows = occupancy(state.cow_positions, state.cow_health > 0, size, size).astype(jnp.int32)

        def window(grid: Array, fill: int) -> Array:
            return jax.vmap(lambda p: local_window(grid, p, height, width, fill))(state.positions)

        materials = jax.nn.one_hot(window(state.terrain, OUT), N_MATERIALS + 1, dtype=jnp.float32)
        entities = jnp.stack([window(agents, 0), window(cows, 0)], axis=-1).astype(jnp.float32)
        view = jnp.concatenate([materials, entities], axis=-1).reshape(params.n_agents, -1)
        return jnp.concatenate(
            [
                view,
                jax.nn.one_hot(state.facing, 4, dtype=jnp.float32),
                state.inventory[:, :N_TEAM_ITEMS].astype(jnp.float32) / MAX_ITEM,
                state.sleeping.astype(jnp.float32)[:, None],
            ],
            axis=1,
        )

    def _observe_crafter(self, state: CrafterState, params: CrafterParams) -> Array:
        size, height, width = params.world_size, params.view_height, params.view_width
        n_entities = len(ENTITY_NAMES)
        positions, present, codes = entity_list(state, params)
        row_offsets, col_offsets = jnp.arange(height) - height // 2, jnp.arange(width) - width // 2

        def window(centre: Array) -> Array:
            """``[height, width, 20]`` one-hot channels gathered around ``centre`` (no full-map padding)."""
            rows, cols = centre[0] + row_offsets, centre[1] + col_offsets
            inside = ((rows >= 0) & (rows < size))[:, None] & ((cols >= 0) & (cols < size))[None, :]
            terrain = state.terrain[jnp.clip(rows, 0, size - 1)[:, None], jnp.clip(cols, 0, size - 1)[None, :]]
            terrain = jnp.where(inside, terrain, OUT)

            def scatter(cells: Array, shown: Array, values: Array) -> Array:
                local = cells - (centre - jnp.array([height // 2, width // 2]))
                seen = shown & (local[:, 0] >= 0) & (local[:, 0] < height) & (local[:, 1] >= 0) & (local[:, 1] < width)
                flat = jnp.clip(local[:, 0], 0, height - 1) * width + jnp.clip(local[:, 1], 0, width - 1)
                return jnp.zeros(height * width, jnp.int32).at[flat].max(jnp.where(seen, values, 0)).reshape(height, width)

            entity = scatter(positions, present, codes)
            arrows = scatter(state.arrows.position, state.arrows.alive, jnp.ones_like(state.arrows.alive, jnp.int32))
            return jnp.concatenate(
                [
                    jax.nn.one_hot(terrain, N_MATERIALS + 1, dtype=jnp.float32),
                    jax.nn.one_hot(entity - 1, n_entities, dtype=jnp.float32),
                    arrows.astype(jnp.float32)[..., None],
                ],
                axis=-1,
            )

        view = jax.vmap(window)(state.positions).reshape(params.n_agents, -1)
        return jnp.concatenate(
            [
                view,
                jax.nn.one_hot(state.facing, 4, dtype=jnp.float32),
                state.inventory.astype(jnp.float32) / MAX_ITEM,
                state.sleeping.astype(jnp.float32)[:, None],
                jnp.broadcast_to(state.light, (params.n_agents, 1)).astype(jnp.float32),
            ],
            axis=1,
        )

    def global_state(self, state: CrafterState, params: CrafterParams) -> Array:
        """The agents' observation rows concatenated (``n · obs_size``)."""
        return self.observe(state, params).ravel()

    # ----- rendering -----
    def render_rgb(self, state: CrafterState, params: CrafterParams, cell: int = 8) -> np.ndarray:
        """``[8·size, 8·size, 3]`` uint8: terrain colours, cows as white squares ("M" in text), living agents in their colours."""
        image = upscale(MATERIAL_COLOURS[np.asarray(state.terrain)], cell)
        for positions, present, colour in self._entities(state, params)[1:]:
            paint_cells(image, positions[present], np.repeat(colour[None], int(present.sum()), axis=0), cell, margin=2)
        alive = np.asarray(alive_mask(state))
        paint_cells(image, np.asarray(state.positions)[alive], agent_colours(params.n_agents)[alive], cell, margin=1)
        return image

    def _entities(self, state: CrafterState, params: CrafterParams) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """``(positions, present, colour)`` per entity kind in :data:`ENTITY_CHARS` order (agents first)."""
        ripe = np.asarray(crafter_mobs.ripe(state.plants, params.plant_ripe_age))
        plants, alive = np.asarray(state.plants.position), np.asarray(state.plants.alive)
        kinds = [
            (np.asarray(state.positions), np.asarray(alive_mask(state))),
            (np.asarray(state.cow_positions), np.asarray(state.cow_health) > 0),
            (np.asarray(state.zombies.position), np.asarray(state.zombies.health) > 0),
            (np.asarray(state.skeletons.position), np.asarray(state.skeletons.health) > 0),
            (np.asarray(state.arrows.position), np.asarray(state.arrows.alive)),
            (plants, alive & ~ripe),
            (plants, ripe),
        ]
        return [(positions, present, colour) for (positions, present), colour in zip(kinds, ENTITY_COLOURS)]

    def render_text(self, state: CrafterState, params: CrafterParams) -> str:
        grid = [[MATERIAL_CHARS[m] for m in row] for row in np.asarray(state.terrain)]
        for (positions, present, _), char in zip(self._entities(state, params)[1:], ENTITY_CHARS[1:]):
            for row, col in positions[present]:
                grid[row][col] = char
        inventory = np.asarray(state.inventory)
        for i, (row, col) in enumerate(np.asarray(state.positions)):
            if inventory[i, HEALTH] > 0:
                grid[row][col] = str(i)
        lines = [f"{self.name}  step {int(state.t)}/{int(params.max_steps)}  n={params.n_agents}"]
        if full_rules(params):
            lines[0] += f"  daylight {float(state.light):.2f}"
        lines += ["".join(row) for row in grid]
        achievements = np.asarray(state.achievements)
        for i in range(params.n_agents):
            items = ", ".join(f"{ITEM_NAMES[k]} {inventory[i, k]}" for k in range(4, N_ITEMS) if inventory[i, k])
            width = self.n_achievements(params)
            status = "asleep" if bool(state.sleeping[i]) else ("dead" if inventory[i, HEALTH] <= 0 else "awake")
            lines.append(
                f"  agent_{i} ({status}): health {inventory[i, HEALTH]} food {inventory[i, FOOD]} drink {inventory[i, DRINK]} "
                f"energy {inventory[i, ENERGY]} | {items or 'empty'} | achievements {int(achievements[i, :width].sum())}/{width}"
            )
        return "\n".join(lines)


def validate_params(params: CrafterParams, where: str) -> None:
    """Raise ``ValueError`` on out-of-range static or scalar params."""
    checks = [
        (params.rules in ("team", "crafter"), f"rules must be 'team' or 'crafter', got {params.rules!r}"),
        (
            isinstance(params.n_agents, int) and (1 if params.rules == "crafter" else 2) <= params.n_agents <= 6,
            f"n_agents must be an int in [2, 6] (in [1, 6] with rules='crafter'), got {params.n_agents!r}",
        ),
        (params.mob_target in ("nearest", "first"), f"mob_target must be 'nearest' or 'first', got {params.mob_target!r}"),
        (isinstance(params.shared_achievements, bool), f"shared_achievements must be a bool, got {params.shared_achievements!r}"),
        (
            all(isinstance(v, int) and 0 <= v <= 64 for v in (params.max_zombies, params.max_skeletons, params.max_arrows, params.max_plants)),
            "max_zombies, max_skeletons, max_arrows and max_plants must be ints in [0, 64]",
        ),
        (
            params.rules == "crafter" or params.max_zombies + params.max_skeletons + params.max_arrows + params.max_plants == 0,
            "zombies, skeletons, arrows and plants need rules='crafter' (or preset='crafter')",
        ),
        (int(params.table_wood) >= 0 and int(params.furnace_stone) >= 0, "table_wood and furnace_stone must be >= 0"),
        (float(params.day_length) >= 0.0, f"day_length must be >= 0, got {float(params.day_length)}"),
        (
            all(0.0 <= float(p) <= 1.0 for p in (params.cow_spawn_prob, params.zombie_spawn_base, params.zombie_spawn_night, params.skeleton_spawn_prob)),
            "cow_spawn_prob, zombie_spawn_base, zombie_spawn_night and skeleton_spawn_prob must be in [0, 1]",
        ),
        (int(params.mob_despawn_distance) >= 1 and int(params.plant_ripe_age) >= 1, "mob_despawn_distance and plant_ripe_age must be >= 1"),
        (isinstance(params.world_size, int) and params.world_size >= 12, f"world_size must be an int >= 12, got {params.world_size!r}"),
        (isinstance(params.n_cows, int) and 0 <= params.n_cows <= 16, f"n_cows must be an int in [0, 16], got {params.n_cows!r}"),
        (
            all(isinstance(v, int) and v >= 1 and v % 2 == 1 for v in (params.view_height, params.view_width)),
            f"view_height and view_width must be odd ints >= 1, got {params.view_height!r}, {params.view_width!r}",
        ),
        (isinstance(params.nearby_distance, int) and params.nearby_distance >= 1, f"nearby_distance must be an int >= 1, got {params.nearby_distance!r}"),
        (isinstance(params.lava, bool), f"lava must be a bool, got {params.lava!r}"),
        (int(params.max_steps) >= 1, f"max_steps must be >= 1, got {int(params.max_steps)}"),
        (0.0 <= float(params.cow_move_prob) <= 1.0, f"cow_move_prob must be in [0, 1], got {float(params.cow_move_prob)}"),
        (int(params.agent_attack_damage) >= 0, f"agent_attack_damage must be >= 0, got {int(params.agent_attack_damage)}"),
    ]
    for ok, message in checks:
        if not ok:
            raise ValueError(f"{where}: {message}")
