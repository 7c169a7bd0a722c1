"""GiftRefinement-v0: rule scenarios on hand-built states, written from Melting Pot's gift_refinements rules
(``GiftBeam:onHit``, ``Inventory``, ``Pickable``, ``FixedRateRegrow``), plus seeds, validation and the doors."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import motivegym
from motivegym.envs.spatial.gift_refinement import CONSUME, GIFT, GiftRefinement, gift_transfers, highest_level_held
from motivegym.envs.spatial.grid import FORWARD, NOOP, AgentState

N, E, S, W = 0, 1, 2, 3
SMALL = (
    "#########",
    "#P T   P#",
    "#TTTT#TP#",
    "#########",
)


def small_env(**overrides):
    env = GiftRefinement()
    values = {"layout": SMALL, "n_agents": 3, "view_ahead": 2, "view_behind": 1, "view_side": 1, "regrow_prob": 0.0}
    return env, env.default_params(**{**values, **overrides})


def placed(env, params, pos, orient, inventory, tokens=(), cooldown=None):
    state, _ = env.reset(jax.random.PRNGKey(0), params)
    grid = np.zeros(env.layout(params).shape, bool)
    for cell in tokens:
        grid[cell] = True
    n = len(pos)
    agents = AgentState(pos=jnp.asarray(pos, jnp.int32), orient=jnp.asarray(orient, jnp.int32), timeout=jnp.zeros(n, jnp.int32))
    cooldown = jnp.zeros(n, jnp.int32) if cooldown is None else jnp.asarray(cooldown, jnp.int32)
    return dataclasses.replace(
        state, agents=agents, tokens=jnp.asarray(grid), inventory=jnp.asarray(inventory, jnp.int32), cooldown=cooldown
    )


JIT_STEP = jax.jit(GiftRefinement().step)  # one compilation per params object


def step(env, params, state, actions, key=1):
    return JIT_STEP(jax.random.PRNGKey(key), state, jnp.asarray(actions), params)


# ----- picking up -----
def test_stepping_onto_a_token_puts_a_raw_token_in_the_inventory():
    env, params = small_env()
    state = placed(env, params, [[1, 2], [1, 7], [2, 7]], [E, W, N], [[0, 0, 0]] * 3, tokens=[(1, 3), (2, 1)])
    state, _, payoffs, _, info = step(env, params, state, [FORWARD, NOOP, NOOP])
    np.testing.assert_array_equal(state.inventory[0], [1, 0, 0])
    np.testing.assert_array_equal(info["tokens_picked"], [1, 0, 0])
    assert not state.tokens[1, 3] and state.tokens[2, 1] and int(info["token_count"]) == 1
    np.testing.assert_array_equal(payoffs, [0.0, 0.0, 0.0])  # picking pays nothing


def test_a_token_picked_into_a_full_level_is_lost():
    env, params = small_env()
    state = placed(env, params, [[1, 2], [1, 7], [2, 7]], [E, W, N], [[15, 0, 0], [0, 0, 0], [0, 0, 0]], tokens=[(1, 3)])
    state, *_ = step(env, params, state, [FORWARD, NOOP, NOOP])
    assert int(state.inventory[0, 0]) == 15 and not state.tokens[1, 3]


# ----- gifts: refine and multiply -----
def test_a_gift_refines_the_token_and_multiplies_it():
    env, params = small_env()
    state = placed(env, params, [[1, 1], [1, 5], [2, 7]], [E, W, N], [[1, 0, 0], [0, 0, 0], [0, 0, 0]])
    state, _, payoffs, _, info = step(env, params, state, [GIFT, NOOP, NOOP])
    np.testing.assert_array_equal(state.inventory, [[0, 0, 0], [0, 5, 0], [0, 0, 0]])  # Melting Pot giftMultiplier = 5
    assert bool(info["gifts"][0, 1]) and int(info["gifts"].sum()) == 1
    np.testing.assert_array_equal(info["tokens_received"][1], [0, 5, 0])
    np.testing.assert_array_equal(payoffs, [0.0, 0.0, 0.0])


def test_the_giver_gives_its_highest_level_first_and_the_multiplier_is_a_param():
    env, params = small_env(gift_multiplier=3)
    state = placed(env, params, [[1, 1], [1, 5], [2, 7]], [E, W, N], [[2, 1, 0], [0, 0, 0], [0, 0, 0]])
    state, *_ = step(env, params, state, [GIFT, NOOP, NOOP])
    np.testing.assert_array_equal(state.inventory[:2], [[2, 0, 0], [0, 0, 3]])


def test_a_top_level_token_is_passed_on_unrefined_and_unmultiplied():
    env, params = small_env()
    state = placed(env, params, [[1, 1], [1, 5], [2, 7]], [E, W, N], [[0, 0, 2], [0, 0, 0], [0, 0, 0]])
    state, *_ = step(env, params, state, [GIFT, NOOP, NOOP])
    np.testing.assert_array_equal(state.inventory[:2], [[0, 0, 1], [0, 0, 1]])


def test_received_tokens_are_capped_at_capacity():
    env, params = small_env()
    state = placed(env, params, [[1, 1], [1, 5], [2, 7]], [E, W, N], [[1, 0, 0], [0, 13, 0], [0, 0, 0]])
    state, _, _, _, info = step(env, params, state, [GIFT, NOOP, NOOP])
    np.testing.assert_array_equal(state.inventory[1], [0, 15, 0])
    np.testing.assert_array_equal(info["tokens_received"][1], [0, 5, 0])  # before the cap


def test_an_empty_inventory_gives_nothing():
    env, params = small_env()
    state = placed(env, params, [[1, 1], [1, 5], [2, 7]], [E, W, N], [[0, 0, 0], [0, 0, 0], [0, 0, 0]])
    state, _, _, _, info = step(env, params, state, [GIFT, NOOP, NOOP])
    assert int(state.inventory.sum()) == 0 and not info["gifts"].any() and bool(info["fired_gift"][0])


def test_the_beam_hits_only_the_first_agent_and_stops_at_walls_and_its_length():
    env, params = small_env(n_agents=3)
    row = placed(env, params, [[1, 1], [1, 3], [1, 5]], [E, W, W], [[1, 0, 0], [0, 0, 0], [0, 0, 0]])
    state, *_ = step(env, params, row, [GIFT, NOOP, NOOP])
    np.testing.assert_array_equal(state.inventory[1:], [[0, 5, 0], [0, 0, 0]])
    walled = placed(env, params, [[2, 4], [2, 7], [1, 1]], [E, W, N], [[1, 0, 0], [0, 0, 0], [0, 0, 0]])  # '#' at (2, 5)
    state, _, _, _, info = step(env, params, walled, [GIFT, NOOP, NOOP])
    assert not info["gifts"].any() and int(state.inventory[0, 0]) == 1
    _, short = small_env(gift_beam_length=3)
    far = placed(env, short, [[1, 1], [1, 5], [2, 7]], [E, W, N], [[1, 0, 0], [0, 0, 0], [0, 0, 0]])  # 4 cells away
    state, _, _, _, info = step(env, short, far, [GIFT, NOOP, NOOP])
    assert not info["gifts"].any()


def test_simultaneous_gifts_read_the_inventories_before_any_transfer():
    env, params = small_env()
    state = placed(env, params, [[1, 1], [1, 3], [2, 7]], [E, W, N], [[1, 0, 0], [0, 1, 0], [0, 0, 0]])
    state, *_ = step(env, params, state, [GIFT, GIFT, NOOP])
    np.testing.assert_array_equal(state.inventory[:2], [[0, 0, 5], [0, 5, 0]])


def test_the_gift_beam_cools_down_for_gift_cooldown_steps():
    env, params = small_env()  # cooldown 3: fires at t, not at t+1 or t+2, again at t+3
    state = placed(env, params, [[1, 1], [1, 5], [2, 7]], [E, W, N], [[4, 0, 0], [0, 0, 0], [0, 0, 0]])
    fired = []
    for t in range(4):
        state, obs, _, _, info = step(env, params, state, [GIFT, NOOP, NOOP], key=t)
        fired.append(bool(info["fired_gift"][0]))
    assert fired == [True, False, False, True]
    np.testing.assert_array_equal(state.inventory[:2, :2], [[2, 0], [0, 10]])
    np.testing.assert_allclose(obs[0, -1], 1.0 - 2.0 / 3.0)  # ready-to-gift after firing on the last step


# ----- consumption -----
def test_consumption_pays_each_level_its_token_value_and_empties_the_inventory():
    env, params = small_env(token_values=[1.0, 2.0, 4.0])
    state = placed(env, params, [[1, 1], [1, 5], [2, 7]], [E, W, N], [[2, 1, 3], [0, 4, 0], [0, 0, 0]])
    state, _, payoffs, _, info = step(env, params, state, [CONSUME, NOOP, CONSUME])
    np.testing.assert_array_equal(payoffs, [2 * 1 + 1 * 2 + 3 * 4, 0.0, 0.0])
    np.testing.assert_array_equal(state.inventory, [[0, 0, 0], [0, 4, 0], [0, 0, 0]])
    np.testing.assert_array_equal(info["tokens_consumed"], [6, 0, 0])


def test_melting_pot_default_pays_one_per_token_whatever_its_level():
    env, params = small_env()
    state = placed(env, params, [[1, 1], [1, 5], [2, 7]], [E, W, N], [[2, 1, 3], [0, 0, 0], [0, 0, 0]])
    _, _, payoffs, _, _ = step(env, params, state, [CONSUME, NOOP, NOOP])
    assert float(payoffs[0]) == 6.0


def test_a_gift_and_a_consumption_in_one_step_pay_the_consumer_the_gift():
    env, params = small_env()
    state = placed(env, params, [[1, 1], [1, 5], [2, 7]], [E, W, N], [[1, 0, 0], [0, 0, 0], [0, 0, 0]])
    _, _, payoffs, _, _ = step(env, params, state, [GIFT, CONSUME, NOOP])
    np.testing.assert_array_equal(payoffs, [0.0, 5.0, 0.0])


# ----- pure helpers -----
def test_highest_level_and_transfers_on_their_own():
    inventory = jnp.array([[0, 0, 0], [3, 0, 0], [1, 2, 0]])
    np.testing.assert_array_equal(highest_level_held(inventory), [-1, 0, 1])
    hits = jnp.array([[False, True, False], [False, False, True], [True, False, False]])
    after, received, gave = gift_transfers(inventory, hits, jnp.int32(2), jnp.int32(15))
    np.testing.assert_array_equal(gave, [False, True, True])
    np.testing.assert_array_equal(after, [[0, 0, 2], [2, 0, 0], [1, 3, 0]])
    np.testing.assert_array_equal(received, [[0, 0, 2], [0, 0, 0], [0, 2, 0]])


# ----- token regrowth -----
def test_tokens_regrow_on_empty_unoccupied_token_cells_only():
    env, params = small_env(regrow_prob=1.0)
    state = placed(env, params, [[1, 1], [2, 1], [1, 7]], [E, E, W], [[0, 0, 0]] * 3)
    state, *_ = step(env, params, state, [NOOP, NOOP, NOOP])
    expected = env.token_cells_mask(params).copy()
    expected[2, 1] = False  # under agent 1
    np.testing.assert_array_equal(state.tokens, expected)
    env, params = small_env(regrow_prob=0.0)
    state = placed(env, params, [[1, 1], [2, 1], [1, 7]], [E, E, W], [[0, 0, 0]] * 3)
    state, *_ = step(env, params, state, [NOOP, NOOP, NOOP])
    assert not state.tokens.any()


def test_reset_is_empty_by_default_and_initial_token_prob_fills_token_cells():
    env, params = small_env()
    state, obs = env.reset(jax.random.PRNGKey(3), params)
    assert not state.tokens.any() and int(state.inventory.sum()) == 0 and obs.shape == (3, env.observation_size(params))
    env, params = small_env(initial_token_prob=1.0)
    state, _ = env.reset(jax.random.PRNGKey(3), params)
    assert int(state.tokens.sum()) == int(env.token_cells_mask(params).sum())  # no agent spawns on a token cell here


# ----- observation, registration, seeds, validation, doors -----
def test_observation_shows_tokens_other_agents_inventory_and_readiness():
    env, params = small_env()
    state = placed(env, params, [[1, 1], [1, 2], [2, 7]], [E, N, N], [[3, 0, 15], [0, 0, 0], [0, 0, 0]], tokens=[(1, 3)])
    obs = np.asarray(env.observe(state, params))
    cells = obs[0, : 4 * 3 * 3].reshape(4, 3, 3)  # agent 0 faces east: ahead is column +1
    np.testing.assert_array_equal(cells[1, 1], [0, 0, 1])  # agent 1 one cell ahead
    np.testing.assert_array_equal(cells[0, 1], [0, 1, 0])  # the token two cells ahead
    np.testing.assert_array_equal(cells[2, 1], [0, 0, 0])  # itself (hidden)
    np.testing.assert_allclose(obs[0, -4:], [3 / 15, 0.0, 1.0, 1.0])


def test_registered_defaults_match_melting_pot():
    spec = motivegym.get_spec("GiftRefinement-v0")
    assert spec.family == "dilemmas" and spec.default_reward == "private"
    env, params = motivegym.make_jax("GiftRefinement-v0")
    assert env.n_agents(params) == 6 and env.num_actions(params) == 9 and env.layout(params).shape == (27, 27)
    assert (
        int(params.gift_multiplier) == 5 and int(params.capacity) == 15 and params.levels == 3 and int(params.gift_cooldown) == 3
    )
    assert env.observation_size(params) == 11 * 11 * 3 + 3 + 1
    assert int(env.token_cells_mask(params).sum()) == 538 and len(env.layout(params).spawn_points) == 18


def test_same_key_same_trajectory_under_jit_and_vmap(seeded_rollouts_repeat):
    env, params = small_env(regrow_prob=0.2, max_steps=12)
    _, payoffs, done = seeded_rollouts_repeat(env, params, n_envs=4, steps=12, seed=5, other_seed=6)
    assert done[-1].all() and not done[:-1].any() and (payoffs >= 0).all()


def test_params_are_validated():
    env = GiftRefinement()
    with pytest.raises(ValueError, match="gift_multiplier"):
        env.default_params(gift_multiplir=3)
    with pytest.raises(ValueError, match="spawn points"):
        env.default_params(n_agents=19)
    with pytest.raises(ValueError, match="token cells"):
        env.default_params(layout=("#####", "#P P#", "#####"), n_agents=2)
    with pytest.raises(ValueError, match="token_values"):
        env.default_params(token_values=[1.0, 2.0])
    with pytest.raises(ValueError, match="regrow_prob"):
        env.default_params(regrow_prob=1.5)
    params = env.default_params(levels=2)
    assert params.token_values.shape == (2,)
    params = env.default_params(levels=4, token_values=[1.0, 2.0, 3.0, 4.0], layout="\n".join(SMALL), n_agents=2)
    assert params.layout == SMALL and env.layout(params).shape == (4, 9)


def test_renders():
    env, params = small_env()
    state = placed(env, params, [[1, 1], [1, 5], [2, 7]], [E, W, N], [[1, 0, 2], [0, 0, 0], [0, 0, 0]], tokens=[(1, 3)])
    lines = env.render_text(state, params).splitlines()
    assert lines[2] == "#0 o 1  #" and "0:1/0/2" in lines[-1]
    image = env.render_rgb(state, params)
    assert image.shape == (32, 72, 3) and image.dtype == np.uint8


def test_doors_agree_gymnasium_pettingzoo_and_make_vec(assert_doors_agree):
    kwargs = {"layout": SMALL, "n_agents": 3, "max_steps": 6, "initial_token_prob": 0.8, "view_ahead": 2, "view_behind": 1, "view_side": 1}
    assert_doors_agree("GiftRefinement-v0", kwargs, np.random.default_rng(0).integers(0, 9, (6, 3)), seed=4, vec_envs=2)


# ----- scripted bots (motivegym.baselines.gift_territory_bots) -----
def test_bots_defector_consumes_at_once_cooperator_gifts_refinable_tokens_and_consumes_top_ones():
    from motivegym.baselines.bots import make_bot
    from motivegym.baselines.gift_territory_bots import TokenTrader

    env, params = small_env()
    assert make_bot("GiftRefinement-v0", "cooperator", env, params).gift is True
    state = placed(env, params, [[1, 1], [1, 3], [2, 7]], [E, W, N], [[1, 0, 0], [0, 2, 0], [0, 0, 1]], tokens=[(1, 2)])
    obs = env.observe(state, params)
    defector, cooperator = TokenTrader(gift=False, epsilon=0.0), TokenTrader(gift=True, epsilon=0.0)
    defect, _ = defector(jax.random.PRNGKey(0), obs, defector.init(env, params))
    cooperate, _ = cooperator(jax.random.PRNGKey(0), obs, cooperator.init(env, params))
    np.testing.assert_array_equal(defect, [CONSUME, CONSUME, CONSUME])
    np.testing.assert_array_equal(cooperate, [GIFT, GIFT, CONSUME])  # agents 0 and 1 face each other; 2 holds a top token
    cooling = dataclasses.replace(state, cooldown=jnp.array([2, 0, 0]))
    waiting, _ = cooperator(jax.random.PRNGKey(0), env.observe(cooling, params), cooperator.init(env, params))
    assert int(waiting[0]) == NOOP  # partner in the lane, beam not ready
    empty = placed(env, params, [[1, 1], [1, 7], [2, 7]], [E, W, N], [[0, 0, 0]] * 3, tokens=[(1, 3)])
    forage, _ = cooperator(jax.random.PRNGKey(0), env.observe(empty, params), cooperator.init(env, params))
    assert int(forage[0]) == FORWARD
