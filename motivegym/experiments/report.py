"""``motivegym report DIR``: tables with bootstrap CIs, rankings and figures from a sweep's results.

Writes ``DIR/report.md`` with

* per-env table: mean evaluation welfare and training reward with bootstrap 95% CIs over seeds,
  for every algorithm × reward layer;
* social outcomes table: efficiency, equality, sustainability, peace (Perolat et al. 2017) with CIs;
* per-mechanism table (family/tier) of the normalised score (so a 40-agent env does not dominate);
* algorithm rankings per reward type (mean rank over envs by welfare; rank 1 = best);
* the D-contribution: ``welfare(integrated) − welfare(private)`` per env × algorithm with a
  bootstrap CI of the difference of means — what the interdependence weights D add;

and figures ``returns_by_reward.png``, ``ranking_shifts.png``, ``learning_curves.png``.
"""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from motivegym.core.social_metrics import SOCIAL_METRICS
from motivegym.experiments.sweep import read_results


def bootstrap_ci(values: Any, samples: int = 2000, level: float = 0.95, seed: int = 0) -> tuple[float, float, float]:
    """``(mean, low, high)``: percentile bootstrap CI of the mean (NaNs dropped; one value → no spread)."""
    data = np.asarray([v for v in values if v is not None and not math.isnan(v)], np.float64)
    if data.size == 0:
        return (math.nan, math.nan, math.nan)
    if data.size == 1:
        return (float(data[0]),) * 3
    rng = np.random.default_rng(seed)
    means = data[rng.integers(0, data.size, (samples, data.size))].mean(axis=1)
    tail = (1 - level) / 2 * 100
    return float(data.mean()), float(np.percentile(means, tail)), float(np.percentile(means, 100 - tail))


def difference_ci(a: Any, b: Any, samples: int = 2000, seed: int = 0) -> tuple[float, float, float]:
    """Bootstrap 95% CI of ``mean(a) − mean(b)`` (independent resampling of both groups)."""
    a = np.asarray([v for v in a if v is not None and not math.isnan(v)], np.float64)
    b = np.asarray([v for v in b if v is not None and not math.isnan(v)], np.float64)
    if a.size == 0 or b.size == 0:
        return (math.nan, math.nan, math.nan)
    rng = np.random.default_rng(seed)
    diffs = a[rng.integers(0, a.size, (samples, a.size))].mean(1) - b[rng.integers(0, b.size, (samples, b.size))].mean(1)
    return float(a.mean() - b.mean()), float(np.percentile(diffs, 2.5)), float(np.percentile(diffs, 97.5))


def format_ci(ci: tuple[float, float, float]) -> str:
    mean, low, high = ci
    return "–" if math.isnan(mean) else f"{mean:,.2f} [{low:,.2f}, {high:,.2f}]"


def group(rows: list[dict], *keys: str) -> dict[tuple, list[dict]]:
    out: dict[tuple, list[dict]] = defaultdict(list)
    for row in rows:
        out[tuple(row[k] for k in keys)].append(row)
    return dict(out)


def algorithm_ranks(rows: list[dict]) -> dict[str, dict[str, float]]:
    """``ranks[reward][algo]``: mean over envs of the algorithm's welfare rank (1 = best; ties averaged)."""
    ranks: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for (_env, reward), env_rows in group(rows, "env", "reward").items():
        means = {algo: np.mean([r["welfare"] for r in rs]) for (algo,), rs in group(env_rows, "algo").items()}
        ordered = sorted(means.values(), reverse=True)
        for algo, value in means.items():
            positions = [i + 1 for i, v in enumerate(ordered) if v == value]
            ranks[reward][algo].append(float(np.mean(positions)))
    return {reward: {algo: float(np.mean(v)) for algo, v in per.items()} for reward, per in ranks.items()}


