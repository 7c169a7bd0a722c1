"""LLM-written reward functions, checked against a strict ``ast`` whitelist and compiled to JAX.

The LLM writes exactly one function over documented fields::

    def reward(obs, actions, payoffs, next_obs, info):
        coop = next_obs[:, 0] / 100.0
        return payoffs / 100.0 + 0.5 * jnp.minimum(coop, jnp.mean(coop))

* ``obs``, ``next_obs``: float32 ``[n_agents, obs_size]``; ``actions``, ``payoffs``: ``[n_agents]``;
  ``info["<key>"]``: the env's step info (keys listed in the prompt); it must return ``[n_agents]``.
* Allowed: assignments to plain names, ``return``, arithmetic, comparisons, unary ``-``/``+``/``~``,
  subscripts and slices of the arguments and of local names, ``info["<string>"]``, number constants,
  tuples (for slices and ``axis=``), and calls ``jnp.<f>(…)`` of :data:`ALLOWED_JNP`.
* Rejected (:class:`UnsafeRewardCodeError`): imports, any other attribute access (``obs.__class__``),
  any other name or call (``open``, ``exec``, ``eval``, builtins), dunder names, loops, ``if``,
  lambdas, comprehensions, ``with``/``try``, ``global``, nested functions, constant-only
  arithmetic (``10 ** 10 ** 10``), code over :data:`MAX_SOURCE_CHARS` / :data:`MAX_NODES`.
* Invalid (:class:`InvalidRewardCodeError`): syntax errors, a wrong signature, code that fails to
  trace, or outputs that are not finite ``[n_agents]`` floats on sample transitions.

The function runs with empty builtins and a ``jnp`` namespace holding only the allowed functions.
:class:`CodeReward` wraps it as a reward layer; :func:`evolve` is the Eureka loop (Ma et al. 2023).
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import json
import re
import types
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from motivegym.core.batching import random_actions
from motivegym.core.env import Transition
from motivegym.reward_layers.base import LayerSpec, RewardLayer

Array = jax.Array

ARGUMENTS = ("obs", "actions", "payoffs", "next_obs", "info")
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


class RewardCodeError(ValueError):
    """Base class: the reward code cannot be used."""


class UnsafeRewardCodeError(RewardCodeError):
    """The code uses a construct outside the whitelist."""


class InvalidRewardCodeError(RewardCodeError):
    """The code is allowed but broken: syntax, signature, tracing, shape or non-finite output."""


def _unsafe(node: ast.AST, what: str) -> UnsafeRewardCodeError:
    return UnsafeRewardCodeError(f"line {getattr(node, 'lineno', '?')}: {what} is not allowed in reward code")


def _is_number(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) in (int, float, bool)


class _Checker:
    """Walks the function body; every node type must be handled explicitly (default: reject)."""

    def __init__(self):
        self.locals: set[str] = set(ARGUMENTS)

    def statement(self, node: ast.stmt) -> None:
        if isinstance(node, ast.Assign):
            self.expression(node.value)
            for target in node.targets:
                self.assign_target(target)
        elif isinstance(node, ast.AugAssign):
            if not isinstance(node.op, _BIN_OPS):
                raise _unsafe(node, f"operator {type(node.op).__name__}")
            if not isinstance(node.target, ast.Name):
                raise _unsafe(node, "augmented assignment to anything but a plain name")
            self.expression(node.target)
            self.expression(node.value)
        elif isinstance(node, ast.Return):
            if node.value is None:
                raise InvalidRewardCodeError(f"line {node.lineno}: reward must return an array")
            self.expression(node.value)
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            pass  # docstring
        elif isinstance(node, ast.Pass):
            pass
        elif isinstance(node, ast.Expr):
            self.expression(node.value)  # names what is disallowed inside it first (open(…), exec(…))
            raise _unsafe(node, "an expression statement (its value is unused)")
        else:
            raise _unsafe(node, f"a {type(node).__name__} statement")

    def assign_target(self, target: ast.expr) -> None:
        if isinstance(target, ast.Name):
            self.name(target)
            self.locals.add(target.id)
        elif isinstance(target, ast.Tuple):
            for element in target.elts:
                self.assign_target(element)
        else:
            raise _unsafe(target, "assignment to anything but plain names")

    def name(self, node: ast.Name) -> None:
        if node.id.startswith("__") or node.id.startswith("_"):
            raise _unsafe(node, f"the name {node.id!r}")

    def expression(self, node: ast.expr) -> None:
        if isinstance(node, ast.Constant):
            if type(node.value) not in (int, float, bool):
                raise _unsafe(node, f"the constant {node.value!r} (only numbers; strings only as info keys)")
            if isinstance(node.value, int) and abs(node.value) > 10**9:
                raise _unsafe(node, f"the huge constant {node.value}")
        elif isinstance(node, ast.Name):
            self.name(node)
            if node.id not in self.locals:
                raise _unsafe(node, f"the name {node.id!r} (only the arguments {', '.join(ARGUMENTS)}, local variables and jnp.<f>)")
        elif isinstance(node, ast.BinOp):
            if not isinstance(node.op, _BIN_OPS):
                raise _unsafe(node, f"operator {type(node.op).__name__}")
            if _is_number(node.left) and _is_number(node.right):
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
            self.expression(argument)
        for keyword in node.keywords:
            if keyword.arg not in ALLOWED_KEYWORDS:
                raise _unsafe(node, f"the keyword argument {keyword.arg!r} (allowed: {', '.join(sorted(ALLOWED_KEYWORDS))})")
            if keyword.arg == "dtype":
                if not (isinstance(keyword.value, ast.Attribute) and isinstance(keyword.value.value, ast.Name) and keyword.value.value.id == "jnp" and keyword.value.attr in ("float32", "int32")):
                    raise _unsafe(node, "dtype other than jnp.float32 / jnp.int32")
                continue
            self.expression(keyword.value)

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


def extract_code(text: str) -> str:
    """The reward source in an LLM answer: the first fenced block containing ``def reward``, else the text itself."""
    blocks = re.findall(r"```(?:python|py)?\s*\n(.*?)```", text, re.S)
    for block in blocks:
        if "def reward" in block:
            return block.strip() + "\n"
    return text.strip() + "\n"


def check_reward_code(source: str) -> ast.FunctionDef:
    """Parse and check ``source`` against the whitelist; return the function node."""
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
        raise UnsafeRewardCodeError(f"reward code must be exactly one `def reward(...)`, found: {kinds}")
    function = tree.body[0]
    if function.name != "reward":
        raise InvalidRewardCodeError(f"the function must be called 'reward', got {function.name!r}")
    if function.decorator_list:
        raise _unsafe(function, "a decorator")
    arguments = function.args
    names = tuple(a.arg for a in arguments.args)
    if names != ARGUMENTS or arguments.posonlyargs or arguments.kwonlyargs or arguments.vararg or arguments.kwarg or arguments.defaults:
        raise InvalidRewardCodeError(f"the signature must be exactly `def reward({', '.join(ARGUMENTS)}):`")
    if function.returns is not None or any(a.annotation is not None for a in arguments.args):
        raise _unsafe(function, "annotations")
    if not any(isinstance(statement, ast.Return) for statement in function.body):
        raise InvalidRewardCodeError("reward must end with `return <array of shape [n_agents]>`")
    checker = _Checker()
    for statement in function.body:
        checker.statement(statement)
    return function


def _restricted_jnp() -> types.SimpleNamespace:
    functions = {name: getattr(jnp, name) for name in ALLOWED_JNP}
    return types.SimpleNamespace(**functions, **{c: getattr(jnp, c) for c in ALLOWED_JNP_CONSTANTS})


@functools.lru_cache(maxsize=256)
def compile_reward_code(source: str) -> Callable[..., Array]:
    """The checked ``reward(obs, actions, payoffs, next_obs, info)`` as a Python function of JAX arrays."""
    function = check_reward_code(source)
    module = ast.Module(body=[function], type_ignores=[])
    namespace: dict[str, Any] = {"__builtins__": {}, "jnp": _restricted_jnp()}
    exec(compile(module, "<reward_code>", "exec"), namespace)  # whitelisted AST, empty builtins
    return namespace["reward"]


def evaluate_reward(fn: Callable[..., Array], transition: Transition) -> Array:
    """Call ``fn`` on a transition; errors while tracing become :class:`InvalidRewardCodeError`."""
    try:
        value = fn(transition.obs, transition.actions, transition.payoffs, transition.next_obs, transition.info)
    except KeyError as error:
        raise InvalidRewardCodeError(f"reward code reads info[{error.args[0]!r}], which this env does not provide; keys: {sorted(transition.info)}") from None
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


def check_intermediate_sizes(fn: Callable[..., Array], transition: Transition) -> None:
    """Trace ``fn`` abstractly and reject it if any intermediate array exceeds :data:`MAX_INTERMEDIATE_SIZE` elements."""
    shapes = jax.tree.map(lambda x: jax.ShapeDtypeStruct(jnp.shape(x), jnp.result_type(x)), transition)
    try:
        closed = jax.make_jaxpr(lambda t: evaluate_reward(fn, t))(shapes)
    except RewardCodeError:
        raise
    except Exception as error:  # noqa: BLE001
        raise InvalidRewardCodeError(f"reward code failed to trace: {type(error).__name__}: {error}") from None
    largest = max(_jaxpr_sizes(closed.jaxpr), default=0)
    if largest > MAX_INTERMEDIATE_SIZE:
        raise UnsafeRewardCodeError(f"reward code builds an array of {largest:,} elements (limit {MAX_INTERMEDIATE_SIZE:,})")


@dataclasses.dataclass(frozen=True)
class CodeReward(RewardLayer):
    """``r = coef · reward(obs, actions, payoffs, next_obs, info)`` from checked reward code (see module docstring)."""

    source: str
    coef: float = 1.0
    name: str = "code"

    def __post_init__(self):
        compile_reward_code(self.source)  # reject bad code at construction

    def apply(self, state, transition: Transition):
        fn = compile_reward_code(self.source)
        check_intermediate_sizes(fn, transition)
        value = evaluate_reward(fn, transition)
        n = transition.payoffs.shape[-1]
        if value.shape != (n,):
            raise InvalidRewardCodeError(f"reward code must return shape ({n},) (one reward per agent), got {value.shape}")
        rewards = self.coef * value.astype(jnp.float32)
        return state, rewards, {"code": rewards}


def code_reward_from_file(path: str | Path, coef: float = 1.0) -> CodeReward:
    """A :class:`CodeReward` from a ``.py`` file holding one ``def reward(...)``."""
    if not Path(path).exists():
        raise ValueError(f"reward code file {path} does not exist")
    return CodeReward(Path(path).read_text(encoding="utf-8"), coef)


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
    """Check, compile and run ``source`` jitted on sample transitions (``transitions`` or
    :func:`sample_transitions`): finite float ``[n_agents]`` each, else raise."""
    layer = CodeReward(source)
    transitions = sample_transitions(env, params, num_samples, seed) if transitions is None else transitions
    spec = LayerSpec(env.n_agents(params), env.observation_size(params))
    state = layer.init(jax.random.PRNGKey(0), spec)
    _, rewards, _ = jax.jit(jax.vmap(lambda t: layer.apply(state, t)))(transitions)
    rewards = np.asarray(rewards)
    if not np.all(np.isfinite(rewards)):
        bad = int(np.sum(~np.all(np.isfinite(rewards), axis=-1)))
        raise InvalidRewardCodeError(f"reward code returned NaN/inf on {bad} of {len(rewards)} sample transitions")
    return layer


# ----- Eureka -----
EUREKA_SYSTEM = "You write reward functions for multi-agent reinforcement learning. Answer with one Python code block."
EUREKA_TEMPLATE = """Environment: {env_name}
{env_doc}

