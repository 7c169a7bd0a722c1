import csv
import json
import math

import numpy as np
import pytest

from motivegym.cli import main
from motivegym.experiments import sweep
from motivegym.experiments.croissant import validate_croissant
from motivegym.experiments.report import algorithm_ranks, bootstrap_ci, d_contribution, difference_ci, write_report
from motivegym.experiments.sweep import SweepSpec, load_spec_file, read_results, run_sweep

TINY = dict(envs=("PrisonersDilemma-v0",), rewards=("private", "integrated"), algos=("ippo",), seeds=2, steps=2048,
            num_envs=4, num_steps=64, eval_episodes=4, oracle_gap=False)  # fmt: skip


@pytest.fixture(scope="module")
def tiny_sweep(tmp_path_factory):
    out = tmp_path_factory.mktemp("sweep")
    path = run_sweep(SweepSpec(**TINY), out, progress=False)
    return out, path


@pytest.mark.slow
def test_sweep_writes_one_tidy_row_per_run(tiny_sweep):
    out, path = tiny_sweep
    rows = read_results(path)
    assert sorted((r["reward"], r["seed"]) for r in rows) == [("integrated", 0), ("integrated", 1), ("private", 0), ("private", 1)]
    for row in rows:
        assert row["env"] == "PrisonersDilemma-v0" and row["family"] == "dilemmas" and row["algo"] == "ippo"
        assert math.isfinite(row["welfare"]) and math.isfinite(row["random_welfare"])
        assert len(json.loads(row["payoff_returns"])) == 2
        assert sum(json.loads(row["payoff_returns"])) == pytest.approx(row["welfare"], rel=1e-4)
        assert 0.0 <= row["cooperation_rate"] <= 1.0 and row["steps"] == 2048
        assert row["efficiency"] == pytest.approx(row["welfare"] / row["episode_length"], rel=1e-4)
        assert 0.0 <= row["equality"] <= 1.0 and row["peace"] == 2.0
    with open(path, newline="") as handle:
        assert tuple(next(csv.reader(handle))) == sweep.RESULT_COLUMNS
    assert len(list((out / "curves").glob("*.csv"))) == 4


@pytest.mark.slow
def test_croissant_metadata_validates_and_detects_changes(tiny_sweep):
    out, path = tiny_sweep
    metadata = json.loads((out / "croissant.json").read_text())
    assert validate_croissant(metadata, out) == []
    names = [f["name"] for f in metadata["recordSet"][0]["field"]]
    assert names == list(sweep.RESULT_COLUMNS)
    broken = json.loads(json.dumps(metadata))
    broken["distribution"][0]["sha256"] = "0" * 64
    del broken["license"]
    problems = validate_croissant(broken, out)
    assert any("sha256" in p for p in problems) and any("license" in p for p in problems)


@pytest.mark.slow
def test_rerun_skips_completed_runs(tiny_sweep, monkeypatch):
    out, _ = tiny_sweep
    before = {p.name: p.stat().st_mtime_ns for p in (out / "runs").glob("*.json")}

    def must_not_train(*args, **kwargs):
        raise AssertionError("a completed run was trained again")

    monkeypatch.setattr(sweep, "run_group", must_not_train)
    run_sweep(SweepSpec(**TINY), out, progress=False)
    assert {p.name: p.stat().st_mtime_ns for p in (out / "runs").glob("*.json")} == before
    assert not list(out.rglob("*.tmp"))


@pytest.mark.slow
def test_a_failing_group_is_recorded_and_the_sweep_goes_on(tmp_path, monkeypatch):
    real = sweep.run_group

    def fail_on_stag_hunt(env_id, *args):
        if env_id == "StagHunt-v0":
            raise RuntimeError("boom")
        return real(env_id, *args)

    monkeypatch.setattr(sweep, "run_group", fail_on_stag_hunt)
    spec = SweepSpec(**{**TINY, "envs": ("StagHunt-v0", "Chicken-v0"), "rewards": ("private",), "seeds": 1})
    rows = read_results(run_sweep(spec, tmp_path, progress=False))
    assert [r["env"] for r in rows] == ["Chicken-v0"]
    failure = json.loads((tmp_path / "failures" / "StagHunt-v0__ippo.json").read_text())
    assert "boom" in failure["error"] and failure["runs"] == [["private", 0]]


