"""TR-3 collective-action envs (spec §1.9, §4.11–§4.16): closed forms, reference values, institutions, batching."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import motivegym
from motivegym.core.env import Transition
from motivegym.envs.coopetition.team_production import (
    history_loyalty_score,
    nash_effort,
    optimal_effort,
    push_rates,
    scale_payoff,
    team_payoff,
)
from motivegym.envs.coopetition.value import private_payoff
from motivegym.reward_layers import Private
from motivegym.reward_layers.motives import Loyalty

TR3_ENVS = ["TeamProduction-v0", "LoyaltyTeam-v0", "CoalitionFormation-v0", "ApacheProject-v0", "PublicGoods-v0"]
LEVELS = (0.5, 0.5, 0.5, 0.2, 0.6)
#: spec Appendix A rewards (all agents equal) — the reference's TR-1 integrated utility × collective multiplier
APPENDIX_A_REWARDS = {
    "TeamProduction-v0": [179.732, 186.728, 193.024, 153.575, 162.963],
    "LoyaltyTeam-v0": [215.679, 224.074, 231.629, 76.787, 195.555],
    "CoalitionFormation-v0": [308.003, 323.172, 336.824, 107.277, 271.392],
    "ApacheProject-v0": [1390.845, 1495.742, 1590.150, 453.216, 1138.985],
    "PublicGoods-v0": [247.727, 258.824, 268.811, 87.135, 220.991],
}
APPENDIX_A_TRUST = [(0.55, 0.0), (0.5950, 0.0), (0.6355, 0.0), (0.4329, 0.4), (0.4496, 0.392)]

_STEPS = {}


def jitted_step(env_id):
    """One compiled step per env id for the whole module."""
    if env_id not in _STEPS:
        env, _ = motivegym.make_jax(env_id)
        _STEPS[env_id] = jax.jit(env.step)
    return _STEPS[env_id]


def run(env_id, actions, **overrides):
    env, params = motivegym.make_jax(env_id, **overrides)
    key = jax.random.PRNGKey(0)
    state, obs = env.reset(key, params)
    step = jitted_step(env_id) if not overrides else jax.jit(env.step)
    out = []
    for a in actions:
        a = jnp.asarray(a, jnp.float32)
        next_state, next_obs, payoffs, done, info = step(key, state, a, params)
        out.append({"obs": obs, "next_obs": next_obs, "actions": a, "payoffs": payoffs, "done": done, "info": info, "state": next_state})
        state, obs = next_state, next_obs
    return env, params, out


def reference_integrated_utility(params, actions, info):
    """The reference's TR-1 trust-gated integrated utility (what it multiplies by its collective modifiers)."""
    pi = private_payoff(jnp.asarray(actions), params.endowments, params.alpha, params.theta, params.beta, params.gamma)
    return np.asarray(pi + info["interdependence_weights"] @ pi)


def test_closed_forms_match_the_reference():
    assert float(nash_effort(4, 25.0, 0.7, 1.0, 50.0)) == pytest.approx(34.240, abs=1e-3)
    assert float(optimal_effort(4, 25.0, 0.7, 1.0, 50.0)) == pytest.approx(3478.57, rel=1e-5)
    assert float(nash_effort(6, 25.0, 0.7, 1.0, 50.0)) == pytest.approx(5.908, abs=1e-3)
    assert float(optimal_effort(6, 25.0, 0.7, 1.0, 50.0)) == pytest.approx(2319.04, rel=1e-5)
    assert float(nash_effort(5, 2.0, 1.0, 1.0, 50.0)) == 0.0  # linear, ω/n < c
    assert float(optimal_effort(5, 2.0, 1.0, 1.0, 50.0)) == 50.0
    assert float(nash_effort(5, 10.0, 1.0, 1.0, 50.0)) == 50.0  # linear, ω/n ≥ c


