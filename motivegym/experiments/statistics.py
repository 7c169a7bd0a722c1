"""Interval estimates for reward-type ablations: per-cell CIs over seeds and rliable-style aggregates across envs.

Per cell (one env × algorithm × reward layer, a handful of seeds) the mean gets a Student-t interval, which has
correct coverage at small n for roughly normal data; the percentile bootstrap the report used before covers far
less than its nominal level at 3–5 seeds (``tests/experiments/test_statistics.py`` measures both). BCa is offered
as the distribution-free alternative. Paired differences (same seed under two reward layers) get a paired t interval.

Across envs the protocol of rliable (Agarwal et al. 2021, "Deep RL at the edge of the statistical precipice"):
interquartile mean, stratified bootstrap (runs resampled within each task), probability of improvement and
performance profiles, written on numpy/scipy only and checked against rliable in
``tests/experiments/test_statistics_rliable.py``. Scores are ``[runs, tasks]`` arrays (NaN padding allowed) or
lists of per-task 1-D arrays, so tasks may have different numbers of runs.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import scipy.stats

MEAN_METHODS = ("t", "bca")
Scores = np.ndarray | Sequence[Sequence[float]]
"""``[runs, tasks]`` array (NaN padding allowed) or a list of per-task 1-D arrays."""


@dataclasses.dataclass(frozen=True)
class Interval:
    """A point estimate with a ``level`` confidence interval ``[low, high]``.

    ``n`` counts what the estimate rests on: seeds for a cell (:func:`mean_interval`), seed pairs
    (:func:`paired_difference_interval`), finite scores runs × tasks (:func:`stratified_bootstrap`), tasks
    (:func:`probability_of_improvement_interval`, :func:`rank_intervals`). NaN bounds mean "no interval".
    """

    estimate: float
    low: float
    high: float
    n: int
    method: str = ""

    def as_tuple(self) -> tuple[float, float, float]:
        """``(estimate, low, high)``."""
        return (self.estimate, self.low, self.high)


def _finite_values(values: Any) -> np.ndarray:
    """1-D float array of ``values`` with ``None`` and NaN dropped."""
    data = np.asarray([math.nan if v is None else float(v) for v in values], np.float64).reshape(-1)
    return data[~np.isnan(data)]


def _check_level(level: float) -> None:
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1), got {level}")


def _t_interval(data: np.ndarray, level: float, method: str) -> Interval:
    """``mean ± t_{n-1, (1+level)/2} · s / √n``; one value gives NaN bounds, zero variance a zero-width interval."""
    n = data.size
    if n == 0:
        return Interval(math.nan, math.nan, math.nan, 0, method)
    mean = float(data.mean())
    if n == 1:
        return Interval(mean, math.nan, math.nan, 1, method)
    half = float(scipy.stats.t.ppf((1 + level) / 2, n - 1) * data.std(ddof=1) / math.sqrt(n))
    return Interval(mean, mean - half, mean + half, n, method)


def mean_interval(
    values: Iterable[float | None], level: float = 0.95, method: str = "t", *, reps: int = 2000, seed: int = 0
) -> Interval:
    """Confidence interval of the mean over seeds (``None``/NaN dropped).

    ``"t"``: Student-t, ``x̄ ± t_{n-1} s/√n``. ``"bca"``: bias-corrected and accelerated bootstrap
    (``scipy.stats.bootstrap(method="BCa")``, ``reps`` resamples, rng seeded by ``seed``). ``n == 1`` gives NaN
    bounds (one seed says nothing about spread); identical values with ``n >= 2`` give a zero-width interval.
    """
    _check_level(level)
    if method not in MEAN_METHODS:
        raise ValueError(f"unknown method {method!r}; valid: {', '.join(MEAN_METHODS)}")
    data = _finite_values(values)
    if method == "t" or data.size < 2:
        return _t_interval(data, level, method)
    mean = float(data.mean())
    if np.all(data == data[0]):
        return Interval(mean, mean, mean, data.size, method)
    result = scipy.stats.bootstrap(
        (data,), np.mean, confidence_level=level, n_resamples=reps, method="BCa", rng=np.random.default_rng(seed)
    )
    ci = result.confidence_interval
    return Interval(mean, float(ci.low), float(ci.high), data.size, method)


def paired_difference_interval(a: Sequence[float | None], b: Sequence[float | None], level: float = 0.95) -> Interval:
    """Mean of ``a[k] − b[k]`` (``a[k]``, ``b[k]`` share seed k) with a paired Student-t interval.

    Same interval as ``scipy.stats.ttest_rel(a, b).confidence_interval(level)``: ``d̄ ± t_{n-1} s_d/√n``.
    Pairs where either value is ``None``/NaN are dropped; sequences of different lengths raise ``ValueError``.
    """
    _check_level(level)
    if len(a) != len(b):
        raise ValueError(f"paired values need equal lengths, got {len(a)} and {len(b)}")
    x = np.asarray([math.nan if v is None else float(v) for v in a], np.float64)
    y = np.asarray([math.nan if v is None else float(v) for v in b], np.float64)
    keep = ~(np.isnan(x) | np.isnan(y))
    return _t_interval(x[keep] - y[keep], level, "paired t")


def iqm(scores: Any) -> float:
    """Interquartile mean of all finite entries (runs × tasks flattened): the 25% trimmed mean.

    rliable's ``metrics.aggregate_iqm`` (``scipy.stats.trim_mean(scores, 0.25, axis=None)``); NaN when empty.
    """
    flat = np.asarray(scores, np.float64).reshape(-1)
    flat = flat[np.isfinite(flat)]
    return float(scipy.stats.trim_mean(flat, 0.25)) if flat.size else math.nan


def as_score_matrix(scores: Scores) -> np.ndarray:
    """``[runs, tasks]`` float array; a list of per-task 1-D arrays becomes columns padded with NaN."""
    if isinstance(scores, np.ndarray):
        matrix = np.asarray(scores, np.float64)
        if matrix.ndim == 1:
            matrix = matrix[:, None]
        if matrix.ndim != 2:
            raise ValueError(f"scores must be [runs, tasks], got shape {matrix.shape}")
        return matrix
    columns = [np.asarray(column, np.float64).reshape(-1) for column in scores]
    matrix = np.full((max((c.size for c in columns), default=0), len(columns)), np.nan)
    for j, column in enumerate(columns):
        matrix[: column.size, j] = column
    return matrix


def _resample_within_tasks(matrix: np.ndarray, reps: int, rng: np.random.Generator) -> np.ndarray:
    """``[reps, runs, tasks]``: each column's finite entries drawn with replacement from that column; padding stays NaN."""
    out = np.full((reps, *matrix.shape), np.nan)
    for j in range(matrix.shape[1]):
        column = matrix[:, j][np.isfinite(matrix[:, j])]
        if column.size:
            out[:, : column.size, j] = column[rng.integers(0, column.size, (reps, column.size))]
    return out


