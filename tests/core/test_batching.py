import jax
import jax.numpy as jnp
import numpy as np
import pytest

import motivegym
from motivegym.core.batching import (
    auto_reset_batch_step,
    batched_reset,
    max_over_mapped_axes,
    random_actions,
    random_rollout,
    reset_finished,
)


def test_auto_reset_resets_only_finished_envs():
    env, params = motivegym.make_jax("TrustDilemma-v0", max_steps=3)
    step = jax.jit(auto_reset_batch_step(env))
    states, obs = batched_reset(env, params, jax.random.PRNGKey(0), 2)
    actions = jnp.array([[50.0, 50.0], [50.0, 50.0]])
    for t in range(3):
        states, obs, payoffs, done, info = step(jax.random.split(jax.random.PRNGKey(t), 2), states, actions, params)
    assert np.all(np.asarray(done)) and np.all(np.asarray(states.t) == 0)
    assert np.all(np.asarray(info["final_obs"])[:, 0, -1] == 1.0)  # t/max_steps at the terminal step
    assert np.allclose(np.asarray(obs)[:, 0, -1], 0.0)


def test_random_actions_respect_per_agent_bounds():
    env, params = motivegym.make_jax("PartnerHoldUp-v0")
    actions = np.asarray(random_actions(env, params, jax.random.PRNGKey(0), (1000,)))
    assert actions.shape == (1000, 2) and actions[:, 1].max() <= 80 and actions[:, 0].max() > 80 and actions.min() >= 0


def test_random_rollout_is_deterministic_given_the_key():
    env, params = motivegym.make_jax("ReputationMarket-v0", reputation_visibility=0.5)
    run = jax.jit(random_rollout(env, params, 8, 120))
    a, b, c = run(jax.random.PRNGKey(1)), run(jax.random.PRNGKey(1)), run(jax.random.PRNGKey(2))
    assert float(a) == float(b) and float(a) != float(c)


def test_random_rollout_computes_the_observations_it_benchmarks():
    base_env, params = motivegym.make_jax("TrustDilemma-v0", max_steps=5)

    class NaNObservations(type(base_env)):
        """TrustDilemma whose observations are NaN: a rollout that really builds them returns NaN."""

        def observe(self, state, params):
            return super().observe(state, params) * jnp.nan

    assert np.isfinite(float(jax.jit(random_rollout(base_env, params, 4, 12))(jax.random.PRNGKey(0))))
    assert np.isnan(float(jax.jit(random_rollout(NaNObservations(), params, 4, 12))(jax.random.PRNGKey(0))))


@pytest.mark.parametrize(
    "finished",
    [[], [2], [0, 5], list(range(128))],
    ids=["none", "one (compacted reset)", "two (more than 128 // 64: every env reset)", "all"],
)
def test_reset_finished_replaces_exactly_the_finished_envs(finished):
    env, params = motivegym.make_jax("Cleanup-v0")
    batch = 128
    states, obs = batched_reset(env, params, jax.random.PRNGKey(0), batch)
    global_states = jax.vmap(env.global_state, in_axes=(0, None))(states, params)
    reset_keys = jax.random.split(jax.random.PRNGKey(1), batch)
    fresh_states, fresh_obs = jax.vmap(env.reset, in_axes=(0, None))(reset_keys, params)
    fresh_global = jax.vmap(env.global_state, in_axes=(0, None))(fresh_states, params)
    views = (lambda s: env.observe(s, params), lambda s: env.global_state(s, params))
    run = jax.jit(lambda done: reset_finished(env, params, reset_keys, done, states, (obs, global_states), views))

    done = np.isin(np.arange(batch), finished)
    new_states, (new_obs, new_global) = run(jnp.asarray(done))
    for b in range(batch):
        source = (fresh_states, fresh_obs, fresh_global) if done[b] else (states, obs, global_states)
        for new_leaf, source_leaf in zip(jax.tree.leaves((new_states, new_obs, new_global)), jax.tree.leaves(source)):
            np.testing.assert_array_equal(np.asarray(new_leaf)[b], np.asarray(source_leaf)[b])
        # the comparison can tell a fresh episode from the old one
        assert not np.array_equal(np.asarray(fresh_obs)[b], np.asarray(obs)[b])


def test_reset_finished_under_an_outer_vmap_matches_each_batch_alone():
    env, params = motivegym.make_jax("Cleanup-v0")
    runs, batch = 3, 64
    keys = jax.random.split(jax.random.PRNGKey(0), runs)
    states, obs = jax.vmap(lambda k: batched_reset(env, params, k, batch))(keys)
    reset_keys = jax.vmap(lambda k: jax.random.split(k, batch))(jax.random.split(jax.random.PRNGKey(1), runs))
    done = jnp.zeros((runs, batch), bool).at[1, 3].set(True).at[2, :4].set(True)  # none, one, more than 64 // 64
    view = (lambda s: env.observe(s, params),)
    one = lambda k, d, s, o: reset_finished(env, params, k, d, s, (o,), view)  # noqa: E731
    together = jax.jit(jax.vmap(one))(reset_keys, done, states, obs)
    for r in range(runs):
        alone = jax.jit(one)(reset_keys[r], done[r], jax.tree.map(lambda x, r=r: x[r], states), obs[r])
        for a, b in zip(jax.tree.leaves(alone), jax.tree.leaves(together)):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b)[r])


def test_max_over_mapped_axes_is_the_identity_unmapped_and_the_maximum_over_every_mapped_axis():
    x = jnp.array([[0, 2, 1], [1, 0, 0]])
    np.testing.assert_array_equal(max_over_mapped_axes(x), x)
    np.testing.assert_array_equal(jax.vmap(max_over_mapped_axes)(x), [[1, 2, 1]] * 2)
    np.testing.assert_array_equal(jax.jit(jax.vmap(jax.vmap(max_over_mapped_axes)))(x), np.full((2, 3), 2))


@pytest.mark.parametrize("vmapped", [False, True], ids=["one batch", "under an outer vmap over runs"])
def test_reset_finished_builds_no_episode_when_no_env_finished(vmapped):
    """Fresh episodes cost ~25x a step (CrafterTeam); an outer vmap over runs must not build them every step."""
    base, params = motivegym.make_jax("Cleanup-v0")
    resets = []

    class CountedResets(type(base)):
        def reset(self, key, params):
            jax.debug.callback(lambda: resets.append(1))
            return super().reset(key, params)

    env, runs, batch = CountedResets(), 3, 8
    states, obs = jax.vmap(lambda k: batched_reset(base, params, k, batch))(jax.random.split(jax.random.PRNGKey(0), runs))
    reset_keys = jax.random.split(jax.random.PRNGKey(1), (runs, batch))
    one = jax.jit(lambda k, d, s, o: reset_finished(env, params, k, d, s, (o,), (lambda s: env.observe(s, params),)))
    run = jax.vmap(one) if vmapped else (lambda k, d, s, o: [one(k[r], d[r], jax.tree.map(lambda x, r=r: x[r], s), o[r]) for r in range(runs)])
    jax.block_until_ready(run(reset_keys, jnp.zeros((runs, batch), bool), states, obs))
    assert resets == []
    jax.block_until_ready(run(reset_keys, jnp.zeros((runs, batch), bool).at[1, 2].set(True), states, obs))
    assert resets  # the counter sees a reset when one is needed