@pytest.mark.parametrize(
    "phase, nash, optimum, n",
    [("emergence", 0.807, 826.68, 8), ("growth", 0.111, 927.62, 15), ("maturity", 0.00292, 638.76, 40), ("evolution", 0.00414, 580.03, 35)],
)
def test_apache_phase_closed_forms_and_sizes(phase, nash, optimum, n):
    env, params = motivegym.make_jax("ApacheProject-v0", phase=phase)
    state, obs = env.reset(jax.random.PRNGKey(0), params)
    info = env.describe(state, params)
    assert env.n_agents(params) == n
    assert float(info["nash_equilibrium"]) == pytest.approx(nash, rel=5e-3)  # spec quotes 3 significant digits
    assert float(info["social_optimum"]) == pytest.approx(optimum, rel=1e-4)
    cap = {"emergence": 1.0, "growth": 0.85, "maturity": 0.70, "evolution": 0.60}[phase]
    np.testing.assert_allclose(info["loyalty_scores"], 0.5 * cap, rtol=1e-6)
    assert env.static_info(params)["phase"] == phase
    assert obs.shape == (n, 5 * n + 2 * n)  # egocentric default preset plus [θ, history score]


def test_team_production_nash_of_our_payoff_is_the_closed_form():
    """Best responses on TeamProduction's world payoff (no institutions) reach the Nash aggregate Σa = n·a*_NE.

    Each best response depends on the partners' total only, so every profile with that total is a Nash
    equilibrium; the symmetric one is a*_NE = 34.240.
    """
    from motivegym.experiments.validation import best_response_equilibrium, stage_reward_function

    env, params = motivegym.make_jax("TeamProduction-v0", collective_multipliers=False)
    reward_fn = stage_reward_function(env, params, Private())
    actions, converged, _ = best_response_equilibrium(reward_fn, np.full(4, 10.0), np.zeros(4), params.endowments, max_sweeps=60)
    assert converged
    assert float(np.sum(actions)) == pytest.approx(4 * 34.240, abs=5e-2)
    symmetric, converged, sweeps = best_response_equilibrium(reward_fn, np.full(4, 34.240), np.zeros(4), params.endowments)
    assert converged and sweeps <= 2  # a fixed point: the first sweep moves it by float noise only
    np.testing.assert_allclose(symmetric, 34.240, atol=2e-2)


@pytest.mark.parametrize("env_id", TR3_ENVS)
def test_reference_rewards_are_tr1_utility_times_our_multipliers(env_id):
    """Where semantics agree (trust, collective multipliers) we match Appendix A exactly."""
    env, params = motivegym.make_jax(env_id)
    actions = [c * np.asarray(params.endowments) for c in LEVELS]
    _, params, steps = run(env_id, actions, collective_multipliers=True)
    for t, (step, expected, (mean_trust, mean_damage)) in enumerate(zip(steps, APPENDIX_A_REWARDS[env_id], APPENDIX_A_TRUST), 1):
        info = step["info"]
        reference = reference_integrated_utility(params, step["actions"], info) * np.asarray(info["collective_multiplier"])
        np.testing.assert_allclose(reference, expected, atol=2e-3, err_msg=f"{env_id} t={t}")
        assert float(info["mean_trust"]) == pytest.approx(mean_trust, abs=6e-4)
        assert float(info["mean_reputation_damage"]) == pytest.approx(mean_damage, abs=6e-4)
        assert not bool(step["done"])


def test_team_production_payoff_is_the_team_game_with_light_penalty():
    _, params, steps = run("TeamProduction-v0", [[25.0, 25.0, 25.0, 5.0]])
    step = steps[0]
    q = 25.0 * 80.0**0.7
    expected = q / 4 - np.array([25.0, 25.0, 25.0, 5.0])
    expected[3] *= 0.9  # rate 0.1 < 0.2
    np.testing.assert_allclose(step["payoffs"], expected, rtol=1e-5)
    np.testing.assert_allclose(step["info"]["team_payoffs"], q / 4 - np.array([25.0, 25.0, 25.0, 5.0]), rtol=1e-5)
    np.testing.assert_array_equal(step["info"]["loyalty_scores"], 0.5)  # TeamProduction never updates θ
    assert float(step["info"]["team_output"]) == pytest.approx(q, rel=1e-5)
    assert int(step["info"]["free_rider_count"]) == 1
    env, params = motivegym.make_jax("TeamProduction-v0")
    state, _ = env.reset(jax.random.PRNGKey(0), params)
    assert float(env.describe(state, params)["efficiency_ratio"]) == pytest.approx(20 / 3478.57, rel=1e-4)


