import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import motivegym
from motivegym.envs.sparse.crafter import ACHIEVEMENT, ACHIEVEMENT_NAMES, ACTION, ITEM, N_ACTIONS
from motivegym.envs.sparse.worldgen import COAL, DIAMOND, FURNACE, GRASS, IRON, LAVA, PATH, STONE, TABLE, TREE, WATER

KEY = jax.random.PRNGKey(0)
ENV, PARAMS = motivegym.make_jax("CrafterTeam-v0", n_cows=0)
STEP = jax.jit(ENV.step)
A0 = (5, 5)  # agent 0 faces right, so its target cell is (5, 6)
TARGET = (5, 6)
NOOP = ACTION["noop"]


def flat_world(params=PARAMS, positions=(A0, (20, 20)), cells=None, items=None):
    """All-grass world, agents facing right, optional ``{(row, col): material}`` and agent-0 ``{item: count}``."""
    state, _ = ENV.reset(KEY, params)
    terrain = jnp.full((params.world_size, params.world_size), GRASS, jnp.int32)
    for (row, col), material in (cells or {}).items():
        terrain = terrain.at[row, col].set(material)
    inventory = state.inventory
    for name, count in (items or {}).items():
        inventory = inventory.at[0, ITEM[name]].set(count)
    return dataclasses.replace(
        state,
        terrain=terrain,
        positions=jnp.array(positions, jnp.int32),
        facing=jnp.full(params.n_agents, 3, jnp.int32),
        inventory=inventory,
    )


def act(state, action, params=PARAMS, others=NOOP):
    actions = jnp.array([action] + [others] * (params.n_agents - 1), jnp.int32)
    return STEP(KEY, state, actions, params)


def items_of(state, agent=0):
    return {name: int(state.inventory[agent, ITEM[name]]) for name in ITEM if int(state.inventory[agent, ITEM[name]]) and ITEM[name] >= 4}


# action -> (items used, items made, stations required nearby, material placed) (Crafter data.yaml)
RECIPES = {
    "place_table": ({"wood": 1}, {}, (), TABLE),
    "place_stone": ({"stone": 1}, {}, (), STONE),
    "place_furnace": ({"stone": 1}, {}, (TABLE,), FURNACE),
    "make_wood_pickaxe": ({"wood": 1}, {"wood_pickaxe": 1}, (TABLE,), None),
    "make_stone_pickaxe": ({"wood": 1, "stone": 1}, {"stone_pickaxe": 1}, (TABLE,), None),
    "make_iron_pickaxe": ({"wood": 1, "coal": 1, "iron": 1}, {"iron_pickaxe": 1}, (TABLE, FURNACE), None),
    "make_wood_sword": ({"wood": 1}, {"wood_sword": 1}, (TABLE,), None),
    "make_stone_sword": ({"wood": 1, "stone": 1}, {"stone_sword": 1}, (TABLE,), None),
    "make_iron_sword": ({"wood": 1, "coal": 1, "iron": 1}, {"iron_sword": 1}, (TABLE, FURNACE), None),
}
STATION_CELLS = {TABLE: (4, 4), FURNACE: (6, 4)}  # diagonal neighbours of the agent at (5, 5)


@pytest.mark.parametrize("action", list(RECIPES))
def test_recipe_succeeds_with_its_requirements(action):
    uses, makes, stations, placed = RECIPES[action]
    state = flat_world(cells={STATION_CELLS[s]: s for s in stations}, items={**uses, "wood": uses.get("wood", 0) + 2})
    state, _, payoffs, _, info = act(state, ACTION[action])
    expected = {"wood": 2, **makes}
    assert items_of(state) == expected
    if placed is not None:
        assert int(state.terrain[TARGET]) == placed
    assert bool(info["achievements"][0, ACHIEVEMENT[action]])
    assert float(payoffs[0]) == pytest.approx(1.0)


@pytest.mark.parametrize("action", list(RECIPES))
def test_recipe_fails_without_each_requirement(action):
    uses, _, stations, placed = RECIPES[action]
    variants = [({**uses, item: 0}, stations) for item in uses] + [(uses, tuple(s for s in stations if s != gone)) for gone in stations]
    for items, present in variants:
        state = flat_world(cells={STATION_CELLS[s]: s for s in present}, items=items)
        after, _, payoffs, _, info = act(state, ACTION[action])
        np.testing.assert_array_equal(after.inventory, state.inventory)
        np.testing.assert_array_equal(after.terrain, state.terrain)
        assert not bool(info["achievements"][0, ACHIEVEMENT[action]]) and float(payoffs[0]) == 0.0


