"""evaluate() / eval_cli(): metrics, Gap%, policy names, seeding, and the reference-table page."""

import jax
import numpy as np
import pytest

import motivegym
from motivegym.baselines.oracles import solve_oracle
from motivegym.experiments import reference_table
from motivegym.experiments.evaluation import EvalResult, eval_cli, evaluate, make_policy, percent_difference, rollout_batch
from motivegym.reward_layers import reward_layer


def test_constant_evaluation_metrics_match_the_env():
    result = evaluate("TrustDilemma-v0", "constant:0.45", reward="integrated", episodes=3, seed=0)
    assert isinstance(result, EvalResult)
    env, params = motivegym.make_jax("TrustDilemma-v0")
    # a = 45 every step (above the baseline 40): trust builds, no termination, payoff per step is closed-form
    per_step = 100 - 45 + 20 * np.log1p(45) + 0.5 * 0.7 * 45
    np.testing.assert_allclose(result.payoff_returns, [100 * per_step] * 2, rtol=1e-4)
    assert result.welfare == pytest.approx(result.payoff_returns.sum(), rel=1e-6)
    assert result.total_return == pytest.approx(result.reward_returns.sum(), rel=1e-6)
    assert result.total_return > result.welfare  # integrated adds trust-weighted partner payoffs
    assert result.cooperation_rate == pytest.approx(0.45, abs=1e-5)
    assert result.episode_length == 100
    assert 0.9 < result.final_trust <= 1.0
    assert result.total_return_std == pytest.approx(0.0, abs=1e-3)
    # social outcomes: symmetric payoffs every step -> equality 1, mean reward time (1+…+100)/100, no tagging
    assert result.efficiency == pytest.approx(result.welfare / 100, rel=1e-5)
    assert result.equality == pytest.approx(1.0, abs=1e-6)
    assert result.sustainability == pytest.approx(50.5, rel=1e-6)
    assert result.peace == 2.0
    private = evaluate(
        "TrustDilemma-v0", "constant:0.45", reward="private", episodes=1, seed=0, compare_to_oracle=False
    )
    np.testing.assert_allclose(private.reward_returns, private.payoff_returns, rtol=1e-6)


def test_return_vs_oracle_is_against_the_reference_oracle_on_the_same_episodes():
    result = evaluate("PartnerHoldUp-v0", "titfortat", reward="integrated", episodes=2, seed=1)
    spec = motivegym.get_spec("PartnerHoldUp-v0")
    assert result.reference_oracle == "equilibrium" and spec.reference_oracle == "Oracle_Equilibrium"
    env, params = motivegym.make_jax("PartnerHoldUp-v0")
    solved = solve_oracle("equilibrium", env, params, "integrated")
    keys = jax.random.split(jax.random.PRNGKey(1), 2)
    stats = rollout_batch(env, params, (reward_layer("integrated"),), solved.policy, 100, solved.policy_state, keys)
    oracle_total = float(np.asarray(stats.reward_returns).sum(-1).mean())
    assert result.oracle_return == pytest.approx(oracle_total, rel=1e-5)
    expected = (result.total_return - oracle_total) / abs(oracle_total) * 100
    assert result.return_vs_oracle_percent == pytest.approx(expected, rel=1e-5, abs=1e-6)
    assert percent_difference(90.0, -100.0) == pytest.approx(190.0)
    oracle_self = evaluate("PartnerHoldUp-v0", "oracle:equilibrium", reward="integrated", episodes=2, seed=1)
    assert oracle_self.return_vs_oracle_percent == pytest.approx(0.0, abs=1e-9)
    assert oracle_self.total_return == pytest.approx(oracle_total, rel=1e-5)


def test_random_policy_is_seeded_and_batched():
    a = evaluate("SLCD-v0", "random", episodes=6, seed=3, compare_to_oracle=False)
    b = evaluate("SLCD-v0", "random", episodes=6, seed=3, compare_to_oracle=False)
    c = evaluate("SLCD-v0", "random", episodes=6, seed=4, compare_to_oracle=False)
    assert a.total_return == b.total_return
    assert a.total_return != c.total_return
    assert a.total_return_std > 0  # episodes differ from one another
    assert 0.35 < a.cooperation_rate < 0.65


