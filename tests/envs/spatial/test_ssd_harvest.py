"""SSD beams and apples under ``preset="ssd"``: the scenarios of SSD's ``tests/test_envs.py`` (``TestHarvestEnv``:
rewards, beam conflicts, apple spawn) plus the beam geometry of its fire-range test."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from motivegym.envs.spatial import ssd_rules
from motivegym.envs.spatial.grid import AgentState
from motivegym.envs.spatial.harvest import Harvest
from motivegym.envs.spatial.ssd_maps import FIRE, MOVE_RIGHT, MOVE_UP, STAY, to_legend

UP, RIGHT, DOWN, LEFT = range(4)

# ----- beam geometry (SSD fire-range test: an agent at [6, 6] of a 13×13 room) -----
ROOM = np.zeros((13, 13), bool)
ROOM[0, :] = ROOM[-1, :] = ROOM[:, 0] = ROOM[:, -1] = True


def covered_cells(pos, orient, walls=ROOM, length=5):
    _, covered = ssd_rules.tag_hits(jnp.asarray([pos]), jnp.asarray([orient]), jnp.asarray([True]), jnp.asarray(walls), length, 3)
    cells = ssd_rules.beam_cells(jnp.asarray([pos]), jnp.asarray([orient]), length, 3)
    return {tuple(c) for c in np.asarray(cells[0])[np.asarray(covered[0])].tolist()}


@pytest.mark.parametrize(
    "orient, centre, sides",
    [
        (DOWN, [(r, 6) for r in range(7, 12)], [(r, c) for r in range(6, 11) for c in (5, 7)]),
        (RIGHT, [(6, c) for c in range(7, 12)], [(r, c) for c in range(6, 11) for r in (5, 7)]),
        (LEFT, [(6, c) for c in range(1, 6)], [(r, c) for c in range(2, 7) for r in (5, 7)]),
        (UP, [(r, 6) for r in range(1, 6)], [(r, c) for r in range(2, 7) for c in (5, 7)]),
    ],
)
def test_beam_centre_lane_starts_ahead_and_side_lanes_level_with_the_firer(orient, centre, sides):
    assert covered_cells([6, 6], orient) == set(centre) | set(sides)


def test_beam_lanes_stop_at_walls():
    assert covered_cells([2, 6], UP) == {(1, 6), (2, 5), (1, 5), (2, 7), (1, 7)}


# ----- Harvest (SSD MINI_HARVEST_MAP and an open room) -----
MINI_HARVEST = to_legend(("@@@@@@", "@ P  @", "@  AA@", "@  AA@", "@  AP@", "@@@@@@"))
OPEN = to_legend(("@@@@@@@", "@P   P@", "@     @", "@     @", "@     @", "@P   P@", "@@@@@@@"))
HARVEST = Harvest()
H_PARAMS = HARVEST.default_params(preset="ssd", layout=OPEN, n_agents=4, view_ahead=2, view_behind=2, view_side=2)
H_STEP = jax.jit(HARVEST.step)


def placed(env, params, pos, orient, **grids):
    state, _ = env.reset(jax.random.PRNGKey(0), params)
    n = len(pos)
    agents = AgentState(pos=jnp.asarray(pos, jnp.int32), orient=jnp.asarray(orient, jnp.int32), timeout=jnp.zeros(n, jnp.int32))
    shape = env.layout(params).shape
    arrays = {}
    for name, cells in grids.items():
        grid = np.zeros(shape, bool)
        for cell in cells:
            grid[cell] = True
        arrays[name] = jnp.asarray(grid)
    return dataclasses.replace(state, agents=agents, t=jnp.int32(1), **arrays)


def test_eating_pays_one_and_firing_costs_one_and_a_hit_fifty():
    """SSD test_agent_rewards: both step onto apples (+1), then agent-1 fires at agent-0 in front of it."""
    params = HARVEST.default_params(preset="ssd", layout=MINI_HARVEST, n_agents=2, view_ahead=2, view_behind=2, view_side=2)
    state = placed(HARVEST, params, [[2, 2], [3, 2]], [UP, UP], apples=[(2, 3), (2, 4), (3, 3), (3, 4), (4, 3)])
    state, _, payoffs, _, info = H_STEP(jax.random.PRNGKey(0), state, jnp.asarray([MOVE_RIGHT, MOVE_RIGHT]), params)
    np.testing.assert_array_equal(payoffs, [1.0, 1.0])
    assert not state.apples[2, 3] and not state.apples[3, 3]
    state, _, payoffs, _, info = H_STEP(jax.random.PRNGKey(1), state, jnp.asarray([STAY, FIRE]), params)
    np.testing.assert_array_equal(payoffs, [-50.0, -1.0])
    np.testing.assert_array_equal(info["tag_hits"], [[False, False], [True, False]])


def step_open(pos, orient, actions, key=0):
    state = placed(HARVEST, H_PARAMS, pos, orient, apples=[])
    return H_STEP(jax.random.PRNGKey(key), state, jnp.asarray(actions), H_PARAMS)


def test_an_agent_level_with_the_firer_is_hit():
    _, _, payoffs, _, info = step_open([[3, 3], [3, 2], [1, 1], [1, 5]], [UP] * 4, [FIRE, STAY, STAY, STAY])
    np.testing.assert_array_equal(payoffs, [-1.0, -50.0, 0.0, 0.0])


def test_the_first_agent_in_a_lane_shields_the_ones_behind():
    _, _, payoffs, _, _ = step_open([[5, 3], [4, 3], [3, 3], [1, 1]], [UP] * 4, [FIRE, STAY, STAY, STAY])
    np.testing.assert_array_equal(payoffs, [-1.0, -50.0, 0.0, 0.0])


def test_two_hits_in_one_step_cost_a_hundred_and_nobody_is_removed():
    state, _, payoffs, _, info = step_open([[3, 1], [3, 5], [3, 3], [5, 5]], [RIGHT, LEFT, UP, UP], [FIRE, FIRE, STAY, STAY])
    np.testing.assert_array_equal(payoffs, [-1.0, -1.0, -100.0, 0.0])
    np.testing.assert_array_equal(state.agents.timeout, [0, 0, 0, 0])
    assert not bool(np.any(info["removed"]))
    state, *_ = H_STEP(jax.random.PRNGKey(1), state, jnp.asarray([STAY, STAY, MOVE_UP, STAY]), H_PARAMS)
    assert np.asarray(state.agents.pos)[2].tolist() == [2, 3]  # the hit agent still acts


def test_firing_at_each_other_leaves_both_on_the_map():
    state, _, payoffs, _, _ = step_open([[3, 2], [3, 4], [1, 1], [5, 5]], [RIGHT, LEFT, UP, UP], [FIRE, FIRE, STAY, STAY])
    np.testing.assert_array_equal(payoffs, [-51.0, -51.0, 0.0, 0.0])
    assert np.asarray(state.agents.pos)[:2].tolist() == [[3, 2], [3, 4]]


def test_harvest_regrowth_counts_the_three_by_three_window():
    apples = jnp.zeros((7, 7), bool).at[3, 3].set(True)
    counts = np.asarray(ssd_rules.window_count(apples, 2))
    assert counts[2, 2] == counts[2, 4] == counts[4, 4] == counts[3, 2] == 1
    assert counts[1, 3] == counts[3, 5] == counts[1, 1] == 0  # two cells away: outside SSD's window
    assert ssd_rules.window_offsets(2).shape == (9, 2)


def test_harvest_regrowth_rates_by_count_and_never_under_agents():
    apples = np.zeros((7, 9), bool)
    apples[1, 1] = True  # (2, 2) sees 1 apple
    apples[1, 4] = apples[1, 5] = True  # (2, 5) sees 2 apples
    apples[5, 1] = apples[5, 2] = apples[5, 3] = True  # (4, 2) sees 3
    cells = np.array([[2, 2], [2, 5], [4, 2], [3, 7], [4, 6]], np.int32)  # (3, 7): 0 apples; (4, 6): under an agent
    occupied = jnp.zeros((7, 9), bool).at[4, 6].set(True)
    probs = jnp.asarray([0.0, 0.2, 0.5, 0.9])
    grow = jax.jit(jax.vmap(lambda k: ssd_rules.harvest_regrowth(k, jnp.asarray(apples), cells, occupied, probs, 2)))
    rates = np.asarray(grow(jax.random.split(jax.random.PRNGKey(3), 4000)))[:, cells[:, 0], cells[:, 1]].mean(axis=0)
    np.testing.assert_allclose(rates[:3], [0.2, 0.5, 0.9], atol=0.03)
    assert rates[3] == 0.0 and rates[4] == 0.0


def test_an_isolated_patch_fills_up_as_in_ssd_test_apple_spawn():
    """SSD: one apple left among five apple cells regrows the patch (SSD asserts it after 300 steps of its seeded
    run; at 0.005 a step for the first new apple, 1500 steps make a miss ~1e-9 likely for any key)."""
    params = HARVEST.default_params(preset="ssd", layout=MINI_HARVEST, n_agents=2, view_ahead=2, view_behind=2, view_side=2)
    state = placed(HARVEST, params, [[1, 2], [4, 4]], [UP, UP], apples=[(4, 3)])

    def body(state, key):
        return HARVEST.step(key, state, jnp.asarray([STAY, STAY]), params)[0], None

    final, _ = jax.jit(lambda s: jax.lax.scan(body, s, jax.random.split(jax.random.PRNGKey(11), 1500)))(state)
    assert int(final.apples.sum()) == 5


def test_harvest_reset_has_every_apple():
    params = HARVEST.default_params(preset="ssd", layout=MINI_HARVEST, n_agents=2)
    state, _ = HARVEST.reset(jax.random.PRNGKey(0), params)
    assert {tuple(c) for c in np.argwhere(np.asarray(state.apples)).tolist()} == {(2, 3), (2, 4), (3, 3), (3, 4), (4, 3)}
