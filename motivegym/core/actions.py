"""Host-side validation of joint actions: the one check every door runs before actions enter a pytree.

``check_actions(spec, actions, batch_shape)`` is called by the Gymnasium env, the vector env, the PettingZoo
Parallel and AEC envs, the SB3 adapter and :func:`checked` (the functional API's checked wrapper). Its rules:

* **Real numbers only.** bool, complex, strings and other objects are refused (``ValueError`` naming the
  argument); nothing is silently converted (a complex action does not lose its imaginary part).
* **Exact shape** ``batch_shape + (n_agents,)``: no broadcasting or squeezing.
* **Finite.** NaN and ±inf are refused, naming the agent (and the sub-env of a batch).
* **Discrete envs:** every action is an integer value in ``[0, k − 1]`` (``1.0`` is action 1; ``0.7``,
  ``-1``, ``k`` and ``2**32 + 1`` are refused, naming the agent and the valid range).
* **Continuous envs:** finite values outside ``[low_i, high_i]`` are accepted and clipped to the bounds by the
  env's step (the documented clipping, identical on every door since every door runs that step).

The raw functional step (``env.step``, jitted or not) checks nothing: a NaN, a fractional index or a wrong
shape goes straight into the JAX program (wrong shapes fail there with a reshape error, out-of-range indices
are clipped or ignored as the env's docs say). Call ``motivegym.checked(env).step(...)`` on the host to get
these checks, or run :func:`check_actions` yourself before a jitted step.
"""

from __future__ import annotations

import dataclasses
import numbers
from typing import Any

import numpy as np

#: finite float64 actions beyond float32's range are brought into it before the cast (then clipped by the env)
FLOAT32_MAX = float(np.finfo(np.float32).max)


@dataclasses.dataclass(frozen=True)
class ActionSpec:
    """What :func:`check_actions` needs to know about an env's joint action (host-side, from static params)."""

    kind: str  # "discrete" or "continuous"
    low: np.ndarray  # [n] float64: lowest action (0 for discrete envs)
    high: np.ndarray  # [n] float64: highest action (k − 1 for discrete envs)
    labels: tuple[str, ...]  # agent labels used in messages: "agent_0" or "agent_0 (platform)"

    @property
    def n_agents(self) -> int:
        return len(self.labels)

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(np.int32 if self.kind == "discrete" else np.float32)

    def agent(self, index: int) -> ActionSpec:
        """The spec of one agent's action (shape ``(1,)``), for per-agent APIs (PettingZoo AEC)."""
        pick = slice(index, index + 1)
        return ActionSpec(self.kind, self.low[pick], self.high[pick], self.labels[pick])

    def valid_range(self, index: int) -> str:
        if self.kind == "discrete":
            return f"the integers {int(self.low[index])}..{int(self.high[index])}"
        return f"finite numbers (values outside [{self.low[index]:g}, {self.high[index]:g}] are clipped to it)"


def agent_labels(names: tuple[str, ...]) -> tuple[str, ...]:
    """``agent_i`` plus the env's display name where it has one: ``agent_0 (platform)``."""
    return tuple(f"agent_{i}" + ("" if name == f"agent_{i}" else f" ({name})") for i, name in enumerate(names))


def action_spec(env: Any, params: Any) -> ActionSpec:
    """The :class:`ActionSpec` of ``env`` under ``params`` (bounds for continuous envs, ``0..k−1`` for discrete ones)."""
    labels = agent_labels(tuple(env.agent_names(params)))
    n = len(labels)
    if env.action_kind == "discrete":
        k = int(env.num_actions(params))
        return ActionSpec("discrete", np.zeros(n), np.full(n, k - 1, np.float64), labels)
    low, high = (np.asarray(bound, np.float64).reshape(n) for bound in env.action_bounds(params))
    return ActionSpec("continuous", low, high, labels)


def _where(spec: ActionSpec, index: tuple[int, ...]) -> str:
    """``agent_1`` or ``sub-env 4, agent_1`` for an index into ``batch_shape + (n,)``."""
    agent = spec.labels[index[-1]]
    return agent if len(index) == 1 else f"sub-env {', '.join(map(str, index[:-1]))}, {agent}"


def _refuse(spec: ActionSpec, array: np.ndarray, mask: np.ndarray, problem: str) -> ValueError:
    """A ``ValueError`` naming every agent (and sub-env) where ``mask`` holds, with its value and the valid range."""
    bad = [tuple(int(i) for i in index) for index in np.argwhere(mask)]
    shown = "; ".join(f"{_where(spec, index)} = {array[index].item()!r}" for index in bad[:8])
    more = f" (and {len(bad) - 8} more)" if len(bad) > 8 else ""
    return ValueError(f"{problem} for {shown}{more}; valid actions are {spec.valid_range(bad[0][-1])}")