def d_contribution(rows: list[dict]) -> dict[tuple[str, str], tuple[float, float, float]]:
    """``(env, algo) → CI of welfare(integrated) − welfare(private)`` where both were run."""
    out = {}
    for (env_id, algo), rs in group(rows, "env", "algo").items():
        by_reward = group(rs, "reward")
        if ("integrated",) in by_reward and ("private",) in by_reward:
            integrated = [r["welfare"] for r in by_reward[("integrated",)]]
            private = [r["welfare"] for r in by_reward[("private",)]]
            out[(env_id, algo)] = difference_ci(integrated, private)
    return out


def report_markdown(rows: list[dict]) -> str:
    lines = ["# Sweep report", "", f"{len(rows)} runs; 95% percentile-bootstrap CIs over seeds.", ""]
    lines += ["## Per env", "", "| env | algo | reward | seeds | welfare | training reward | cooperation | Gap% |", "|---|---|---|---|---|---|---|---|"]
    for (env_id, algo, reward), rs in sorted(group(rows, "env", "algo", "reward").items()):
        cells = [
            env_id, algo, reward, str(len(rs)), format_ci(bootstrap_ci([r["welfare"] for r in rs])),
            format_ci(bootstrap_ci([r["training_reward"] for r in rs])),
            format_ci(bootstrap_ci([r["cooperation_rate"] for r in rs])),
            format_ci(bootstrap_ci([r["gap_percent"] for r in rs])),
        ]  # fmt: skip
        lines.append("| " + " | ".join(cells) + " |")
    social_header = " | ".join(SOCIAL_METRICS)
    lines += ["", "## Social outcomes (Perolat et al. 2017)", "", f"| env | algo | reward | {social_header} |", "|---|---|---|" + "---|" * len(SOCIAL_METRICS)]
    for (env_id, algo, reward), rs in sorted(group(rows, "env", "algo", "reward").items()):
        cells = [env_id, algo, reward] + [format_ci(bootstrap_ci([r.get(m, math.nan) for r in rs])) for m in SOCIAL_METRICS]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "## Per mechanism class (normalised score)", "", "| family | tier | algo | reward | runs | normalised score |", "|---|---|---|---|---|---|"]
    for (family, tier, algo, reward), rs in sorted(group(rows, "family", "tier", "algo", "reward").items(), key=lambda kv: tuple(map(str, kv[0]))):
        cells = [str(family), str(tier or "–"), algo, reward, str(len(rs)), format_ci(bootstrap_ci([r["normalized_score"] for r in rs]))]
        lines.append("| " + " | ".join(cells) + " |")
    ranks = algorithm_ranks(rows)
    algos = sorted({r["algo"] for r in rows})
    lines += ["", "## Algorithm rankings per reward type (mean rank over envs, 1 = best)", "", "| reward | " + " | ".join(algos) + " |", "|---|" + "---|" * len(algos)]
    for reward in sorted(ranks):
        lines.append(f"| {reward} | " + " | ".join(f"{ranks[reward].get(a, math.nan):.2f}" for a in algos) + " |")
    contributions = d_contribution(rows)
    lines += ["", "## D-contribution: welfare(integrated) − welfare(private)", ""]
    if contributions:
        lines += ["| env | algo | difference |", "|---|---|---|"]
        lines += [f"| {e} | {a} | {format_ci(ci)} |" for (e, a), ci in sorted(contributions.items())]
    else:
        lines.append("(needs runs with both the integrated and the private reward)")
    lines += ["", "Figures: `returns_by_reward.png`, `ranking_shifts.png`, `learning_curves.png`.", ""]
    return "\n".join(lines)


