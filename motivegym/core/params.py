"""Keyword overrides of an env's params dataclass: unknown names raise, array fields keep their shape."""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

import jax.numpy as jnp

from motivegym.core.errors import check_names

P = TypeVar("P")


def override_params(params: P, overrides: dict[str, Any], where: str, extra_valid: tuple[str, ...] = ()) -> P:
    """``params`` with ``overrides`` applied.

    Unknown names raise ``ValueError`` listing the valid ones; array fields are converted to their
    current dtype and must keep their shape; static fields (``static_field``) are taken as given and
    are the env's to validate. ``extra_valid`` names keywords the env consumed itself (listed in the error).
    """
    fields = {f.name: f for f in dataclasses.fields(params)}  # type: ignore[arg-type]
    check_names("keyword argument", overrides, [*fields, *extra_valid], where)
    changes: dict[str, Any] = {}
    for name, value in overrides.items():
        if fields[name].metadata.get("static"):
            changes[name] = value
            continue
        current = jnp.asarray(getattr(params, name))
        new = jnp.asarray(value, dtype=current.dtype)
        if new.shape != current.shape:
            raise ValueError(f"{where}: {name} must have shape {current.shape}, got {new.shape}")
        changes[name] = new
    return dataclasses.replace(params, **changes)  # type: ignore[type-var]
