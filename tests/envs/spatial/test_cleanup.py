import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import motivegym
from motivegym.envs.spatial.cleanup import Cleanup, apple_spawn_probability, pollution_fraction
from motivegym.envs.spatial.grid import FIRE_CLEAN, FORWARD, NOOP, AgentState

N, E = 0, 1
SMALL = (
    "#######",
    "#~~~~~#",
    "#P   P#",
    "#aaaaa#",
    "#######",
)
RIVER = [(1, c) for c in range(1, 6)]
ORCHARD = [(3, c) for c in range(1, 6)]


def small_env(**overrides):
    env = Cleanup()
    values = {"layout": SMALL, "n_agents": 2, "view_ahead": 2, "view_behind": 1, "view_side": 1, "waste_spawn_prob": 0.0, "apple_respawn_prob": 0.0}
    return env, env.default_params(**{**values, **overrides})


def placed(env, params, pos, orient, waste=(), apples=()):
    state, _ = env.reset(jax.random.PRNGKey(0), params)
    grids = {}
    for name, cells in (("waste", waste), ("apples", apples)):
        grid = np.zeros((5, 7), bool)
        for cell in cells:
            grid[cell] = True
        grids[name] = jnp.asarray(grid)
    agents = AgentState(pos=jnp.asarray(pos, jnp.int32), orient=jnp.asarray(orient, jnp.int32), timeout=jnp.zeros(len(pos), jnp.int32))
    return dataclasses.replace(state, agents=agents, **grids)


def test_registered_with_private_reward_and_defaults():
    spec = motivegym.get_spec("Cleanup-v0")
    assert spec.family == "dilemmas" and spec.default_reward == "private"
    env, params = motivegym.make_jax("Cleanup-v0")
    assert env.num_actions(params) == 9 and env.n_agents(params) == 5
    state, obs = env.reset(jax.random.PRNGKey(0), params)
    assert obs.shape == (5, 11 * 11 * 5 + 1)
    assert float(env.describe(state, params)["pollution"]) == pytest.approx(6 / 54)
    assert float(params.clean_cost) == 0.0


def test_pollution_accumulates_on_river_cells_only():
    env, params = small_env(waste_spawn_prob=1.0)
    state = placed(env, params, [[2, 1], [2, 5]], [N, N])
    state, _, _, _, info = env.step(jax.random.PRNGKey(1), state, jnp.array([NOOP, NOOP]), params)
    np.testing.assert_array_equal(np.argwhere(np.asarray(state.waste)), RIVER)
    assert float(info["pollution"]) == 1.0
    env, params = small_env(waste_spawn_prob=0.0)
    state = placed(env, params, [[2, 1], [2, 5]], [N, N], waste=[(1, 2)])
    state, *_ = env.step(jax.random.PRNGKey(1), state, jnp.array([NOOP, NOOP]), params)
    np.testing.assert_array_equal(np.argwhere(np.asarray(state.waste)), [(1, 2)])


def test_waste_spawn_rate():
    env, params = small_env(waste_spawn_prob=0.3)
    state = placed(env, params, [[2, 1], [2, 5]], [N, N])
    step = jax.jit(jax.vmap(lambda k: env.step(k, state, jnp.array([NOOP, NOOP]), params)[0].waste))
    waste = step(jax.random.split(jax.random.PRNGKey(0), 4000))
    assert abs(float(waste[:, 1, 1:6].mean()) - 0.3) < 0.01


def test_clean_beam_removes_waste_it_covers():
    env, params = small_env(clean_beam_length=1, clean_beam_width=3)
    state = placed(env, params, [[2, 2], [2, 5]], [N, N], waste=[(1, 1), (1, 2), (1, 4), (1, 5)])
    state, _, payoffs, _, info = env.step(jax.random.PRNGKey(1), state, jnp.array([FIRE_CLEAN, NOOP]), params)
    np.testing.assert_array_equal(np.argwhere(np.asarray(state.waste)), [(1, 4), (1, 5)])  # lanes cover (1,1)..(1,3)
    np.testing.assert_array_equal(info["waste_cleaned"], [2, 0])
    np.testing.assert_array_equal(info["fired_clean"], [True, False])
    np.testing.assert_array_equal(payoffs, [0.0, 0.0])  # cleaning is free by default
    env, params = small_env(clean_cost=0.5)
    state = placed(env, params, [[2, 2], [2, 5]], [N, N])
    _, _, payoffs, _, _ = env.step(jax.random.PRNGKey(1), state, jnp.array([FIRE_CLEAN, FIRE_CLEAN]), params)
    np.testing.assert_array_equal(payoffs, [-0.5, -0.5])


