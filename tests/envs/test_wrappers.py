"""DiscretizedActions: exact action levels, delegation, jit/vmap, bad input."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import motivegym
from motivegym.core.env import FunctionalEnv
from motivegym.envs.wrappers import DiscretizedActions, discretized


@pytest.fixture(scope="module")
def holdup():
    """PartnerHoldUp has different bounds per agent: [0, 120] and [0, 80]."""
    return discretized("PartnerHoldUp-v0", bins=5, max_steps=6)


def test_first_and_last_bins_are_the_exact_bounds_and_levels_are_even(holdup):
    env, params = holdup
    levels = np.asarray(env.action_levels(params))
    np.testing.assert_array_equal(levels[:, 0], [0.0, 0.0])
    np.testing.assert_array_equal(levels[:, -1], [120.0, 80.0])
    np.testing.assert_allclose(levels, [[0, 30, 60, 90, 120], [0, 20, 40, 60, 80]], rtol=1e-6)
    np.testing.assert_allclose(env.continuous_actions(jnp.array([1, 3]), params), [30.0, 60.0], rtol=1e-6)


def test_out_of_range_actions_are_clipped_to_the_extreme_bins(holdup):
    env, params = holdup
    np.testing.assert_array_equal(env.continuous_actions(jnp.array([-3, 99]), params), [0.0, 80.0])


class FixedBounds(FunctionalEnv):
    """Only the action bounds: a continuous env with nonzero, negative and fractional bounds."""

    def action_bounds(self, params):
        return jnp.array([0.1, -2.0]), jnp.array([0.7, 5.3])


def test_nonzero_lower_bounds_are_hit_exactly():
    levels = np.asarray(DiscretizedActions(FixedBounds(), bins=3).action_levels(None))
    np.testing.assert_array_equal(levels[:, 0], np.float32([0.1, -2.0]))
    np.testing.assert_array_equal(levels[:, -1], np.float32([0.7, 5.3]))
    np.testing.assert_allclose(levels[:, 1], [0.4, 1.65], rtol=1e-6)


def test_step_equals_the_wrapped_env_stepped_with_the_mapped_actions(holdup):
    env, params = holdup
    key = jax.random.PRNGKey(3)
    state, _ = env.reset(key, params)
    actions = jnp.array([4, 1], jnp.int32)
    wrapped_step = env.step(key, state, actions, params)
    inner_step = env.env.step(key, state, jnp.array([120.0, 20.0]), params)
    jax.tree.map(np.testing.assert_array_equal, wrapped_step, inner_step)
    np.testing.assert_allclose(wrapped_step[0].actions, [120.0, 20.0])


def test_wrapped_env_runs_under_jit_and_vmap(holdup):
    env, params = holdup
    keys = jax.random.split(jax.random.PRNGKey(0), 4)
    states, obs = jax.jit(jax.vmap(env.reset, in_axes=(0, None)))(keys, params)
    actions = jnp.array([[0, 0], [1, 2], [4, 4], [2, 3]], jnp.int32)
    step = jax.jit(jax.vmap(env.step, in_axes=(0, 0, 0, None)))
    states, next_obs, payoffs, done, info = step(keys, states, actions, params)
    assert next_obs.shape == (4, 2, env.observation_size(params)) and payoffs.shape == (4, 2)
    np.testing.assert_allclose(info["actions"], np.asarray(env.action_levels(params))[[0, 1], actions], rtol=1e-6)
    assert info["terminated"].dtype == bool and info["truncated"].shape == (4,)


def test_everything_but_the_action_interface_is_delegated(holdup):
    env, params = holdup
    inner = env.env
    assert env.action_kind == "discrete" and env.num_actions(params) == 5
    assert env.n_agents(params) == inner.n_agents(params) == 2
    assert env.agent_names(params) == inner.agent_names(params)
    assert env.parameter_names() == inner.parameter_names()
    assert int(env.default_params(max_steps=7).max_steps) == 7
    with pytest.raises(ValueError, match="unknown keyword"):
        env.default_params(not_a_parameter=1)
    state, obs = env.reset(jax.random.PRNGKey(0), params)
    np.testing.assert_array_equal(obs, inner.observe(state, params))
    np.testing.assert_array_equal(env.observe(state, params), inner.observe(state, params))
    np.testing.assert_array_equal(env.global_state(state, params), inner.global_state(state, params))
    assert env.observation_size(params) == inner.observation_size(params)
    assert env.global_state_size(params) == inner.global_state_size(params)
    assert env.render_text(state, params) == inner.render_text(state, params)
    assert env.static_info(params) == inner.static_info(params)
    assert set(env.describe(state, params)) == set(inner.describe(state, params))


def test_registry_helper_applies_overrides_and_bins():
    env, params = discretized("TrustDilemma-v0", bins=7, max_steps=9)
    assert isinstance(env, DiscretizedActions) and env.num_actions(params) == 7 and int(params.max_steps) == 9
    assert "TrustDilemma" in env.name


@pytest.mark.parametrize("bins", [1, 0, 2.5, True])
def test_bad_bins_raise(bins):
    base, _ = motivegym.make_jax("TrustDilemma-v0")
    with pytest.raises(ValueError, match="bins must be an integer >= 2"):
        DiscretizedActions(base, bins)


def test_wrapping_a_discrete_env_raises():
    env, _ = discretized("TrustDilemma-v0", bins=3)
    with pytest.raises(ValueError, match="needs a continuous-action env"):
        DiscretizedActions(env, 3)
