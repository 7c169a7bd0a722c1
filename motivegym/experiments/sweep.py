"""Reward-type ablation sweeps (``motivegym sweep``): env × reward layer × algorithm × seed.

All runs that share an env and an algorithm are ONE compiled program: the PPO training function is
``vmap``-ed over (seed, reward-layer index) pairs, split across the local devices (on a CPU host,
``motivegym sweep`` makes one XLA host device per core, so both cores of a 2-core machine train), and
the greedy evaluation of every run is one more vmapped call. Each finished run is written atomically
to ``OUT/runs/<run>.json`` (and its learning curve to ``OUT/curves/<run>.csv``); a rerun skips runs whose file exists, so an interrupted sweep
resumes where it stopped. A group that raises is recorded in ``OUT/failures/`` and the sweep goes on.
``OUT/results.csv`` (one row per run × evaluation) and its Croissant metadata ``OUT/croissant.json``
are rebuilt from the run files at the end.

Columns: env, family, mechanism, tier, algo, reward, seed, steps, n_agents, eval_episodes,
welfare (mean Σ_i Σ_t π), payoff_returns / reward_returns (per agent, JSON lists), total_reward
(Σ_i of the training-layer returns), training_reward / training_welfare (last 10% of updates),
cooperation_rate, final_trust, episode_length, the social outcome metrics efficiency, equality,
sustainability and peace (Perolat et al. 2017), random_welfare, oracle, oracle_return, gap_percent,
normalized_score ``(W − W_random)/|W_oracle − W_random|`` (NaN without an oracle), wall_s, versions.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
import traceback
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from motivegym.core.social_metrics import SOCIAL_METRICS

SWEEP_ALGORITHMS = {"ippo": {"centralized_critic": False}, "mappo": {"centralized_critic": True}}
RESULT_COLUMNS = (
    "env", "family", "mechanism", "tier", "algo", "reward", "seed", "steps", "n_agents", "eval_episodes",
    "welfare", "payoff_returns", "reward_returns", "total_reward", "training_reward", "training_welfare",
    "cooperation_rate", "final_trust", "episode_length", "efficiency", "equality", "sustainability", "peace", "random_welfare", "oracle", "oracle_return",
    "gap_percent", "normalized_score", "wall_s", "motivegym_version", "jax_version",
)  # fmt: skip


@dataclasses.dataclass(frozen=True)
class SweepSpec:
    """What to run. ``steps`` is the training budget per run in env steps (summed over parallel envs),
    or ``"reference"``: each env's budget in the reference benchmark (500k or 1M, ``EnvSpec.reference_steps``).
    """

    envs: tuple[str, ...]
    rewards: tuple[str, ...] = ("private", "integrated", "cooperative")
    algos: tuple[str, ...] = ("ippo",)
    seeds: int = 7
    steps: int | str = 1_000_000
    num_envs: int = 16
    num_steps: int = 128
    eval_episodes: int = 16
    oracle_gap: bool = True

    def __post_init__(self):
        from motivegym.core.errors import check_names
        from motivegym.core.registry import get_spec
        from motivegym.reward_layers import reward_layer

        if not self.envs or not self.rewards or not self.algos:
            raise ValueError("a sweep needs at least one env, reward and algorithm")
        check_names("algorithm", self.algos, SWEEP_ALGORITHMS, "motivegym sweep")
        object.__setattr__(self, "envs", tuple(get_spec(e).id for e in self.envs))
        for reward in self.rewards:
            reward_layer(reward)
        if isinstance(self.steps, str):
            if self.steps != REFERENCE_BUDGET:
                raise ValueError(f"steps must be a number of env steps or {REFERENCE_BUDGET!r}, got {self.steps!r}")
            missing = [e for e in self.envs if not get_spec(e).reference_steps]
            if missing:
                raise ValueError(
                    f"steps={REFERENCE_BUDGET!r}: {missing} have no reference training budget (only the coopetition family has one)"
                )
        if self.seeds < 1 or self.eval_episodes < 1 or (isinstance(self.steps, int) and self.steps < 1):
            raise ValueError(
                f"seeds, steps and eval_episodes must be positive, got {self.seeds}, {self.steps}, {self.eval_episodes}"
            )

    def budget(self, env_id: str) -> int:
        """Training env steps per run of ``env_id``."""
        return run_budget(self.steps, env_id)

    def runs(self) -> list[tuple[str, str, str, int]]:
        """Every ``(env, algo, reward, seed)`` in a fixed order."""
        return [(e, a, r, s) for e in self.envs for a in self.algos for r in self.rewards for s in range(self.seeds)]


REFERENCE_BUDGET = "reference"


def run_budget(steps: int | str, env_id: str) -> int:
    """``steps`` itself, or the env's reference budget when ``steps == "reference"``."""
    if steps == REFERENCE_BUDGET:
        from motivegym.core.registry import get_spec

        return get_spec(env_id).reference_steps
    return int(steps)


