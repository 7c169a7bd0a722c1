import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import motivegym
from motivegym.envs.spatial.grid import FORWARD, NOOP, AgentState
from motivegym.envs.spatial.in_the_matrix import (
    INTERACT,
    PrisonersDilemmaInTheMatrix,
    StagHuntInTheMatrix,
    interaction_beams,
    matrix_payoffs,
    mixed_strategy,
    parse_matrix_layout,
    resolve_interactions,
)

N, E, S, W = 0, 1, 2, 3
SMALL = (
    "#########",
    "#P  1  P#",
    "#   2   #",
    "#P     P#",
    "#########",
)


#: one jitted reset/step per env class (eager stepping is slow on CPU)
JITTED = {cls: (jax.jit(cls().reset), jax.jit(cls().step)) for cls in (PrisonersDilemmaInTheMatrix, StagHuntInTheMatrix)}


def small_env(cls=PrisonersDilemmaInTheMatrix, **overrides):
    env = cls()
    values = {
        "layout": SMALL,
        "n_agents": 2,
        "view_ahead": 2,
        "view_behind": 1,
        "view_side": 1,
        "freeze_steps": 0,
        "respawn_delay": 3,
    }
    return env, env.default_params(**{**values, **overrides})


def placed(env, params, pos, orient, inventory=None, ready=None, resources=None):
    """A reset state with the agents, inventories, readiness and (optionally) present resources set by hand."""
    state, _ = JITTED[type(env)][0](jax.random.PRNGKey(0), params)
    n = len(pos)
    agents = AgentState(pos=jnp.asarray(pos, jnp.int32), orient=jnp.asarray(orient, jnp.int32), timeout=jnp.zeros(n, jnp.int32))
    changes = {"agents": agents}
    if inventory is not None:
        changes["inventory"] = jnp.asarray(inventory, jnp.float32)
    if ready is not None:
        changes["ready"] = jnp.asarray(ready, bool)
    if resources is not None:
        changes["resources"] = jnp.asarray(resources, bool) & (state.resource_class > 0)
    return dataclasses.replace(state, **changes)


def step(env, params, state, actions, seed=1):
    return JITTED[type(env)][1](jax.random.PRNGKey(seed), state, jnp.asarray(actions, jnp.int32), params)


def test_registered_with_private_reward_and_melting_pot_defaults():
    for env_id, row in (("PrisonersDilemmaInTheMatrix-v0", [[3, 0], [5, 1]]), ("StagHuntInTheMatrix-v0", [[4, 0], [2, 2]])):
        spec = motivegym.get_spec(env_id)
        assert spec.family == "dilemmas" and spec.default_reward == "private"
        env, params = motivegym.make_jax(env_id)
        np.testing.assert_array_equal(params.row_matrix, row)
        np.testing.assert_array_equal(params.col_matrix, np.asarray(row).T)  # symmetric games: M_col = M_rowᵀ
        assert env.n_agents(params) == 8 and env.num_actions(params) == 8 and int(params.max_steps) == 1000
        assert env.layout(params).shape == (24, 25)
        state, obs = env.reset(jax.random.PRNGKey(0), params)
        assert obs.shape == (8, 11 * 11 * 5 + 6) and obs.dtype == jnp.float32
        assert env.global_state(state, params).shape == (24 * 25 * 4 + 8 * 7 + 8 * 2 + 8 + 1,)
        np.testing.assert_array_equal(state.inventory, np.ones((8, 2)))  # Melting Pot: one of each at the start
    layout = parse_matrix_layout(PrisonersDilemmaInTheMatrix().make_params().layout)
    assert (
        len(layout.spawn_points) == 64 and len(layout.resource_cells) == 36 and layout.choice_cells.sum() == 10
    )  # 13 + 13 fixed


