"""Cross-play of a sweep's reward-layer populations, and checkpoint populations in scenarios."""

import numpy as np
import pytest

from motivegym.cli import main
from motivegym.experiments.crossplay import populations, run_crossplay
from motivegym.experiments.evaluation import evaluate
from motivegym.experiments.scenarios import run_scenario
from motivegym.experiments.sweep import SweepSpec, run_sweep


@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("sweep")
    spec = SweepSpec(envs=("PrisonersDilemma-v0",), rewards=("private", "cooperative"), algos=("ippo",), seeds=2, steps=2048,
                     num_envs=4, num_steps=64, eval_episodes=2, checkpoints=(1.0,))  # fmt: skip
    run_sweep(spec, out, progress=False)
    return out


def test_crossplay_matrix_diagonal_is_each_populations_self_play(sweep_dir, tmp_path):
    [matrix] = run_crossplay(sweep_dir, episodes=3, seed=5, out=tmp_path, progress=False)
    assert matrix.rewards == ["private", "cooperative"] and matrix.seeds == [0, 1] and matrix.focal_slots == (0,)
    assert (tmp_path / "PrisonersDilemma-v0__ippo__shared.csv").exists() and (tmp_path / "PrisonersDilemma-v0__ippo__shared.png").exists()
    by_reward = populations(sweep_dir)[("PrisonersDilemma-v0", "ippo", "shared")]
    for a, reward in enumerate(matrix.rewards):
        self_play = [evaluate("PrisonersDilemma-v0", f"checkpoint:{by_reward[reward][s]}", "private", 3, seed=5,
                              compare_to_oracle=False).welfare for s in matrix.seeds]  # fmt: skip
        assert matrix.welfare[a][a].estimate == pytest.approx(np.mean(self_play), rel=1e-6)
        assert matrix.welfare[a][a].n == 2  # the interval is over seed pairs
    rows = (tmp_path / "PrisonersDilemma-v0__ippo__shared.csv").read_text().splitlines()
    assert len(rows) == 1 + 4


def test_a_checkpoint_directory_is_a_population_of_seeds_in_scenarios(sweep_dir, tmp_path):
    population = tmp_path / "private"
    population.mkdir()
    for path in sorted((sweep_dir / "checkpoints").glob("*__private__*.safetensors")):
        (population / path.name).write_bytes(path.read_bytes())
    result = run_scenario("PrisonersDilemma-v0/reciprocator", f"checkpoint:{population}", episodes=2)
    assert result.seeds == 2 and result.focal_per_capita.n == 2
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="matches no"):
        run_scenario("PrisonersDilemma-v0/reciprocator", f"checkpoint:{tmp_path / 'empty'}", episodes=2)
    pattern = run_scenario("PrisonersDilemma-v0/reciprocator", f"checkpoint:{sweep_dir}/checkpoints/*__private__*", episodes=2)
    assert pattern.focal_per_capita.estimate == result.focal_per_capita.estimate
    with pytest.raises(ValueError, match="differ in reward layer"):
        run_scenario("PrisonersDilemma-v0/reciprocator", f"checkpoint:{sweep_dir}/checkpoints", episodes=2)
    with pytest.raises(ValueError, match="trained on PrisonersDilemma-v0"):
        run_scenario("StagHunt-v0/defector", f"checkpoint:{population}", episodes=2)


def test_crossplay_refuses_sweeps_without_checkpoints(tmp_path, sweep_dir, capsys):
    with pytest.raises(ValueError, match="results.csv not found"):
        run_crossplay(tmp_path, progress=False)
    with pytest.raises(ValueError, match="no group"):
        run_crossplay(sweep_dir, envs=("StagHunt-v0",), progress=False)
    assert main(["crossplay", str(sweep_dir), "--episodes", "0"]) == 2
    assert "episodes" in capsys.readouterr().err


def test_a_scenario_can_have_a_trained_background_population(sweep_dir):
    """A user-defined scenario: the focal bot among a checkpoint (one trained seed) as the background."""
    from motivegym.experiments.scenarios import Scenario

    background = sorted((sweep_dir / "checkpoints").glob("*__private__seed0__*.safetensors"))[0]
    scenario = Scenario("PD among private IPPO", "PrisonersDilemma-v0", f"checkpoint:{background}", (0,), 2, "custom")
    result = run_scenario(scenario, "bot:cooperator", episodes=2)
    checkpoint_self_play = evaluate("PrisonersDilemma-v0", f"checkpoint:{background}", "private", 2, compare_to_oracle=False)
    assert result.background == f"checkpoint:{background}" and result.seeds == 1
    assert 0.0 <= result.focal_per_capita.estimate <= 150.0  # a cooperator earns 0 (S) or 3 (R) a round
    assert np.isfinite(checkpoint_self_play.welfare)
