"""``motivegym.make_rewarded`` (adapters/functional.py) and the exported auto-reset (core/batching.py):
rewards equal the layer applied by hand to the raw env, same-step auto-reset keeps the layer state, jit/vmap,
``batch_step`` = ``vmap(step)``, the same game as PettingZoo's ``parallel_env``, and docs/jax.md runs."""

from __future__ import annotations

import re
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import motivegym
from motivegym.adapters.functional import RewardedEnv, RewardedState
from motivegym.adapters.host import episode_key, reset_keys, step_keys
from motivegym.core import batching
from motivegym.core.env import Transition
from motivegym.reward_layers import LayerSpec, reward_layer

ROOT = Path(__file__).resolve().parents[2]
HORIZON = 4
#: (env, reward): a discrete and a continuous env, stateless and stateful layers
CASES = [("PrisonersDilemma-v0", "cooperative"), ("TrustDilemma-v0", "integrated+0.5*count"), ("PublicGoods-v0", "inequity_aversion")]


def random_actions(env, params, key, batch=()):
    return batching.random_actions(env, params, key, batch)


def by_hand(env_id: str, reward: str, key, actions_seq):
    """Rewards of the raw env with the layer applied by hand (the reference of ``tests/test_doors.py``)."""
    env, params = motivegym.make_jax(env_id, max_steps=HORIZON)
    layer = reward_layer(reward)
    _, reset_key, layer_key = reset_keys(key)
    state, obs = env.reset(reset_key, params)
    layer_state = layer.init(layer_key, LayerSpec(env.n_agents(params), env.observation_size(params)))
    env_step, observe, apply = jax.jit(env.step), jax.jit(env.observe), jax.jit(layer.apply)
    rewards = []
    for t, actions in enumerate(actions_seq):
        step_key, _ = jax.random.split(jax.random.fold_in(key, t))
        obs = observe(state, params)
        state, next_obs, payoffs, _, info = env_step(step_key, state, actions, params)
        layer_state, r, _ = apply(layer_state, Transition(obs, actions, payoffs, next_obs, info["terminated"], info["truncated"], info))
        rewards.append(r)
    return np.stack(rewards)


@pytest.mark.parametrize("env_id, reward", CASES)
def test_rewards_equal_the_layer_applied_by_hand(env_id, reward):
    env, params = motivegym.make_rewarded(env_id, reward=reward, max_steps=HORIZON)
    key = jax.random.PRNGKey(5)
    actions_seq = [random_actions(env, params, jax.random.fold_in(key, 100 + t)) for t in range(HORIZON)]
    state, _ = env.reset(key, params)
    step = jax.jit(env.step)
    rewards, payoffs = [], []
    for t, actions in enumerate(actions_seq):
        state, _, r, _, info = step(jax.random.fold_in(key, t), state, actions, params)
        rewards.append(r)
        payoffs.append(info["payoffs"])
    expected = by_hand(env_id, reward, key, actions_seq)
    np.testing.assert_allclose(np.stack(rewards), expected, rtol=1e-5, atol=1e-6 * np.abs(expected).max())  # eager vs jit rounding
    assert np.stack(rewards).shape == (HORIZON, env.n_agents(params))
    assert not np.allclose(np.stack(rewards), 0) and set(info["reward_components"])


def test_autoreset_starts_the_next_episode_in_the_same_step_and_keeps_the_layer_state(assert_trees_equal):
    plain, params = motivegym.make_rewarded("TrustDilemma-v0", reward="integrated+0.5*count", max_steps=2)
    auto = RewardedEnv(plain.env, plain.layer, autoreset=True)
    key = jax.random.PRNGKey(1)
    actions = jnp.array([40.0, 60.0])
    state_p, _ = plain.reset(key, params)
    state_a, _ = auto.reset(key, params)
    plain_step, auto_step = jax.jit(plain.step), jax.jit(auto.step)
    for t in range(2):
        k = jax.random.fold_in(key, t)
        state_p, obs_p, r_p, done_p, info_p = plain_step(k, state_p, actions, params)
        state_a, obs_a, r_a, done_a, info_a = auto_step(k, state_a, actions, params)
        np.testing.assert_array_equal(r_a, r_p)
        assert bool(done_a) == bool(done_p) == (t == 1)
        np.testing.assert_array_equal(info_a["final_obs"], obs_p)  # the terminal observation is kept
        assert_trees_equal(state_a.layer, state_p.layer)  # the layer state carries over the reset
    fresh_state, fresh_obs = plain.env.reset(jax.random.split(jax.random.fold_in(key, 1))[1], params)
    np.testing.assert_array_equal(obs_a, fresh_obs)
    assert_trees_equal(state_a.env, fresh_state)
    assert not np.array_equal(obs_a, obs_p)  # without auto-reset the terminal observation is returned
    assert "final_obs" not in info_p