def test_choice_cells_draw_class_one_or_two_at_every_reset():
    env, params = motivegym.make_jax("PrisonersDilemmaInTheMatrix-v0")
    choice = env.layout(params).choice_cells
    draws = np.stack([np.asarray(env.reset(jax.random.PRNGKey(s), params)[0].resource_class)[choice] for s in range(8)])
    assert set(np.unique(draws)) == {1, 2} and len({tuple(d) for d in draws}) > 1
    fixed = env.layout(params).fixed_class
    state, _ = env.reset(jax.random.PRNGKey(0), params)
    np.testing.assert_array_equal(np.asarray(state.resource_class)[fixed > 0], fixed[fixed > 0])


def test_mixed_strategy_and_matrix_payoffs():
    np.testing.assert_allclose(mixed_strategy(jnp.array([[3.0, 1.0], [0.0, 0.0]])), [[0.75, 0.25], [0.0, 0.0]])
    pd = PrisonersDilemmaInTheMatrix().make_params()
    row, col = matrix_payoffs(jnp.array([3.0, 1.0]), jnp.array([1.0, 3.0]), pd.row_matrix, pd.col_matrix)
    # s = (3/4, 1/4), c = (1/4, 3/4): s·M_row·c = 3/4·(3/4) + 1/4·(5/4 + 3/4); s·M_col·c = 3/4·(3/4 + 15/4) + 1/4·3/4
    assert float(row) == pytest.approx(1.0625) and float(col) == pytest.approx(3.5625)
    sh = StagHuntInTheMatrix().make_params()
    for a, b, expected in (([5, 0], [5, 0], (4, 4)), ([5, 0], [0, 5], (0, 2)), ([0, 5], [0, 5], (2, 2))):
        got = matrix_payoffs(jnp.array(a, jnp.float32), jnp.array(b, jnp.float32), sh.row_matrix, sh.col_matrix)
        np.testing.assert_allclose(got, expected)


def test_collecting_a_resource_fills_the_inventory_and_readies_the_agent():
    env, params = small_env(regrowth_rate=0.0)
    state = placed(env, params, [[1, 4], [3, 7]], [S, W])
    state, _, payoffs, _, info = step(env, params, state, [FORWARD, NOOP])
    np.testing.assert_array_equal(state.agents.pos[0], [2, 4])
    np.testing.assert_array_equal(state.inventory, [[1, 2], [1, 1]])  # a class-2 resource on top of the initial 1/1
    np.testing.assert_array_equal(info["collected"], [[0, 1], [0, 0]])
    assert list(np.asarray(state.ready)) == [True, False] and not bool(state.resources[2, 4]) and bool(state.resources[1, 4])
    np.testing.assert_array_equal(payoffs, [0.0, 0.0])  # collecting pays nothing (Melting Pot's Taste without a tasty class)
    np.testing.assert_array_equal(info["resource_count"], [1, 0])


def test_interaction_pays_the_matrix_game_of_the_two_inventories_then_removes_and_resets_both():
    env, params = small_env()
    state = placed(env, params, [[3, 2], [1, 2]], [N, S], inventory=[[3, 1], [1, 3]], ready=[True, True])
    state, _, payoffs, _, info = step(env, params, state, [INTERACT, NOOP])
    np.testing.assert_allclose(payoffs, [1.0625, 3.5625])  # agent 0 fired: the row player
    np.testing.assert_array_equal(info["interaction_partner"], [1, 0])
    np.testing.assert_array_equal(info["interaction_row_player"], [True, False])
    np.testing.assert_array_equal(info["interaction_inventories"], [[[3, 1], [1, 3]], [[1, 3], [3, 1]]])
    np.testing.assert_array_equal(info["settled"], [True, True])
    np.testing.assert_array_equal(state.inventory, np.ones((2, 2)))
    assert not state.ready.any() and list(np.asarray(state.agents.timeout)) == [3, 3] and info["removed"].all()


