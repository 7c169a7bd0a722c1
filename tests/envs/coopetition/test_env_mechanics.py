"""Mechanics of the TR-1/TR-2 envs: terminations, extra state, seeding, parameters."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import motivegym


def run_constant(env_id, actions, steps, key=0, **kwargs):
    env, params = motivegym.make_jax(env_id, **kwargs)
    state, _ = env.reset(jax.random.PRNGKey(key), params)
    step = jax.jit(env.step)
    history = []
    for t in range(steps):
        state, obs, payoffs, done, info = step(jax.random.PRNGKey(t), state, jnp.asarray(actions, jnp.float32), params)
        history.append((jax.tree.map(np.asarray, info), np.asarray(payoffs), bool(done), obs))
        if done:
            break
    return env, params, state, history


@pytest.mark.parametrize(
    "env_id, actions, step",
    [("TrustDilemma-v0", [0, 0], 3), ("PartnerHoldUp-v0", [0, 80], 3), ("PlatformEcosystem-v0", [0, 80, 80, 80, 80], 4)],
)
def test_early_termination_steps_match_reference(env_id, actions, step):
    _, _, _, history = run_constant(env_id, actions, 10)
    assert len(history) == step
    assert history[-1][0]["terminated"] and not history[-1][0]["truncated"]


def test_platform_exits_are_reported():
    _, _, _, history = run_constant("PlatformEcosystem-v0", [0, 80, 80, 80, 80], 10)
    assert int(history[-1][0]["developer_exits"]) == 4 and int(history[0][0]["developer_exits"]) == 0


def test_truncation_at_horizon():
    _, _, state, history = run_constant("SLCD-v0", [30, 30], 200, max_steps=7)
    assert len(history) == 7 and history[-1][0]["truncated"] and not history[-1][0]["terminated"]


def test_recovery_race_target_unreachable_at_default_horizon():
    _, _, _, history = run_constant("RecoveryRace-v0", [100, 100], 200)
    assert len(history) == 150 and not history[-1][0]["terminated"]
    assert float(history[-1][0]["mean_trust"]) == pytest.approx(0.873, abs=2e-3)
    assert int(history[-1][0]["recovery_step"]) == -1
    _, _, _, longer = run_constant("RecoveryRace-v0", [100, 100], 400, max_steps=400)
    assert longer[-1][0]["terminated"] and int(longer[-1][0]["recovery_step"]) == len(longer)


def test_trust_dilemma_counts_use_clipped_actions():
    _, _, _, history = run_constant("TrustDilemma-v0", [150, 10], 2)
    info = history[-1][0]
    np.testing.assert_array_equal(info["cooperation_counts"], [2, 0])
    np.testing.assert_array_equal(info["defection_counts"], [0, 2])
    np.testing.assert_allclose(info["actions"], [100, 10])  # clipped to the endowment


def test_dynamic_partner_selection_reputation_is_observed_without_lag():
    env, params, state, history = run_constant("DynamicPartnerSelection-v0", [100, 50, 0, 100, 100, 100], 2)
    scores = history[-1][0]["reputation_scores"]
    np.testing.assert_allclose(scores, 0.9 * 0.1 * np.array([1, .5, 0, 1, 1, 1]) + 0.1 * np.array([1, .5, 0, 1, 1, 1]), atol=1e-6)
    np.testing.assert_allclose(history[-1][3][0, -6:], scores, atol=1e-6)
    assert list(history[-1][0]["reputation_ranking"][-2:]) == [1, 2]


def test_reputation_market_tiers_multiply_payoffs():
    _, _, _, plain = run_constant("ReputationMarket-v0", [100, 100, 100, 0, 50], 4, tier_enabled=False)
    _, _, _, tiered = run_constant("ReputationMarket-v0", [100, 100, 100, 0, 50], 4)
    public = tiered[-1][0]["public_reputations"]
    np.testing.assert_allclose(public, [0.7, 0.7, 0.7, 0.3, 0.5], atol=1e-6)
    np.testing.assert_array_equal(tiered[-1][0]["agent_tiers"], [1, 1, 1, 2, 1])
    np.testing.assert_allclose(tiered[-1][1], plain[-1][1] * np.array([1, 1, 1, 0.7, 1]), rtol=1e-5)
    _, _, _, standard = run_constant("ReputationMarket-v0", [100] * 5, 4)
    assert int(standard[-1][0]["agent_tiers"][0]) == 1  # p = 0.5 + 4·0.05 = 0.7
    _, _, _, premium = run_constant("ReputationMarket-v0", [100] * 5, 7)
    _, _, _, premium_plain = run_constant("ReputationMarket-v0", [100] * 5, 7, tier_enabled=False)
    assert int(premium[-1][0]["agent_tiers"][0]) == 0  # p = 0.85 ≥ 0.8
    np.testing.assert_allclose(premium[-1][1], 1.3 * premium_plain[-1][1], rtol=1e-5)


def test_reputation_market_visibility_noise_is_seeded():
    a = run_constant("ReputationMarket-v0", [50] * 5, 1, reputation_visibility=0.5)[3][0][3]
    b = run_constant("ReputationMarket-v0", [50] * 5, 1, reputation_visibility=0.5)[3][0][3]
    clean = run_constant("ReputationMarket-v0", [50] * 5, 1)[3][0][3]
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a[0, -5:], clean[0, -5:])


def test_synergy_search_gamma_is_seeded_and_in_range():
    env, params = motivegym.make_jax("SynergySearch-v0")
    gammas = [float(env.reset(jax.random.PRNGKey(s), params)[0].extra["gamma"]) for s in range(20)]
    assert all(0.2 <= g <= 0.9 for g in gammas) and len(set(gammas)) == 20
    assert gammas[3] == float(env.reset(jax.random.PRNGKey(3), params)[0].extra["gamma"])
    revealed, rparams = motivegym.make_jax("SynergySearch-v0", reveal_gamma=True)
    state, obs = revealed.reset(jax.random.PRNGKey(3), rparams)
    assert revealed.global_state_size(rparams) == 16
    assert float(revealed.global_state(state, rparams)[-1]) == pytest.approx(gammas[3])
    _, _, _, hidden = run_constant("SynergySearch-v0", [50, 50], 1)
    assert "true_gamma" not in hidden[0][0] and "gamma_type" not in hidden[0][0]


def test_slcd_without_trust_uses_plain_interdependence():
    _, params, state, history = run_constant("SLCD-v0", [0, 0], 3, trust_enabled=False)
    np.testing.assert_allclose(history[-1][0]["interdependence_weights"], np.asarray(params.interdependence))
    assert float(history[-1][0]["mean_trust"]) == 1.0


def test_renault_nissan_phases():
    for phase, (t0, r0) in {"formation": (.45, .05), "crisis": (.30, .45), "strained": (.40, .35)}.items():
        env, params = motivegym.make_jax("RenaultNissan-v0", phase=phase)
        state, _ = env.reset(jax.random.PRNGKey(0), params)
        assert float(state.trust[0, 1]) == pytest.approx(t0) and float(state.reputation[1, 0]) == pytest.approx(r0)
        assert env.static_info(params)["phase"] == phase
    with pytest.raises(ValueError, match="unknown phase"):
        motivegym.make_jax("RenaultNissan-v0", phase="honeymoon")


def test_platform_size_is_configurable():
    env, params = motivegym.make_jax("PlatformEcosystem-v0", n_developers=2)
    assert env.n_agents(params) == 3 and env.global_state_size(params) == 3 + 27 + 1
    np.testing.assert_allclose(np.asarray(params.alpha), [0.3, 0.35, 0.35])


@pytest.mark.parametrize("env_id", motivegym.list_envs("coopetition"))
def test_reset_and_step_are_jit_and_vmap_safe(env_id):
    env, params = motivegym.make_jax(env_id)
    keys = jax.random.split(jax.random.PRNGKey(1), 3)
    states, obs = jax.vmap(env.reset, in_axes=(0, None))(keys, params)
    low, high = env.action_bounds(params)
    actions = jnp.stack([0.3 * high, 0.6 * high, high])
    _, next_obs, payoffs, done, info = jax.jit(jax.vmap(env.step, in_axes=(0, 0, 0, None)))(keys, states, actions, params)
    n = env.n_agents(params)
    assert payoffs.shape == (3, n) and next_obs.shape == obs.shape and done.shape == (3,)
    assert info["interdependence_weights"].shape == (3, n, n)
    assert np.all(np.isfinite(np.asarray(payoffs)))
