"""The dilemma-strength generator: deterministic rows, merging writes, the markdown table, and the scripted policies."""

import json
import math

import numpy as np
import pytest

import motivegym
from motivegym.baselines.heuristics import CoinChaser, GridForager, KeyPasser, LandmarkAssignment
from motivegym.baselines.oracles import shared_env
from motivegym.envs import strength
from motivegym.experiments import dilemma_strength as ds
from motivegym.experiments.evaluation import episode_keys, evaluate


def test_regenerating_a_row_reproduces_the_stored_one():
    stored = strength.load_table()["PrisonersDilemma-v0"]
    row = ds.compute_row("PrisonersDilemma-v0", stored["episodes"], stored["seed"])
    assert row == stored


@pytest.mark.slow  # default suite time (CI: keep the default run under ~10 min on 2 cores)
def test_scripted_row_reproduces_the_stored_one():
    stored = strength.load_table()["CoinGame-v0"]
    row = ds.compute_row("CoinGame-v0", stored["episodes"], stored["seed"])
    for name in ("random", "nash", "optimum", "gap"):
        assert row[name] == pytest.approx(stored[name], abs=1e-3), name
    assert row["nash_source"].startswith("estimate: scripted — every agent: any coin")
    assert "own colour only" in row["optimum_source"] and row["estimate"]


def test_stored_numbers_are_evaluation_welfare_on_common_keys():
    """random and oracle:nash through experiments.evaluation.evaluate give the stored numbers (summarize's welfare)."""
    stored = strength.dilemma_strength("TrustDilemma-v0")
    kwargs = dict(reward="private", episodes=stored.episodes, seed=stored.seed, compare_to_oracle=False)
    assert evaluate("TrustDilemma-v0", "random", **kwargs).welfare == pytest.approx(stored.random, abs=1e-3)
    assert evaluate("TrustDilemma-v0", "oracle:nash", **kwargs).welfare == pytest.approx(stored.nash, rel=1e-6)
    assert evaluate("TrustDilemma-v0", "oracle:social_optimum", **kwargs).welfare == pytest.approx(stored.optimum, rel=1e-6)


def test_write_table_merges_and_keeps_registry_order(tmp_path):
    path = tmp_path / "strength.json"
    path.write_text(json.dumps({"CoinGame-v0": {"old": 1}, "TrustDilemma-v0": {"old": 2}, "Retired-v0": {"old": 3}}))
    ds.write_table({"PrisonersDilemma-v0": {"new": 1}, "TrustDilemma-v0": {"new": 2}}, path)
    table = json.loads(path.read_text())
    assert list(table) == ["TrustDilemma-v0", "PrisonersDilemma-v0", "CoinGame-v0", "Retired-v0"]
    assert table["TrustDilemma-v0"] == {"new": 2} and table["CoinGame-v0"] == {"old": 1}


def test_cli_writes_only_the_named_envs(tmp_path):
    path = tmp_path / "strength.json"
    assert ds.main(["--envs", "motivegym/Chicken-v0", "--episodes", "4", "--seed", "3", "--output", str(path)]) == 0
    table = json.loads(path.read_text())
    assert list(table) == ["Chicken-v0"]
    row = strength.dilemma_strength("Chicken-v0", path=path)
    assert (row.episodes, row.seed) == (4, 3)
    assert row.nash == pytest.approx(200.0) and row.optimum == pytest.approx(300.0)  # exact; only random is sampled


def test_gap_of():
    assert ds.gap_of(300.0, 100.0, 225.0) == pytest.approx(200 / 75)  # > 1: nash below random
    assert ds.gap_of(10.0, 10.0, 0.0) == 0.0
    assert ds.gap_of(5.0, 5.0, 7.0) == 0.0  # optimum not above random, but nash reaches it
    assert ds.gap_of(5.0, 4.0, 7.0) is None


