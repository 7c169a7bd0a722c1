"""SSD movement and conflict resolution under ``preset="ssd"``: the scenarios of SSD's
``tests/test_envs.py`` (``TestMapEnv.test_agent_actions``, ``test_agent_conflict``) on the same maps.

SSD leaves idle agents out of the action dict; here every agent acts, and an idle agent does ``STAY``
(the same outcome in SSD: a stayer and an agent without a move both block their cell).
"""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from motivegym.envs.spatial.grid import AgentState
from motivegym.envs.spatial.harvest import Harvest
from motivegym.envs.spatial.ssd_maps import (
    FIRE,
    MOVE_DOWN,
    MOVE_LEFT,
    MOVE_RIGHT,
    MOVE_UP,
    STAY,
    TURN_CLOCKWISE,
    TURN_COUNTERCLOCKWISE,
    to_legend,
)

UP, RIGHT, DOWN, LEFT = range(4)
#: SSD's BASE_MAP_2 (6×6, walls around a 4×4 floor) with spawn points for four agents
MAP = to_legend(("@@@@@@", "@ P  @", "@  P @", "@ P  @", "@   P@", "@@@@@@"))
ENV = Harvest()
PARAMS = ENV.default_params(preset="ssd", layout=MAP, n_agents=4, view_ahead=2, view_behind=2, view_side=2)
STEP = jax.jit(ENV.step)
KEYS = jax.random.split(jax.random.PRNGKey(7), 400)
MANY = jax.jit(jax.vmap(ENV.step, in_axes=(0, None, None, None)))
PARKED = [[4, 4], [1, 4], [1, 1], [4, 1]]  # corners, out of the way


def placed(pos, orient=None):
    """A state with agents at ``pos`` (the rest parked in corners), all facing ``orient`` (default UP)."""
    pos = list(pos) + PARKED[len(pos) :]
    orient = [UP] * 4 if orient is None else list(orient) + [UP] * (4 - len(orient))
    state, _ = ENV.reset(jax.random.PRNGKey(0), PARAMS)
    agents = AgentState(pos=jnp.asarray(pos, jnp.int32), orient=jnp.asarray(orient, jnp.int32), timeout=jnp.zeros(4, jnp.int32))
    return dataclasses.replace(state, agents=agents, apples=jnp.zeros_like(state.apples), t=jnp.int32(1))


def act(*actions):
    return jnp.asarray(list(actions) + [STAY] * (4 - len(actions)), jnp.int32)


def step(state, *actions, key=1):
    state, *_ = STEP(jax.random.PRNGKey(key), state, act(*actions), PARAMS)
    return state


def positions(state):
    return np.asarray(state.agents.pos).tolist()


@pytest.mark.parametrize(
    "facing, expected",
    [
        (LEFT, {MOVE_LEFT: [3, 2], MOVE_RIGHT: [1, 2], MOVE_UP: [2, 1], MOVE_DOWN: [2, 3]}),
        (UP, {MOVE_LEFT: [2, 1], MOVE_RIGHT: [2, 3], MOVE_UP: [1, 2], MOVE_DOWN: [3, 2]}),
        (DOWN, {MOVE_LEFT: [2, 3], MOVE_RIGHT: [2, 1], MOVE_UP: [3, 2], MOVE_DOWN: [1, 2]}),
        (RIGHT, {MOVE_LEFT: [1, 2], MOVE_RIGHT: [3, 2], MOVE_UP: [2, 3], MOVE_DOWN: [2, 1]}),
    ],
)
def test_moves_are_egocentric_as_in_ssd(facing, expected):
    """SSD test_agent_actions: MOVE_UP is forward, MOVE_LEFT the agent's left, from [2, 2]."""
    for action, cell in expected.items():
        assert positions(step(placed([[2, 2]], [facing]), action))[0] == cell


def test_stay_and_walls_keep_the_cell():
    state = placed([[1, 2]])
    assert positions(step(state, STAY))[0] == [1, 2]
    assert positions(step(state, MOVE_UP))[0] == [1, 2]  # wall above
    corner = placed([[4, 4]] + [[1, 1], [1, 4], [4, 1]])
    assert positions(step(corner, MOVE_RIGHT))[0] == [4, 4]
    assert positions(step(corner, MOVE_DOWN))[0] == [4, 4]


