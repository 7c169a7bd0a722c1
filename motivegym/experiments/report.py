"""``motivegym report DIR``: a sweep's tables and figures, with statistics a reviewer accepts.

Every score is on payoffs (``welfare``, ``normalized_score``), never on the training reward, so reward
types are comparable. ``DIR/report.md`` holds

* per-env table at the full budget: welfare and normalised score, mean over seeds with a 95% Student-t
  interval (``statistics.mean_interval``; correct coverage at small n, unlike a percentile bootstrap);
* aggregate over envs: the IQM of the normalised score per algorithm × sharing × reward with a 95%
  stratified-bootstrap interval (rliable protocol, Agarwal et al. 2021);
* probability of improvement of every layer over ``private`` (stratified-bootstrap interval);
* paired per-env contrasts ``layer − private`` (paired by seed: same seed, same initialisation and
  evaluation episodes) with a Student-t interval, and whether the interval excludes 0;
* rankings of reward types and of algorithms with bootstrap intervals on the mean rank;
* budget robustness: the IQM at every evaluated fraction of the budget;
* social outcomes (Perolat et al. 2017) and the runs that could not be built;

and figures: ``welfare_vs_steps__<algo>__<sharing>.png`` (evaluation welfare against env steps, band =
95% t-interval over seeds), ``aggregate_iqm.png``, ``probability_of_improvement.png``,
``performance_profiles.png``, ``returns_by_reward.png`` and ``learning_curves.png`` (training welfare).
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from motivegym.core.social_metrics import SOCIAL_METRICS
from motivegym.experiments.statistics import (
    Interval,
    aggregate_intervals,
    iqm,
    mean_interval,
    paired_difference_interval,
    performance_profile,
    probability_of_improvement_interval,
    rank_intervals,
)
from motivegym.experiments.sweep import read_results

BASE_REWARD = "private"
DEFAULT_CHECKPOINTS = (0.25, 0.5, 1.0)
CONFIG_KEYS = ("algo", "sharing")


def group(rows: list[dict], *keys: str) -> dict[tuple, list[dict]]:
    out: dict[tuple, list[dict]] = defaultdict(list)
    for row in rows:
        out[tuple(row[k] for k in keys)].append(row)
    return dict(out)


def final_rows(rows: list[dict]) -> list[dict]:
    """Each successful run's last evaluation (its whole budget, rounded down to whole updates)."""
    last = final_steps(rows)
    return [r for r in rows if r["status"] == "ok" and r["steps"] == last[r["run_id"]]]


def final_steps(rows: list[dict]) -> dict[str, int]:
    """``run_id → env steps trained at the run's last evaluation``."""
    last: dict[str, int] = {}
    for r in rows:
        if r["status"] == "ok":
            last[r["run_id"]] = max(last.get(r["run_id"], 0), r["steps"])
    return last


def format_interval(interval: Interval, digits: int = 2) -> str:
    if interval.n == 0 or math.isnan(interval.estimate):
        return "–"
    if math.isnan(interval.low):
        return f"{interval.estimate:,.{digits}f} (n=1)"
    return f"{interval.estimate:,.{digits}f} [{interval.low:,.{digits}f}, {interval.high:,.{digits}f}]"


def by_seed(rows: list[dict], column: str) -> dict[int, float]:
    return {int(r["seed"]): float(r[column]) for r in rows if r.get(column) is not None}


def score_lists(rows: list[dict], column: str = "normalized_score") -> dict[tuple, dict[str, list[float]]]:
    """``{(algo, sharing, reward): {env: [per-seed values]}}`` of the final rows."""
    out: dict[tuple, dict[str, list[float]]] = defaultdict(dict)
    for (algo, sharing, reward, env_id), rs in group(final_rows(rows), "algo", "sharing", "reward", "env").items():
        out[(algo, sharing, reward)][env_id] = [float(r[column]) for r in rs if r.get(column) is not None]
    return dict(out)


def aggregate_table(rows: list[dict], reps: int = 2000) -> dict[tuple, Interval]:
    """IQM of the normalised score over envs × seeds per (algo, sharing, reward), stratified-bootstrap interval."""
    scores = score_lists(rows)
    return aggregate_intervals({key: list(per_env.values()) for key, per_env in scores.items()}, statistic=iqm, reps=reps)