def test_scale_payoff_always_penalises_below_one():
    payoffs = jnp.array([10.0, -10.0, 10.0, -10.0])
    scaled = scale_payoff(payoffs, jnp.array([0.5, 0.5, 2.0, 2.0]))
    np.testing.assert_allclose(scaled, [5.0, -20.0, 20.0, -5.0])


def test_loyalty_team_measured_point_and_loyalty_layer():
    """Spec §4.11: a = 30 each → multiplier 1.09·1.2 = 1.308; loyalty-augmented utility 213.74."""
    _, params, steps = run("LoyaltyTeam-v0", [np.full(4, 30.0)])
    step = steps[0]
    info = step["info"]
    np.testing.assert_allclose(info["collective_multiplier"], 1.308, rtol=1e-5)
    np.testing.assert_allclose(info["team_payoffs"] + info["loyalty_modifier"], 213.74, atol=1e-2)
    np.testing.assert_allclose(step["payoffs"], 1.308 * np.asarray(info["team_payoffs"]), rtol=1e-5)
    np.testing.assert_allclose(info["loyalty_scores"], 0.512, rtol=1e-6)  # θ + 0.02·0.6
    transition = Transition(step["obs"], step["actions"], step["payoffs"], step["next_obs"], info["terminated"], info["truncated"], info)
    _, rewards, components = Loyalty().apply((), transition)
    np.testing.assert_allclose(rewards, step["payoffs"] + info["loyalty_modifier"], rtol=1e-6)
    assert set(components) >= {"private", "loyalty"}
    assert float(info["loyalty_lift"]) == pytest.approx((30.0 / 34.240) ** 0.7, rel=1e-4)  # Q(a)/Q(a*_NE·1)
    with pytest.raises(ValueError, match="loyalty_modifier"):
        Loyalty().apply((), Transition(step["obs"], step["actions"], step["payoffs"], step["next_obs"], info["terminated"], info["truncated"], {}))


def test_history_loyalty_score_window_and_free_rider_penalty():
    history, length = jnp.zeros((10, 1)), jnp.int32(0)
    assert float(history_loyalty_score(history, length)[0]) == 0.5
    for rate in [1.0] * 10 + [0.0] * 5:
        history, length = push_rates(history, length, jnp.array([rate]))
    assert float(history_loyalty_score(history, length)[0]) == pytest.approx(0.5)  # last 10 = five 1s, five 0s
    _, _, steps = run("LoyaltyTeam-v0", [[50.0, 50.0, 50.0, 10.0]])
    np.testing.assert_allclose(steps[0]["info"]["collective_multiplier"], [1.15, 1.15, 1.15, 0.5], rtol=1e-5)


