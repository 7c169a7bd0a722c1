"""The JaxMARL adapter (adapters/jaxmarl.py) against JaxMARL's ``MultiAgentEnv`` contract, JaxMARL's own wrappers
where ``jaxmarl`` is importable, and ``examples/purejaxrl_ppo.py`` on a tiny budget."""

from __future__ import annotations

import importlib.util

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from motivegym.adapters.functional import RewardedState
from motivegym.adapters.jaxmarl import make_jaxmarl

JAXMARL_MISSING = (
    "jaxmarl is not installed: `pip install jaxmarl==0.2.0` does not install cleanly here (its dependency gymnax 1.0.1 "
    "requires gymnasium<1.4 and would downgrade gymnasium 1.4.0 to 1.3.0). To run this test: `pip install --no-deps "
    "--target /tmp/jaxmarl_site jaxmarl==0.2.0 gymnax==1.0.1 flax chex jaxtyping wadler_lindig safetensors toolz treescope "
    "rich markdown-it-py mdurl orbax-checkpoint seaborn pandas` and run pytest with PYTHONPATH=/tmp/jaxmarl_site"
)


def test_agents_spaces_and_dict_outputs_follow_the_contract():
    env = make_jaxmarl("PrisonersDilemma-v0", reward="cooperative")
    assert env.agents == ["agent_0", "agent_1"] and env.num_agents == 2 and env.name == "PrisonersDilemma-v0"
    obs, state = env.reset(jax.random.PRNGKey(0))
    assert set(obs) == set(env.agents)
    for agent in env.agents:
        space = env.observation_space(agent)
        assert space is env.observation_spaces[agent] and obs[agent].shape == space.shape == (6,)
        assert bool(space.contains(obs[agent])) and obs[agent].dtype == jnp.float32
        action_space = env.action_space(agent)
        assert action_space.n == 2 and action_space.shape == () and bool(action_space.contains(action_space.sample(jax.random.PRNGKey(1))))
    actions = {agent: jnp.int32(0) for agent in env.agents}
    obs, state, rewards, dones, infos = env.step(jax.random.PRNGKey(2), state, actions)
    assert set(rewards) == set(env.agents) and set(dones) == set(env.agents) | {"__all__"}
    assert all(rewards[a].shape == () and float(rewards[a]) == 3.0 for a in env.agents)  # mutual cooperation pays 3 each
    np.testing.assert_array_equal(infos["payoffs"], [3.0, 3.0])
    assert not bool(dones["__all__"])
    masks = env.get_avail_actions(state)
    assert all(masks[a].tolist() == [True, True] for a in env.agents)
    harvest = make_jaxmarl("Harvest-v0")  # a grid view: the env declares its observations lie in [0, 1]
    space = harvest.observation_space("agent_0")
    assert (space.low, space.high) == tuple(harvest.rewarded.env.observation_bounds(harvest.params)) == (0.0, 1.0)


def test_step_is_the_rewarded_env_step_with_the_first_half_of_the_key():
    env = make_jaxmarl("TrustDilemma-v0", reward="integrated+0.5*count", max_steps=5)
    obs, state = env.reset(jax.random.PRNGKey(3))
    rewarded_state, rewarded_obs = env.rewarded.reset(jax.random.PRNGKey(3), env.params)
    np.testing.assert_array_equal(env.stack(obs), rewarded_obs)
    rewarded_step = jax.jit(env.rewarded.step)
    for t in range(3):
        key = jax.random.PRNGKey(10 + t)
        actions = {a: env.action_space(a).sample(jax.random.fold_in(key, i)) for i, a in enumerate(env.agents)}
        obs, state, rewards, dones, infos = env.step(key, state, actions)
        joint = jnp.stack([actions[a][0] for a in env.agents])
        rewarded_state, rewarded_obs, r, done, info = rewarded_step(jax.random.split(key)[0], rewarded_state, joint, env.params)
        np.testing.assert_allclose(env.stack(rewards), r, rtol=1e-6)
        np.testing.assert_allclose(env.stack(obs), rewarded_obs, rtol=1e-6)
        np.testing.assert_allclose(infos["payoffs"], info["payoffs"], rtol=1e-6)
        assert bool(dones["__all__"]) == bool(done) is False


def test_auto_reset_follows_jaxmarl_and_keeps_the_layer_state(assert_trees_equal):
    env = make_jaxmarl("PrisonersDilemma-v0", reward="cooperative+0.1*count", max_steps=2)
    _, state = env.reset(jax.random.PRNGKey(0))
    actions = {a: jnp.int32(1) for a in env.agents}
    state = env.step(jax.random.PRNGKey(1), state, actions)[1]
    key = jax.random.PRNGKey(2)
    obs, new_state, rewards, dones, infos = env.step(key, state, actions)
    key_step, key_reset = jax.random.split(key)
    obs_st, state_st, rewards_st, dones_st, infos_st = env.step_env(key_step, state, actions)
    obs_re, state_re = env.reset(key_reset)
    assert bool(dones["__all__"]) and all(bool(dones[a]) for a in env.agents)
    assert_trees_equal(obs, obs_re)  # the next episode's first observations
    assert_trees_equal(new_state.env, state_re.env)
    assert_trees_equal(new_state.layer, state_st.layer)  # the layer state carries over
    assert_trees_equal((rewards, dones, infos), (rewards_st, dones_st, infos_st))  # the finished step's
    assert not np.array_equal(env.stack(obs), env.stack(obs_st))
    _, given = env.reset(jax.random.PRNGKey(9))
    given = RewardedState(env.step(jax.random.PRNGKey(4), given, actions)[1].env, given.layer)  # a mid-episode state
    obs_given, state_given, *_ = env.step(key, state, actions, given)
    assert_trees_equal(obs_given, env.get_obs(given))
    assert_trees_equal(state_given.env, given.env)