Write a reward function for every agent at once, in this exact form:

```python
def reward(obs, actions, payoffs, next_obs, info):
    ...
    return <array of shape [{n_agents}]>
```

Fields (JAX arrays, one row per agent; agents: {agents}):
- obs, next_obs: float32 [{n_agents}, {obs_size}] (observation before / after the step)
- actions: [{n_agents}]  (the joint action)
- payoffs: float32 [{n_agents}]  (what the world paid this step)
- info["<key>"]: step information after the step; keys and shapes: {info_keys}

Rules: only arithmetic, comparisons, indexing of these arrays, local variables and calls jnp.<f>(...) with f in:
{allowed}. No imports, loops, if statements, attribute access or other functions (use jnp.where).

Objective: {objective}
{feedback}"""


def describe_fields(env, params) -> dict[str, Any]:
    """Facts about the env the Eureka prompt states (names, shapes, info keys)."""
    transitions = sample_transitions(env, params)
    info_keys = ", ".join(f"{k} {list(np.shape(v))[1:]}" for k, v in transitions.info.items())
    doc = (type(env).__doc__ or "").strip()
    return {
        "env_name": env.name,
        "env_doc": doc,
        "n_agents": env.n_agents(params),
        "obs_size": env.observation_size(params),
        "agents": ", ".join(env.agent_names(params)),
        "info_keys": info_keys,
        "allowed": ", ".join(sorted(ALLOWED_JNP)),
    }


def feedback_text(history: list[dict[str, Any]], top: int = 3) -> str:
    """Eureka's reward reflection: the best earlier candidates with their training statistics, and errors of the last round."""
    if not history:
        return ""
    scored = sorted((c for c in history if c["score"] is not None), key=lambda c: -c["score"])[:top]
    lines = ["", "Earlier candidates and what training with them achieved (higher score is better):"]
    for candidate in scored:
        stats = ", ".join(f"{k}={_round(v)}" for k, v in candidate["stats"].items())
        lines.append(f"--- score {candidate['score']:.4g} ({stats})\n```python\n{candidate['code'].strip()}\n```")
    last_round = max(c["iteration"] for c in history)
    errors = [c for c in history if c["iteration"] == last_round and c["error"]]
    for candidate in errors[:top]:
        lines.append(f"--- rejected: {candidate['error']}")
    lines.append("Write an improved reward function.")
    return "\n".join(lines)


