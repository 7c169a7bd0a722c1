"""LLM-written reward functions, checked against a strict ``ast`` whitelist, traced under bounds and compiled to JAX.

The LLM writes exactly one function over documented fields::

    def reward(obs, actions, payoffs, next_obs, info):
        coop = next_obs[:, 0] / 100.0
        return payoffs / 100.0 + 0.5 * jnp.minimum(coop, jnp.mean(coop))

* ``obs``, ``next_obs``: float32 ``[n_agents, obs_size]``; ``actions``, ``payoffs``: ``[n_agents]``;
  ``info["<key>"]``: the env's step info (keys listed in the prompt); it must return ``[n_agents]``.
* Allowed: assignments to plain names, ``return``, arithmetic, comparisons, unary ``-``/``+``/``~``,
  subscripts and slices of the arguments and of local names, ``info["<string>"]``, number constants,
  tuples (only as indices, as arguments of ``jnp`` calls, in ``a, b = x, y`` and in ``return``) and
  calls ``jnp.<f>(…)`` of :data:`ALLOWED_JNP`.
* Rejected (:class:`UnsafeRewardCodeError`): imports, any other attribute access (``obs.__class__``),
  any other name or call (``open``, ``exec``, ``eval``, builtins), dunder names, loops, ``if``,
  lambdas, comprehensions, ``with``/``try``, ``global``, nested functions, arithmetic whose two
  operands are constants or names bound to constants (``a = 10**9; b = a ** a``: Python integers
  have no size limit), tuples anywhere else (``t = (1,); u = t * 200000000``), rebinding the names the
  sandbox relies on (``jnp``, ``info``), code over :data:`MAX_SOURCE_CHARS` / :data:`MAX_NODES`.
* Invalid (:class:`InvalidRewardCodeError`): syntax errors, a wrong signature, code that fails to
  trace, or outputs that are not finite ``[n_agents]`` floats on sample transitions.

**Bounds.** The whitelist is the first line of defence; the second is that the first trace of
every code and input signature runs in a child process (:mod:`.sandbox`) with a wall-clock and a
memory bound (defaults 10 s and 1 GiB; ``MOTIVEGYM_SANDBOX_SECONDS`` / ``MOTIVEGYM_SANDBOX_MEMORY_MB``),
where it must also keep every intermediate array within :data:`MAX_INTERMEDIATE_SIZE` elements and
return ``[n_agents]``. Only then is it traced in this process. At run time :class:`CodeReward`
raises on NaN/inf rewards (:func:`require_finite`: one reduction and one ``lax.cond`` per step).

The function runs with empty builtins and a ``jnp`` namespace holding only the allowed functions.
:class:`CodeReward` wraps it as a reward layer; the Eureka loop that evolves such code by training
with it lives in :mod:`motivegym.experiments.eureka` (reward layers never train).
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import json
import threading
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.custom_batching import custom_vmap

from motivegym.core.batching import random_actions
from motivegym.core.env import Transition
from motivegym.reward_layers.base import RewardLayer
from motivegym.reward_layers.llm.sandbox import BoundExceededError, Bounds, bounds_from_environment, run_bounded

Array = jax.Array

ARGUMENTS = ("obs", "actions", "payoffs", "next_obs", "info")
#: names the sandbox relies on: reward code may read but never rebind them
RESERVED_NAMES = frozenset({"jnp", "info"})
ALLOWED_JNP = frozenset(
    {
        "abs", "sqrt", "square", "exp", "log", "log1p", "expm1", "tanh", "sin", "cos", "sign", "floor", "ceil", "round",
        "minimum", "maximum", "clip", "where", "sum", "mean", "max", "min", "prod", "std", "var", "median",
        "logical_and", "logical_or", "logical_not", "isfinite", "power", "dot", "cumsum",
        "argmax", "argmin", "zeros_like", "ones_like", "full_like", "float32", "int32",
    }
)  # fmt: skip
ALLOWED_JNP_CONSTANTS = frozenset({"pi", "e", "inf"})
ALLOWED_KEYWORDS = frozenset({"axis", "keepdims", "min", "max", "a_min", "a_max", "dtype"})
MAX_SOURCE_CHARS = 4000
MAX_NODES = 600
#: largest array (elements) any step of the traced code may create: broadcasting tricks cannot exhaust memory
MAX_INTERMEDIATE_SIZE = 1 << 20

_BIN_OPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.MatMult, ast.BitAnd, ast.BitOr, ast.BitXor)
_UNARY_OPS = (ast.USub, ast.UAdd, ast.Invert)
_COMPARE_OPS = (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE)
_TUPLE_PLACES = "tuples are allowed only as indices, as arguments of jnp calls, in `a, b = x, y` and in return"


class RewardCodeError(ValueError):
    """Base class: the reward code cannot be used."""


class UnsafeRewardCodeError(RewardCodeError):
    """The code uses a construct outside the whitelist, or ran past the sandbox's time or memory bound."""


