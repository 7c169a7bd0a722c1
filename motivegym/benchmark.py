"""Benchmark your own MARL algorithm with the library's protocol: same envs, payoff-based scores, same statistics.

**The protocol** (any JAX algorithm implements it; nothing to subclass):

* a policy is a pure function ``act(policy_params, obs, key) -> actions`` with ``obs`` the joint observation
  ``[n_agents, obs_size]`` and ``actions`` the joint action ``[n_agents]`` (int for ``Discrete`` envs, float in the
  action bounds for ``Box`` ones), plus its ``policy_params`` pytree. :class:`JaxPolicy` turns it into a
  library policy, usable in ``evaluate``, scenarios (``motivegym.experiments.scenarios.run_scenario``) and
  cross-play;
* an algorithm is an object with a ``name``, that ``act``, and ``train(key, env, env_params, total_steps) ->
  policy_params``, where ``env`` is a :class:`motivegym.adapters.functional.RewardedEnv` with same-step
  auto-reset: its ``step`` returns the reward layer's rewards (the library's reward math, never the
  algorithm's), and ``info["payoffs"]`` what the world paid. ``train`` must be a pure JAX function of ``key``
  (PureJaxRL style): seeds are ``jax.vmap``-ed and the whole run is one ``jax.jit`` program.

``evaluate(algorithm, suite=..., seeds=..., rewards=..., steps=...)`` trains it on every env × reward layer × seed,
evaluates its final policy on **payoffs** on the sweep's episode keys (``EVAL_SEED``, common random numbers), and
writes each run as a sweep run file, so the result is the tidy table of ``motivegym sweep`` (``results.csv``, one
row per run), normalised scores included. ``baselines=("ippo", "mappo")`` trains ours with the same budget in
the same directory; :class:`BenchmarkResult` aggregates everything with the sweep report's statistics (IQM of the
normalised score across envs with stratified-bootstrap intervals, rliable protocol) and ``motivegym report DIR``
draws the figures. ``examples/new_algorithm.py`` is a worked example.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import jax
import numpy as np

from motivegym.baselines.policies import Policy, PolicyState
from motivegym.core.env import FunctionalEnv
from motivegym.experiments.statistics import Interval

Array = jax.Array
PolicyParams = Any


@runtime_checkable
class Algorithm(Protocol):
    """What ``evaluate`` needs from a user's algorithm (see the module docstring)."""

    name: str

    def train(self, key: Array, env: Any, env_params: Any, total_steps: int) -> PolicyParams: ...

    def act(self, policy_params: PolicyParams, obs: Array, key: Array) -> Array: ...


@dataclasses.dataclass(frozen=True)
class JaxPolicy(Policy):
    """A library policy from a pure ``act(policy_params, obs, key) -> actions``; its state is
    ``{"params": policy_params}`` (:meth:`state`; stack several seeds' states on a leading axis for batches)."""

    act: Callable[[PolicyParams, Array, Array], Array]
    label: str = "jax_policy"

    @property
    def name(self) -> str:
        return self.label

    def init(self, env: FunctionalEnv, params: Any) -> PolicyState:
        raise TypeError(f"{self.label}: a JaxPolicy's state holds its trained parameters: use JaxPolicy.state(policy_params)")

    @staticmethod
    def state(policy_params: PolicyParams) -> PolicyState:
        return {"params": policy_params}

    def __call__(self, key, obs, state):
        return self.act(state["params"], obs, key), state


@dataclasses.dataclass
class BenchmarkResult:
    """The rows of ``results.csv`` (sweep schema) of every run in ``out``, and their aggregates."""

    out: Path
    rows: list[dict[str, Any]]

    def aggregate(self, reps: int = 2000) -> dict[tuple[str, str, str], Interval]:
        """``(algo, sharing, reward) →`` IQM of the normalised score over envs × seeds, stratified-bootstrap 95% CI."""
        from motivegym.experiments.report import aggregate_table

        return aggregate_table(self.rows, reps=reps)

    def summary(self, reps: int = 2000) -> str:
        """One line per (algorithm, reward layer): the aggregate IQM and its interval."""
        from motivegym.experiments.report import format_interval

        table = sorted(self.aggregate(reps).items())
        width = max([len("algorithm")] + [len(algo) for (algo, _, _), _ in table])
        reward_width = max([len("reward")] + [len(reward) for (_, _, reward), _ in table])
        lines = [f"{'algorithm':<{width}}  {'sharing':<8} {'reward':<{reward_width}}  IQM normalised score [95% stratified bootstrap]"]
        for (algo, sharing, reward), interval in table:
            lines.append(f"{algo:<{width}}  {sharing:<8} {reward:<{reward_width}}  {format_interval(interval, 3)}")
        return "\n".join(lines)