@pytest.mark.slow
def test_report_tables_and_figures(tiny_sweep):
    out, _ = tiny_sweep
    text = write_report(out).read_text()
    assert "| PrisonersDilemma-v0 | ippo | integrated | 2 |" in text
    assert "D-contribution" in text and "| PrisonersDilemma-v0 | ippo |" in text.split("D-contribution")[1]
    for figure in ("returns_by_reward.png", "ranking_shifts.png", "learning_curves.png"):
        assert (out / figure).stat().st_size > 1000


@pytest.mark.slow
def test_sweep_cli_with_a_toml_file_and_flag_overrides(tmp_path):
    config = tmp_path / "sweep.toml"
    config.write_text('envs = "Chicken-v0"\nrewards = ["private"]\nseeds = 1\nsteps = 1024\nnum_envs = 4\nnum_steps = 64\neval_episodes = 2\n')
    out = tmp_path / "out"
    assert main(["sweep", "--config", str(config), "--algos", "mappo", "--no-gap", "--out", str(out)]) == 0
    rows = read_results(out / "results.csv")
    assert [(r["env"], r["algo"], r["reward"]) for r in rows] == [("Chicken-v0", "mappo", "private")]


def test_spec_errors_are_clear(tmp_path):
    with pytest.raises(ValueError, match="did you mean 'ippo'"):
        SweepSpec(envs=("TrustDilemma-v0",), algos=("ipo",))
    with pytest.raises(ValueError, match="reward layer"):
        SweepSpec(envs=("TrustDilemma-v0",), rewards=("privat",))
    with pytest.raises(ValueError, match="unknown environment"):
        SweepSpec(envs=("NoSuchEnv-v0",))
    bad = tmp_path / "bad.yaml"
    bad.write_text("envs: TrustDilemma-v0\nsed: 3\n")
    with pytest.raises(ValueError, match="did you mean 'seeds'"):
        load_spec_file(bad)
    good = tmp_path / "good.yaml"
    good.write_text("envs: [TrustDilemma-v0, StagHunt-v0]\nseeds: 3\n")
    assert load_spec_file(good) == {"envs": ["TrustDilemma-v0", "StagHunt-v0"], "seeds": 3}


def test_reference_budget_follows_the_reference_categories():
    spec = SweepSpec(envs=("TrustDilemma-v0", "PlatformEcosystem-v0", "ApacheProject-v0", "GiftExchange-v0"), steps="reference")
    assert [spec.budget(e) for e in spec.envs] == [500_000, 1_000_000, 1_000_000, 1_000_000]
    assert SweepSpec(envs=("TrustDilemma-v0",), steps=4096).budget("TrustDilemma-v0") == 4096
    with pytest.raises(ValueError, match="no reference training budget"):
        SweepSpec(envs=("TrustDilemma-v0", "Harvest-v0"), steps="reference")
    with pytest.raises(ValueError, match="number of env steps or 'reference'"):
        SweepSpec(envs=("TrustDilemma-v0",), steps="refrence")


def test_reference_budget_names_runs_by_each_envs_budget(tmp_path, monkeypatch):
    budgets = {"TrustDilemma-v0": 1024, "PlatformEcosystem-v0": 2048}
    monkeypatch.setattr(sweep, "run_budget", lambda steps, env_id: budgets[env_id] if steps == "reference" else int(steps))
    spec = SweepSpec(envs=tuple(budgets), rewards=("private",), seeds=1, steps="reference", num_envs=4, num_steps=64,
                     eval_episodes=2, oracle_gap=False)  # fmt: skip
    run_sweep(spec, tmp_path, progress=False)
    names = sorted(p.stem for p in (tmp_path / "runs").glob("*.json"))
    assert names == ["PlatformEcosystem-v0__ippo__private__seed0__2048", "TrustDilemma-v0__ippo__private__seed0__1024"]
    rows = {r["env"]: r for r in read_results(tmp_path / "results.csv")}
    assert rows["TrustDilemma-v0"]["steps"] == 1024 and rows["PlatformEcosystem-v0"]["steps"] == 2048
    assert write_report(tmp_path).exists()  # the report finds each run's learning curve under its own budget


