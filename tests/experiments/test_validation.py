"""Case-study rubrics (spec §6): the scoring logic on constructed and reference inputs, and runs on our envs."""

import json

import numpy as np
import pytest

from motivegym.experiments import validation as v

DURATIONS = [d for _, d, _ in v.RENAULT_NISSAN_SCRIPT]


def total(criteria):
    return sum(c.points for c in criteria)


def by_category(criteria):
    out = {}
    for c in criteria:
        out[c.category] = out.get(c.category, 0.0) + c.points
    return out


# ---------------------------------------------------------------------------------------------- S-LCD


def test_suite_slcd_model_reproduces_58_and_46():
    log = v.suite_slcd_metrics("log")
    np.testing.assert_allclose(log["equilibrium"], [26.6334, 27.3991], atol=1e-4)
    np.testing.assert_allclose(log["baseline"], [19.0, 19.0], atol=1e-6)
    assert log["cooperation_increase_percent"] == pytest.approx(42.19, abs=0.01)
    assert log["value_increase_percent"] == pytest.approx(14.14, abs=0.01)
    assert by_category(v.slcd_rubric(log)) == {"convergence": 10, "cooperation": 15, "value creation": 13,
                                              "value distribution": 10, "strategic realism": 10}
    power = v.suite_slcd_metrics("power")
    np.testing.assert_allclose(power["equilibrium"], [0.8329, 0.8767], atol=1e-4)
    assert by_category(v.slcd_rubric(power)) == {"convergence": 10, "cooperation": 7, "value creation": 9,
                                                "value distribution": 10, "strategic realism": 10}


def slcd_case(a_eq, a_base=(20.0, 20.0), pi_eq=(150.0, 130.0), pi_base=(140.0, 125.0), v_eq=140.0, v_base=120.0, converged=True):
    return v.slcd_metrics(a_eq, a_base, pi_eq, pi_base, v_eq, v_base, converged)


def test_slcd_rubric_constructed_pass_and_fail():
    perfect = slcd_case((26.0, 28.0))  # coop% 35, value% 16.7, share0 .536, asym .074
    assert total(v.slcd_rubric(perfect)) == 60
    failing = slcd_case((10.0, 10.0), pi_eq=(100.0, 120.0), v_eq=100.0, converged=False)
    scores = {c.name: c.points for c in v.slcd_rubric(failing)}
    assert scores["converged"] == 0 and scores["coop% > 0"] == 0 and scores["Pareto improvement"] == 0
    assert scores["Samsung share"] == 0 and scores["moderate asymmetry"] == 0  # share .45, asym 0
    assert total(v.slcd_rubric(failing)) < 30


def test_slcd_on_our_env_reproduces_the_suite_equilibrium():
    metrics = v.env_slcd_metrics("log")
    np.testing.assert_allclose(metrics["equilibrium"], [26.6334, 27.3991], atol=2e-3)
    np.testing.assert_allclose(metrics["baseline"], [19.0, 19.0], atol=2e-3)
    assert metrics["converged"]
    assert total(v.slcd_rubric(metrics)) == 58


# ------------------------------------------------------------------------------------- Renault–Nissan


def test_suite_renault_nissan_reproduces_49():
    trust, reputation = v.suite_renault_nissan_history()
    assert trust.shape == (80, 2, 2)
    criteria = v.renault_nissan_rubric(trust, reputation, DURATIONS, v.script_signals())
    assert by_category(criteria) == {"trust alignment": 10, "behavioural prediction": 15, "mechanism": 15, "outcome": 9}
    assert total(v.renault_nissan_rubric(trust, reputation, DURATIONS, v.script_signals(), observed_data=True)) == 51


def test_renault_nissan_rubric_fails_flat_trust():
    trust = np.tile(np.array([[1.0, 0.5], [0.5, 1.0]]), (80, 1, 1))
    criteria = v.renault_nissan_rubric(trust, np.zeros((80, 2, 2)), DURATIONS, v.script_signals())
    scores = {c.name: c.points for c in criteria}
    assert scores["phase trust direction"] == 0 and scores["negativity bias"] == 0 and scores["hysteresis"] == 0
    assert scores["reputation damage"] == 0 and scores["visible phase transitions"] == 0
    assert total(criteria) == 10 + 7


