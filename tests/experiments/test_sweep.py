import csv
import json
import math

import numpy as np
import pytest

from motivegym.cli import main
from motivegym.envs.strength import dilemma_strength
from motivegym.experiments import sweep
from motivegym.experiments.croissant import validate_croissant
from motivegym.experiments.evaluation import evaluate
from motivegym.experiments.sweep import EVAL_SEED, SweepSpec, load_spec_file, pending_groups, read_results, run_name, run_sweep


def test_sweep_writes_one_row_per_run_and_checkpoint(tiny_sweep):
    out, path = tiny_sweep
    rows = read_results(path)
    runs = sorted({(r["reward"], r["seed"]) for r in rows})
    assert runs == [("cooperative", 0), ("cooperative", 1), ("private", 0), ("private", 1)]
    # 2048 steps = 8 updates of 4 × 64: evaluated after 2, 4 and 8 updates (25%, 50%, 100%)
    for reward, seed in runs:
        run_rows = [r for r in rows if (r["reward"], r["seed"]) == (reward, seed)]
        assert [r["steps"] for r in run_rows] == [512, 1024, 2048] and {r["budget"] for r in run_rows} == {2048}
    for row in rows:
        assert row["env"] == "PrisonersDilemma-v0" and row["family"] == "dilemmas" and row["algo"] == "ippo"
        assert row["sharing"] == "shared" and row["status"] == "ok" and row["eval_seed"] == EVAL_SEED
        assert math.isfinite(row["welfare"]) and math.isfinite(row["random_welfare"])
        assert sum(json.loads(row["payoff_returns"])) == pytest.approx(row["welfare"], rel=1e-4)
        assert row["efficiency"] == pytest.approx(row["welfare"] / row["episode_length"], rel=1e-4)
        assert 0.0 <= row["equality"] <= 1.0 and row["peace"] == 2.0
        # scores on payoffs against the env's dilemma-strength constants
        strength = dilemma_strength("PrisonersDilemma-v0")
        expected = (row["welfare"] - strength.random) / (strength.optimum - strength.random)
        assert row["optimum_welfare"] == strength.optimum and row["nash_welfare"] == strength.nash
        assert row["normalized_score"] == pytest.approx(expected, rel=1e-6)
        assert row["gap_to_optimum_percent"] == pytest.approx((row["welfare"] - row["optimum_welfare"]) / row["optimum_welfare"] * 100)
    with open(path, newline="") as handle:
        assert tuple(next(csv.reader(handle))) == sweep.RESULT_COLUMNS
    assert len(list((out / "curves").glob("*.csv"))) == 4


def test_baselines_and_learners_share_the_evaluation_episodes(tiny_sweep):
    """Common random numbers: the sweep's random baseline and its learner evaluation use the same episode keys."""
    import motivegym
    from motivegym.baselines.policies import Random

    _, path = tiny_sweep
    row = read_results(path)[0]
    env, params = motivegym.make_jax("PrisonersDilemma-v0")
    reference = evaluate("PrisonersDilemma-v0", "random", "private", row["eval_episodes"], seed=row["eval_seed"], compare_to_oracle=False)
    assert row["random_welfare"] == pytest.approx(reference.welfare, rel=1e-6)
    # the function that evaluates the learners, given the random policy, reproduces the baseline exactly
    states = jax_tree_stack([Random().init(env, params)] * 2)
    stats = sweep.evaluate_policy_states(env, params, (), Random(), states, row["eval_episodes"])
    welfare = np.asarray(stats.payoff_returns, np.float64).sum(-1).mean(-1)
    np.testing.assert_allclose(welfare, reference.welfare, rtol=1e-6)


def jax_tree_stack(trees):
    import jax

    return jax.tree.map(lambda *xs: np.stack(xs), *trees)


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


def test_rerun_skips_completed_runs(tiny_sweep, monkeypatch, tiny_settings):
    out, _ = tiny_sweep
    before = {p.name: p.stat().st_mtime_ns for p in (out / "runs").glob("*.json")}

    def must_not_train(*args, **kwargs):
        raise AssertionError("a completed run was trained again")

    checkpoints = {p.name: p.stat().st_mtime_ns for p in (out / "checkpoints").glob("*.safetensors")}
    monkeypatch.setattr(sweep, "run_group", must_not_train)
    run_sweep(SweepSpec(**tiny_settings), out, progress=False)
    assert {p.name: p.stat().st_mtime_ns for p in (out / "runs").glob("*.json")} == before
    assert {p.name: p.stat().st_mtime_ns for p in (out / "checkpoints").glob("*.safetensors")} == checkpoints
    assert not list(out.rglob("*.tmp"))