class InvalidRewardCodeError(RewardCodeError):
    """The code is allowed but broken: syntax, signature, tracing, shape or non-finite output."""


def _unsafe(node: ast.AST, what: str) -> UnsafeRewardCodeError:
    return UnsafeRewardCodeError(f"line {getattr(node, 'lineno', '?')}: {what} is not allowed in reward code")


def _is_number(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) in (int, float, bool)


class _Checker:
    """Walks the function body; every node type must be handled explicitly (default: reject).

    Straight-line code (no branches or loops) lets it know which locals hold plain Python numbers
    (``constants``): arithmetic on two of them would run in Python, unbounded for integers.
    """

    def __init__(self, arguments: tuple[str, ...] = ARGUMENTS):
        self.arguments = arguments
        self.locals: set[str] = set(arguments)
        self.constants: set[str] = set()

    def statement(self, node: ast.stmt) -> None:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                self.assignment(target, node.value)
        elif isinstance(node, ast.AugAssign):
            if not isinstance(node.op, _BIN_OPS):
                raise _unsafe(node, f"operator {type(node.op).__name__}")
            if not isinstance(node.target, ast.Name):
                raise _unsafe(node, "augmented assignment to anything but a plain name")
            target = ast.copy_location(ast.Name(node.target.id, ast.Load()), node)
            self.expression(ast.copy_location(ast.BinOp(left=target, op=node.op, right=node.value), node))
            self.bind(node.target, constant=False)
        elif isinstance(node, ast.Return):
            if node.value is None:
                raise InvalidRewardCodeError(f"line {node.lineno}: reward must return an array")
            self.expression(node.value, tuple_ok=True)
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            pass  # docstring
        elif isinstance(node, ast.Pass):
            pass
        elif isinstance(node, ast.Expr):
            self.expression(node.value, tuple_ok=True)  # names what is disallowed inside it first (open(…), exec(…))
            raise _unsafe(node, "an expression statement (its value is unused)")
        else:
            raise _unsafe(node, f"a {type(node).__name__} statement")

    def assignment(self, target: ast.expr, value: ast.expr) -> None:
        """``name = value`` or ``a, b = x, y`` (a tuple value only when unpacked element by element)."""
        if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple):
            if len(target.elts) != len(value.elts):
                raise InvalidRewardCodeError(f"line {target.lineno}: {len(target.elts)} names but {len(value.elts)} values")
            for element, element_value in zip(target.elts, value.elts):
                self.assignment(element, element_value)
            return
        self.expression(value)
        if isinstance(target, ast.Name):
            self.bind(target, constant=self.is_constant(value))
        elif isinstance(target, ast.Tuple):
            for element in target.elts:
                if not isinstance(element, ast.Name):
                    raise _unsafe(element, "assignment to anything but plain names")
                self.bind(element, constant=False)
        else:
            raise _unsafe(target, "assignment to anything but plain names")

    def bind(self, target: ast.Name, constant: bool) -> None:
        self.name(target)
        if target.id in RESERVED_NAMES:
            raise _unsafe(target, f"rebinding {target.id!r} (the sandbox relies on it)")
        self.locals.add(target.id)
        (self.constants.add if constant else self.constants.discard)(target.id)

    def is_constant(self, node: ast.expr) -> bool:
        """Whether ``node`` evaluates to a plain Python number (a literal, a local bound to one, or built from them)."""
        if isinstance(node, ast.Name):
            return node.id in self.constants
        if isinstance(node, ast.UnaryOp):
            return self.is_constant(node.operand)
        if isinstance(node, ast.Compare):
            return self.is_constant(node.left) and all(self.is_constant(c) for c in node.comparators)
        return _is_number(node)

    def name(self, node: ast.Name) -> None:
        if node.id.startswith("_"):
            raise _unsafe(node, f"the name {node.id!r}")

    def expression(self, node: ast.expr, tuple_ok: bool = False) -> None:
        if isinstance(node, ast.Constant):
            if type(node.value) not in (int, float, bool):
                raise _unsafe(node, f"the constant {node.value!r} (only numbers; strings only as info keys)")
            if isinstance(node.value, int) and abs(node.value) > 10**9:
                raise _unsafe(node, f"the huge constant {node.value}")
        elif isinstance(node, ast.Name):
            self.name(node)
            if node.id not in self.locals:
                raise _unsafe(node, f"the name {node.id!r} (only the arguments {', '.join(self.arguments)}, local variables and jnp.<f>)")
        elif isinstance(node, ast.BinOp):
            if not isinstance(node.op, _BIN_OPS):
                raise _unsafe(node, f"operator {type(node.op).__name__}")
            if self.is_constant(node.left) and self.is_constant(node.right):
                raise _unsafe(node, "arithmetic on two constants (write the result)")
            self.expression(node.left)
            self.expression(node.right)
        elif isinstance(node, ast.UnaryOp):
            if not isinstance(node.op, _UNARY_OPS):
                raise _unsafe(node, f"operator {type(node.op).__name__} (use jnp.logical_not)")
            self.expression(node.operand)
        elif isinstance(node, ast.Compare):
            if not all(isinstance(op, _COMPARE_OPS) for op in node.ops):
                raise _unsafe(node, "comparison with is / in")
            if len(node.ops) != 1:
                raise _unsafe(node, "chained comparisons (use jnp.logical_and)")
            self.expression(node.left)
            self.expression(node.comparators[0])
        elif isinstance(node, ast.Call):
            self.call(node)
        elif isinstance(node, ast.Attribute):
            if not (isinstance(node.value, ast.Name) and node.value.id == "jnp" and node.attr in ALLOWED_JNP_CONSTANTS):
                raise _unsafe(node, f"attribute access .{node.attr} (only jnp.<f>(…) calls and jnp.pi/e/inf)")
        elif isinstance(node, ast.Subscript):
            self.subscript(node)
        elif isinstance(node, ast.Tuple):
            if not tuple_ok:
                raise _unsafe(node, f"a tuple here ({_TUPLE_PLACES})")
            for element in node.elts:
                self.expression(element)
        else:
            raise _unsafe(node, f"a {type(node).__name__} expression")

    def call(self, node: ast.Call) -> None:
        func = node.func
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "jnp"):
            label = func.id if isinstance(func, ast.Name) else ast.unparse(func)
            raise _unsafe(node, f"calling {label!r} (only jnp.<f>(…) with f in the whitelist)")
        if func.attr not in ALLOWED_JNP:
            raise _unsafe(node, f"jnp.{func.attr} (allowed: {', '.join(sorted(ALLOWED_JNP))})")
        for argument in node.args:
            if isinstance(argument, ast.Starred):
                raise _unsafe(argument, "*arguments")
            self.expression(argument, tuple_ok=True)
        for keyword in node.keywords:
            if keyword.arg not in ALLOWED_KEYWORDS:
                raise _unsafe(node, f"the keyword argument {keyword.arg!r} (allowed: {', '.join(sorted(ALLOWED_KEYWORDS))})")
            if keyword.arg == "dtype":
                if not (isinstance(keyword.value, ast.Attribute) and isinstance(keyword.value.value, ast.Name) and keyword.value.value.id == "jnp" and keyword.value.attr in ("float32", "int32")):
                    raise _unsafe(node, "dtype other than jnp.float32 / jnp.int32")
                continue
            self.expression(keyword.value, tuple_ok=True)

    def subscript(self, node: ast.Subscript) -> None:
        if isinstance(node.value, ast.Name) and node.value.id == "info":
            if not (isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str)):
                raise _unsafe(node, 'info indexed by anything but a string constant (info["key"])')
            if node.slice.value.startswith("_"):
                raise _unsafe(node, f"the info key {node.slice.value!r}")
            return
        self.expression(node.value)
        self.index(node.slice)

    def index(self, node: ast.expr) -> None:
        if isinstance(node, ast.Slice):
            for part in (node.lower, node.upper, node.step):
                if part is not None:
                    self.expression(part)
        elif isinstance(node, ast.Tuple):
            for element in node.elts:
                self.index(element)
        elif isinstance(node, ast.Constant) and node.value is None:
            pass  # x[:, None]
        else:
            self.expression(node)


