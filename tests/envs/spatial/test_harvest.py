import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import motivegym
from motivegym.envs.spatial.grid import FIRE_TAG, FORWARD, NOOP, AgentState
from motivegym.envs.spatial.harvest import Harvest, neighbour_count, regrow_apples, regrowth_probability

E = 1
SMALL = (
    "########",
    "#P  aaP#",
    "#  aaa #",
    "#P    P#",
    "########",
)


def small_env(**overrides):
    env = Harvest()
    values = {"layout": SMALL, "n_agents": 2, "view_ahead": 2, "view_behind": 1, "view_side": 1, "tag_timeout": 3}
    return env, env.default_params(**{**values, **overrides})


def placed(env, params, pos, orient, apples=()):
    state, _ = env.reset(jax.random.PRNGKey(0), params)
    grid = np.zeros((5, 8), bool)
    for cell in apples:
        grid[cell] = True
    agents = AgentState(pos=jnp.asarray(pos, jnp.int32), orient=jnp.asarray(orient, jnp.int32), timeout=jnp.zeros(len(pos), jnp.int32))
    return dataclasses.replace(state, agents=agents, apples=jnp.asarray(grid))


def test_registered_with_private_reward_and_documented():
    spec = motivegym.get_spec("Harvest-v0")
    assert spec.family == "dilemmas" and spec.default_reward == "private"
    env, params = motivegym.make_jax("Harvest-v0")
    assert env.n_agents(params) == 5 and int(params.max_steps) == 1000 and env.num_actions(params) == 8
    assert env.observation_size(params) == 11 * 11 * 3 + 1
    state, obs = env.reset(jax.random.PRNGKey(0), params)
    assert obs.shape == (5, 364) and obs.dtype == jnp.float32
    assert env.global_state(state, params).shape == (18 * 30 * 2 + 5 * 7 + 1,)
    assert int(state.apples.sum()) == 108


def test_eating_an_apple_pays_one_and_removes_it():
    env, params = small_env(regrowth_probs=[0.0, 0.0, 0.0, 0.0])
    state = placed(env, params, [[1, 3], [3, 1]], [E, E], apples=[(1, 4), (2, 4)])
    state, _, payoffs, _, info = env.step(jax.random.PRNGKey(1), state, jnp.array([FORWARD, NOOP]), params)
    np.testing.assert_array_equal(payoffs, [1.0, 0.0])
    np.testing.assert_array_equal(info["apples_eaten"], [1, 0])
    assert not state.apples[1, 4] and state.apples[2, 4] and int(info["apple_count"]) == 1


def test_neighbour_count_uses_the_radius_two_disc():
    apples = jnp.zeros((5, 5), bool).at[2, 2].set(True)
    counts = np.asarray(neighbour_count(apples, 2))
    assert counts[0, 2] == counts[2, 4] == counts[1, 1] == counts[3, 2] == 1
    assert counts[0, 1] == counts[0, 0] == 0  # distance sqrt(5), sqrt(8) > 2
    assert counts[2, 2] == 0  # the cell itself is not its own neighbour


def test_regrowth_probability_bins():
    probs = jnp.array([0.0, 0.01, 0.05, 0.1])
    counts = jnp.arange(8)
    np.testing.assert_allclose(regrowth_probability(counts, probs), [0, 0.01, 0.01, 0.05, 0.05, 0.1, 0.1, 0.1], atol=1e-7)


def test_no_regrowth_without_neighbours_even_at_certain_rates():
    spawn = np.argwhere(np.ones((6, 6), bool)).astype(np.int32)
    blocked = jnp.zeros((6, 6), bool)
    keys = jax.random.split(jax.random.PRNGKey(0), 500)
    grown = jax.vmap(lambda k: regrow_apples(k, jnp.zeros((6, 6), bool), spawn, blocked, jnp.array([0.0, 1, 1, 1]), 2))(keys)
    assert not grown.any()
    one = jnp.zeros((6, 6), bool).at[0, 0].set(True)
    grown = regrow_apples(keys[0], one, spawn, blocked.at[0, 1].set(True), jnp.array([0.0, 1, 1, 1]), 2)
    expected = np.asarray(neighbour_count(one, 2) > 0) | np.asarray(one)
    expected[0, 1] = False  # an agent stands there
    np.testing.assert_array_equal(grown, expected)


@pytest.mark.parametrize("neighbours, rate", [(1, 0.01), (3, 0.05), (6, 0.1)])
def test_regrowth_rate_matches_the_default_probabilities(neighbours, rate):
    env, params = motivegym.make_jax("Harvest-v0")
    ring = [(1, 2), (3, 2), (2, 1), (2, 3), (0, 2), (2, 0)][:neighbours]
    apples = jnp.zeros((5, 5), bool).at[tuple(np.array(ring).T)].set(True)
    spawn = np.array([[2, 2]], np.int32)
    keys = jax.random.split(jax.random.PRNGKey(neighbours), 40_000)
    grown = jax.jit(jax.vmap(lambda k: regrow_apples(k, apples, spawn, jnp.zeros((5, 5), bool), params.regrowth_probs, 2)[2, 2]))(keys)
    sd = np.sqrt(rate * (1 - rate) / len(keys))
    assert abs(float(grown.mean()) - rate) < 4 * sd