def test_infos_hold_one_value_per_agent_so_ippo_can_reshape_them_to_actors():
    env = make_jaxmarl("PublicGoods-v0", reward="integrated")
    num_envs = 3
    obs, state = jax.vmap(env.reset)(jax.random.split(jax.random.PRNGKey(0), num_envs))
    actions = {a: jnp.full((num_envs, 1), 5.0) for a in env.agents}
    _, _, rewards, dones, infos = jax.jit(jax.vmap(env.step))(jax.random.split(jax.random.PRNGKey(1), num_envs), state, actions)
    assert {"payoffs", "terminated", "truncated", "reward_payoff", "reward_partner"} <= set(infos)
    for value in jax.tree.leaves(infos):
        assert value.shape == (num_envs, env.num_agents)
        assert value.reshape(num_envs * env.num_agents).shape == (num_envs * env.num_agents,)
    np.testing.assert_allclose(infos["reward_payoff"] + infos["reward_partner"], env.stack(rewards).T, rtol=1e-6)
    assert dones["__all__"].shape == (num_envs,)


def test_continuous_envs_take_one_element_box_actions_inside_the_env_bounds(assert_trees_equal):
    env = make_jaxmarl("TrustDilemma-v0")
    low, high = (np.asarray(b) for b in env.rewarded.action_bounds(env.params))
    for i, agent in enumerate(env.agents):
        space = env.action_space(agent)
        assert space.shape == (1,) and float(space.low[0]) == low[i] and float(space.high[0]) == high[i]
        assert not bool(space.contains(jnp.array([high[i] + 1.0])))
    with pytest.raises(TypeError, match="continuous"):
        env.get_avail_actions(env.reset(jax.random.PRNGKey(0))[1])
    _, state = env.reset(jax.random.PRNGKey(0))
    scalar = env.step(jax.random.PRNGKey(1), state, {a: jnp.float32(3.0) for a in env.agents})
    boxed = env.step(jax.random.PRNGKey(1), state, {a: jnp.array([3.0]) for a in env.agents})
    assert_trees_equal(scalar, boxed)


@pytest.mark.skipif(importlib.util.find_spec("jaxmarl") is None, reason=JAXMARL_MISSING)
def test_jaxmarls_own_wrappers_run_unchanged():
    from jaxmarl.environments import spaces
    from jaxmarl.wrappers.baselines import CTRolloutManager, LogWrapper

    env = make_jaxmarl("PrisonersDilemma-v0", reward="cooperative", max_steps=3)
    assert isinstance(env.action_space("agent_0"), spaces.Discrete) and isinstance(env.observation_space("agent_0"), spaces.Box)
    logged = LogWrapper(env)
    num_envs = 2
    obs, state = jax.vmap(logged.reset)(jax.random.split(jax.random.PRNGKey(0), num_envs))
    total = jnp.zeros((num_envs, env.num_agents))
    for t in range(3):
        actions = {a: jnp.full((num_envs,), t % 2, jnp.int32) for a in env.agents}
        obs, state, rewards, dones, info = jax.vmap(logged.step)(jax.random.split(jax.random.PRNGKey(t + 1), num_envs), state, actions)
        total = total + jnp.stack([rewards[a] for a in env.agents], -1)
    assert bool(dones["__all__"].all()) and bool(info["returned_episode"].all())
    np.testing.assert_allclose(info["returned_episode_returns"], total)  # 3 + 1 + 3 per agent
    np.testing.assert_allclose(total, 7.0)
    manager = CTRolloutManager(env, batch_size=3)
    obs, state = manager.batch_reset(jax.random.PRNGKey(0))
    actions = {a: manager.batch_sample(jax.random.PRNGKey(1), a) for a in env.agents}
    obs, state, rewards, dones, infos = manager.batch_step(jax.random.PRNGKey(2), state, actions)
    assert obs["__all__"].shape[0] == 3 and rewards["__all__"].shape == (3,)



def test_the_purejaxrl_example_learns_to_cooperate_with_the_cooperative_reward(capsys, example):
    module = example("purejaxrl_ppo")
    metrics = module.main(["--total-timesteps", "8192", "--num-envs", "8", "--num-steps", "64"])
    out = capsys.readouterr().out
    assert "16 updates" in out and out.count("payoff/step") == 16
    assert all(np.isfinite(value).all() for value in metrics.values())
    payoff = metrics["payoff_per_step"]
    assert 1.0 <= payoff.min() and payoff.max() <= 3.0
    assert payoff[-3:].mean() > payoff[:3].mean() + 0.2  # mutual cooperation (3) is learned; random play pays 2.25
    np.testing.assert_allclose(metrics["reward_per_step"], payoff, rtol=1e-5)  # cooperative: mean payoff shared


def test_the_purejaxrl_example_runs_its_gaussian_policy_on_a_continuous_env(capsys, example):
    module = example("purejaxrl_ppo")
    argv = ["--env", "PublicGoods-v0", "--reward", "integrated", "--total-timesteps", "128", "--num-envs", "2", "--num-steps", "64"]
    metrics = module.main(argv + ["--update-epochs", "1", "--num-minibatches", "2"])
    assert "PublicGoods-v0 reward=integrated: 1 updates" in capsys.readouterr().out
    assert all(np.isfinite(value).all() and value.shape == (1,) for value in metrics.values())
    assert metrics["payoff_per_step"][0] != 0.0