def test_frozen_interactants_are_paid_after_freeze_steps_and_cannot_move_meanwhile():
    env, params = small_env(freeze_steps=2)
    state = placed(env, params, [[3, 2], [1, 2]], [N, S], inventory=[[1, 2], [2, 1]], ready=[True, True])
    state, _, payoffs, _, info = step(env, params, state, [INTERACT, NOOP])
    assert info["interacted"].all() and not payoffs.any() and list(np.asarray(state.freeze)) == [2, 2]
    expected = info["interaction_payoff"]
    state, _, payoffs, _, info = step(env, params, state, [FORWARD, FORWARD])
    np.testing.assert_array_equal(state.agents.pos, [[3, 2], [1, 2]])  # frozen: actions ignored
    assert not payoffs.any() and not info["removed"].any()
    state, _, payoffs, _, info = step(env, params, state, [NOOP, NOOP])
    np.testing.assert_allclose(payoffs, expected)
    assert info["settled"].all() and info["removed"].all()


def test_a_frozen_target_cannot_be_interacted_with():
    env, params = small_env(freeze_steps=5)
    state = placed(env, params, [[3, 2], [1, 2]], [N, S], inventory=np.ones((2, 2)), ready=[True, True])
    state = dataclasses.replace(state, freeze=jnp.array([0, 4], jnp.int32), pending=jnp.array([False, True]))
    state, _, payoffs, _, info = step(env, params, state, [INTERACT, NOOP])
    assert not info["interacted"].any() and info["fired"][0] and not payoffs.any() and list(np.asarray(state.freeze)) == [0, 3]


def test_unready_agents_do_not_interact_unless_require_ready_is_off():
    env, params = small_env()
    state = placed(env, params, [[3, 2], [1, 2]], [N, S], inventory=[[1, 1], [1, 1]], ready=[True, False])
    _, _, payoffs, _, info = step(env, params, state, [INTERACT, NOOP])
    assert not info["interacted"].any() and not payoffs.any() and info["fired"][0]
    env, params = small_env(require_ready=False)
    state = placed(env, params, [[3, 2], [1, 2]], [N, S], inventory=[[1, 1], [1, 1]], ready=[False, False])
    _, _, payoffs, _, info = step(env, params, state, [INTERACT, NOOP])
    np.testing.assert_allclose(payoffs, [2.25, 2.25])  # (½, ½)·M·(½, ½) = (3 + 0 + 5 + 1)/4


def test_removed_agents_respawn_after_respawn_delay_on_a_spawn_point():
    env, params = small_env(respawn_delay=2)
    state = placed(env, params, [[3, 2], [1, 2]], [N, S], inventory=[[1, 2], [2, 1]], ready=[True, True])
    state, *_ = step(env, params, state, [INTERACT, NOOP])
    assert list(np.asarray(state.agents.timeout)) == [2, 2]
    state, _, _, _, info = step(env, params, state, [FORWARD, FORWARD])
    assert info["removed"].all()
    state, obs, _, _, info = step(env, params, state, [NOOP, NOOP])
    assert not info["removed"].any()
    spawn = {tuple(p) for p in env.layout(params).spawn_points}
    assert {tuple(p) for p in np.asarray(state.agents.pos)} <= spawn and len(
        {tuple(p) for p in np.asarray(state.agents.pos)}
    ) == 2


def test_resources_regrow_after_the_delay_unless_an_agent_stands_there():
    env, params = small_env(regrowth_rate=1.0, regrowth_delay=3)
    state = placed(env, params, [[1, 3], [3, 7]], [E, W])
    state, *_ = step(env, params, state, [FORWARD, NOOP])  # agent 0 takes the class-1 resource at (1, 4)
    assert not bool(state.resources[1, 4])
    state, *_ = step(env, params, state, [FORWARD, NOOP])  # and walks on
    seen = []
    for t in range(3):
        state, *_ = step(env, params, state, [NOOP, NOOP], seed=10 + t)
        seen.append(bool(state.resources[1, 4]))
    assert seen == [False, True, True]  # taken at step 1: waits 3 steps, then certain regrowth
    env, params = small_env(regrowth_rate=1.0, regrowth_delay=0)
    state = placed(env, params, [[1, 3], [3, 7]], [E, W])
    for t in range(4):
        state, *_ = step(env, params, state, [FORWARD if t == 0 else NOOP, NOOP], seed=t)
        assert not bool(state.resources[1, 4])  # agent 0 stays on the cell: no regrowth under it
    env, params = small_env(regrowth_rate=0.0, regrowth_delay=0)
    state = placed(env, params, [[1, 3], [3, 7]], [E, W])
    state, *_ = step(env, params, state, [FORWARD, NOOP])
    for t in range(5):
        state, *_ = step(env, params, state, [NOOP if t else FORWARD, NOOP], seed=t)
    assert not bool(state.resources[1, 4])


