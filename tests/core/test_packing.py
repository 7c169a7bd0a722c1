import jax
import jax.numpy as jnp
import numpy as np

from motivegym.core.packing import HostUnpacker, TreePacker


def test_tree_packer_round_trip_is_bit_exact():
    tree = {
        "x": jnp.array([[1.5, -0.0], [np.nan, 3e-38]], jnp.float32),
        "t": jnp.int32(-7),
        "flag": jnp.array([True, False, True]),
        "key": jax.random.PRNGKey(2**31 + 5),
        "small": jnp.array([-3, 4], jnp.int8),
    }
    packer = TreePacker(tree)
    buffer = jax.jit(packer.pack)(tree)
    assert buffer.dtype == jnp.uint32 and buffer.ndim == 1
    back = jax.jit(packer.unpack)(buffer)
    for name in tree:
        assert back[name].dtype == tree[name].dtype
        np.testing.assert_array_equal(np.atleast_1d(np.asarray(back[name])).view(np.uint8), np.atleast_1d(np.asarray(tree[name])).view(np.uint8))


def test_host_unpacker_restores_dtypes_and_batches():
    tree = {"obs": jnp.arange(6.0).reshape(2, 3), "done": jnp.bool_(True), "step": jnp.int32(12), "v": jnp.ones(2)}
    unpacker = HostUnpacker(tree)
    out = unpacker.to_numpy(jax.jit(unpacker.flatten)(tree))
    assert out["done"] == True and out["step"] == 12 and out["step"].dtype == np.int32  # noqa: E712
    np.testing.assert_array_equal(out["obs"], np.arange(6.0).reshape(2, 3))
    batched = jax.vmap(unpacker.flatten)(jax.tree.map(lambda x: jnp.stack([x, x]), tree))
    out = unpacker.to_numpy(batched, (2,))
    assert out["obs"].shape == (2, 2, 3) and out["done"].shape == (2,) and out["done"].dtype == bool
