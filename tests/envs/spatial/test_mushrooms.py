"""Mushrooms-v0 (Melting Pot externality_mushrooms): payoff routing, digestion, spores, blight, perishing, zaps, doors."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import motivegym
from motivegym.envs.spatial.grid import FORWARD, NOOP, TURN_LEFT, AgentState
from motivegym.envs.spatial.mushrooms import BLUE, EMPTY, GREEN, ORANGE, RED, ZAP, Mushrooms, eating_payoffs

N, E, S, W = range(4)
SMALL = (
    "#######",
    "#     #",
    "#     #",
    "#     #",
    "#######",
)
NO_SPORES = [0.0, 0.0, 0.0, 0.0]
STEP = jax.jit(Mushrooms().step)


def small_env(**overrides):
    env = Mushrooms()
    values = {"layout": SMALL, "n_agents": 3, "view_ahead": 2, "view_behind": 1, "view_side": 1}
    return env, env.default_params(**{**values, **overrides})


def placed(env, params, pos, orient, mushrooms=None, **fields):
    """A reset state with agents at ``pos`` facing ``orient`` and ``mushrooms`` = {(row, col): kind}."""
    state, _ = env.reset(jax.random.PRNGKey(0), params)
    grid = np.zeros(env.layout(params).shape, np.int32)
    for cell, kind in (mushrooms or {}).items():
        grid[cell] = kind
    n = len(pos)
    agents = AgentState(pos=jnp.asarray(pos, jnp.int32), orient=jnp.asarray(orient, jnp.int32), timeout=jnp.zeros(n, jnp.int32))
    fields = {k: jnp.asarray(v, getattr(state, k).dtype) for k, v in fields.items()}
    return dataclasses.replace(state, agents=agents, mushroom=jnp.asarray(grid), **fields)


def play(params, state, *joint_actions, key=0):
    payoffs, infos = [], []
    for t, actions in enumerate(joint_actions):
        state, _, payoff, _, info = STEP(jax.random.PRNGKey(1000 * key + t), state, jnp.asarray(actions, jnp.int32), params)
        payoffs.append(np.asarray(payoff))
        infos.append(info)
    return state, np.array(payoffs), infos


AGENTS = [[1, 1], [3, 1], [3, 5]]


def test_registered_with_melting_pot_dense_defaults():
    spec = motivegym.get_spec("Mushrooms-v0")
    assert spec.family == "dilemmas" and spec.default_reward == "private"
    env, params = motivegym.make_jax("Mushrooms-v0")
    assert env.n_agents(params) == 5 and env.num_actions(params) == 8 and env.action_names(params)[ZAP] == "zap"
    np.testing.assert_array_equal(params.mushroom_rewards, [1, 2, 3, -1])
    np.testing.assert_array_equal(params.digestion_steps, [0, 10, 15, 15])
    state, obs = env.reset(jax.random.PRNGKey(0), params)
    assert obs.shape == (5, 11 * 11 * 6 + 2) and env.observation_size(params) == obs.shape[1]
    assert env.global_state(state, params).shape == (14 * 23 * 5 + 5 * 7 + 5 + 1,)
    info = env.describe(state, params)
    assert [int(info[f"{k}_count"]) for k in ("red", "green", "blue", "orange")] == [3, 3, 3, 1]


@pytest.mark.parametrize(
    "kind, expected",
    [
        (RED, [1.0, 0.0, 0.0]),  # all to the eater
        (GREEN, [2 / 3, 2 / 3, 2 / 3]),  # 2 split among all
        (BLUE, [0.0, 1.5, 1.5]),  # 3 split among the others
        (ORANGE, [-1 / 3, -1 / 3, -1 / 3]),  # −1 split among all
    ],
)
def test_each_mushroom_routes_its_payoff(kind, expected):
    env, params = small_env(spores=NO_SPORES)
    state = placed(env, params, AGENTS, [E, E, E], {(1, 2): kind})
    state, payoffs, infos = play(params, state, [FORWARD, NOOP, NOOP])
    np.testing.assert_allclose(payoffs[0], expected, rtol=1e-6)
    assert int(infos[0]["eaten"][0]) == kind and int(state.mushroom[1, 2]) == EMPTY


def test_payoffs_add_up_over_eaters_and_scale_with_n():
    np.testing.assert_allclose(eating_payoffs(jnp.array([BLUE, RED, EMPTY]), jnp.array([1.0, 2.0, 3.0, -1.0]), 3), [0.0, 2.5, 1.5])
    np.testing.assert_allclose(eating_payoffs(jnp.array([BLUE, EMPTY, EMPTY, EMPTY, EMPTY]), jnp.array([1.0, 2.0, 3.0, -1.0]), 5), [0, 0.75, 0.75, 0.75, 0.75])


def test_digestion_freezes_moves_and_turns_but_not_the_zapper():
    env, params = small_env(spores=NO_SPORES, digestion_steps=[0.0, 3.0, 15.0, 15.0])
    state = placed(env, params, AGENTS, [E, E, E], {(1, 2): GREEN})
    state, _, infos = play(params, state, [FORWARD, NOOP, NOOP], [TURN_LEFT, NOOP, NOOP], [FORWARD, NOOP, NOOP], [ZAP, NOOP, NOOP])
    np.testing.assert_array_equal(state.agents.pos[0], [1, 2])
    assert int(state.agents.orient[0]) == E
    assert bool(infos[3]["fired_zap"][0])  # digestion does not stop zapping (Melting Pot disallowMovementUntil)
    state, _, _ = play(params, state, [FORWARD, NOOP, NOOP])
    np.testing.assert_array_equal(state.agents.pos[0], [1, 3])  # 3 frozen steps, then it moves
    red_env, red_params = small_env(spores=NO_SPORES)
    state = placed(red_env, red_params, AGENTS, [E, E, E], {(1, 2): RED})
    state, _, _ = play(red_params, state, [FORWARD, NOOP, NOOP], [FORWARD, NOOP, NOOP])
    np.testing.assert_array_equal(state.agents.pos[0], [1, 3])  # red digests instantly


def only(row: int, column: int) -> list[list[float]]:
    probs = np.zeros((4, 4))
    probs[row, column] = 1.0
    return probs.tolist()


def test_spores_grow_the_kinds_of_the_regrowth_table_on_empty_cells():
    env, params = small_env(regrowth_probs=only(2, 1), spores=[3.0, 3.0, 3.0, 1.0])  # blue spores grow green
    greens = 0
    for key in range(4):
        state = placed(env, params, AGENTS, [E, E, E], {(1, 2): BLUE, (2, 3): RED})
        state, _, _ = play(params, state, [FORWARD, NOOP, NOOP], key=key)
        kinds = np.asarray(state.mushroom)
        assert (kinds == GREEN).sum() <= 3 and (kinds == BLUE).sum() == 0 and kinds[2, 3] == RED  # only empty cells grow
        greens += (kinds == GREEN).sum()
    assert greens >= 4  # 3 spores per key, a few wasted under agents or on one cell twice
    env, params = small_env()  # Melting Pot's table: one orange spore always grows one orange
    state = placed(env, params, AGENTS, [E, E, E], {(1, 2): ORANGE})
    state, _, _ = play(params, state, [FORWARD, NOOP, NOOP])
    kinds = np.asarray(state.mushroom)
    assert (kinds == ORANGE).sum() == 1 and ((kinds > 0) == (kinds == ORANGE)).all()
    env, params = small_env(spores=NO_SPORES, regrowth_probs=only(0, 0))
    state, _, _ = play(params, placed(env, params, AGENTS, [E, E, E], {(1, 2): RED}), [FORWARD, NOOP, NOOP])
    assert int(jnp.sum(state.mushroom)) == 0  # no spores, no regrowth


def test_spores_never_grow_under_an_agent():
    env = Mushrooms()
    params = env.default_params(layout=("#####", "#   #", "#####"), n_agents=2, regrowth_probs=only(0, 0), view_ahead=1, view_side=1)
    grown_left = 0
    for key in range(6):
        state = placed(env, params, [[1, 1], [1, 3]], [E, W], {(1, 2): RED})
        state, _, _ = play(params, state, [FORWARD, NOOP], key=key)
        kinds = np.asarray(state.mushroom)
        assert kinds[1, 2] == EMPTY and kinds[1, 3] == EMPTY  # under agents 0 and 1
        grown_left += kinds[1, 1] == RED
    assert grown_left >= 4  # the only free cell: 1 − 0.5³ per key


@pytest.mark.parametrize("fraction, reds_left", [(1.0, 0), (0.0, 4)])
def test_eating_orange_destroys_red_mushrooms(fraction, reds_left):
    env, params = small_env(spores=NO_SPORES, orange_destroys_red=fraction)
    reds = {(2, 2): RED, (2, 3): RED, (2, 4): RED, (1, 5): RED}
    state = placed(env, params, AGENTS, [E, E, E], {(1, 2): ORANGE, (3, 3): GREEN, **reds})
    state, payoffs, _ = play(params, state, [FORWARD, NOOP, NOOP])
    kinds = np.asarray(state.mushroom)
    assert (kinds == RED).sum() == reds_left and kinds[3, 3] == GREEN
    np.testing.assert_allclose(payoffs[0], [-1 / 3] * 3, rtol=1e-6)


def test_uneaten_mushrooms_perish_after_their_time():
    env, params = small_env(spores=NO_SPORES, perish_steps=[3.0, 5.0, 100.0, 1e7])
    state = placed(env, params, AGENTS, [E, E, E], {(2, 3): RED, (2, 4): GREEN, (2, 5): ORANGE})
    state, _, _ = play(params, state, *[[NOOP] * 3] * 2)
    assert int(state.mushroom[2, 3]) == RED
    state, _, _ = play(params, state, [NOOP] * 3)
    assert int(state.mushroom[2, 3]) == EMPTY and int(state.mushroom[2, 4]) == GREEN
    state, _, _ = play(params, state, *[[NOOP] * 3] * 2)
    assert int(state.mushroom[2, 4]) == EMPTY and int(state.mushroom[2, 5]) == ORANGE


def test_zap_destroys_mushrooms_in_its_three_by_three_beam():
    env, params = small_env(spores=NO_SPORES)
    inside = {(1, 2): RED, (2, 3): BLUE, (3, 4): GREEN}  # agent 1 at (2, 1) facing east: rows 1..3, cols 2..4
    state = placed(env, params, [[2, 1], [1, 5], [3, 5]], [E, N, N], {**inside, (2, 5): ORANGE})
    state, payoffs, _ = play(params, state, [ZAP, NOOP, NOOP])
    kinds = np.asarray(state.mushroom)
    assert kinds[1, 2] == kinds[2, 3] == kinds[3, 4] == EMPTY and kinds[2, 5] == ORANGE and payoffs.sum() == 0


def test_graduated_sanctions_first_zap_freezes_second_removes():
    env, params = small_env(spores=NO_SPORES)
    state = placed(env, params, [[2, 1], [2, 3], [1, 5]], [E, N, S])
    state, _, infos = play(params, state, [ZAP, FORWARD, NOOP])  # agent 1 moves to (1, 3): still in the beam
    assert bool(infos[0]["zap_hits"][0, 1]) and bool(state.marked[1]) and int(state.frozen[1]) == 25
    state, _, _ = play(params, state, [NOOP, FORWARD, NOOP], [NOOP, ZAP, NOOP])
    np.testing.assert_array_equal(state.agents.pos[1], [1, 3])  # frozen, and its zapper is blocked
    assert int(state.cooldown[1]) == 0
    state, _, infos = play(params, state, [ZAP, NOOP, NOOP])  # cooldown over: the second zap removes it
    assert int(state.agents.timeout[1]) == 50 and not bool(state.marked[1]) and bool(infos[0]["removed"][1])
    obs = np.asarray(env.observe(state, params))
    assert obs[1, -1] == 1.0 and obs[1, :-2].sum() == 0  # a removed agent sees nothing


def test_two_zaps_in_one_step_remove_and_marks_fade():
    env, params = small_env(spores=NO_SPORES)
    state = placed(env, params, [[2, 1], [2, 3], [2, 5]], [E, N, W])
    state, _, _ = play(params, state, [ZAP, NOOP, ZAP])
    assert int(state.agents.timeout[1]) == 50
    env, params = small_env(spores=NO_SPORES, sanction_recovery=3, zap_freeze_steps=1)
    state = placed(env, params, [[2, 1], [2, 3], [1, 5]], [E, N, S])
    state, _, _ = play(params, state, [ZAP, NOOP, NOOP], *[[NOOP] * 3] * 2)
    assert bool(state.marked[1])
    state, _, _ = play(params, state, [NOOP] * 3)
    assert not bool(state.marked[1])  # recovered after 3 steps: the next zap only freezes again
    state, _, _ = play(params, state, [ZAP, NOOP, NOOP])
    assert int(state.agents.timeout[1]) == 0 and bool(state.marked[1])


def test_params_are_validated():
    env = Mushrooms()
    with pytest.raises(ValueError, match="n_agents"):
        env.default_params(n_agents=1)
    with pytest.raises(ValueError, match="spores"):
        env.default_params(spores=[4.0, 3.0, 3.0, 1.0])
    with pytest.raises(ValueError, match="regrowth_probs"):
        env.default_params(regrowth_probs=np.full((4, 4), 1.5).tolist())
    with pytest.raises(ValueError, match="zap_beam_width"):
        env.default_params(zap_beam_width=2)
    with pytest.raises(ValueError, match="unknown characters"):
        env.default_params(layout=("###", "#X#", "###"))


def test_seeds_same_key_same_trajectory_under_jit_and_vmap(seeded_rollouts_repeat):
    env, params = motivegym.make_jax("Mushrooms-v0", max_steps=10)
    obs, _, done = seeded_rollouts_repeat(env, params, n_envs=8, steps=10, seed=3, other_seed=4)
    assert done[-1].all() and not done[:-1].any()
    assert obs.min() >= 0.0 and obs.max() <= 1.0


@pytest.mark.slow  # ~70 s of compilation on the shared 2-core machine
def test_gymnasium_and_pettingzoo_doors_play_the_make_jax_game(assert_doors_agree):
    actions = np.random.default_rng(1).integers(0, 8, (6, 5))
    assert_doors_agree("Mushrooms-v0", {"max_steps": 6}, actions, seed=5, reward="private", frame_shape=(14 * 8, 23 * 8, 3))


def test_renders():
    env, params = small_env()
    state = placed(env, params, AGENTS, [E, E, E], {(1, 2): RED, (2, 3): BLUE, (3, 3): ORANGE, (2, 5): GREEN})
    lines = env.render_text(state, params).splitlines()
    assert lines[2:5] == ["#0R   #", "#  B G#", "#1 O 2#"]
    assert env.render_rgb(state, params).shape == (40, 56, 3)


def test_cooperator_eats_green_and_blue_defector_only_red():
    from motivegym.baselines.bots import make_bot
    from motivegym.baselines.mining_bots import MushroomEater

    env, params = small_env()
    cooperator, defector = MushroomEater(kinds=(2, 3), epsilon=0.0), MushroomEater(kinds=(1,), epsilon=0.0)
    state = placed(env, params, [[2, 2], [1, 5], [3, 5]], [N, E, E], {(1, 2): GREEN, (2, 3): RED, (2, 1): ORANGE})

    def act(policy):
        actions, _ = policy(jax.random.PRNGKey(0), env.observe(state, params), policy.init(env, params))
        return int(actions[0])

    assert act(cooperator) == FORWARD  # onto the green one ahead
    assert act(defector) == 4  # step right, onto the red one
    assert isinstance(make_bot("Mushrooms-v0", "defector", env, params), MushroomEater)