def fenced_blocks(text: str) -> list[str]:
    """The contents of the ```-fenced blocks of ``text`` (the opening fence's line, e.g. ```` ```python ````, dropped).

    ``str.find`` scans only: linear in the length (a backtracking regex was quadratic on long runs of newlines)."""
    blocks, position = [], 0
    while (start := text.find("```", position)) >= 0:
        newline = text.find("\n", start + 3)
        end = text.find("```", newline + 1) if newline >= 0 else -1
        if end < 0:
            break
        blocks.append(text[newline + 1 : end])
        position = end + 3
    return blocks


def extract_code(text: str, function_name: str = "reward") -> str:
    """The source in an LLM answer: the first fenced block containing ``def <function_name>``, else the text itself."""
    for block in fenced_blocks(text):
        if f"def {function_name}" in block:
            return block.strip() + "\n"
    return text.strip() + "\n"


def check_reward_code(source: str, function_name: str = "reward", arguments: tuple[str, ...] = ARGUMENTS) -> ast.FunctionDef:
    """Parse and check ``source`` against the whitelist; return the function node.

    ``function_name`` / ``arguments``: the one function the code must define (other LLM-written functions,
    e.g. the progress functions of :mod:`.progress`, reuse the same whitelist)."""
    if not isinstance(source, str):
        raise InvalidRewardCodeError(f"reward code must be a string, got {type(source).__name__}")
    if len(source) > MAX_SOURCE_CHARS:
        raise UnsafeRewardCodeError(f"reward code is {len(source)} characters; at most {MAX_SOURCE_CHARS} are allowed")
    try:
        tree = ast.parse(source, mode="exec")
    except SyntaxError as error:
        raise InvalidRewardCodeError(f"reward code does not parse: {error}") from None
    if sum(1 for _ in ast.walk(tree)) > MAX_NODES:
        raise UnsafeRewardCodeError(f"reward code has more than {MAX_NODES} syntax nodes")
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            raise _unsafe(node, "import")
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef):
        kinds = ", ".join(type(n).__name__ for n in tree.body) or "nothing"
        raise UnsafeRewardCodeError(f"reward code must be exactly one `def {function_name}(...)`, found: {kinds}")
    function = tree.body[0]
    if function.name != function_name:
        raise InvalidRewardCodeError(f"the function must be called {function_name!r}, got {function.name!r}")
    if function.decorator_list:
        raise _unsafe(function, "a decorator")
    expected, arguments = arguments, function.args
    names = tuple(a.arg for a in arguments.args)
    if names != expected or arguments.posonlyargs or arguments.kwonlyargs or arguments.vararg or arguments.kwarg or arguments.defaults:
        raise InvalidRewardCodeError(f"the signature must be exactly `def {function_name}({', '.join(expected)}):`")
    if function.returns is not None or any(a.annotation is not None for a in arguments.args):
        raise _unsafe(function, "annotations")
    if not any(isinstance(statement, ast.Return) for statement in function.body):
        raise InvalidRewardCodeError(f"{function_name} must end with `return <array of shape [n_agents]>`")
    checker = _Checker(expected)
    for statement in function.body:
        checker.statement(statement)
    return function


