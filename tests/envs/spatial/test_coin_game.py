import jax
import jax.numpy as jnp
import numpy as np
import pytest

import motivegym
from motivegym.envs.spatial.coin_game import CoinGame, CoinGameState, coin_payoffs

NOOP, UP, DOWN, LEFT, RIGHT = range(5)
RED, BLUE = 0, 1


def state_of(red, blue, coin, colour, t=0):
    return CoinGameState(
        pos=jnp.array([red, blue], jnp.int32), coin_pos=jnp.array(coin, jnp.int32), coin_colour=jnp.int32(colour), t=jnp.int32(t)
    )


@pytest.fixture
def env_params():
    return motivegym.make_jax("CoinGame-v0")


@pytest.mark.parametrize(
    "actions, colour, expected, own, other",
    [
        ((RIGHT, NOOP), RED, [1.0, 0.0], [True, False], [False, False]),  # red takes its own coin
        ((RIGHT, NOOP), BLUE, [1.0, -2.0], [False, False], [True, False]),  # red takes blue's coin
        ((NOOP, LEFT), RED, [-2.0, 1.0], [False, False], [False, True]),  # blue takes red's coin
        ((RIGHT, LEFT), RED, [-1.0, 1.0], [True, False], [False, True]),  # both take red's coin
        ((UP, NOOP), RED, [0.0, 0.0], [False, False], [False, False]),
    ],
)
def test_coin_payoffs(env_params, actions, colour, expected, own, other):
    env, params = env_params
    state = state_of([1, 0], [1, 2], [1, 1], colour)
    new, _, payoffs, _, info = env.step(jax.random.PRNGKey(0), state, jnp.array(actions), params)
    np.testing.assert_array_equal(payoffs, expected)
    np.testing.assert_array_equal(info["own_coin_picked"], own)
    np.testing.assert_array_equal(info["other_coin_picked"], other)
    if any(own) or any(other):
        assert not any((np.asarray(new.coin_pos) == np.asarray(p)).all() for p in new.pos)  # respawned on a free cell
    else:
        np.testing.assert_array_equal(new.coin_pos, [1, 1])


def test_payoff_formula_with_custom_values():
    np.testing.assert_array_equal(coin_payoffs(jnp.array([False, True]), jnp.int32(0), 3.0, 5.0), [-5.0, 3.0])


def test_moves_wrap_around_the_torus_and_players_may_share_a_cell(env_params):
    env, params = env_params
    state = state_of([0, 0], [2, 2], [1, 1], RED)
    new, *_ = env.step(jax.random.PRNGKey(0), state, jnp.array([UP, RIGHT]), params)
    np.testing.assert_array_equal(new.pos, [[2, 0], [2, 0]])
    new, *_ = env.step(jax.random.PRNGKey(0), state, jnp.array([LEFT, 99]), params)  # out of range: noop
    np.testing.assert_array_equal(new.pos, [[0, 2], [2, 2]])


def test_observations_are_relative_to_the_observer(env_params):
    env, params = env_params
    state = state_of([0, 0], [2, 1], [1, 2], BLUE)
    obs = np.asarray(env.observe(state, params)).reshape(2, 4, 3, 3)
    assert obs[0, 0, 0, 0] == obs[0, 1, 2, 1] == obs[0, 3, 1, 2] == 1 and obs[0].sum() == 3  # red: self, other, other's coin
    assert obs[1, 0, 2, 1] == obs[1, 1, 0, 0] == obs[1, 2, 1, 2] == 1 and obs[1].sum() == 3  # blue: the coin is its own
    ego = np.asarray(env.observe(state, env.default_params(observation="egocentric"))).reshape(2, 4, 3, 3)
    assert ego[0, 0, 1, 1] == ego[1, 0, 1, 1] == 1  # each observer at the centre
    assert ego[0, 1, 0, 2] == 1  # blue is one row down and one column right of red: (1+1, 1+1) mod 3
    assert env.global_state(state, params).shape == (37,)


def test_reset_places_players_and_coin_on_distinct_cells(env_params):
    env, params = env_params
    states, obs = jax.vmap(env.reset, in_axes=(0, None))(jax.random.split(jax.random.PRNGKey(0), 256), params)
    cells = np.concatenate([np.asarray(states.pos), np.asarray(states.coin_pos)[:, None]], axis=1)
    flat = cells[..., 0] * 3 + cells[..., 1]
    assert all(len(set(row)) == 3 for row in flat)
    assert set(np.asarray(states.coin_colour).tolist()) == {0, 1}
    assert obs.shape == (256, 2, 36)


def test_truncates_after_16_steps_and_is_deterministic(env_params):
    env, params = env_params

    def rollout(key):
        states, _ = jax.vmap(env.reset, in_axes=(0, None))(jax.random.split(key, 64), params)

        def body(states, step_key):
            action_key, keys = jax.random.split(step_key)
            actions = jax.random.randint(action_key, (64, 2), 0, 5)
            states, obs, payoffs, done, _ = jax.vmap(env.step, in_axes=(0, 0, 0, None))(jax.random.split(keys, 64), states, actions, params)
            return states, (obs, payoffs, done)

        return jax.lax.scan(body, states, jax.random.split(key, 16))

    run = jax.jit(rollout)
    _, (obs, payoffs, done) = run(jax.random.PRNGKey(1))
    _, (obs2, payoffs2, _) = run(jax.random.PRNGKey(1))
    np.testing.assert_array_equal(obs, obs2)
    np.testing.assert_array_equal(payoffs, payoffs2)
    assert done[-1].all() and not done[:-1].any()
    assert set(np.unique(payoffs).tolist()) <= {-2.0, -1.0, 0.0, 1.0}


def test_params_and_renders():
    env = CoinGame()
    with pytest.raises(ValueError, match="observation"):
        env.default_params(observation="pixels")
    with pytest.raises(ValueError, match="grid_size"):
        env.default_params(grid_size=1)
    params = env.default_params(grid_size=4)
    state = state_of([0, 0], [0, 0], [3, 3], BLUE)
    assert env.render_text(state, params).splitlines()[1:] == ["X...", "....", "....", "...b"]
    assert env.render_rgb(state, params).shape == (64, 64, 3)
    assert env.agent_names(params) == ("red", "blue")