def _percentile_bounds(samples: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval along axis 0: the ``(1 − level)/2`` and ``(1 + level)/2`` quantiles (linear interpolation)."""
    tail = (1 - level) / 2 * 100
    return np.percentile(samples, tail, axis=0), np.percentile(samples, 100 - tail, axis=0)


def _check_reps(reps: int) -> None:
    if reps < 1:
        raise ValueError(f"reps must be >= 1, got {reps}")


def stratified_bootstrap(
    scores: Scores,
    statistic: Callable[[np.ndarray], float],
    reps: int = 2000,
    level: float = 0.95,
    seed: int = 0,
) -> Interval:
    """``statistic(scores)`` with a stratified-bootstrap percentile interval (rliable's ``StratifiedBootstrap``).

    Each resample draws, independently for every task (column), as many runs as the task has, with replacement
    from that task's finite runs; ``statistic`` sees a ``[runs, tasks]`` array of the input's shape, each column's
    draws first and NaN below them, so it must ignore NaN when tasks have different numbers of runs (:func:`iqm` does).
    A 1-D array is one task.
    """
    _check_level(level)
    _check_reps(reps)
    matrix = as_score_matrix(scores)
    estimate = float(statistic(matrix))
    resamples = _resample_within_tasks(matrix, reps, np.random.default_rng(seed))
    values = np.asarray([statistic(r) for r in resamples], np.float64)
    low, high = _percentile_bounds(values, level)
    return Interval(estimate, float(low), float(high), int(np.isfinite(matrix).sum()), "stratified bootstrap")


def aggregate_intervals(
    scores_by_method: Mapping[str, Scores],
    statistic: Callable[[np.ndarray], float] = iqm,
    reps: int = 2000,
    level: float = 0.95,
    seed: int = 0,
) -> dict[str, Interval]:
    """:func:`stratified_bootstrap` of ``statistic`` (IQM by default) for every method: rliable's ``get_interval_estimates``."""
    return {name: stratified_bootstrap(scores, statistic, reps, level, seed) for name, scores in scores_by_method.items()}


def _paired_tasks(x: Scores, y: Scores) -> tuple[np.ndarray, np.ndarray]:
    mx, my = as_score_matrix(x), as_score_matrix(y)
    if mx.shape[1] != my.shape[1]:
        raise ValueError(f"both methods need the same tasks, got {mx.shape[1]} and {my.shape[1]} columns")
    return mx, my


def _improvement(mx: np.ndarray, my: np.ndarray) -> tuple[float, int]:
    """Mean over tasks of P(X > Y) + ½ P(X = Y), tasks where both have finite runs; and how many tasks that is."""
    probabilities = []
    for j in range(mx.shape[1]):
        xs, ys = mx[:, j][np.isfinite(mx[:, j])], my[:, j][np.isfinite(my[:, j])]
        if xs.size and ys.size:
            greater = (xs[:, None] > ys[None, :]).mean()
            ties = (xs[:, None] == ys[None, :]).mean()
            probabilities.append(greater + 0.5 * ties)
    return (float(np.mean(probabilities)) if probabilities else math.nan), len(probabilities)


def probability_of_improvement(x: Scores, y: Scores) -> float:
    """P(X > Y): mean over tasks of ``U / (n_x n_y)``, U the Mann-Whitney statistic of X (ties count ½).

    rliable's ``metrics.probability_of_improvement``; ``x``, ``y`` are ``[runs, tasks]`` (or per-task lists) of two
    methods on the same tasks, runs need not match. Tasks without finite runs for both are skipped.
    """
    return _improvement(*_paired_tasks(x, y))[0]


def probability_of_improvement_interval(
    x: Scores,
    y: Scores,
    reps: int = 2000,
    level: float = 0.95,
    seed: int = 0,
) -> Interval:
    """:func:`probability_of_improvement` with a percentile interval from stratified resamples of both methods.

    X and Y are resampled independently, each within tasks (rliable's ``StratifiedIndependentBootstrap``).
    """
    _check_level(level)
    _check_reps(reps)
    mx, my = _paired_tasks(x, y)
    estimate, tasks = _improvement(mx, my)
    rng = np.random.default_rng(seed)
    rx, ry = _resample_within_tasks(mx, reps, rng), _resample_within_tasks(my, reps, rng)
    values = np.asarray([_improvement(a, b)[0] for a, b in zip(rx, ry)], np.float64)
    low, high = _percentile_bounds(values, level)
    return Interval(estimate, float(low), float(high), tasks, "stratified bootstrap")


def _profile(matrix: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
    """Fraction of finite scores above each threshold (rliable's ``score_distributions``)."""
    flat = matrix.reshape(-1)
    flat = flat[np.isfinite(flat)]
    return (flat[None, :] > thresholds[:, None]).mean(axis=1) if flat.size else np.full(thresholds.shape, np.nan)


def performance_profile(
    scores_by_method: Mapping[str, Scores],
    thresholds: np.ndarray | Sequence[float],
    reps: int = 2000,
    level: float = 0.95,
    seed: int = 0,
) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Score distribution ``τ ↦ fraction of runs (all runs × tasks) with score > τ`` per method.

    Returns ``(estimate, low, high)`` arrays over ``thresholds``; the band is the stratified-bootstrap percentile
    interval at each τ (rliable's ``create_performance_profile`` with ``use_score_distribution=True``).
    """
    _check_level(level)
    _check_reps(reps)
    taus = np.asarray(thresholds, np.float64).reshape(-1)
    out = {}
    for name, scores in scores_by_method.items():
        matrix = as_score_matrix(scores)
        resamples = _resample_within_tasks(matrix, reps, np.random.default_rng(seed))
        low, high = _percentile_bounds(np.stack([_profile(r, taus) for r in resamples]), level)
        out[name] = (_profile(matrix, taus), low, high)
    return out


def _mean_ranks(task_means: list[dict[str, np.ndarray]], methods: list[str], higher_is_better: bool) -> dict[str, np.ndarray]:
    """Mean over tasks of each method's rank (1 = best, ties averaged) among the methods present on the task.

    ``task_means[t][method]`` holds a mean per bootstrap replicate (shape ``[reps]``, or ``[1]`` for the estimate).
    """
    sums = {m: 0.0 for m in methods}
    counts = dict.fromkeys(methods, 0)
    for means in task_means:
        names = list(means)
        if not names:
            continue
        stacked = np.stack([means[m] for m in names], axis=1)
        ranks = scipy.stats.rankdata(-stacked if higher_is_better else stacked, axis=1)
        for k, m in enumerate(names):
            sums[m] = sums[m] + ranks[:, k]
            counts[m] += 1
    return {m: (sums[m] / counts[m] if counts[m] else np.array([math.nan])) for m in methods}


def rank_intervals(
    cells: Mapping[str, Mapping[str, Sequence[float | None]]],
    reps: int = 2000,
    level: float = 0.95,
    seed: int = 0,
    higher_is_better: bool = True,
) -> dict[str, Interval]:
    """Mean rank over tasks of every method with a bootstrap interval: rankings with uncertainty.

    ``cells[task][method]`` are per-seed values. On each task the methods are ranked by their mean over seeds
    (1 = best, ties averaged; only methods with a finite value there take part); a method's estimate is its mean
    rank over those tasks. Interval: resample the seeds of every (task, method) cell with replacement, rank again,
    percentile interval of the mean ranks. ``n`` is the number of tasks the method was ranked on.
    """
    _check_level(level)
    _check_reps(reps)
    rng = np.random.default_rng(seed)
    methods = list(dict.fromkeys(m for per_task in cells.values() for m in per_task))
    point: list[dict[str, np.ndarray]] = []
    boot: list[dict[str, np.ndarray]] = []
    for per_task in cells.values():
        point.append({})
        boot.append({})
        for method, values in per_task.items():
            data = _finite_values(values)
            if data.size:
                point[-1][method] = np.array([data.mean()])
                boot[-1][method] = data[rng.integers(0, data.size, (reps, data.size))].mean(axis=1)
    estimates = _mean_ranks(point, methods, higher_is_better)
    replicates = _mean_ranks(boot, methods, higher_is_better)
    out = {}
    for m in methods:
        tasks = sum(m in means for means in point)
        low, high = _percentile_bounds(replicates[m][:, None], level)
        out[m] = Interval(float(estimates[m][0]), float(low[0]), float(high[0]), tasks, "bootstrap over seeds")
    return out