def test_env_kwargs_and_names_are_validated():
    short = evaluate("TrustDilemma-v0", "constant:0.5", episodes=1, seed=0, compare_to_oracle=False, max_steps=7)
    assert short.episode_length == 7
    with pytest.raises(ValueError, match="unknown"):
        evaluate("TrustDilemma-v0", "constant:0.5", episodes=1, compare_to_oracle=False, max_stepz=7)
    with pytest.raises(ValueError, match="valid policies"):
        make_policy("greedy")
    with pytest.raises(ValueError, match="level"):
        make_policy("constant:high")
    assert make_policy("oracle:Oracle_TrustAware").name == "oracle:trust_aware"
    assert make_policy("titfortat:relative").relative


def test_eval_cli_prints_a_table(capsys):
    assert eval_cli("TrustDilemma-v0", "constant:0.5", "private", 2, 0) == 0
    out = capsys.readouterr().out
    for text in ("TrustDilemma-v0", "constant:0.50", "agent_0", "welfare", "cooperation rate", "Gap%", "trust_aware"):
        assert text in out
    assert "50.0%" in out
    assert eval_cli("TrustDilemma-v0", "nonsense", "private", 2, 0) == 2
    assert "valid policies" in capsys.readouterr().err


def test_reference_table_page(tmp_path):
    output = tmp_path / "reference_policies.md"
    argv = ["--envs", "PartnerHoldUp-v0", "--episodes", "2", "--output", str(output), "--oracles", "equilibrium,nash"]
    assert reference_table.main(argv) == 0
    text = output.read_text()
    assert "GENERATED FILE" in text.splitlines()[2]
    assert "## PartnerHoldUp-v0" in text
    rows = {line.split("|")[1].strip(): line.split("|") for line in text.splitlines() if line.startswith("| ")}
    for label in ["best constant", "random", "titfortat", "oracle:equilibrium ★", "oracle:nash"]:
        assert label in rows, label
    # columns: private, integrated, cooperative; the best-constant cell is "<return> (<level>)"
    value, level = rows["best constant"][3].split()
    check = evaluate("PartnerHoldUp-v0", f"constant:{level.strip('()')}", "integrated", 2, 0, compare_to_oracle=False)
    assert float(value) == pytest.approx(check.total_return, abs=0.06)
    oracle = evaluate("PartnerHoldUp-v0", "oracle:nash", "private", 2, 0, compare_to_oracle=False)
    assert float(rows["oracle:nash"][2]) == pytest.approx(oracle.total_return, abs=0.06)


def test_social_outcomes_on_a_tagging_grid_world():
    result = evaluate("Harvest-v0", "random", reward="private", episodes=2, seed=0, max_steps=200)
    assert result.efficiency == pytest.approx(result.welfare / result.episode_length, rel=1e-5)
    assert 0.0 < result.equality <= 1.0
    assert 1.0 <= result.sustainability <= 200.0
    assert 0.0 < result.peace < 5.0  # random agents fire the tag beam and some get removed


def test_scores_are_on_payoffs_against_the_dilemma_strength_constants():
    """The normalised score and Gap% use welfare and the env's random/optimum constants, whatever the layer."""
    from motivegym.envs.strength import dilemma_strength

    strength = dilemma_strength("TrustDilemma-v0")
    for reward in ("private", "integrated"):
        result = evaluate("TrustDilemma-v0", "constant:0.4", reward=reward, episodes=1, seed=0, compare_to_oracle=False)
        assert result.normalized_score == pytest.approx((result.welfare - strength.random) / (strength.optimum - strength.random))
        assert result.gap_percent == pytest.approx((result.welfare - strength.optimum) / abs(strength.optimum) * 100)
    # the constants describe the default game only: with other parameters there is no score rather than a wrong one
    changed = evaluate("TrustDilemma-v0", "constant:0.4", episodes=1, compare_to_oracle=False, max_steps=20)
    assert np.isnan(changed.normalized_score) and np.isnan(changed.gap_percent)