def test_stations_must_be_within_nearby_distance():
    state = flat_world(cells={(2, 5): TABLE}, items={"wood": 1})
    after, *_ = act(state, ACTION["make_wood_pickaxe"])
    assert items_of(after) == {"wood": 1}
    far = ENV.default_params(n_cows=0, nearby_distance=3)
    after, *_ = act(flat_world(far, cells={(2, 5): TABLE}, items={"wood": 1}), ACTION["make_wood_pickaxe"], params=far)
    assert items_of(after) == {"wood_pickaxe": 1}


def test_placing_needs_a_suitable_free_target():
    for blocked in (TREE, WATER, TABLE):
        state = flat_world(cells={TARGET: blocked}, items={"wood": 1})
        after, *_ = act(state, ACTION["place_table"])
        assert int(after.terrain[TARGET]) == blocked and items_of(after) == {"wood": 1}
    occupied = flat_world(positions=(A0, TARGET), items={"wood": 1})
    after, *_ = act(occupied, ACTION["place_table"])
    assert int(after.terrain[TARGET]) == GRASS and items_of(after) == {"wood": 1}
    after, *_ = act(flat_world(cells={TARGET: WATER}, items={"stone": 1}), ACTION["place_stone"])
    assert int(after.terrain[TARGET]) == STONE  # stone may fill water


def test_achievement_pays_once_and_inventory_accumulates():
    state = flat_world(cells={TARGET: TREE})
    state, _, first, _, info = act(state, ACTION["do"])
    state, _, second, _, info = act(state, ACTION["do"])
    assert float(first[0]) == pytest.approx(1.0) and float(second[0]) == 0.0 and float(first[1]) == 0.0
    assert items_of(state) == {"wood": 2} and int(state.terrain[TARGET]) == TREE
    assert bool(info["achievements"][0, ACHIEVEMENT["collect_wood"]]) and not bool(info["new_achievements"][0].any())
    assert not bool(info["achievements"][1].any()) and bool(info["team_achievements"][ACHIEVEMENT["collect_wood"]])


def test_inventory_is_capped_at_nine():
    after, *_ = act(flat_world(cells={TARGET: TREE}, items={"wood": 9}), ACTION["do"])
    assert items_of(after) == {"wood": 9}


@pytest.mark.parametrize(
    "material, item, tool, weaker_tool",
    [
        (STONE, "stone", "wood_pickaxe", None),
        (COAL, "coal", "wood_pickaxe", None),
        (IRON, "iron", "stone_pickaxe", "wood_pickaxe"),
        (DIAMOND, "diamond", "iron_pickaxe", "stone_pickaxe"),
    ],
)
def test_collecting_requires_the_right_tool(material, item, tool, weaker_tool):
    weaker = {weaker_tool: 1} if weaker_tool else {}
    after, _, payoffs, *_ = act(flat_world(cells={TARGET: material}, items=weaker), ACTION["do"])
    assert int(after.terrain[TARGET]) == material and items_of(after) == weaker and float(payoffs[0]) == 0.0
    after, _, payoffs, _, info = act(flat_world(cells={TARGET: material}, items={tool: 1}), ACTION["do"])
    assert int(after.terrain[TARGET]) == PATH and items_of(after) == {tool: 1, item: 1}
    assert bool(info["achievements"][0, ACHIEVEMENT[f"collect_{item}"]]) and float(payoffs[0]) == pytest.approx(1.0)


def test_drinking_water():
    state = flat_world(cells={TARGET: WATER})
    state = dataclasses.replace(state, inventory=state.inventory.at[0, ITEM["drink"]].set(5))
    after, _, payoffs, _, info = act(state, ACTION["do"])
    assert int(after.inventory[0, ITEM["drink"]]) == 6 and int(after.terrain[TARGET]) == WATER
    assert bool(info["achievements"][0, ACHIEVEMENT["collect_drink"]]) and float(payoffs[0]) == pytest.approx(1.0)


def run(state, steps, action=NOOP, params=PARAMS):
    payoffs = []
    for _ in range(steps):
        state, _, payoff, done, info = act(state, action, params=params)
        payoffs.append(np.asarray(payoff))
    return state, np.array(payoffs), done, info