def evaluate(
    algorithm: Algorithm | str,
    suite: str | Sequence[str] = "dilemmas",
    seeds: int = 5,
    rewards: Sequence[str] = ("private", "cooperative"),
    steps: int = 100_000,
    eval_episodes: int = 16,
    out: str | Path = "runs/benchmark",
    baselines: Sequence[str] = (),
    progress: bool = True,
    **sweep_settings: Any,
) -> BenchmarkResult:
    """Train ``algorithm`` (and our ``baselines``) on ``suite`` × ``rewards`` × ``seeds`` and score the final
    policies on payoffs (module docstring). ``suite``: env ids or presets (``"dilemmas"``); ``steps``: env steps
    per run; ``sweep_settings`` go to the baselines' :class:`~motivegym.experiments.sweep.SweepSpec` (``num_envs``,
    ``num_steps``, ``sharing``). Finished runs are kept in ``out/runs`` and not retrained (resumable).

    ``algorithm`` may also be a fixed policy spec (``"random"``, ``"bot:cooperator"``, ``"constant:0.5"``,
    ``"oracle:nash"`` …, see ``motivegym scenario``): it is evaluated untrained on every env (one row per env × reward
    layer, seed 0, ``steps = 0``, sharing ``"fixed"``), a reference line in the same table."""
    from tqdm import tqdm

    from motivegym.experiments.sweep import SweepSpec, collect_results, expand_envs, read_results, run_sweep, save_run

    fixed = isinstance(algorithm, str)
    if not fixed:
        check_algorithm(algorithm)
    if seeds < 1 or steps < 1 or eval_episodes < 1:
        raise ValueError(f"seeds, steps and eval_episodes must be positive, got {seeds}, {steps}, {eval_episodes}")
    envs = expand_envs([suite] if isinstance(suite, str) else list(suite))
    rewards = tuple(dict.fromkeys(rewards))
    out = Path(out)
    (out / "runs").mkdir(parents=True, exist_ok=True)
    if baselines:
        spec = SweepSpec(envs=envs, rewards=rewards, algos=tuple(baselines), seeds=seeds, steps=steps,
                         eval_episodes=eval_episodes, checkpoints=(1.0,), **sweep_settings)  # fmt: skip
        run_sweep(spec, out, progress=progress)
    cells = [(env_id, reward) for env_id in envs for reward in rewards]
    name = algorithm if fixed else algorithm.name
    for env_id, reward in tqdm(cells, desc=f"{name} runs", unit="cell", disable=not progress):
        if fixed:
            if not run_file(out, name, env_id, reward, 0, 0, eval_episodes, "fixed").exists():
                save_run(out, score_fixed_policy(name, env_id, reward, eval_episodes, out / "baselines"))
            continue
        pending = [s for s in range(seeds) if not run_file(out, algorithm.name, env_id, reward, s, steps, eval_episodes).exists()]
        if pending:
            for record in train_and_score(algorithm, env_id, reward, pending, steps, eval_episodes, out / "baselines"):
                save_run(out, record)
    return BenchmarkResult(out, read_results(collect_results(out)))


def check_algorithm(algorithm: Any) -> None:
    """``TypeError`` naming what is missing when ``algorithm`` does not implement the protocol."""
    missing = [attr for attr in ("name", "train", "act") if not hasattr(algorithm, attr)]
    if missing or not callable(algorithm.train) or not callable(algorithm.act):
        raise TypeError(
            f"{algorithm!r} is not a motivegym.benchmark.Algorithm: it needs a name, train(key, env, env_params, "
            f"total_steps) -> policy_params and act(policy_params, obs, key) -> actions (missing: {', '.join(missing) or 'callables'})"
        )
    if not isinstance(algorithm.name, str) or not algorithm.name or "__" in algorithm.name:
        raise ValueError(f"algorithm.name must be a non-empty string without '__', got {algorithm.name!r}")


