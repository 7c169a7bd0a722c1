import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.scipy.special import betaln
from jax.scipy.stats import beta as beta_distribution

from motivegym.baselines.networks import beta_entropy, beta_log_prob, log_beta_function, mlp_apply, mlp_init, orthogonal_init


@pytest.mark.parametrize("fan_in, fan_out", [(64, 64), (300, 64), (64, 5), (3, 64), (64, 1)])
def test_orthogonal_init_is_jax_orthogonal_initializer_for_the_same_key(fan_in, fan_out):
    key = jax.random.PRNGKey(fan_in * 1000 + fan_out)
    ours = orthogonal_init(key, fan_in, fan_out, 2.0)
    reference = jax.nn.initializers.orthogonal(2.0)(key, (fan_in, fan_out), jnp.float32)
    np.testing.assert_allclose(ours, reference, atol=1e-5)
    small = min(fan_in, fan_out)
    gram = ours.T @ ours if fan_in >= fan_out else ours @ ours.T
    np.testing.assert_allclose(gram, 4.0 * np.eye(small), atol=1e-4)


def test_vmapped_network_init_has_no_lapack_call():
    # a batched LAPACK QR waits on XLA's intra-op pool from inside it and deadlocks a 2-thread machine
    keys = jax.random.split(jax.random.PRNGKey(0), 4)
    lowered = jax.jit(jax.vmap(lambda k: mlp_init(k, (40, 64, 64, 3)))).lower(keys)
    assert "custom_call" not in lowered.as_text()
    layers = lowered.compile()(keys)
    assert [layer["w"].shape for layer in layers] == [(4, 40, 64), (4, 64, 64), (4, 64, 3)]
    assert not np.allclose(layers[0]["w"][0], layers[0]["w"][1])  # one draw per key


def test_agent_conditioned_mlp_equals_the_mlp_on_the_input_with_the_agent_one_hot():
    from motivegym.baselines.networks import agent_conditioned_mlp

    n, d = 5, 7
    layers = mlp_init(jax.random.PRNGKey(0), (d + n, 16, 16, 3))
    layers[0]["b"] = jax.random.normal(jax.random.PRNGKey(2), (16,))
    x = jax.random.normal(jax.random.PRNGKey(1), (4, n, d))
    with_ids = jnp.concatenate([x, jnp.broadcast_to(jnp.eye(n), (4, n, n))], axis=-1)
    np.testing.assert_allclose(agent_conditioned_mlp(layers, x), mlp_apply(layers, with_ids), rtol=1e-5, atol=1e-5)
    # one input shared by every agent (a centralised critic on the global state)
    shared = x[:, :1]
    expected = mlp_apply(layers, jnp.concatenate([jnp.broadcast_to(shared, (4, n, d)), with_ids[..., d:]], axis=-1))
    np.testing.assert_allclose(agent_conditioned_mlp(layers, shared), expected, rtol=1e-5, atol=1e-5)
    # agents differ only through their one-hot rows
    assert not np.allclose(agent_conditioned_mlp(layers, shared)[:, 0], agent_conditioned_mlp(layers, shared)[:, 1])


def test_log_beta_function_value_and_gradient_match_betaln_autodiff():
    a = jnp.array([1.0, 1.5, 3.0, 40.0, 900.0])
    b = jnp.array([1.0, 7.0, 0.5, 2.5, 30.0])
    np.testing.assert_array_equal(log_beta_function(a, b), betaln(a, b))
    ours = jax.vmap(jax.grad(log_beta_function, argnums=(0, 1)))(a, b)
    autodiff = jax.vmap(jax.grad(betaln, argnums=(0, 1)))(a, b)
    np.testing.assert_allclose(ours, autodiff, rtol=2e-4, atol=1e-6)


def test_beta_log_prob_and_entropy_match_scipy_beta():
    import scipy.stats

    alpha, beta, x = jnp.array([1.0, 2.0, 5.5]), jnp.array([3.0, 2.0, 1.2]), jnp.array([0.2, 0.5, 0.9])
    np.testing.assert_allclose(beta_log_prob(alpha, beta, x), beta_distribution.logpdf(x, alpha, beta), rtol=1e-5)
    np.testing.assert_allclose(
        beta_entropy(alpha, beta), scipy.stats.beta(np.asarray(alpha), np.asarray(beta)).entropy(), rtol=1e-5, atol=1e-6
    )
