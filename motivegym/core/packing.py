"""Pack pytrees into a few flat arrays so a host-side step is one cheap jitted call.

Dispatch cost of a jitted call grows with the number of argument and result arrays; adapters
therefore carry the whole (env state, layer state, key) as one flat ``uint32`` buffer and read all
results back as one float32 buffer that is sliced on the host.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

Array = jax.Array


def _to_words(leaf: Array) -> Array:
    """Ravel a leaf into uint32 words: 32-bit types bit-exactly, narrower types by value."""
    flat = jnp.ravel(leaf)
    if flat.dtype.itemsize == 4:
        return jax.lax.bitcast_convert_type(flat, jnp.uint32)
    if flat.dtype.itemsize < 4:
        return flat.astype(jnp.int32).view(jnp.uint32) if jnp.issubdtype(flat.dtype, jnp.signedinteger) else flat.astype(jnp.uint32)
    raise TypeError(f"cannot pack 64-bit leaves ({flat.dtype}); motivegym runs in 32-bit mode")


def _from_words(words: Array, dtype: jnp.dtype) -> Array:
    if dtype.itemsize == 4:
        return jax.lax.bitcast_convert_type(words, dtype)
    if jnp.issubdtype(dtype, jnp.signedinteger):
        return jax.lax.bitcast_convert_type(words, jnp.int32).astype(dtype)
    return words.astype(dtype)


class TreePacker:
    """Pack a pytree with fixed shapes into one flat ``uint32`` buffer (inside jit) and back, bit-exactly."""

    def __init__(self, example: Any):
        leaves, self.treedef = jax.tree.flatten(example)
        self.shapes = [tuple(leaf.shape) for leaf in leaves]
        self.dtypes = [jnp.dtype(leaf.dtype) for leaf in leaves]
        sizes = [int(np.prod(s, dtype=np.int64)) for s in self.shapes]
        self.bounds = np.cumsum([0] + sizes).tolist()

    def pack(self, tree: Any) -> Array:
        leaves = jax.tree.leaves(tree)
        return jnp.concatenate([_to_words(leaf) for leaf in leaves] or [jnp.zeros(0, jnp.uint32)])

    def unpack(self, buffer: Array) -> Any:
        leaves = [
            _from_words(buffer[self.bounds[k] : self.bounds[k + 1]], dtype).reshape(shape)
            for k, (shape, dtype) in enumerate(zip(self.shapes, self.dtypes))
        ]
        return self.treedef.unflatten(leaves)


class HostUnpacker:
    """Flatten a result pytree to one float32 buffer (inside jit); rebuild numpy arrays on the host.

    Leaves are laid out grouped by dtype so the host converts each group with one ``astype`` and
    then takes views. Integers and booleans are exact in float32 up to 2**24 (far above step counts).
    """

    def __init__(self, example: Any):
        leaves, self.treedef = jax.tree.flatten(example)
        dtypes = [np.dtype(leaf.dtype) for leaf in leaves]
        self.shapes = [tuple(leaf.shape) for leaf in leaves]
        self.order = sorted(range(len(leaves)), key=lambda k: (str(dtypes[k]) != "float32", str(dtypes[k])))
        sizes = [int(np.prod(s, dtype=np.int64)) for s in self.shapes]
        self.groups: list[tuple[np.dtype, int, int]] = []  # (dtype, start, stop) in the flat buffer
        self.leaf_slices: list[tuple[int, int, int]] = [(0, 0, 0)] * len(leaves)  # (group, start, stop) per leaf
        offset = 0
        for k in self.order:
            if not self.groups or self.groups[-1][0] != dtypes[k]:
                self.groups.append((dtypes[k], offset, offset))
            group_index = len(self.groups) - 1
            dtype, start, _ = self.groups[group_index]
            self.leaf_slices[k] = (group_index, offset - start, offset - start + sizes[k])
            offset += sizes[k]
            self.groups[group_index] = (dtype, start, offset)

    def flatten(self, tree: Any) -> Array:
        leaves = jax.tree.leaves(tree)
        return jnp.concatenate([jnp.ravel(leaves[k]).astype(jnp.float32) for k in self.order])

    def to_numpy(self, buffer: Any, batch_shape: tuple[int, ...] = ()) -> Any:
        flat = np.asarray(buffer)
        groups = [flat[..., a:b] if dtype is None else flat[..., a:b].astype(dtype) for dtype, a, b in self._host_groups]
        if batch_shape:
            leaves = [groups[g][..., a:b].reshape(batch_shape + shape) for shape, (g, a, b) in zip(self.shapes, self.leaf_slices)]
            return self.treedef.unflatten(leaves)
        # single env: slice every group with one C-level itemgetter call, then restore leaf order
        sorted_leaves: list = []
        for group, take in zip(groups, self._group_getters):
            sorted_leaves.extend(take(group))
        leaves = list(self._restore_order(sorted_leaves))
        for k, shape in self._matrix_leaves:
            leaves[k] = leaves[k].reshape(shape)
        return self.treedef.unflatten(leaves)

    @functools.cached_property
    def _host_groups(self) -> list[tuple[np.dtype | None, int, int]]:
        """``self.groups`` with ``None`` for float32 (no conversion needed)."""
        return [(None if dtype == np.float32 else dtype, a, b) for dtype, a, b in self.groups]

    @functools.cached_property
    def _group_getters(self) -> list[Callable]:
        """Per dtype group, a getter returning its leaves (scalars by index, arrays as views)."""
        per_group: list[list] = [[] for _ in self.groups]
        for k in self.order:
            g, a, b = self.leaf_slices[k]
            per_group[g].append(a if not self.shapes[k] else slice(a, b))
        return [_tuple_getter(items) for items in per_group]

    @functools.cached_property
    def _restore_order(self) -> Callable:
        position = {k: i for i, k in enumerate(self.order)}
        return _tuple_getter([position[k] for k in range(len(self.order))])

    @functools.cached_property
    def _matrix_leaves(self) -> list[tuple[int, tuple[int, ...]]]:
        return [(k, shape) for k, shape in enumerate(self.shapes) if len(shape) > 1]


def _tuple_getter(items: list) -> Callable:
    """``operator.itemgetter`` that always returns a tuple (also for zero or one item)."""
    if len(items) == 1:
        single = items[0]
        return lambda seq: (seq[single],)
    if not items:
        return lambda seq: ()
    return operator.itemgetter(*items)
