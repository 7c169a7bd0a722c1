"""Errors with the list of valid names: nothing is silently ignored."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

#: the ``kind`` whose unknown names raise :class:`UnexpectedKeywordError` rather than a plain ``ValueError``
KEYWORD_ARGUMENT = "keyword argument"


class UnexpectedKeywordError(TypeError, ValueError):
    """An unknown keyword argument: both ``TypeError`` (what Python raises for a bad keyword, and what tools
    that probe optional keywords catch, e.g. TorchRL's ``GymEnv`` trying ``frameskip``) and ``ValueError``
    (what motivegym raises for every refused name). The message starts like Python's own,
    ``... got an unexpected keyword argument 'x'``, and lists the valid names."""


def name_hints(unknown: Iterable[str], valid: list[str]) -> str:
    """``'rewrd' (did you mean 'reward'?), 'x'``: each unknown name with its closest valid one, if any."""
    parts = []
    for name in sorted(unknown):
        close = difflib.get_close_matches(name, valid, n=1)
        parts.append(f"{name!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    return ", ".join(parts)


def unknown_names_error(kind: str, unknown: Iterable[str], valid: Iterable[str], where: str) -> ValueError:
    """The error raised for unknown names; unknown keyword arguments get :class:`UnexpectedKeywordError`."""
    unknown, valid = sorted(unknown), sorted(set(valid))
    listing = f"unknown {kind} {name_hints(unknown, valid)}. Valid {kind}s: {', '.join(valid)}."
    if kind == KEYWORD_ARGUMENT:
        python_style = ", ".join(repr(name) for name in unknown)
        return UnexpectedKeywordError(f"{where} got an unexpected keyword argument {python_style}: {listing}")
    return ValueError(f"{where}: {listing}")


def check_names(kind: str, given: Iterable[str], valid: Iterable[str], where: str) -> None:
    """Raise :func:`unknown_names_error` if any of ``given`` is not in ``valid``."""
    valid = set(valid)
    unknown = [g for g in given if g not in valid]
    if unknown:
        raise unknown_names_error(kind, unknown, valid, where)
