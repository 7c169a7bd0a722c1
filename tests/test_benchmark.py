"""motivegym.benchmark: a user's algorithm goes through the sweep's evaluation (same table, keys and statistics)."""

import os
import re
from pathlib import Path

import jax
import numpy as np
import pytest

import motivegym.benchmark as benchmark
from motivegym.envs.strength import normalized_score
from motivegym.experiments.scenarios import run_scenario
from motivegym.experiments.sweep import EVAL_SEED, RESULT_COLUMNS

ROOT = Path(__file__).resolve().parents[1]



def test_a_users_algorithm_is_trained_scored_and_resumed(tmp_path, example):
    algorithm = example("new_algorithm").IndependentA2C(num_envs=4, num_steps=8)
    result = benchmark.evaluate(algorithm, suite=["PrisonersDilemma-v0"], seeds=2, rewards=["cooperative"], steps=256,
                                eval_episodes=2, out=tmp_path, progress=False)  # fmt: skip
    assert len(result.rows) == 2 and {r["algo"] for r in result.rows} == {"ia2c"}
    for row in result.rows:
        assert set(RESULT_COLUMNS) <= set(row) and row["status"] == "ok" and row["eval_seed"] == EVAL_SEED
        assert row["normalized_score"] == pytest.approx(float(normalized_score("PrisonersDilemma-v0", row["welfare"])))
    assert ("ia2c", "user", "cooperative") in result.aggregate(reps=100)
    files = sorted((tmp_path / "runs").glob("*.json"))
    stamps = [f.stat().st_mtime_ns for f in files]
    again = benchmark.evaluate(algorithm, suite=["PrisonersDilemma-v0"], seeds=2, rewards=["cooperative"], steps=256,
                               eval_episodes=2, out=tmp_path, progress=False)  # fmt: skip
    assert [f.stat().st_mtime_ns for f in files] == stamps  # nothing retrained
    assert [r["welfare"] for r in again.rows] == [r["welfare"] for r in result.rows]


def test_the_welfare_is_that_of_the_trained_greedy_policy(tmp_path, example):
    """The benchmark's welfare equals a scenario-free rollout of the same trained parameters on the sweep's keys."""
    from motivegym.experiments.evaluation import episode_keys, rollout_batch, summarize
    from motivegym.reward_layers import reward_layer

    module = example("new_algorithm")
    algorithm = module.IndependentA2C(num_envs=4, num_steps=8)
    result = benchmark.evaluate(algorithm, suite=["StagHunt-v0"], seeds=1, rewards=["private"], steps=256,
                                eval_episodes=3, out=tmp_path, progress=False)  # fmt: skip
    rewarded, params = __import__("motivegym").make_rewarded("StagHunt-v0", "private", autoreset=True)
    trained = jax.jit(lambda key: algorithm.train(key, rewarded, params, 256))(jax.random.PRNGKey(0))
    policy = benchmark.JaxPolicy(algorithm.act, "ia2c")
    stats = rollout_batch(rewarded.env, params, (reward_layer("private"),), policy, 50, benchmark.JaxPolicy.state(trained), episode_keys(EVAL_SEED, 3))
    assert result.rows[0]["welfare"] == pytest.approx(summarize(stats)["welfare"], rel=1e-6)


def test_a_jax_policy_plays_scenarios_with_stacked_seeds(example):
    module = example("new_algorithm")
    algorithm = module.IndependentA2C(num_envs=4, num_steps=8)
    rewarded, params = __import__("motivegym").make_rewarded("PrisonersDilemma-v0", "private", autoreset=True)
    seeds = jax.vmap(jax.random.PRNGKey)(np.arange(3, dtype=np.uint32))
    trained = jax.jit(jax.vmap(lambda key: algorithm.train(key, rewarded, params, 128)))(seeds)
    result = run_scenario("PrisonersDilemma-v0/defector", benchmark.JaxPolicy(algorithm.act, "ia2c"),
                          focal_states=benchmark.JaxPolicy.state(trained), episodes=2)  # fmt: skip
    assert result.seeds == 3 and result.focal == "ia2c"
    assert 0.0 <= result.focal_per_capita.estimate <= 50.0  # between always-cooperate (0) and always-defect (50)


def test_objects_that_are_not_algorithms_are_refused(tmp_path, example):
    class NoAct:
        name = "x"

        def train(self, key, env, env_params, total_steps):
            return {}

    with pytest.raises(TypeError, match="act"):
        benchmark.evaluate(NoAct(), suite=["PrisonersDilemma-v0"], out=tmp_path)
    bad_name = example("new_algorithm").IndependentA2C()
    bad_name.name = "a__b"
    with pytest.raises(ValueError, match="name"):
        benchmark.evaluate(bad_name, suite=["PrisonersDilemma-v0"], out=tmp_path)
    with pytest.raises(ValueError, match="positive"):
        benchmark.evaluate(example("new_algorithm").IndependentA2C(), suite=["PrisonersDilemma-v0"], seeds=0, out=tmp_path)


@pytest.mark.slow
def test_the_example_benchmarks_against_ippo_and_learns_the_layers_game(tmp_path, example):
    """PD, 20k steps, 3 seeds: under the cooperative layer IA2C and IPPO reach mutual cooperation (welfare 300 a
    50-round episode), under the private one mutual defection (100) — the reward layer changes what is learned."""
    algorithm = example("new_algorithm").IndependentA2C()
    result = benchmark.evaluate(algorithm, suite=["PrisonersDilemma-v0"], seeds=3, rewards=["private", "cooperative"],
                                steps=20_000, out=tmp_path, baselines=("ippo",), progress=False)  # fmt: skip
    welfare = {}
    for row in result.rows:
        welfare.setdefault((row["algo"], row["reward"]), []).append(row["welfare"])
    assert set(welfare) == {("ia2c", "private"), ("ia2c", "cooperative"), ("ippo", "private"), ("ippo", "cooperative")}
    for algo in ("ia2c", "ippo"):
        assert np.mean(welfare[(algo, "cooperative")]) > 250 > 150 > np.mean(welfare[(algo, "private")])
    assert "ia2c" in result.summary(reps=100) and os.path.exists(tmp_path / "results.csv")


@pytest.mark.parametrize("block", re.findall(r"```python\n(.*?)```", (ROOT / "docs" / "benchmarking.md").read_text(), re.S))
def test_the_examples_in_docs_benchmarking_md_run(block, capsys):
    exec(compile(block, "docs/benchmarking.md", "exec"), {})
    assert "stateless_reinforce" in capsys.readouterr().out


def test_a_fixed_policy_spec_is_a_reference_line_in_the_same_table(tmp_path):
    result = benchmark.evaluate("bot:cooperator", suite=["PrisonersDilemma-v0"], rewards=["private"], eval_episodes=2,
                                out=tmp_path, progress=False)  # fmt: skip
    [row] = result.rows
    assert row["algo"] == "bot:cooperator" and row["sharing"] == "fixed" and row["steps"] == 0
    assert row["welfare"] == 300.0 and row["normalized_score"] == pytest.approx(1.0)  # mutual cooperation, 50 rounds
    assert all(":" not in p.name for p in (tmp_path / "runs").iterdir())