def test_tag_beam_removes_the_hit_agent_for_tag_timeout_steps():
    env, params = small_env(tag_cost=0.25, tag_penalty=0.5, regrowth_probs=[0.0, 0.0, 0.0, 0.0])
    state = placed(env, params, [[3, 2], [3, 4]], [E, E])
    state, obs, payoffs, _, info = env.step(jax.random.PRNGKey(1), state, jnp.array([FIRE_TAG, NOOP]), params)
    np.testing.assert_array_equal(info["tagged"], [False, True])
    np.testing.assert_array_equal(info["tag_hits"], [[False, True], [False, False]])
    np.testing.assert_allclose(payoffs, [-0.25, -0.5])
    np.testing.assert_array_equal(info["removed"], [False, True])
    np.testing.assert_array_equal(obs[1], np.eye(obs.shape[1])[-1])  # a removed agent sees only its flag
    removed_states = 1
    while bool(state.agents.timeout[1] > 0):
        state, obs, payoffs, _, info = env.step(jax.random.PRNGKey(2), state, jnp.array([FIRE_TAG, FIRE_TAG]), params)
        np.testing.assert_array_equal(info["fired_tag"], [True, False])  # the removed agent cannot act
        removed_states += int(info["removed"][1])
    assert removed_states == int(params.tag_timeout)
    spawn_points = env.layout(params).spawn_points
    assert any((np.asarray(state.agents.pos[1]) == p).all() for p in spawn_points)
    assert obs[1, -1] == 0.0


def test_observation_shows_walls_apples_and_other_agents_but_not_oneself():
    env, params = small_env()
    state = placed(env, params, [[2, 2], [1, 2]], [E, E], apples=[(2, 3)])
    obs = np.asarray(env.observe(state, params))[0, :-1].reshape(4, 3, 3)  # rows: distance 2, 1, 0, -1
    np.testing.assert_array_equal(obs[1, 1], [0, 1, 0])  # the apple one cell ahead
    np.testing.assert_array_equal(obs[2, 0], [0, 0, 1])  # agent 1 on the left (north when facing east)
    np.testing.assert_array_equal(obs[2, 1], [0, 0, 0])  # own cell
    other = np.asarray(env.observe(state, params))[1, :-1].reshape(4, 3, 3)
    np.testing.assert_array_equal(other[2, 0], [1, 0, 0])  # the wall north of agent 1 is on its left
    np.testing.assert_array_equal(other[2, 2], [0, 0, 1])  # agent 0 south of it is on its right


def test_jit_vmap_over_64_envs_and_same_key_same_trajectory():
    env, params = motivegym.make_jax("Harvest-v0", max_steps=20)

    def rollout(key):
        keys = jax.random.split(key, 64)
        states, _ = jax.vmap(env.reset, in_axes=(0, None))(keys, params)

        def body(carry, step_key):
            states = carry
            action_key, step_keys = jax.random.split(step_key)
            actions = jax.random.randint(action_key, (64, 5), 0, 8)
            states, obs, payoffs, done, info = jax.vmap(env.step, in_axes=(0, 0, 0, None))(
                jax.random.split(step_keys, 64), states, actions, params
            )
            return states, (obs, payoffs, done, info["tagged"])

        return jax.lax.scan(body, states, jax.random.split(key, 20))

    run = jax.jit(rollout)
    final, (obs, payoffs, done, tagged) = run(jax.random.PRNGKey(7))
    again, (obs2, payoffs2, _, _) = run(jax.random.PRNGKey(7))
    other, (obs3, _, _, _) = run(jax.random.PRNGKey(8))
    assert obs.shape == (20, 64, 5, 364) and payoffs.shape == (20, 64, 5)
    np.testing.assert_array_equal(obs, obs2)
    np.testing.assert_array_equal(payoffs, payoffs2)
    assert not np.array_equal(obs, obs3)
    assert done[-1].all() and not done[:-1].any()  # truncation at max_steps
    assert (payoffs >= 0).all() and payoffs.sum() > 0 and tagged.any()
    jax.tree.map(np.testing.assert_array_equal, final, again)


def test_params_are_validated():
    env = Harvest()
    with pytest.raises(ValueError, match="did you mean 'tag_timeout'"):
        env.default_params(tag_timout=3)
    with pytest.raises(ValueError, match="spawn points"):
        env.default_params(n_agents=17)
    with pytest.raises(ValueError, match="shape"):
        env.default_params(regrowth_probs=[0.1, 0.2])
    with pytest.raises(ValueError, match="regrowth_probs"):
        env.default_params(regrowth_probs=[0.0, 0.5, 1.0, 1.5])
    with pytest.raises(ValueError, match="odd width"):
        env.default_params(tag_beam_width=2)
    params = env.default_params(layout="\n".join(SMALL), n_agents=4)
    assert params.layout == SMALL and env.layout(params).shape == (5, 8)


def test_renders():
    env, params = small_env()
    state = placed(env, params, [[2, 2], [1, 2]], [E, E], apples=[(2, 3)])
    lines = env.render_text(state, params).splitlines()
    assert lines[3] == "# 0A   #" and lines[2] == "# 1    #"
    image = env.render_rgb(state, params)
    assert image.shape == (40, 64, 3) and image.dtype == np.uint8