def test_beam_geometry_three_lanes_three_cells_first_hit_per_lane():
    walls = jnp.asarray(parse_matrix_layout(("#######",) + ("#     #",) * 5 + ("#######",)).walls)
    none = jnp.zeros(walls.shape, bool)
    # firer 0 at (5, 3) facing north; 1: centre lane, distance 3; 2: right lane, distance 1; 3: distance 4 (out of reach)
    pos = jnp.array([[5, 3], [2, 3], [4, 4], [1, 3]], jnp.int32)
    orient = jnp.array([N, S, S, S], jnp.int32)
    firing, active = jnp.array([True, False, False, False]), jnp.ones(4, bool)
    distance, _ = interaction_beams(pos, orient, firing, active, walls, none, 3, 3)
    np.testing.assert_array_equal(distance[0], [4, 3, 1, 4])  # 4 = no hit (length + 1)
    assert (distance[1:] == 4).all()  # only firers hit
    # a nearer agent in the same lane blocks the farther one
    pos2 = pos.at[2].set([4, 3])
    distance, _ = interaction_beams(pos2, orient, firing, active, walls, none, 3, 3)
    np.testing.assert_array_equal(distance[0], [4, 4, 1, 4])
    # a resource blocks its lane and takes the hit; a removed agent does not block
    resources = none.at[3, 3].set(True)
    distance, resource_hits = interaction_beams(pos, orient, firing, active, walls, resources, 3, 3)
    np.testing.assert_array_equal(distance[0], [4, 4, 1, 4])
    assert int(resource_hits[3, 3]) == 1
    distance, _ = interaction_beams(pos2, orient, firing, jnp.array([True, True, False, True]), walls, none, 3, 3)
    np.testing.assert_array_equal(distance[0], [4, 3, 4, 4])
    # walls stop a lane: a wall between firer and target
    walls2 = walls.at[3, 3].set(True)
    distance, _ = interaction_beams(pos, orient, firing, active, walls2, none, 3, 3)
    np.testing.assert_array_equal(distance[0], [4, 4, 1, 4])


def test_each_agent_takes_part_in_at_most_one_beam_contact_per_step():
    # firers 0 and 1 both hit agent 2; in order (0, 1) only 0 interacts, in order (1, 0) only 1
    target = jnp.array([2, 2, -1])
    frozen, ready = jnp.zeros(3, bool), jnp.ones(3, bool)
    partner, is_row = resolve_interactions(jnp.array([0, 1, 2]), target, frozen, ready, True)
    np.testing.assert_array_equal(partner, [2, -1, 0])
    np.testing.assert_array_equal(is_row, [True, False, False])
    partner, _ = resolve_interactions(jnp.array([1, 0, 2]), target, frozen, ready, True)
    np.testing.assert_array_equal(partner, [-1, 2, 1])
    # mutual fire: the first in order is the row player, the second contact is skipped
    partner, is_row = resolve_interactions(jnp.array([1, 0]), jnp.array([1, 0]), frozen[:2], ready[:2], True)
    np.testing.assert_array_equal(partner, [1, 0])
    np.testing.assert_array_equal(is_row, [False, True])
    # a contact with an unready target still uses up both agents' contact this step (Melting Pot's onHit)
    partner, _ = resolve_interactions(jnp.array([0, 1, 2]), jnp.array([2, 2, -1]), frozen, jnp.array([True, True, False]), True)
    np.testing.assert_array_equal(partner, [-1, -1, -1])


