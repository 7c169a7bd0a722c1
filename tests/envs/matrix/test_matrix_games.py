import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import motivegym
from motivegym.envs.matrix.donor import donation_payoffs, draw_recipients, image_update
from motivegym.envs.matrix.public_goods import contribution_payoffs, free_riders, punishment_payoffs

KEY = jax.random.PRNGKey(0)


def play(env_id: str, joint_actions: list[list[int]], **overrides):
    """Payoffs [T, n] and the final state of a scripted episode."""
    env, params = motivegym.make_jax(env_id, **overrides)
    state, _ = env.reset(KEY, params)
    step = jax.jit(lambda k, s, a: env.step(k, s, a, params))
    payoffs, dones = [], []
    for t, actions in enumerate(joint_actions):
        state, _, pay, done, _ = step(jax.random.PRNGKey(t + 1), state, jnp.asarray(actions, jnp.int32))
        payoffs.append(np.asarray(pay))
        dones.append(bool(done))
    return np.array(payoffs), dones, state


@pytest.mark.parametrize(
    "env_id, table",
    [
        ("PrisonersDilemma-v0", {(0, 0): (3, 3), (0, 1): (0, 5), (1, 0): (5, 0), (1, 1): (1, 1)}),
        ("StagHunt-v0", {(0, 0): (4, 4), (0, 1): (0, 3), (1, 0): (3, 0), (1, 1): (2, 2)}),
        ("Chicken-v0", {(0, 0): (3, 3), (0, 1): (1, 4), (1, 0): (4, 1), (1, 1): (0, 0)}),
    ],
)
def test_two_player_tables(env_id, table):
    joint = list(table)
    payoffs, _, _ = play(env_id, [list(a) for a in joint])
    np.testing.assert_allclose(payoffs, [table[a] for a in joint])


def test_prisoners_dilemma_orderings_make_it_a_dilemma():
    env, params = motivegym.make_jax("PrisonersDilemma-v0")
    p = np.asarray(params.payoff_table)[..., 0]
    reward, sucker, temptation, punishment = p[0, 0], p[0, 1], p[1, 0], p[1, 1]
    assert temptation > reward > punishment > sucker and 2 * reward > temptation + sucker


def test_memory_one_observation_and_one_shot_variant():
    env, params = motivegym.make_jax("PrisonersDilemma-v0", max_steps=1)
    state, obs = env.reset(KEY, params)
    np.testing.assert_array_equal(np.asarray(obs[0]), [0, 0, 0, 0, 1, 0])  # no history, first round
    state, obs, _, done, info = env.step(KEY, state, jnp.array([0, 1]), params)
    np.testing.assert_array_equal(np.asarray(obs[0]), [1, 0, 0, 1, 0, 1])  # own C, partner D
    np.testing.assert_array_equal(np.asarray(obs[1]), [0, 1, 1, 0, 0, 1])
    assert bool(done) and bool(info["truncated"]) and not bool(info["terminated"])


def test_out_of_range_actions_are_clipped_and_max_steps_truncate():
    payoffs, dones, _ = play("StagHunt-v0", [[7, -3], [1, 1], [0, 0]], max_steps=3)
    np.testing.assert_allclose(payoffs[0], [3, 0])  # (hare, stag)
    assert dones == [False, False, True]


def test_integrated_layer_uses_partner_weight():
    env = gymnasium.make("motivegym/PrisonersDilemma-v0", reward="integrated", partner_weight=0.4, scalarize=None)
    env.reset(seed=0)
    _, reward, *_ , info = env.step(np.array([0, 1]))
    np.testing.assert_allclose(info["payoffs"], [0, 5])
    np.testing.assert_allclose(reward, [0 + 0.4 * 5, 5 + 0.4 * 0])


def test_unknown_and_invalid_parameters_raise():
    with pytest.raises(ValueError, match="did you mean 'rounds'"):
        motivegym.make_jax("PrisonersDilemma-v0", round=3)
    with pytest.raises(ValueError, match="rounds must be >= 1"):
        motivegym.make_jax("DonorGame-v0", rounds=0)
    with pytest.raises(ValueError, match="shape"):
        motivegym.make_jax("Chicken-v0", payoff_table=np.zeros((3, 3, 2)))


def test_public_goods_payoffs_and_free_riding_dominates():
    fractions = jnp.array([1.0, 0.0, 0.5, 0.5])
    payoffs = contribution_payoffs(fractions, jnp.float32(20), jnp.float32(1.6))
    pot_share = 1.6 * (20 + 0 + 10 + 10) / 4
    np.testing.assert_allclose(payoffs, [0 + pot_share, 20 + pot_share, 10 + pot_share, 10 + pot_share])
    # contributing one unit more costs 1 and returns MPCR 0.4 < 1
    more = contribution_payoffs(fractions.at[1].set(0.05), jnp.float32(20), jnp.float32(1.6))
    assert more[1] < payoffs[1]


def test_punishment_targets_below_mean_partners_at_a_cost():
    fractions = jnp.array([1.0, 0.0, 0.75, 0.25])  # mean 0.5: agents 1 and 3 free-ride
    np.testing.assert_array_equal(np.asarray(free_riders(fractions))[0], [False, True, False, True])
    payoffs, faced = punishment_payoffs(jnp.array([True, False, True, False]), fractions, jnp.float32(1), jnp.float32(3))
    np.testing.assert_array_equal(np.asarray(faced), [0, 2, 0, 2])
    np.testing.assert_allclose(payoffs, [-2, -6, -2, -6])