def _restricted_jnp() -> types.SimpleNamespace:
    """The allowed ``jnp`` functions; ``pi``/``e``/``inf`` as float32 scalars, so no plain Python number comes from them."""
    functions = {name: getattr(jnp, name) for name in ALLOWED_JNP}
    return types.SimpleNamespace(**functions, **{c: np.float32(getattr(jnp, c)) for c in ALLOWED_JNP_CONSTANTS})


def _function_from(module: ast.Module, function_name: str = "reward") -> Callable[..., Array]:
    namespace: dict[str, Any] = {"__builtins__": {}, "jnp": _restricted_jnp()}
    exec(compile(module, "<reward_code>", "exec"), namespace)
    return namespace[function_name]


@functools.lru_cache(maxsize=256)
def compile_reward_code(source: str, function_name: str = "reward", arguments: tuple[str, ...] = ARGUMENTS) -> Callable[..., Array]:
    """The checked ``reward(obs, actions, payoffs, next_obs, info)`` (or ``function_name(*arguments)``) as a Python function of JAX arrays."""
    function = check_reward_code(source, function_name, arguments)
    return _function_from(ast.Module(body=[function], type_ignores=[]), function_name)  # whitelisted AST, empty builtins


def evaluate_reward(fn: Callable[..., Array], transition: Transition) -> Array:
    """Call ``fn`` on a transition; errors while tracing become :class:`InvalidRewardCodeError` (``MemoryError`` stays)."""
    try:
        value = fn(transition.obs, transition.actions, transition.payoffs, transition.next_obs, transition.info)
    except KeyError as error:
        raise InvalidRewardCodeError(f"reward code reads info[{error.args[0]!r}], which this env does not provide; keys: {sorted(transition.info)}") from None
    except MemoryError:
        raise
    except Exception as error:  # noqa: BLE001 - any tracing failure of untrusted code is reported, not raised raw
        raise InvalidRewardCodeError(f"reward code failed: {type(error).__name__}: {error}") from None
    return jnp.asarray(value)