def _round(value: Any) -> Any:
    if isinstance(value, list):
        return [_round(v) for v in value]
    return round(float(value), 4) if isinstance(value, float | int) else value


def ippo_trainer(total_steps: int = 20_000, num_envs: int = 8, num_steps: int = 64, eval_episodes: int = 16, seed: int = 0) -> Callable:
    """A trainer for :func:`evolve`: IPPO (``motivegym.baselines.ppo``) on the candidate reward, scored by
    the greedy policy's mean episode welfare (sum of **payoffs**, the task fitness)."""

    def train(env, params, layer: RewardLayer) -> dict[str, Any]:
        from motivegym.baselines.ppo import MultiAgentPPO, PPOConfig, episode_payoffs

        config = PPOConfig(total_steps=total_steps, num_envs=num_envs, num_steps=num_steps, num_minibatches=1)
        algo = MultiAgentPPO(env, params, layer, config)
        runner, metrics = jax.jit(algo.make_train())(jax.random.PRNGKey(seed), 0)
        payoffs = np.asarray(episode_payoffs(algo, runner, jax.random.PRNGKey(seed + 1), eval_episodes))
        rewards = np.asarray(metrics["episode_reward"])[-1]
        welfare = float(payoffs.sum(-1).mean())
        return {"score": welfare, "welfare": welfare, "episode_payoffs": payoffs.mean(0).tolist(), "final_episode_rewards": rewards.tolist()}

    return train