def test_renault_nissan_on_our_env():
    result = v.validate_renault_nissan()
    assert len(result.details["trust_mean_full_matrix"]) == 80
    scores = {c.name: c.points for c in result.criteria}
    assert scores["phase trust direction"] == 15 and scores["reputation damage"] == 5
    assert 40 <= result.score <= 60


# ---------------------------------------------------------------------------------------------- Apache


def test_apache_rubric_reproduces_the_measured_45():
    criteria = v.apache_rubric([9.666, 0.0963, 0.01113, 0.01475])
    per_phase = by_category(criteria)
    assert per_phase == {"Formation": 12, "Growth": 12, "Maturation": 11, "Evolution": 10}
    formation_pattern = next(c for c in criteria if c.category == "Formation" and c.name == "pattern match")
    assert formation_pattern.points == 1  # x = 0.193 gives "High" only 1 point


def test_apache_rubric_constructed_pass_and_fail():
    assert total(v.apache_rubric([40.0, 30.0, 15.0, 10.0])) == 60
    rising = v.apache_rubric([1.0, 5.0, 20.0, 45.0])
    scores = {(c.category, c.name): c.points for c in rising}
    assert scores[("Formation", "relative-magnitude rank")] == 0 and scores[("Evolution", "cross-phase trend")] == 0
    assert scores[("Evolution", "pattern match")] == 1  # x = 0.9 is not "Declining"
    assert total(rising) < 35
    with pytest.raises(ValueError, match="pattern"):
        v.pattern_points("Unknown", 0.5)


# ----------------------------------------------------------------------------------------------- Apple


def test_apple_rubric_has_51_applicable_cells():
    flat = np.full((66, 3), 0.5)
    criteria = v.apple_rubric(flat)
    assert len(criteria) == 51
    assert {p: sum(1 for c in criteria if c.category == p) for p, _, _ in v.APPLE_SUITE_PHASES} == {
        "Symbiosis": 9, "Maturation": 10, "Tension": 10, "Crisis": 10, "Adjustment": 12}


def test_apple_rubric_flat_trajectory_fails_and_targeted_one_passes():
    flat = v.apple_rubric(np.full((66, 3), 0.5))
    cells = {(c.category, c.name): c.points for c in flat}
    assert cells[("Tension", "coop_trend")] == 0.0 and cells[("Crisis", "coop_trend")] == 0.5
    assert cells[("Symbiosis", "asymmetry")] == 0.0  # no variation at all
    assert total(flat) / 51 < 0.83
    # a trajectory that follows the targets with smooth phase-internal trends
    trajectory = np.zeros((66, 3))
    for phase, start, end in v.APPLE_SUITE_PHASES:
        target = np.asarray(v.APPLE_PHASE_TARGETS[phase])
        span = np.arange(start, min(end, 66))
        slope = {"Symbiosis": 0.002, "Maturation": 0.0005, "Tension": -0.004, "Crisis": -0.05, "Adjustment": 0.012}[phase]
        trajectory[span] = target + slope * (span - span.mean())[:, None]
    result = v.RubricResult("AppleAppStore", v.apple_rubric(trajectory), 51.0, pass_fraction=0.83)
    assert result.passed and result.score >= 45


def test_apple_on_our_env():
    result = v.validate_apple()
    assert result.max_score == 51
    assert set(result.details["phase_means"]) == {p for p, _, _ in v.APPLE_SUITE_PHASES}
    crisis = np.asarray(result.details["phase_means"]["Crisis"])
    symbiosis = np.asarray(result.details["phase_means"]["Symbiosis"])
    assert np.all(crisis < symbiosis)  # the shocks lower cooperation in the env-driven dynamics


# ------------------------------------------------------------------------------------------------- CLI


def test_validate_cli_writes_a_report(tmp_path, capsys):
    out = tmp_path / "report.json"
    assert v.validate_cli("RenaultNissan", str(out)) == 0
    report = json.loads(out.read_text())
    (result,) = report["results"]
    assert result["case"] == "RenaultNissan" and result["max_score"] == 60
    assert result["score"] == sum(c["points"] for c in result["criteria"])
    printed = capsys.readouterr().out
    assert "total" in printed and "target:" in printed
    assert v.validate_cli("Samsung", None) == 2
