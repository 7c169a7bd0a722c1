import csv

import numpy as np
import pytest

from motivegym.cli import main
from motivegym.experiments.crafter_score import (
    OUT_FILE,
    collect_random,
    rates_from_flags,
    read_flags,
    score_of,
    score_run_dir,
)


def test_score_is_the_geometric_mean_of_one_plus_the_rates():
    assert float(score_of(np.full(22, 100.0))) == pytest.approx(100.0, rel=1e-5)
    assert float(score_of(np.zeros(22))) == pytest.approx(0.0, abs=1e-6)
    rates = np.array([100.0, 0.0])
    assert float(score_of(rates)) == pytest.approx(np.sqrt(101.0) - 1.0, rel=1e-5)  # exp(mean ln(1+s)) − 1


def test_team_counts_an_achievement_when_any_agent_unlocked_it():
    flags = np.zeros((1, 2, 2, 3), bool)  # [seeds, episodes, agents, achievements]
    flags[0, 0, 0, 0] = True  # episode 0: agent 0 has achievement 0
    flags[0, 1, 1, 0] = True  # episode 1: agent 1 has achievement 0
    flags[0, 1, 1, 2] = True
    agents, team = rates_from_flags(flags)
    np.testing.assert_allclose(agents[0], [[50, 0, 0], [50, 0, 50]])
    np.testing.assert_allclose(team[0], [100, 0, 50])
    with pytest.raises(ValueError, match="seeds, episodes"):
        rates_from_flags(flags[0])


def write_flags(path, rows, names=("collect_wood", "eat_cow")):
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["group", "seed", "episode", "agent", *names])
        writer.writerows(rows)


def test_run_dir_with_episode_flags_gives_agent_and_team_rows_with_intervals_over_seeds(tmp_path):
    # seed 0: wood in both episodes for agent 0; seed 1: in one of two; agent 1 eats a cow once per seed
    rows = [
        ["ppo", 0, 0, 0, 1, 0], ["ppo", 0, 0, 1, 0, 1], ["ppo", 0, 1, 0, 1, 0], ["ppo", 0, 1, 1, 0, 0],
        ["ppo", 1, 0, 0, 1, 0], ["ppo", 1, 0, 1, 0, 1], ["ppo", 1, 1, 0, 0, 0], ["ppo", 1, 1, 1, 0, 0],
    ]  # fmt: skip
    write_flags(tmp_path / "achievements.csv", rows)
    result = {(r["unit"], r["metric"]): r for r in score_run_dir(tmp_path)}
    wood = result[("agent_0", "rate_collect_wood")]
    assert wood["mean"] == pytest.approx(75.0) and wood["seeds"] == 2
    assert wood["ci95_low"] == pytest.approx(75.0 - 12.7062 * np.std([100, 50], ddof=1) / np.sqrt(2))  # t_{0.975, 1}
    assert result[("team", "rate_eat_cow")]["mean"] == pytest.approx(50.0)
    team_scores = [float(score_of(np.array([100.0, 50.0]))), float(score_of(np.array([50.0, 50.0])))]
    assert result[("team", "score")]["mean"] == pytest.approx(np.mean(team_scores), rel=1e-5)
    assert (tmp_path / OUT_FILE).exists()


def test_incomplete_flag_tables_and_empty_dirs_raise(tmp_path):
    write_flags(tmp_path / "achievements.csv", [["g", 0, 0, 0, 1, 0], ["g", 0, 0, 1, 0, 0], ["g", 1, 0, 0, 1, 0]])
    with pytest.raises(ValueError, match="every"):
        read_flags(tmp_path / "achievements.csv")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ValueError, match="no achievements.csv"):
        score_run_dir(empty)
    assert main(["crafter-score", str(empty)]) == 2


def test_intrinsic_runs_csv_gives_per_agent_scores(tmp_path, capsys):
    with (tmp_path / "runs.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["layer", "reward", "seed", "achievement_collect_wood_agent0_rate", "achievement_eat_cow_agent0_rate"])
        writer.writerows([["none", "private", 0, 1.0, 0.0], ["none", "private", 1, 0.5, 0.5]])
    assert main(["crafter-score", str(tmp_path)]) == 0
    assert "rate_collect_wood" in capsys.readouterr().out
    rows = {(r["unit"], r["metric"]): r for r in score_run_dir(tmp_path)}
    assert rows[("agent_0", "rate_collect_wood")]["mean"] == pytest.approx(75.0) and ("team", "score") not in rows


def test_random_episodes_end_to_end(tmp_path):
    path = collect_random("CrafterTeam-v0", tmp_path, seeds=2, episodes=3, world_size=12, max_steps=30, n_cows=2)
    flags = read_flags(path)["random"][1]
    assert flags.shape == (2, 3, 2, 17)
    rows = score_run_dir(tmp_path)
    assert {r["unit"] for r in rows} == {"agent_0", "agent_1", "team"}
    assert all(0.0 <= r["mean"] <= 100.0 for r in rows)