def test_beam_cooldown_and_resource_destruction():
    env, params = small_env(cooldown_steps=2, resource_health=2, regrowth_rate=0.0)
    state = placed(env, params, [[3, 4], [3, 1]], [N, E])  # facing the class-2 resource at (2, 4)
    fired = []
    for t in range(5):
        state, _, _, _, info = step(env, params, state, [INTERACT, NOOP], seed=t)
        fired.append(bool(info["fired"][0]))
        if t == 0:
            assert bool(state.resources[2, 4]) and int(state.resource_damage[2, 4]) == 1
    assert fired == [True, False, False, True, False]  # Melting Pot's cooldownTime 2: one beam every 3 steps
    assert not bool(state.resources[2, 4]) and int(info["resources_destroyed"]) == 0 and int(state.resource_damage[2, 4]) == 0


def test_repeated_preset_refills_every_resource_when_nobody_is_on_the_map():
    env = PrisonersDilemmaInTheMatrix()
    params = env.default_params(
        preset="repeated", layout=SMALL, view_ahead=2, view_behind=1, view_side=1, freeze_steps=0, regrowth_rate=0.0
    )
    assert params.n_agents == 2 and params.refill_when_all_removed and int(params.respawn_delay) == 5
    state = placed(env, params, [[3, 2], [1, 2]], [N, S], inventory=[[1, 2], [2, 1]], ready=[True, True])
    state = dataclasses.replace(state, resources=jnp.zeros_like(state.resources))
    state, *_ = step(env, params, state, [INTERACT, NOOP])
    assert bool(state.resources[1, 4]) and bool(state.resources[2, 4])


def test_observation_window_channels_and_own_features():
    env, params = small_env()
    state = placed(env, params, [[3, 4], [1, 4]], [N, S], inventory=[[3, 1], [1, 1]], ready=[True, True])
    obs = np.asarray(env.observe(state, params))
    window = obs[0, : 4 * 3 * 5].reshape(4, 3, 5)  # (wall, class 1, class 2, agent, ready agent)
    np.testing.assert_array_equal(window[1, 1], [0, 0, 1, 0, 0])  # one ahead: the class-2 resource
    np.testing.assert_array_equal(window[0, 1], [0, 1, 0, 1, 1])  # two ahead: agent 1 (ready) on the class-1 cell
    np.testing.assert_array_equal(window[2, 1], [0, 0, 0, 0, 0])  # itself: not shown
    np.testing.assert_array_equal(window[3, 1], [1, 0, 0, 0, 0])  # the wall behind
    np.testing.assert_allclose(obs[0, -6:], [0.75, 0.25, 1, 1, 0, 0])  # strategy, ready, beam ready, frozen, removed
    lo, hi = env.observation_bounds(params)
    assert obs.min() >= lo and obs.max() <= hi


def test_jit_vmap_same_key_same_trajectory_and_interactions_happen():
    env, params = motivegym.make_jax(
        "StagHuntInTheMatrix-v0",
        preset="repeated",
        layout=SMALL,
        max_steps=30,
        freeze_steps=0,
        regrowth_delay=0,
        view_ahead=2,
        view_side=1,
    )

    def rollout(key):
        states, _ = jax.vmap(env.reset, in_axes=(0, None))(jax.random.split(key, 8), params)

        def body(states, step_key):
            action_key, keys = jax.random.split(step_key)
            actions = jax.random.randint(action_key, (8, 2), 0, 8)
            states, obs, payoffs, done, info = jax.vmap(env.step, in_axes=(0, 0, 0, None))(
                jax.random.split(keys, 8), states, actions, params
            )
            return states, (obs, payoffs, done, info["collected"].sum((-1, -2)))

        return jax.lax.scan(body, states, jax.random.split(key, 30))

    run = jax.jit(rollout)
    _, (obs, payoffs, done, collected) = run(jax.random.PRNGKey(7))
    _, (obs2, payoffs2, _, _) = run(jax.random.PRNGKey(7))
    _, (obs3, _, _, _) = run(jax.random.PRNGKey(8))
    np.testing.assert_array_equal(obs, obs2)
    np.testing.assert_array_equal(payoffs, payoffs2)
    assert not np.array_equal(obs, obs3)
    assert done[-1].all() and not done[:-1].any() and collected.sum() > 0 and (payoffs >= 0).all()