def test_bootstrap_intervals():
    mean, low, high = bootstrap_ci([1.0, 2.0, 3.0, 4.0, 5.0])
    assert mean == 3.0 and 1.0 <= low < 3.0 < high <= 5.0
    assert bootstrap_ci([2.0, 2.0, 2.0]) == (2.0, 2.0, 2.0)
    assert all(math.isnan(v) for v in bootstrap_ci([float("nan")]))
    diff, low, high = difference_ci([10.0, 11.0, 12.0], [1.0, 2.0, 3.0])
    assert diff == 9.0 and 7.0 <= low <= diff <= high <= 11.0


def test_rankings_and_d_contribution_on_hand_made_rows():
    rows = [
        {"env": e, "algo": a, "reward": r, "welfare": w}
        for e, a, r, w in [
            ("A", "ippo", "private", 1.0), ("A", "mappo", "private", 2.0), ("B", "ippo", "private", 5.0),
            ("B", "mappo", "private", 5.0), ("A", "ippo", "integrated", 4.0), ("A", "mappo", "integrated", 3.0),
        ]
    ]  # fmt: skip
    ranks = algorithm_ranks(rows)
    assert ranks["private"] == {"ippo": (2 + 1.5) / 2, "mappo": (1 + 1.5) / 2}
    assert ranks["integrated"] == {"ippo": 1.0, "mappo": 2.0}
    contributions = d_contribution(rows)
    assert contributions[("A", "ippo")][0] == 3.0 and contributions[("A", "mappo")][0] == 1.0
    assert ("B", "ippo") not in contributions


@pytest.mark.slow
def test_ray_executor_gives_the_same_table(tmp_path):
    ray = pytest.importorskip("ray")
    spec = SweepSpec(**{**TINY, "rewards": ("private",), "seeds": 1})
    local = read_results(run_sweep(spec, tmp_path / "local", progress=False))
    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
    try:
        remote = read_results(run_sweep(spec, tmp_path / "ray", executor="ray", progress=False))
    finally:
        ray.shutdown()
    def comparable(rows):  # NaN != NaN; wall time differs by nature
        return [{k: "nan" if isinstance(v, float) and math.isnan(v) else v for k, v in r.items() if k != "wall_s"} for r in rows]

    assert comparable(remote) == comparable(local)
    np.testing.assert_array_equal([r["welfare"] for r in remote], [r["welfare"] for r in local])


SPLIT_SWEEP = """
import json, sys, jax
from motivegym.cli import main
assert main(sys.argv[1:]) == 0
print(json.dumps({"devices": len(jax.local_devices())}))
"""


def test_runs_split_across_two_host_devices_match_one_device(tmp_path):
    """3 seeds over 2 host devices (one padded run): the same table as one device."""
    import os
    import subprocess
    import sys

    args = ["sweep", "--envs", "PrisonersDilemma-v0", "--rewards", "private", "--seeds", "3", "--steps", "512",
            "--num-envs", "4", "--num-steps", "64", "--eval-episodes", "2", "--no-gap"]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    report = {}
    for devices in ("1", "2"):
        out = tmp_path / devices
        done = subprocess.run([sys.executable, "-c", SPLIT_SWEEP, *args, "--host-devices", devices, "--out", str(out)],
                              env=env, capture_output=True, text=True, timeout=600)  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        report[devices] = json.loads(done.stdout.strip().splitlines()[-1])["devices"]
    assert report == {"1": 1, "2": 2}
    one, two = (sorted(read_results(tmp_path / d / "results.csv"), key=lambda r: r["seed"]) for d in ("1", "2"))
    assert [r["seed"] for r in two] == [0, 1, 2]
    for a, b in zip(one, two):
        assert b["welfare"] == pytest.approx(a["welfare"], rel=1e-4)
        assert b["training_reward"] == pytest.approx(a["training_reward"], rel=1e-4)
