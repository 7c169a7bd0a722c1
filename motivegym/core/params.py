"""Env parameters, validated in one place.

Every door (``make_jax``, ``gymnasium.make``, ``make_vec``, PettingZoo, SB3) builds params through
``env.default_params(**overrides)``. :class:`~motivegym.core.env.FunctionalEnv` wraps every subclass's
``default_params`` with :func:`validated_default_params`, which

1. checks each keyword's value against its :class:`ParamSpec` **before** the env consumes it (type,
   NaN/inf, float32 range, the valid range, the number of array dimensions); ints, bools and strings
   are passed on as plain Python values;
2. calls the env's own ``default_params`` (unknown names, dtypes and exact shapes: :func:`override_params`);
3. checks every field of the result (finite, in range, shape ``[n]``/``[n, n]`` against the agents) and the
   env's cross-field :class:`ParamRule` s, so NaN/inf never enter a params pytree.

A bad value raises ``ValueError("<Env>-v0: <name>=<value> is invalid: <name> must be <valid range>")``.

The specs of an env class live in the ``param_specs`` module of its package (e.g.
``motivegym/envs/coopetition/param_specs.py``): ``PARAM_SPECS`` (fields, and keywords of the same name and
meaning), ``KEYWORD_SPECS`` (keywords the env consumes itself: constructor arguments, aliases; they win over
a field spec of the same name for keyword checks) and ``PARAM_RULES``, each keyed by class name and merged
along the class's MRO. Classes without specs (test envs, wrappers) are not checked here. Traced values
cannot be checked on the host and are passed through.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import math
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import jax
import jax.numpy as jnp
import numpy as np

from motivegym.core.errors import UnexpectedKeywordError, check_names

P = TypeVar("P")

INT32_MAX = 2**31 - 1
FLOAT32_MAX = float(np.finfo(np.float32).max)
KINDS = ("real", "int", "bool", "choice", "real_array", "layout")


@dataclasses.dataclass(frozen=True)
class ParamSpec:
    """Type and valid range of one parameter.

    ``kind``: ``"real"`` (finite float32 number), ``"int"`` (an integer, at most ``high``: the int32 maximum unless given),
    ``"bool"``, ``"choice"`` (one of ``choices``), ``"real_array"`` (finite float32 numbers of ``shape``; ``"n"``
    is one per agent) or ``"layout"`` (a multi-line string or a sequence of equal-length strings).
    ``low``/``high`` bound the value (each element of an array), open where ``low_open``/``high_open``.
    ``check`` is an extra predicate on the value (a NumPy array for arrays) described by ``requirement``.
    ``note`` is shown in the docs; ``default`` is the docs' default of a keyword that is not a field.
    """

    kind: str
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    shape: tuple[int | str, ...] = ()
    choices: tuple[str, ...] = ()
    ignore_case: bool = False
    check: Callable[[Any], bool] | None = None
    requirement: str = ""
    note: str = ""
    default: str = ""

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"unknown parameter kind {self.kind!r}; valid kinds: {', '.join(KINDS)}")
        if self.kind == "int" and self.high is None:
            object.__setattr__(self, "high", INT32_MAX)


@dataclasses.dataclass(frozen=True)
class ParamRule:
    """A condition on several parameters of the built params (``names``; ``n_agents`` is always available)."""

    names: tuple[str, ...]
    check: Callable[[dict[str, Any]], bool]
    requirement: str


# ----- spec constructors (used by the envs' param_specs modules) -----
def real(
    low: float | None = None, high: float | None = None, *, low_open: bool = False, high_open: bool = False, **extra: Any
) -> ParamSpec:
    """A finite real number in ``[low, high]`` (open ends where asked)."""
    return ParamSpec("real", low, high, low_open, high_open, **extra)


def integer(low: int | None = None, high: int | None = None, **extra: Any) -> ParamSpec:
    """An integer in ``[low, high]`` (``high`` defaults to the int32 maximum)."""
    return ParamSpec("int", low, high, **extra)


def flag(**extra: Any) -> ParamSpec:
    """``True`` or ``False``."""
    return ParamSpec("bool", **extra)


def choice(*options: str, **extra: Any) -> ParamSpec:
    """One of ``options``."""
    return ParamSpec("choice", choices=tuple(options), **extra)


def real_array(shape: tuple[int | str, ...], low: float | None = None, high: float | None = None, **extra: Any) -> ParamSpec:
    """Finite real numbers of ``shape`` (``"n"``: one per agent), each in ``[low, high]``."""
    return ParamSpec("real_array", low, high, shape=tuple(shape), **extra)


def layout(**extra: Any) -> ParamSpec:
    """An ASCII map: one multi-line string or a sequence of equal-length strings."""
    return ParamSpec("layout", **extra)


# ----- descriptions -----
def _number(value: float) -> str:
    if value == INT32_MAX:
        return "2147483647"
    return f"{value:g}"


def range_text(spec: ParamSpec) -> str:
    """``"in (0, 1]"``, ``">= 1"``, ``"> 0"`` … ; empty when unbounded."""
    low, high = spec.low, spec.high
    if spec.kind == "int" and high == INT32_MAX:
        high = None
    if low is not None and high is not None:
        return f"in {'(' if spec.low_open else '['}{_number(low)}, {_number(high)}{')' if spec.high_open else ']'}"
    if low is not None:
        return f"{'>' if spec.low_open else '>='} {_number(low)}"
    if high is not None:
        return f"{'<' if spec.high_open else '<='} {_number(high)}"
    return ""


def shape_text(shape: tuple[int | str, ...]) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"


def kind_text(spec: ParamSpec) -> str:
    """What type of value the parameter takes, in words."""
    if spec.kind == "real":
        return "a finite real number"
    if spec.kind == "int":
        return "an integer < 2**31" if spec.high == INT32_MAX else "an integer"
    if spec.kind == "real_array":
        per_agent = " (n: one per agent)" if "n" in spec.shape else ""
        return f"an array of finite real numbers of shape {shape_text(spec.shape)}{per_agent}"
    return ""


def requirement_text(spec: ParamSpec) -> str:
    """The full valid range, as used in error messages: ``"in [0, 1] (a finite real number)"``."""
    if spec.kind == "bool":
        return "True or False (a bool)"
    if spec.kind == "choice":
        return "one of " + ", ".join(repr(c) for c in spec.choices)
    if spec.kind == "layout":
        return "a multi-line string or a sequence of equal-length strings (rows of the map)" + (
            f", {spec.requirement}" if spec.requirement else ""
        )
    if spec.kind == "real_array":
        parts = (
            [kind_text(spec)]
            + ([f"each {range_text(spec)}"] if range_text(spec) else [])
            + ([f"with {spec.requirement}"] if spec.requirement else [])
        )
        return ", ".join(parts)
    condition = " and ".join(p for p in (range_text(spec), spec.requirement) if p)
    return f"{condition} ({kind_text(spec)})" if condition else kind_text(spec)


def summary(spec: ParamSpec) -> str:
    """A short form for the docs' ``valid`` column: ``"real in (0, 1]"``, ``"int >= 1"``, ``"'log' or 'power'"``."""
    if spec.kind == "bool":
        return "bool"
    if spec.kind == "choice":
        return " or ".join(repr(c) for c in spec.choices)
    if spec.kind == "layout":
        return "map rows (strings of equal length)" + (f"; {spec.requirement}" if spec.requirement else "")
    head = {"real": "real", "int": "int", "real_array": f"real {shape_text(spec.shape)}"}[spec.kind]
    array = spec.kind == "real_array"
    parts = [("each " if array else "") + range_text(spec)] if range_text(spec) else []
    parts += [("with " if array else "") + spec.requirement] if spec.requirement else []
    return " ".join([head, ", ".join(parts)]).strip()


