import jax
import numpy as np
import pytest


def _assert_trees_equal(a, b) -> None:
    """Same tree structure and bit-identical leaves."""
    leaves_a, tree_a = jax.tree.flatten(a)
    leaves_b, tree_b = jax.tree.flatten(b)
    assert tree_a == tree_b
    for x, y in zip(leaves_a, leaves_b):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


@pytest.fixture
def assert_trees_equal():
    return _assert_trees_equal
