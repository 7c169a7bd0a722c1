"""motivegym.envs.strength: the stored dilemma strength covers every env, is self-consistent, and its analytic
matrix-game numbers are what the envs actually pay (these fail when the data or an env's payoffs change)."""

import dataclasses
import json
import math

import jax
import numpy as np
import pytest

import motivegym
from motivegym.envs import strength
from motivegym.envs.strength import (
    DILEMMA_GAP_THRESHOLD,
    REGENERATE_COMMAND,
    DilemmaStrength,
    dilemma_env_ids,
    dilemma_strength,
    load_table,
    normalized_score,
)

ROW_FIELDS = [f.name for f in dataclasses.fields(DilemmaStrength) if f.name != "env_id"]


def rows():
    return [(env_id, dilemma_strength(env_id)) for env_id in motivegym.list_envs()]


def test_every_registered_env_has_a_complete_finite_row_in_registry_order():
    table = load_table()
    assert list(table) == motivegym.list_envs()  # registry order, nothing extra
    for env_id, row in table.items():
        assert list(row) == ROW_FIELDS, env_id  # exactly the documented schema, in order
    for env_id, row in rows():
        for name in ("random", "nash", "optimum"):
            assert math.isfinite(getattr(row, name)), (env_id, name)
        assert row.nash_source and row.optimum_source and row.notes
        assert isinstance(row.estimate, bool) and row.episodes >= 1 and isinstance(row.seed, int)
        assert (row.best_constant is None) == (row.best_constant_level is None)
        discrete_world = motivegym.get_spec(env_id).env_class.__module__.split(".")[2] in ("spatial", "sparse")
        assert (row.best_constant is None) == discrete_world, env_id  # null exactly for grid and sparse worlds


def test_gap_is_computed_from_the_stored_numbers():
    for env_id, row in rows():
        span = row.optimum - row.random
        if span > 0:
            assert row.gap == pytest.approx((row.optimum - row.nash) / span, abs=2e-6), env_id
        else:
            assert math.isnan(row.gap) or (row.gap == 0 and row.nash >= row.optimum), env_id


def test_optimum_is_at_least_nash_random_and_best_constant():
    for env_id, row in rows():
        assert row.optimum >= row.nash - 1e-9, env_id
        assert row.optimum >= row.random - 1e-9, env_id
        if row.best_constant is not None:
            assert row.optimum >= row.best_constant - 1e-6 * abs(row.optimum), env_id
        assert row.estimate == (row.nash_source.startswith("estimate") or row.optimum_source.startswith("estimate")), env_id


def test_threshold_separates_the_data_with_a_margin():
    """The docstring's justification: no stored gap within a factor 1.5 of the threshold."""
    gaps = np.array([row.gap for _, row in rows()])
    gaps = gaps[np.isfinite(gaps)]
    assert not np.any((gaps > DILEMMA_GAP_THRESHOLD / 1.5) & (gaps < DILEMMA_GAP_THRESHOLD * 1.5)), sorted(gaps)
    near_optimal = [e for e, r in rows() if motivegym.get_spec(e).family == "coopetition" and r.gap < DILEMMA_GAP_THRESHOLD]
    assert len(near_optimal) == 16
    for env_id in near_optimal:  # their Nash welfare is within 0.35% of the optimum
        row = dilemma_strength(env_id)
        assert row.optimum - row.nash <= 0.0035 * row.optimum, env_id


def test_dilemma_env_ids():
    ids = dilemma_env_ids()
    assert "PrisonersDilemma-v0" in ids and "PublicGoods-v0" in ids
    assert "TrustDilemma-v0" not in ids  # its Nash welfare is within 0.01% of the optimum
    assert list(ids) == [e for e in motivegym.list_envs() if e in ids]  # registry order
    assert all(dilemma_strength(e).gap >= DILEMMA_GAP_THRESHOLD and dilemma_strength(e).is_dilemma for e in ids)
    assert dilemma_env_ids(threshold=-np.inf) == tuple(
        e for e in motivegym.list_envs() if not math.isnan(dilemma_strength(e).gap)
    )