def show(value: Any, limit: int = 80) -> str:
    """``repr`` of a value, shortened for messages."""
    text = " ".join(repr(value).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def invalid(where: str, name: str, value: Any, spec: ParamSpec, reason: str = "") -> ValueError:
    """The error every bad parameter value raises."""
    unknown = f"unknown {name}; " if spec.kind == "choice" else ""
    return ValueError(
        f"{where}: {name}={show(value)} is invalid: {unknown}{name} must be {requirement_text(spec)}"
        + (f"; {reason}" if reason else "")
    )


# ----- value checks -----
def is_traced(value: Any) -> bool:
    return isinstance(value, jax.core.Tracer)


def _in_range(values: np.ndarray, spec: ParamSpec) -> bool:
    ok = np.ones(values.shape, bool)
    if spec.low is not None:
        ok &= values > spec.low if spec.low_open else values >= spec.low
    if spec.high is not None:
        ok &= values < spec.high if spec.high_open else values <= spec.high
    return bool(np.all(ok))


def _numeric(value: Any) -> np.ndarray | None:
    """``value`` as a NumPy array of a real or integer dtype; ``None`` for anything else (bools included)."""
    if value is None or isinstance(value, (str, bytes)):
        return None
    try:
        array = np.asarray(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return array if array.dtype.kind in "iuf" else None


def _scalar(where: str, name: str, value: Any, spec: ParamSpec, strict: bool) -> float | int:
    """The Python number of a scalar ``real``/``int`` parameter, or raise."""
    if type(value) is int and abs(value) > FLOAT32_MAX:  # beyond any NumPy dtype
        raise invalid(where, name, value, spec, "too large")
    array = _numeric(value)
    if array is None:
        raise invalid(where, name, value, spec, f"got {type(value).__name__}")
    if array.ndim != 0:
        raise invalid(where, name, value, spec, f"got an array of shape {array.shape}, expected a scalar")
    if spec.kind == "int":
        if array.dtype.kind == "f":
            whole = float(array)
            if not math.isfinite(whole) or not whole.is_integer():
                raise invalid(where, name, value, spec, "got NaN" if math.isnan(whole) else "got a non-integer")
            if strict:
                raise invalid(where, name, value, spec, "got a float")
        number: float | int = int(array)
    else:
        number = float(array)
        if not math.isfinite(number):
            raise invalid(where, name, value, spec, "got NaN" if math.isnan(number) else "got an infinite value")
        if abs(number) > FLOAT32_MAX:
            raise invalid(where, name, value, spec, "too large for float32")
    if not _in_range(np.asarray(number), spec):
        raise invalid(where, name, value, spec)
    if spec.check is not None and not spec.check(number):
        raise invalid(where, name, value, spec)
    return number


def _array(where: str, name: str, value: Any, spec: ParamSpec, n_agents: int | None) -> np.ndarray:
    """The NumPy array of a ``real_array`` parameter, or raise."""
    array = _numeric(value)
    if array is None:
        raise invalid(
            where,
            name,
            value,
            spec,
            f"got {type(value).__name__}" + (" with non-numeric entries" if isinstance(value, (list, tuple)) else ""),
        )
    expected = tuple(n_agents if d == "n" else d for d in spec.shape)
    if array.ndim != len(expected) or any(isinstance(e, int) and e != s for e, s in zip(expected, array.shape)):
        raise invalid(where, name, value, spec, f"got shape {array.shape}")
    values = array.astype(np.float64)
    if not np.all(np.isfinite(values)):
        raise invalid(where, name, value, spec, "got NaN or infinite entries")
    if np.any(np.abs(values) > FLOAT32_MAX):
        raise invalid(where, name, value, spec, "entries too large for float32")
    if not _in_range(values, spec) or (spec.check is not None and not spec.check(values)):
        raise invalid(where, name, value, spec)
    return array


def _layout_rows(value: Any) -> tuple[str, ...] | None:
    if isinstance(value, str):
        return tuple(value.strip("\n").split("\n"))
    if isinstance(value, (tuple, list)) and all(isinstance(row, str) for row in value):
        return tuple(value)
    return None


def check_value(where: str, name: str, value: Any, spec: ParamSpec, strict: bool = True, n_agents: int | None = None) -> Any:
    """Raise ``ValueError`` unless ``value`` is valid for ``spec``; return it as a plain Python value where it has one.

    ``strict`` (keywords): ints must be integer-typed. Built params (``strict=False``) may hold an int in a
    float field (``CoalitionFormation.min_coalition_size``). ``n_agents`` resolves ``"n"`` in array shapes.
    """
    if is_traced(value):
        return value
    if spec.kind == "bool":
        if isinstance(value, (bool, np.bool_)) or (
            isinstance(value, (np.ndarray, jax.Array)) and value.shape == () and value.dtype == bool
        ):
            return bool(value)
        raise invalid(where, name, value, spec, f"got {type(value).__name__}")
    if spec.kind == "choice":
        if isinstance(value, str):
            key = value.lower() if spec.ignore_case else value
            if key in spec.choices:
                return value
        raise invalid(where, name, value, spec)
    if spec.kind == "layout":
        rows = _layout_rows(value)
        if not rows or not rows[0] or len({len(row) for row in rows}) != 1:
            raise invalid(where, name, value, spec)
        if spec.check is not None and not spec.check(rows):
            raise invalid(where, name, value, spec)
        return value
    if spec.kind == "real_array":
        _array(where, name, value, spec, n_agents)
        return value
    number = _scalar(where, name, value, spec, strict)
    return number if spec.kind == "int" else value


def check_arguments(where: str, values: Mapping[str, Any], specs: Mapping[str, ParamSpec]) -> None:
    """Check named arguments (a reward layer's fields) against ``specs``: the same rules and messages as env params."""
    for name, spec in specs.items():
        check_value(where, name, values[name], spec)


# ----- spec lookup -----
@dataclasses.dataclass(frozen=True)
class EnvParamSpecs:
    """The merged specs of one env class."""

    fields: Mapping[str, ParamSpec]
    keywords: Mapping[str, ParamSpec]
    rules: tuple[ParamRule, ...]

    def keyword(self, name: str) -> ParamSpec | None:
        """The spec that checks keyword ``name`` (a keyword spec wins over a field spec)."""
        return self.keywords.get(name) or self.fields.get(name)


@functools.cache
def specs_of(env_class: type) -> EnvParamSpecs | None:
    """Specs of ``env_class``: the ``param_specs`` modules next to the classes of its MRO, merged base first."""
    fields: dict[str, ParamSpec] = {}
    keywords: dict[str, ParamSpec] = {}
    rules: list[ParamRule] = []
    found = False
    for cls in reversed(env_class.__mro__):
        module = _specs_module(cls.__module__.rpartition(".")[0])
        if module is None:
            continue
        for table, target in ((getattr(module, "PARAM_SPECS", {}), fields), (getattr(module, "KEYWORD_SPECS", {}), keywords)):
            if cls.__name__ in table:
                target.update(table[cls.__name__])
                found = True
        rules += getattr(module, "PARAM_RULES", {}).get(cls.__name__, ())
    return EnvParamSpecs(fields, keywords, tuple(rules)) if found else None


@functools.cache
def _specs_module(package: str) -> Any:
    if not package.startswith("motivegym."):
        return None
    try:
        return importlib.import_module(f"{package}.param_specs")
    except ModuleNotFoundError as error:
        if error.name != f"{package}.param_specs":
            raise
        return None


def env_label(env: Any) -> str:
    """The registry id of ``env``'s class (``"TrustDilemma-v0"``), else its name."""
    from motivegym.core.registry import REGISTRY

    for env_id, spec in REGISTRY.items():
        if spec.env_class is type(env):
            return env_id
    return str(getattr(env, "name", type(env).__name__))


# ----- the checks -----
def check_overrides(where: str, specs: EnvParamSpecs, overrides: dict[str, Any]) -> dict[str, Any]:
    """Each keyword with a spec checked (names without one are the env's to reject); ints/bools as Python values."""
    checked = dict(overrides)
    for name, value in overrides.items():
        spec = specs.keyword(name)
        if spec is not None:
            checked[name] = check_value(where, name, value, spec)
    return checked


def flat_fields(params: Any) -> dict[str, Any]:
    """Field name → value, with nested params dataclasses (``trust``) flattened into their own names."""
    values: dict[str, Any] = {}
    for field in dataclasses.fields(params):
        value = getattr(params, field.name)
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            values.update(flat_fields(value))
        else:
            values[field.name] = value
    return values


def check_params(where: str, specs: EnvParamSpecs, params: Any, n_agents: int | None) -> None:
    """Every field with a spec in range (shapes against ``n_agents``) and every rule satisfied."""
    values = flat_fields(params)
    for name, value in values.items():
        spec = specs.fields.get(name)
        if spec is not None:
            check_value(where, name, value, spec, strict=False, n_agents=n_agents)
    if any(is_traced(v) for v in values.values()):
        return
    plain = {k: np.asarray(v) if isinstance(v, jax.Array) else v for k, v in values.items()}
    plain.setdefault("n_agents", n_agents)
    for rule in specs.rules:
        if any(plain.get(name) is None for name in rule.names):  # a subclass without these fields
            continue
        if not rule.check(plain):
            shown = ", ".join(f"{name}={show(_plain(plain[name]), 60)}" for name in rule.names)
            raise ValueError(f"{where}: {shown} is invalid: {rule.requirement}")


def _plain(value: Any) -> Any:
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return float(f"{value.item():.7g}") if value.dtype.kind == "f" else value.item()
    if isinstance(value, np.ndarray):
        return np.round(value.astype(np.float64), 6).tolist()
    return value


def validated_default_params(default_params: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap an env's ``default_params`` with the keyword and params checks of its class's specs."""
    if getattr(default_params, "validates_params", False):
        return default_params

    @functools.wraps(default_params)
    def checked(self: Any, **overrides: Any) -> Any:
        specs = specs_of(type(self))
        if specs is None:
            return default_params(self, **overrides)
        where = env_label(self)
        checked_overrides = check_overrides(where, specs, overrides)
        try:
            params = default_params(self, **checked_overrides)
        except ValueError as error:  # the env's own checks: make sure the message names the env
            if str(error).startswith((where, f"{self.name}:")):
                raise
            kind = UnexpectedKeywordError if isinstance(error, UnexpectedKeywordError) else ValueError  # keep TypeError-ness
            raise kind(f"{where}: {error}") from error
        check_params(where, specs, params, _agents(self, params))
        return params

    checked.validates_params = True  # type: ignore[attr-defined]
    return checked


def _agents(env: Any, params: Any) -> int | None:
    try:
        return int(env.n_agents(params))
    except (NotImplementedError, TypeError, ValueError):
        return None


def override_params(params: P, overrides: dict[str, Any], where: str, extra_valid: tuple[str, ...] = ()) -> P:
    """``params`` with ``overrides`` applied.

    Unknown names raise ``ValueError`` listing the valid ones; array fields are converted to their
    current dtype and must keep their shape; static fields (``static_field``) are taken as given.
    Values were range-checked against the env's specs before (see the module docstring).
    ``extra_valid`` names keywords the env consumed itself (listed in the error).
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
            raise ValueError(
                f"{where}: {name}={show(value)} is invalid: {name} must have shape {current.shape}, got shape {new.shape}"
            )
        changes[name] = new
    return dataclasses.replace(params, **changes)  # type: ignore[type-var]


def parse_env_kwargs(pairs: list[str]) -> dict[str, Any]:
    """``["max_steps=50", "phase=crisis"]`` → ``{"max_steps": 50, "phase": "crisis"}`` (values read as Python
    literals where they parse, else kept as strings); ``ValueError`` for a pair without ``=``."""
    import ast

    kwargs: dict[str, Any] = {}
    for pair in pairs:
        if "=" not in pair:
            raise ValueError(f"expected NAME=VALUE, got {pair!r}")
        name, value = pair.split("=", 1)
        try:
            kwargs[name] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            kwargs[name] = value
    return kwargs
