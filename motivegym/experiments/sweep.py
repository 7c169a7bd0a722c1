"""Reward-type ablation sweeps (``motivegym sweep``): env × algorithm × parameter sharing × reward layer × seed.

All runs that share an env, an algorithm and a sharing mode are ONE compiled program: the learner's
training function (``baselines/ppo.py`` or ``baselines/value_based.py``) is ``vmap``-ed over (seed,
reward-layer index) pairs and split across the local devices (on a CPU host ``motivegym sweep`` makes
one XLA host device per core). Training runs in chunks so every run is **evaluated at several points of
its budget** (``checkpoints``, default 25%, 50% and 100%): greedy policies, ``eval_episodes`` episodes on
the same episode keys for every run and for the uniform-random baseline (common random numbers).

Scores are on **payoffs**, never on the training reward, so reward types are comparable:
``normalized_score = (W − W_random)/(W_opt − W_random)`` and ``gap_to_optimum_percent =
(W − W_opt)/|W_opt|·100``, with ``W_random`` and ``W_opt`` the env's dilemma-strength constants
(``motivegym.envs.strength``; ``W_opt`` is an estimate for the grid envs, ``optimum_is_estimate``).

Robustness: a run that cannot be built (a reward layer the env cannot serve, e.g. ``integrated`` without
interdependence weights) fails alone, before anything compiles, as a ``status = failed`` row with the
message; the rest of its group trains. Each finished run is written atomically to ``OUT/runs/<run>.json``
(its learning curve to ``OUT/curves/<run>.csv``); the file name ends in a digest of every setting that
changes a result (exact reward string, budget, envs per update, rollout length, evaluation episodes and
seed, checkpoints, sharing, bins), so a rerun with the same settings resumes and a changed setting never
reuses a finished run. A run file that cannot be read is reported by name, moved aside (``.corrupt``)
and recomputed. A group that crashes is recorded in ``OUT/failures/`` and the sweep goes on.
``OUT/results.csv`` (one row per run × checkpoint, see ``RESULT_COLUMNS``) and its Croissant metadata
``OUT/croissant.json`` are rebuilt from the run files at the end.

Trained policies: every trained run's final greedy policy is saved (``save_checkpoints``, default on) as
``OUT/checkpoints/<run>.safetensors`` (``motivegym.baselines.checkpoint``, ``docs/checkpoints.md``), written
atomically **before** the run's JSON, so a resumed sweep never has a finished run without its policy; the
row evaluated at the end of the budget names it in the ``checkpoint`` column (a path relative to ``OUT``).
Evaluate one with ``motivegym eval ENV checkpoint:OUT/checkpoints/<run>.safetensors``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import sys
import time
import traceback
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from motivegym.baselines.policies import LearnedPolicy
from motivegym.baselines.train import ALGORITHMS, TEAM_REWARD_ALGORITHMS, VALUE_ALGORITHMS
from motivegym.core.social_metrics import SOCIAL_METRICS
from motivegym.reward_layers import split_specs

SHARING_MODES = ("shared", "separate")
#: evaluation episode keys: ``episode_keys(EVAL_SEED, eval_episodes)`` for every run and baseline of a sweep
EVAL_SEED = 20_000
#: env presets accepted by ``envs``: name → callable giving the ids
ENV_PRESETS: dict[str, Callable[[], tuple[str, ...]]] = {}
RESULT_COLUMNS = (
    "env", "family", "mechanism", "tier", "algo", "sharing", "reward", "seed", "steps", "budget", "status", "error",
    "n_agents", "eval_episodes", "eval_seed", "welfare", "normalized_score", "gap_to_optimum_percent", "random_welfare",
    "nash_welfare", "optimum_welfare", "optimum_is_estimate", "payoff_returns", "reward_returns", "total_reward",
    "training_reward", "training_welfare", "cooperation_rate", "final_trust", "episode_length",
    "efficiency", "equality", "sustainability", "peace", "wall_s", "run_id", "motivegym_version", "jax_version", "checkpoint",
)  # fmt: skip


def _dilemma_preset() -> tuple[str, ...]:
    from motivegym.envs.strength import dilemma_env_ids

    return dilemma_env_ids()


ENV_PRESETS["dilemmas"] = _dilemma_preset


def expand_envs(names: Iterable[str]) -> tuple[str, ...]:
    """Env ids with presets expanded (``dilemmas``: every env whose dilemma gap passes the threshold), in order, once each."""
    from motivegym.core.registry import get_spec

    ids: list[str] = []
    for name in names:
        ids.extend(ENV_PRESETS[name]() if name in ENV_PRESETS else (get_spec(name).id,))
    return tuple(dict.fromkeys(ids))


@dataclasses.dataclass(frozen=True)
class SweepSpec:
    """What to run. ``steps`` is the training budget per run in env steps (summed over parallel envs),
    ``"reference"``: each env's budget in the reference benchmark (500k or 1M, ``EnvSpec.reference_steps``),
    or a mapping env id (or preset name) → steps with an optional ``"default"`` for the rest.
    ``sharing``: ``"shared"`` (one network, agent one-hot input), ``"separate"`` (one per agent) or both.
    ``checkpoints``: fractions of the budget at which every run is evaluated (must end with 1.0).
    ``bins``: actions per agent when a value-based learner (IQL) meets a continuous env.
    ``save_checkpoints``: write each trained run's final policy to ``OUT/checkpoints/<run>.safetensors``
    (not a resume key: switching it never retrains a finished run).
    """

    envs: tuple[str, ...]
    rewards: tuple[str, ...] = ("private", "integrated", "cooperative")
    algos: tuple[str, ...] = ("ippo",)
    seeds: int = 10
    steps: int | str | dict = 1_000_000
    num_envs: int = 16
    num_steps: int = 128
    eval_episodes: int = 16
    sharing: tuple[str, ...] = ("shared",)
    checkpoints: tuple[float, ...] = (0.25, 0.5, 1.0)
    bins: int = 11
    save_checkpoints: bool = True

    def __post_init__(self):
        from motivegym.core.errors import check_names
        from motivegym.core.registry import get_spec
        from motivegym.reward_layers import reward_layer

        if not self.envs or not self.rewards or not self.algos or not self.sharing:
            raise ValueError("a sweep needs at least one env, reward, algorithm and sharing mode")
        check_names("algorithm", self.algos, ALGORITHMS, "motivegym sweep")
        sharing = tuple(dict.fromkeys(m for s in self.sharing for m in (SHARING_MODES if s == "both" else (s,))))
        check_names("sharing mode", sharing, (*SHARING_MODES, "both"), "motivegym sweep")
        object.__setattr__(self, "sharing", sharing)
        object.__setattr__(self, "envs", expand_envs(self.envs))
        object.__setattr__(self, "rewards", tuple(dict.fromkeys(self.rewards)))
        object.__setattr__(self, "checkpoints", tuple(float(c) for c in self.checkpoints))
        for reward in self.rewards:
            reward_layer(reward)
        team = [a for a in self.algos if a in TEAM_REWARD_ALGORITHMS]
        if team and len(self.rewards) > 1:
            raise ValueError(
                f"{', '.join(a.upper() for a in team)} learn from the team reward (the mean over agents of the layer's rewards), "
                f"so private, cooperative and mutuality:ρ give them one and the same signal: a sweep over {len(self.rewards)} reward "
                "layers would repeat one run under several labels. Run team-reward learners in a sweep with one reward "
                "(e.g. --algos vdn,qmix --rewards cooperative) and the reward-type ablation with ippo, mappo or iql."
            )
        if isinstance(self.steps, dict):
            object.__setattr__(self, "steps", per_env_budgets(self.steps, self.envs))
        elif isinstance(self.steps, str):
            if self.steps != REFERENCE_BUDGET:
                raise ValueError(f"steps must be a number of env steps or {REFERENCE_BUDGET!r}, got {self.steps!r}")
            missing = [e for e in self.envs if not get_spec(e).reference_steps]
            if missing:
                raise ValueError(
                    f"steps={REFERENCE_BUDGET!r}: {missing} have no reference training budget (only the coopetition family has one)"
                )
        if isinstance(self.steps, int | float) and not isinstance(self.steps, bool):
            object.__setattr__(self, "steps", int(self.steps))
        if self.seeds < 1 or self.eval_episodes < 1 or self.bins < 2 or (isinstance(self.steps, int) and self.steps < 1):
            raise ValueError(
                f"seeds, steps and eval_episodes must be positive and bins >= 2, got {self.seeds}, {self.steps}, {self.eval_episodes}, {self.bins}"
            )
        if self.num_envs < 1 or self.num_steps < 1:
            raise ValueError(f"num_envs and num_steps must be positive, got {self.num_envs}, {self.num_steps}")
        points = self.checkpoints
        if not points or points[-1] != 1.0 or any(not 0.0 < c <= 1.0 for c in points) or list(points) != sorted(set(points)):
            raise ValueError(f"checkpoints must be increasing fractions in (0, 1] ending with 1.0, got {points}")

    def budget(self, env_id: str) -> int:
        """Training env steps per run of ``env_id``."""
        return run_budget(self.steps, env_id)

    def runs(self) -> list[tuple[str, str, str, str, int]]:
        """Every ``(env, algo, sharing, reward, seed)`` in a fixed order."""
        return [
            (e, a, m, r, s) for e in self.envs for a in self.algos for m in self.sharing for r in self.rewards for s in range(self.seeds)
        ]

    def checkpoint_updates(self, env_id: str) -> list[int]:
        """Update counts after which runs of ``env_id`` are evaluated (strictly increasing, the last = all updates)."""
        total = max(1, self.budget(env_id) // (self.num_envs * self.num_steps))
        return sorted({max(1, min(total, math.ceil(c * total))) for c in self.checkpoints})

    def run_settings(self, env_id: str, algo: str, sharing: str, reward: str, seed: int) -> dict[str, Any]:
        """Every setting that changes a run's result (the resume key)."""
        settings = {
            "env": env_id, "algo": algo, "sharing": sharing, "reward": reward, "seed": seed, "budget": self.budget(env_id),
            "num_envs": self.num_envs, "num_steps": self.num_steps, "eval_episodes": self.eval_episodes, "eval_seed": EVAL_SEED,
            "checkpoints": list(self.checkpoints),
        }  # fmt: skip
        if algo in VALUE_ALGORITHMS:
            settings["bins"] = self.bins
        return settings


