import jax
import jax.numpy as jnp
import numpy as np
import pytest

from motivegym.baselines.networks import mlp_apply, mlp_init, orthogonal_init


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
