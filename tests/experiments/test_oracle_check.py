"""The independent oracle check: exact on an analytic game, finds what the solver's grid misses, docs block writer."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import motivegym
from motivegym.baselines.oracles import ScheduleFamily, canonical_oracle_name, return_table, solve_oracle
from motivegym.baselines.policies import Reciprocal, Schedule
from motivegym.experiments.oracle_check import (
    BEGIN_MARKER,
    DOCS_PAGE,
    END_MARKER,
    CheckSettings,
    Deviation,
    _action_path,
    check_policy,
    docs_section,
    planned_checks,
    replace_block,
)
from motivegym.experiments.reference_table import EnvTable, format_markdown

SMALL = CheckSettings(constant_levels=101, sweeps=2, joint_sweeps=1, random_paths=64, perturbations=64)
HORIZON = 10


def constant_profile(env, params, level):
    high = np.asarray(env.action_bounds(params)[1], np.float32)
    return Schedule(1), Schedule(1).init(env, params, table=(level * high)[None])


@pytest.fixture(scope="module")
def public_goods():
    """Linear public good ψ_i = e − a_i + m·Σa/n (m = 2, n = 5, e = 50): contributing 0 is dominant."""
    return motivegym.make_jax("PublicGoods-v0", max_steps=HORIZON)


def test_nash_of_the_linear_public_good_has_zero_epsilon(public_goods):
    env, params = public_goods
    policy, state = constant_profile(env, params, 0.0)
    result = check_policy(env, params, policy, state, "private", "own", SMALL)
    assert result["oracle_returns"] == pytest.approx([50.0 * HORIZON] * 5, rel=1e-5)
    assert abs(result["epsilon_abs"]) < 1e-3 * 50.0 * HORIZON
    assert result["label"] == "equilibrium"
    assert result["checked_agents"] == [0, 1, 2, 3, 4] and not result["agents_sampled"]


def test_full_contribution_is_the_optimum_but_not_an_equilibrium(public_goods):
    env, params = public_goods
    policy, state = constant_profile(env, params, 1.0)
    own = check_policy(env, params, policy, state, "private", "own", SMALL)
    # each agent keeps e − m·e/n = 50·(1 − 0.4) = 30 per step by contributing nothing
    assert own["epsilon"] == pytest.approx([30.0 * HORIZON] * 5, rel=1e-4)
    assert own["epsilon_rel"] == pytest.approx(30.0 / 100.0, rel=1e-4)
    assert own["deviation"]["description"] == "a/e = 0.000 throughout"
    assert own["label"].startswith("not an equilibrium")
    total = check_policy(env, params, policy, state, "private", "total payoff", SMALL)
    assert total["welfare"]["gap"] == pytest.approx(0.0, abs=1e-3)
    assert total["label"] == "optimum"
    nash_policy, nash_state = constant_profile(env, params, 0.0)
    nash = check_policy(env, params, nash_policy, nash_state, "private", "total payoff", SMALL)
    assert nash["welfare"]["gap"] == pytest.approx(5 * 50.0 * HORIZON, rel=1e-3)  # welfare 5·100 vs 5·50 per step
    assert nash["label"].startswith("not an optimum")


def test_finds_a_time_varying_deviation_that_the_solvers_grid_cannot():
    """Short TrustDilemma: the stationary equilibrium passes the solver's own 101-point constant check, but the
    agent that holds trust at the baseline gains by dropping its action in the last steps (nothing is left to
    protect), a deviation only a schedule can express."""
    env, params = motivegym.make_jax("TrustDilemma-v0", max_steps=HORIZON)
    solved = solve_oracle("equilibrium", env, params, "private")
    assert solved.max_gain <= 1e-3
    result = check_policy(env, params, solved.policy, solved.policy_state, "private", "own", SMALL)
    assert result["epsilon_abs"] > 1.0 and result["epsilon_abs"] > 100 * max(solved.max_gain, 1e-3)
    rates = np.asarray(result["deviation"]["rates"])
    assert rates.max() - rates.min() > 0.05  # time-varying
    assert rates[-1] < rates[0]  # the end-game cut
    assert not result["deviation"]["kind"].startswith("constant")
    # the same deviation, replayed by hand through the oracle's own family: the last-steps cut is what pays
    agent = result["deviation"]["agent"]
    high = np.asarray(env.action_bounds(params)[1])
    table = np.repeat(np.asarray(solved.theta), HORIZON, 0)
    table[:, agent] = rates * high[agent]
    replay = return_table(
        env, params, (), ScheduleFamily(HORIZON), HORIZON, jax.random.PRNGKey(7)[None], jnp.asarray(table)
    )
    gain = float(replay[0, agent]) - float(solved.payoff_returns[agent])
    assert gain == pytest.approx(result["epsilon"][agent], rel=1e-3)


def test_reciprocal_partners_react_to_the_executed_deviation():
    env, params = motivegym.make_jax("ReciprocalDilemma-v0", max_steps=HORIZON)
    high = np.asarray(env.action_bounds(params)[1], np.float32)
    base = Reciprocal(1)
    inner = base.init(env, params, target=0.5 * high, weight=np.ones(2, np.float32))  # rate-matching tit-for-tat
    path = np.linspace(0.1, 0.9, HORIZON)[:, None] * high
    state = {"base": inner, "path": jnp.asarray(path, jnp.float32), "mask": jnp.asarray([True, False])}
    actions = np.asarray(_action_path(env, params, Deviation(base), HORIZON, state, jax.random.PRNGKey(0)))
    np.testing.assert_allclose(actions[:, 0], path[:, 0], rtol=1e-6)
    np.testing.assert_allclose(actions[1:, 1] / high[1], actions[:-1, 0] / high[0], rtol=1e-5)  # copies last rate


def entry(env_id, oracle, layer, reference=True):
    return {
        "env": env_id,
        "oracle": oracle,
        "reference": reference,
        "layer": layer,
        "agents": ["agent_0", "agent_1"],
        "checked_agents": [0, 1],
        "agents_sampled": False,
        "epsilon": [0.0, 12.5],
        "epsilon_abs": 12.5,
        "epsilon_rel": 0.01,
        "solver_max_gain": 0.0,
        "label": "not an equilibrium (ε = 12.5, 1.00%)",
        "deviation": {"agent": 1, "kind": "constant", "description": "a/e = 0.2 throughout"},
    }


def test_docs_writer_replaces_only_the_marked_block():
    check = {"date": "2026-01-01", "wall_seconds": 60.0, "entries": [entry("TrustDilemma-v0", "trust_aware", "private")]}
    block = docs_section(check)
    assert block.startswith(BEGIN_MARKER) and block.endswith(END_MARKER)
    assert "| TrustDilemma-v0 | trust_aware ★ | private | 12.50 | 1.000% |" in block
    assert "agent_1 gains 12.50 (1.00% of its return) with a constant: a/e = 0.2 throughout." in block
    head = "# Title\n\nintro text\n\n"
    tail = "\n\n## Env A\n\n| x | y |\n|---|---|\n| 1 | 2 |\n"
    page = head + BEGIN_MARKER + "\nold content\n" + END_MARKER + tail
    new = replace_block(page, block)
    assert new == head + block + tail
    assert replace_block(new, block) == new  # idempotent
    without = "# Title\n\nintro\n\n## Env A\n\ntable\n"
    inserted = replace_block(without, block)
    assert inserted == "# Title\n\nintro\n\n" + block + "\n\n## Env A\n\ntable\n"
    # the real page: one block, and rewriting it with its own content changes nothing outside it
    page = DOCS_PAGE.read_text()
    assert page.count(BEGIN_MARKER) == 1 and page.count(END_MARKER) == 1
    start, end = page.index(BEGIN_MARKER), page.index(END_MARKER) + len(END_MARKER)
    assert replace_block(page, "NEW") == page[:start] + "NEW" + page[end:]


def test_reference_table_shows_the_check():
    check = {"date": "2026-01-01", "wall_seconds": 60.0, "entries": [entry("TrustDilemma-v0", "trust_aware", "private")]}
    rewards = {"private": 1.0, "integrated": 2.0, "cooperative": 3.0}
    table = EnvTable(
        "TrustDilemma-v0",
        "trust_aware",
        {"best constant": rewards, "oracle:trust_aware": rewards, "oracle:nash": rewards},
        {"private": 0.4, "integrated": 0.4, "cooperative": 0.4},
        {"trust_aware": {"private": 0.0}, "nash": {"private": 0.0}},
    )
    page = format_markdown([table], 8, 0, 60.0, check)
    assert page.count(BEGIN_MARKER) == 1 and "solver's own" in page
    assert "| oracle:trust_aware ★ | 1.0 | 2.0 | 3.0 | 0.00 | 1.000% ✗ |" in page
    assert "| oracle:nash | 1.0 | 2.0 | 3.0 | 0.00 |  |" in page
    assert page.index(END_MARKER) < page.index("## TrustDilemma-v0")
    plain = format_markdown([table], 8, 0, 60.0, None)
    assert BEGIN_MARKER not in plain and "| oracle:nash | 1.0 | 2.0 | 3.0 | 0.00 |\n" in plain


def test_plan_covers_every_reference_oracle_all_seven_on_trustdilemma_and_the_issue_case():
    envs = motivegym.list_envs("coopetition")
    pairs = planned_checks(envs)
    assert {env for env, _ in pairs} == set(envs)
    assert len([p for p in pairs if p[0] == "TrustDilemma-v0"]) == 7
    assert ("RecoveryRace-v0", "reciprocity_equilibrium") in pairs  # named in issue 22
    assert len(pairs) == len(envs) - 1 + 7 + 1 == len(set(pairs))
    for env_id in envs:
        reference = motivegym.get_spec(env_id).reference_oracle
        assert (env_id, canonical_oracle_name(reference)) in pairs