def test_params_are_validated():
    env = PrisonersDilemmaInTheMatrix()
    with pytest.raises(ValueError, match="did you mean 'freeze_steps'"):
        env.default_params(freeze_step=3)
    with pytest.raises(ValueError, match="spawn points"):
        env.default_params(n_agents=65)
    with pytest.raises(ValueError, match="shape"):
        env.default_params(row_matrix=[[1, 2, 3], [4, 5, 6], [7, 8, 9]])
    with pytest.raises(ValueError, match="odd width"):
        env.default_params(beam_width=2)
    with pytest.raises(ValueError, match="unknown characters"):
        env.default_params(layout=("#####", "#PxP#", "#####"), n_agents=2)
    with pytest.raises(ValueError, match="preset"):
        env.default_params(preset="arena")
    params = env.default_params(layout="\n".join(SMALL), n_agents=4)
    assert params.layout == SMALL and env.layout(params).shape == (5, 9)


def test_renders():
    env, params = small_env()
    state = placed(env, params, [[3, 2], [1, 6]], [N, S], inventory=[[2, 1], [1, 1]], ready=[True, False])
    lines = env.render_text(state, params).splitlines()
    assert lines[2] == "#   A 1 #" and lines[3] == "#   B   #" and lines[4] == "# 0     #"
    assert lines[-1] == "agents: 0^[2/1]* 1v[1/1]"
    image = env.render_rgb(state, params)
    assert image.shape == (40, 72, 3) and image.dtype == np.uint8


@pytest.mark.slow  # two 300-step compiled rollouts: about 25 s of CPU
@pytest.mark.parametrize("role, wanted", [("cooperator", 0), ("defector", 1)])
def test_bots_collect_their_resource_then_interact(role, wanted):
    from motivegym.baselines.bots import make_bot

    env_id = "PrisonersDilemmaInTheMatrix-v0"
    env, params = motivegym.make_jax(env_id, preset="repeated", max_steps=300, freeze_steps=0)
    bot = make_bot(env_id, role, env, params)
    policy_state = bot.init(env, params)

    @jax.jit
    def run(key):
        state, obs = env.reset(key, params)

        def body(carry, step_key):
            state, obs = carry
            action_key, env_key = jax.random.split(step_key)
            actions, _ = bot(action_key, obs, policy_state)
            state, obs, payoffs, _, info = env.step(env_key, state, actions, params)
            return (state, obs), (info["collected"], info["interaction_row_player"], info["interaction_inventories"])

        return jax.lax.scan(body, (state, obs), jax.random.split(key, 300))[1]

    collected, fired_and_met, inventories = run(jax.random.PRNGKey(0))
    per_class = np.asarray(collected).sum(axis=(0, 1))
    # the other class only where it fences the wanted one in (matrix_bots.UNWANTED_COST)
    assert per_class[wanted] >= 4 * max(per_class[1 - wanted], 1) and per_class[wanted] > 10
    assert np.asarray(fired_and_met).sum() >= 1  # a bot met a ready partner with its beam
    own = np.asarray(inventories)[np.asarray(fired_and_met)][:, 0]  # the firer's inventory: its share reached 3/4
    assert (own[:, wanted] / own.sum(axis=1) >= 0.75 - 1e-6).all()