def staggered_states(env, params, key, batch):
    """``batch`` states, env ``b`` already ``b`` steps into its episode (so they end at different steps)."""
    states = []
    for b in range(batch):
        state, _ = env.reset(jax.random.fold_in(key, b), params)
        for t in range(b):
            state = env.step(jax.random.fold_in(key, 50 + t), state, jnp.zeros(env.n_agents(params), jnp.int32), params)[0]
        states.append(state)
    return jax.tree.map(lambda *xs: jnp.stack(xs), *states)


def test_batch_step_equals_vmapped_step_under_jit_with_staggered_episode_ends(assert_trees_equal):
    env, params = motivegym.make_rewarded("PrisonersDilemma-v0", reward="cooperative", autoreset=True, max_steps=3)
    batch = 3
    key = jax.random.PRNGKey(2)
    states_v = states_b = staggered_states(env, params, key, batch)
    vmapped = jax.jit(jax.vmap(env.step, in_axes=(0, 0, 0, None)))
    batched = jax.jit(env.batch_step)
    ends = []
    for t in range(4):
        keys = jax.random.split(jax.random.fold_in(key, t), batch)
        actions = random_actions(env, params, jax.random.fold_in(key, 10 + t), (batch,))
        states_v, obs_v, r_v, done_v, info_v = vmapped(keys, states_v, actions, params)
        states_b, obs_b, r_b, done_b, info_b = batched(keys, states_b, actions, params)
        for out_v, out_b in ((states_v, states_b), (obs_v, obs_b), (r_v, r_b), (done_v, done_b), (info_v, info_b)):
            assert_trees_equal(out_v, out_b)
        ends.append(np.asarray(done_v))
    ends = np.stack(ends)
    assert ends.sum(axis=0).tolist() == [1, 1, 2]  # envs finished at different steps (env 2 twice)
    assert 0 < ends.sum(axis=1).max() < batch


def test_vmap_matches_a_python_loop_of_single_env_steps():
    env, params = motivegym.make_rewarded("PublicGoods-v0", reward="integrated", autoreset=True, max_steps=2)
    keys = jax.random.split(jax.random.PRNGKey(3), 4)
    states, obs = jax.jit(jax.vmap(env.reset, in_axes=(0, None)))(keys, params)
    actions = random_actions(env, params, jax.random.PRNGKey(4), (4,))
    out = jax.jit(jax.vmap(env.step, in_axes=(0, 0, 0, None)))(keys, states, actions, params)
    reset, step = jax.jit(env.reset), jax.jit(env.step)
    for b in range(4):
        state, obs_b = reset(keys[b], params)
        np.testing.assert_allclose(obs[b], obs_b, rtol=1e-6)
        single = step(keys[b], state, actions[b], params)
        for batched_leaf, leaf in zip(jax.tree.leaves(out), jax.tree.leaves(single)):
            np.testing.assert_allclose(np.asarray(batched_leaf)[b], np.asarray(leaf), rtol=1e-6, atol=1e-6)