def test_vitals_decay_at_crafter_rates():
    state = flat_world()
    after, *_ = run(state, 20)
    assert [int(v) for v in after.inventory[0, :4]] == [9, 9, 9, 9]
    after, *_ = run(after, 1)  # thirst counter 21 > 20
    assert [int(v) for v in after.inventory[0, :4]] == [9, 9, 8, 9]
    after, *_ = run(after, 5)  # hunger counter 26 > 25
    assert [int(v) for v in after.inventory[0, :4]] == [9, 8, 8, 9]
    after, *_ = run(after, 5)  # fatigue counter 31 > 30
    assert [int(v) for v in after.inventory[0, :4]] == [9, 8, 8, 8]


def test_health_regenerates_when_vitals_are_nonzero_and_drops_when_one_is_zero():
    state = flat_world()
    state = dataclasses.replace(state, inventory=state.inventory.at[0, ITEM["health"]].set(5))
    after, payoffs, *_ = run(state, 26)  # recover counter 26 > 25
    assert int(after.inventory[0, ITEM["health"]]) == 6 and payoffs[-1, 0] == pytest.approx(0.1)
    thirsty = dataclasses.replace(state, inventory=state.inventory.at[0, ITEM["drink"]].set(0))
    after, payoffs, *_ = run(thirsty, 15)
    assert int(after.inventory[0, ITEM["health"]]) == 5
    after, payoffs, *_ = run(after, 1)  # recover counter −16 < −15
    assert int(after.inventory[0, ITEM["health"]]) == 4 and payoffs[-1, 0] == pytest.approx(-0.1)


def test_episode_terminates_when_all_agents_die():
    state = flat_world()
    inventory = state.inventory.at[:, ITEM["health"]].set(1).at[:, ITEM["food"]].set(0)
    state, payoffs, done, info = run(dataclasses.replace(state, inventory=inventory), 16)
    assert bool(done) and bool(info["terminated"]) and not bool(info["truncated"])
    assert not bool(info["alive"].any()) and payoffs[-1] == pytest.approx([-0.1, -0.1])
    moved, *_ = act(state, ACTION["move_up"])  # the dead stay put
    np.testing.assert_array_equal(moved.positions, state.positions)


def test_walking_into_lava_kills():
    state = flat_world(cells={TARGET: LAVA})
    after, _, payoffs, _, info = act(state, ACTION["move_right"])
    assert tuple(np.asarray(after.positions[0])) == TARGET and not bool(info["alive"][0]) and bool(info["alive"][1])
    assert float(payoffs[0]) == pytest.approx(-0.9)


def test_sleeping_restores_energy_and_waking_up_is_an_achievement():
    state = flat_world()
    state = dataclasses.replace(state, inventory=state.inventory.at[0, ITEM["energy"]].set(8))
    state, _, payoffs, _, _ = act(state, ACTION["sleep"])
    assert bool(state.sleeping[0]) and float(payoffs[0]) == 0.0
    moved, *_ = act(state, ACTION["move_up"])  # sleepers ignore actions
    np.testing.assert_array_equal(moved.positions, state.positions)
    state, payoffs, _, info = run(state, 9)
    assert bool(state.sleeping[0]) and int(state.inventory[0, ITEM["energy"]]) == 8
    state, payoffs, _, info = run(state, 1)  # the 11th step asleep: fatigue −11 < −10, energy 9, wake up
    assert not bool(state.sleeping[0]) and int(state.inventory[0, ITEM["energy"]]) == 9
    assert bool(info["new_achievements"][0, ACHIEVEMENT["wake_up"]]) and payoffs[-1, 0] == pytest.approx(1.0)
    assert float(state.counters[0, 0]) == pytest.approx(5.5)  # hunger grows at half rate asleep
    rested, *_ = act(flat_world(), ACTION["sleep"])
    assert not bool(rested.sleeping[0])  # full energy: no sleep


def test_agents_act_in_index_order_and_block_each_other():
    state = flat_world(positions=((5, 4), (5, 8)))
    state = dataclasses.replace(state, facing=jnp.array([3, 2], jnp.int32))
    actions = jnp.array([ACTION["move_right"], ACTION["move_left"]], jnp.int32)
    state, *_ = STEP(KEY, state, actions, PARAMS)
    state, *_ = STEP(KEY, state, actions, PARAMS)  # both want (5, 6): agent 0 moves first
    np.testing.assert_array_equal(state.positions, [[5, 6], [5, 7]])
    wall = flat_world(cells={TARGET: STONE})
    after, *_ = act(wall, ACTION["move_right"])
    np.testing.assert_array_equal(after.positions[0], A0)


