"""motivegym.experiments.statistics against rliable itself (Agarwal et al. 2021), run in a throw-away venv.

rliable cannot live in our environment (its ``arch`` dependency breaks with pandas 3), so the test builds a venv
with ``rliable`` and ``pandas<3``, lets rliable compute IQM, probability of improvement, stratified-bootstrap
intervals and performance profiles on fixed scores, and compares: point estimates exactly (1e-9), bootstrap interval
ends within Monte Carlo tolerance (the two bootstraps draw different random indices).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from motivegym.experiments.statistics import (
    aggregate_intervals,
    iqm,
    performance_profile,
    probability_of_improvement,
    probability_of_improvement_interval,
)

REPS = 5000
TOLERANCE = 0.05  # score units; the Monte Carlo error of a 2.5% quantile at 5,000 reps is about 0.01 here
TAUS = np.linspace(-1.0, 4.0, 11)

RLIABLE_SCRIPT = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    from rliable import library, metrics

    x, y = np.load(sys.argv[1] + "/x.npy"), np.load(sys.argv[1] + "/y.npy")
    taus = np.load(sys.argv[1] + "/taus.npy")
    reps = int(sys.argv[2])
    np.random.seed(0)  # rliable's bootstraps draw from numpy's global generator
    iqm_points, iqm_cis = library.get_interval_estimates(
        {"x": x, "y": y}, lambda s: np.array([metrics.aggregate_iqm(s)]), reps=reps
    )
    poi_points, poi_cis = library.get_interval_estimates(
        {"x,y": [x, y]}, lambda a, b: np.array([metrics.probability_of_improvement(a, b)]), reps=reps
    )
    profiles, profile_cis = library.create_performance_profile({"x": x, "y": y}, taus, reps=reps)
    out = {
        "iqm": {k: float(metrics.aggregate_iqm(s)) for k, s in (("x", x), ("y", y))},
        "iqm_point": {k: float(v[0]) for k, v in iqm_points.items()},
        "iqm_ci": {k: [float(v[0, 0]), float(v[1, 0])] for k, v in iqm_cis.items()},
        "poi": float(metrics.probability_of_improvement(x, y)),
        "poi_ci": [float(poi_cis["x,y"][0, 0]), float(poi_cis["x,y"][1, 0])],
        "profile": {k: np.asarray(v).tolist() for k, v in profiles.items()},
        "profile_ci": {k: np.asarray(v).tolist() for k, v in profile_cis.items()},
    }
    print(json.dumps(out))
    """
)


def fixed_scores() -> tuple[np.ndarray, np.ndarray]:
    """Two methods on six tasks whose levels differ, so a bootstrap that mixed tasks would be visibly wider."""
    rng = np.random.default_rng(2021)
    task_level = np.linspace(0.0, 2.5, 6)
    x = task_level + rng.normal(loc=0.4, scale=0.5, size=(10, 6))
    y = task_level + rng.normal(scale=0.7, size=(7, 6))
    return x, y


def rliable_python(tmp_path: Path) -> Path:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True, timeout=300)
    python = venv / "bin" / "python"
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "--disable-pip-version-check", "-q", "rliable", "pandas<3"],
        capture_output=True,
        text=True,
        timeout=480,
    )
    if install.returncode != 0:
        pytest.skip(f"could not pip-install rliable into a venv (no registry access?): {install.stderr.strip()[-400:]}")
    return python


@pytest.mark.slow
def test_statistics_agree_with_rliable(tmp_path):
    python = rliable_python(tmp_path)
    x, y = fixed_scores()
    for name, array in (("x", x), ("y", y), ("taus", TAUS)):
        np.save(tmp_path / f"{name}.npy", array)
    script = tmp_path / "run_rliable.py"
    script.write_text(RLIABLE_SCRIPT)
    done = subprocess.run([str(python), str(script), str(tmp_path), str(REPS)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    ref = json.loads(done.stdout.strip().splitlines()[-1])

    ours = aggregate_intervals({"x": x, "y": y}, reps=REPS)
    for key, scores in (("x", x), ("y", y)):
        assert iqm(scores) == pytest.approx(ref["iqm"][key], abs=1e-9)
        assert ours[key].estimate == pytest.approx(ref["iqm_point"][key], abs=1e-9)
        assert [ours[key].low, ours[key].high] == pytest.approx(ref["iqm_ci"][key], abs=TOLERANCE)

    assert probability_of_improvement(x, y) == pytest.approx(ref["poi"], abs=1e-9)
    poi = probability_of_improvement_interval(x, y, reps=REPS)
    assert [poi.low, poi.high] == pytest.approx(ref["poi_ci"], abs=TOLERANCE)

    profiles = performance_profile({"x": x, "y": y}, TAUS, reps=REPS)
    for key, (estimate, low, high) in profiles.items():
        np.testing.assert_allclose(estimate, ref["profile"][key], atol=1e-9)
        np.testing.assert_allclose(low, ref["profile_ci"][key][0], atol=TOLERANCE)
        np.testing.assert_allclose(high, ref["profile_ci"][key][1], atol=TOLERANCE)
