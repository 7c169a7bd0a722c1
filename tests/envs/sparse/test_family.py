import jax
import numpy as np
import pytest

import motivegym

SPARSE_IDS = ["CrafterTeam-v0", "KeyDoorGift-v0", "CooperativeNavigation-v0"]


def test_family_is_registered_with_private_default_reward():
    assert motivegym.list_envs("sparse") == SPARSE_IDS
    for env_id in SPARSE_IDS:
        spec = motivegym.get_spec(env_id)
        assert spec.default_reward == "private" and spec.mechanism


@pytest.mark.parametrize("env_id", ["CrafterTeam-v0", "KeyDoorGift-v0", "CooperativeNavigation-v0"])
def test_jit_vmap_over_64_envs_matches_single_env(env_id):
    env, params = motivegym.make_jax(env_id)
    n = env.n_agents(params)
    keys = jax.random.split(jax.random.PRNGKey(3), 64)
    actions = jax.random.randint(jax.random.PRNGKey(4), (64, n), 0, env.num_actions(params))
    reset = jax.jit(jax.vmap(env.reset, in_axes=(0, None)))
    step = jax.jit(jax.vmap(env.step, in_axes=(0, 0, 0, None)))
    states, obs = reset(keys, params)
    states, obs, payoffs, done, info = step(keys, states, actions, params)
    assert obs.shape == (64, n, env.observation_size(params)) and payoffs.shape == (64, n) and done.shape == (64,)
    assert np.isfinite(np.asarray(obs)).all()
    single_state, _ = env.reset(keys[7], params)
    _, single_obs, single_payoffs, _, _ = env.step(keys[7], single_state, actions[7], params)
    np.testing.assert_allclose(obs[7], single_obs)
    np.testing.assert_allclose(payoffs[7], single_payoffs)