REFERENCE_BUDGET = "reference"


def run_budget(steps: int | str | dict, env_id: str) -> int:
    """``steps`` itself, the env's entry of a per-env mapping, or its reference budget when ``steps == "reference"``."""
    if isinstance(steps, dict):
        return steps[env_id]
    if steps == REFERENCE_BUDGET:
        from motivegym.core.registry import get_spec

        return get_spec(env_id).reference_steps
    return int(steps)


def per_env_budgets(steps: dict, envs: tuple[str, ...]) -> dict[str, int]:
    """``{env id: steps}`` for every env of the sweep from a mapping of ids / presets and an optional ``"default"``."""
    budgets: dict[str, int] = {}
    default = steps.get("default")
    for key, value in steps.items():
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 1 or value != int(value):
            raise ValueError(f"steps[{key!r}] must be a positive whole number of env steps, got {value!r}")
        if key != "default":
            for env_id in expand_envs((key,)):
                if env_id not in envs:
                    raise ValueError(f"steps names {key!r}, which is not among the sweep's envs {list(envs)}")
                budgets[env_id] = int(value)
    missing = [e for e in envs if e not in budgets]
    if missing and default is None:
        raise ValueError(f"steps has no budget for {missing}; give them one or add a 'default'")
    return {e: budgets.get(e, int(default) if default is not None else 0) for e in envs}