def improvement_over_base(rows: list[dict], reps: int = 2000) -> dict[tuple, Interval]:
    """``(algo, sharing, reward) → P(reward > private)`` on the envs where both ran (stratified-bootstrap interval)."""
    scores = score_lists(rows)
    out = {}
    for (algo, sharing, reward), per_env in sorted(scores.items()):
        base = scores.get((algo, sharing, BASE_REWARD))
        if reward == BASE_REWARD or base is None:
            continue
        envs = [e for e in per_env if e in base and per_env[e] and base[e]]
        if envs:
            out[(algo, sharing, reward)] = probability_of_improvement_interval(
                [per_env[e] for e in envs], [base[e] for e in envs], reps=reps
            )
    return out


def paired_contrasts(rows: list[dict], column: str = "welfare") -> dict[tuple, Interval]:
    """``(env, algo, sharing, reward) → mean over seeds of column(reward) − column(private)``, paired by seed (t-interval)."""
    out = {}
    for (env_id, algo, sharing), rs in group(final_rows(rows), "env", "algo", "sharing").items():
        per_reward = group(rs, "reward")
        if (BASE_REWARD,) not in per_reward:
            continue
        base = by_seed(per_reward[(BASE_REWARD,)], column)
        for (reward,), reward_rows in per_reward.items():
            if reward == BASE_REWARD:
                continue
            values = by_seed(reward_rows, column)
            seeds = sorted(set(values) & set(base))
            out[(env_id, algo, sharing, reward)] = paired_difference_interval([values[s] for s in seeds], [base[s] for s in seeds])
    return out


def reward_rankings(rows: list[dict], reps: int = 2000) -> dict[tuple, dict[str, Interval]]:
    """``(algo, sharing) → {reward: mean rank over envs (1 = highest welfare)}`` with bootstrap intervals."""
    out = {}
    for (algo, sharing), rs in group(final_rows(rows), "algo", "sharing").items():
        cells = {env_id: {r: [x["welfare"] for x in xs] for (r,), xs in group(env_rows, "reward").items()}
                 for (env_id,), env_rows in group(rs, "env").items()}  # fmt: skip
        out[(algo, sharing)] = rank_intervals(cells, reps=reps)
    return out


def algorithm_rankings(rows: list[dict], reps: int = 2000) -> dict[str, dict[str, Interval]]:
    """``reward → {"algo/sharing": mean rank over envs}`` with bootstrap intervals."""
    out = {}
    for (reward,), rs in group(final_rows(rows), "reward").items():
        cells = {env_id: {f"{a}/{s}": [x["welfare"] for x in xs] for (a, s), xs in group(env_rows, *CONFIG_KEYS).items()}
                 for (env_id,), env_rows in group(rs, "env").items()}  # fmt: skip
        out[reward] = rank_intervals(cells, reps=reps)
    return out


def budget_table(rows: list[dict], checkpoints: tuple[float, ...] = DEFAULT_CHECKPOINTS, reps: int = 1000) -> dict[tuple, Interval]:
    """``(algo, sharing, reward, checkpoint) → IQM of the normalised score`` (stratified-bootstrap interval).

    A run evaluated after ``ceil(c·U)`` of its ``U`` updates is filed under the nearest of the sweep's ``checkpoints``."""
    scores: dict[tuple, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    last = final_steps(rows)
    for r in rows:
        if r["status"] == "ok" and r.get("normalized_score") is not None:
            fraction = min(checkpoints, key=lambda c: abs(c - r["steps"] / last[r["run_id"]]))
            scores[(r["algo"], r["sharing"], r["reward"], fraction)][r["env"]].append(float(r["normalized_score"]))
    return aggregate_intervals({k: list(v.values()) for k, v in scores.items()}, statistic=iqm, reps=reps)


def table(header: list[str], body: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)] + ["| " + " | ".join(cells) + " |" for cells in body]


