"""LLM-written progress functions with a count bonus over discretised progress (Sarukkai et al. 2024,
"Automated Rewards via LLM-Generated Progress Functions").

The LLM writes one function of each agent's observation after the step::

    def progress(obs, info):
        holding = obs[:, -3]
        return 0.5 * holding + 0.5 * obs[:, -2]        # [n_agents], about [0, 1]

It is checked by the reward-code whitelist (:func:`~.reward_code.check_reward_code` with the name
``progress`` and the arguments ``(obs, info)``: ``obs`` float32 ``[n_agents, obs_size]`` (the next
observation), ``info`` the step info), its first trace runs in the bounded child process of
:mod:`.sandbox` (same time, memory and intermediate-size bounds as reward code), and it must return
finite ``[n_agents]`` values. :class:`ProgressCountBonus` then turns progress into an exploration bonus:

* ``p_i = progress(next_obs, info)_i``, ``bin_i = clip(⌊num_bins · (p_i − low) / (high − low)⌋, 0, num_bins − 1)``;
* ``N_i(b) += 1`` for the bin visited (before the bonus is read, as in the SimHash count bonus of
  :mod:`motivegym.reward_layers.intrinsic`), then ``r_i = coef / √N_i(bin_i)`` (so ``r ≤ coef``).

So states are grouped by how far along the task they are, and rarely reached progress levels pay
more (the paper's count-based intrinsic reward over progress bins). Counts are per agent (one row
each) or pooled with ``shared=True``; like every layer state they are per env copy in a vmapped
training loop; the state also sums each agent's bonus (``totals["bonus"]``, as the intrinsic layers
do). Components: ``{"bonus": 1/√N, "progress": p}``. A NaN/inf progress at run time raises (the
check of ``code:`` layers), never a silent zero.

:func:`propose_progress_function` asks an LLM for the code (an OpenAI-compatible server via
:class:`~.client.LLMClient`) and validates it on sample transitions; a bad answer raises
:class:`~.reward_code.UnsafeRewardCodeError` / :class:`~.reward_code.InvalidRewardCodeError` with
the reason. Usable by name: ``reward="progress:<file.py>"`` (defaults) or by constructing the layer.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from motivegym.core.env import Transition
from motivegym.reward_layers.base import LayerSpec, RewardLayer
from motivegym.reward_layers.llm import reward_code
from motivegym.reward_layers.llm.client import LLMClient
from motivegym.reward_layers.llm.reward_code import (
    ALLOWED_JNP,
    InvalidRewardCodeError,
    RewardCodeError,
    UnsafeRewardCodeError,
    compile_reward_code,
    extract_code,
    require_finite,
    sample_transitions,
)
from motivegym.reward_layers.llm.sandbox import BoundExceededError, Bounds, bounds_from_environment, run_bounded

Array = jax.Array

FUNCTION_NAME = "progress"
PROGRESS_ARGUMENTS = ("obs", "info")

PROGRESS_SYSTEM = "You write progress functions for multi-agent reinforcement learning. Answer with one Python code block."
PROGRESS_TEMPLATE = """Environment: {env_name}
{env_doc}

Write a function that measures how far each agent has progressed towards the objective, in this exact form:

```python
def progress(obs, info):
    ...
    return <array of shape [{n_agents}], about 0 (no progress) to 1 (objective reached)>
```