def test_every_trained_run_saves_its_final_policy_and_the_checkpoint_reproduces_its_row(tiny_sweep):
    from motivegym.baselines.checkpoint import load_checkpoint

    out, path = tiny_sweep
    rows = read_results(path)
    final_rows = [r for r in rows if r["steps"] == r["budget"]]
    assert len(list((out / "checkpoints").glob("*.safetensors"))) == len(final_rows) == 4
    assert all(r["checkpoint"] is None for r in rows if r["steps"] != r["budget"])
    for row in final_rows:
        assert row["checkpoint"] == f"checkpoints/{row['run_id']}.safetensors"
        metadata = load_checkpoint(out / row["checkpoint"]).metadata
        assert (metadata["env_id"], metadata["algo"], metadata["sharing"]) == ("PrisonersDilemma-v0", "ippo", "shared")
        assert (metadata["reward"], metadata["seed"], metadata["steps"]) == (row["reward"], row["seed"], row["budget"])
        assert metadata["extra"]["run_name"] == row["run_id"]
    # the saved policy, evaluated on the sweep's evaluation keys, gives the row's welfare
    row = final_rows[0]
    result = evaluate("PrisonersDilemma-v0", f"checkpoint:{out / row['checkpoint']}", row["reward"], row["eval_episodes"],
                      seed=row["eval_seed"], compare_to_oracle=False)  # fmt: skip
    assert result.welfare == pytest.approx(row["welfare"], rel=1e-5)


def test_save_checkpoints_false_writes_none(tmp_path, tiny_settings):
    rows = read_results(run_sweep(SweepSpec(**{**tiny_settings, "rewards": ("private",), "seeds": 1, "save_checkpoints": False}),
                                  tmp_path, progress=False))  # fmt: skip
    assert not (tmp_path / "checkpoints").exists() and all(r["checkpoint"] is None for r in rows)


def test_resume_key_covers_every_setting_that_changes_a_result(tiny_sweep, tiny_settings):
    out, _ = tiny_sweep
    assert pending_groups(SweepSpec(**tiny_settings), out) == {}
    for change in ({"eval_episodes": 8}, {"num_envs": 8}, {"steps": 4096}, {"checkpoints": (0.5, 1.0)}, {"sharing": ("separate",)}):
        pending = pending_groups(SweepSpec(**{**tiny_settings, **change}), out)
        assert sum(len(v) for v in pending.values()) == 4, change
    # reward strings that sanitise to the same file-name text still get different files
    base = SweepSpec(**tiny_settings).run_settings("PrisonersDilemma-v0", "ippo", "shared", "svo:45,0.1", 0)
    other = {**base, "reward": "svo:45:0.1"}
    assert run_name(base) != run_name(other) and run_name(base).split("__")[3] == run_name(other).split("__")[3]


def test_a_corrupt_run_file_is_reported_by_name_and_recomputed(tiny_sweep, tmp_path, capsys, tiny_settings):
    import shutil

    source, _ = tiny_sweep
    out = tmp_path / "copy"
    shutil.copytree(source, out)
    victim = sorted((out / "runs").glob("*.json"))[0]
    victim.write_text(victim.read_text()[:40])  # a run file cut short, as by a kill during a copy
    rows = read_results(run_sweep(SweepSpec(**tiny_settings), out, progress=False))
    assert victim.name in capsys.readouterr().err
    assert (victim.parent / (victim.name + ".corrupt")).exists()
    assert len({r["run_id"] for r in rows}) == 4 and len(rows) == 12
    assert json.loads(victim.read_text())["rows"][0]["status"] == "ok"


@pytest.mark.slow  # a long end-to-end run: .ci/run runs it with -m slow
def test_a_run_that_cannot_be_built_fails_alone_before_compiling(tmp_path):
    """integrated needs interdependence weights, which CooperativeNavigation lacks: its runs fail with the
    reason in the table; the private runs of the same group train."""
    spec = SweepSpec(envs=("CooperativeNavigation-v0",), rewards=("private", "integrated"), seeds=1, steps=256,
                     num_envs=2, num_steps=64, eval_episodes=1, checkpoints=(1.0,))  # fmt: skip
    rows = read_results(run_sweep(spec, tmp_path, progress=False))
    by_reward = {r["reward"]: r for r in rows}
    assert by_reward["private"]["status"] == "ok" and math.isfinite(by_reward["private"]["welfare"])
    failed = by_reward["integrated"]
    assert failed["status"] == "failed" and failed["welfare"] is None
    assert "interdependence_weights" in failed["error"] and "CooperativeNavigation-v0" in failed["error"]
    assert not (tmp_path / "failures").exists()


