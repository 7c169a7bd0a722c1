import csv

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import motivegym
from motivegym.baselines.normalization import normalize, running_stats
from motivegym.baselines.ppo import MultiAgentPPO, PPOConfig
from motivegym.cli import main
from motivegym.experiments.intrinsic import (
    achievement_labels,
    achievement_shape,
    evaluate_runner,
    mean_ci95,
    p_text,
    parse_layers,
    run_experiment,
    seed_groups,
)

pytestmark = pytest.mark.slow  # trains PPO per layer: end-to-end


def test_mean_ci95_is_the_student_t_interval():
    mean, low, high = mean_ci95(np.array([1.0, 2.0, 3.0]))
    assert mean == 2.0
    np.testing.assert_allclose(high - mean, 4.302653 * 1.0 / np.sqrt(3), rtol=1e-6)  # t_{0.975, 2}
    np.testing.assert_allclose(mean - low, high - mean)
    mean, low, high = mean_ci95(np.array([5.0]))
    assert mean == 5.0 and np.isnan(low) and np.isnan(high)  # one seed says nothing about the spread


def test_seed_groups_cut_runs_of_consecutive_seeds():
    assert seed_groups(list(range(10)), 5) == [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]]
    assert seed_groups([0, 1, 2, 3, 4], 2) == [[0, 1], [2, 3], [4]]
    assert seed_groups([2, 3, 7, 8, 9], None) == [[2, 3], [7, 8, 9]]  # a part's name a-b always means a..b
    assert seed_groups([], 5) == []
    with pytest.raises(ValueError, match="must be positive"):
        seed_groups([0], 0)


def test_layer_list_is_validated():
    assert parse_layers("none, count,rnd:0.1") == ["none", "count", "rnd:0.1"]
    with pytest.raises(ValueError, match="not an intrinsic layer"):
        parse_layers("none,private")
    with pytest.raises(ValueError, match="did you mean 'novelty'"):
        parse_layers("novelti")
    with pytest.raises(ValueError, match="twice"):
        parse_layers("count,count")
    assert main(["intrinsic", "--env", "TrustDilemma-v0", "--layers", "rnd,bogus", "--out", "/tmp/unused"]) == 2


def test_tiny_run_writes_tables_and_plot(tmp_path):
    result = run_experiment(
        "TrustDilemma-v0", ["none", "count"], seeds=2, steps=96, out=tmp_path, num_envs=2, num_steps=24,
        eval_episodes=2, max_steps=20,
    )  # fmt: skip
    runs = list(csv.DictReader(open(tmp_path / "runs.csv")))
    assert [(r["layer"], r["seed"]) for r in runs] == [("none", "0"), ("none", "1"), ("count", "0"), ("count", "1")]
    assert runs[0]["bonus_per_step"] == "" and 0 < float(runs[2]["bonus_per_step"]) <= 1.0  # count bonus is 1/√n
    summary = {(r["layer"], r["metric"]): r for r in csv.DictReader(open(tmp_path / "summary.csv"))}
    welfare = summary[("count", "eval_welfare")]
    assert float(welfare["ci95_low"]) <= float(welfare["mean"]) <= float(welfare["ci95_high"])
    assert "achievements_unlocked" not in {m for _, m in summary}  # TrustDilemma reports no achievements
    curves = list(csv.DictReader(open(tmp_path / "curves.csv")))
    assert len(curves) == 2 * 2 * 2  # layers × seeds × updates (one chunk per update here)
    assert (tmp_path / "intrinsic.png").stat().st_size > 1000
    assert len(result["runs"]) == 4


