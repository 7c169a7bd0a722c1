import jax
import jax.numpy as jnp
import numpy as np

import motivegym
from motivegym.core.batching import auto_reset_step, batched_reset, random_actions, random_rollout


def test_auto_reset_resets_only_finished_envs():
    env, params = motivegym.make_jax("TrustDilemma-v0", max_steps=3)
    step = jax.jit(jax.vmap(auto_reset_step(env), in_axes=(0, 0, 0, None)))
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
