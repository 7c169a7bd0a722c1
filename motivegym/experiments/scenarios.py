"""Scenarios: a focal population among background co-players it was not trained with (Melting Pot's protocol).

A scenario (``SCENARIOS``, data like the env registry) names an env, which agent slots are **focal** and which
**background** population fills the others, plus the episode settings. ``run_scenario(name, focal)`` rolls
every episode of every focal seed in one compiled program (``vmap`` over focal states and episode keys of a
``lax.scan``; :class:`motivegym.baselines.policies.Mixed` picks each slot's action) on the same episode keys for
every focal policy (common random numbers), and reports, on **payoffs** (never on a training reward):

* ``focal_per_capita``: mean over focal slots of the episode payoff return ``Π_i = Σ_t π_i,t`` (Melting Pot's
  per-capita focal return); ``background_per_capita`` likewise; ``welfare = Σ_i Π_i`` over everybody;
* intervals: Student-t over focal seeds when there are several (the seed is the unit of replication), over
  episodes otherwise (``motivegym.experiments.statistics.mean_interval``);
* ``normalized_score = (F − F_random) / (F_best − F_random)``: 0 = a uniform-random focal population, 1 = the
  best scripted focal population (the env's bot role whose focal per-capita payoff is highest in this
  scenario), both measured on the same keys. It can exceed 1 or fall below 0.

Registered scenarios: for every env of the ``dilemmas`` preset (``motivegym.experiments.sweep.expand_envs``) and
every other env with scripted bots (the stag-hunt substrates CoopMining and StagHuntInTheMatrix, whose scripted gap
is 0), and every bot role it has (:mod:`motivegym.baselines.bots`), ``ENV/ROLE``: the first ``n − ⌊n/2⌋`` slots are focal (one
of two in the two-player games; a majority otherwise, Melting Pot's "resident" mode), the rest play the role's
bot. Roles: ``cooperator`` (the exploitable partner), ``reciprocator`` (tit-for-tat-like), ``defector``.

Focal policy specs: everything ``motivegym eval`` accepts (``random``, ``constant:<level>``, ``titfortat``,
``oracle:<name>`` …), ``bot:<role>``, and ``checkpoint:PATH`` (a file, a directory or a glob pattern whose
``*.safetensors`` files are the seeds of one population); a :class:`~motivegym.baselines.policies.Policy` object
with stacked ``focal_states`` (leading axis = seeds) from Python, e.g. :class:`motivegym.benchmark.JaxPolicy`.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import jax
import numpy as np

from motivegym.baselines.bots import BOT_TABLE, bot_roles, make_bot
from motivegym.baselines.policies import Mixed, Policy, PolicyState
from motivegym.core.env import FunctionalEnv
from motivegym.core.registry import REGISTRY
from motivegym.experiments.statistics import Interval, mean_interval

ROLE_DESCRIPTIONS = {
    "cooperator": "exploitable partner: background bots cooperate unconditionally",
    "reciprocator": "reciprocator: background bots cooperate first, then return what their partners did",
    "defector": "defector: background bots play the selfish strategy",
}
DEFAULT_EPISODES = 32


@dataclasses.dataclass(frozen=True)
class Scenario:
    """One held-out test: ``focal_slots`` act by the policy under test, the others by ``background``."""

    name: str
    env_id: str
    background: str  # a policy spec: "bot:<role>", "constant:0.5", "checkpoint:PATH", ...
    focal_slots: tuple[int, ...]
    n_agents: int
    description: str
    episodes: int = DEFAULT_EPISODES

    def focal_mask(self) -> np.ndarray:
        mask = np.zeros(self.n_agents, bool)
        mask[list(self.focal_slots)] = True
        return mask


def default_focal_slots(n: int) -> tuple[int, ...]:
    """The first ``n − ⌊n/2⌋`` slots: one of two, a majority of more."""
    return tuple(range(n - n // 2))


@functools.cache
def scenario_registry() -> dict[str, Scenario]:
    """Every registered scenario by name (built once from the env registry and the bot table)."""
    import motivegym
    from motivegym.experiments.sweep import expand_envs

    registry = {}
    with_bots = [f"{name}-v0" for name in BOT_TABLE if f"{name}-v0" in REGISTRY]
    for env_id in dict.fromkeys([*expand_envs(["dilemmas"]), *with_bots]):
        env, params = motivegym.make_jax(env_id)
        n = env.n_agents(params)
        for role in bot_roles(env_id):
            name = f"{env_id}/{role}"
            focal = default_focal_slots(n)
            text = f"{len(focal)} focal of {n} agents; {ROLE_DESCRIPTIONS[role]} ({make_bot(env_id, role, env, params).name})"
            registry[name] = Scenario(name, env_id, f"bot:{role}", focal, n, text)
    return registry


def get_scenario(name: str | Scenario) -> Scenario:
    """A scenario by name (``ValueError`` listing close names otherwise)."""
    if isinstance(name, Scenario):
        return name
    from motivegym.core.errors import check_names

    registry = scenario_registry()
    check_names("scenario", [name], tuple(registry), "motivegym scenario")
    return registry[name]


def scenario_names(env_id: str | None = None) -> list[str]:
    """Registered scenario names, optionally of one env."""
    return [s.name for s in scenario_registry().values() if env_id is None or s.env_id == env_id]


def resolve_population(spec: str | Policy, env_id: str, env: FunctionalEnv, params: Any, reward: Any = "private") -> tuple[Policy, PolicyState, bool]:
    """``(policy, state, batched)`` of a policy spec; ``batched``: the state has a leading seeds axis."""
    from motivegym.experiments.evaluation import make_policy, resolve_policy

    if isinstance(spec, str) and spec.startswith("bot:"):
        policy = make_bot(env_id, spec.removeprefix("bot:"), env, params)
        return policy, policy.init(env, params), False
    if isinstance(spec, str) and spec.startswith("checkpoint:"):
        return checkpoint_population(spec.removeprefix("checkpoint:"), env_id, env, params)
    policy, state = resolve_policy(make_policy(spec, reward), env, params)
    return policy, state, False


def checkpoint_population(path: str, env_id: str, env: FunctionalEnv, params: Any) -> tuple[Policy, PolicyState, bool]:
    """A checkpoint file (one seed), a directory of them (every ``*.safetensors``) or a glob pattern (a sweep's
    ``OUT/checkpoints/ENV__ippo__shared__private__*``): the files are the seeds of one population, stacked."""
    import glob
    from pathlib import Path

    from motivegym.baselines.checkpoint import CheckpointPolicy

    root = Path(path)
    if any(c in path for c in "*?["):
        files = sorted(Path(p) for p in glob.glob(path if path.endswith(".safetensors") else f"{path}.safetensors"))
    else:
        files = sorted(root.glob("**/*.safetensors")) if root.is_dir() else [root]
    if not files:
        raise ValueError(f"checkpoint population {path} matches no *.safetensors files")
    policies = [CheckpointPolicy(str(f)) for f in files]
    states = [p.init(env, params) for p in policies]
    if len(files) == 1:
        return policies[0], states[0], False
    if len({population_key(p.metadata) for p in policies}) != 1:
        raise ValueError(f"the checkpoints of {path} differ in reward layer, algorithm or network; give one population (e.g. a glob of one sweep cell)")
    return policies[0], jax.tree.map(lambda *leaves: np.stack(leaves), *states), True


def population_key(metadata: dict[str, Any]) -> str:
    """What checkpoints must share to be seeds of one population: env, algorithm, sharing and network config."""
    import json

    return json.dumps([metadata.get(k) for k in ("env_id", "env_kwargs", "reward", "algo", "sharing", "config", "bins")], sort_keys=True, default=str)


@dataclasses.dataclass
class ScenarioResult:
    """What one focal population scored in one scenario (payoffs; see the module docstring)."""

    scenario: str
    env_id: str
    focal: str
    background: str
    seeds: int
    episodes: int
    focal_per_capita: Interval
    background_per_capita: Interval
    welfare: Interval
    normalized_score: float
    random_focal: float
    best_focal: float
    best_focal_role: str

    def as_row(self) -> dict[str, Any]:
        row = {k: getattr(self, k) for k in ("scenario", "env_id", "focal", "background", "seeds", "episodes")}
        for key in ("focal_per_capita", "background_per_capita", "welfare"):
            interval = getattr(self, key)
            row.update({key: interval.estimate, f"{key}_low": interval.low, f"{key}_high": interval.high})
        row.update(normalized_score=self.normalized_score, random_focal=self.random_focal, best_focal=self.best_focal,
                   best_focal_role=self.best_focal_role)  # fmt: skip
        return row


def scenario_payoffs(
    scenario: Scenario, env: FunctionalEnv, params: Any, focal: Policy, focal_state: PolicyState, batched: bool, episodes: int, seed: int
) -> np.ndarray:
    """Payoff returns ``[seeds, episodes, n]`` of ``focal`` in ``scenario`` (one compiled call)."""
    from motivegym.experiments.evaluation import episode_keys, rollout_batch
    from motivegym.reward_layers import reward_layer

    background, background_state, background_batched = resolve_population(scenario.background, scenario.env_id, env, params)
    if background_batched:
        raise ValueError(f"{scenario.name}: a background population must be one policy state, not several seeds")
    if not batched:
        focal_state = jax.tree.map(lambda x: np.asarray(x)[None], focal_state)
    seeds = jax.tree.leaves(focal_state)[0].shape[0] if jax.tree.leaves(focal_state) else 1
    mask = np.broadcast_to(scenario.focal_mask(), (seeds, scenario.n_agents))
    background_states = jax.tree.map(lambda x: np.broadcast_to(np.asarray(x), (seeds, *np.shape(x))), background_state)
    states = Mixed.init_states(mask, focal_state, background_states)
    keys = episode_keys(seed, episodes)
    horizon = env.max_episode_steps(params)
    stats = rollout_batch(env, params, (reward_layer("private"),), Mixed(focal, background), horizon, states, keys, batched_states=True)
    return np.asarray(stats.payoff_returns, np.float64)


@functools.lru_cache(maxsize=256)
def reference_scores(scenario: Scenario, episodes: int, seed: int) -> dict[str, float]:
    """Focal per-capita payoff of the random focal population and of each bot role as the focal population."""
    import motivegym

    env, params = motivegym.make_jax(scenario.env_id)
    mask = scenario.focal_mask()
    scores = {}
    for spec in ("random", *(f"bot:{role}" for role in bot_roles(scenario.env_id))):
        policy, state, batched = resolve_population(spec, scenario.env_id, env, params)
        payoffs = scenario_payoffs(scenario, env, params, policy, state, batched, episodes, seed)
        scores[spec] = float(payoffs[..., mask].mean())
    return scores


def run_scenario(
    scenario: str | Scenario,
    focal: str | Policy,
    focal_state: PolicyState | None = None,
    focal_states: PolicyState | None = None,
    episodes: int | None = None,
    seed: int = 0,
    reward: Any = "private",
) -> ScenarioResult:
    """Evaluate the focal population ``focal`` in ``scenario`` (see the module docstring).

    With a :class:`Policy` object, ``focal_state`` is its state (default ``focal.init(env, params)``) or
    ``focal_states`` its states stacked on a leading seeds axis (several trained seeds of one algorithm).
    ``reward`` only matters for ``oracle:`` specs (the game the oracle is solved for); every reported number is a payoff."""
    import motivegym

    scenario = get_scenario(scenario)
    episodes = scenario.episodes if episodes is None else int(episodes)
    if episodes < 1:
        raise ValueError(f"episodes must be >= 1, got {episodes}")
    env, params = motivegym.make_jax(scenario.env_id)
    if focal_state is not None and focal_states is not None:
        raise ValueError("give focal_state (one) or focal_states (stacked seeds), not both")
    if isinstance(focal, Policy):
        batched = focal_states is not None
        policy, state = focal, focal_states if batched else (focal.init(env, params) if focal_state is None else focal_state)
    else:
        if focal_state is not None or focal_states is not None:
            raise ValueError("focal_state/focal_states need a Policy object as focal, not a spec string")
        policy, state, batched = resolve_population(focal, scenario.env_id, env, params, reward)
    payoffs = scenario_payoffs(scenario, env, params, policy, state, batched, episodes, seed)  # [S, E, n]
    mask = scenario.focal_mask()
    focal_capita = payoffs[..., mask].mean(-1)  # [S, E]
    background_capita = payoffs[..., ~mask].mean(-1) if (~mask).any() else np.full(focal_capita.shape, np.nan)
    welfare = payoffs.sum(-1)
    references = reference_scores(scenario, episodes, seed)
    random_focal = references["random"]
    best_role, best_focal = max(((k, v) for k, v in references.items() if k != "random"), key=lambda kv: kv[1])
    span = best_focal - random_focal
    score = (float(focal_capita.mean()) - random_focal) / span if span > 0 else float("nan")
    return ScenarioResult(
        scenario=scenario.name, env_id=scenario.env_id, focal=focal if isinstance(focal, str) else policy.name,
        background=scenario.background, seeds=payoffs.shape[0], episodes=episodes,
        focal_per_capita=replicate_interval(focal_capita), background_per_capita=replicate_interval(background_capita),
        welfare=replicate_interval(welfare), normalized_score=score, random_focal=random_focal, best_focal=best_focal,
        best_focal_role=best_role.removeprefix("bot:"),
    )  # fmt: skip


def replicate_interval(values: np.ndarray) -> Interval:
    """Mean with a t interval over seeds (``[S, E]``: per-seed episode means) when ``S > 1``, else over episodes."""
    values = np.asarray(values, np.float64)
    units = values.mean(axis=1) if values.shape[0] > 1 else values[0]
    return mean_interval(units)


def format_results(results: list[ScenarioResult]) -> str:
    """A plain-text table: one line per scenario."""
    from motivegym.experiments.report import format_interval

    header = f"{'scenario':<36} {'focal':<20} {'focal per capita':>28} {'welfare':>30} {'score':>7}"
    lines = [header, "-" * len(header)]
    for r in results:
        focal = r.focal if len(r.focal) <= 20 else "…" + r.focal[-19:]
        lines.append(
            f"{r.scenario:<36} {focal:<20} {format_interval(r.focal_per_capita):>28} {format_interval(r.welfare):>30} "
            f"{r.normalized_score:7.3f}"
        )
    lines.append("score: 0 = random focal population, 1 = the best scripted (bot) focal population, same episode keys")
    return "\n".join(lines)


def write_csv(results: list[ScenarioResult], path: str) -> None:
    """One row per scenario (``ScenarioResult.as_row``)."""
    import csv
    from pathlib import Path

    rows = [r.as_row() for r in results]
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def expand_scenario_names(names: list[str]) -> list[str]:
    """Scenario names; an env id stands for all of its scenarios, ``all`` for every scenario."""
    expanded: list[str] = []
    for name in names:
        if name == "all":
            expanded.extend(scenario_names())
        elif name in scenario_registry():
            expanded.append(name)
        elif scenario_names(name):
            expanded.extend(scenario_names(name))
        else:
            get_scenario(name)  # raises with the valid names
    return list(dict.fromkeys(expanded))


def scenario_cli(args: Any) -> int:
    """``motivegym scenario list [--env ENV]`` / ``motivegym scenario run NAME... --focal POLICY``."""
    from tqdm import tqdm

    if args.action == "list":
        for name in scenario_names(args.env):
            print(f"{name:<42} {scenario_registry()[name].description}")
        return 0
    if not args.names:
        raise ValueError("motivegym scenario run: name at least one scenario (or an env id, or 'all')")
    names = expand_scenario_names(args.names)
    results = []
    for name in tqdm(names, desc=f"scenarios ({args.focal})", unit="scenario", disable=len(names) < 2):
        results.append(run_scenario(name, args.focal, episodes=args.episodes, seed=args.seed))
    print(f"focal population: {args.focal}")
    print(format_results(results))
    if args.out:
        write_csv(results, args.out)
        print(f"wrote {args.out}")
    return 0