def load_spec_file(path: str | Path) -> dict[str, Any]:
    """Sweep settings from a TOML or YAML file (keys as in :class:`SweepSpec`; lists or comma strings)."""
    path = Path(path)
    text = path.read_text()
    if path.suffix == ".toml":
        import tomllib

        data = tomllib.loads(text)
    elif path.suffix in (".yaml", ".yml"):
        try:
            import yaml
        except ImportError:
            raise ValueError("reading YAML sweep files needs PyYAML (pip install pyyaml); or use TOML") from None
        data = yaml.safe_load(text) or {}
    else:
        raise ValueError(f"sweep files must be .toml, .yaml or .yml, got {path.name}")
    from motivegym.core.errors import check_names

    check_names("sweep setting", data, [f.name for f in dataclasses.fields(SweepSpec)], str(path))
    return {k: tuple(v.split(",")) if k in ("envs", "rewards", "algos") and isinstance(v, str) else v for k, v in data.items()}


def run_name(env_id: str, algo: str, reward: str, seed: int, steps: int) -> str:
    """A file-safe run id: ``TrustDilemma-v0__ippo__mutuality-0.25__seed3__1000000``."""
    safe = "".join(c if c.isalnum() or c in "-_." else "-" for c in reward)
    return f"{env_id}__{algo}__{safe}__seed{seed}__{steps}"


def write_atomic(path: Path, text: str) -> None:
    """Write via a temporary file and ``os.replace`` so a crash never leaves a partial file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


@dataclasses.dataclass(frozen=True)
class LearnedPolicy:
    """A trained PPO learner's greedy policy as a reference-policy callable (for ``rollout_batch``)."""

    learner: Any

    def __call__(self, key, obs, state):
        from motivegym.baselines.normalization import normalize

        learner = self.learner
        norm_obs = normalize(state["obs_stats"], obs) if learner.config.normalize_observations else obs
        return learner.env_action(learner.greedy(learner.policy_output(state["networks"], norm_obs))), state


def baseline_returns(env_id: str, reward: str, episodes: int, oracle: bool, cache_dir: Path) -> dict[str, Any]:
    """Random-policy welfare and (optionally) the reference oracle's return for ``(env, reward)``, cached on disk."""
    from motivegym.core.registry import get_spec
    from motivegym.experiments.evaluation import evaluate

    path = cache_dir / f"{run_name(env_id, 'baselines', reward, 0, episodes)}{'__oracle' if oracle else ''}.json"
    if path.exists():
        return json.loads(path.read_text())
    random = evaluate(env_id, "random", reward, episodes, seed=10_000, compare_to_oracle=False)
    out: dict[str, Any] = {"random_welfare": random.welfare, "oracle": None, "oracle_return": None, "oracle_welfare": None}
    name = get_spec(env_id).reference_oracle
    if oracle and name:
        solved = evaluate(env_id, f"oracle:{name}", reward, episodes, seed=10_000, compare_to_oracle=False)
        out.update(oracle=name, oracle_return=solved.total_return, oracle_welfare=solved.welfare)
    write_atomic(path, json.dumps(out))
    return out