def test_turns_rotate_clockwise_and_counterclockwise():
    state = placed([[2, 2]])
    seen = []
    for _ in range(4):
        state = step(state, TURN_CLOCKWISE)
        seen.append(int(state.agents.orient[0]))
    assert seen == [RIGHT, DOWN, LEFT, UP]
    seen = []
    for _ in range(4):
        state = step(state, TURN_COUNTERCLOCKWISE)
        seen.append(int(state.agents.orient[0]))
    assert seen == [LEFT, DOWN, RIGHT, UP]


def test_agents_cannot_walk_into_a_staying_agent_or_swap():
    state = placed([[3, 3], [3, 4]])
    assert positions(step(state, MOVE_RIGHT, STAY))[:2] == [[3, 3], [3, 4]]
    assert positions(step(state, STAY, MOVE_LEFT))[:2] == [[3, 3], [3, 4]]
    assert positions(step(state, MOVE_RIGHT, MOVE_LEFT))[:2] == [[3, 3], [3, 4]]
    assert positions(step(state, MOVE_RIGHT, FIRE))[:2] == [[3, 3], [3, 4]]  # a firing agent has no move: it blocks


def test_a_follower_takes_the_cell_its_leader_vacates():
    """SSD: 'agents can walk into other agents if moves are de-conflicting' (every time, any key)."""
    state = placed([[3, 3], [3, 4]])
    for key in range(20):
        assert positions(step(state, MOVE_RIGHT, MOVE_UP, key=key))[:2] == [[3, 4], [2, 4]]
    # a chain of three, the last listed first: still everyone moves
    state = placed([[3, 1], [3, 2], [3, 3]])
    assert positions(step(state, MOVE_RIGHT, MOVE_RIGHT, MOVE_RIGHT))[:3] == [[3, 2], [3, 3], [3, 4]]


def many(state, *actions):
    return np.asarray(MANY(KEYS, state, act(*actions), PARAMS)[0].agents.pos)


def test_two_agents_entering_one_cell_win_half_the_time_each():
    pos = many(placed([[3, 2], [3, 4]]), MOVE_RIGHT, MOVE_LEFT)
    first = np.all(pos[:, 0] == [3, 3], axis=1)
    second = np.all(pos[:, 1] == [3, 3], axis=1)
    assert np.all(first ^ second)
    assert np.all(np.where(first[:, None], pos[:, 1] == [3, 4], pos[:, 0] == [3, 2]))
    assert 0.4 < first.mean() < 0.6


def test_three_agents_entering_one_cell_win_a_third_each():
    pos = many(placed([[3, 2], [3, 4], [2, 3]]), MOVE_RIGHT, MOVE_LEFT, MOVE_DOWN)
    winners = np.stack([np.all(pos[:, i] == [3, 3], axis=1) for i in range(3)], axis=1)
    assert np.all(winners.sum(axis=1) == 1)
    assert np.all((0.25 < winners.mean(axis=0)) & (winners.mean(axis=0) < 0.42))


def test_moving_into_an_agent_that_contests_another_cell_succeeds_when_it_wins():
    """SSD: agent-2 steps into agent-0's cell while agent-0 contests [3, 3] with agent-1: ~50 %."""
    pos = many(placed([[3, 2], [3, 4], [2, 2]]), MOVE_RIGHT, MOVE_LEFT, MOVE_DOWN)
    zero_won = np.all(pos[:, 0] == [3, 3], axis=1)
    assert np.all(np.all(pos[:, 2] == [3, 2], axis=1) == zero_won)  # agent-2 moves exactly when agent-0 left
    assert np.all(np.all(pos[~zero_won, 2] == [2, 2], axis=1))
    assert 0.4 < zero_won.mean() < 0.6


def test_two_simultaneous_contests_are_independent_coin_flips():
    pos = many(placed([[3, 2], [3, 4], [1, 2], [1, 4]]), MOVE_UP, MOVE_UP, MOVE_DOWN, MOVE_DOWN)
    zero, one = np.all(pos[:, 0] == [2, 2], axis=1), np.all(pos[:, 1] == [2, 4], axis=1)
    assert 0.4 < zero.mean() < 0.6 and 0.4 < one.mean() < 0.6
    assert abs(np.corrcoef(zero, one)[0, 1]) < 0.2


