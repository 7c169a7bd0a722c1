"""The intrinsic experiment's comparison table statistics (fast: no training)."""

import numpy as np
import pytest


def test_comparison_adjusts_the_p_values_of_all_layers_against_none_together():
    """Benjamini–Hochberg over the m layers compared with none: p_(k) · m / k, made monotone from the largest down."""
    import scipy.stats

    from motivegym.experiments.intrinsic import compare_to_none

    rng = np.random.default_rng(0)
    none = rng.normal(0.0, 1.0, 10)
    layers = {"a": none + 3.0 + rng.normal(0, 1, 10), "b": rng.normal(0.5, 1.0, 10), "c": rng.normal(-0.2, 1.0, 10)}
    values = {"none": dict(enumerate(none))} | {name: dict(enumerate(v)) for name, v in layers.items()}
    rows = {r["layer"]: r for r in compare_to_none(values, "welfare")}
    assert "p_value" not in rows["none"] and "p_adjusted" not in rows["none"]
    raw = {name: scipy.stats.ttest_ind(v, none, equal_var=False).pvalue for name, v in layers.items()}
    ordered = sorted(raw, key=raw.get)
    m, expected, running = len(raw), {}, 1.0
    for k in range(m, 0, -1):  # the k-th smallest p
        running = min(running, raw[ordered[k - 1]] * m / k)
        expected[ordered[k - 1]] = running
    for name in layers:
        assert rows[name]["p_value"] == pytest.approx(raw[name])
        assert rows[name]["p_adjusted"] == pytest.approx(expected[name])
        assert rows[name]["p_adjusted"] >= rows[name]["p_value"]
    assert rows["a"]["verdict"] == "higher" and rows["a"]["p_adjusted"] < 0.05