def test_loader_accepts_gymnasium_ids_and_errors_clearly(tmp_path):
    assert dilemma_strength("motivegym/PrisonersDilemma-v0") == dilemma_strength("PrisonersDilemma-v0")
    assert dilemma_strength("PrisonersDilemma-v0").env_id == "PrisonersDilemma-v0"
    with pytest.raises(ValueError, match="unknown environment"):
        dilemma_strength("NoSuchGame-v0")
    partial = tmp_path / "partial.json"
    partial.write_text(json.dumps({"TrustDilemma-v0": load_table()["TrustDilemma-v0"]}))
    with pytest.raises(ValueError, match=f"{REGENERATE_COMMAND} --envs PrisonersDilemma-v0"):
        dilemma_strength("PrisonersDilemma-v0", path=partial)
    assert dilemma_env_ids(path=partial) == ()  # envs without data are skipped
    with pytest.raises(ValueError, match=REGENERATE_COMMAND):
        dilemma_strength("PrisonersDilemma-v0", path=tmp_path / "missing.json")
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps({"PrisonersDilemma-v0": {"random": 1.0}}))
    with pytest.raises(ValueError, match="lacks"):
        dilemma_strength("PrisonersDilemma-v0", path=broken)
    assert strength.DATA_PATH.parent.name == "envs"  # shipped inside the package, next to the registry


def test_normalized_score(tmp_path):
    row = dilemma_strength("PrisonersDilemma-v0")
    assert normalized_score("PrisonersDilemma-v0", row.random) == pytest.approx(0.0)
    assert normalized_score("motivegym/PrisonersDilemma-v0", row.optimum) == pytest.approx(1.0)
    scores = normalized_score("PrisonersDilemma-v0", np.array([row.random, row.nash, row.optimum]))
    np.testing.assert_allclose(scores, [0.0, 1.0 - row.gap, 1.0], atol=1e-6)
    flat = tmp_path / "flat.json"
    flat.write_text(json.dumps({"PrisonersDilemma-v0": {**load_table()["PrisonersDilemma-v0"], "optimum": row.random}}))
    assert math.isnan(normalized_score("PrisonersDilemma-v0", 10.0, path=flat))


# ----------------------------------------------------------------------------------------------
# the analytic numbers, recomputed by rolling the named profiles through the env
# ----------------------------------------------------------------------------------------------


def profile_welfare(env_id: str, cycle: list[tuple[int, ...]], seed: int = 0) -> float:
    """Σ_i Σ_t π_i,t of one episode in which the joint action at step t is ``cycle[t % len(cycle)]``."""
    env, params = motivegym.make_jax(env_id)
    step = jax.jit(lambda key, state, actions: env.step(key, state, actions, params))
    key = jax.random.PRNGKey(seed)
    state, _ = env.reset(key, params)
    total = 0.0
    for t in range(env.max_episode_steps(params)):
        key, step_key = jax.random.split(key)
        state, _, payoffs, done, _ = step(step_key, state, np.asarray(cycle[t % len(cycle)], np.int32))
        total += float(np.sum(payoffs))
        if bool(done):
            break
    return total


TWO_BY_TWO = {  # env: (nash profile distribution, optimum joint action)
    "PrisonersDilemma-v0": ({(1, 1): 1.0}, (0, 0)),  # mutual defection; mutual cooperation
    "StagHunt-v0": ({(1, 1): 1.0}, (0, 0)),  # risk-dominant (hare, hare); (stag, stag)
    "Chicken-v0": ({(a, b): 0.25 for a in (0, 1) for b in (0, 1)}, (0, 0)),  # swerve w.p. 1/2; (swerve, swerve)
}