Fields (JAX arrays; agents: {agents}):
- obs: float32 [{n_agents}, {obs_size}] (each agent's observation, one row per agent)
- info["<key>"]: step information; keys and shapes: {info_keys}

Rules: only arithmetic, comparisons, indexing of these arrays, local variables and calls jnp.<f>(...) with f in:
{allowed}. No imports, loops, if statements, attribute access or other functions (use jnp.where).

Objective: {objective}"""


def check_progress_code(source: str):
    """Parse and check ``source`` against the reward-code whitelist for ``def progress(obs, info)``."""
    return reward_code.check_reward_code(source, FUNCTION_NAME, PROGRESS_ARGUMENTS)


def compile_progress_code(source: str):
    """The checked ``progress(obs, info)`` as a Python function of JAX arrays."""
    return compile_reward_code(source, FUNCTION_NAME, PROGRESS_ARGUMENTS)


def evaluate_progress(fn, obs: Array, info: dict[str, Array]) -> Array:
    """Call ``fn``; errors while tracing become :class:`InvalidRewardCodeError` naming the progress function."""
    try:
        value = fn(obs, info)
    except KeyError as error:
        raise InvalidRewardCodeError(f"progress code reads info[{error.args[0]!r}], which this env does not provide; keys: {sorted(info)}") from None
    except MemoryError:
        raise
    except Exception as error:  # noqa: BLE001 - any failure of untrusted code is reported, not raised raw
        raise InvalidRewardCodeError(f"progress code failed: {type(error).__name__}: {error}") from None
    return jnp.asarray(value)


def check_progress_traced(fn, obs: Any, info: Any) -> None:
    """Trace abstractly: every intermediate within :data:`~.reward_code.MAX_INTERMEDIATE_SIZE` elements, output ``[n_agents]``."""
    structs = jax.tree.map(lambda x: jax.ShapeDtypeStruct(jnp.shape(x), jnp.result_type(x)), (obs, info))
    try:
        closed = jax.make_jaxpr(lambda o, i: evaluate_progress(fn, o, i))(*structs)
    except (RewardCodeError, MemoryError):
        raise
    except Exception as error:  # noqa: BLE001
        raise InvalidRewardCodeError(f"progress code failed to trace: {type(error).__name__}: {error}") from None
    largest = max(reward_code._jaxpr_sizes(closed.jaxpr), default=0)
    if largest > reward_code.MAX_INTERMEDIATE_SIZE:
        raise UnsafeRewardCodeError(f"progress code builds an array of {largest:,} elements (limit {reward_code.MAX_INTERMEDIATE_SIZE:,})")
    n = jnp.shape(obs)[0]
    if closed.out_avals[0].shape != (n,):
        raise InvalidRewardCodeError(f"progress code must return shape ({n},) (one value per agent), got {closed.out_avals[0].shape}")


# ----- the first trace, in the bounded child process of .sandbox -----
def progress_signature(obs: Any, info: dict[str, Any]) -> dict[str, Any]:
    """The shapes and dtypes the progress function sees (JSON)."""

    def describe(value: Any) -> Any:
        if isinstance(value, dict):
            return {str(k): describe(v) for k, v in value.items()}
        return [list(jnp.shape(value)), str(jnp.result_type(value))]

    return {"obs": describe(obs), "info": describe(info)}


def sandbox_trace(payload: dict[str, Any]) -> dict[str, str] | None:
    """Child side: ``None`` when the code passes :func:`check_progress_traced`, else ``{"kind", "message"}``."""
    described = payload["signature"]
    try:
        check_progress_traced(compile_progress_code(payload["source"]), reward_code._structs(described["obs"]), reward_code._structs(described["info"]))
    except RewardCodeError as error:
        return {"kind": "unsafe" if isinstance(error, UnsafeRewardCodeError) else "invalid", "message": str(error)}
    return None


_VERDICTS: dict[tuple[str, str, Bounds], dict[str, str] | None] = {}
_VERDICTS_LOCK = threading.Lock()


def sandboxed_progress_check(source: str, described: dict[str, Any], bounds: Bounds | None = None) -> None:
    """:func:`check_progress_traced` in a child process under ``bounds`` (default from ``MOTIVEGYM_SANDBOX_*``);
    raises its error, or :class:`UnsafeRewardCodeError` past the time or memory bound. Verdicts are remembered."""
    bounds = bounds_from_environment() if bounds is None else bounds
    key = (source, json.dumps(described, sort_keys=True), bounds)
    with _VERDICTS_LOCK:
        known, verdict = key in _VERDICTS, _VERDICTS.get(key)
    if not known:
        try:
            verdict = run_bounded(f"{__name__}:sandbox_trace", {"source": source, "signature": described}, bounds, prepare=f"{reward_code.__name__}:sandbox_prepare")
        except BoundExceededError as error:
            raise UnsafeRewardCodeError(f"progress code's first trace {error}") from None
        with _VERDICTS_LOCK:
            _VERDICTS[key] = verdict
    if verdict is not None:
        raise (UnsafeRewardCodeError if verdict["kind"] == "unsafe" else InvalidRewardCodeError)(verdict["message"])


# ----- the layer -----
@dataclasses.dataclass(frozen=True)
class ProgressCountBonus(RewardLayer):
    """``r_i = coef / √N_i(bin(progress(next_obs, info)_i))``: a count bonus over discretised LLM-written progress
    (module docstring). ``sandbox``: trace the code in the bounded child first (once per input shapes);
    ``check_finite``: raise on NaN/inf progress at run time."""

    source: str
    num_bins: int = 20
    low: float = 0.0
    high: float = 1.0
    coef: float = 1.0
    shared: bool = False
    sandbox: bool = True
    check_finite: bool = True
    name: str = "progress"

    def __post_init__(self):
        if not (isinstance(self.num_bins, int) and 1 <= self.num_bins <= 1 << 16):
            raise ValueError(f"{self.name}: num_bins must be an int in [1, 65536], got {self.num_bins!r}")
        for field in ("low", "high", "coef"):
            if not np.isfinite(getattr(self, field)):
                raise ValueError(f"{self.name}: {field} must be finite, got {getattr(self, field)!r}")
        if not self.high > self.low:
            raise ValueError(f"{self.name}: high must be > low, got low={self.low}, high={self.high}")
        compile_progress_code(self.source)  # reject bad code at construction

    def progress(self, obs: Array, info: dict[str, Array]) -> Array:
        """``progress(obs, info)`` as float32 ``[n_agents]`` (sandbox-checked on first trace), not checked for NaN/inf."""
        fn = compile_progress_code(self.source)
        if self.sandbox:
            sandboxed_progress_check(self.source, progress_signature(obs, info))
        else:
            check_progress_traced(fn, obs, info)
        return evaluate_progress(fn, obs, info).astype(jnp.float32)

    def bins(self, progress: Array) -> Array:
        """``clip(⌊num_bins · (p − low) / (high − low)⌋, 0, num_bins − 1)`` as int32."""
        scaled = jnp.floor(self.num_bins * (progress - self.low) / (self.high - self.low))
        return jnp.clip(scaled, 0, self.num_bins - 1).astype(jnp.int32)

    def init(self, key: Array, spec: LayerSpec) -> dict[str, Array]:
        rows = 1 if self.shared else spec.n_agents
        return {"counts": jnp.zeros((rows, self.num_bins), jnp.int32), "totals": {"bonus": jnp.zeros(spec.n_agents, jnp.float32)}}

    def apply(self, state, transition: Transition):
        next_obs = transition.next_obs.astype(jnp.float32)
        n = transition.payoffs.shape[-1]
        if next_obs.ndim != 2 or next_obs.shape[0] != n:
            raise ValueError(f"the {self.name!r} layer needs next_obs of shape [n_agents={n}, obs_size], got {next_obs.shape}")
        progress = self.progress(next_obs, transition.info)
        if self.check_finite:
            progress = require_finite(progress)
        bins = self.bins(progress)
        rows = jnp.zeros(n, jnp.int32) if self.shared else jnp.arange(n)
        counts = state["counts"].at[rows, bins].add(1)
        bonus = jax.lax.rsqrt(jnp.maximum(counts[rows, bins], 1).astype(jnp.float32))
        totals = {"bonus": state["totals"]["bonus"] + bonus}
        return {"counts": counts, "totals": totals}, self.coef * bonus, {"bonus": bonus, "progress": progress}


def read_progress_file(path: str | Path) -> str:
    """The text of a ``.py`` file holding one ``def progress(obs, info)``; a bad file is a ``ValueError`` naming it."""
    path = Path(path)
    if not path.exists():
        raise ValueError(f"progress code file {path} does not exist")
    if not path.is_file():
        raise ValueError(f"progress code file {path} is {'a directory' if path.is_dir() else 'not a regular file'}, not a file with one `def progress(obs, info)`")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"progress code file {path} is not Python source (not UTF-8 text)") from None
    except OSError as error:
        raise ValueError(f"progress code file {path} cannot be read: {error.strerror or error}") from None


def progress_reward_from_file(path: str | Path, **kwargs: Any) -> ProgressCountBonus:
    """A :class:`ProgressCountBonus` (``kwargs``: its fields) from a ``.py`` file; bad code is an error naming the file."""
    source = read_progress_file(path)
    try:
        return ProgressCountBonus(source, **kwargs)
    except RewardCodeError as error:
        raise type(error)(f"progress code file {path}: {error}") from None


# ----- asking an LLM -----
def progress_prompt(env, params, objective: str, transitions: Transition | None = None) -> str:
    """The prompt: env docstring, observation and info shapes, the whitelist and the objective."""
    transitions = sample_transitions(env, params, 4) if transitions is None else transitions
    info_keys = ", ".join(f"{k} {list(np.shape(v))[1:]}" for k, v in transitions.info.items())
    return PROGRESS_TEMPLATE.format(
        env_name=env.name,
        env_doc=(type(env).__doc__ or "").strip(),
        n_agents=env.n_agents(params),
        obs_size=env.observation_size(params),
        agents=", ".join(env.agent_names(params)),
        info_keys=info_keys,
        allowed=", ".join(sorted(ALLOWED_JNP)),
        objective=objective,
    )


def validate_progress_code(source: str, env, params, num_samples: int = 16, seed: int = 0, transitions: Transition | None = None, **layer_kwargs: Any) -> ProgressCountBonus:
    """Check ``source``, trace it once in the bounded sandbox, then run it jitted on sample transitions
    (finite ``[n_agents]`` each, else :class:`InvalidRewardCodeError`); the layer (``layer_kwargs``: its fields)."""
    layer = ProgressCountBonus(source, **layer_kwargs)
    transitions = sample_transitions(env, params, num_samples, seed) if transitions is None else transitions
    one = jax.tree.map(lambda x: x[0], transitions)
    sandboxed_progress_check(source, progress_signature(one.next_obs.astype(jnp.float32), one.info))
    values = np.asarray(jax.jit(jax.vmap(lambda t: layer.progress(t.next_obs.astype(jnp.float32), t.info)))(transitions))
    if not np.all(np.isfinite(values)):
        bad = int(np.sum(~np.all(np.isfinite(values), axis=-1)))
        raise InvalidRewardCodeError(f"progress code returned NaN/inf on {bad} of {len(values)} sample transitions")
    return layer


def propose_progress_function(env, params, client: LLMClient, objective: str, temperature: float = 0.0, **layer_kwargs: Any) -> ProgressCountBonus:
    """Ask the LLM for ``def progress(obs, info)`` (:data:`PROGRESS_TEMPLATE`), extract the code block and
    :func:`validate_progress_code` it. A bad answer raises :class:`UnsafeRewardCodeError` /
    :class:`InvalidRewardCodeError` (prefixed "the LLM's progress function: "); LLM errors propagate."""
    transitions = sample_transitions(env, params, 16)
    answer = client.ask(progress_prompt(env, params, objective, transitions), system=PROGRESS_SYSTEM, temperature=temperature)
    source = extract_code(answer, FUNCTION_NAME)
    try:
        return validate_progress_code(source, env, params, transitions=transitions, **layer_kwargs)
    except RewardCodeError as error:
        raise type(error)(f"the LLM's progress function: {error}") from None
