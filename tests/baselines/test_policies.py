"""Reference policies: action rules, state handling, and the batched episode rollout."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import motivegym
from motivegym.baselines.policies import (
    CONSTANT_LEVELS,
    Constant,
    Random,
    Reciprocal,
    Schedule,
    TitForTat,
    constant_states,
    episode_rollout,
)
from motivegym.core.env import Transition
from motivegym.reward_layers import reward_layer

KEY = jax.random.PRNGKey(0)


def obs_of(env, params):
    return env.reset(KEY, params)[1]


def test_constant_levels_are_the_101_levels():
    assert len(CONSTANT_LEVELS) == 101
    assert CONSTANT_LEVELS[0] == 0.0 and CONSTANT_LEVELS[-1] == 1.0
    np.testing.assert_allclose(np.diff(CONSTANT_LEVELS), 0.01, atol=1e-9)


def test_constant_scales_each_agents_own_endowment():
    env, params = motivegym.make_jax("PartnerHoldUp-v0")  # e = (120, 80)
    policy = Constant(0.5)
    state = policy.init(env, params)
    actions, state = policy(KEY, obs_of(env, params), state)
    np.testing.assert_allclose(np.asarray(actions), [60.0, 40.0])  # not 0.5·max(e) = 60 for both
    np.testing.assert_allclose(np.asarray(state["last_actions"]), [60.0, 40.0])
    assert int(state["t"]) == 1
    with pytest.raises(ValueError, match="level"):
        Constant(1.5)


def test_constant_states_batch_all_levels_in_one_vmap():
    env, params = motivegym.make_jax("PlatformEcosystem-v0")
    states = constant_states(env, params)
    actions, _ = jax.vmap(Constant(), in_axes=(None, None, 0))(KEY, obs_of(env, params), states)
    high = np.asarray(params.endowments)
    np.testing.assert_allclose(np.asarray(actions), CONSTANT_LEVELS[:, None] * high[None], rtol=1e-6)


def test_random_stays_in_each_agents_bounds_and_depends_on_key():
    env, params = motivegym.make_jax("PlatformEcosystem-v0")  # e = (150, 80, 80, 80, 80)
    policy = Random()
    state = policy.init(env, params)
    keys = jax.random.split(KEY, 512)
    actions, _ = jax.vmap(policy, in_axes=(0, None, None))(keys, obs_of(env, params), state)
    actions = np.asarray(actions)
    high = np.asarray(params.endowments)
    assert np.all(actions >= 0) and np.all(actions <= high)
    assert actions[:, 0].max() > 100  # the platform uses its wider range
    assert np.all(actions.std(axis=0) > 0.2 * high / np.sqrt(12))


def test_titfortat_starts_at_half_then_copies_partner_mean():
    env, params = motivegym.make_jax("PlatformEcosystem-v0")
    policy = TitForTat()
    state = policy.init(env, params)
    obs = obs_of(env, params)
    first, state = policy(KEY, obs, state)
    np.testing.assert_allclose(np.asarray(first), 0.5 * np.asarray(params.endowments))
    state = {**state, "last_actions": jnp.array([150.0, 10.0, 20.0, 30.0, 40.0])}
    second, _ = policy(KEY, obs, state)
    # agent 0: mean(10, 20, 30, 40) = 25; agent 1: mean(150, 20, 30, 40) = 60; agent 2: 57.5, agent 3: 55, agent 4: 52.5
    np.testing.assert_allclose(np.asarray(second), [25.0, 60.0, 57.5, 55.0, 52.5])
    state = {**state, "last_actions": jnp.array([150.0, 80.0, 80.0, 80.0, 80.0])}
    clipped, _ = policy(KEY, obs, state)
    np.testing.assert_allclose(np.asarray(clipped), [80.0, 80.0, 80.0, 80.0, 80.0])  # (150+240)/4 = 97.5 > e_i = 80


def test_titfortat_relative_copies_partner_rates():
    env, params = motivegym.make_jax("PartnerHoldUp-v0")  # e = (120, 80)
    policy = TitForTat(relative=True)
    state = {**policy.init(env, params), "t": jnp.int32(1), "last_actions": jnp.array([60.0, 20.0])}
    actions, _ = policy(KEY, obs_of(env, params), state)
    np.testing.assert_allclose(np.asarray(actions), [0.25 * 120, 0.5 * 80])


def test_schedule_blocks_follow_time():
    env, params = motivegym.make_jax("TrustDilemma-v0")  # horizon 100
    table = jnp.array([[10.0, 11.0], [20.0, 21.0], [30.0, 31.0], [40.0, 41.0]])
    policy = Schedule(4)
    state = policy.init(env, params, table=table)
    obs = obs_of(env, params)
    seen = []
    for _ in range(100):
        actions, state = policy(KEY, obs, state)
        seen.append(float(actions[0]))
    assert seen[0] == seen[24] == 10.0 and seen[25] == seen[49] == 20.0 and seen[75] == seen[99] == 40.0
    with pytest.raises(ValueError, match="shape"):
        policy.init(env, params, table=jnp.zeros((3, 2)))


def test_reciprocal_mixes_target_and_windowed_partner_rate():
    env, params = motivegym.make_jax("PartnerHoldUp-v0")  # e = (120, 80)
    policy = Reciprocal(window=2)
    state = policy.init(env, params, target=jnp.array([60.0, 40.0]), weight=jnp.array([0.5, 1.0]))
    obs = obs_of(env, params)
    first, state = policy(KEY, obs, state)
    np.testing.assert_allclose(np.asarray(first), [60.0, 40.0])  # targets first (rates 0.5, 0.5)
    state = {**state, "rate_history": state["rate_history"].at[1].set(jnp.array([1.0, 0.0])), "t": jnp.int32(2)}
    actions, _ = policy(KEY, obs, state)
    # partner rates averaged over the window: agent 0 sees (0.5 + 0.0)/2, agent 1 sees (0.5 + 1.0)/2
    np.testing.assert_allclose(np.asarray(actions), [0.5 * 60 + 0.5 * 120 * 0.25, 80 * 0.75], rtol=1e-6)


def manual_returns(env_id, actions_fn, layer_name, steps=None):
    """Step the env in Python and accumulate rewards until done (independent of episode_rollout)."""
    env, params = motivegym.make_jax(env_id)
    layer = reward_layer(layer_name)
    key = jax.random.PRNGKey(3)
    reset_key, _, scan_key = jax.random.split(key, 3)
    state, obs = env.reset(reset_key, params)
    step_keys = jax.random.split(scan_key, int(params.max_steps))
    rewards_total = np.zeros(env.n_agents(params))
    payoff_total = np.zeros(env.n_agents(params))
    length = 0
    for t in range(int(params.max_steps) if steps is None else steps):
        _, env_key = jax.random.split(step_keys[t])
        actions = actions_fn(t)
        next_state, next_obs, payoffs, done, info = env.step(env_key, state, actions, params)
        transition = Transition(obs, actions, payoffs, next_obs, info["terminated"], info["truncated"], info)
        _, rewards, _ = layer.apply((), transition)
        rewards_total += np.asarray(rewards)
        payoff_total += np.asarray(payoffs)
        length += 1
        state, obs = next_state, next_obs
        if bool(done):
            break
    return rewards_total, payoff_total, length


@pytest.mark.parametrize("level, expected_length", [(0.45, 100), (0.2, 3)])
def test_episode_rollout_matches_a_python_loop_and_stops_at_done(level, expected_length):
    env, params = motivegym.make_jax("TrustDilemma-v0")
    layers = (reward_layer("private"), reward_layer("integrated"))
    policy = Constant(level)
    stats = jax.jit(lambda key: episode_rollout(env, params, layers, policy, policy.init(env, params), key, 100))(
        jax.random.PRNGKey(3)
    )
    integrated, payoffs, length = manual_returns("TrustDilemma-v0", lambda t: jnp.full(2, level * 100.0), "integrated")
    assert int(stats.length) == length == expected_length  # a=20 < baseline 40 collapses trust in 3 steps
    np.testing.assert_allclose(np.asarray(stats.payoff_returns), payoffs, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(stats.reward_returns[0]), payoffs, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(stats.reward_returns[1]), integrated, rtol=1e-5)
    assert float(stats.cooperation_sum) == pytest.approx(level * expected_length, rel=1e-5)


def test_titfortat_rollout_is_vmappable_over_envs():
    env, params = motivegym.make_jax("PartnerHoldUp-v0")
    layers = (reward_layer("integrated"),)
    policy = TitForTat()
    keys = jax.random.split(KEY, 4)
    stats = jax.jit(
        jax.vmap(lambda key: episode_rollout(env, params, layers, policy, policy.init(env, params), key, 100))
    )(keys)
    assert stats.reward_returns.shape == (4, 1, 2)
    # deterministic env and policy: every episode is identical; cooperation rate = mean(0.5·e / e) = 0.5 on step 1
    np.testing.assert_allclose(np.asarray(stats.reward_returns), np.asarray(stats.reward_returns[:1]).repeat(4, 0))
    assert np.all(np.asarray(stats.length) > 1)