LIST_SETTINGS = ("envs", "rewards", "algos", "sharing", "checkpoints")


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
    return {k: split_list(v) if k in LIST_SETTINGS and isinstance(v, str) else v for k, v in data.items()}


def run_name(settings: dict[str, Any]) -> str:
    """A file-safe run id, ``TrustDilemma-v0__ippo__shared__mutuality-0.25__seed3__<digest>``; the digest covers
    every setting, so two reward strings that sanitise alike, or two budgets, never share a file."""
    def safe(text: str) -> str:
        return "".join(c if c.isalnum() or c in "-_." else "-" for c in text)[:60]

    digest = hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:12]
    return f"{settings['env']}__{safe(settings['algo'])}__{settings['sharing']}__{safe(settings['reward'])}__seed{settings['seed']}__{digest}"


def write_atomic(path: Path, text: str) -> None:
    """Write via a temporary file and ``os.replace`` so a crash never leaves a partial file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def evaluate_policy_states(env, params, layers: tuple, policy: Any, policy_states: Any, episodes: int) -> Any:
    """Episode stats ``[runs, episodes]`` of ``policy`` under each of the batched ``policy_states``, on the sweep's
    evaluation keys ``episode_keys(EVAL_SEED, episodes)`` — the keys every run and baseline of a sweep shares."""
    from motivegym.experiments.evaluation import episode_keys, rollout_batch

    keys = episode_keys(EVAL_SEED, episodes)
    return rollout_batch(env, params, layers, policy, env.max_episode_steps(params), policy_states, keys, batched_states=True)


def random_baseline(env_id: str, episodes: int, cache_dir: Path) -> float:
    """Welfare of the uniform random policy on the sweep's evaluation keys (cached on disk)."""
    from motivegym.experiments.evaluation import evaluate

    path = cache_dir / f"{env_id}__random__{episodes}episodes__seed{EVAL_SEED}.json"
    if path.exists():
        try:
            return float(json.loads(path.read_text())["random_welfare"])
        except (ValueError, KeyError, TypeError):
            print(f"motivegym sweep: unreadable baseline file {path}; recomputing it", file=sys.stderr)
    welfare = evaluate(env_id, "random", "private", episodes, seed=EVAL_SEED, compare_to_oracle=False).welfare
    write_atomic(path, json.dumps({"random_welfare": welfare}))
    return welfare