def test_a_stopped_experiment_keeps_its_parts_and_resumes(tmp_path, monkeypatch):
    from motivegym.experiments import intrinsic

    real_train_layer, calls = intrinsic.train_layer, []

    def train_then_stop(*args, **kwargs):
        calls.append(args[4])  # the seed ids of the part
        if len(calls) == 3:
            raise KeyboardInterrupt  # the session ends during the third part
        return real_train_layer(*args, **kwargs)

    monkeypatch.setattr(intrinsic, "train_layer", train_then_stop)
    settings = dict(steps=48, out=tmp_path, num_envs=2, num_steps=24, eval_episodes=2, max_steps=20, seed_group=2, progress=False)
    with pytest.raises(KeyboardInterrupt):
        run_experiment("TrustDilemma-v0", ["none", "count"], seeds=3, **settings)
    assert calls == [[0, 1], [2], [0, 1]]
    runs = list(csv.DictReader(open(tmp_path / "runs.csv")))
    assert [(r["layer"], r["seed"]) for r in runs] == [("none", "0"), ("none", "1"), ("none", "2")]
    assert (tmp_path / "intrinsic.png").exists()
    assert sorted(p.name for p in (tmp_path / "parts").iterdir()) == ["none.seeds0-1.json", "none.seeds2-2.json"]
    tables = run_experiment("TrustDilemma-v0", ["count", "none"], seeds=3, tables_only=True, **settings)
    assert tables["trained"] == [] and [r["layer"] for r in tables["runs"]] == ["none"] * 3  # count has no parts yet
    with pytest.raises(ValueError, match="no parts under"):
        run_experiment("TrustDilemma-v0", ["none"], seeds=3, tables_only=True, **{**settings, "out": tmp_path / "empty"})
    # the rerun trains only the missing parts and writes every layer's rows
    monkeypatch.setattr(intrinsic, "train_layer", real_train_layer)
    result = run_experiment("TrustDilemma-v0", ["none", "count"], seeds=3, **settings)
    assert result["trained"] == [("count", [0, 1]), ("count", [2])]
    timings = list(csv.DictReader(open(tmp_path / "parts.csv")))
    assert [(r["layer"], r["seeds"]) for r in timings] == [("none", "0-1"), ("none", "2-2"), ("count", "0-1"), ("count", "2-2")]
    assert all(float(r["wall_seconds"]) > 0 and r["finished_utc"].endswith("Z") and "CPUs" in r["machine"] for r in timings)
    assert [(r["layer"], r["seed"]) for r in result["runs"]] == [(layer, s) for layer in ("none", "count") for s in range(3)]
    assert [r["layer"] for r in result["comparison"]] == ["none", "count"] and "verdict" in result["comparison"][1]
    assert run_experiment("TrustDilemma-v0", ["none", "count"], seeds=3, **settings)["trained"] == []
    # parts are found by seed, not by group: another --seed-group trains only the seeds no part holds
    assert run_experiment("TrustDilemma-v0", ["none", "count"], seeds=3, **{**settings, "seed_group": 3})["trained"] == []
    # a seed's run does not depend on its group: seed 2 alone equals seed 2 trained beside others
    alone = run_experiment("TrustDilemma-v0", ["none"], seeds=3, **{**settings, "out": tmp_path / "one", "seed_group": 3})
    assert alone["runs"][2]["eval_welfare"] == pytest.approx(result["runs"][2]["eval_welfare"], rel=1e-4)
    with pytest.raises(ValueError, match=r"other settings \(coef: 0.05 there, 0.1 now\)"):
        run_experiment("TrustDilemma-v0", ["none"], seeds=3, coef=0.1, **settings)


def test_llm_derived_bonus_entries_are_labelled_and_pin_their_file(tmp_path):
    code = tmp_path / "progress.py"
    code.write_text("def progress(obs, info):\n    return jnp.clip(obs[:, 0], 0.0, 1.0)\n")
    entries = parse_layers(f"none, llm_progress=progress:{code}")
    assert entries == ["none", f"llm_progress=progress:{code}"]
    with pytest.raises(ValueError, match="does not exist"):
        parse_layers(f"none,llm_progress=progress:{tmp_path / 'missing.py'}")
    with pytest.raises(ValueError, match="twice"):
        parse_layers(f"count,count=progress:{code}")
    with pytest.raises(ValueError, match="not an intrinsic layer"):
        parse_layers("mine=private")
    settings = dict(steps=48, out=tmp_path / "run", num_envs=2, num_steps=24, eval_episodes=2, max_steps=20, progress=False)
    result = run_experiment("TrustDilemma-v0", entries, seeds=2, **settings)
    assert [(r["layer"], r["seed"]) for r in result["runs"]] == [("none", 0), ("none", 1), ("llm_progress", 0), ("llm_progress", 1)]
    assert all(0 < r["bonus_per_step"] <= 1.0 for r in result["runs"][2:])  # 1/√N over progress bins
    assert [r["layer"] for r in result["comparison"]] == ["none", "llm_progress"]
    part = (tmp_path / "run" / "parts" / "llm_progress.seeds0-1.json").read_text()
    assert f'"spec": "progress:{code}"' in part
    assert run_experiment("TrustDilemma-v0", entries, seeds=2, **settings)["trained"] == []
    code.write_text("def progress(obs, info):\n    return jnp.clip(obs[:, 1], 0.0, 1.0)\n")  # the LLM answered again
    with pytest.raises(ValueError, match="'llm_progress' were trained from .* give this entry another label"):
        run_experiment("TrustDilemma-v0", entries, seeds=2, **settings)


