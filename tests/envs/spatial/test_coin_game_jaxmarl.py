"""CoinGameJaxMARL-v0: rule scenarios written from JaxMARL's coin game rules, and (where ``jaxmarl`` imports) whole
episodes side by side with JaxMARL's own env."""

import importlib.util

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import motivegym
from motivegym.baselines.bots import make_bot
from motivegym.envs.spatial.coin_game_jaxmarl import CoinGameJaxMARLState, jaxmarl_payoffs, random_positions

RIGHT, LEFT, UP, DOWN, STAY = range(5)  # JaxMARL's order: up is row +1, down row −1


def state_of(red, blue, red_coin, blue_coin, inner_t=0, outer_t=0):
    return CoinGameJaxMARLState(
        pos=jnp.array([red, blue], jnp.int32), coin_pos=jnp.array([red_coin, blue_coin], jnp.int32),
        inner_t=jnp.int32(inner_t), outer_t=jnp.int32(outer_t),
    )  # fmt: skip


@pytest.fixture(scope="module")
def env_params():
    return motivegym.make_jax("CoinGameJaxMARL-v0")


@pytest.mark.parametrize(
    "actions, expected_pos",
    [((RIGHT, STAY), [[1, 2], [0, 0]]), ((LEFT, STAY), [[1, 0], [0, 0]]), ((UP, STAY), [[2, 1], [0, 0]]),
     ((DOWN, STAY), [[0, 1], [0, 0]]), ((STAY, DOWN), [[1, 1], [2, 0]]), ((STAY, LEFT), [[1, 1], [0, 2]])],
)  # fmt: skip
def test_action_order_and_torus(env_params, actions, expected_pos):
    env, params = env_params
    state = state_of([1, 1], [0, 0], [2, 2], [2, 2])
    new, *_ = env.step(jax.random.PRNGKey(0), state, jnp.array(actions), params)
    np.testing.assert_array_equal(new.pos, expected_pos)


@pytest.mark.parametrize(
    "red, blue, red_coin, blue_coin, expected",
    [
        ([0, 0], [2, 2], [0, 0], [1, 1], [1.0, 0.0]),  # red on its own coin
        ([0, 0], [2, 2], [1, 1], [0, 0], [1.0, -2.0]),  # red takes blue's coin: +1, blue −2
        ([0, 0], [2, 2], [2, 2], [1, 1], [-2.0, 1.0]),  # blue takes red's coin
        ([1, 1], [1, 1], [1, 1], [0, 0], [-1.0, 1.0]),  # both on red's coin: each scores it, red also pays −2
        ([1, 1], [0, 0], [1, 1], [1, 1], [2.0, -2.0]),  # red on both coins (they share a cell): +1 +1, blue −2
        ([0, 0], [2, 2], [1, 1], [1, 2], [0.0, 0.0]),
    ],
)
def test_payoffs(red, blue, red_coin, blue_coin, expected):
    payoffs, _ = jaxmarl_payoffs(jnp.array([red, blue]), jnp.array([red_coin, blue_coin]), jnp.array([[1, 1, -2], [1, 1, -2.0]]))
    np.testing.assert_array_equal(payoffs, expected)


def test_payoff_matrix_rows_are_per_player():
    matrix = jnp.array([[3.0, 5.0, -7.0], [11.0, 13.0, -17.0]])
    payoffs, _ = jaxmarl_payoffs(jnp.array([[0, 0], [1, 1]]), jnp.array([[1, 1], [0, 0]]), matrix)  # each on the other's coin
    np.testing.assert_array_equal(payoffs, [5.0 - 7.0, 13.0 - 17.0])
    payoffs, _ = jaxmarl_payoffs(jnp.array([[0, 0], [1, 1]]), jnp.array([[0, 0], [1, 1]]), matrix)  # each on its own
    np.testing.assert_array_equal(payoffs, [3.0, 11.0])


def test_step_reports_pickups_and_moves_only_picked_coins(env_params):
    env, params = env_params
    state = state_of([0, 0], [2, 2], [0, 1], [1, 1])
    new, _, payoffs, done, info = env.step(jax.random.PRNGKey(1), state, jnp.array([RIGHT, STAY]), params)
    np.testing.assert_array_equal(payoffs, [1.0, 0.0])
    np.testing.assert_array_equal(info["own_coin_picked"], [True, False])
    np.testing.assert_array_equal(info["other_coin_picked"], [False, False])
    np.testing.assert_array_equal(new.coin_pos[1], [1, 1])  # the blue coin stays
    assert not bool(done) and not bool(info["inner_episode_done"])


