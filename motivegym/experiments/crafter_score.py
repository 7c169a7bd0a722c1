"""The Crafter score of a run directory, per agent and for the team, with confidence intervals over seeds.

``motivegym crafter-score RUN_DIR`` (or ``python -m motivegym.experiments.crafter_score score RUN_DIR``)

Crafter's score (Hafner 2021, §3.3) of a set of episodes is the geometric mean of its achievement success
rates, ``S = exp((1/N) Σ_i ln(1 + s_i)) − 1`` with ``s_i ∈ [0, 100]`` the percentage of episodes in which
achievement ``i`` was unlocked at least once (:func:`motivegym.envs.sparse.metrics.crafter_score`; ``N`` is 22 for
``preset="crafter"``, 17 for the default rules, whose scores are therefore not comparable with published ones).
Here the score and each rate are computed per seed and reported as the mean over seeds with a 95% Student-t
interval (``x̄ ± t_{0.975, k−1}·s/√k``; a single seed gives no interval, NaN bounds). Per agent, an achievement
counts in an episode when that agent unlocked it; for the team, when any agent did.

A run directory holds one of
* ``achievements.csv``: one row per group × seed × episode × agent with a 0/1 column per achievement (written
  by :func:`collect_random` and ``python -m motivegym.experiments.crafter_score collect``); per-agent and team
  scores;
* ``runs.csv`` of ``motivegym.experiments.intrinsic`` (columns ``achievement_<name>_agent<i>_rate``, one row per
  layer × seed): per-agent scores only (the team needs per-episode flags).

Writes ``crafter_score.csv`` (one row per group × unit × metric) next to the input and prints a table.
"""

from __future__ import annotations

import argparse
import csv
import re
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from motivegym.envs.sparse.metrics import crafter_score
from motivegym.experiments.intrinsic import mean_ci95

FLAGS_FILE = "achievements.csv"
RUNS_FILE = "runs.csv"
OUT_FILE = "crafter_score.csv"
KEY_COLUMNS = ("group", "seed", "episode", "agent")
RATE_COLUMN = re.compile(r"^achievement_(?P<name>.+)_agent(?P<agent>\d+)_rate$")