def test_symmetric_stage_equilibrium_follows_the_payoff_table():
    for env_id, expected in [
        ("PrisonersDilemma-v0", [(1.0, (1, 1))]),
        ("StagHunt-v0", [(1.0, (1, 1))]),
        ("Chicken-v0", [(0.25, (0, 0)), (0.25, (0, 1)), (0.25, (1, 0)), (0.25, (1, 1))]),
    ]:
        env, params = motivegym.make_jax(env_id)
        source, mixture = ds.symmetric_stage_equilibrium(np.asarray(params.payoff_table), env.action_names)
        assert [(pytest.approx(p), j) for p, j in mixture] == expected, env_id
        assert source.startswith("analytic — ")
    env, params = motivegym.make_jax("StagHunt-v0")
    assert "risk-dominant" in ds.symmetric_stage_equilibrium(np.asarray(params.payoff_table), env.action_names)[0]


def test_markdown_table():
    text = ds.dilemma_strength_table()
    rows = [line for line in text.splitlines() if line.startswith("| ") and not line.startswith("| env")]
    assert [line.split(" | ")[0][2:] for line in rows] == motivegym.list_envs()
    preset = [line.split(" | ")[0][2:] for line in rows if line.rstrip().endswith("| yes |")]
    assert tuple(preset) == strength.dilemma_env_ids()
    harvest = next(line for line in rows if line.startswith("| Harvest-v0"))
    assert "(estimate: scripted)" in harvest and "| — |" in harvest  # estimate marked, no constant policy
    assert "| PrisonersDilemma-v0 | " in text and "(analytic)" in text and "(oracle:nash)" in text


# ----------------------------------------------------------------------------------------------
# scripted policies (motivegym.baselines.heuristics) and the joint-action cycle
# ----------------------------------------------------------------------------------------------


def welfare(env_id, policy, episodes=4):
    env, params = motivegym.make_jax(env_id)
    return ds.welfare_of(shared_env(env), params, policy, episode_keys(0, episodes))


def test_sparse_scripts_reach_the_upper_bounds():
    assert welfare("KeyDoorGift-v0", KeyPasser()) == pytest.approx(8.0)
    assert welfare("CooperativeNavigation-v0", LandmarkAssignment()) == pytest.approx(3.0)


def test_coin_chasers():
    greedy, own = welfare("CoinGame-v0", CoinChaser(False), 8), welfare("CoinGame-v0", CoinChaser(True), 8)
    assert own > greedy + 5  # collecting only your own colour avoids the −2 for the owner
    env, params = motivegym.make_jax("CoinGame-v0")
    per_agent = ds.payoff_means(
        shared_env(env), params, CoinChaser((True, False)), CoinChaser((True, False)).init(env, params), episode_keys(0, 8)
    )
    assert per_agent[1] > per_agent[0]  # the coin-stealer exploits the own-colour agent


@pytest.mark.slow  # default suite time (CI: keep the default run under ~10 min on 2 cores)
def test_grid_forager_roles():
    env, params = motivegym.make_jax("Harvest-v0")
    with pytest.raises(ValueError, match="cleaners need"):
        GridForager(cleaners=1).init(env, params)
    with pytest.raises(ValueError, match="per-agent"):
        GridForager(restraint=(1, 2)).init(env, params)
    state = GridForager(restraint=(0, 1, 2, 3, 4), tag=True).init(env, params)
    assert state["restraint"].tolist() == [0, 1, 2, 3, 4] and bool(state["tag"].all()) and not bool(state["clean"].any())
    cleanup, cleanup_params = motivegym.make_jax("Cleanup-v0", max_steps=200)
    keys = episode_keys(0, 2)
    cleaners = ds.payoff_means(
        shared_env(cleanup), cleanup_params, GridForager(cleaners=2), GridForager(cleaners=2).init(cleanup, cleanup_params), keys
    )
    nobody = ds.payoff_means(
        shared_env(cleanup), cleanup_params, GridForager(), GridForager().init(cleanup, cleanup_params), keys
    )
    assert cleaners[:2].sum() == 0 and cleaners.sum() > nobody.sum()  # cleaners eat nothing, but the orchard regrows


def test_action_cycle_plays_the_table():
    env, params = motivegym.make_jax("PublicGoodsPunishment-v0")
    welfare = ds.cycle_welfare(shared_env(env), params, [[[4] * 4, [0] * 4], [[0] * 4, [0] * 4]], episode_keys(0, 2))
    np.testing.assert_allclose(welfare, [1280.0, 800.0])
    assert not math.isnan(welfare.sum())