def evolve(
    env,
    params,
    client,
    objective: str,
    num_candidates: int = 4,
    iterations: int = 3,
    train_fn: Callable[[Any, Any, RewardLayer], dict[str, Any]] | None = None,
    out_path: str | Path | None = None,
    temperature: float = 1.0,
) -> dict[str, Any]:
    """Eureka: each iteration asks for ``num_candidates`` reward functions (seeds ``0..K−1``), validates
    them, trains with each (``train_fn(env, params, layer) -> {"score": float, …}``, default
    :func:`ippo_trainer`) and feeds the best ones' statistics into the next prompt.

    Returns (and writes to ``out_path`` as JSON after every candidate) ``{"candidates": [...], "best": ...}``;
    every candidate keeps its code, status, error, score and statistics.
    """
    if num_candidates < 1 or iterations < 1:
        raise ValueError(f"num_candidates and iterations must be >= 1, got {num_candidates}, {iterations}")
    train_fn = train_fn or ippo_trainer()
    fields = describe_fields(env, params)
    samples = sample_transitions(env, params)
    history: list[dict[str, Any]] = []
    for iteration in range(iterations):
        prompt = EUREKA_TEMPLATE.format(objective=objective, feedback=feedback_text(history), **fields)
        messages = [{"role": "system", "content": EUREKA_SYSTEM}, {"role": "user", "content": prompt}]
        seeds = [iteration * num_candidates + k for k in range(num_candidates)]  # distinct samples, distinct cache keys
        with ThreadPoolExecutor(max_workers=min(client.max_workers, num_candidates)) as pool:
            answers = list(pool.map(lambda seed, messages=messages: client.chat(messages, temperature=temperature, seed=seed), seeds))
        for index, answer in enumerate(answers):
            history.append(_evaluate_candidate(iteration, index, extract_code(answer), env, params, train_fn, samples))
            _write(out_path, history)
    return _write(out_path, history)


def _evaluate_candidate(iteration: int, index: int, code: str, env, params, train_fn, samples: Transition) -> dict[str, Any]:
    candidate: dict[str, Any] = {"iteration": iteration, "index": index, "code": code, "status": "ok", "error": None, "score": None, "stats": {}}
    try:
        layer = validate_reward_code(code, env, params, transitions=samples)
    except RewardCodeError as error:
        candidate.update(status="unsafe" if isinstance(error, UnsafeRewardCodeError) else "invalid", error=str(error))
        return candidate
    stats = dict(train_fn(env, params, layer))
    if "score" not in stats:
        raise ValueError(f"train_fn must return a dict with a 'score', got keys {sorted(stats)}")
    score = float(stats.pop("score"))
    candidate.update(score=score if np.isfinite(score) else None, stats=stats)
    if not np.isfinite(score):
        candidate.update(status="invalid", error=f"training score is not finite ({score})")
    return candidate


def _write(out_path: str | Path | None, history: list[dict[str, Any]]) -> dict[str, Any]:
    scored = [c for c in history if c["score"] is not None]
    result = {"candidates": history, "best": max(scored, key=lambda c: c["score"]) if scored else None}
    if out_path is not None:
        Path(out_path).parent.mkdir(parents=True, exist_ok=True)
        Path(out_path).write_text(json.dumps(result, indent=2), encoding="utf-8")
    return result