def _as_real_array(actions: Any, name: str) -> np.ndarray:
    """``actions`` as a numeric numpy array, refusing bool, complex, strings and objects."""
    try:
        array = np.asarray(actions)
    except (TypeError, ValueError) as error:  # ragged lists
        raise ValueError(f"{name} must be an array of real numbers: {error}") from None
    if array.dtype.kind == "O":  # Python ints beyond 64 bits, None, mixed objects
        if not all(isinstance(x, numbers.Real) and not isinstance(x, (bool, np.bool_)) for x in array.flat):
            kinds = sorted({type(x).__name__ for x in array.flat})
            raise ValueError(f"{name} must be real numbers, got objects of type {', '.join(kinds)}")
        array = array.astype(np.float64)
    if array.dtype.kind == "c":
        raise ValueError(f"{name} must be real numbers, got complex ({array.dtype}): the imaginary part is not dropped silently")
    if array.dtype.kind == "b":
        raise ValueError(f"{name} must be numbers, got bool")
    if array.dtype.kind not in "iuf":
        raise ValueError(f"{name} must be real numbers, got dtype {array.dtype}")
    return array


def check_actions(spec: ActionSpec, actions: Any, batch_shape: tuple[int, ...] = (), name: str = "actions") -> np.ndarray:
    """``actions`` checked against ``spec`` (see the module docstring) as an ``int32``/``float32`` array.

    Raises ``ValueError`` naming the argument (``name``) for a wrong type or shape and the agent (and
    sub-env) for a non-finite, non-integral or out-of-range value.
    """
    expected = tuple(batch_shape) + (spec.n_agents,)
    if type(actions) is np.ndarray and actions.shape == expected and actions.dtype == spec.dtype:
        array = actions  # fast path of the host step loop
    else:
        array = _as_real_array(actions, name)
        if array.shape != expected:
            per = "one per agent" if not batch_shape else "sub-envs × agents"
            raise ValueError(f"{name} must have shape {expected} ({per}), got shape {array.shape}")
    if array.dtype.kind == "f":
        finite = np.isfinite(array)
        if not finite.all():
            raise _refuse(spec, array, ~finite, "non-finite action")
    if spec.kind == "discrete":
        if array.dtype.kind == "f":
            fractional = array != np.floor(array)
            if fractional.any():
                raise _refuse(spec, array, fractional, "non-integer action")
        if array.size and (array.min() < 0 or (array > spec.high).any()):
            raise _refuse(spec, array, (array < 0) | (array > spec.high), "out-of-range action")
        return array if array.dtype == np.int32 else array.astype(np.int32)
    if array.dtype == np.float32:
        return array
    if array.dtype.kind == "f" and array.dtype.itemsize > 4:
        array = np.clip(array, -FLOAT32_MAX, FLOAT32_MAX)  # the env clips to its bounds; no inf from the cast
    return array.astype(np.float32)


class CheckedEnv:
    """A functional env whose ``step`` validates ``actions`` on the host first (:func:`checked`).

    Everything else is the wrapped env's. The check needs concrete actions, so ``step`` cannot be traced:
    inside ``jax.jit``/``vmap`` call the raw ``env.step`` (which checks nothing).
    """

    def __init__(self, env: Any):
        self.env = env

    def __getattr__(self, name: str) -> Any:
        return getattr(self.env, name)

    def check_actions(self, actions: Any, params: Any) -> np.ndarray:
        """``actions`` validated for ``params`` (raises ``ValueError`` naming the agent)."""
        import jax

        if isinstance(actions, jax.core.Tracer):
            raise TypeError("motivegym.checked(env).step validates actions on the host and cannot be traced; use env.step inside jit")
        return check_actions(action_spec(self.env, params), actions)

    def step(self, key: Any, state: Any, actions: Any, params: Any):
        """``env.step`` on checked actions (shape ``(n_agents,)``)."""
        return self.env.step(key, state, self.check_actions(actions, params), params)

    def __repr__(self) -> str:
        return f"checked({self.env!r})"


def checked(env: Any) -> CheckedEnv:
    """The functional ``env`` with host-side action checks: ``env, params = make_jax(id); env = checked(env)``."""
    return env if isinstance(env, CheckedEnv) else CheckedEnv(env)