def _jaxpr_sizes(jaxpr) -> list[int]:
    sizes = []
    for equation in jaxpr.eqns:
        sizes += [int(np.prod(v.aval.shape)) for v in equation.outvars if hasattr(v.aval, "shape")]
        for value in equation.params.values():
            inner = getattr(value, "jaxpr", value)
            if hasattr(inner, "eqns"):
                sizes += _jaxpr_sizes(inner)
    return sizes


def check_traced(fn: Callable[..., Array], transition: Transition) -> None:
    """Trace ``fn`` abstractly: every intermediate within :data:`MAX_INTERMEDIATE_SIZE` elements, output ``[n_agents]``."""
    shapes = jax.tree.map(lambda x: jax.ShapeDtypeStruct(jnp.shape(x), jnp.result_type(x)), transition)
    try:
        closed = jax.make_jaxpr(lambda t: evaluate_reward(fn, t))(shapes)
    except (RewardCodeError, MemoryError):
        raise
    except Exception as error:  # noqa: BLE001
        raise InvalidRewardCodeError(f"reward code failed to trace: {type(error).__name__}: {error}") from None
    largest = max(_jaxpr_sizes(closed.jaxpr), default=0)
    if largest > MAX_INTERMEDIATE_SIZE:
        raise UnsafeRewardCodeError(f"reward code builds an array of {largest:,} elements (limit {MAX_INTERMEDIATE_SIZE:,})")
    n = jnp.shape(transition.payoffs)[-1]
    if closed.out_avals[0].shape != (n,):
        raise InvalidRewardCodeError(f"reward code must return shape ({n},) (one reward per agent), got {closed.out_avals[0].shape}")


# ----- the first trace, in a bounded child process -----
def signature(transition: Transition) -> dict[str, Any]:
    """The shapes and dtypes reward code sees (JSON): ``{"obs": [[n, d], "float32"], …, "info": {key: …}}``."""

    def describe(value: Any) -> Any:
        if isinstance(value, dict):
            return {str(k): describe(v) for k, v in value.items()}
        return [list(jnp.shape(value)), str(jnp.result_type(value))]

    return {field: describe(getattr(transition, field)) for field in ARGUMENTS if field != "info"} | {"info": describe(transition.info)}


def _structs(described: Any) -> Any:
    if isinstance(described, dict):
        return {k: _structs(v) for k, v in described.items()}
    shape, dtype = described
    return jax.ShapeDtypeStruct(tuple(shape), jnp.dtype(dtype))