def build_group_learner(env_id: str, algo: str, sharing: str, rewards: tuple[str, ...], spec: SweepSpec) -> Any:
    """The learner of one env × algorithm × sharing group, with ``rewards`` selectable by index."""
    from motivegym.baselines.train import build_learner

    learner, _, _ = build_learner(
        algo, env_id, rewards, spec.budget(env_id), spec.num_envs, spec.num_steps, spec.bins, share_parameters=sharing == "shared"
    )
    return learner


def unbuildable_reason(env_id: str, reward: str) -> str | None:
    """Why ``reward`` cannot be computed on ``env_id`` (traced abstractly: nothing compiles), or None if it can."""
    import motivegym
    from motivegym.core.batching import random_actions
    from motivegym.core.env import Transition
    from motivegym.reward_layers import LayerSpec, reward_layer

    env, params = motivegym.make_jax(env_id)
    layer = reward_layer(reward)

    def one_step(key):
        state, obs = env.reset(key, params)
        actions = random_actions(env, params, key)
        _, next_obs, payoffs, _, info = env.step(key, state, actions, params)
        transition = Transition(obs, actions, payoffs, next_obs, info["terminated"], info["truncated"], info)
        layer_state = layer.init(key, LayerSpec.of(env, params))
        return layer.apply(layer_state, transition)[1]

    try:
        jax.eval_shape(one_step, jax.random.PRNGKey(0))
    except Exception as error:  # any failure to trace the layer on this env is the run's failure
        return f"reward layer {reward!r} cannot be computed on {env_id}: {type(error).__name__}: {error}"
    return None


@dataclasses.dataclass
class GroupProgram:
    """The compiled pieces of one group: ``runners = init(keys, reward_index)``; ``run(runners, updates)`` trains
    every run ``updates`` more PPO/Q-learning updates (vmapped, split across the local devices)."""

    learner: Any
    keys: jax.Array
    reward_index: jax.Array
    init: Callable
    _stages: Callable
    _runs: dict[int, Callable] = dataclasses.field(default_factory=dict)

    def chunk(self, updates: int) -> Callable:
        """The jitted ``runners -> (runners, metrics)`` of ``updates`` updates (compiled once per distinct size)."""
        if updates not in self._runs:
            from motivegym.core.batching import split_across_devices

            batched = jax.vmap(lambda runner: self._stages(runner, updates))
            self._runs[updates] = jax.jit(split_across_devices(batched, jax.local_devices()))
        return self._runs[updates]

    def run(self, runners: Any, updates: int) -> tuple[Any, Any]:
        return self.chunk(updates)(runners)