@pytest.mark.slow
def test_a_crashing_group_is_recorded_and_the_sweep_goes_on(tmp_path, monkeypatch, tiny_settings):
    real = sweep.run_group

    def fail_on_stag_hunt(env_id, *args):
        if env_id == "StagHunt-v0":
            raise RuntimeError("boom")
        return real(env_id, *args)

    monkeypatch.setattr(sweep, "run_group", fail_on_stag_hunt)
    spec = SweepSpec(**{**tiny_settings, "envs": ("StagHunt-v0", "Chicken-v0"), "rewards": ("private",), "seeds": 1})
    rows = read_results(run_sweep(spec, tmp_path, progress=False))
    assert {r["env"] for r in rows} == {"Chicken-v0"}
    failure = json.loads((tmp_path / "failures" / "StagHunt-v0__ippo__shared.json").read_text())
    assert "boom" in failure["error"] and failure["runs"] == [["private", 0]]


def test_team_reward_learners_refuse_several_reward_layers():
    with pytest.raises(ValueError, match="VDN.*team reward.*one and the same signal"):
        SweepSpec(envs=("PrisonersDilemma-v0",), algos=("ippo", "vdn"), rewards=("private", "cooperative"))
    assert SweepSpec(envs=("PrisonersDilemma-v0",), algos=("vdn", "qmix"), rewards=("cooperative",)).algos == ("vdn", "qmix")


@pytest.mark.slow
def test_value_based_learners_and_both_sharing_modes_run_in_a_sweep(tmp_path):
    spec = SweepSpec(envs=("PrisonersDilemma-v0",), algos=("iql", "vdn"), rewards=("private",), seeds=1, steps=1024,
                     num_envs=4, num_steps=64, eval_episodes=2, sharing=("both",), checkpoints=(1.0,))  # fmt: skip
    rows = read_results(run_sweep(spec, tmp_path, progress=False))
    assert sorted((r["algo"], r["sharing"]) for r in rows) == [
        ("iql", "separate"), ("iql", "shared"), ("vdn", "separate"), ("vdn", "shared")
    ]
    assert all(r["status"] == "ok" and math.isfinite(r["welfare"]) for r in rows)


def test_spec_errors_are_clear(tmp_path):
    with pytest.raises(ValueError, match="did you mean 'ippo'"):
        SweepSpec(envs=("TrustDilemma-v0",), algos=("ipo",))
    with pytest.raises(ValueError, match="reward layer"):
        SweepSpec(envs=("TrustDilemma-v0",), rewards=("privat",))
    with pytest.raises(ValueError, match="unknown environment"):
        SweepSpec(envs=("NoSuchEnv-v0",))
    with pytest.raises(ValueError, match="sharing mode"):
        SweepSpec(envs=("TrustDilemma-v0",), sharing=("shard",))
    with pytest.raises(ValueError, match="checkpoints"):
        SweepSpec(envs=("TrustDilemma-v0",), checkpoints=(0.5, 0.25, 1.0))
    with pytest.raises(ValueError, match="checkpoints"):
        SweepSpec(envs=("TrustDilemma-v0",), checkpoints=(0.5,))
    bad = tmp_path / "bad.yaml"
    bad.write_text("envs: TrustDilemma-v0\nsed: 3\n")
    with pytest.raises(ValueError, match="did you mean 'seeds'"):
        load_spec_file(bad)
    good = tmp_path / "good.yaml"
    good.write_text("envs: [TrustDilemma-v0, StagHunt-v0]\nseeds: 3\n")
    assert load_spec_file(good) == {"envs": ["TrustDilemma-v0", "StagHunt-v0"], "seeds": 3}


def test_dilemmas_preset_selects_the_envs_with_a_non_trivial_gap():
    from motivegym.envs.strength import DILEMMA_GAP_THRESHOLD, dilemma_strength

    spec = SweepSpec(envs=("dilemmas", "TrustDilemma-v0"))
    assert "PrisonersDilemma-v0" in spec.envs and spec.envs[-1] == "TrustDilemma-v0"
    assert all(dilemma_strength(e).gap >= DILEMMA_GAP_THRESHOLD for e in spec.envs[:-1])
    assert SweepSpec(envs=("PrisonersDilemma-v0",), sharing=("both",)).sharing == ("shared", "separate")