def test_achievement_flags_are_ored_over_each_episode():
    base_env, params = motivegym.make_jax("TrustDilemma-v0", max_steps=6)

    class WithAchievements(type(base_env)):
        """TrustDilemma reporting one flag per agent: 'invested above 30 this step'."""

        def step(self, key, state, actions, params):
            state, obs, payoffs, done, info = super().step(key, state, actions, params)
            return state, obs, payoffs, done, {**info, "achievements": actions > 30.0}

    env = WithAchievements()
    assert achievement_shape(env, params) == (2,) and achievement_shape(base_env, params) is None
    algo = MultiAgentPPO(env, params, "private", PPOConfig(num_envs=2, num_steps=6, num_minibatches=1, hidden_sizes=(8,)))
    networks = algo.init_networks(jax.random.PRNGKey(0))
    # a large bias on the first Beta parameter pushes the greedy action of every agent towards the top of its range
    networks["actor"][-1]["b"] = jnp.array([8.0, -8.0])
    runner = {"networks": networks, "obs_stats": running_stats((2, algo.obs_size))}
    result = evaluate_runner(algo, runner, jax.random.PRNGKey(1), 3, "greedy", True)
    assert result["achievements"].shape == (3, 2) and np.asarray(result["achievements"]).all()
    networks["actor"][-1]["b"] = jnp.array([-8.0, 8.0])
    result = evaluate_runner(algo, runner, jax.random.PRNGKey(1), 3, "greedy", True)
    assert not np.asarray(result["achievements"]).any()


def test_evaluation_stops_each_episode_at_its_end_and_plays_its_step_keys():
    """Episodes that end at different steps: the evaluator's sums equal a plain loop over the whole horizon that
    plays step ``t`` of episode ``e`` with ``split(run_key_e, max_steps)[t]`` and counts nothing after the end."""
    base_env, params = motivegym.make_jax("TrustDilemma-v0", max_steps=8)

    class EndsOnLargeInvestment(type(base_env)):
        def step(self, key, state, actions, params):
            state, obs, payoffs, done, info = super().step(key, state, actions, params)
            return state, obs, payoffs, done | (actions.sum() > 60.0), {**info, "achievements": actions > 30.0}

    env = EndsOnLargeInvestment()
    algo = MultiAgentPPO(env, params, "private", PPOConfig(num_envs=2, num_steps=8, num_minibatches=1, hidden_sizes=(8,)))
    runner = {"networks": algo.init_networks(jax.random.PRNGKey(0)), "obs_stats": running_stats((2, algo.obs_size))}
    key, episodes = jax.random.PRNGKey(3), 6
    result = evaluate_runner(algo, runner, key, episodes, "sample", True)
    lengths = []
    for e, episode_key in enumerate(jax.random.split(key, episodes)):
        reset_key, run_key = jax.random.split(episode_key)
        state, obs = env.reset(reset_key, params)
        total, unlocked, alive, length = np.zeros(2), np.zeros(2, bool), True, 0
        for step_key in jax.random.split(run_key, params.max_steps):
            action_key, env_key = jax.random.split(step_key)
            output = algo.policy_output(runner["networks"], normalize(runner["obs_stats"], obs))
            state, obs, payoffs, done, info = env.step(env_key, state, algo.env_action(algo.sample(action_key, output)[0]), params)
            if alive:
                total, unlocked, length = total + np.asarray(payoffs), unlocked | np.asarray(info["achievements"]), length + 1
            alive = alive and not bool(done)
        np.testing.assert_allclose(np.asarray(result["payoff"])[e], total, rtol=1e-5)
        np.testing.assert_array_equal(np.asarray(result["achievements"])[e], unlocked)
        lengths.append(length)
    assert len(set(lengths)) > 1 and min(lengths) < params.max_steps  # the episodes really end at different steps