def _transition_of(described: dict[str, Any]) -> Transition:
    flag = jax.ShapeDtypeStruct((), jnp.bool_)
    fields = {field: _structs(described[field]) for field in ARGUMENTS}
    return Transition(fields["obs"], fields["actions"], fields["payoffs"], fields["next_obs"], flag, flag, fields["info"])


def sandbox_prepare() -> None:
    """Child side, before the bounds: start JAX's CPU backend (threads, allocator) so the bound counts only the code."""
    jnp.zeros(1).block_until_ready()


def sandbox_trace(payload: dict[str, Any]) -> dict[str, str] | None:
    """Child side: ``None`` when the code passes :func:`check_traced`, else ``{"kind": "unsafe"|"invalid", "message": …}``."""
    try:
        if payload["whitelist"]:
            fn = compile_reward_code(payload["source"])
        else:  # only to test the bounds themselves
            fn = _function_from(ast.parse(payload["source"]))
        check_traced(fn, _transition_of(payload["signature"]))
    except RewardCodeError as error:
        return {"kind": "unsafe" if isinstance(error, UnsafeRewardCodeError) else "invalid", "message": str(error)}
    except (SyntaxError, NameError) as error:  # whitelist=False only
        return {"kind": "invalid", "message": f"{type(error).__name__}: {error}"}
    return None


_SANDBOX_VERDICTS: dict[tuple[str, str, Bounds], dict[str, str] | None] = {}
_SANDBOX_LOCK = threading.Lock()


def sandboxed_check(source: str, described: dict[str, Any], bounds: Bounds | None = None, whitelist: bool = True) -> None:
    """Run :func:`check_traced` for ``source`` on the input ``signature`` in a child process under ``bounds``
    (default :func:`~.sandbox.bounds_from_environment`); raise its error, or :class:`UnsafeRewardCodeError`
    when the trace runs past the time or memory bound. Verdicts of traces that finished are remembered
    per (code, signature, bounds), so a layer traced again (another jit, the Eureka loop) spawns no child.

    ``whitelist=False`` skips the whitelist in the child: only to test the bounds themselves."""
    bounds = bounds_from_environment() if bounds is None else bounds
    key = (source, json.dumps(described, sort_keys=True), bounds)
    with _SANDBOX_LOCK:
        known, verdict = key in _SANDBOX_VERDICTS and whitelist, _SANDBOX_VERDICTS.get(key)
    if not known:
        payload = {"source": source, "signature": described, "whitelist": whitelist}
        try:
            verdict = run_bounded(f"{__name__}:sandbox_trace", payload, bounds, prepare=f"{__name__}:sandbox_prepare")
        except BoundExceededError as error:
            raise UnsafeRewardCodeError(f"reward code's first trace {error}") from None
        if whitelist:
            with _SANDBOX_LOCK:
                _SANDBOX_VERDICTS[key] = verdict
    if verdict is not None:
        raise (UnsafeRewardCodeError if verdict["kind"] == "unsafe" else InvalidRewardCodeError)(verdict["message"])


# ----- run-time check -----
class NonFiniteRewardError(FloatingPointError):
    """Raised on the host (inside the JAX runtime error) when reward code returns NaN/inf at run time."""


def _raise_non_finite(finite: Any) -> None:
    if not bool(np.asarray(finite)):
        raise NonFiniteRewardError("reward code (a code: layer) returned NaN/inf rewards at run time")


@custom_vmap
def _finite_or_raise(rewards: Array) -> Array:
    finite = jnp.all(jnp.isfinite(rewards))
    jax.lax.cond(finite, lambda: None, lambda: jax.debug.callback(_raise_non_finite, finite))
    return rewards


@_finite_or_raise.def_vmap
def _finite_or_raise_batched(axis_size, in_batched, rewards):
    # one check over the whole batch: a vmapped cond would turn into a select that calls back on every element
    return _finite_or_raise(rewards), in_batched[0]


@jax.custom_jvp
def require_finite(rewards: Array) -> Array:
    """``rewards`` unchanged; raises :class:`NonFiniteRewardError` (wrapped in JAX's runtime error) when any is NaN/inf.

    Costs one reduction and one ``lax.cond`` per step, vmapped or not; the host callback runs only on failure."""
    return _finite_or_raise(rewards)


@require_finite.defjvp
def _require_finite_jvp(primals, tangents):
    return require_finite(primals[0]), tangents[0]


