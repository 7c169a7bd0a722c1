"""Tests of motivegym.experiments.statistics: coverage of the per-cell intervals, and rliable-style aggregates."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats

from motivegym.experiments.statistics import (
    Interval,
    iqm,
    mean_interval,
    paired_difference_interval,
    performance_profile,
    probability_of_improvement,
    probability_of_improvement_interval,
    rank_intervals,
    stratified_bootstrap,
)


def covers(interval: Interval, truth: float) -> bool:
    return interval.low <= truth <= interval.high


def old_percentile_bootstrap(data: np.ndarray, rng: np.random.Generator, samples: int = 1000) -> tuple[float, float]:
    """report.py's former ``bootstrap_ci``: percentile interval of resampled means."""
    means = data[rng.integers(0, data.size, (samples, data.size))].mean(axis=1)
    return float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


# --- coverage -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [3, 10])
def test_t_interval_covers_the_true_mean_at_its_nominal_level(n):
    rng = np.random.default_rng(12345)
    experiments = rng.normal(loc=2.0, scale=3.0, size=(2000, n))
    coverage = np.mean([covers(mean_interval(x), 2.0) for x in experiments])
    assert coverage >= 0.93, coverage


def test_old_percentile_bootstrap_undercovers_at_three_seeds():
    """Why report.py's percentile bootstrap was replaced: at 3 seeds its "95%" interval covers far less."""
    rng = np.random.default_rng(12345)
    experiments = rng.normal(loc=2.0, scale=3.0, size=(2000, 3))
    coverage = np.mean([lo <= 2.0 <= hi for lo, hi in (old_percentile_bootstrap(x, rng) for x in experiments)])
    t_coverage = np.mean([covers(mean_interval(x), 2.0) for x in experiments])
    assert coverage < 0.9, coverage
    assert t_coverage - coverage > 0.1, (t_coverage, coverage)


def test_paired_difference_interval_covers_the_true_mean_difference():
    """Seed effects shared by both arms (sd 5) dwarf the noise (sd 1); the paired interval covers and stays narrow."""
    rng = np.random.default_rng(7)
    seed_effect = rng.normal(scale=5.0, size=(2000, 5))
    a = seed_effect + 1.0 + rng.normal(size=(2000, 5))
    b = seed_effect + rng.normal(size=(2000, 5))
    intervals = [paired_difference_interval(x, y) for x, y in zip(a, b)]
    assert np.mean([covers(i, 1.0) for i in intervals]) >= 0.93
    unpaired_width = np.median(
        [2 * scipy.stats.t.ppf(0.975, 8) * math.sqrt(x.var(ddof=1) / 5 + y.var(ddof=1) / 5) for x, y in zip(a, b)]
    )
    assert np.median([i.high - i.low for i in intervals]) < unpaired_width / 3


def test_bca_interval_coverage_at_ten_seeds():
    rng = np.random.default_rng(2024)
    experiments = rng.normal(loc=-1.0, scale=0.5, size=(300, 10))
    coverage = np.mean([covers(mean_interval(x, method="bca", reps=500, seed=k), -1.0) for k, x in enumerate(experiments)])
    assert coverage >= 0.88, coverage


# --- per-cell intervals ---------------------------------------------------------------------------------------


def test_t_interval_formula_and_level():
    data = np.array([1.0, 4.0, 2.0, 7.0])
    interval = mean_interval(data, level=0.9)
    half = scipy.stats.t.ppf(0.95, 3) * data.std(ddof=1) / 2
    assert interval == Interval(3.5, pytest.approx(3.5 - half), pytest.approx(3.5 + half), 4, "t")
    assert mean_interval(data, level=0.99).high > mean_interval(data).high > interval.high


def test_paired_interval_matches_scipy_ttest_rel():
    a, b = [3.0, 5.5, 2.0, 8.0, 4.0], [1.0, 5.0, 2.5, 6.0, 1.0]
    ci = scipy.stats.ttest_rel(a, b).confidence_interval(0.95)
    interval = paired_difference_interval(a, b)
    assert (interval.estimate, interval.low, interval.high, interval.n) == pytest.approx((1.4, ci.low, ci.high, 5))


def test_bca_matches_scipy_and_is_deterministic():
    data = np.array([0.3, 1.2, 0.8, 2.5, 0.1, 0.9])
    interval = mean_interval(data, method="bca", seed=3)
    ref = scipy.stats.bootstrap(
        (data,), np.mean, n_resamples=2000, method="BCa", rng=np.random.default_rng(3)
    ).confidence_interval
    assert (interval.low, interval.high) == pytest.approx((ref.low, ref.high))
    assert interval == mean_interval(data, method="bca", seed=3)
    assert interval.low < data.mean() < interval.high