def test_respawn_is_uniform_over_all_cells_including_players_and_the_other_coin(env_params):
    env, params = env_params
    state = state_of([0, 0], [2, 2], [0, 1], [1, 1])
    step = jax.jit(jax.vmap(lambda key: env.step(key, state, jnp.array([RIGHT, STAY]), params)[0].coin_pos[0]))
    cells = np.asarray(step(jax.random.split(jax.random.PRNGKey(2), 9000)))
    counts = np.bincount(cells[:, 0] * 3 + cells[:, 1], minlength=9)
    assert counts.min() > 850 and counts.max() < 1150  # 1000 expected per cell, sd ≈ 30
    assert counts[0 * 3 + 1] > 0 and counts[2 * 3 + 2] > 0 and counts[1 * 3 + 1] > 0  # red's cell, blue's, the blue coin's


def test_standing_on_a_coin_scores_it_again(env_params):
    env, params = env_params
    state = state_of([1, 1], [0, 0], [1, 1], [2, 2])  # a coin respawned under red
    _, _, payoffs, _, _ = env.step(jax.random.PRNGKey(0), state, jnp.array([STAY, STAY]), params)
    np.testing.assert_array_equal(payoffs, [1.0, 0.0])


def test_inner_boundary_zeroes_the_payoff_and_redraws_positions(env_params):
    env, params = env_params
    state = state_of([0, 0], [2, 2], [0, 1], [1, 1], inner_t=9, outer_t=3)
    key = jax.random.PRNGKey(5)
    new, obs, payoffs, done, info = env.step(key, state, jnp.array([RIGHT, STAY]), params)
    np.testing.assert_array_equal(payoffs, [0.0, 0.0])  # red reached its coin on the 10th step: JaxMARL pays nothing
    assert bool(info["inner_episode_done"]) and bool(info["own_coin_picked"][0]) and not bool(done)
    assert int(new.inner_t) == 0 and int(new.outer_t) == 4
    redraw_key = jax.random.split(jax.random.split(key)[0])[0]
    cells = random_positions(redraw_key)
    np.testing.assert_array_equal(new.pos, cells[:2])
    np.testing.assert_array_equal(new.coin_pos, cells[2:])
    np.testing.assert_array_equal(obs, env.observe(new, params))


def test_episode_is_inner_times_outer_steps_and_only_the_last_boundary_is_done():
    env, params = motivegym.make_jax("CoinGameJaxMARL-v0", num_inner_steps=3, num_outer_steps=2)
    assert env.max_episode_steps(params) == 6
    state, _ = env.reset(jax.random.PRNGKey(0), params)
    flags = []
    for t in range(6):
        state, _, _, done, info = env.step(jax.random.PRNGKey(t), state, jnp.array([STAY, STAY]), params)
        flags.append((bool(info["inner_episode_done"]), bool(done), bool(info["truncated"])))
    assert flags == [(False, False, False), (False, False, False), (True, False, False),
                     (False, False, False), (False, False, False), (True, True, True)]  # fmt: skip


def test_reset_draws_four_independent_cells():
    env, params = motivegym.make_jax("CoinGameJaxMARL-v0")
    states = jax.vmap(lambda key: env.reset(key, params)[0])(jax.random.split(jax.random.PRNGKey(0), 2000))
    same_red_blue = np.mean(np.all(np.asarray(states.pos[:, 0] == states.pos[:, 1]), axis=-1))
    coin_under_red = np.mean(np.all(np.asarray(states.pos[:, 0] == states.coin_pos[:, 0]), axis=-1))
    assert 0.07 < same_red_blue < 0.16 and 0.07 < coin_under_red < 0.16  # 1/9 each


def test_observation_layout_each_player_sees_itself_as_red(env_params):
    env, params = env_params
    state = state_of([0, 1], [2, 0], [1, 2], [0, 0])
    obs = np.asarray(env.observe(state, params)).reshape(2, 3, 3, 4)  # (row, column, channel)
    for player, (me, other, own_coin, other_coin) in enumerate([([0, 1], [2, 0], [1, 2], [0, 0]), ([2, 0], [0, 1], [0, 0], [1, 2])]):
        for channel, cell in enumerate((me, other, own_coin, other_coin)):
            assert obs[player, cell[0], cell[1], channel] == 1.0 and obs[player, :, :, channel].sum() == 1.0


def test_egocentric_observation_centres_the_observer():
    env, params = motivegym.make_jax("CoinGameJaxMARL-v0", egocentric=True)
    state = state_of([0, 0], [2, 2], [0, 1], [1, 1])
    obs = np.asarray(env.observe(state, params)).reshape(2, 3, 3, 4)
    assert obs[0, 1, 1, 0] == 1.0 and obs[0, 0, 0, 1] == 1.0  # blue at (2, 2) is up-left of red on the torus
    assert obs[0, 1, 2, 2] == 1.0 and obs[0, 2, 2, 3] == 1.0
    assert obs[1, 1, 1, 0] == 1.0 and obs[1, 2, 2, 1] == 1.0 and obs[1, 0, 0, 2] == 1.0 and obs[1, 2, 0, 3] == 1.0


