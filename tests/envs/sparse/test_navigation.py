import jax
import jax.numpy as jnp
import numpy as np

import motivegym
from motivegym.envs.sparse.navigation import NavigationState

ENV, PARAMS = motivegym.make_jax("CooperativeNavigation-v0")
STEP = jax.jit(ENV.step)
KEY = jax.random.PRNGKey(0)
NOOP, UP, DOWN, LEFT, RIGHT = range(5)
LANDMARKS = [(0, 0), (3, 3), (6, 6)]


def world(positions):
    return NavigationState(positions=jnp.array(positions, jnp.int32), landmarks=jnp.array(LANDMARKS, jnp.int32), t=jnp.int32(0))


def act(state, actions):
    return STEP(KEY, state, jnp.array(actions, jnp.int32), PARAMS)


def test_payoff_only_when_every_landmark_is_covered_at_once():
    state, _, payoffs, done, info = act(world([(0, 1), (3, 3), (6, 5)]), [LEFT, NOOP, NOOP])
    np.testing.assert_allclose(payoffs, 0.0)
    assert not bool(done) and int(info["n_covered"]) == 2
    state, _, payoffs, done, info = act(state, [NOOP, NOOP, RIGHT])
    np.testing.assert_allclose(payoffs, [1.0, 1.0, 1.0])
    assert bool(done) and bool(info["terminated"])


def test_two_agents_on_one_landmark_do_not_cover_another():
    _, _, payoffs, done, info = act(world([(0, 0), (0, 1), (6, 6)]), [NOOP, LEFT, NOOP])
    assert float(payoffs.sum()) == 0.0 and not bool(done) and int(info["n_covered"]) == 2


def test_moves_are_clipped_to_the_grid_and_bad_actions_are_noop():
    state, *_ = act(world([(0, 0), (6, 6), (2, 2)]), [UP, RIGHT, 17])
    np.testing.assert_array_equal(state.positions, [[0, 0], [6, 6], [2, 2]])


def test_reset_draws_distinct_cells_and_observation_sizes():
    for seed in range(5):
        state, obs = ENV.reset(jax.random.PRNGKey(seed), PARAMS)
        cells = np.concatenate([np.asarray(state.positions), np.asarray(state.landmarks)])
        assert len({tuple(c) for c in cells}) == 6
    assert obs.shape == (3, 15) and ENV.global_state(state, PARAMS).shape == (16,)
    assert ENV.render_rgb(state, PARAMS).shape == (112, 112, 3) and "landmarks covered" in ENV.render_text(state, PARAMS)
