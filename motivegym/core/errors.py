"""Errors with the list of valid names: nothing is silently ignored."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def unknown_names_error(kind: str, unknown: Iterable[str], valid: Iterable[str], where: str) -> ValueError:
    """Build the ``ValueError`` raised for unknown keyword arguments or names."""
    valid = sorted(set(valid))
    parts = []
    for name in sorted(unknown):
        close = difflib.get_close_matches(name, valid, n=1)
        parts.append(f"{name!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    return ValueError(f"{where}: unknown {kind} {', '.join(parts)}. Valid {kind}s: {', '.join(valid)}.")


def check_names(kind: str, given: Iterable[str], valid: Iterable[str], where: str) -> None:
    """Raise :func:`unknown_names_error` if any of ``given`` is not in ``valid``."""
    valid = set(valid)
    unknown = [g for g in given if g not in valid]
    if unknown:
        raise unknown_names_error(kind, unknown, valid, where)
