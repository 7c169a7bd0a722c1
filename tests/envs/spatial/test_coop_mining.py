"""CoopMining-v0 (Melting Pot coop_mining): rule scenarios on hand-built states, regrowth, seeds, doors."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import motivegym
from motivegym.envs.spatial.coop_mining import EMPTY, GOLD, GOLD_PARTIAL, IRON, MINE, CoopMining
from motivegym.envs.spatial.grid import NOOP, AgentState

N, E, S, W = range(4)
SMALL = (
    "#######",
    "#Paaaa#",
    "#Paaaa#",
    "#Paaaa#",
    "#######",
)


def small_env(**overrides):
    env = CoopMining()
    values = {"layout": SMALL, "n_agents": 3, "view_ahead": 2, "view_behind": 1, "view_side": 1,
              "iron_regrowth_prob": 0.0, "gold_regrowth_prob": 0.0}  # fmt: skip
    return env, env.default_params(**{**values, **overrides})


def placed(env, params, pos, orient, ore=None, cooldown=None):
    """A reset state with agents at ``pos`` facing ``orient`` and ``ore`` = {(row, col): IRON | GOLD}."""
    state, _ = env.reset(jax.random.PRNGKey(0), params)
    grid = np.zeros((5, 7), np.int32)
    for cell, kind in (ore or {}).items():
        grid[cell] = kind
    n = len(pos)
    agents = AgentState(pos=jnp.asarray(pos, jnp.int32), orient=jnp.asarray(orient, jnp.int32), timeout=jnp.zeros(n, jnp.int32))
    cooldown = jnp.zeros(n, jnp.int32) if cooldown is None else jnp.asarray(cooldown, jnp.int32)
    return dataclasses.replace(state, agents=agents, ore=jnp.asarray(grid), cooldown=cooldown)


STEP = jax.jit(CoopMining().step)


def play(env, params, state, *joint_actions):
    """Step through ``joint_actions`` (one jitted step per params); returns the final state, payoffs and infos."""
    payoffs, infos = [], []
    for t, actions in enumerate(joint_actions):
        state, _, payoff, _, info = STEP(jax.random.PRNGKey(t), state, jnp.asarray(actions, jnp.int32), params)
        payoffs.append(np.asarray(payoff))
        infos.append(info)
    return state, np.array(payoffs), infos


# three agents on the west column facing east; agent 2 can also face north
ROW_AGENTS = [[1, 1], [2, 1], [3, 1]]


def test_registered_with_melting_pot_defaults():
    spec = motivegym.get_spec("CoopMining-v0")
    assert spec.family == "dilemmas" and spec.default_reward == "private"
    env, params = motivegym.make_jax("CoopMining-v0")
    assert env.n_agents(params) == 6 and env.num_actions(params) == 8 and int(params.max_steps) == 1000
    assert (float(params.iron_reward), float(params.gold_reward)) == (1.0, 8.0)
    assert (params.gold_miners, params.gold_window, params.mine_cooldown, params.mine_beam_length) == (2, 3, 3, 3)
    assert env.action_names(params)[MINE] == "mine"
    state, obs = env.reset(jax.random.PRNGKey(0), params)
    assert obs.shape == (6, 11 * 11 * 5 + 1) and env.observation_size(params) == obs.shape[1]
    assert env.global_state(state, params).shape == (27 * 27 * 4 + 6 * 7 + 6 + 1,)
    assert int(jnp.sum(state.ore)) == 0  # every ore cell waits at reset, as in Melting Pot
    assert "CoopMining-v0" in motivegym.list_envs()


def test_iron_is_mined_alone_for_one():
    env, params = small_env()
    state = placed(env, params, ROW_AGENTS, [E, E, E], ore={(1, 3): IRON})
    state, payoffs, infos = play(env, params, state, [MINE, NOOP, NOOP])
    np.testing.assert_array_equal(payoffs[0], [1.0, 0.0, 0.0])
    assert int(state.ore[1, 3]) == EMPTY and bool(infos[0]["iron_extracted"][0])


def test_beam_reaches_three_cells_and_stops_at_the_first_ore():
    env, params = small_env()
    far = placed(env, params, ROW_AGENTS, [E, E, E], ore={(1, 5): IRON})  # 4 cells ahead: out of reach
    state, payoffs, infos = play(env, params, far, [MINE, NOOP, NOOP])
    assert payoffs.sum() == 0 and int(state.ore[1, 5]) == IRON and bool(infos[0]["mine_fired"][0])
    shielded = placed(env, params, ROW_AGENTS, [E, E, E], ore={(1, 2): IRON, (1, 3): GOLD})
    state, payoffs, _ = play(env, params, shielded, [MINE, NOOP, NOOP])
    np.testing.assert_array_equal(payoffs[0], [1.0, 0.0, 0.0])
    assert int(state.ore[1, 3]) == GOLD  # the iron absorbed the beam
    walled = placed(env, params, ROW_AGENTS, [W, E, E], ore={(1, 2): IRON})  # facing the wall
    assert play(env, params, walled, [MINE, NOOP, NOOP])[1].sum() == 0


def test_two_agents_hitting_one_iron_pay_only_the_lower_index():
    env, params = small_env()
    state = placed(env, params, [[1, 1], [3, 2], [3, 1]], [E, N, E], ore={(1, 2): IRON})
    _, payoffs, _ = play(env, params, state, [MINE, MINE, NOOP])
    np.testing.assert_array_equal(payoffs[0], [1.0, 0.0, 0.0])


def test_gold_mined_alone_pays_nothing_and_reverts_after_the_window():
    env, params = small_env()
    state = placed(env, params, ROW_AGENTS, [E, E, E], ore={(1, 3): GOLD})
    state, payoffs, infos = play(env, params, state, [MINE, NOOP, NOOP])
    assert payoffs.sum() == 0 and int(state.ore[1, 3]) == GOLD_PARTIAL and bool(infos[0]["gold_hits"][0])
    np.testing.assert_array_equal(state.pending_gold[0], [1, 3])
    state, _, _ = play(env, params, state, [NOOP] * 3)
    assert int(state.ore[1, 3]) == GOLD_PARTIAL  # t + 1
    state, _, _ = play(env, params, state, [NOOP] * 3)
    assert int(state.ore[1, 3]) == GOLD_PARTIAL  # t + 2: the last step a partner may join
    state, _, _ = play(env, params, state, [NOOP] * 3)
    assert int(state.ore[1, 3]) == GOLD  # t + 3: reverted, the miner forgotten
    np.testing.assert_array_equal(state.pending_gold[0], [-1, -1])


@pytest.mark.parametrize("delay, paid", [(0, True), (1, True), (2, True), (3, False)])
def test_gold_pays_eight_to_each_of_two_miners_within_the_window(delay, paid):
    env, params = small_env()
    state = placed(env, params, [[1, 1], [3, 3], [3, 1]], [E, N, E], ore={(1, 3): GOLD})
    steps = [[MINE, NOOP, NOOP]] + [[NOOP] * 3] * (delay - 1) + [[NOOP, MINE, NOOP]] if delay else [[MINE, MINE, NOOP]]
    state, payoffs, infos = play(env, params, state, *steps)
    if paid:
        np.testing.assert_array_equal(payoffs[-1], [8.0, 8.0, 0.0])
        assert payoffs[:-1].sum() == 0 and int(state.ore[1, 3]) == EMPTY
        np.testing.assert_array_equal(infos[-1]["gold_extracted"], [True, True, False])
        np.testing.assert_array_equal(state.pending_gold, -np.ones((3, 2)))
    else:  # agent 0's hit expired: agent 1's hit is a new first hit
        assert payoffs.sum() == 0 and int(state.ore[1, 3]) == GOLD_PARTIAL
        np.testing.assert_array_equal(state.pending_gold[1], [1, 3])
        np.testing.assert_array_equal(state.pending_gold[0], [-1, -1])


def test_a_miner_hitting_its_own_gold_again_does_not_count_twice():
    env, params = small_env(mine_cooldown=1)
    state = placed(env, params, ROW_AGENTS, [E, E, E], ore={(1, 3): GOLD})
    state, payoffs, _ = play(env, params, state, [MINE, NOOP, NOOP], [MINE, NOOP, NOOP])
    assert payoffs.sum() == 0 and int(state.ore[1, 3]) == GOLD_PARTIAL


def test_three_simultaneous_gold_miners_pay_the_first_two():
    env, params = small_env()
    state = placed(env, params, [[1, 1], [3, 3], [1, 5]], [E, N, W], ore={(1, 3): GOLD})
    state, payoffs, _ = play(env, params, state, [MINE, MINE, MINE])
    np.testing.assert_array_equal(payoffs[0], [8.0, 8.0, 0.0])
    assert int(state.ore[1, 3]) == EMPTY


def test_gold_miners_is_configurable():
    env, params = small_env(gold_miners=3)
    state = placed(env, params, [[1, 1], [3, 3], [1, 5]], [E, N, W], ore={(1, 3): GOLD})
    state, payoffs, _ = play(env, params, state, [MINE, MINE, NOOP], [NOOP, NOOP, MINE])
    np.testing.assert_array_equal(payoffs, [[0.0, 0.0, 0.0], [8.0, 8.0, 8.0]])
    env, params = small_env(gold_miners=1)  # gold becomes a solo ore
    state = placed(env, params, ROW_AGENTS, [E, E, E], ore={(1, 3): GOLD})
    np.testing.assert_array_equal(play(env, params, state, [MINE, NOOP, NOOP])[1][0], [8.0, 0.0, 0.0])


def test_mine_beam_cooldown_is_three_steps():
    env, params = small_env()
    state = placed(env, params, ROW_AGENTS, [E, E, E])
    _, _, infos = play(env, params, state, *[[MINE, NOOP, NOOP]] * 7)
    np.testing.assert_array_equal([bool(i["mine_fired"][0]) for i in infos], [True, False, False, True, False, False, True])
    obs = np.asarray(env.observe(placed(env, params, ROW_AGENTS, [E, E, E], cooldown=[3, 1, 0]), params))
    np.testing.assert_array_equal(obs[:, -1], [0.0, 1.0, 1.0])  # READY_TO_SHOOT: can fire next step


def test_ore_regrows_on_empty_cells_not_under_agents_iron_before_gold():
    env, params = small_env(iron_regrowth_prob=1.0, gold_regrowth_prob=1.0)
    state = placed(env, params, [[1, 1], [1, 2], [3, 4]], [E, E, E])
    state, _, _ = play(env, params, state, [NOOP] * 3)
    ore = np.asarray(state.ore)
    assert ore[1, 2] == EMPTY and ore[3, 4] == EMPTY  # under agents
    assert (ore[1:4, 2:6][ore[1:4, 2:6] != EMPTY] == IRON).all() and (ore == IRON).sum() == 10
    env, params = small_env(iron_regrowth_prob=0.0, gold_regrowth_prob=1.0)
    state, _, _ = play(env, params, placed(env, params, ROW_AGENTS, [E, E, E]), [NOOP] * 3)
    assert (np.asarray(state.ore) == GOLD).sum() == 12


def test_regrowth_rate_matches_the_probabilities():
    env, params = small_env(iron_regrowth_prob=0.1, gold_regrowth_prob=0.3)
    state = placed(env, params, ROW_AGENTS, [E, E, E])
    states = jax.jit(jax.vmap(lambda k: env.step(k, state, jnp.zeros(3, jnp.int32), params)[0]))(jax.random.split(jax.random.PRNGKey(0), 2000))
    ore = np.asarray(states.ore)[:, 1:4, 2:6]
    assert abs((ore == IRON).mean() - 0.1) < 0.01
    assert abs((ore == GOLD).mean() - 0.9 * 0.3) < 0.015


def test_observation_shows_ore_kinds_and_other_agents():
    env, params = small_env()
    state = placed(env, params, [[2, 1], [1, 2], [3, 1]], [E, E, E], ore={(2, 2): IRON, (2, 3): GOLD_PARTIAL, (3, 2): GOLD})
    view = np.asarray(env.observe(state, params))[0, :-1].reshape(4, 3, 5)  # rows: 2 ahead .. 1 behind; cols left..right
    assert view[1, 1, 1] == 1 and view[0, 1, 3] == 1  # iron one ahead, partial gold two ahead
    assert view[1, 2, 2] == 1 and view[1, 0, 4] == 1  # gold to the right, agent 1 to the left
    assert view[2, 1].sum() == 0  # its own cell shows no agent
    assert view[3, 1, 0] == 1  # behind it: the wall


def test_params_are_validated():
    env = CoopMining()
    with pytest.raises(ValueError, match="gold_miners"):
        env.default_params(gold_miners=7)
    with pytest.raises(ValueError, match="spawn points"):
        env.default_params(n_agents=19)
    with pytest.raises(ValueError, match="gold_window"):
        env.default_params(gold_window=0)
    with pytest.raises(ValueError, match="iron_regrowth_prob"):
        env.default_params(iron_regrowth_prob=1.5)
    with pytest.raises(ValueError, match="gold_rewrd|gold_reward"):
        env.default_params(gold_rewrd=3.0)


def test_seeds_same_key_same_trajectory_under_jit_and_vmap(seeded_rollouts_repeat):
    env, params = motivegym.make_jax("CoopMining-v0", max_steps=12, iron_regrowth_prob=0.05, gold_regrowth_prob=0.05)
    obs, _, done = seeded_rollouts_repeat(env, params, n_envs=8, steps=12, seed=3, other_seed=4)
    assert done[-1].all() and not done[:-1].any()
    assert obs.min() >= 0.0 and obs.max() <= 1.0


def test_gymnasium_and_pettingzoo_doors_play_the_make_jax_game(assert_doors_agree):
    kwargs = {"max_steps": 6, "iron_regrowth_prob": 0.2, "gold_regrowth_prob": 0.2}
    actions = np.random.default_rng(0).integers(0, 8, (6, 6))
    assert_doors_agree("CoopMining-v0", kwargs, actions, seed=5, reward="private", frame_shape=(27 * 8, 27 * 8, 3))


def test_renders():
    env, params = small_env()
    state = placed(env, params, [[2, 1], [1, 2], [3, 1]], [E, E, E], ore={(2, 2): IRON, (2, 3): GOLD_PARTIAL, (3, 2): GOLD})
    lines = env.render_text(state, params).splitlines()
    assert lines[2] == "# 1...#" and lines[3] == "#0iG..#"
    assert lines[4] == "#2g...#"
    image = env.render_rgb(state, params)
    assert image.shape == (40, 56, 3) and image.dtype == np.uint8


def bot_actions(policy, env, params, state):
    obs = env.observe(state, params)
    actions, _ = policy(jax.random.PRNGKey(0), obs, policy.init(env, params))
    return np.asarray(actions)


def test_cooperator_mines_gold_and_defector_mines_iron():
    from motivegym.baselines.mining_bots import OreMiner

    env, params = small_env()
    gold, iron = OreMiner(gold=True, epsilon=0.0), OreMiner(gold=False, epsilon=0.0)
    state = placed(env, params, [[1, 1], [2, 1], [3, 1]], [E, E, E], ore={(1, 3): GOLD, (2, 2): IRON, (3, 3): GOLD_PARTIAL})
    np.testing.assert_array_equal(bot_actions(gold, env, params, state)[[0, 2]], [MINE, MINE])
    assert bot_actions(gold, env, params, state)[1] != MINE  # iron ahead: the gold miner does not take it
    assert bot_actions(iron, env, params, state)[1] == MINE and bot_actions(iron, env, params, state)[0] != MINE
    waiting = dataclasses.replace(state, cooldown=jnp.array([3, 3, 3], jnp.int32))
    assert bot_actions(gold, env, params, waiting)[0] == NOOP  # beam not ready: it waits facing the gold
    assert "CoopMining" in __import__("motivegym.baselines.bots", fromlist=["BOT_TABLE"]).BOT_TABLE