def report_markdown(rows: list[dict], reps: int = 2000, checkpoints: tuple[float, ...] = DEFAULT_CHECKPOINTS) -> str:
    ok = final_rows(rows)
    seeds = sorted({len(rs) for rs in group(ok, "env", "algo", "sharing", "reward").values()})
    lines = [
        "# Sweep report", "",
        f"{len({r['run_id'] for r in rows})} runs ({len(ok)} evaluated at their full budget; seeds per cell: "
        f"{', '.join(map(str, seeds)) or '–'}). Scores are on payoffs. Per-cell intervals: 95% Student-t over seeds; "
        f"aggregates: interquartile mean with 95% stratified-bootstrap intervals ({reps} resamples).", "",
    ]  # fmt: skip
    failed = [r for r in rows if r["status"] == "failed"]
    if failed:
        lines += ["## Runs that could not be built", ""]
        reasons = group(failed, "env", "reward", "error")
        lines += table(["env", "reward", "runs", "reason"], [[e, w, str(len(rs)), str(m)] for (e, w, m), rs in sorted(reasons.items())])
        lines.append("")

    lines += ["## Per env (full budget)", ""]
    body = []
    for (env_id, algo, sharing, reward), rs in sorted(group(ok, "env", "algo", "sharing", "reward").items()):
        body.append([env_id, algo, sharing, reward, str(len(rs)), format_interval(mean_interval([r["welfare"] for r in rs])),
                     format_interval(mean_interval([r["normalized_score"] for r in rs]), 3),
                     format_interval(mean_interval([r["gap_to_optimum_percent"] for r in rs]), 1),
                     f"{rs[0]['random_welfare']:,.2f}"])  # fmt: skip
    lines += table(["env", "algo", "sharing", "reward", "seeds", "welfare", "normalised score", "gap to optimum %", "random welfare"], body)

    lines += ["", "## Aggregate over envs: IQM of the normalised score", ""]
    aggregate = aggregate_table(rows, reps)
    scores = score_lists(rows)
    lines += table(["algo", "sharing", "reward", "envs", "IQM [95% CI]"],
                   [[a, s, w, str(len(scores[(a, s, w)])), format_interval(i, 3)] for (a, s, w), i in sorted(aggregate.items())])  # fmt: skip
    lines += ["", "An IQM compares reward types only over the same envs: a layer defined on fewer envs (see 'envs') "
              "is averaged over those alone.", ""]  # fmt: skip

    lines += [f"## Probability of improvement over `{BASE_REWARD}`", ""]
    improvement = improvement_over_base(rows, reps)
    lines += table(["algo", "sharing", "reward", "P(reward > private) [95% CI]"],
                   [[a, s, w, format_interval(i, 3)] for (a, s, w), i in sorted(improvement.items())])  # fmt: skip
    lines += ["", "0.5 = not better or worse; an interval containing 0.5 is not distinguishable from no effect.", ""]

    lines += [f"## Paired contrasts per env: welfare(layer) − welfare({BASE_REWARD})", ""]
    body = []
    for (env_id, algo, sharing, reward), interval in sorted(paired_contrasts(rows).items()):
        verdict = "not distinguishable" if interval.n < 2 or interval.low <= 0 <= interval.high else ("higher" if interval.low > 0 else "lower")
        body.append([env_id, algo, sharing, reward, str(interval.n), format_interval(interval), verdict])
    lines += table(["env", "algo", "sharing", "layer", "paired seeds", "difference [95% t-CI]", "verdict"], body)

    lines += ["", "## Rankings of reward types (mean rank over envs by welfare, 1 = best; 95% bootstrap CI)", ""]
    body = []
    for (algo, sharing), ranks in sorted(reward_rankings(rows, reps).items()):
        body += [[algo, sharing, reward, format_interval(i)] for reward, i in sorted(ranks.items(), key=lambda kv: kv[1].estimate)]
    lines += table(["algo", "sharing", "reward", "mean rank"], body)
    lines += ["", "## Rankings of algorithms per reward type (mean rank over envs by welfare; 95% bootstrap CI)", ""]
    body = []
    for reward, ranks in sorted(algorithm_rankings(rows, reps).items()):
        body += [[reward, config, format_interval(i)] for config, i in sorted(ranks.items(), key=lambda kv: kv[1].estimate)]
    lines += table(["reward", "algo/sharing", "mean rank"], body)

    lines += ["", "## Budget robustness: IQM of the normalised score at each evaluated fraction of the budget", ""]
    budget = budget_table(rows, checkpoints, max(200, reps // 2))
    fractions = sorted({k[3] for k in budget})
    configs = sorted({k[:3] for k in budget})
    lines += table(["algo", "sharing", "reward", *[f"{f:.0%}" for f in fractions]],
                   [[*c, *[format_interval(budget[(*c, f)], 3) if (*c, f) in budget else "–" for f in fractions]] for c in configs])  # fmt: skip

    lines += ["", "## Social outcomes at the full budget (Perolat et al. 2017; 95% t-CI)", ""]
    body = [[e, a, s, w, *[format_interval(mean_interval([r.get(m) for r in rs])) for m in SOCIAL_METRICS]]
            for (e, a, s, w), rs in sorted(group(ok, "env", "algo", "sharing", "reward").items())]  # fmt: skip
    lines += table(["env", "algo", "sharing", "reward", *SOCIAL_METRICS], body)
    lines += ["", "Figures: `welfare_vs_steps__<algo>__<sharing>.png`, `aggregate_iqm.png`, `probability_of_improvement.png`, "
              "`performance_profiles.png`, `returns_by_reward.png`, `learning_curves.png`.", ""]  # fmt: skip
    return "\n".join(lines)


# ----- figures -----
def _grid(plt, panels: int, width: float = 3.3, height: float = 2.8, columns: int = 4):
    columns = max(1, min(columns, panels))
    rows = -(-panels // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(width * columns, height * rows), squeeze=False)
    for ax in axes.flat[panels:]:
        ax.set_visible(False)
    return fig, list(axes.flat[:panels])


def grid_legend(fig, axes: list) -> None:
    """One legend for a grid of panels: in the first unused panel slot if there is one, else in the last panel."""
    handles: dict = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, handle)
    spare = [ax for ax in fig.axes if not ax.get_visible()]
    if spare:
        spare[0].set_visible(True)
        spare[0].axis("off")
        spare[0].legend(list(handles.values()), list(handles), fontsize=7, loc="center")
    elif handles:
        axes[-1].legend(list(handles.values()), list(handles), fontsize=6)


def plot_figures(rows: list[dict], out: Path, reps: int = 2000, sweep_dir: Path | None = None) -> list[Any]:
    """Write the figures into ``out`` (learning curves read from ``sweep_dir``, default ``out``); returns the
    matplotlib figures (closed) so tests can inspect what was drawn."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figures = []

    def save(fig, name: str) -> None:
        fig.tight_layout()
        fig.savefig(out / name, dpi=110)
        plt.close(fig)
        figures.append(fig)

    ok = [r for r in rows if r["status"] == "ok"]
    envs = sorted({r["env"] for r in ok})
    rewards = sorted({r["reward"] for r in ok})
    colors = {reward: f"C{k}" for k, reward in enumerate(rewards)}
    for (algo, sharing), config_rows in sorted(group(ok, *CONFIG_KEYS).items()):
        fig, axes = _grid(plt, len(envs))
        for ax, env_id in zip(axes, envs):
            for (reward,), rs in sorted(group([r for r in config_rows if r["env"] == env_id], "reward").items()):
                steps = sorted({r["steps"] for r in rs})
                intervals = [mean_interval([r["welfare"] for r in rs if r["steps"] == s]) for s in steps]
                mean = np.array([i.estimate for i in intervals])
                low = np.array([i.low if np.isfinite(i.low) else i.estimate for i in intervals])
                high = np.array([i.high if np.isfinite(i.high) else i.estimate for i in intervals])
                ax.plot(steps, mean, marker="o", ms=3, color=colors[reward], label=reward)
                ax.fill_between(steps, low, high, color=colors[reward], alpha=0.2, linewidth=0)
            ax.set_title(env_id, fontsize=9)
            ax.set_xlabel("env steps", fontsize=8)
            ax.tick_params(labelsize=7)
        axes[0].set_ylabel("evaluation welfare (95% CI)", fontsize=8)
        grid_legend(fig, axes)
        fig.suptitle(f"{algo}, {sharing} parameters", fontsize=10)
        save(fig, f"welfare_vs_steps__{algo}__{sharing}.png")

    aggregate = aggregate_table(rows, reps)
    configs = sorted({k[:2] for k in aggregate})
    fig, ax = plt.subplots(figsize=(max(4.5, 1.2 * len(rewards) * len(configs)), 3.4))
    width = 0.8 / max(len(configs), 1)
    for k, config in enumerate(configs):
        xs, means, errors = [], [], [[], []]
        for x, reward in enumerate(rewards):
            interval = aggregate.get((*config, reward))
            if interval is None or not np.isfinite(interval.estimate):
                continue
            xs.append(x + k * width)
            means.append(interval.estimate)
            errors[0].append(interval.estimate - interval.low)
            errors[1].append(interval.high - interval.estimate)
        ax.bar(xs, means, width, yerr=errors, capsize=3, label="/".join(config))
    ax.set_xticks(np.arange(len(rewards)) + width * (len(configs) - 1) / 2, rewards, rotation=25, ha="right", fontsize=8)
    ax.set_ylabel("IQM normalised score (95% CI)")
    ax.axhline(0.0, color="grey", lw=0.8)
    ax.legend(fontsize=8)
    save(fig, "aggregate_iqm.png")

    improvement = improvement_over_base(rows, reps)
    fig, ax = plt.subplots(figsize=(6, 0.35 * max(len(improvement), 3) + 1.2))
    labels = [f"{a}/{s}: {w}" for a, s, w in improvement]
    for y, interval in enumerate(improvement.values()):
        ax.errorbar(interval.estimate, y, xerr=[[interval.estimate - interval.low], [interval.high - interval.estimate]], fmt="o", capsize=3)
    ax.axvline(0.5, color="grey", ls="--", lw=0.8)
    ax.set_yticks(range(len(labels)), labels, fontsize=8)
    ax.set_xlim(0, 1)
    ax.set_xlabel(f"P(layer > {BASE_REWARD}) (95% CI)")
    save(fig, "probability_of_improvement.png")

    scores = score_lists(rows)
    finite = np.array([x for per_env in scores.values() for values in per_env.values() for x in values if np.isfinite(x)])
    low, high = (min(0.0, finite.min()), max(1.0, finite.max())) if finite.size else (0.0, 1.0)
    thresholds = np.linspace(low - 0.05 * (high - low), high + 0.05 * (high - low), 81)
    profiles = performance_profile({k: list(v.values()) for k, v in scores.items()}, thresholds, reps=max(200, reps // 4))
    fig, axes = _grid(plt, len(configs), width=4.2, height=3.2, columns=3)
    for ax, config in zip(axes, configs):
        for reward in rewards:
            if (*config, reward) not in profiles:
                continue
            estimate, low, high = profiles[(*config, reward)]
            ax.plot(thresholds, estimate, color=colors[reward], label=reward)
            ax.fill_between(thresholds, low, high, color=colors[reward], alpha=0.2, linewidth=0)
        ax.set_title("/".join(config), fontsize=9)
        ax.set_xlabel("normalised score τ", fontsize=8)
        ax.set_ylabel("fraction of runs > τ", fontsize=8)
        ax.legend(fontsize=7)
    save(fig, "performance_profiles.png")

    final = final_rows(rows)
    fig, axes = _grid(plt, len(envs))
    for ax, env_id in zip(axes, envs):
        env_rows = [r for r in final if r["env"] == env_id]
        env_configs = sorted({(r["algo"], r["sharing"]) for r in env_rows})
        width = 0.8 / max(len(env_configs), 1)
        for k, config in enumerate(env_configs):
            xs, means, errors = [], [], [[], []]
            for x, reward in enumerate(rewards):
                interval = mean_interval([r["welfare"] for r in env_rows if (r["algo"], r["sharing"]) == config and r["reward"] == reward])
                if interval.n == 0:
                    continue
                low = interval.low if np.isfinite(interval.low) else interval.estimate
                high = interval.high if np.isfinite(interval.high) else interval.estimate
                xs.append(x + k * width)
                means.append(interval.estimate)
                errors[0].append(interval.estimate - low)
                errors[1].append(high - interval.estimate)
            ax.bar(xs, means, width, yerr=errors, capsize=2, label="/".join(config))
        ax.set_xticks(np.arange(len(rewards)) + width * (len(env_configs) - 1) / 2, rewards, rotation=30, ha="right", fontsize=7)
        ax.set_title(env_id, fontsize=9)
        ax.tick_params(labelsize=7)
    axes[0].set_ylabel("evaluation welfare (95% CI)", fontsize=8)
    grid_legend(fig, axes)
    save(fig, "returns_by_reward.png")

    fig, axes = _grid(plt, len(envs))
    for ax, env_id in zip(axes, envs):
        for (algo, sharing, reward), rs in sorted(group([r for r in final if r["env"] == env_id], "algo", "sharing", "reward").items()):
            curves = [c for c in (load_curve(sweep_dir or out, r) for r in rs) if c is not None]
            if not curves:
                continue
            length = min(len(c[0]) for c in curves)
            steps = curves[0][0][:length]
            stacked = np.array([c[1][:length] for c in curves])
            finished = np.isfinite(stacked).any(axis=0)
            if finished.any():  # updates in which no episode ended carry no point; never draw an empty line
                with np.errstate(all="ignore"):
                    mean = np.nanmean(stacked[:, finished], axis=0)
                ax.plot(steps[finished], mean, lw=1, marker=".", ms=3, color=colors[reward], label=f"{algo}/{sharing}/{reward}")
        ax.set_title(env_id, fontsize=9)
        ax.set_xlabel("env steps", fontsize=8)
        ax.tick_params(labelsize=7)
    axes[0].set_ylabel("training episode welfare", fontsize=8)
    grid_legend(fig, axes)
    save(fig, "learning_curves.png")
    return figures


def load_curve(out: Path, row: dict) -> tuple[np.ndarray, np.ndarray] | None:
    """``(env steps, training welfare)`` per update of the run whose last evaluation is ``row`` (NaN where no
    episode finished), or None."""
    path = out / "curves" / f"{row['run_id']}.csv"
    if not path.exists():
        return None
    data = np.genfromtxt(path, delimiter=",", names=True)
    updates = np.atleast_1d(data["update"])
    steps = updates * (row["steps"] / max(updates.max(), 1))  # ``row`` is the run's last evaluation
    return steps, np.where(np.atleast_1d(data["episodes"]) > 0, np.atleast_1d(data["welfare"]), np.nan)


def write_report(directory: str | Path, reps: int = 2000, envs: tuple[str, ...] | None = None, out: str | Path | None = None) -> Path:
    """``report.md`` and the figures of the sweep in ``directory``, into ``out`` (default: ``directory``); with
    ``envs``, over those envs' runs only (e.g. a subset with comparable budgets)."""
    sweep_dir = Path(directory)
    results = sweep_dir / "results.csv"
    if not results.exists():
        raise ValueError(f"{results} not found: run `motivegym sweep --out {sweep_dir}` first")
    rows = read_results(results)
    if not rows:
        raise ValueError(f"{results} has no runs")
    if envs:
        known = sorted({r["env"] for r in rows})
        unknown = [e for e in envs if e not in known]
        if unknown:
            raise ValueError(f"--envs names {unknown}, which {results} does not hold; it holds {known}")
        rows = [r for r in rows if r["env"] in envs]
    target = Path(out) if out is not None else sweep_dir
    target.mkdir(parents=True, exist_ok=True)
    settings = json.loads((sweep_dir / "sweep.json").read_text()) if (sweep_dir / "sweep.json").exists() else {}
    path = target / "report.md"
    path.write_text(report_markdown(rows, reps, tuple(settings.get("checkpoints", DEFAULT_CHECKPOINTS))))
    if any(r["status"] == "ok" for r in rows):
        plot_figures(rows, target, reps, sweep_dir)
    return path


def report_cli(directory: str, envs: tuple[str, ...] | None = None, out: str | None = None) -> int:
    path = write_report(directory, envs=envs, out=out)
    print(f"wrote {path} and figures in {path.parent}")
    return 0