def test_public_goods_alternates_contribution_and_punishment_steps():
    contributions = [4, 0, 4, 4]  # agent 1 free-rides
    punish_all = [1, 1, 1, 1]
    payoffs, dones, state = play("PublicGoodsPunishment-v0", [contributions, punish_all] * 2, max_steps=4)
    np.testing.assert_allclose(payoffs[0], [24.0, 44.0, 24.0, 24.0])  # pot 60 · 1.6 / 4 = 24
    np.testing.assert_allclose(payoffs[1], [-1, -9, -1, -1])  # three punishers fine agent 1
    assert dones == [False, False, False, True] and int(state.round) == 2


def test_public_goods_without_punishment_is_one_step_per_round():
    payoffs, dones, _ = play("PublicGoodsPunishment-v0", [[0, 0, 0], [2, 2, 2]], n_agents=3, punishment=False, max_steps=2)
    np.testing.assert_allclose(payoffs[1], [20 - 10 + 1.6 * (3 * 10) / 3] * 3, rtol=1e-6)  # level 2 of 5 = half of e
    assert dones == [False, True]


@pytest.mark.parametrize(
    ("env_id", "kwargs", "steps"),
    [
        ("PrisonersDilemma-v0", {"rounds": 4}, 4),
        ("DonorGame-v0", {"rounds": 4, "max_steps": 4}, 4),
        ("PublicGoodsPunishment-v0", {"rounds": 3}, 6),
        ("PublicGoodsPunishment-v0", {"rounds": 3, "punishment": False}, 3),
        ("PublicGoodsPunishment-v0", {"rounds": 2, "max_steps": 4}, 4),
        ("PublicGoodsPunishment-v0", {}, 20),
    ],
)
def test_rounds_is_an_alias_of_max_steps_in_env_steps(env_id, kwargs, steps):
    env, params = motivegym.make_jax(env_id, **kwargs)
    assert env.max_episode_steps(params) == int(params.max_steps) == steps
    _, dones, _ = play(env_id, [[0] * env.n_agents(params)] * steps, **kwargs)
    assert dones == [False] * (steps - 1) + [True]


@pytest.mark.parametrize(
    ("env_id", "kwargs"),
    [("PrisonersDilemma-v0", {"rounds": 5, "max_steps": 6}), ("DonorGame-v0", {"max_steps": 3, "rounds": 2}),
     ("PublicGoodsPunishment-v0", {"rounds": 3, "max_steps": 3})],
)
def test_conflicting_rounds_and_max_steps_raise(env_id, kwargs):
    with pytest.raises(ValueError, match="conflicts with max_steps"):
        motivegym.make_jax(env_id, **kwargs)
    with pytest.raises(ValueError, match="conflicts with max_steps"):
        motivegym.parallel_env(env_id, **kwargs)


def test_public_goods_odd_max_steps_ends_after_a_contribution_step():
    payoffs, dones, state = play("PublicGoodsPunishment-v0", [[4, 4, 4, 4], [0] * 4, [4, 4, 4, 4]], max_steps=3)
    assert dones == [False, False, True] and int(state.round) == 1 and int(state.phase) == 1
    np.testing.assert_allclose(payoffs[2], [32.0] * 4)  # everybody contributes e: 80 · 1.6 / 4


def test_donor_pairing_is_a_derangement_with_one_donation_each():
    for seed in range(20):
        recipients = np.asarray(draw_recipients(jax.random.PRNGKey(seed), 6))
        assert sorted(recipients.tolist()) == list(range(6)) and np.all(recipients != np.arange(6))


def test_donor_payoffs_and_image_scoring():
    recipients = jnp.array([1, 2, 0])
    gave = jnp.array([True, False, True])
    np.testing.assert_allclose(donation_payoffs(gave, recipients, jnp.float32(3), jnp.float32(1)), [3 - 1, 3, -1])
    image = image_update(jnp.array([5, -5, 0]), gave, jnp.int32(5))
    np.testing.assert_array_equal(np.asarray(image), [5, -5, 1])


def test_donor_observation_shows_the_recipients_image():
    env, params = motivegym.make_jax("DonorGame-v0", n_agents=4)
    state, _ = env.reset(KEY, params)
    state, obs, _, _, info = env.step(KEY, state, jnp.array([1, 1, 0, 0]), params)
    image = np.asarray(info["image_scores"]) / 5
    recipients = np.asarray(state.recipients)
    np.testing.assert_allclose(np.asarray(obs[:, 0]), image[recipients])
    np.testing.assert_allclose(np.asarray(obs[:, 1]), image)


@pytest.mark.parametrize("env_id", ["PrisonersDilemma-v0", "PublicGoodsPunishment-v0", "DonorGame-v0"])
def test_vmapped_rollouts_are_deterministic(env_id):
    from motivegym.core.batching import random_rollout

    env, params = motivegym.make_jax(env_id)
    run = jax.jit(random_rollout(env, params, 16, 30))
    first, second = run(KEY), run(KEY)
    jax.tree.map(np.testing.assert_array_equal, first, second)
