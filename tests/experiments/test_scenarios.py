"""Scenarios: focal populations among background bots, scored on payoffs with common episode keys."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import motivegym
from motivegym.baselines.policies import Constant, Mixed, TitForTat
from motivegym.cli import main
from motivegym.core.registry import get_spec
from motivegym.experiments.scenarios import get_scenario, run_scenario, scenario_names, scenario_registry
from motivegym.experiments.sweep import expand_envs


def test_every_dilemma_env_has_its_background_roles():
    registry = scenario_registry()
    for env_id in expand_envs(["dilemmas"]):
        roles = {name.split("/")[1] for name in scenario_names(env_id)}
        grid = get_spec(env_id).env_class.__module__.startswith("motivegym.envs.spatial")  # no reciprocator in grid worlds
        assert roles == ({"cooperator", "defector"} if grid else {"cooperator", "reciprocator", "defector"}), env_id
    pd = registry["PrisonersDilemma-v0/defector"]
    assert pd.focal_slots == (0,) and pd.background == "bot:defector"
    assert registry["Harvest-v0/cooperator"].focal_slots == (0, 1, 2)  # a majority of 5


def test_prisoners_dilemma_against_defectors_is_the_closed_form():
    """50 rounds against always-defect: a cooperator earns S=0 a round (welfare 5·50), a defector P=1 (welfare 2·50)."""
    cooperator = run_scenario("PrisonersDilemma-v0/defector", "bot:cooperator", episodes=4)
    defector = run_scenario("PrisonersDilemma-v0/defector", "bot:defector", episodes=4)
    assert cooperator.focal_per_capita.estimate == 0.0 and cooperator.welfare.estimate == 250.0
    assert cooperator.background_per_capita.estimate == 250.0
    assert defector.focal_per_capita.estimate == 50.0 and defector.welfare.estimate == 100.0
    assert defector.best_focal_role == "defector" and defector.normalized_score == pytest.approx(1.0)
    random = run_scenario("PrisonersDilemma-v0/defector", "random", episodes=4)
    assert random.normalized_score == pytest.approx(0.0, abs=1e-12)  # the random reference uses the same keys


def test_reciprocator_background_reacts_to_what_the_focal_agents_did():
    """A tit-for-tat background copies the executed actions (Mixed writes them back), not its own proposal."""
    focal_defects = run_scenario("TeamProduction-v0/reciprocator", "constant:0.0", episodes=2)
    focal_cooperates = run_scenario("TeamProduction-v0/reciprocator", "constant:1.0", episodes=2)
    background_facing_cooperators = run_scenario("TeamProduction-v0/cooperator", "constant:1.0", episodes=2)
    assert focal_defects.background_per_capita.estimate < 0.2 * focal_cooperates.background_per_capita.estimate
    assert focal_cooperates.welfare.estimate == pytest.approx(background_facing_cooperators.welfare.estimate, rel=0.05)


def test_mixed_policy_keeps_each_slot_and_records_executed_actions():
    env, params = motivegym.make_jax("TeamProduction-v0")
    mixed = Mixed(Constant(0.0), TitForTat(relative=True))
    state = Mixed.init_states([True, True, False, False], Constant(0.0).init(env, params), TitForTat(relative=True).init(env, params))
    obs = env.reset(jax.random.PRNGKey(0), params)[1]
    actions, state = mixed(jax.random.PRNGKey(1), obs, state)
    high = np.asarray(env.action_bounds(params)[1])
    np.testing.assert_allclose(np.asarray(actions), [0.0, 0.0, 0.5 * high[2], 0.5 * high[3]], rtol=1e-6)
    np.testing.assert_allclose(np.asarray(state["background_state"]["last_actions"]), np.asarray(actions), rtol=1e-6)
    actions, _ = mixed(jax.random.PRNGKey(2), obs, state)
    # the background's partners (two focal at 0, one background at 0.5) average a rate of 1/6
    np.testing.assert_allclose(np.asarray(actions)[2:], high[2:] * (0.5 / 3), rtol=1e-5)


def test_stacked_focal_seeds_are_one_batch_with_intervals_over_seeds():
    env, params = motivegym.make_jax("PublicGoods-v0")
    levels = jnp.array([0.2, 0.5, 0.8])
    states = jax.vmap(lambda level: {**Constant(0.5).init(env, params), "level": level})(levels)
    result = run_scenario("PublicGoods-v0/defector", Constant(0.5), focal_states=states, episodes=3)
    singles = [run_scenario("PublicGoods-v0/defector", f"constant:{float(x):.1f}", episodes=3) for x in levels]
    assert result.seeds == 3
    means = [s.focal_per_capita.estimate for s in singles]
    assert result.focal_per_capita.estimate == pytest.approx(np.mean(means), rel=1e-5)
    assert result.focal_per_capita.n == 3  # the interval is over the 3 seeds, not over the 9 episodes
    assert result.focal_per_capita.low < np.mean(means) < result.focal_per_capita.high


def test_bad_scenario_inputs_are_refused():
    with pytest.raises(ValueError, match="scenario"):
        get_scenario("PrisonersDilemma-v0/nobody")
    with pytest.raises(ValueError, match="episodes"):
        run_scenario("PrisonersDilemma-v0/defector", "random", episodes=0)
    with pytest.raises(ValueError, match="focal_state"):
        run_scenario("PrisonersDilemma-v0/defector", "random", focal_state={})


def test_scenario_cli_lists_runs_and_writes_a_table(tmp_path, capsys):
    assert main(["scenario", "list", "--env", "StagHunt-v0"]) == 0
    assert capsys.readouterr().out.count("StagHunt-v0/") == 3
    out = tmp_path / "scenarios.csv"
    assert main(["scenario", "run", "StagHunt-v0/defector", "Chicken-v0/cooperator", "--focal", "bot:reciprocator",
                 "--episodes", "2", "--out", str(out)]) == 0  # fmt: skip
    lines = out.read_text().splitlines()
    assert len(lines) == 3 and lines[0].startswith("scenario,env_id,focal,background")
    assert main(["scenario", "run", "StagHunt-v0", "--focal", "titfortat", "--episodes", "2"]) == 2
    assert "continuous" in capsys.readouterr().err


def test_every_env_with_scripted_bots_has_scenarios():
    """The dilemmas preset and the stag-hunt substrates outside it (scripted gap 0) all get ENV/ROLE scenarios."""
    from motivegym.baselines.bots import BOT_TABLE

    for name in BOT_TABLE:
        assert {f"{name}-v0/cooperator", f"{name}-v0/defector"} <= set(scenario_names(f"{name}-v0")), name
    stag = get_scenario("CoopMining-v0/defector")
    assert stag.env_id == "CoopMining-v0" and len(stag.focal_slots) == 3