def test_nan_and_none_are_dropped():
    assert mean_interval([1.0, None, math.nan, 3.0]) == mean_interval([1.0, 3.0])
    assert mean_interval([1.0, None, 3.0]).n == 2
    dropped = paired_difference_interval([1.0, math.nan, 3.0, 6.0, None], [0.0, 2.0, 1.0, 2.0, 5.0])
    assert dropped == paired_difference_interval([1.0, 3.0, 6.0], [0.0, 1.0, 2.0])


@pytest.mark.parametrize("method", ["t", "bca"])
def test_small_samples(method):
    empty = mean_interval([], method=method)
    assert empty.n == 0 and all(math.isnan(v) for v in empty.as_tuple())
    assert all(math.isnan(v) for v in mean_interval([None, math.nan], method=method).as_tuple())
    one = mean_interval([4.0, math.nan], method=method)
    assert one.estimate == 4.0 and one.n == 1 and math.isnan(one.low) and math.isnan(one.high)
    assert mean_interval([2.5, 2.5, 2.5], method=method).as_tuple() == (2.5, 2.5, 2.5)
    single = paired_difference_interval([1.0], [3.0])
    assert single.estimate == -2.0 and math.isnan(single.low)
    assert math.isnan(paired_difference_interval([], []).estimate)


