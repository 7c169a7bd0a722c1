"""TR-4 reciprocity envs (spec §1.10, §4.17–§4.22): memory, Eq. 44 terms, reference rewards via the layer, batching."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import motivegym
from motivegym.core.env import Transition
from motivegym.envs.coopetition.reciprocity import memory_average, push_actions, reciprocity_sensitivity
from motivegym.reward_layers import Integrated, Private
from motivegym.reward_layers.motives import Reciprocity

TR4_ENVS = ["ReciprocalDilemma-v0", "GiftExchange-v0", "IndirectReciprocity-v0", "GraduatedSanction-v0", "AppleAppStore-v0"]
LEVELS = (0.5, 0.5, 0.5, 0.2, 0.6)
#: spec Appendix A: (rewards of the first ≤ 3 agents; one value = all equal) per step, then (mean T, mean R)
APPENDIX_A = {
    "ReciprocalDilemma-v0": [[185.391], [187.990], [190.924], [176.205], [170.321]],
    "GiftExchange-v0": [[172.012, 185.405], [173.827, 188.437], [175.913, 192.495], [166.578, 164.395], [160.365, 165.372]],
    "IndirectReciprocity-v0": [[229.182], [234.409], [241.056], [211.829], [196.662]],
    "GraduatedSanction-v0": [[265.263], [273.636], [283.137], [241.687], [220.141]],
    "AppleAppStore-v0": [
        [175.047, 205.473, 191.811], [176.501, 207.774, 194.249], [178.389, 211.849, 198.422],
        [166.935, 175.131, 155.548], [155.667, 169.922, 157.345],
    ],
}
TRUST = {
    "default": [(0.55, 0.0), (0.5950, 0.0), (0.6355, 0.0), (None, 0.6), (None, 0.582)],
    "AppleAppStore-v0": [(0.64, 0.0), (0.676, 0.0), (0.7084, 0.0), (0.4534, 0.6), (0.4, 0.582)],
}
FOURTH_STEP_TRUST = {"ReciprocalDilemma-v0": 0.3972, "GiftExchange-v0": 0.3924, "IndirectReciprocity-v0": 0.4067, "GraduatedSanction-v0": 0.4115}


def rollout(env_id, actions, layer=None, **overrides):
    env, params = motivegym.make_jax(env_id, **overrides)
    layer = layer or Reciprocity(Integrated())
    key = jax.random.PRNGKey(0)
    state, obs = env.reset(key, params)
    step = jax.jit(env.step)
    out = []
    for a in actions:
        a = jnp.asarray(a, jnp.float32)
        next_state, next_obs, payoffs, done, info = step(key, state, a, params)
        transition = Transition(obs, a, payoffs, next_obs, info["terminated"], info["truncated"], info)
        _, rewards, components = layer.apply(layer.init(key, None), transition)
        out.append({"rewards": np.asarray(rewards), "payoffs": np.asarray(payoffs), "info": info, "obs": next_obs, "done": bool(done), "components": components})
        state, obs = next_state, next_obs
    return env, params, out


def test_reciprocal_dilemma_reference_rewards_with_reference_memory():
    """Spec §4.17: (50,50), (50,50), (60,40) → (185.391²), (187.990²), (185.095, 194.888)."""
    _, _, steps = rollout("ReciprocalDilemma-v0", [(50, 50), (50, 50), (60, 40)], memory_includes_current=True)
    np.testing.assert_allclose(steps[0]["rewards"], [185.391, 185.391], atol=2e-3)
    np.testing.assert_allclose(steps[1]["rewards"], [187.990, 187.990], atol=2e-3)
    np.testing.assert_allclose(steps[2]["rewards"], [185.095, 194.888], atol=2e-3)
    np.testing.assert_allclose(steps[0]["info"]["reciprocity_modifier"], 1.003575, atol=1e-6)
    np.testing.assert_allclose(steps[1]["info"]["cooperation_signals"], 0.0)  # t=2: window = current action only
    np.testing.assert_allclose(steps[2]["info"]["memory_averages"], [55.0, 45.0])
    np.testing.assert_allclose(steps[2]["info"]["cooperation_signals"], [[0.0, -5.0], [5.0, 0.0]])
    # the payoff is the world's TR-1 π; reciprocity is only in the layer
    _, _, private = rollout("ReciprocalDilemma-v0", [(60, 40)], Private())
    np.testing.assert_allclose(private[0]["rewards"], private[0]["payoffs"])


def test_paper_memory_excludes_the_current_action():
    _, _, steps = rollout("ReciprocalDilemma-v0", [(50, 50), (70, 30), (60, 40)])
    np.testing.assert_allclose(steps[0]["info"]["memory_averages"], [0.0, 0.0])
    np.testing.assert_allclose(steps[1]["info"]["memory_averages"], [50.0, 50.0])
    np.testing.assert_allclose(steps[1]["info"]["cooperation_signals"], [[0.0, -20.0], [20.0, 0.0]])
    np.testing.assert_allclose(steps[2]["info"]["memory_averages"], [60.0, 40.0])
    np.testing.assert_allclose(np.asarray(steps[2]["obs"])[0, -2:], [60.0, 40.0])  # next step's memory is observed


def reference_memory(history, window, include_current):
    """Plain-Python memory averages over a list of joint actions (spec §1.10)."""
    t = len(history)
    previous = history[:-1]
    w = min(window, t - 1)
    if w <= 0:
        return np.zeros(len(history[-1]))
    source = history if include_current else previous
    return np.mean(source[-w:], axis=0)


@pytest.mark.parametrize("include_current", [False, True])
def test_ring_buffer_memory_matches_the_definition_past_the_window(include_current):
    rng = np.random.default_rng(0)
    actions = rng.uniform(0, 100, size=(9, 2)).astype(np.float32)
    buffer, length = jnp.zeros((3, 2)), jnp.int32(0)
    for t in range(len(actions)):
        got = memory_average(buffer, length, jnp.asarray(actions[t]), include_current)
        np.testing.assert_allclose(got, reference_memory(list(actions[: t + 1]), 3, include_current), rtol=1e-5, err_msg=f"t={t}")
        buffer, length = push_actions(buffer, length, jnp.asarray(actions[t]))


@pytest.mark.parametrize("env_id", TR4_ENVS)
def test_appendix_a_rewards_and_trust(env_id):
    env, params = motivegym.make_jax(env_id)
    actions = [c * np.asarray(params.endowments) for c in LEVELS]
    for include_current in (True, False):  # the signals saturate here, so both memory forms agree
        _, _, steps = rollout(env_id, actions, memory_includes_current=include_current)
        trust = TRUST.get(env_id, TRUST["default"])
        for t, (step, expected, (mean_t, mean_r)) in enumerate(zip(steps, APPENDIX_A[env_id], trust), 1):
            expected = np.resize(np.asarray(expected), min(3, len(step["rewards"])))
            np.testing.assert_allclose(step["rewards"][: len(expected)], expected, atol=2e-3, err_msg=f"{env_id} t={t}")
            mean_t = FOURTH_STEP_TRUST.get(env_id) if mean_t is None and t == 4 else mean_t
            if mean_t is not None:
                assert float(step["info"]["mean_trust"]) == pytest.approx(mean_t, abs=6e-4)
            assert float(step["info"]["mean_reputation_damage"]) == pytest.approx(mean_r, abs=6e-4)
            assert not step["done"]


def test_sensitivities_and_configuration_table():
    gift = np.array([[0.0, 0.4], [0.7, 0.0]])
    np.testing.assert_allclose(reciprocity_sensitivity(jnp.asarray(gift), 1.2, 1.5), [[0, 0.3036], [0.7028, 0]], atol=1e-4)
    env, params = motivegym.make_jax("AppleAppStore-v0")
    rho = np.asarray(reciprocity_sensitivity(params.interdependence, params.rho_0, params.eta))
    np.testing.assert_allclose(rho[[0, 0, 1, 1, 2, 2], [1, 2, 0, 2, 0, 1]], [0.2358, 0.1450, 0.7651, 0.1026, 0.8228, 0.0631], atol=1e-4)
    assert env.agent_names(params) == ("Apple", "MajorDevelopers", "SmallDevelopers")
    assert float(params.trust.initial_trust) == pytest.approx(0.60) and int(params.max_steps) == 66
    _, gift_params = motivegym.make_jax("GiftExchange-v0")
    assert env.action_bounds(gift_params)[1].tolist() == [100.0, 80.0]
    horizons = {e: int(motivegym.make_jax(e)[1].max_steps) for e in TR4_ENVS}
    assert horizons == {"ReciprocalDilemma-v0": 100, "GiftExchange-v0": 100, "IndirectReciprocity-v0": 150, "GraduatedSanction-v0": 200, "AppleAppStore-v0": 66}


def test_reset_info_and_negative_reciprocity():
    env, params = motivegym.make_jax("GraduatedSanction-v0")
    state, obs = env.reset(jax.random.PRNGKey(0), params)
    info = env.describe(state, params)
    np.testing.assert_array_equal(info["reciprocity_modifier"], 1.0)
    np.testing.assert_array_equal(info["cooperation_signals"], 0.0)
    assert int(info["tr4_memory_window"]) == 10
    # a partner that drops far below its memory lowers everyone else's modifier, not its own
    actions = [np.full(6, 60.0)] * 3 + [np.array([0.0] + [60.0] * 5)]
    _, _, steps = rollout("GraduatedSanction-v0", actions)
    modifier = np.asarray(steps[-1]["info"]["reciprocity_modifier"])
    assert modifier[0] == pytest.approx(1.0, abs=1e-6) and np.all(modifier[1:] < 1.0)


def test_apple_phase_index():
    env, params = motivegym.make_jax("AppleAppStore-v0")
    _, _, steps = rollout("AppleAppStore-v0", [np.asarray(params.baselines)] * 18)
    phases = [int(s["info"]["phase_index"]) for s in steps]
    assert phases[:16] == [0] * 16 and phases[16:] == [1, 1]


def test_reciprocity_layer_needs_the_modifier():
    _, _, steps = rollout("TrustDilemma-v0", [(50, 50)], Private())
    info = dict(steps[0]["info"])
    transition = Transition(steps[0]["obs"], jnp.zeros(2), jnp.asarray(steps[0]["payoffs"]), steps[0]["obs"], False, False, info)
    with pytest.raises(ValueError, match="reciprocity_modifier"):
        Reciprocity().apply((), transition)


@pytest.mark.parametrize("env_id", TR4_ENVS)
def test_jit_vmap_reset_and_step(env_id):
    env, params = motivegym.make_jax(env_id)
    keys = jax.random.split(jax.random.PRNGKey(1), 4)
    states, obs = jax.jit(jax.vmap(env.reset, in_axes=(0, None)))(keys, params)
    n = env.n_agents(params)
    actions = jax.random.uniform(keys[0], (4, n), maxval=100.0)
    step = jax.jit(jax.vmap(env.step, in_axes=(0, 0, 0, None)))
    states, next_obs, payoffs, done, info = step(keys, states, actions, params)
    states, next_obs, payoffs, done, info = step(keys, states, actions * 0.5, params)
    assert payoffs.shape == (4, n) and next_obs.shape == obs.shape
    assert info["reciprocity_effects"].shape == (4, n, n)
    assert bool(jnp.all(info["reciprocity_modifier"] >= 0.01))
    np.testing.assert_array_equal(states.extra["history_length"], 2)
