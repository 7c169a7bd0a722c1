"""Schelling diagrams: exact on the matrix games, the condition logic, the role mixing and the CLI."""

import csv

import numpy as np
import pytest

import motivegym
from motivegym.baselines.bots import FixedAction
from motivegym.cli import main
from motivegym.experiments.schelling import NO, UNCLEAR, YES, profile_roles, schelling_diagram, verdict
from motivegym.experiments.statistics import Interval


def test_prisoners_dilemma_diagram_is_the_stage_payoffs_times_rounds():
    rounds = 7
    env, params = motivegym.make_jax("PrisonersDilemma-v0", max_steps=rounds)
    table = np.asarray(params.payoff_table)  # [own action, partner action, player]; 0 = cooperate
    diagram = schelling_diagram("PrisonersDilemma-v0", episodes=3, seed=1, max_steps=rounds)
    expected = {
        ("cooperator", 0): table[0, 1, 0], ("cooperator", 1): table[0, 0, 0],
        ("defector", 0): table[1, 1, 0], ("defector", 1): table[1, 0, 0],
    }  # fmt: skip
    for (role, k), stage in expected.items():
        np.testing.assert_array_equal(diagram.returns[role][k], np.full(3, stage * rounds))
    result = diagram.conditions()
    assert result["mutual cooperation > mutual defection"][0] == YES
    assert result["mutual cooperation > being exploited"][0] == YES
    assert result["greed"] == YES and result["fear"] == YES and result["social dilemma"] == YES


def test_stag_hunt_has_fear_but_no_greed_and_chicken_greed_but_no_fear():
    stag = schelling_diagram("StagHunt-v0", episodes=2).conditions()
    assert stag["greed"] == NO and stag["fear"] == YES and stag["social dilemma"] == YES
    chicken = schelling_diagram("Chicken-v0", episodes=2).conditions()
    assert chicken["greed"] == YES and chicken["fear"] == NO


def test_a_game_where_cooperating_always_pays_is_not_a_dilemma():
    harmony = [[[4.0, 4.0], [3.0, 1.0]], [[1.0, 3.0], [0.0, 0.0]]]  # cooperating is dominant and mutual cooperation best
    result = schelling_diagram("PrisonersDilemma-v0", episodes=2, payoff_table=harmony).conditions()
    assert result["greed"] == NO and result["fear"] == NO and result["social dilemma"] == NO


def test_verdict_uses_the_interval():
    assert verdict(Interval(1.0, 0.5, 1.5, 8)) == YES
    assert verdict(Interval(-1.0, -1.5, -0.5, 8)) == NO
    assert verdict(Interval(0.2, -0.1, 0.5, 8)) == UNCLEAR
    assert verdict(Interval(0.0, 0.0, 0.0, 8)) == NO  # an exact tie: defecting does not pay more
    assert verdict(Interval(0.3, float("nan"), float("nan"), 1)) == YES  # one episode: the estimate decides


def test_profile_roles_rotate_the_cooperators_after_the_focal_slot():
    assert profile_roles(4, 2, 3, False) == (True, True, False, False)
    assert profile_roles(4, 0, 1, True) == (False, True, False, False)
    with pytest.raises(ValueError, match="k must be"):
        profile_roles(3, 3, 0, True)


def test_every_focal_slot_is_averaged_in_a_coopetition_env():
    diagram = schelling_diagram("PublicGoods-v0", episodes=2)
    assert diagram.n_agents == 5 and all(diagram.returns[role].shape == (5, 2) for role in ("cooperator", "defector"))
    result = diagram.conditions()
    assert result["mutual cooperation > mutual defection"][0] == YES and result["social dilemma"] == YES


def test_cli_writes_csv_and_png(tmp_path, capsys):
    assert main(["schelling", "PrisonersDilemma-v0", "--out", str(tmp_path), "--episodes", "2", "--env-kwarg", "max_steps=3"]) == 0
    with open(tmp_path / "schelling_PrisonersDilemma-v0_max_steps-3.csv") as handle:
        rows = list(csv.DictReader(handle))
    assert [(r["k"], r["role"]) for r in rows] == [("0", "cooperator"), ("0", "defector"), ("1", "cooperator"), ("1", "defector")]
    assert float(rows[2]["mean"]) == 9.0 and rows[2]["episodes"] == "2"  # mutual cooperation: 3 × 3 rounds
    assert (tmp_path / "schelling_PrisonersDilemma-v0_max_steps-3.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "social dilemma under these policies: yes" in capsys.readouterr().out
    assert not (tmp_path / "schelling_PrisonersDilemma-v0.csv").exists()  # env kwargs name the files


@pytest.mark.parametrize(
    "argv, message",
    [
        (["schelling", "NoSuchEnv-v0"], "NoSuchEnv"),
        (["schelling", "PrisonersDilemma-v0", "--env-kwarg", "max_stepz=3"], "max_stepz"),
        (["schelling", "CrafterTeam-v0"], "no scripted bots"),
        (["schelling", "PrisonersDilemma-v0", "--episodes", "0"], "episodes must be >= 1"),
    ],
)
def test_cli_refuses_bad_input(tmp_path, capsys, argv, message):
    assert main(argv + ["--out", str(tmp_path)]) == 2
    assert message in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_policies_can_be_passed_explicitly():
    diagram = schelling_diagram("PrisonersDilemma-v0", episodes=1, cooperator=FixedAction(1), defector=FixedAction(0), max_steps=2)
    assert diagram.policies == {"cooperator": "action:1", "defector": "action:0"}
    assert float(diagram.returns["cooperator"][1][0]) == 2.0  # both "cooperators" defect: P = 1 per round


def test_a_graded_defector_given_as_a_policy_spec_names_the_files(tmp_path, capsys):
    """TeamProduction's all-or-nothing pair is no dilemma; a defector playing the selfish (Nash) efforts
    shirks only partly and gains from it, and the spec goes into the title line and the file names."""
    argv = ["schelling", "TeamProduction-v0", "--out", str(tmp_path), "--episodes", "1", "--env-kwarg", "max_steps=4"]
    assert main(argv + ["--defector", "oracle:nash"]) == 0
    out = capsys.readouterr().out
    assert "defector: oracle:nash" in out and "greed (k >= 1.5): yes" in out
    assert (tmp_path / "schelling_TeamProduction-v0_max_steps-4_defector-oracle-nash.csv").exists()
    assert main(argv) == 0
    assert "greed (k >= 1.5): no" in capsys.readouterr().out



def test_an_unknown_policy_spec_is_refused(tmp_path, capsys):
    assert main(["schelling", "PrisonersDilemma-v0", "--out", str(tmp_path), "--defector", "nonsense"]) == 2
    assert "unknown policy 'nonsense'" in capsys.readouterr().err