@dataclasses.dataclass(frozen=True)
class CodeReward(RewardLayer):
    """``r = coef · reward(obs, actions, payoffs, next_obs, info)`` from checked reward code (see module docstring).

    ``sandbox``: trace in a bounded child first (once per input signature); ``check_finite``: raise on NaN/inf at run time."""

    source: str
    coef: float = 1.0
    name: str = "code"
    sandbox: bool = True
    check_finite: bool = True

    def __post_init__(self):
        compile_reward_code(self.source)  # reject bad code at construction

    def rewards(self, transition: Transition) -> Array:
        """``coef · reward(…)`` as float32 ``[n_agents]``, not checked for NaN/inf."""
        fn = compile_reward_code(self.source)
        if self.sandbox:
            sandboxed_check(self.source, signature(transition))
        else:
            check_traced(fn, transition)
        return self.coef * evaluate_reward(fn, transition).astype(jnp.float32)

    def apply(self, state, transition: Transition):
        rewards = self.rewards(transition)
        if self.check_finite:
            rewards = require_finite(rewards)
        return state, rewards, {"code": rewards}


def code_reward_from_file(path: str | Path, coef: float = 1.0) -> CodeReward:
    """A :class:`CodeReward` from a ``.py`` file holding one ``def reward(...)``; a bad file is a ``ValueError`` naming it."""
    path = Path(path)
    if not path.exists():
        raise ValueError(f"reward code file {path} does not exist")
    if not path.is_file():
        raise ValueError(f"reward code file {path} is a directory, not a file with one `def reward(...)`" if path.is_dir() else f"reward code file {path} is not a regular file")
    try:
        source = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"reward code file {path} is not Python source (not UTF-8 text)") from None
    except OSError as error:
        raise ValueError(f"reward code file {path} cannot be read: {error.strerror or error}") from None
    try:
        return CodeReward(source, coef)
    except RewardCodeError as error:
        raise type(error)(f"reward code file {path}: {error}") from None


# ----- validation on sample transitions -----
def sample_transitions(env, params, num: int = 16, seed: int = 0) -> Transition:
    """``num`` transitions stacked on a leading axis: random actions after 3 random warm-up steps.

    Compiled once per (env object, ``num``): the Eureka loop validates many candidates on one env.
    """
    return _sample_transitions(env, params, num, jax.random.PRNGKey(seed))


@functools.partial(jax.jit, static_argnums=(0, 2))
def _sample_transitions(env, params, num: int, key: Array) -> Transition:
    def one(key):
        reset_key, warm_key, action_key, step_key = jax.random.split(key, 4)
        state, _ = env.reset(reset_key, params)

        def warm(state, k):
            a_key, s_key = jax.random.split(k)
            state, *_ = env.step(s_key, state, random_actions(env, params, a_key), params)
            return state, None

        state, _ = jax.lax.scan(warm, state, jax.random.split(warm_key, 3))
        obs = env.observe(state, params)
        actions = random_actions(env, params, action_key)
        _, next_obs, payoffs, _, info = env.step(step_key, state, actions, params)
        return Transition(obs, actions, payoffs, next_obs, info["terminated"], info["truncated"], info)

    return jax.vmap(one)(jax.random.split(key, num))


def validate_reward_code(source: str, env, params, num_samples: int = 16, seed: int = 0, transitions: Transition | None = None) -> CodeReward:
    """Check ``source``, trace it once in the bounded sandbox, then run it jitted on sample transitions
    (``transitions`` or :func:`sample_transitions`): finite float ``[n_agents]`` each, else raise."""
    layer = CodeReward(source)
    transitions = sample_transitions(env, params, num_samples, seed) if transitions is None else transitions
    one = jax.tree.map(lambda x: x[0], transitions)
    sandboxed_check(source, signature(one))
    rewards = np.asarray(jax.jit(jax.vmap(layer.rewards))(transitions))
    if not np.all(np.isfinite(rewards)):
        bad = int(np.sum(~np.all(np.isfinite(rewards), axis=-1)))
        raise InvalidRewardCodeError(f"reward code returned NaN/inf on {bad} of {len(rewards)} sample transitions")
    return layer