def test_coalition_excludes_free_riders_at_step_14_and_readmits_loyal_agents():
    """Spec §4.14/§8: constant (40,40,40,0,0,0) excludes the free riders at step 14 (θ ≈ 0.15⁻)."""
    free_ride = [[40.0, 40.0, 40.0, 0.0, 0.0, 0.0]] * 14
    _, params, steps = run("CoalitionFormation-v0", free_ride)
    sizes = [int(s["info"]["coalition_size"]) for s in steps]
    assert sizes[:13] == [6] * 13 and sizes[13] == 3
    step = steps[13]
    np.testing.assert_array_equal(step["info"]["excluded_agents"], [False, False, False, True, True, True])
    np.testing.assert_allclose(step["info"]["collective_multiplier"], [1.232] * 3 + [0.25] * 3, rtol=1e-5)
    reference = reference_integrated_utility(params, step["actions"], step["info"]) * np.asarray(step["info"]["collective_multiplier"])
    np.testing.assert_allclose(reference[[0, 3]], [205.04, 43.30], atol=1e-2)
    np.testing.assert_array_equal(step["info"]["exclusion_timers"], [0, 0, 0, 4, 4, 4])
    assert np.asarray(step["next_obs"])[0, -6:].tolist() == [1, 1, 1, 0, 0, 0]  # member mask observed
    # all contribute fully afterwards: θ rises 0.02/step from 0.15; re-admitted once θ ≥ 0.4 and the timer ran out
    env, params, steps = run("CoalitionFormation-v0", free_ride + [[50.0] * 6] * 14)
    loyalty = [float(s["info"]["loyalty_scores"][3]) for s in steps]
    members = [bool(s["info"]["coalition_members"][3]) for s in steps]
    first_back = members.index(True, 14)
    assert loyalty[first_back] >= 0.4 and loyalty[first_back - 1] < 0.4
    assert not any(bool(s["done"]) for s in steps)  # exclusion stops at the minimum size


def test_coalition_never_excludes_below_minimum():
    _, _, steps = run("CoalitionFormation-v0", [[0.0] * 6] * 16)
    assert int(steps[-1]["info"]["coalition_size"]) == 3
    np.testing.assert_array_equal(steps[-1]["info"]["coalition_members"], [False, False, False, True, True, True])


def test_public_goods_payoff_and_reference_info():
    env, params = motivegym.make_jax("PublicGoods-v0")
    state, _ = env.reset(jax.random.PRNGKey(0), params)
    info = env.describe(state, params)
    assert float(info["social_efficiency"]) == pytest.approx(0.65, abs=1e-5)
    assert float(info["contribution_rate"]) == pytest.approx(0.40)
    assert float(info["nash_equilibrium"]) == 0.0 and float(info["social_optimum"]) == 50.0
    actions = np.array([50.0, 0.0, 10.0, 20.0, 30.0])
    _, _, steps = run("PublicGoods-v0", [actions])
    np.testing.assert_allclose(steps[0]["payoffs"], 50.0 - actions + 2.0 * actions.sum() / 5, rtol=1e-6)
    assert float(steps[0]["info"]["public_good"]) == pytest.approx(2.0 * actions.sum())


def test_apache_loyalty_capped_by_phase():
    _, params, steps = run("ApacheProject-v0", [np.full(40, 50.0)] * 30)
    assert float(np.max(steps[-1]["info"]["loyalty_scores"])) == pytest.approx(0.70)
    info = steps[0]["info"]
    assert float(info["effort_deviation"]) == pytest.approx(abs(50 - 22) / 22, rel=1e-5)
    assert float(info["validation_accuracy"]) == 0.0


def test_team_payoff_function_matches_formula():
    a = jnp.array([[10.0, 20.0, 30.0]])
    np.testing.assert_allclose(team_payoff(a, 25.0, 0.7, 1.0), 25.0 * 60.0**0.7 / 3 - np.array([[10.0, 20.0, 30.0]]), rtol=1e-6)


@pytest.mark.parametrize("env_id", TR3_ENVS)
def test_jit_vmap_reset_and_step(env_id):
    env, params = motivegym.make_jax(env_id)
    keys = jax.random.split(jax.random.PRNGKey(1), 3)
    states, obs = jax.jit(jax.vmap(env.reset, in_axes=(0, None)))(keys, params)
    n = env.n_agents(params)
    actions = jax.random.uniform(keys[0], (3, n), maxval=50.0)
    states, next_obs, payoffs, done, info = jax.jit(jax.vmap(env.step, in_axes=(0, 0, 0, None)))(keys, states, actions, params)
    assert payoffs.shape == (3, n) and next_obs.shape == obs.shape
    assert info["interdependence_weights"].shape == (3, n, n)
    assert bool(jnp.all(jnp.isfinite(payoffs)))
