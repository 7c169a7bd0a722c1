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