def group_program(learner: Any, pending: list[tuple[str, int]], rewards: tuple[str, ...]) -> GroupProgram:
    """The :class:`GroupProgram` training every ``(reward, seed)`` of ``pending`` with ``learner`` (whose layers are ``rewards``)."""
    from motivegym.core.batching import split_across_devices

    _, init, run = learner.make_stages()
    keys = jnp.stack([jax.random.PRNGKey(seed) for _, seed in pending])
    reward_index = jnp.asarray([rewards.index(r) for r, _ in pending], jnp.int32)
    init_all = jax.jit(split_across_devices(jax.vmap(init), jax.local_devices()))
    return GroupProgram(learner, keys, reward_index, init_all, run)


def run_group(
    env_id: str, algo: str, sharing: str, pending: list[tuple[str, int]], spec: SweepSpec, cache_dir: str
) -> list[dict[str, Any]]:
    """Train and evaluate every ``(reward, seed)`` of one env × algorithm × sharing group.

    Returns one record per run: ``{"settings", "rows" (one per checkpoint), "curve"}``; a run whose reward
    layer cannot be built for the env gets a single ``status = failed`` row and is not trained.
    """
    from motivegym.experiments.evaluation import summarize
    from motivegym.reward_layers import reward_layer

    reasons = {r: unbuildable_reason(env_id, r) for r in dict.fromkeys(r for r, _ in pending)}
    buildable = [(r, s) for r, s in pending if reasons[r] is None]
    common = run_columns(env_id, algo, sharing, spec.eval_episodes)
    records = []
    for reward, seed in pending:
        if reasons[reward] is not None:
            settings = spec.run_settings(env_id, algo, sharing, reward, seed)
            row = {**common, "reward": reward, "seed": seed, "steps": 0, "budget": settings["budget"], "status": "failed",
                   "error": reasons[reward], "run_id": run_name(settings)}  # fmt: skip
            records.append({"settings": settings, "rows": [row], "curve": None})
    if not buildable:
        return records

    rewards = tuple(dict.fromkeys(r for r, _ in buildable))
    learner = build_group_learner(env_id, algo, sharing, rewards, spec)
    program = group_program(learner, buildable, rewards)
    env, params, config = learner.env, learner.env_params, learner.config
    random_welfare = random_baseline(env_id, spec.eval_episodes, Path(cache_dir))
    layers = tuple(reward_layer(r) for r in rewards)
    steps_per_update = config.num_envs * config.num_steps
    start = time.perf_counter()
    runners = program.init(program.keys, program.reward_index)
    done, pieces, evaluations = 0, [], []
    targets = spec.checkpoint_updates(env_id)
    chunk = math.gcd(*np.diff([0, *targets]).tolist())  # one chunk length: one compilation per group
    for target in targets:
        while done < target:
            runners, metrics = program.run(runners, chunk)
            pieces.append(metrics)
            done += chunk
        policy_states = {"networks": runners["networks"], "obs_stats": runners["obs_stats"]}
        final_states = jax.device_get(policy_states)
        stats = evaluate_policy_states(env, params, layers, LearnedPolicy(learner), policy_states, spec.eval_episodes)
        evaluations.append((done * steps_per_update, jax.device_get(stats)))
    jax.block_until_ready(runners)
    wall = (time.perf_counter() - start) / len(buildable)
    metrics = jax.tree.map(lambda *parts: np.concatenate([np.asarray(p) for p in parts], axis=1), *pieces)
    payoff_curve = np.asarray(metrics["episode_payoff"]).sum(-1)  # [runs, updates]
    reward_curve = np.asarray(metrics["episode_reward"]).sum(-1)
    finished = np.asarray(metrics["episodes"])
    for k, (reward, seed) in enumerate(buildable):
        settings = spec.run_settings(env_id, algo, sharing, reward, seed)
        rows = []
        for steps, stats in evaluations:
            updates = steps // steps_per_update
            summary = summarize(jax.tree.map(lambda x, k=k: x[k], stats), layer_row=rewards.index(reward))
            tail = slice(updates - max(1, updates // 10), updates)
            valid = finished[k, tail] > 0
            rows.append(
                {
                    **common, "reward": reward, "seed": seed, "steps": steps, "budget": settings["budget"], "n_agents": learner.n_agents,
                    **scored_columns(env_id, summary, random_welfare),
                    "training_reward": float(reward_curve[k, tail][valid].mean()) if valid.any() else float("nan"),
                    "training_welfare": float(payoff_curve[k, tail][valid].mean()) if valid.any() else float("nan"),
                    "wall_s": wall, "run_id": run_name(settings),
                }
            )  # fmt: skip
        curve = {"update": list(range(1, payoff_curve.shape[1] + 1)), "welfare": payoff_curve[k].tolist(),
                 "reward": reward_curve[k].tolist(), "episodes": finished[k].tolist()}  # fmt: skip
        record = {"settings": settings, "rows": rows, "curve": curve}
        if spec.save_checkpoints:
            record["checkpoint"] = run_checkpoint(learner, final_states, k, settings, done * steps_per_update)
            rows[-1]["checkpoint"] = checkpoint_file(settings)
        records.append(record)
    return records


def checkpoint_file(settings: dict[str, Any]) -> str:
    """Where a run's final policy is saved, relative to the sweep directory."""
    return f"checkpoints/{run_name(settings)}.safetensors"


def run_checkpoint(learner: Any, policy_states: Any, index: int, settings: dict[str, Any], steps: int) -> dict[str, Any]:
    """``{"tensors", "metadata"}`` of run ``index`` of the group's batched ``policy_states`` (plain numpy, so it travels
    back from a Ray worker); :func:`save_run` writes it."""
    from motivegym.baselines.checkpoint import checkpoint_metadata, flatten_policy_state

    state = jax.tree.map(lambda leaf: np.asarray(leaf[index]), policy_states)
    metadata = checkpoint_metadata(
        learner, env_id=settings["env"], env_kwargs={}, reward=settings["reward"], algo=settings["algo"], sharing=settings["sharing"],
        seed=settings["seed"], steps=steps, extra={"run_name": run_name(settings), "settings": settings},
    )  # fmt: skip
    return {"tensors": flatten_policy_state(state), "metadata": metadata}


def run_columns(env_id: str, algo: str, sharing: str, eval_episodes: int) -> dict[str, Any]:
    """The result-table columns every run of one env × algorithm × sharing group shares (registry row, dilemma
    strength, evaluation keys, versions)."""
    import motivegym
    from motivegym.envs.strength import dilemma_strength

    registry_row = motivegym.get_spec(env_id)
    strength = dilemma_strength(env_id)
    return {
        "env": env_id, "family": registry_row.family, "mechanism": registry_row.mechanism, "tier": registry_row.tier,
        "algo": algo, "sharing": sharing, "eval_episodes": eval_episodes, "eval_seed": EVAL_SEED,
        "nash_welfare": strength.nash, "optimum_welfare": strength.optimum, "optimum_is_estimate": strength.estimate,
        "motivegym_version": motivegym.__version__, "jax_version": jax.__version__,
    }  # fmt: skip


def scored_columns(env_id: str, summary: dict[str, Any], random_welfare: float) -> dict[str, Any]:
    """The payoff-based columns of one evaluated run (``summary`` of :func:`~motivegym.experiments.evaluation.summarize`):
    welfare, ``normalized_score = (W − W_random)/(W_opt − W_random)``, the gap to the optimum, returns and social metrics."""
    from motivegym.envs.strength import dilemma_strength, normalized_score

    strength = dilemma_strength(env_id)
    welfare = summary["welfare"]
    return {
        "status": "ok", "error": None, "welfare": welfare, "normalized_score": normalized_score(env_id, welfare),
        "gap_to_optimum_percent": (welfare - strength.optimum) / abs(strength.optimum) * 100 if strength.optimum else float("nan"),
        "random_welfare": random_welfare,
        "payoff_returns": json.dumps(np.round(summary["payoff_returns"], 6).tolist()),
        "reward_returns": json.dumps(np.round(summary["reward_returns"], 6).tolist()),
        "total_reward": summary["total_return"], "cooperation_rate": summary["cooperation_rate"],
        "final_trust": summary["final_trust"], "episode_length": summary["episode_length"],
        **{m: summary[m] for m in SOCIAL_METRICS},
    }  # fmt: skip


def save_run(out: Path, record: dict[str, Any]) -> None:
    """``OUT/runs/<run>.json`` (settings and rows) and, for trained runs, ``OUT/curves/<run>.csv`` and the policy
    ``OUT/checkpoints/<run>.safetensors``; the run file is written last, so a finished run always has the others."""
    name = run_name(record["settings"])
    if record.get("checkpoint"):
        from motivegym.baselines.checkpoint import write_checkpoint

        write_checkpoint(out / checkpoint_file(record["settings"]), record["checkpoint"]["tensors"], record["checkpoint"]["metadata"])
    curve = record.get("curve")
    if curve:
        lines = ["update,welfare,reward,episodes"] + [
            f"{u},{w},{r},{e}" for u, w, r, e in zip(curve["update"], curve["welfare"], curve["reward"], curve["episodes"])
        ]
        write_atomic(out / "curves" / f"{name}.csv", "\n".join(lines) + "\n")
    write_atomic(out / "runs" / f"{name}.json", json.dumps({"settings": record["settings"], "rows": record["rows"]}))


def load_run(path: Path, settings: dict[str, Any] | None = None) -> dict[str, Any]:
    """A run file's content; ``ValueError`` naming the file if it is not a complete run (for ``settings`` if given)."""
    try:
        record = json.loads(path.read_text())
        rows = record["rows"]
        if not isinstance(rows, list) or not rows or not all(isinstance(r, dict) and "welfare" in r or r.get("status") == "failed" for r in rows):
            raise ValueError("no result rows")
        if settings is not None and record["settings"] != settings:
            raise ValueError("its settings differ from the run it is named for")
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
        raise ValueError(f"run file {path} is unreadable or incomplete ({type(error).__name__}: {error})") from None
    return record


def pending_groups(spec: SweepSpec, out: Path) -> dict[tuple[str, str, str], list[tuple[str, int]]]:
    """Runs without a valid result file, grouped by (env, algo, sharing). Unreadable files are reported by name,
    moved aside as ``<file>.corrupt`` and their runs recomputed."""
    groups: dict[tuple[str, str, str], list[tuple[str, int]]] = {}
    for env_id, algo, sharing, reward, seed in spec.runs():
        settings = spec.run_settings(env_id, algo, sharing, reward, seed)
        path = out / "runs" / f"{run_name(settings)}.json"
        if path.exists():
            try:
                load_run(path, settings)
                continue
            except ValueError as error:
                print(f"motivegym sweep: {error}; moved to {path.name}.corrupt and recomputing the run", file=sys.stderr)
                os.replace(path, path.with_name(path.name + ".corrupt"))
        groups.setdefault((env_id, algo, sharing), []).append((reward, seed))
    return groups


def record_failure(out: Path, group: tuple[str, str, str], pending: list[tuple[str, int]], error: BaseException | str) -> None:
    text = error if isinstance(error, str) else "".join(traceback.format_exception(error))
    env_id, algo, sharing = group
    payload = {"env": env_id, "algo": algo, "sharing": sharing, "runs": pending, "error": text}
    write_atomic(out / "failures" / f"{env_id}__{algo}__{sharing}.json", json.dumps(payload, indent=1))


def local_executor(tasks: list[tuple], on_done: Callable[[tuple, list | BaseException], None]) -> None:
    for task in tasks:
        try:
            result: list | BaseException = run_group(*task)
        except Exception as error:  # a failing group is recorded, the sweep goes on
            result = error
        on_done(task, result)


def ray_executor(tasks: list[tuple], on_done: Callable[[tuple, list | BaseException], None]) -> None:
    """Each (env, algo, sharing) group as a Ray task on the running cluster (``ray.init()`` if none)."""
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
    tasks = [(*group, pending, spec, str(out / "baselines")) for group, pending in groups.items()]
    bar = tqdm(total=total, initial=total - todo, desc="sweep runs", unit="run", disable=not progress)

    def on_done(task: tuple, result: list | BaseException) -> None:
        group, pending = tuple(task[:3]), task[3]
        if isinstance(result, BaseException):
            record_failure(out, group, pending, result)
            bar.write(f"FAILED {' '.join(group)}: {type(result).__name__}: {result}")
        else:
            (out / "failures" / f"{'__'.join(group)}.json").unlink(missing_ok=True)
            for record in result:
                save_run(out, record)
                if record["rows"][0]["status"] == "failed":
                    bar.write(f"run failed: {record['rows'][0]['error']}")
        bar.update(len(pending))

    EXECUTORS[executor](tasks, on_done)
    bar.close()
    return collect_results(out, spec)


def collect_results(out: Path, spec: SweepSpec | None = None) -> Path:
    """Rebuild ``results.csv`` and ``croissant.json`` from the run files (atomically); with ``spec``, only its runs."""
    import csv
    import io

    if spec is None:
        paths = sorted((out / "runs").glob("*.json"))
    else:
        paths = [out / "runs" / f"{run_name(spec.run_settings(*run))}.json" for run in spec.runs()]
        paths = [p for p in paths if p.exists()]
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=RESULT_COLUMNS, extrasaction="ignore")
    writer.writeheader()
    for path in paths:
        for row in load_run(path)["rows"]:
            writer.writerow({k: ("" if row.get(k) is None else row.get(k)) for k in RESULT_COLUMNS})
    path = out / "results.csv"
    write_atomic(path, buffer.getvalue())
    from motivegym.experiments.croissant import croissant_metadata

    write_atomic(out / "croissant.json", json.dumps(croissant_metadata(path), indent=1))
    return path


NUMERIC_INT_COLUMNS = {"seed", "steps", "budget", "n_agents", "eval_episodes", "eval_seed"}
TEXT_COLUMNS = {"env", "family", "mechanism", "tier", "algo", "sharing", "reward", "status", "error", "run_id",
                "payoff_returns", "reward_returns", "motivegym_version", "jax_version", "checkpoint"}  # fmt: skip


def read_results(path: str | Path) -> list[dict[str, Any]]:
    """``results.csv`` rows with numbers parsed (empty cells → None; ``optimum_is_estimate`` → bool)."""
    import csv

    rows = []
    with open(path, newline="") as handle:
        for row in csv.DictReader(handle):
            parsed: dict[str, Any] = {}
            for key, value in row.items():
                if value == "":
                    parsed[key] = None
                elif key in NUMERIC_INT_COLUMNS:
                    parsed[key] = int(value)
                elif key == "optimum_is_estimate":
                    parsed[key] = value == "True"
                elif key in TEXT_COLUMNS:
                    parsed[key] = value
                else:
                    parsed[key] = float(value)
            rows.append(parsed)
    return rows


def split_list(text: str | Iterable[str]) -> tuple[str, ...]:
    """Comma-separated items (commas inside a reward layer's options, ``icm(normalize=true, hidden=32)``, stay)."""
    items = split_specs(text) if isinstance(text, str) else list(text)
    return tuple(str(i).strip() for i in items if str(i).strip())


def sweep_cli(args: Any) -> int:
    settings: dict[str, Any] = load_spec_file(args.config) if args.config else {}
    for name in LIST_SETTINGS:
        value = getattr(args, name)
        if value:
            settings[name] = split_list(value)
    for name in ("seeds", "num_envs", "num_steps", "eval_episodes", "bins"):
        if getattr(args, name) is not None:
            settings[name] = getattr(args, name)
    if args.steps is not None:
        settings["steps"] = args.steps if args.steps == REFERENCE_BUDGET else int(float(args.steps))
    if "envs" not in settings:
        raise ValueError("motivegym sweep: give --envs (or envs in the --config file)")
    settings = {k: split_list(v) if k in LIST_SETTINGS else v for k, v in settings.items()}
    if "checkpoints" in settings:
        try:
            settings["checkpoints"] = tuple(float(c) for c in settings["checkpoints"])
        except ValueError:
            raise ValueError(f"checkpoints must be numbers, got {settings['checkpoints']}") from None
    spec = SweepSpec(**settings)
    path = run_sweep(spec, args.out, args.executor)
    rows = read_results(path)
    failed_runs = sorted({r["run_id"] for r in rows if r["status"] == "failed"})
    crashed = sorted((Path(args.out) / "failures").glob("*.json"))
    print(f"wrote {path} ({len({r['run_id'] for r in rows})} runs, {len(rows)} rows); "
          f"{len(failed_runs)} run(s) could not be built (status 'failed' in the table); {len(crashed)} group(s) crashed")  # fmt: skip
    return 1 if crashed else 0