def test_a_contested_cell_held_by_a_swapping_agent_stays_blocked():
    """SSD: agents 2 and 3 want [3, 2]; its occupant agent-0 would swap with agent-2: nobody moves."""
    state = placed([[3, 2], [2, 3], [2, 2], [3, 3]])
    pos = many(state, MOVE_UP, MOVE_DOWN, MOVE_DOWN, MOVE_LEFT)
    assert np.all(pos == np.asarray(positions(state)))


def test_a_contested_cell_whose_occupant_leaves_goes_to_one_contender():
    """SSD: agents 2 and 3 want [3, 2] while agent-0 steps down out of it: one of them gets it (~50 %)."""
    pos = many(placed([[3, 2], [4, 4], [2, 2], [3, 3]]), MOVE_DOWN, STAY, MOVE_DOWN, MOVE_LEFT)
    assert np.all(pos[:, 0] == [4, 2]) and np.all(pos[:, 1] == [4, 4])
    two_won = np.all(pos[:, 2] == [3, 2], axis=1)
    assert np.all(np.where(two_won[:, None], pos[:, 3] == [3, 3], (pos[:, 3] == [3, 2]) & (pos[:, 2] == [2, 2])))
    assert 0.4 < two_won.mean() < 0.6


def test_a_square_of_four_rotates():
    """SSD: 'a counterclockwise rotation of a square of agents should work properly'."""
    state = placed([[3, 2], [2, 3], [2, 2], [3, 3]])
    assert positions(step(state, MOVE_UP, MOVE_DOWN, MOVE_RIGHT, MOVE_LEFT)) == [[2, 2], [3, 3], [2, 3], [3, 2]]


def test_a_move_into_a_wall_does_not_unblock_a_conflict():
    """SSD: agent-0 steps into agent-1, who walks into the wall and so stays: nothing changes."""
    state = placed([[2, 1], [1, 1], [4, 4], [3, 3]])
    assert positions(step(state, MOVE_UP, MOVE_LEFT)) == positions(state)


def test_the_default_rules_are_different_a_follower_never_moves():
    """Contrast (why the preset exists): this package's rules fail a move into a cell occupied at the start."""
    from motivegym.envs.spatial.grid import FORWARD, NOOP

    params = ENV.default_params(layout=MAP, n_agents=4, view_ahead=2, view_behind=2, view_side=2)
    state, _ = ENV.reset(jax.random.PRNGKey(0), params)
    agents = AgentState(pos=jnp.asarray([[3, 3], [3, 4], [1, 1], [4, 1]], jnp.int32), orient=jnp.asarray([RIGHT, UP, UP, UP], jnp.int32), timeout=jnp.zeros(4, jnp.int32))
    state = dataclasses.replace(state, agents=agents)
    state, *_ = ENV.step(jax.random.PRNGKey(1), state, jnp.asarray([FORWARD, FORWARD, NOOP, NOOP]), params)
    assert positions(state)[:2] == [[3, 3], [2, 4]]


def test_a_contest_winner_can_end_up_sharing_a_cell_as_in_ssd():
    """SSD quirk (checked against SSD's own code by benchmarks/ssd_side_by_side.py --check): agents 1 and 2 contest
    [2, 2]; its occupant agent-0 tries to leave for [1, 2], where agent-3 turns (no move). SSD moves the contest's
    winner in at once, agent-0 then fails to leave, and two agents share [2, 2]."""
    pos = many(placed([[2, 2], [2, 1], [2, 3], [1, 2]]), MOVE_UP, MOVE_RIGHT, MOVE_LEFT, TURN_CLOCKWISE)
    assert np.all(pos[:, 0] == [2, 2]) and np.all(pos[:, 3] == [1, 2])
    one_won = np.all(pos[:, 1] == [2, 2], axis=1)
    assert np.all(np.where(one_won[:, None], pos[:, 2] == [2, 3], (pos[:, 2] == [2, 2]) & (pos[:, 1] == [2, 1])))
    assert 0.4 < one_won.mean() < 0.6