def group_program(
    env_id: str, algo: str, pending: list[tuple[str, int]], total_steps: int, num_envs: int, num_steps: int
) -> tuple[Any, Callable, jax.Array, jax.Array]:
    """``(learner, train, keys, reward_index)`` of one env × algorithm group: ``train(keys, reward_index)`` is
    the jitted PPO run of every ``(reward, seed)`` in ``pending``, vmapped and split across the local devices."""
    import motivegym
    from motivegym.baselines.ppo import MultiAgentPPO, PPOConfig
    from motivegym.core.batching import split_across_devices

    env, params = motivegym.make_jax(env_id)
    rewards = tuple(dict.fromkeys(r for r, _ in pending))
    config = PPOConfig(total_steps=total_steps, num_envs=num_envs, num_steps=num_steps, **SWEEP_ALGORITHMS[algo])
    learner = MultiAgentPPO(env, params, rewards, config)
    keys = jnp.stack([jax.random.PRNGKey(seed) for _, seed in pending])
    reward_index = jnp.asarray([rewards.index(r) for r, _ in pending], jnp.int32)
    train = jax.jit(split_across_devices(jax.vmap(learner.make_train()), jax.local_devices()))
    return learner, train, keys, reward_index


def run_group(env_id: str, algo: str, pending: list[tuple[str, int]], spec: SweepSpec, cache_dir: str) -> list[dict[str, Any]]:
    """Train and evaluate every ``(reward, seed)`` of one env × algorithm in one compiled program each.

    Returns one row per run (see the module docstring) with its learning curve under ``"curve"``.
    """
    import motivegym
    from motivegym.experiments.evaluation import episode_keys, gap_percent, rollout_batch, summarize
    from motivegym.reward_layers import reward_layer

    registry_row = motivegym.get_spec(env_id)
    rewards = tuple(dict.fromkeys(r for r, _ in pending))
    learner, train, keys, reward_index = group_program(env_id, algo, pending, spec.budget(env_id), spec.num_envs, spec.num_steps)
    env, params, config = learner.env, learner.env_params, learner.config
    start = time.perf_counter()
    runners, metrics = train(keys, reward_index)
    jax.block_until_ready(metrics)
    policy_states = {"networks": runners["networks"], "obs_stats": runners["obs_stats"]}
    layers = tuple(reward_layer(r) for r in rewards)
    stats = rollout_batch(
        env, params, layers, LearnedPolicy(learner), env.max_episode_steps(params), policy_states,
        episode_keys(20_000, spec.eval_episodes), batched_states=True,
    )  # fmt: skip
    jax.block_until_ready(stats)
    wall = (time.perf_counter() - start) / len(pending)
    payoff_curve = np.asarray(metrics["episode_payoff"]).sum(-1)  # [runs, updates]
    reward_curve = np.asarray(metrics["episode_reward"]).sum(-1)
    finished = np.asarray(metrics["episodes"])
    tail = max(1, config.num_updates // 10)
    steps_done = config.num_updates * config.num_envs * config.num_steps
    rows = []
    for k, (reward, seed) in enumerate(pending):
        summary = summarize(jax.tree.map(lambda x, k=k: x[k], stats), layer_row=rewards.index(reward))
        base = baseline_returns(env_id, reward, spec.eval_episodes, spec.oracle_gap, Path(cache_dir))
        valid = finished[k, -tail:] > 0
        oracle_welfare = base.get("oracle_welfare")
        spread = None if oracle_welfare is None else abs(oracle_welfare - base["random_welfare"])
        rows.append(
            {
                "env": env_id, "family": registry_row.family, "mechanism": registry_row.mechanism, "tier": registry_row.tier,
                "algo": algo, "reward": reward, "seed": seed, "steps": steps_done, "n_agents": learner.n_agents,
                "eval_episodes": spec.eval_episodes, "welfare": summary["welfare"],
                "payoff_returns": json.dumps(np.round(summary["payoff_returns"], 6).tolist()),
                "reward_returns": json.dumps(np.round(summary["reward_returns"], 6).tolist()),
                "total_reward": summary["total_return"],
                "training_reward": float(reward_curve[k, -tail:][valid].mean()) if valid.any() else float("nan"),
                "training_welfare": float(payoff_curve[k, -tail:][valid].mean()) if valid.any() else float("nan"),
                "cooperation_rate": summary["cooperation_rate"], "final_trust": summary["final_trust"],
                "episode_length": summary["episode_length"], **{m: summary[m] for m in SOCIAL_METRICS}, "random_welfare": base["random_welfare"],
                "oracle": base["oracle"], "oracle_return": base["oracle_return"],
                "gap_percent": None if base["oracle_return"] is None else gap_percent(summary["total_return"], base["oracle_return"]),
                "normalized_score": (summary["welfare"] - base["random_welfare"]) / spread if spread else float("nan"),
                "wall_s": wall, "motivegym_version": motivegym.__version__, "jax_version": jax.__version__,
                "curve": {"update": list(range(config.num_updates)), "welfare": payoff_curve[k].tolist(), "reward": reward_curve[k].tolist(), "episodes": finished[k].tolist()},
            }
        )  # fmt: skip
    return rows


def save_run(out: Path, row: dict[str, Any]) -> None:
    name = run_name(row["env"], row["algo"], row["reward"], row["seed"], row["_budget"])
    curve = row.pop("curve")
    lines = ["update,welfare,reward,episodes"] + [
        f"{u},{w},{r},{e}" for u, w, r, e in zip(curve["update"], curve["welfare"], curve["reward"], curve["episodes"])
    ]
    write_atomic(out / "curves" / f"{name}.csv", "\n".join(lines) + "\n")
    row = {k: v for k, v in row.items() if k != "_budget"}
    write_atomic(out / "runs" / f"{name}.json", json.dumps(row))


def pending_groups(spec: SweepSpec, out: Path) -> dict[tuple[str, str], list[tuple[str, int]]]:
    """Runs without a result file, grouped by (env, algo)."""
    groups: dict[tuple[str, str], list[tuple[str, int]]] = {}
    for env_id, algo, reward, seed in spec.runs():
        if not (out / "runs" / f"{run_name(env_id, algo, reward, seed, spec.budget(env_id))}.json").exists():
            groups.setdefault((env_id, algo), []).append((reward, seed))
    return groups


def record_failure(out: Path, env_id: str, algo: str, pending: list[tuple[str, int]], error: BaseException | str) -> None:
    text = error if isinstance(error, str) else "".join(traceback.format_exception(error))
    payload = {"env": env_id, "algo": algo, "runs": pending, "error": text}
    write_atomic(out / "failures" / f"{env_id}__{algo}.json", json.dumps(payload, indent=1))


def local_executor(tasks: list[tuple], on_done: Callable[[tuple, list | BaseException], None]) -> None:
    for task in tasks:
        try:
            result: list | BaseException = run_group(*task)
        except Exception as error:  # a failing group is recorded, the sweep goes on
            result = error
        on_done(task, result)


def ray_executor(tasks: list[tuple], on_done: Callable[[tuple, list | BaseException], None]) -> None:
    """Each (env, algo) group as a Ray task on the running cluster (``ray.init()`` if none)."""
    try:
        import ray
    except ImportError:
        raise ValueError("--executor ray needs Ray: pip install 'motivegym[ray]'") from None
    if not ray.is_initialized():
        ray.init(include_dashboard=False, log_to_driver=False)
    remote = ray.remote(run_group)
    futures = {remote.remote(*task): task for task in tasks}
    while futures:
        done, _ = ray.wait(list(futures), num_returns=1)
        task = futures.pop(done[0])
        try:
            result: list | BaseException = ray.get(done[0])
        except Exception as error:
            result = error
        on_done(task, result)


EXECUTORS = {"local": local_executor, "ray": ray_executor}


def run_sweep(spec: SweepSpec, out: str | Path, executor: str = "local", progress: bool = True) -> Path:
    """Run every pending run of ``spec`` into ``out``; returns the path of ``results.csv``."""
    from tqdm import tqdm

    from motivegym.core.errors import check_names

    check_names("executor", [executor], EXECUTORS, "motivegym sweep")
    out = Path(out)
    (out / "runs").mkdir(parents=True, exist_ok=True)
    write_atomic(out / "sweep.json", json.dumps(dataclasses.asdict(spec), indent=1))
    groups = pending_groups(spec, out)
    total, todo = len(spec.runs()), sum(len(v) for v in groups.values())
    tasks = [(env_id, algo, pending, spec, str(out / "baselines")) for (env_id, algo), pending in groups.items()]
    bar = tqdm(total=total, initial=total - todo, desc="sweep runs", unit="run", disable=not progress)

    def on_done(task: tuple, result: list | BaseException) -> None:
        env_id, algo, pending = task[:3]
        if isinstance(result, BaseException):
            record_failure(out, env_id, algo, pending, result)
            bar.write(f"FAILED {env_id} {algo}: {type(result).__name__}: {result}")
        else:
            (out / "failures" / f"{env_id}__{algo}.json").unlink(missing_ok=True)
            for row in result:
                save_run(out, {**row, "_budget": spec.budget(env_id)})
        bar.update(len(pending))

    EXECUTORS[executor](tasks, on_done)
    bar.close()
    return collect_results(out)


def collect_results(out: Path) -> Path:
    """Rebuild ``results.csv`` and ``croissant.json`` from the run files (atomically)."""
    import csv
    import io

    rows = [json.loads(p.read_text()) for p in sorted((out / "runs").glob("*.json"))]
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=RESULT_COLUMNS, extrasaction="ignore")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: ("" if row.get(k) is None else row.get(k)) for k in RESULT_COLUMNS})
    path = out / "results.csv"
    write_atomic(path, buffer.getvalue())
    from motivegym.experiments.croissant import croissant_metadata

    write_atomic(out / "croissant.json", json.dumps(croissant_metadata(path), indent=1))
    return path