def test_bad_arguments():
    with pytest.raises(ValueError, match="valid: t, bca"):
        mean_interval([1.0, 2.0], method="percentile")
    with pytest.raises(ValueError, match="equal lengths"):
        paired_difference_interval([1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="level"):
        mean_interval([1.0, 2.0], level=95)
    with pytest.raises(ValueError, match="same tasks"):
        probability_of_improvement(np.ones((3, 2)), np.ones((3, 3)))


# --- aggregates -----------------------------------------------------------------------------------------------


def test_iqm_is_the_25_percent_trimmed_mean():
    assert iqm(np.arange(1.0, 9.0)) == 4.5  # middle half of 1..8: mean of 3, 4, 5, 6
    scores = np.random.default_rng(0).exponential(size=(7, 5))
    assert iqm(scores) == pytest.approx(scipy.stats.trim_mean(scores.ravel(), 0.25))
    padded = np.vstack([scores, np.full((2, 5), np.nan)])
    assert iqm(padded) == iqm(scores)
    assert math.isnan(iqm(np.full((2, 2), np.nan)))


def test_stratified_bootstrap_resamples_runs_within_tasks():
    rng = np.random.default_rng(1)
    scores = np.column_stack([np.full(6, 7.0), rng.normal(size=6), rng.normal(loc=10.0, size=6)])
    seen = []

    def statistic(matrix: np.ndarray) -> float:
        assert np.all(matrix[:, 0] == 7.0)  # the constant task contributes exactly its constant
        assert np.all(np.isin(matrix[:, 1], scores[:, 1])) and np.all(np.isin(matrix[:, 2], scores[:, 2]))
        seen.append(matrix[:, 2].copy())
        return float(matrix.mean())

    interval = stratified_bootstrap(scores, statistic, reps=300, seed=5)
    assert len(seen) == 301 and len({tuple(s) for s in seen}) > 250  # really resampled
    assert interval.low < interval.estimate < interval.high and interval.n == 18
    assert interval == stratified_bootstrap(scores, lambda m: float(m.mean()), reps=300, seed=5)
    assert interval != stratified_bootstrap(scores, lambda m: float(m.mean()), reps=300, seed=6)
    # the task means are fixed within a task, so the spread is that of the resampled column means only
    col_sd = scores.std(axis=0) / math.sqrt(6) / 3
    assert interval.high - interval.low == pytest.approx(2 * 1.96 * math.sqrt((col_sd**2).sum()), rel=0.25)


def test_stratified_bootstrap_accepts_ragged_tasks():
    tasks = [np.array([1.0, 2.0, 3.0]), np.array([5.0]), np.array([0.0, 0.0, 1.0, 1.0, 1.0])]
    counts = []

    def statistic(matrix: np.ndarray) -> float:
        assert matrix.shape == (5, 3) and np.all(matrix[:, 1][np.isfinite(matrix[:, 1])] == 5.0)
        counts.append(tuple(np.isfinite(matrix).sum(axis=0)))
        return iqm(matrix)

    interval = stratified_bootstrap(tasks, statistic, reps=200)
    assert set(counts) == {(3, 1, 5)}
    assert interval.estimate == iqm(np.concatenate(tasks)) and interval.n == 9
    padded = np.full((5, 3), np.nan)
    for j, column in enumerate(tasks):
        padded[: column.size, j] = column
    assert stratified_bootstrap(padded, iqm, reps=200) == interval


def test_probability_of_improvement_by_hand():
    low, high = np.zeros((4, 3)), np.ones((5, 3))
    assert probability_of_improvement(high, low) == 1.0
    assert probability_of_improvement(low, high) == 0.0
    x = np.random.default_rng(0).normal(size=(5, 3))
    assert probability_of_improvement(x, x) == 0.5
    # task 1: x = [1, 2, 3], y = [2, 2]: pairs (1,2) lose twice, (2,2) tie twice, (3,2) win twice -> (2 + 1) / 6
    # task 2: x = [0], y = [0, 1]: a tie and a loss -> 0.5 / 2
    assert probability_of_improvement([[1.0, 2.0, 3.0], [0.0]], [[2.0, 2.0], [0.0, 1.0]]) == pytest.approx((0.5 + 0.25) / 2)


def test_probability_of_improvement_equals_mann_whitney_u():
    rng = np.random.default_rng(3)
    x, y = rng.integers(0, 4, size=(6, 4)).astype(float), rng.integers(0, 4, size=(9, 4)).astype(float)  # many ties
    u = [scipy.stats.mannwhitneyu(x[:, j], y[:, j]).statistic / 54 for j in range(4)]
    assert probability_of_improvement(x, y) == pytest.approx(np.mean(u), abs=1e-12)
    assert probability_of_improvement(x, y) + probability_of_improvement(y, x) == pytest.approx(1.0)


def test_probability_of_improvement_interval():
    rng = np.random.default_rng(4)
    x, y = rng.normal(loc=0.5, size=(10, 5)), rng.normal(size=(8, 5))
    interval = probability_of_improvement_interval(x, y, reps=500)
    assert interval.estimate == probability_of_improvement(x, y) and interval.n == 5
    assert 0.0 <= interval.low < interval.estimate < interval.high <= 1.0
    assert interval == probability_of_improvement_interval(x, y, reps=500)
    separated = probability_of_improvement_interval(np.ones((3, 2)), np.zeros((3, 2)), reps=100)
    assert separated.as_tuple() == (1.0, 1.0, 1.0)


def test_performance_profile():
    scores = {"a": np.array([[0.1, 0.5], [0.9, 0.3], [0.7, 0.2]]), "b": [np.array([1.0, 2.0]), np.array([3.0])]}
    taus = np.array([0.0, 0.25, 0.6, 2.5])
    profiles = performance_profile(scores, taus, reps=300)
    estimate, low, high = profiles["a"]
    np.testing.assert_allclose(estimate, [1.0, 4 / 6, 2 / 6, 0.0])
    assert np.all(low <= estimate) and np.all(estimate <= high) and low[0] == high[0] == 1.0
    np.testing.assert_allclose(profiles["b"][0], [1.0, 1.0, 1.0, 1 / 3])
    assert np.all(np.diff(estimate) <= 0)


def test_rank_intervals():
    rng = np.random.default_rng(6)
    cells = {
        task: {"best": list(rng.uniform(10, 11, 4)), "mid": list(rng.uniform(0, 1, 4)), "also_mid": list(rng.uniform(0, 1, 4))}
        for task in ("e1", "e2", "e3")
    }
    ranks = rank_intervals(cells, reps=500)
    assert ranks["best"].as_tuple() == (1.0, 1.0, 1.0) and ranks["best"].n == 3
    assert ranks["mid"].estimate + ranks["also_mid"].estimate == pytest.approx(5.0)
    assert ranks["mid"].low >= 2.0 and ranks["mid"].high <= 3.0 and ranks["mid"].low < ranks["mid"].high
    worst = rank_intervals(cells, reps=100, higher_is_better=False)["best"]
    assert worst.as_tuple() == (3.0, 3.0, 3.0)


def test_rank_intervals_average_ties_and_skip_missing_methods():
    cells = {
        "e1": {"a": [1.0, 1.0], "b": [1.0, 1.0], "c": [0.0, 0.0]},  # a, b tie for first: 1.5 each
        "e2": {"a": [2.0], "b": [1.0, math.nan]},  # c missing on e2
        "e3": {"a": [0.0], "b": [1.0], "c": [None, math.nan]},  # c has no finite value on e3
    }
    ranks = rank_intervals(cells, reps=50)
    assert ranks["a"].estimate == pytest.approx((1.5 + 1 + 2) / 3)
    assert ranks["b"].estimate == pytest.approx((1.5 + 2 + 1) / 3)
    assert ranks["c"].as_tuple() == (3.0, 3.0, 3.0) and ranks["c"].n == 1