def test_eating_a_cow_with_a_sword_and_cow_respawn():
    params = ENV.default_params(n_cows=1, cow_move_prob=0.0)
    state = flat_world(params, items={"iron_sword": 1})
    state = dataclasses.replace(
        state,
        inventory=state.inventory.at[0, ITEM["food"]].set(2),
        cow_positions=jnp.array([TARGET], jnp.int32),
        cow_health=jnp.array([3], jnp.int32),
    )
    after, _, payoffs, _, info = act(state, ACTION["do"], params=params)
    assert int(after.inventory[0, ITEM["food"]]) == 8 and bool(info["achievements"][0, ACHIEVEMENT["eat_cow"]])
    assert float(payoffs[0]) == pytest.approx(1.0)
    assert int(after.cow_health[0]) == 3 and tuple(np.asarray(after.cow_positions[0])) != TARGET  # respawned elsewhere
    bare = dataclasses.replace(state, inventory=state.inventory.at[0, ITEM["iron_sword"]].set(0))
    after, *_ = act(bare, ACTION["do"], params=params)
    assert int(after.cow_health[0]) == 2 and int(after.inventory[0, ITEM["food"]]) == 2


def test_friendly_fire_only_when_enabled():
    state = flat_world(positions=(A0, TARGET))
    after, *_ = act(state, ACTION["do"])
    assert int(after.inventory[1, ITEM["health"]]) == 9
    params = ENV.default_params(n_cows=0, agent_attack_damage=3)
    after, _, payoffs, *_ = act(flat_world(params, positions=(A0, TARGET)), ACTION["do"], params=params)
    assert int(after.inventory[1, ITEM["health"]]) == 6 and float(payoffs[1]) == pytest.approx(-0.3)


def test_out_of_range_actions_are_noop():
    state = flat_world(cells={TARGET: TREE})
    for bad in (-1, N_ACTIONS, 99):
        after, _, payoffs, *_ = act(state, bad)
        np.testing.assert_array_equal(after.inventory, state.inventory)
        np.testing.assert_array_equal(after.positions, state.positions)


def test_truncation_at_max_steps():
    params = ENV.default_params(n_cows=0, max_steps=3)
    state, _ = ENV.reset(KEY, params)
    state, _, done, info = run(state, 3, params=params)
    assert bool(done) and bool(info["truncated"]) and not bool(info["terminated"])


def test_observation_layout_and_static_info():
    state = flat_world(cells={TARGET: TREE})
    obs = ENV.observe(state, PARAMS)
    assert obs.shape == (2, 7 * 9 * 15 + 4 + 15 + 1) and ENV.global_state(state, PARAMS).shape == (2 * obs.shape[1],)
    view = np.asarray(obs[0, : 7 * 9 * 15]).reshape(7, 9, 15)
    assert view[3, 5, TREE] == 1.0 and view[3, 4, 13] == 1.0  # tree right of the agent; self at the centre
    np.testing.assert_allclose(view.sum(axis=-1) >= 1.0, True)
    edge = ENV.observe(flat_world(positions=((0, 0), (20, 20))), PARAMS)
    assert np.asarray(edge[0, : 7 * 9 * 15]).reshape(7, 9, 15)[0, 0, 12] == 1.0  # out-of-map channel
    names = ENV.static_info(PARAMS)["achievement_names"]
    assert names == ACHIEVEMENT_NAMES and len(names) >= 15
    _, _, _, _, info = act(state, NOOP)
    assert info["achievements"].shape == (2, len(names))


def test_render_rgb_and_text():
    state = flat_world(cells={TARGET: TREE})
    image = ENV.render_rgb(state, PARAMS)
    assert image.shape == (256, 256, 3) and image.dtype == np.uint8
    assert not np.array_equal(image[5 * 8 + 4, 5 * 8 + 4], image[5 * 8 + 4, 6 * 8 + 4])  # agent vs tree
    text = ENV.render_text(state, PARAMS)
    assert text.splitlines()[1 + 5][5:7] == "0T" and "agent_1 (awake)" in text


def test_bad_params_raise():
    for bad in ({"n_agents": 1}, {"n_agents": 7}, {"view_width": 8}, {"world_size": 8}, {"max_steps": 0}, {"n_cows": 40}):
        with pytest.raises(ValueError):
            ENV.default_params(**bad)
    with pytest.raises(ValueError, match="did you mean 'n_agents'"):
        ENV.default_params(n_agent=3)