def test_plays_the_same_game_as_parallel_env_with_the_adapters_key_schedule():
    """Reset from ``episode_key(jax_seed)`` and step with ``step_keys``: PettingZoo's rewards and observations."""
    seed, horizon = 11, 3
    par = motivegym.parallel_env("TrustDilemma-v0", reward="integrated", max_steps=horizon)
    observations, _ = par.reset(seed=seed)
    env, params = motivegym.make_rewarded("TrustDilemma-v0", reward="integrated", max_steps=horizon)
    key = episode_key(int(np.random.default_rng(seed).integers(0, 2**31 - 1)))
    state, obs = env.reset(key, params)
    carry, _, _ = reset_keys(key)
    rng = np.random.default_rng(0)
    for _ in range(horizon):
        np.testing.assert_allclose(obs, np.stack([observations[a] for a in par.agents]), rtol=1e-6)
        actions = rng.uniform(0, 1, 2).astype(np.float32) * np.asarray(env.action_bounds(params)[1])
        observations, rewards, *_ = par.step({a: actions[i : i + 1] for i, a in enumerate(par.agents)})
        carry, env_key = step_keys(carry)
        state, obs, r, _, _ = env.step(env_key, state, jnp.asarray(actions), params)
        np.testing.assert_allclose(r, [rewards[a] for a in sorted(rewards)], rtol=1e-6)


def test_raw_auto_reset_step_matches_the_batched_one_across_an_episode_end(assert_trees_equal):
    env, params = motivegym.make_jax("PrisonersDilemma-v0", max_steps=2)
    keys = jax.random.split(jax.random.PRNGKey(6), 2)
    states, _ = jax.vmap(env.reset, in_axes=(0, None))(keys, params)
    single = jax.jit(jax.vmap(motivegym.auto_reset_step(env), in_axes=(0, 0, 0, None)))
    batched = jax.jit(motivegym.auto_reset_batch_step(env))
    states_s = states_b = states
    for t in range(3):
        step_keys_ = jax.random.split(jax.random.fold_in(keys[0], t), 2)
        actions = jnp.full((2, 2), t % 2, jnp.int32)
        states_s, obs_s, pay_s, done_s, info_s = single(step_keys_, states_s, actions, params)
        states_b, obs_b, pay_b, done_b, info_b = batched(step_keys_, states_b, actions, params)
        assert_trees_equal((states_s, obs_s, pay_s, done_s, info_s), (states_b, obs_b, pay_b, done_b, info_b))
        assert bool(done_s.all()) == (t == 1)
        if t == 1:  # the new episode's first observation, the terminal one in info
            fresh = jax.vmap(lambda k: env.reset(jax.random.split(k)[1], params)[1])(step_keys_)
            np.testing.assert_array_equal(obs_s, fresh)
            assert not np.array_equal(info_s["final_obs"], obs_s)


def test_checked_validates_actions_and_options_are_checked():
    env, params = motivegym.make_rewarded("PrisonersDilemma-v0", reward="cooperative")
    state, _ = env.reset(jax.random.PRNGKey(0), params)
    with pytest.raises(ValueError, match="agent"):
        motivegym.checked(env).step(jax.random.PRNGKey(1), state, np.array([0, 5]), params)
    _, _, rewards, _, _ = motivegym.checked(env).step(jax.random.PRNGKey(1), state, np.array([0, 0]), params)
    np.testing.assert_allclose(rewards, [3.0, 3.0])
    with pytest.raises(ValueError, match="max_step"):
        motivegym.make_rewarded("PrisonersDilemma-v0", max_step=3)
    with pytest.raises(ValueError, match="autoreset"):
        motivegym.make_rewarded("PrisonersDilemma-v0", autoreset=1)
    with pytest.raises(ValueError, match="reward layer"):
        motivegym.make_rewarded("PrisonersDilemma-v0", reward="cooperativ")
    default, _ = motivegym.make_rewarded("PrisonersDilemma-v0")
    assert default.layer == reward_layer(motivegym.get_spec("PrisonersDilemma-v0").default_reward)
    assert isinstance(state, RewardedState)


def test_the_examples_in_docs_jax_md_run():
    """Every ```python block, in order, in one namespace (```py blocks need jaxmarl and are not run here)."""
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "docs" / "jax.md").read_text(), re.S)
    assert len(blocks) >= 4
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, "docs/jax.md", "exec"), namespace)