def plot_figures(rows: list[dict], out: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = []
    envs = sorted({r["env"] for r in rows})
    rewards = sorted({r["reward"] for r in rows})
    algos = sorted({r["algo"] for r in rows})
    fig, axes = plt.subplots(1, len(envs), figsize=(max(4, 3.2 * len(envs)), 3.4), squeeze=False)
    width = 0.8 / max(len(algos), 1)
    for ax, env_id in zip(axes[0], envs):
        for k, algo in enumerate(algos):
            cis = [bootstrap_ci([r["welfare"] for r in rows if r["env"] == env_id and r["algo"] == algo and r["reward"] == w]) for w in rewards]
            means = np.array([c[0] for c in cis])
            errors = np.array([[c[0] - c[1] for c in cis], [c[2] - c[0] for c in cis]])
            ax.bar(np.arange(len(rewards)) + k * width, means, width, yerr=errors, capsize=3, label=algo)
        ax.set_xticks(np.arange(len(rewards)) + width * (len(algos) - 1) / 2, rewards, rotation=30, ha="right")
        ax.set_title(env_id, fontsize=9)
    axes[0][0].set_ylabel("evaluation welfare (95% CI)")
    axes[0][-1].legend(fontsize=8)
    fig.tight_layout()
    paths.append(out / "returns_by_reward.png")
    fig.savefig(paths[-1], dpi=110)
    plt.close(fig)

    ranks = algorithm_ranks(rows)
    fig, ax = plt.subplots(figsize=(5, 3.2))
    for algo in algos:
        ax.plot(rewards, [ranks.get(w, {}).get(algo, math.nan) for w in rewards], marker="o", label=algo)
    ax.set_ylabel("mean rank (1 = best)")
    ax.invert_yaxis()
    ax.set_title("ranking shifts across reward types")
    ax.legend(fontsize=8)
    fig.tight_layout()
    paths.append(out / "ranking_shifts.png")
    fig.savefig(paths[-1], dpi=110)
    plt.close(fig)

    fig, axes = plt.subplots(1, len(envs), figsize=(max(4, 3.2 * len(envs)), 3.2), squeeze=False)
    for ax, env_id in zip(axes[0], envs):
        for (algo, reward), rs in sorted(group([r for r in rows if r["env"] == env_id], "algo", "reward").items()):
            curves = [load_curve(out, r) for r in rs]
            curves = [c for c in curves if c is not None]
            if not curves:
                continue
            length = min(len(c) for c in curves)
            stacked = np.array([c[:length] for c in curves])
            ax.plot(np.nanmean(stacked, axis=0), label=f"{algo}/{reward}")
        ax.set_title(env_id, fontsize=9)
        ax.set_xlabel("update")
    axes[0][0].set_ylabel("training episode welfare")
    axes[0][-1].legend(fontsize=7)
    fig.tight_layout()
    paths.append(out / "learning_curves.png")
    fig.savefig(paths[-1], dpi=110)
    plt.close(fig)
    return paths


def load_curve(out: Path, row: dict) -> np.ndarray | None:
    """The run's per-update training welfare (NaN where no episode finished), or None if missing."""
    from motivegym.experiments.sweep import run_budget, run_name

    budget = run_budget(row["_budget"], row["env"])
    path = out / "curves" / f"{run_name(row['env'], row['algo'], row['reward'], int(row['seed']), budget)}.csv"
    if not path.exists():
        return None
    data = np.genfromtxt(path, delimiter=",", names=True)
    return np.where(np.atleast_1d(data["episodes"]) > 0, np.atleast_1d(data["welfare"]), np.nan)


def write_report(directory: str | Path) -> Path:
    import json

    out = Path(directory)
    results = out / "results.csv"
    if not results.exists():
        raise ValueError(f"{results} not found: run `motivegym sweep --out {out}` first")
    rows = read_results(results)
    if not rows:
        raise ValueError(f"{results} has no runs")
    budget = json.loads((out / "sweep.json").read_text())["steps"] if (out / "sweep.json").exists() else None
    for row in rows:
        row["_budget"] = budget
    path = out / "report.md"
    path.write_text(report_markdown(rows))
    plot_figures(rows, out)
    return path


def report_cli(directory: str) -> int:
    path = write_report(directory)
    print(f"wrote {path} and figures in {path.parent}")
    return 0