def test_bad_params_are_refused():
    with pytest.raises(ValueError, match="num_inner_steps"):
        motivegym.make_jax("CoinGameJaxMARL-v0", num_inner_steps=0)
    with pytest.raises(ValueError, match="payoff_matrix"):
        motivegym.make_jax("CoinGameJaxMARL-v0", payoff_matrix=[[1.0, 1.0], [1.0, 1.0]])


def test_cooperator_bot_never_takes_the_other_coin_when_coins_are_apart():
    env, params = motivegym.make_jax("CoinGameJaxMARL-v0")
    bot = make_bot("CoinGameJaxMARL-v0", "cooperator", env, params)
    policy_state = bot.init(env, params)

    def rollout(key):
        state, obs = env.reset(key, params)

        def body(carry, step_key):
            state, obs = carry
            actions, _ = bot(step_key, obs, policy_state)
            apart = jnp.any(state.coin_pos[0] != state.coin_pos[1])
            state, obs, payoffs, _, info = env.step(step_key, state, actions, params)
            return (state, obs), (jnp.any(info["other_coin_picked"]) & apart, jnp.sum(info["own_coin_picked"]))

        _, (stolen, own) = jax.lax.scan(body, (state, obs), jax.random.split(key, 100))
        return stolen.sum(), own.sum()

    stolen, own = jax.jit(jax.vmap(rollout))(jax.random.split(jax.random.PRNGKey(0), 16))
    assert int(stolen.sum()) == 0 and int(own.min()) > 20


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("jaxmarl") is None, reason="jaxmarl not importable (see tests/adapters/test_jaxmarl.py)")
@pytest.mark.parametrize("egocentric", [False, True])
def test_side_by_side_with_jaxmarl(egocentric):
    """Same keys, start state and random actions: JaxMARL's CoinGame and ours agree on every step of whole episodes."""
    from jaxmarl.environments.coin_game.coin_game import CoinGame as JaxMARLCoinGame

    env, params = motivegym.make_jax("CoinGameJaxMARL-v0", egocentric=egocentric)
    reference = JaxMARLCoinGame(egocentric=egocentric)
    ours_step = jax.jit(lambda key, state, actions: env.step(key, state, actions, params))
    key = jax.random.PRNGKey(7)
    for _episode in range(2):
        key, reset_key = jax.random.split(key)
        ref_obs, ref_state = reference.reset(reset_key)
        state, obs = env.reset(reset_key, params)
        np.testing.assert_array_equal(obs, np.stack([ref_obs["0"], ref_obs["1"]]))
        for t in range(100):
            key, action_key, step_key = jax.random.split(key, 3)
            actions = jax.random.randint(action_key, (2,), 0, 5)
            ref_obs, ref_state, rewards, dones, ref_info = reference.step(step_key, ref_state, {"0": actions[0], "1": actions[1]})
            state, obs, payoffs, done, info = ours_step(step_key, state, actions)
            np.testing.assert_array_equal(payoffs, [rewards["0"], rewards["1"]])
            assert bool(done) == bool(dones["__all__"]) and bool(info["inner_episode_done"]) == bool(ref_info["inner_episode_done"])
            if t < 99:  # at the end JaxMARL auto-resets; our auto-reset is the batching wrapper's
                np.testing.assert_array_equal(state.pos, np.stack([ref_state.red_pos, ref_state.blue_pos]))
                np.testing.assert_array_equal(state.coin_pos, np.stack([ref_state.red_coin_pos, ref_state.blue_coin_pos]))
                assert int(state.inner_t) == int(ref_state.step) and int(state.outer_t) == int(ref_state.outer_t)
                np.testing.assert_array_equal(obs, np.stack([ref_obs["0"], ref_obs["1"]]))
        assert bool(done)


def test_max_steps_caps_the_episode_and_defaults_to_jaxmarls_inner_times_outer():
    env, params = motivegym.make_jax("CoinGameJaxMARL-v0")
    assert int(params.max_steps) == 100 and env.max_episode_steps(params) == 100
    env, params = motivegym.make_jax("CoinGameJaxMARL-v0", num_inner_steps=4, num_outer_steps=3, max_steps=6)
    state, _ = env.reset(jax.random.PRNGKey(0), params)
    dones = []
    for t in range(6):
        state, _, _, done, info = env.step(jax.random.PRNGKey(t), state, jnp.array([4, 4]), params)
        dones.append(bool(done))
    assert dones == [False] * 5 + [True] and bool(info["truncated"])
    with pytest.raises(ValueError, match="max_steps must be in"):
        motivegym.make_jax("CoinGameJaxMARL-v0", max_steps=101)