def test_key_door_runs_report_named_door_achievements(tmp_path, capsys):
    env, params = motivegym.make_jax("KeyDoorGift-v0")
    assert achievement_labels(env, params, (2, 1)) == ["open_own_door_agent0", "open_own_door_agent1"]
    assert achievement_labels(env, params, (3,)) == ["0", "1", "2"]
    code = main(["intrinsic", "--env", "KeyDoorGift-v0", "--env-kwarg", "max_steps=10", "--layers", "none,count", "--seeds", "2",
                 "--steps", "48", "--num-envs", "2", "--num-steps", "24", "--eval-episodes", "2", "--out", str(tmp_path)])  # fmt: skip
    assert code == 0 and "team_crafter_score" in capsys.readouterr().out
    row = list(csv.DictReader(open(tmp_path / "runs.csv")))[0]
    rates = [float(row[f"achievement_open_own_door_agent{i}_rate"]) for i in range(2)]
    assert all(0.0 <= r <= 1.0 for r in rates)
    assert float(row["achievements_unlocked"]) == pytest.approx(sum(rates))  # flags per episode = sum of per-flag rates
    flags = list(csv.DictReader(open(tmp_path / "achievements.csv")))
    assert len(flags) == 2 * 2 * 2 * 2 and set(flags[0]) == {"group", "seed", "episode", "agent", "open_own_door"}  # layers × seeds × episodes × agents
    scores = {(r["group"], r["unit"], r["metric"]) for r in csv.DictReader(open(tmp_path / "crafter_score.csv"))}
    assert ("count", "team", "score") in scores and ("none", "agent_1", "rate_open_own_door") in scores
    comparison = list(csv.DictReader(open(tmp_path / "comparison.csv")))
    assert [r["metric"] for r in comparison] == ["team_crafter_score"] * 2 + ["eval_welfare"] * 2
    assert comparison[1]["verdict"] in ("higher", "lower", "not distinguishable")
    table = (tmp_path / "comparison.md").read_text().splitlines()  # the same rows as Markdown, for the docs
    assert table[0].startswith("| layer | seeds | team_crafter_score (mean [95% CI])") and len(table) == 2 + 2
    assert table[3].startswith("| count | 2 | ")
    assert table[3].rstrip(" |").endswith(f"{comparison[3]['verdict']} (BH p {p_text(float(comparison[3]['p_adjusted']))})")
    assert (tmp_path / "achievements.png").stat().st_size > 1000
    rates = (tmp_path / "achievements.md").read_text().splitlines()  # team success rates with intervals, for the docs
    assert rates[:2] == ["| achievement | none | count |", "|---|---|---|"] and rates[2].startswith("| Crafter score | ")
    assert rates[3].startswith("| open_own_door | ") and rates[3].count("[") == 2 and len(rates) == 4



def test_a_layer_trained_on_rollouts_runs_through_the_experiment_by_name(tmp_path):
    code = main(["intrinsic", "--env", "KeyDoorGift-v0", "--env-kwarg", "max_steps=10", "--layers", "none,rnd@rollout,auto:count/re3", "--seeds", "2",
                 "--steps", "144", "--num-envs", "2", "--num-steps", "24", "--eval-episodes", "2", "--out", str(tmp_path)])  # fmt: skip
    assert code == 0
    assert (tmp_path / "parts" / "rnd_rollout.seeds0-1.json").exists()
    rows = list(csv.DictReader(open(tmp_path / "comparison.csv")))
    assert [r["layer"] for r in rows][:2] == ["none", "rnd@rollout"]
    bonus = [r for r in csv.DictReader(open(tmp_path / "summary.csv")) if r["layer"] == "rnd@rollout" and r["metric"] == "bonus_per_step"]
    assert float(bonus[0]["mean"]) > 0.0
    auto = [r for r in csv.DictReader(open(tmp_path / "runs.csv")) if r["layer"] == "auto:count/re3"]
    shares = [(float(r["arm_share_count"]), float(r["arm_share_re3"])) for r in auto]
    assert len(shares) == 2 and all(c > 0 and r > 0 and c + r == pytest.approx(1.0) for c, r in shares)  # 3 updates: both arms credited once


@pytest.mark.parametrize("run_dir", ["keydoorgift", "crafter"])
def test_the_committed_tables_are_rebuilt_from_the_committed_parts(run_dir, tmp_path):
    """docs/intrinsic/<env>/comparison.md (quoted by docs/intrinsic.md) is what the committed parts give."""
    import json
    from pathlib import Path

    from motivegym.experiments.intrinsic import read_parts, write_outputs

    committed = Path(__file__).resolve().parents[2] / "docs" / "intrinsic" / run_dir
    settings = json.loads(next((committed / "parts").glob("*.json")).read_text())["settings"]
    parts = read_parts(committed, settings)
    layers = list(dict.fromkeys(row["layer"] for row in csv.DictReader(open(committed / "comparison.csv"))))
    env, params = motivegym.make_jax(settings["env"], **settings["env_kwargs"])
    names = env.static_info(params).get("achievement_names") if achievement_shape(env, params) is not None else None
    write_outputs(tmp_path, parts, layers, "rebuilt", names)
    assert (tmp_path / "comparison.md").read_text() == (committed / "comparison.md").read_text()
    assert (tmp_path / "summary.csv").read_text() == (committed / "summary.csv").read_text()