def read_results(path: str | Path) -> list[dict[str, Any]]:
    """``results.csv`` rows with numbers parsed (empty cells → None)."""
    import csv

    numeric = {"seed", "steps", "n_agents", "eval_episodes"}
    rows = []
    with open(path, newline="") as handle:
        for row in csv.DictReader(handle):
            parsed: dict[str, Any] = {}
            for key, value in row.items():
                if value == "":
                    parsed[key] = None
                elif key in numeric:
                    parsed[key] = int(value)
                else:
                    try:
                        parsed[key] = float(value)
                    except ValueError:
                        parsed[key] = value
            rows.append(parsed)
    return rows


def split_list(text: str | Iterable[str]) -> tuple[str, ...]:
    items = text.split(",") if isinstance(text, str) else list(text)
    return tuple(i.strip() for i in items if i.strip())


def sweep_cli(args: Any) -> int:
    settings: dict[str, Any] = load_spec_file(args.config) if args.config else {}
    for name in ("envs", "rewards", "algos"):
        value = getattr(args, name)
        if value:
            settings[name] = split_list(value)
    for name in ("seeds", "num_envs", "num_steps", "eval_episodes"):
        if getattr(args, name) is not None:
            settings[name] = getattr(args, name)
    if args.steps is not None:
        settings["steps"] = args.steps if args.steps == REFERENCE_BUDGET else int(float(args.steps))
    if args.no_gap:
        settings["oracle_gap"] = False
    if "envs" not in settings:
        raise ValueError("motivegym sweep: give --envs (or envs in the --config file)")
    settings = {k: split_list(v) if k in ("envs", "rewards", "algos") else v for k, v in settings.items()}
    spec = SweepSpec(**settings)
    path = run_sweep(spec, args.out, args.executor)
    failures = sorted((Path(args.out) / "failures").glob("*.json"))
    print(f"wrote {path} ({len(read_results(path))} runs); {len(failures)} failed group(s)")
    return 1 if failures else 0
