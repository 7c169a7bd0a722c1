"""Frozen dataclasses that are JAX pytrees (params and state of every env and layer)."""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

import jax

T = TypeVar("T")


def static_field(default: Any = dataclasses.MISSING, **kwargs: Any) -> Any:
    """A dataclass field that is part of the pytree structure (hashable, not traced)."""
    metadata = dict(kwargs.pop("metadata", {}) or {})
    metadata["static"] = True
    return dataclasses.field(default=default, metadata=metadata, **kwargs)


def pytree_dataclass(cls: type[T]) -> type[T]:
    """Make ``cls`` a frozen dataclass registered as a pytree.

    Fields created with :func:`static_field` become metadata (they select shapes and code paths);
    all others are array leaves, so params and states can be jitted, vmapped and scanned.
    """
    cls = dataclasses.dataclass(frozen=True)(cls)
    fields = dataclasses.fields(cls)
    meta = [f.name for f in fields if f.metadata.get("static", False)]
    data = [f.name for f in fields if not f.metadata.get("static", False)]
    jax.tree_util.register_dataclass(cls, data_fields=data, meta_fields=meta)
    return cls


def replace(obj: T, **changes: Any) -> T:
    """``dataclasses.replace`` for pytree dataclasses."""
    return dataclasses.replace(obj, **changes)