@pytest.mark.parametrize("env_id", sorted(TWO_BY_TWO))
def test_two_by_two_numbers_are_what_the_env_pays(env_id):
    row = dilemma_strength(env_id)
    mixture, optimum = TWO_BY_TWO[env_id]
    welfare = {(a, b): profile_welfare(env_id, [(a, b)]) for a in (0, 1) for b in (0, 1)}
    assert row.nash == pytest.approx(sum(p * welfare[j] for j, p in mixture.items()), abs=1e-3)
    assert row.optimum == pytest.approx(welfare[optimum], abs=1e-3)
    assert row.optimum == pytest.approx(max(welfare.values()), abs=1e-3)
    constants = [welfare[(a, a)] for a in (0, 1)]
    assert row.best_constant == pytest.approx(max(constants), abs=1e-3)
    assert row.best_constant_level == int(np.argmax(constants))
    uniform = np.mean(list(welfare.values()))  # the random policy's expectation, within Monte-Carlo error
    assert row.random == pytest.approx(uniform, rel=0.05)


def test_public_goods_with_punishment_numbers_are_what_the_env_pays():
    row = dilemma_strength("PublicGoodsPunishment-v0")
    zero, full = (0, 0, 0, 0), (4, 4, 4, 4)  # contribution levels 0..4; punishment phase: 0 = do not punish
    assert row.nash == pytest.approx(profile_welfare("PublicGoodsPunishment-v0", [zero, zero]), abs=1e-3)
    assert row.optimum == pytest.approx(profile_welfare("PublicGoodsPunishment-v0", [full, zero]), abs=1e-3)
    constants = [profile_welfare("PublicGoodsPunishment-v0", [(k,) * 4]) for k in range(5)]
    assert row.best_constant == pytest.approx(max(constants), abs=1e-3) and row.best_constant_level == int(np.argmax(constants))
    env, params = motivegym.make_jax("PublicGoodsPunishment-v0")
    n, e, r, rounds = 4, float(params.endowment), float(params.multiplier), int(params.max_steps) // 2  # 2 steps a round
    assert row.nash == pytest.approx(n * e * rounds) and row.optimum == pytest.approx(n * r * e * rounds)


def test_donor_game_numbers_are_what_the_env_pays():
    row = dilemma_strength("DonorGame-v0")
    for seed in (0, 1):  # random pairings do not change the welfare of these profiles
        assert row.nash == pytest.approx(profile_welfare("DonorGame-v0", [(0,) * 6], seed), abs=1e-3)
        assert row.optimum == pytest.approx(profile_welfare("DonorGame-v0", [(1,) * 6], seed), abs=1e-3)
    env, params = motivegym.make_jax("DonorGame-v0")
    assert row.optimum == pytest.approx(6 * float(params.benefit - params.cost) * int(params.max_steps))
    assert row.best_constant == row.optimum and row.best_constant_level == 1


def test_sparse_bounds_follow_from_the_params():
    env, params = motivegym.make_jax("KeyDoorGift-v0")
    assert dilemma_strength("KeyDoorGift-v0").optimum == pytest.approx(
        params.n_agents * float(params.door_payoff + params.collective_payoff)
    )
    env, params = motivegym.make_jax("CooperativeNavigation-v0")
    assert dilemma_strength("CooperativeNavigation-v0").optimum == pytest.approx(params.n_agents * float(params.success_payoff))
    env, params = motivegym.make_jax("CrafterTeam-v0")
    crafter = dilemma_strength("CrafterTeam-v0")
    assert crafter.optimum == env.n_agents(params) * len(env.static_info(params)["achievement_names"]) and crafter.estimate
    for env_id in ("KeyDoorGift-v0", "CooperativeNavigation-v0", "CrafterTeam-v0"):
        row = dilemma_strength(env_id)
        assert row.gap == 0.0 and row.nash == row.optimum and "gap is" in row.notes  # 0 by construction, said so