def test_apple_spawn_probability_falls_linearly_to_zero_at_depletion():
    p = apple_spawn_probability(jnp.array([0.0, 0.1, 0.2, 0.4, 0.7]), 0.05, 0.4, 0.0)
    np.testing.assert_allclose(p, [0.05, 0.0375, 0.025, 0.0, 0.0], atol=1e-7)
    p = apple_spawn_probability(jnp.array([0.05, 0.1, 0.3]), 1.0, 0.3, 0.1)
    np.testing.assert_allclose(p, [1.0, 1.0, 0.0], atol=1e-7)


def test_apples_spawn_when_clean_and_stop_above_the_depletion_threshold():
    env, params = small_env(apple_respawn_prob=1.0)
    clean = placed(env, params, [[2, 1], [3, 5]], [N, N])
    state, _, _, _, info = env.step(jax.random.PRNGKey(1), clean, jnp.array([NOOP, NOOP]), params)
    np.testing.assert_array_equal(np.argwhere(np.asarray(state.apples)), ORCHARD[:4])  # not under agent 1
    assert float(info["apple_spawn_prob"]) == 1.0
    polluted = placed(env, params, [[2, 1], [2, 5]], [N, N], waste=RIVER[:2])  # d = 0.4 = threshold_depletion
    keys = jax.random.split(jax.random.PRNGKey(2), 200)
    apples = jax.jit(jax.vmap(lambda k: env.step(k, polluted, jnp.array([NOOP, NOOP]), params)[0].apples))(keys)
    assert not apples.any()


def test_eating_pays_one():
    env, params = small_env()
    state = placed(env, params, [[2, 3], [2, 5]], [2, N], apples=[(3, 3)])
    state, _, payoffs, _, info = env.step(jax.random.PRNGKey(1), state, jnp.array([FORWARD, FORWARD]), params)
    np.testing.assert_array_equal(payoffs, [1.0, 0.0])
    assert not state.apples.any()


def test_pollution_fraction():
    river = jnp.zeros((3, 3), bool).at[0].set(True)
    assert float(pollution_fraction(river.at[0, 0].set(False), river)) == pytest.approx(2 / 3)


def test_jit_vmap_over_64_envs_and_same_key_same_trajectory():
    env, params = motivegym.make_jax("Cleanup-v0", max_steps=15)

    def rollout(key):
        states, _ = jax.vmap(env.reset, in_axes=(0, None))(jax.random.split(key, 64), params)

        def body(states, step_key):
            action_key, keys = jax.random.split(step_key)
            actions = jax.random.randint(action_key, (64, 5), 0, 9)
            states, obs, payoffs, done, info = jax.vmap(env.step, in_axes=(0, 0, 0, None))(jax.random.split(keys, 64), states, actions, params)
            return states, (obs, payoffs, done, info["waste_cleaned"])

        return jax.lax.scan(body, states, jax.random.split(key, 15))

    run = jax.jit(rollout)
    _, (obs, payoffs, done, cleaned) = run(jax.random.PRNGKey(3))
    _, (obs2, payoffs2, _, _) = run(jax.random.PRNGKey(3))
    assert obs.shape == (15, 64, 5, 606)
    np.testing.assert_array_equal(obs, obs2)
    np.testing.assert_array_equal(payoffs, payoffs2)
    assert done[-1].all() and not done[:-1].any()


def test_params_are_validated():
    env = Cleanup()
    with pytest.raises(ValueError, match="threshold"):
        env.default_params(threshold_depletion=0.1, threshold_restoration=0.2)
    with pytest.raises(ValueError, match="waste_spawn_prob"):
        env.default_params(waste_spawn_prob=1.5)
    with pytest.raises(ValueError, match="river"):
        env.default_params(layout=("#####", "#P P#", "#####"), n_agents=2)


def test_render_text_shows_waste_and_river():
    env, params = small_env()
    state = placed(env, params, [[2, 1], [2, 5]], [N, N], waste=[(1, 3)], apples=[(3, 2)])
    lines = env.render_text(state, params).splitlines()
    assert lines[2] == "#~~*~~#" and lines[3] == "#0   1#" and lines[4] == "# A   #"
    assert env.render_rgb(state, params).shape == (40, 56, 3)
