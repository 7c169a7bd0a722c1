import jax
import jax.numpy as jnp
import numpy as np
import pytest

from motivegym.core.env import Transition
from motivegym.reward_layers import LayerSpec, WeightedSum, cooperative, integrated, mutuality, private, reward_layer

PAYOFFS = jnp.array([10.0, 20.0, 60.0])
W = jnp.array([[0.0, 0.5, 0.0], [0.2, 0.0, 0.2], [0.0, 0.0, 0.0]])


def transition(info=True):
    return Transition(
        obs=jnp.zeros((3, 2)),
        actions=jnp.zeros(3),
        payoffs=PAYOFFS,
        next_obs=jnp.zeros((3, 2)),
        terminated=jnp.bool_(False),
        truncated=jnp.bool_(False),
        info={"interdependence_weights": W} if info else {},
    )


def apply(layer, t=None):
    state = layer.init(jax.random.PRNGKey(0), LayerSpec(3, 2))
    return layer.apply(state, t or transition())


def test_private_integrated_cooperative_formulas():
    np.testing.assert_allclose(apply(private())[1], PAYOFFS)
    _, rewards, parts = apply(integrated())
    np.testing.assert_allclose(rewards, [10 + 0.5 * 20, 20 + 0.2 * 10 + 0.2 * 60, 60])
    np.testing.assert_allclose(parts["partner"], [10, 14, 0])
    np.testing.assert_allclose(apply(cooperative())[1], [30, 30, 30])
    np.testing.assert_allclose(apply(cooperative("mean_integrated"))[1], [(20 + 34 + 60) / 3] * 3)


def test_mutuality_is_a_dial_between_private_and_cooperative():
    np.testing.assert_allclose(apply(mutuality(0.0))[1], apply(private())[1])
    np.testing.assert_allclose(apply(mutuality(1.0))[1], apply(cooperative())[1])
    np.testing.assert_allclose(apply(mutuality(0.25))[1], 0.75 * PAYOFFS + 0.25 * 30)
    with pytest.raises(ValueError):
        mutuality(1.5)


def test_weighted_sum_components_and_parsing():
    layer = integrated() + 0.5 * private()
    assert isinstance(layer, WeightedSum)
    _, rewards, parts = apply(layer)
    np.testing.assert_allclose(rewards, apply(integrated())[1] + 0.5 * PAYOFFS)
    assert set(parts) >= {"integrated", "integrated.partner", "private", "private.payoff"}
    np.testing.assert_allclose(parts["private"], 0.5 * PAYOFFS)
    _, _, twice = apply(private() + private())
    assert {"private#0", "private#1"} <= set(twice)
    assert reward_layer("mutuality:0.3") == mutuality(0.3)
    assert reward_layer("cooperative:mean_integrated") == cooperative("mean_integrated")
    with pytest.raises(ValueError, match="did you mean 'private'"):
        reward_layer("privat")
    with pytest.raises(ValueError, match="needs a number"):
        reward_layer("mutuality")
    with pytest.raises(ValueError, match="variant"):
        reward_layer("cooperative:sum")


def test_integrated_needs_interdependence_info():
    with pytest.raises(ValueError, match="interdependence_weights"):
        apply(integrated(), transition(info=False))


def test_layers_are_jit_and_vmap_safe():
    layer = integrated() + 0.1 * mutuality(0.5)
    batch = jax.tree.map(lambda x: jnp.stack([x, 2 * x]) if x.dtype != bool else jnp.stack([x, x]), transition())
    state = jax.vmap(lambda k: layer.init(k, LayerSpec(3, 2)))(jax.random.split(jax.random.PRNGKey(0), 2))
    _, rewards, _ = jax.jit(jax.vmap(layer.apply))(state, batch)
    assert rewards.shape == (2, 3)


def test_inequity_aversion_penalises_envy_and_guilt_on_smoothed_payoffs():
    from motivegym.reward_layers import inequity_aversion

    layer = inequity_aversion(envy=1.0, guilt=0.5, smoothing=0.5)
    state, rewards, parts = apply(layer)
    # payoffs 10, 20, 60: envy of agent 0 = (10 + 50) / 2, guilt of agent 2 = 0.5 (50 + 40) / 2
    np.testing.assert_allclose(parts["envy"], [-30, -20, 0])
    np.testing.assert_allclose(parts["guilt"], [0, -0.5 * 10 / 2, -0.5 * 90 / 2])
    np.testing.assert_allclose(rewards, PAYOFFS + parts["envy"] + parts["guilt"])
    np.testing.assert_allclose(state, PAYOFFS)
    state, *_ = layer.apply(state, transition())
    np.testing.assert_allclose(state, 1.5 * PAYOFFS)  # e ← 0.5 e + π
    ended = Transition(**{**transition().__dict__, "truncated": jnp.bool_(True)})
    state, *_ = layer.apply(state, ended)
    np.testing.assert_allclose(state, 0.0)  # smoothing restarts with the next episode