def test_reference_budget_follows_the_reference_categories():
    spec = SweepSpec(envs=("TrustDilemma-v0", "PlatformEcosystem-v0", "ApacheProject-v0", "GiftExchange-v0"), steps="reference")
    assert [spec.budget(e) for e in spec.envs] == [500_000, 1_000_000, 1_000_000, 1_000_000]
    assert SweepSpec(envs=("TrustDilemma-v0",), steps=4096).budget("TrustDilemma-v0") == 4096
    with pytest.raises(ValueError, match="no reference training budget"):
        SweepSpec(envs=("TrustDilemma-v0", "Harvest-v0"), steps="reference")
    with pytest.raises(ValueError, match="number of env steps or 'reference'"):
        SweepSpec(envs=("TrustDilemma-v0",), steps="refrence")


def test_checkpoints_are_update_counts_of_each_envs_budget():
    spec = SweepSpec(envs=("TrustDilemma-v0",), steps=16 * 128 * 10)
    assert spec.checkpoint_updates("TrustDilemma-v0") == [3, 5, 10]
    assert SweepSpec(envs=("TrustDilemma-v0",), steps=100).checkpoint_updates("TrustDilemma-v0") == [1]


@pytest.mark.slow
def test_sweep_cli_with_a_toml_file_and_flag_overrides(tmp_path):
    config = tmp_path / "sweep.toml"
    config.write_text('envs = "Chicken-v0"\nrewards = ["private"]\nseeds = 1\nsteps = 1024\nnum_envs = 4\nnum_steps = 64\neval_episodes = 2\n')
    out = tmp_path / "out"
    assert main(["sweep", "--config", str(config), "--algos", "mappo", "--checkpoints", "0.5,1", "--out", str(out)]) == 0
    rows = read_results(out / "results.csv")
    assert [(r["env"], r["algo"], r["reward"], r["steps"]) for r in rows] == [("Chicken-v0", "mappo", "private", s) for s in (512, 1024)]


@pytest.mark.slow
def test_ray_executor_gives_the_same_table(tmp_path, tiny_settings):
    ray = pytest.importorskip("ray")
    spec = SweepSpec(**{**tiny_settings, "rewards": ("private",), "seeds": 1})
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
from motivegym.envs.strength import dilemma_strength
assert main(sys.argv[1:]) == 0
print(json.dumps({"devices": len(jax.local_devices())}))
"""


@pytest.mark.slow  # default suite time (CI: keep the default run under ~10 min on 2 cores)
def test_runs_split_across_two_host_devices_match_one_device(tmp_path):
    """3 seeds over 2 host devices (one padded run): the same table as one device."""
    import os
    import subprocess
    import sys

    args = ["sweep", "--envs", "PrisonersDilemma-v0", "--rewards", "private", "--seeds", "3", "--steps", "512",
            "--num-envs", "4", "--num-steps", "64", "--eval-episodes", "2"]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    report = {}
    for devices in ("1", "2"):
        out = tmp_path / devices
        done = subprocess.run([sys.executable, "-c", SPLIT_SWEEP, *args, "--host-devices", devices, "--out", str(out)],
                              env=env, capture_output=True, text=True, timeout=600)  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        report[devices] = json.loads(done.stdout.strip().splitlines()[-1])["devices"]
    assert report == {"1": 1, "2": 2}
    one, two = (sorted(read_results(tmp_path / d / "results.csv"), key=lambda r: (r["seed"], r["steps"])) for d in ("1", "2"))
    assert [r["seed"] for r in two] == [0, 0, 1, 1, 2, 2]
    for a, b in zip(one, two):
        assert b["welfare"] == pytest.approx(a["welfare"], rel=1e-4)
        assert b["training_reward"] == pytest.approx(a["training_reward"], rel=1e-4, nan_ok=True)


def test_evaluating_at_checkpoints_does_not_change_the_trained_run(tiny_sweep, tiny_settings, tmp_path):
    """Training in chunks with evaluations between them gives the same final policy as one uninterrupted run."""
    _, path = tiny_sweep
    chunked = {(r["reward"], r["seed"]): r for r in read_results(path) if r["steps"] == r["budget"]}
    spec = SweepSpec(**{**tiny_settings, "checkpoints": (1.0,)})
    whole = {(r["reward"], r["seed"]): r for r in read_results(run_sweep(spec, tmp_path, progress=False))}
    assert whole.keys() == chunked.keys()
    for key, row in whole.items():
        assert row["welfare"] == pytest.approx(chunked[key]["welfare"], rel=1e-5)
        assert row["training_welfare"] == pytest.approx(chunked[key]["training_welfare"], rel=1e-5, nan_ok=True)