def run_settings(algo: str, env_id: str, reward: str, seed: int, steps: int, eval_episodes: int, sharing: str = "user") -> dict[str, Any]:
    """A user algorithm's run settings (the resume key, hashed into the run file's name like a sweep run's)."""
    from motivegym.experiments.sweep import EVAL_SEED

    return {"env": env_id, "algo": algo, "sharing": sharing, "reward": reward, "seed": seed, "budget": int(steps),
            "eval_episodes": eval_episodes, "eval_seed": EVAL_SEED, "checkpoints": [1.0]}  # fmt: skip


def run_file(out: Path, algo: str, env_id: str, reward: str, seed: int, steps: int, eval_episodes: int, sharing: str = "user") -> Path:
    from motivegym.experiments.sweep import run_name

    return out / "runs" / f"{run_name(run_settings(algo, env_id, reward, seed, steps, eval_episodes, sharing))}.json"


def train_and_score(
    algorithm: Algorithm, env_id: str, reward: str, seeds: list[int], steps: int, eval_episodes: int, cache_dir: Path
) -> list[dict]:
    """Train ``algorithm`` for every seed (one vmapped jitted call), score the final policies on payoffs."""
    from motivegym.adapters.functional import make_rewarded
    from motivegym.experiments.evaluation import summarize
    from motivegym.experiments.sweep import evaluate_policy_states, random_baseline, run_columns, run_name, scored_columns
    from motivegym.reward_layers import reward_layer

    rewarded, env_params = make_rewarded(env_id, reward, autoreset=True)
    env = rewarded.env
    keys = jax.vmap(jax.random.PRNGKey)(np.asarray(seeds, np.uint32))
    start = time.perf_counter()
    trained = jax.jit(jax.vmap(lambda key: algorithm.train(key, rewarded, env_params, int(steps))))(keys)
    jax.block_until_ready(trained)
    wall = (time.perf_counter() - start) / len(seeds)
    layer = reward_layer(reward)
    stats = evaluate_policy_states(env, env_params, (layer,), JaxPolicy(algorithm.act, algorithm.name), JaxPolicy.state(trained), eval_episodes)
    stats = jax.device_get(stats)
    cache_dir.mkdir(parents=True, exist_ok=True)
    random_welfare = random_baseline(env_id, eval_episodes, cache_dir)
    records = []
    for k, seed in enumerate(seeds):
        settings = run_settings(algorithm.name, env_id, reward, seed, steps, eval_episodes)
        summary = summarize(jax.tree.map(lambda x, k=k: x[k], stats))
        row = {
            **run_columns(env_id, algorithm.name, "user", eval_episodes), "reward": reward, "seed": seed, "steps": int(steps),
            "budget": int(steps), "n_agents": env.n_agents(env_params), **scored_columns(env_id, summary, random_welfare),
            "wall_s": wall, "run_id": run_name(settings),
        }  # fmt: skip
        records.append({"settings": settings, "rows": [row], "curve": None})
    return records


def score_fixed_policy(spec: str, env_id: str, reward: str, eval_episodes: int, cache_dir: Path) -> dict:
    """The run record of an untrained policy spec on ``env_id`` (scored like a trained run, on the same keys)."""
    from motivegym.core.registry import make_jax
    from motivegym.experiments.evaluation import summarize
    from motivegym.experiments.scenarios import resolve_population
    from motivegym.experiments.sweep import evaluate_policy_states, random_baseline, run_columns, run_name, scored_columns
    from motivegym.reward_layers import reward_layer

    env, env_params = make_jax(env_id)
    layer = reward_layer(reward)
    policy, state, batched = resolve_population(spec, env_id, env, env_params, layer)
    if not batched:
        state = jax.tree.map(lambda x: np.asarray(x)[None], state)
    stats = jax.device_get(evaluate_policy_states(env, env_params, (layer,), policy, state, eval_episodes))
    cache_dir.mkdir(parents=True, exist_ok=True)
    settings = run_settings(spec, env_id, reward, 0, 0, eval_episodes, "fixed")
    summary = summarize(jax.tree.map(lambda x: x[0], stats))
    row = {
        **run_columns(env_id, spec, "fixed", eval_episodes), "reward": reward, "seed": 0, "steps": 0, "budget": 0,
        "n_agents": env.n_agents(env_params), **scored_columns(env_id, summary, random_baseline(env_id, eval_episodes, cache_dir)),
        "wall_s": 0.0, "run_id": run_name(settings),
    }  # fmt: skip
    return {"settings": settings, "rows": [row], "curve": None}
