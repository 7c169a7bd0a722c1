"""Text captions of env states and transitions, built on the host from state arrays (outside jit).

LLM-shaped reward layers (``motivegym.reward_layers.llm``) send captions, never arrays, to a model.
An env class may define ``caption(state, params) -> str``; otherwise the caption is generic:
every entry of ``env.describe(state, params)`` with values rounded, per-agent vectors labelled
with ``env.agent_names(params)``::

    TrustDilemma: step=3; actions: Agent_A=40.1, Agent_B=12.0; mean_trust=0.512; ...
"""

from __future__ import annotations

from typing import Any

import numpy as np

from motivegym.core.env import FunctionalEnv

DECIMALS = 3
#: arrays with more entries than this are summarised (mean/min/max) rather than listed
MAX_LISTED_VALUES = 16


def format_number(value: Any, decimals: int = DECIMALS) -> str:
    """A rounded scalar: ``yes``/``no`` for booleans, integers without decimals."""
    array = np.asarray(value)
    if array.dtype == bool:
        return "yes" if bool(array) else "no"
    if np.issubdtype(array.dtype, np.integer):
        return str(int(array))
    number = round(float(array), decimals)
    return f"{number:g}" if abs(number) < 1e6 else f"{number:.3e}"


def format_value(name: str, value: Any, agent_names: tuple[str, ...], decimals: int = DECIMALS) -> str:
    """``name=v`` for scalars, ``name: A=v, B=w`` for per-agent vectors, a list or summary otherwise."""
    if isinstance(value, str):
        return f"{name}={value}"
    array = np.asarray(value)
    if array.dtype.kind not in "biuf":
        return f"{name}={value!r}"
    if array.ndim == 0:
        return f"{name}={format_number(array, decimals)}"
    if array.ndim == 1 and array.shape[0] == len(agent_names):
        return f"{name}: " + ", ".join(f"{agent}={format_number(v, decimals)}" for agent, v in zip(agent_names, array))
    if array.size <= MAX_LISTED_VALUES:
        rounded = np.round(array.astype(np.float64), decimals) if array.dtype.kind == "f" else array.astype(np.int64)
        return f"{name}={rounded.tolist()}"
    numbers = array.astype(np.float64)
    return (
        f"{name}: shape {list(array.shape)}, mean={format_number(numbers.mean(), decimals)}, "
        f"min={format_number(numbers.min(), decimals)}, max={format_number(numbers.max(), decimals)}"
    )


def has_own_caption(env: FunctionalEnv) -> bool:
    return callable(getattr(type(env), "caption", None))


def generic_caption(env: FunctionalEnv, state: Any, params: Any, decimals: int = DECIMALS) -> str:
    """``"<Env>: k1=v1; k2: A=.., B=..; ..."`` from ``env.describe`` (keys in the env's order)."""
    names = tuple(env.agent_names(params))
    described = env.describe(state, params)
    parts = [format_value(key, value, names, decimals) for key, value in described.items()]
    return f"{env.name}: " + "; ".join(parts) if parts else f"{env.name}: (no state description)"


def caption(env: FunctionalEnv, state: Any, params: Any) -> str:
    """A text caption of ``state``: the env's own ``caption`` if its class defines one, else :func:`generic_caption`."""
    if has_own_caption(env):
        text = env.caption(state, params)  # type: ignore[attr-defined]
        if not isinstance(text, str):
            raise TypeError(f"{env.name}.caption must return a str, got {type(text).__name__}")
        return text
    return generic_caption(env, state, params)


def transition_caption(env: FunctionalEnv, state: Any, actions: Any, payoffs: Any, next_state: Any, params: Any) -> str:
    """``"Before: … | Actions: A=.., B=.. | Payoffs: A=.., B=.. | After: …"``."""
    names = tuple(env.agent_names(params))
    return " | ".join(
        [
            "Before: " + caption(env, state, params),
            format_value("Actions", actions, names),
            format_value("Payoffs", payoffs, names),
            "After: " + caption(env, next_state, params),
        ]
    )
