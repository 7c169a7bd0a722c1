"""Rule-level tests of CrafterTeam's Crafter rules (``preset="crafter"``, one agent), written from Crafter's
``objects.py``/``env.py`` and Craftax-Classic's ``game_logic.py``: daylight, sleep, saplings and plants, zombies,
skeletons and arrows, spawning and despawning, and the multi-agent switches."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import motivegym
from motivegym.envs.sparse import crafter_rules
from motivegym.envs.sparse.crafter import ACHIEVEMENT, ACTION, CRAFTER_ACHIEVEMENT_NAMES, ITEM
from motivegym.envs.sparse.crafter_mobs import Arrows, Mobs
from motivegym.envs.sparse.worldgen import GRASS, PATH, STONE, TABLE, TREE, WATER

SIZE = 32
QUIET = dict(cow_spawn_prob=0.0, zombie_spawn_base=0.0, zombie_spawn_night=0.0, skeleton_spawn_prob=0.0)
ENV, PARAMS = motivegym.make_jax("CrafterTeam-v0", preset="crafter", n_agents=1, world_size=SIZE, **QUIET)
STEP = jax.jit(ENV.step)
RESET = jax.jit(ENV.reset)
AGENT = (16, 16)  # faces right: the target cell is (16, 17)
TARGET = (16, 17)
NOOP, DO = ACTION["noop"], ACTION["do"]


def world(params=PARAMS, fill=GRASS, cells=None, agents=(AGENT,), items=None, t=0, zombies=(), skeletons=(), cows=()):
    """A flat world of ``fill`` with ``{(row, col): material}``, agents facing right, mobs ``[(row, col), ...]``."""
    state, _ = RESET(jax.random.PRNGKey(0), params)
    terrain = jnp.full((params.world_size, params.world_size), fill, jnp.int32)
    for (row, col), material in (cells or {}).items():
        terrain = terrain.at[row, col].set(material)
    inventory = state.inventory
    for name, count in (items or {}).items():
        inventory = inventory.at[0, ITEM[name]].set(count)

    def mobs(slots, cells, health):
        position = jnp.zeros((slots, 2), jnp.int32).at[: len(cells)].set(jnp.array(cells, jnp.int32).reshape(-1, 2))
        return Mobs(position, jnp.zeros(slots, jnp.int32).at[: len(cells)].set(health), jnp.zeros(slots, jnp.int32))

    cow_mobs = mobs(params.n_cows, cows, crafter_rules.COW_HEALTH)
    return dataclasses.replace(
        state,
        terrain=terrain,
        positions=jnp.array(agents, jnp.int32),
        facing=jnp.full(params.n_agents, 3, jnp.int32),
        inventory=inventory,
        t=jnp.int32(t),
        light=crafter_rules.light_level(t, params.day_length),
        zombies=mobs(params.max_zombies, zombies, crafter_rules.ZOMBIE_HEALTH),
        skeletons=mobs(params.max_skeletons, skeletons, crafter_rules.SKELETON_HEALTH),
        cow_positions=cow_mobs.position,
        cow_health=cow_mobs.health,
    )


def run(state, actions, params=PARAMS, seed=0):
    """Step through ``actions`` (ints for agent 0; others noop); returns the last state, payoffs and info."""
    payoffs, info = [], None
    for k, action in enumerate(actions):
        joint = jnp.array([action] + [NOOP] * (params.n_agents - 1), jnp.int32)
        state, _, payoff, _, info = STEP(jax.random.PRNGKey(1000 * seed + k), state, joint, params)
        payoffs.append(np.asarray(payoff))
    return state, np.array(payoffs), info


def health(state, agent=0):
    return int(state.inventory[agent, ITEM["health"]])


# ----- daylight -----


def test_daylight_follows_the_day_counter():
    state = world()
    lights = []
    for _ in range(3):
        state, _, info = run(state, [NOOP])
        lights.append(float(info["light"]))
    expected = [1 - abs(np.cos(np.pi * ((t / 300) % 1 + 0.3))) ** 3 for t in (1, 2, 3)]
    np.testing.assert_allclose(lights, expected, atol=1e-5)
    assert float(crafter_rules.light_level(0, 300.0)) == pytest.approx(1 - np.cos(0.3 * np.pi) ** 3, abs=1e-6)
    night = float(crafter_rules.light_level(210, 300.0))  # progress 0.7 + 0.3 = 1: cos(π) = -1
    assert night == pytest.approx(0.0, abs=1e-6) and float(crafter_rules.light_level(510, 300.0)) == pytest.approx(night, abs=1e-5)
    assert float(crafter_rules.light_level(60, 300.0)) == pytest.approx(1.0, abs=1e-6)  # noon
    assert float(crafter_rules.light_level(123, 0.0)) == 1.0  # day_length 0: no night (rules="team")
    obs = ENV.observe(state, PARAMS)
    assert obs.shape == (1, 7 * 9 * 20 + 4 + 16 + 2) and float(obs[0, -1]) == pytest.approx(lights[-1])


def test_zombies_spawn_at_night_not_by_day():
    night_params = ENV.default_params(preset="crafter", n_agents=1, world_size=SIZE, **{**QUIET, "zombie_spawn_night": 1.0})
    for seed in range(5):  # chance 0 + 1·(1 − 0)² = 1 at midnight: one zombie per step
        night, _, _ = run(world(night_params, t=210), [NOOP], night_params, seed=seed)
        alive = np.asarray(night.zombies.health) > 0
        assert alive.sum() == 1
        distance = np.abs(np.asarray(night.zombies.position)[alive] - np.array(AGENT)).sum()
        assert 9 < distance < 14 and int(night.terrain[tuple(np.asarray(night.zombies.position)[alive][0])]) == GRASS
        noon, _, _ = run(world(night_params, t=60), [NOOP], night_params, seed=seed)
        assert (np.asarray(noon.zombies.health) == 0).all()  # (1 − 1)² = 0 at noon


# ----- sleeping -----


def test_sleep_restores_energy_and_waking_comes_before_the_vitals():
    state = world(items={"energy": 8})
    state, _, _ = run(state, [ACTION["sleep"]])
    assert bool(state.sleeping[0])
    state, _, _ = run(state, [ACTION["move_up"]] * 10)  # sleepers ignore actions; the 11th step asleep gives energy 9
    assert bool(state.sleeping[0]) and int(state.inventory[0, ITEM["energy"]]) == 9
    assert tuple(np.asarray(state.positions[0])) == AGENT
    state, payoffs, info = run(state, [NOOP])  # Crafter/Craftax: the check at the start of the next update wakes it
    assert not bool(state.sleeping[0]) and bool(info["new_achievements"][0, ACHIEVEMENT["wake_up"]])
    assert payoffs[-1, 0] == pytest.approx(1.0)


# ----- saplings and plants -----


def test_saplings_come_from_grass_with_probability_one_tenth():
    state = world(items={})
    found = []
    for seed in range(200):
        after, _, _ = run(state, [DO], seed=seed)
        found.append(int(after.inventory[0, ITEM["sapling"]]))
    rate = np.mean(found)
    assert set(found) <= {0, 1} and 0.04 <= rate <= 0.18  # p = 0.1; 200 draws: ±0.06 is beyond 3 sd
    assert int(after.terrain[TARGET]) == GRASS
    stone, _, _ = run(world(cells={TARGET: STONE}), [DO])
    assert int(stone.inventory[0, ITEM["sapling"]]) == 0


def test_a_planted_sapling_ripens_and_can_be_eaten_again_later():
    params = ENV.default_params(preset="crafter", n_agents=1, world_size=SIZE, plant_ripe_age=6, **QUIET)
    state = world(params, items={"sapling": 1, "food": 3})
    state, payoffs, info = run(state, [ACTION["place_plant"]], params)
    assert bool(state.plants.alive[0]) and tuple(np.asarray(state.plants.position[0])) == TARGET
    assert int(state.inventory[0, ITEM["sapling"]]) == 0 and bool(info["new_achievements"][0, ACHIEVEMENT["place_plant"]])
    state, _, info = run(state, [DO] * 4, params)  # unripe: nothing to eat (and no sapling from under it)
    assert int(state.inventory[0, ITEM["food"]]) == 3 and not bool(info["achievements"][0, ACHIEVEMENT["eat_plant"]])
    blocked, _, _ = run(state, [ACTION["move_right"]], params)
    assert tuple(np.asarray(blocked.positions[0])) == AGENT  # plants block
    state, _, _ = run(state, [NOOP] * 2, params)  # age 6: ripe
    state, payoffs, info = run(state, [DO], params)
    assert int(state.inventory[0, ITEM["food"]]) == 7 and bool(info["new_achievements"][0, ACHIEVEMENT["eat_plant"]])
    assert float(state.counters[0, crafter_rules.HUNGER]) == pytest.approx(1.0)  # eating resets hunger (then +1)
    assert bool(state.plants.alive[0]) and int(state.plants.age[0]) == 1  # it grows again


def test_saplings_go_on_grass_only():
    for material in (PATH, WATER, STONE):
        state, _, _ = run(world(cells={TARGET: material}, items={"sapling": 1}), [ACTION["place_plant"]])
        assert not bool(state.plants.alive.any()) and int(state.inventory[0, ITEM["sapling"]]) == 1


# ----- zombies -----


def boxed_zombie_world(**kwargs):
    """A zombie right of the agent, walled in by stone on its other three sides (it cannot move)."""
    cells = {(15, 17): STONE, (17, 17): STONE, (16, 18): STONE}
    return world(cells=cells, zombies=[TARGET], **kwargs)


def test_an_adjacent_zombie_hits_for_two_then_waits_out_its_cooldown():
    state = boxed_zombie_world(t=210)  # night
    state, payoffs, _ = run(state, [NOOP])
    assert health(state) == 7 and payoffs[-1, 0] == pytest.approx(-0.2)
    assert int(state.zombies.cooldown[0]) == crafter_rules.ZOMBIE_COOLDOWN
    state, _, _ = run(state, [NOOP] * 5)  # cooldown 5 → 0 over five steps
    assert health(state) == 7
    state, _, _ = run(state, [NOOP])
    assert health(state) == 5


def test_a_zombie_hits_a_sleeper_for_seven_and_wakes_it():
    state = boxed_zombie_world(items={"energy": 3})
    state = dataclasses.replace(state, sleeping=jnp.array([True]))
    state, _, info = run(state, [NOOP])
    assert health(state) == 2 and not bool(state.sleeping[0])
    assert bool(info["new_achievements"][0, ACHIEVEMENT["wake_up"]])  # Craftax-Classic counts this as waking up


@pytest.mark.parametrize("sword, hits", [(None, 5), ("wood_sword", 3), ("stone_sword", 2), ("iron_sword", 1)])
def test_defeating_a_zombie_takes_five_damage(sword, hits):
    state = boxed_zombie_world(items={sword: 1} if sword else {})
    if hits > 1:
        state, _, info = run(state, [DO] * (hits - 1))
        assert not bool(info["achievements"][0, ACHIEVEMENT["defeat_zombie"]]) and int(state.zombies.health[0]) > 0
    state, payoffs, info = run(state, [DO])
    assert bool(info["new_achievements"][0, ACHIEVEMENT["defeat_zombie"]]) and int(state.zombies.health[0]) <= 0


def test_zombies_walk_towards_the_agent_and_despawn_far_away():
    near = world(zombies=[(16, 23)])  # 7 cells right of the agent
    steps = [np.abs(np.asarray(run(near, [NOOP] * 4, seed=s)[0].zombies.position[0]) - AGENT).sum() for s in range(20)]
    assert np.mean(steps) < 5.5  # chasing 3 of 4 steps: 7 → about 4.5; a random walk stays near 7
    far = world(zombies=[(16, 31)], cells={})  # 15 away ≥ mob_despawn_distance 14
    state, _, _ = run(far, [NOOP])
    assert int(state.zombies.health[0]) == 0


# ----- skeletons and arrows -----


def tunnel_world(**kwargs):
    """Stone everywhere but a path corridor along row 16; the agent at (16, 16), a skeleton 5 cells right."""
    cells = {(16, col): PATH for col in range(SIZE)}
    return world(fill=STONE, cells={**cells, **kwargs.pop("cells", {})}, skeletons=[(16, 21)], **kwargs)


def test_a_skeleton_shoots_an_arrow_that_flies_and_hits_for_two():
    state = tunnel_world()
    state, _, _ = run(state, [NOOP])
    assert bool(state.arrows.alive[0]) and tuple(np.asarray(state.arrows.direction[0])) == (0, -1)
    assert int(state.skeletons.cooldown[0]) == crafter_rules.SKELETON_RELOAD
    assert tuple(np.asarray(state.arrows.position[0])) == (16, 20)  # spawned on the skeleton, flew one cell
    state, _, _ = run(state, [NOOP] * 3)
    assert tuple(np.asarray(state.arrows.position[0])) == (16, 17) and health(state) == 9
    state, payoffs, _ = run(state, [NOOP])
    assert health(state) == 7 and not bool(state.arrows.alive[0]) and payoffs[-1, 0] == pytest.approx(-0.2)


def test_arrows_break_tables_and_stop_at_stone():
    state = tunnel_world(cells={(16, 18): TABLE})
    state, _, _ = run(state, [NOOP] * 3)
    assert int(state.terrain[16, 18]) == PATH and health(state) == 9
    wall = dataclasses.replace(
        world(fill=STONE, cells={(16, 16): GRASS}),
        arrows=Arrows(jnp.array([[16, 20], [0, 0], [0, 0]]), jnp.array([[0, 1], [0, 1], [0, 1]]), jnp.array([True, False, False])),
    )
    state, _, _ = run(wall, [NOOP])
    assert not bool(state.arrows.alive[0])


def test_defeating_a_skeleton_takes_three_damage():
    state = tunnel_world(items={"stone_sword": 1})
    state = dataclasses.replace(state, skeletons=dataclasses.replace(state.skeletons, position=jnp.array([TARGET, (0, 0)], jnp.int32)))
    state, _, info = run(state, [DO])
    assert bool(info["new_achievements"][0, ACHIEVEMENT["defeat_skeleton"]])


# ----- the rest of the rule set -----


def test_crafter_recipes_and_trees():
    state, _, info = run(world(cells={TARGET: TREE}), [DO])
    assert int(state.terrain[TARGET]) == GRASS and int(state.inventory[0, ITEM["wood"]]) == 1  # trees are cut down
    state, _, info = run(world(items={"wood": 1}), [ACTION["place_table"]])
    assert int(state.terrain[TARGET]) == GRASS  # a table costs 2 wood
    state, _, info = run(world(items={"wood": 2}), [ACTION["place_table"]])
    assert int(state.terrain[TARGET]) == TABLE and int(state.inventory[0, ITEM["wood"]]) == 0
    state, _, info = run(world(items={"stone": 1}), [ACTION["place_furnace"]])  # no table needed (Craftax-Classic)
    assert bool(info["achievements"][0, ACHIEVEMENT["place_furnace"]])
    near = {(15, 15): TABLE, (17, 15): 9}  # 9: furnace
    no_stone, _, _ = run(world(cells=near, items={"wood": 1, "coal": 1, "iron": 1}), [ACTION["make_iron_pickaxe"]])
    assert int(no_stone.inventory[0, ITEM["iron_pickaxe"]]) == 0  # Craftax-Classic: iron tools also cost a stone
    made, _, _ = run(world(cells=near, items={"wood": 1, "coal": 1, "iron": 1, "stone": 1}), [ACTION["make_iron_pickaxe"]])
    assert int(made.inventory[0, ITEM["iron_pickaxe"]]) == 1


def test_drinking_resets_thirst_and_cows_spawn_then_despawn():
    state = world(cells={TARGET: WATER})
    state = dataclasses.replace(state, counters=state.counters.at[0, crafter_rules.THIRST].set(15.0))
    state, _, _ = run(state, [DO])
    assert float(state.counters[0, crafter_rules.THIRST]) == pytest.approx(1.0)
    params = ENV.default_params(preset="crafter", n_agents=1, world_size=SIZE, **{**QUIET, "cow_spawn_prob": 1.0})
    state, _, _ = run(world(params), [NOOP], params)
    spawned = np.asarray(state.cow_health) > 0
    distance = np.abs(np.asarray(state.cow_positions)[spawned] - np.array(AGENT)).sum()
    assert spawned.sum() == 1 and 3 < distance < 14  # (it may walk one cell before the spawn check)
    state, _, _ = run(world(cows=[(16, 31)]), [NOOP])
    assert int(state.cow_health[0]) == 0  # 15 away (>= mob_despawn_distance 14): despawned


def test_reset_builds_a_crafter_world():
    env, params = motivegym.make_jax("CrafterTeam-v0", preset="crafter", n_agents=1)
    state, obs = jax.jit(env.reset)(jax.random.PRNGKey(3), params)
    terrain = np.asarray(state.terrain)
    assert terrain.shape == (64, 64) and tuple(np.asarray(state.positions[0])) == (32, 32) and terrain[32, 32] == GRASS
    assert (terrain == 7).sum() >= 1 and (terrain == STONE).sum() > 100 and (terrain == WATER).sum() > 0  # 7: diamond
    assert env.static_info(params)["achievement_names"] == CRAFTER_ACHIEVEMENT_NAMES and len(CRAFTER_ACHIEVEMENT_NAMES) == 22
    assert env.num_actions(params) == 17 and obs.shape == (1, 1282)
    assert not np.asarray(state.zombies.health).any() and not np.asarray(state.cow_health).any()


# ----- multi-agent switches -----


def test_zombies_attack_the_nearest_agent_or_the_first():
    params = ENV.default_params(preset="crafter", n_agents=2, world_size=SIZE, **QUIET)
    cells = {(15, 17): STONE, (17, 17): STONE}
    state = world(params, cells=cells, agents=(AGENT, (16, 18)), zombies=[TARGET])
    state, _, _ = run(state, [NOOP], params)
    assert [health(state, 0), health(state, 1)] == [7, 9]  # equally near: the lower index
    first = ENV.default_params(preset="crafter", n_agents=2, world_size=SIZE, mob_target="first", **QUIET)
    state = world(first, cells=cells, agents=((10, 10), (16, 18)), zombies=[TARGET])
    state, _, _ = run(state, [NOOP], first)
    assert [health(state, 0), health(state, 1)] == [9, 9]  # chases agent 0, far away: no attack on agent 1
    nearest = world(params, cells=cells, agents=((10, 10), (16, 18)), zombies=[TARGET])
    state, _, _ = run(nearest, [NOOP], params)
    assert [health(state, 0), health(state, 1)] == [9, 7]


def test_shared_achievements_pay_every_agent():
    params = ENV.default_params(preset="crafter", n_agents=2, world_size=SIZE, shared_achievements=True, **QUIET)
    state = world(params, cells={TARGET: TREE}, agents=(AGENT, (5, 5)))
    state, payoffs, info = run(state, [DO], params)
    assert payoffs[-1].tolist() == [1.0, 1.0] and bool(info["achievements"][1, ACHIEVEMENT["collect_wood"]])
    separate = ENV.default_params(preset="crafter", n_agents=2, world_size=SIZE, **QUIET)
    state, payoffs, _ = run(world(separate, cells={TARGET: TREE}, agents=(AGENT, (5, 5))), [DO], separate)
    assert payoffs[-1].tolist() == [1.0, 0.0]


def test_bad_rule_params_raise():
    with pytest.raises(ValueError, match="preset"):
        ENV.default_params(preset="minecraft")
    with pytest.raises(ValueError):
        ENV.default_params(max_zombies=2)  # mobs need rules="crafter"
    with pytest.raises(ValueError):
        ENV.default_params(n_agents=1)  # one agent needs rules="crafter"
    with pytest.raises(ValueError):
        ENV.default_params(preset="crafter", mob_target="random")


def test_spawn_pick_is_the_ranked_allowed_cell():
    from motivegym.envs.sparse.crafter_mobs import pick_cell

    rng = np.random.default_rng(0)
    for _ in range(20):
        allowed = rng.random((16, 16)) < rng.random() * 0.3
        u = np.float32(rng.random())
        found, cell = pick_cell(jnp.float32(u), jnp.asarray(allowed))
        cells = np.argwhere(allowed)  # row-major
        assert bool(found) == (len(cells) > 0)
        if len(cells):
            assert tuple(np.asarray(cell)) == tuple(cells[min(int(u * len(cells)), len(cells) - 1)])