def rates_from_flags(flags: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``[seeds, episodes, n, A]`` 0/1 flags → per-seed success rates in percent: agents ``[seeds, n, A]``, team ``[seeds, A]``."""
    flags = np.asarray(flags, bool)
    if flags.ndim != 4:
        raise ValueError(f"achievement flags must be [seeds, episodes, n_agents, achievements], got shape {flags.shape}")
    return 100.0 * flags.mean(axis=1), 100.0 * flags.any(axis=2).mean(axis=1)


def score_of(rates: np.ndarray) -> np.ndarray:
    """Crafter score over the last axis of success rates in percent."""
    return np.asarray(crafter_score(jnp.asarray(rates, jnp.float32)), np.float64)


def summarize(group: str, unit: str, names: list[str], rates: np.ndarray) -> list[dict]:
    """Rows for one unit (``agent_<i>`` or ``team``): its score and each achievement's rate, mean and 95% CI over seeds (``rates [seeds, A]``)."""
    rows = []
    for metric, values in [("score", score_of(rates))] + [(f"rate_{name}", rates[:, k]) for k, name in enumerate(names)]:
        mean, low, high = mean_ci95(values)
        rows.append({"group": group, "unit": unit, "metric": metric, "mean": mean, "ci95_low": low, "ci95_high": high, "seeds": len(values)})
    return rows


def read_flags(path: Path) -> dict[str, tuple[list[str], np.ndarray]]:
    """``achievements.csv`` → ``{group: (names, flags [seeds, episodes, n, A])}`` (every seed must have the same episodes and agents)."""
    with path.open() as handle:
        reader = csv.DictReader(handle)
        names = [c for c in reader.fieldnames or [] if c not in KEY_COLUMNS]
        if not names or any(c not in (reader.fieldnames or []) for c in KEY_COLUMNS):
            raise ValueError(f"{path}: needs columns {', '.join(KEY_COLUMNS)} and one column per achievement")
        cells: dict[str, dict[tuple[int, int, int], list[float]]] = defaultdict(dict)
        for row in reader:
            cells[row["group"]][(int(row["seed"]), int(row["episode"]), int(row["agent"]))] = [float(row[n]) for n in names]
    groups = {}
    for group, table in cells.items():
        seeds, episodes, agents = (sorted({key[k] for key in table}) for k in range(3))
        if len(table) != len(seeds) * len(episodes) * len(agents):
            raise ValueError(f"{path}: group {group!r} does not have every (seed, episode, agent) row")
        flags = np.array([[[table[(s, e, a)] for a in agents] for e in episodes] for s in seeds])
        groups[group] = (names, flags)
    return groups


def read_rates(path: Path) -> dict[str, tuple[list[str], np.ndarray]]:
    """Intrinsic ``runs.csv`` → ``{layer: (names, rates [seeds, n, A] in percent)}``."""
    with path.open() as handle:
        reader = csv.DictReader(handle)
        columns = [(c, RATE_COLUMN.match(c)) for c in reader.fieldnames or []]
        columns = [(c, m["name"], int(m["agent"])) for c, m in columns if m]
        if not columns:
            raise ValueError(f"{path}: no achievement_<name>_agent<i>_rate columns (was the env's info without achievements?)")
        names = list(dict.fromkeys(name for _, name, _ in columns))
        agents = sorted({agent for _, _, agent in columns})
        by_layer: dict[str, list[np.ndarray]] = defaultdict(list)
        for row in reader:
            rates = np.zeros((len(agents), len(names)))
            for column, name, agent in columns:
                rates[agents.index(agent), names.index(name)] = 100.0 * float(row[column])
            by_layer[row.get("layer", "run")].append(rates)
    return {layer: (names, np.stack(rows)) for layer, rows in by_layer.items()}


def score_run_dir(run_dir: str | Path) -> list[dict]:
    """Score ``RUN_DIR`` (``achievements.csv`` preferred, else an intrinsic ``runs.csv``); write ``crafter_score.csv``; return its rows."""
    run_dir = Path(run_dir)
    rows = []
    if (run_dir / FLAGS_FILE).exists():
        for group, (names, flags) in read_flags(run_dir / FLAGS_FILE).items():
            agents, team = rates_from_flags(flags)
            for i in range(agents.shape[1]):
                rows += summarize(group, f"agent_{i}", names, agents[:, i])
            rows += summarize(group, "team", names, team)
    elif (run_dir / RUNS_FILE).exists():
        for group, (names, rates) in read_rates(run_dir / RUNS_FILE).items():
            for i in range(rates.shape[1]):
                rows += summarize(group, f"agent_{i}", names, rates[:, i])
    else:
        raise ValueError(f"{run_dir}: no {FLAGS_FILE} or {RUNS_FILE} to score")
    with (run_dir / OUT_FILE).open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return rows


def format_table(rows: list[dict]) -> str:
    """Scores first (one line per group × unit), then the per-achievement rates in percent as ``mean [low, high]``."""
    units = list(dict.fromkeys((r["group"], r["unit"]) for r in rows))
    metrics = list(dict.fromkeys(r["metric"] for r in rows))
    lookup = {(r["group"], r["unit"], r["metric"]): r for r in rows}
    seeds = rows[0]["seeds"]
    header = f"{'metric (% , 95% CI over ' + str(seeds) + ' seeds)':<34}" + "".join(f"{g + ' ' + u:>24}" for g, u in units)
    lines = [header]
    for metric in metrics:
        cells = []
        for g, u in units:
            r = lookup.get((g, u, metric))
            cells.append(f"{r['mean']:6.2f} [{r['ci95_low']:6.2f},{r['ci95_high']:6.2f}]" if r else "")
        lines.append(f"{metric:<34}" + "".join(f"{c:>24}" for c in cells))
    return "\n".join(lines)


def crafter_score_cli(run_dir: str) -> int:
    rows = score_run_dir(run_dir)
    print(format_table(rows))
    print(f"wrote {Path(run_dir) / OUT_FILE}")
    return 0


# ----- random-policy episodes (a baseline, and the runnable example in docs/crafter.md) -----


def random_episode_flags(env: Any, params: Any, key: jax.Array, episodes: int) -> jax.Array:
    """``[episodes, n, A]`` bool: achievements unlocked in episodes of uniformly random actions (until all agents die or ``max_steps``)."""
    n, actions = env.n_agents(params), env.num_actions(params)

    def one_episode(episode_key):
        reset_key, run_key = jax.random.split(episode_key)
        state, _ = env.reset(reset_key, params)

        def running(carry):
            return ~carry[2]

        def body(carry):
            state, k, _, flags = carry
            k, action_key, step_key = jax.random.split(k, 3)
            state, _, _, done, info = env.step(step_key, state, jax.random.randint(action_key, (n,), 0, actions), params)
            return state, k, done, flags | info["achievements"]

        flags = jnp.zeros(env.describe(state, params)["achievements"].shape, bool)
        _, _, _, flags = jax.lax.while_loop(running, body, (state, run_key, jnp.bool_(False), flags))
        return flags

    return jax.jit(jax.vmap(one_episode))(jax.random.split(key, episodes))


def collect_random(env_id: str, out: str | Path, seeds: int = 3, episodes: int = 16, seed: int = 0, group: str = "random", **overrides: Any) -> Path:
    """Play ``episodes`` random-policy episodes for each of ``seeds`` seeds and write ``OUT/achievements.csv``."""
    import motivegym

    if seeds < 1 or episodes < 1:
        raise ValueError(f"seeds and episodes must be positive, got {seeds}, {episodes}")
    env, params = motivegym.make_jax(env_id, **overrides)
    names = list(env.static_info(params)["achievement_names"])
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    with (out / FLAGS_FILE).open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow([*KEY_COLUMNS, *names])
        for s in range(seeds):
            flags = np.asarray(random_episode_flags(env, params, jax.random.PRNGKey(seed + s), episodes))
            for e in range(episodes):
                for a in range(flags.shape[1]):
                    writer.writerow([group, s, e, a, *flags[e, a].astype(int).tolist()])
    return out / FLAGS_FILE


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m motivegym.experiments.crafter_score", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("score", help="score a run directory")
    p.add_argument("run_dir")
    p = sub.add_parser("collect", help="write achievements.csv of random-policy episodes")
    p.add_argument("--env", default="CrafterTeam-v0")
    p.add_argument("--preset", default="crafter")
    p.add_argument("--n-agents", type=int, default=1)
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--episodes", type=int, default=16)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    try:
        if args.command == "score":
            return crafter_score_cli(args.run_dir)
        path = collect_random(args.env, args.out, args.seeds, args.episodes, args.seed, preset=args.preset, n_agents=args.n_agents)
        print(f"wrote {path}")
        return 0
    except ValueError as error:
        print(f"crafter_score: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
