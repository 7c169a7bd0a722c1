"""Territory-v0: rule scenarios on hand-built states, written from Melting Pot's territory rules (``Resource``,
``ResourceClaimer``, ``Paintbrush``, ``Zapper`` + ``GraduatedSanctionsMarking``), plus seeds, validation and the doors."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import motivegym
from motivegym.envs.spatial.grid import FORWARD, NOOP, AgentState
from motivegym.envs.spatial.grid_extensions import graduated_sanctions
from motivegym.envs.spatial.territory import CLAIM, ZAP, Territory, resolve_claims

N, E, S, W = 0, 1, 2, 3
SMALL = (
    "##########",
    "#P   R  P#",
    "#    R   #",
    "#P  RR  P#",
    "#   #R   #",
    "##########",
)
#: one params object for most scenarios (one compilation): every matured claim pays each step
RULES = {"reward_rate": 1.0, "reward_delay": 3, "repair_delay": 5, "repair_prob": 1.0}


def small_env(**overrides):
    env = Territory()
    values = {"layout": SMALL, "n_agents": 3, "view_ahead": 2, "view_behind": 1, "view_side": 1, **RULES}
    return env, env.default_params(**{**values, **overrides})


ENV, PARAMS = small_env()


def placed(pos, orient, owner=(), params=PARAMS):
    state, _ = ENV.reset(jax.random.PRNGKey(0), params)
    grid = np.full(ENV.layout(params).shape, -1, np.int32)
    for (r, c), i in owner:
        grid[r, c] = i
    n = len(pos)
    agents = AgentState(pos=jnp.asarray(pos, jnp.int32), orient=jnp.asarray(orient, jnp.int32), timeout=jnp.zeros(n, jnp.int32))
    age = np.where(grid >= 0, int(params.reward_delay), 0)
    return dataclasses.replace(state, agents=agents, owner=jnp.asarray(grid), claim_age=jnp.asarray(age, jnp.int32))


JIT_STEP = jax.jit(ENV.step)  # one compilation per params object


def step(state, actions, key=1, params=PARAMS):
    return JIT_STEP(jax.random.PRNGKey(key), state, jnp.asarray(actions), params)


# ----- claiming -----
def test_facing_a_resource_claims_it_and_it_pays_once_held_reward_delay_steps():
    state = placed([[1, 4], [4, 1], [1, 8]], [E, N, W])  # agent 0 faces the resource at (1, 5)
    paid = []
    for t in range(5):
        state, _, payoffs, _, info = step(state, [NOOP, NOOP, NOOP], key=t)
        paid.append(float(payoffs[0]))
        if t == 0:
            assert int(state.owner[1, 5]) == 0 and int(info["new_claims"][0]) == 1 and int(info["claimed"][0]) == 1
    assert paid == [0.0, 0.0, 0.0, 1.0, 1.0]  # claimed on step 0, pays from step reward_delay = 3 (reward_rate 1)


def test_the_claim_beam_passes_through_resources_and_stops_at_walls():
    state = placed([[3, 3], [2, 8], [4, 3]], [E, W, E])  # agent 0: (3, 4) and (3, 5) are resources; agent 2 faces a wall
    state, _, _, _, info = step(state, [CLAIM, NOOP, CLAIM])
    assert int(state.owner[3, 4]) == 0 and int(state.owner[3, 5]) == 0
    assert int(info["new_claims"][0]) == 2 and int(state.owner[4, 5]) == -1  # the '#' at (4, 4) stops agent 2's beam


def test_claiming_another_agents_resource_steals_it_and_restarts_the_delay():
    state = placed([[1, 4], [4, 1], [1, 8]], [E, N, W], owner=[((1, 5), 1)])  # agent 0 faces agent 1's matured resource
    state, _, payoffs, _, info = step(state, [NOOP, NOOP, NOOP])
    assert int(state.owner[1, 5]) == 0 and int(info["stolen"][0]) == 1
    np.testing.assert_array_equal(payoffs, [0.0, 0.0, 0.0])  # the new claim has not matured; agent 1 lost it


def test_claims_pay_only_their_claimant_and_never_without_reward_rate():
    state = placed([[1, 1], [4, 1], [1, 8]], [W, N, E], owner=[((1, 5), 1), ((2, 5), 1), ((3, 4), 2)])
    _, _, payoffs, _, info = step(state, [NOOP, NOOP, NOOP])
    np.testing.assert_array_equal(payoffs, [0.0, 2.0, 1.0])
    np.testing.assert_array_equal(info["paying"], [0, 2, 1])
    _, never = small_env(reward_rate=0.0)
    _, _, payoffs, _, _ = step(
        placed([[1, 1], [4, 1], [1, 8]], [W, N, E], owner=[((1, 5), 1)], params=never), [NOOP] * 3, params=never
    )
    assert float(payoffs.sum()) == 0.0


def test_simultaneous_claims_of_one_cell_go_to_a_random_claimant():
    cells, both = jnp.zeros((2, 1, 2), jnp.int32), jnp.ones((2, 1), bool)  # agents 0 and 1 both claim cell (0, 0)
    winners = {int(resolve_claims(jax.random.PRNGKey(k), cells, both, jnp.full((1, 1), -1))[0][0, 0]) for k in range(20)}
    assert winners == {0, 1}
    only_first = jnp.array([[True], [False]])
    owner, changed = resolve_claims(jax.random.PRNGKey(0), cells, only_first, jnp.zeros((1, 1), jnp.int32))
    assert int(owner[0, 0]) == 0 and not bool(changed[0, 0])  # re-claiming one's own cell changes nothing


# ----- zapping agents: freeze, then removal -----
def test_a_zap_freezes_and_marks_a_second_zap_removes_for_good_and_releases_claims():
    state = placed([[2, 1], [2, 3], [1, 8]], [E, W, W], owner=[((3, 4), 1), ((1, 5), 1)])
    state, obs, _, _, info = step(state, [ZAP, NOOP, NOOP])
    assert bool(info["zap_hits"][0, 1]) and int(state.frozen[1]) == 25 and int(state.marked[1]) == 50
    assert float(obs[1, -2]) == 1.0  # frozen flag
    state, _, _, _, info = step(state, [NOOP, FORWARD, NOOP])
    np.testing.assert_array_equal(state.agents.pos[1], [2, 3])  # a frozen agent cannot act
    fired = []
    for t in range(3):  # zap_cooldown 4: the next zap fires on the fourth step after the first
        state, obs, _, _, info = step(state, [ZAP, NOOP, NOOP], key=t + 2)
        fired.append(bool(info["fired_zap"][0]))
    assert fired == [False, False, True]
    assert bool(info["removed_now"][1]) and bool(info["removed"][1]) and int(state.agents.timeout[1]) == 1
    assert int(state.owner[3, 4]) == -1 and int(state.owner[1, 5]) == -1 and int(info["claimed"][1]) == 0
    assert float(obs[1, -1]) == 1.0 and float(obs[1, :-3].sum()) == 0.0  # removed: sees nothing
    for t in range(30):  # never comes back
        state, *_ = step(state, [NOOP, NOOP, NOOP], key=t + 10)
    assert int(state.agents.timeout[1]) == 1


def test_the_zap_stops_at_the_first_agent_and_the_mark_wears_off():
    state = placed([[2, 1], [2, 2], [2, 3]], [E, W, W])
    state, _, _, _, info = step(state, [ZAP, NOOP, NOOP])
    np.testing.assert_array_equal(info["zap_hits"][0], [False, True, False])
    np.testing.assert_array_equal(
        graduated_sanctions(jnp.array([1, 1, 2, 0]), jnp.array([0, 3, 0, 5])), [[True, False, False, False], [False, True, True, False]]
    )
    _, short = small_env(mark_steps=2, freeze_steps=1)
    state = placed([[2, 1], [2, 2], [1, 8]], [E, W, W], params=short)
    for t in range(5):  # zaps on steps 0 and 4; the mark lasted 2 steps, so the second zap only freezes again
        state, _, _, _, info = step(state, [ZAP, NOOP, NOOP], key=t, params=short)
    assert bool(info["fired_zap"][0]) and not bool(info["removed"][1]) and int(state.frozen[1]) == 1


# ----- zapping resources: damage, destruction, self-repair -----
def test_two_zaps_destroy_a_claimed_resource_which_becomes_floor_for_good():
    state = placed([[2, 3], [4, 1], [1, 8]], [E, N, W], owner=[((2, 5), 1)])  # lanes: (1, 5), (2, 5), (3, 4) resources
    state, obs, _, _, info = step(state, [ZAP, NOOP, NOOP])
    assert int(state.health[2, 5]) == 1 and int(state.owner[2, 5]) == 1 and int(info["resources_destroyed"]) == 0
    for t in range(4):  # zap_cooldown 4: the second zap fires on step 4
        state, _, _, _, info = step(state, [ZAP, NOOP, NOOP], key=t + 1)
    assert int(info["resources_destroyed"]) == 3 and bool(state.destroyed[2, 5]) and int(state.owner[2, 5]) == -1
    state, _, _, _, info = step(state, [FORWARD, NOOP, NOOP])
    state, _, _, _, info = step(state, [FORWARD, NOOP, NOOP])
    np.testing.assert_array_equal(state.agents.pos[0], [2, 5])  # walkable now
    state, _, _, _, info = step(state, [CLAIM, NOOP, NOOP])
    assert int(state.owner[2, 5]) == -1 and int(info["resources_left"]) == 2  # never claimable again


def test_a_zap_stops_at_the_resource_it_damages_and_damage_self_repairs():
    state = placed([[2, 4], [2, 6], [1, 8]], [E, W, W])  # the centre lane: (2, 5) resource, then agent 1
    state, _, _, _, info = step(state, [ZAP, NOOP, NOOP])
    assert int(state.health[2, 5]) == 1 and not info["zap_hits"].any()
    healths = []
    for t in range(6):  # repair_delay 5, repair_prob 1
        state, *_ = step(state, [NOOP, NOOP, NOOP], key=t + 1)
        healths.append(int(state.health[2, 5]))
    assert healths == [1, 1, 1, 1, 2, 2]


# ----- registration, observation, seeds, validation, doors -----
def test_registered_defaults_match_melting_pot_open_and_rooms():
    spec = motivegym.get_spec("Territory-v0")
    assert spec.family == "dilemmas" and spec.default_reward == "private"
    env, params = motivegym.make_jax("Territory-v0")
    assert env.n_agents(params) == 9 and env.num_actions(params) == 9 and env.layout(params).shape == (23, 39)
    assert (
        int(env.resource_mask(params).sum()) == 88
        and float(params.reward_rate) == pytest.approx(0.01)
        and int(params.reward_delay) == 25
    )
    assert env.observation_size(params) == 11 * 11 * 6 + 3
    env, rooms = motivegym.make_jax("Territory-v0", preset="rooms")
    assert env.layout(rooms).shape == (21, 21) and int(env.resource_mask(rooms).sum()) == 180


def test_observation_tells_own_claims_from_others():
    state = placed([[2, 3], [1, 8], [4, 1]], [E, W, N], owner=[((2, 5), 0), ((1, 5), 1)])
    obs = np.asarray(ENV.observe(state, PARAMS))
    cells = obs[0, : 4 * 3 * 6].reshape(4, 3, 6)  # rows 2 ahead .. 1 behind; agent 0 faces east
    np.testing.assert_array_equal(cells[0, 1], [0, 0, 1, 0, 0, 0])  # (2, 5): its own claim
    np.testing.assert_array_equal(cells[0, 0], [0, 0, 0, 1, 0, 0])  # (1, 5): agent 1's claim, on its left
    np.testing.assert_array_equal(cells[1, 2], [0, 1, 0, 0, 0, 0])  # (3, 4): unclaimed, ahead on its right
    np.testing.assert_allclose(obs[0, -3:], [1.0, 0.0, 0.0])


def test_same_key_same_trajectory_under_jit_and_vmap(seeded_rollouts_repeat):
    _, payoffs, _ = seeded_rollouts_repeat(ENV, PARAMS, n_envs=4, steps=30, seed=5, other_seed=6)
    assert (payoffs >= 0).all()


def test_params_are_validated():
    env = Territory()
    with pytest.raises(ValueError, match="reward_rate"):
        env.default_params(reward_rate=1.5)
    with pytest.raises(ValueError, match="spawn points"):
        env.default_params(n_agents=19)
    with pytest.raises(ValueError, match="no resources"):
        env.default_params(layout=("#####", "#P P#", "#####"), n_agents=2)
    with pytest.raises(ValueError, match="preset"):
        env.default_params(preset="closed")
    with pytest.raises(ValueError, match="zap_beam_width"):
        env.default_params(zap_beam_width=2)
    params = env.default_params(layout="\n".join(SMALL), n_agents=4)
    assert params.layout == SMALL


def test_renders():
    state = placed([[2, 3], [1, 8], [4, 1]], [E, W, N], owner=[((2, 5), 0), ((1, 5), 1)])
    state = dataclasses.replace(state, claim_age=state.claim_age.at[1, 5].set(0))
    lines = ENV.render_text(state, PARAMS).splitlines()
    assert lines[2] == "#    b  1#" and lines[3] == "#  0 A   #"
    image = ENV.render_rgb(state, PARAMS)
    assert image.shape == (48, 80, 3) and image.dtype == np.uint8


def test_doors_agree_gymnasium_pettingzoo_and_make_vec(assert_doors_agree):
    kwargs = {"layout": SMALL, "n_agents": 3, "max_steps": 8, "view_ahead": 2, "view_behind": 1, "view_side": 1, **RULES}
    assert_doors_agree("Territory-v0", kwargs, np.random.default_rng(0).integers(0, 9, (8, 3)), seed=4, vec_envs=2)


# ----- scripted bots (motivegym.baselines.gift_territory_bots) -----
def test_bots_defector_zaps_and_steals_cooperator_claims_only_unclaimed_and_never_zaps():
    from motivegym.baselines.bots import make_bot
    from motivegym.baselines.gift_territory_bots import TerritoryBot

    assert make_bot("Territory-v0", "defector", ENV, PARAMS).aggressive is True
    peaceful, hostile = TerritoryBot(aggressive=False, epsilon=0.0), TerritoryBot(aggressive=True, epsilon=0.0)

    def acts(policy, state):
        return np.asarray(policy(jax.random.PRNGKey(0), ENV.observe(state, PARAMS), policy.init(ENV, PARAMS))[0])

    close = placed([[2, 1], [2, 3], [1, 8]], [E, W, W])  # agent 1 within agent 0's zap reach
    assert acts(hostile, close)[0] == ZAP and acts(peaceful, close)[0] != ZAP
    unclaimed = placed([[3, 2], [1, 8], [4, 1]], [E, W, N])  # lane (3, 3) floor, (3, 4) unclaimed
    assert acts(peaceful, unclaimed)[0] == CLAIM and acts(hostile, unclaimed)[0] == CLAIM
    theirs = placed([[3, 3], [1, 8], [4, 1]], [E, W, N], owner=[((3, 4), 1)])  # lane (3, 4) agent 1's, (3, 5) unclaimed
    assert acts(hostile, theirs)[0] == CLAIM and acts(peaceful, theirs)[0] not in (CLAIM, ZAP)