def test_equal_payoffs_carry_no_inequity_penalty():
    from motivegym.reward_layers import inequity_aversion

    equal = Transition(**{**transition().__dict__, "payoffs": jnp.full(3, 7.0)})
    _, rewards, _ = apply(inequity_aversion(), equal)
    np.testing.assert_allclose(rewards, 7.0)


def test_svo_rewards_the_target_angle():
    from motivegym.reward_layers import svo

    _, rewards, parts = apply(svo(target_degrees=45.0, weight=1.0))
    others = np.array([40.0, 35.0, 15.0])  # mean payoff of the two partners
    angles = np.degrees(np.arctan2(others, np.asarray(PAYOFFS)))
    np.testing.assert_allclose(parts["svo"], -np.abs(45.0 - angles), rtol=1e-5)
    equal = Transition(**{**transition().__dict__, "payoffs": jnp.full(3, 5.0)})
    np.testing.assert_allclose(apply(svo(45.0, 1.0), equal)[1], 5.0, atol=1e-4)  # equal split sits at 45°
    np.testing.assert_allclose(apply(svo(0.0, 1.0), equal)[1], 5.0 - 45.0, atol=1e-4)


def test_social_layers_parse_from_strings_and_reject_bad_arguments():
    assert reward_layer("svo:90,0.2").target_degrees == 90.0
    assert reward_layer("inequity_aversion:5,0.05").guilt == 0.05
    with pytest.raises(ValueError, match="comma-separated"):
        reward_layer("svo:1,2,3")
    with pytest.raises(ValueError, match="envy"):
        reward_layer("inequity_aversion:-1")


@pytest.mark.parametrize(
    ("spec", "argument"),
    [
        ("svo:45,nan", "weight"),
        ("svo:nan", "target_degrees"),
        ("svo:200", "target_degrees"),
        ("svo:45,-1", "weight"),
        ("inequity_aversion:nan", "envy"),
        ("inequity_aversion:5,inf", "guilt"),
        ("inequity_aversion:5,0.05,nan", "smoothing"),
        ("inequity_aversion:5,0.05,1", "smoothing"),
        ("mutuality:nan", "rho"),
        ("mutuality:-inf", "rho"),
        ("nan*private", "weight"),
        ("1e400*private", "weight"),
        ("private+1e39*integrated", "weight"),
        ("loyalty:nan*private", "weight"),
    ],
)
def test_non_finite_or_out_of_range_layer_arguments_raise_naming_them(spec, argument):
    with pytest.raises(ValueError, match=rf"{argument}=\S+ is invalid: {argument} must be"):
        reward_layer(spec)


def test_python_api_checks_the_same_arguments():
    from motivegym.reward_layers import Loyalty, inequity_aversion, svo

    bad = (lambda: svo(45.0, float("nan")), lambda: inequity_aversion(float("inf")), lambda: float("nan") * private(), lambda: mutuality(2))
    for make in bad:
        with pytest.raises(ValueError, match="is invalid"):
            make()
    with pytest.raises(ValueError, match="base must be a reward layer"):
        Loyalty("private")
    assert svo(45, 0) == svo(45.0, 0.0) and (2 * private()).terms[0][0] == 2.0


def test_deep_nesting_raises_a_value_error_not_a_recursion_error():
    from motivegym.reward_layers import Loyalty, Private
    from motivegym.reward_layers.motives import MAX_NESTING

    assert reward_layer("loyalty:" * MAX_NESTING + "private").name == "loyalty"
    deep = ("loyalty:" * 2000 + "private", "reciprocity:" * (MAX_NESTING + 1) + "integrated", "loyalty:0.5*" * 2000 + "private")
    for spec in deep:
        with pytest.raises(ValueError, match=f"more than {MAX_NESTING} nested motive layers"):
            reward_layer(spec)
    layer = Private()
    with pytest.raises(ValueError, match="nested more than"):
        for _ in range(MAX_NESTING + 1):
            layer = Loyalty(layer)
    assert len(reward_layer("+".join(["private"] * 3000)).terms) == 3000  # long sums are fine (and fast)
