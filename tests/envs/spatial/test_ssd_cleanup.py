"""SSD Cleanup under ``preset="ssd"``: the scenarios of SSD's ``tests/test_envs.py`` (``TestCleanupEnv``: cleanup
beam, firing beam, spawn probabilities, reset)."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from motivegym.envs.spatial import ssd_rules
from motivegym.envs.spatial.cleanup import Cleanup
from motivegym.envs.spatial.grid import AgentState, parse_layout
from motivegym.envs.spatial.ssd_maps import CLEAN, FIRE, STAY, to_legend

UP, RIGHT, DOWN, LEFT = range(4)


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


def covered_cells(pos, orient, walls, length=5):
    _, covered = ssd_rules.tag_hits(jnp.asarray([pos]), jnp.asarray([orient]), jnp.asarray([True]), jnp.asarray(walls), length, 3)
    cells = ssd_rules.beam_cells(jnp.asarray([pos]), jnp.asarray([orient]), length, 3)
    return {tuple(c) for c in np.asarray(cells[0])[np.asarray(covered[0])].tolist()}


# ----- Cleanup (SSD FIRING_CLEANUP_MAP, CLEANUP_PROB_MAP, MINI_CLEANUP_MAP) -----
FIRING_CLEANUP = to_legend(("@@@@@@", "@    @", "@HHP @", "@RH  @", "@H P @", "@@@@@@"))
CLEANUP = Cleanup()
C_PARAMS = CLEANUP.default_params(preset="ssd", layout=FIRING_CLEANUP, n_agents=2, view_ahead=2, view_behind=2, view_side=2)
C_STEP = jax.jit(CLEANUP.step)
WASTE = [(2, 1), (2, 2), (3, 2), (4, 1)]


def cells_of(grid):
    return {tuple(c) for c in np.argwhere(np.asarray(grid)).tolist()}


def test_clean_beam_cleans_the_first_waste_of_each_lane_and_stops_at_agents():
    """SSD test_cleanup_beam: agent-0 at [3, 3] faces left; the south lane stops at agent-1 on [4, 2]."""
    state = placed(CLEANUP, C_PARAMS, [[3, 3], [4, 2]], [LEFT, UP], waste=WASTE, apples=[])
    state, _, payoffs, _, info = C_STEP(jax.random.PRNGKey(12), state, jnp.asarray([CLEAN, STAY]), C_PARAMS)
    assert cells_of(state.waste) == {(2, 1), (4, 1)}  # 2 of 5 polluted = 0.4: no new waste
    np.testing.assert_array_equal(payoffs, [0.0, 0.0])  # cleaning is free; the clean beam hurts nobody
    np.testing.assert_array_equal(info["waste_cleaned"], [2, 0])


def test_fire_beam_neither_cleans_nor_stops_at_waste():
    state = placed(CLEANUP, C_PARAMS, [[3, 3], [4, 2]], [LEFT, UP], waste=WASTE, apples=[])
    state, _, payoffs, _, _ = C_STEP(jax.random.PRNGKey(12), state, jnp.asarray([FIRE, STAY]), C_PARAMS)
    assert cells_of(state.waste) == set(WASTE)
    np.testing.assert_array_equal(payoffs, [-1.0, -50.0])
    assert (2, 1) in covered_cells([3, 3], LEFT, parse_layout(FIRING_CLEANUP).walls)


def test_clean_beam_cleans_waste_under_an_agent():
    state = placed(CLEANUP, C_PARAMS, [[1, 3], [2, 2]], [DOWN, UP], waste=WASTE, apples=[])
    state, *_ = C_STEP(jax.random.PRNGKey(6), state, jnp.asarray([CLEAN, STAY]), C_PARAMS)
    assert not state.waste[2, 2]


def test_clean_beams_add_up_whatever_the_order():
    """SSD: 'the beams add constructively': the second beam passes the waste the first one removed."""
    for key in range(6):
        state = placed(CLEANUP, C_PARAMS, [[4, 3], [2, 3]], [LEFT, LEFT], waste=[(3, 2), (3, 1)], apples=[])
        _, _, _, _, info = C_STEP(jax.random.PRNGKey(key), state, jnp.asarray([CLEAN, CLEAN]), C_PARAMS)
        assert int(info["waste_cleaned"].sum()) == 2  # both cells (new waste may spawn afterwards at density 0)


def test_clean_beam_order_is_random_and_fair():
    """Who cleans the nearer cell depends on the shuffled firing order (SSD update_custom_moves)."""
    state = placed(CLEANUP, C_PARAMS, [[4, 3], [2, 3]], [LEFT, LEFT], waste=[(3, 2)], apples=[])
    many = jax.jit(jax.vmap(C_STEP, in_axes=(0, None, None, None)))
    info = many(jax.random.split(jax.random.PRNGKey(5), 400), state, jnp.asarray([CLEAN, CLEAN]), C_PARAMS)[4]
    credit = np.asarray(info["waste_cleaned"])
    assert np.all(credit.sum(axis=1) == 1)
    assert 0.4 < credit[:, 0].mean() < 0.6


@pytest.mark.parametrize("waste, apple_p, waste_p", [(4, 0.0, 0.0), (2, 0.0, 0.0), (1, 0.025, 0.5), (0, 0.05, 0.5)])
def test_spawn_probabilities_follow_the_waste_density(waste, apple_p, waste_p):
    """SSD test_spawn_probabilities on its 5-cell river: density ≥ 0.4 stops apples and waste."""
    _, apples, new_waste = ssd_rules.cleanup_probabilities(jnp.int32(waste), 5, jnp.float32(0.05), jnp.float32(0.5), jnp.float32(0.4), jnp.float32(0.0))
    np.testing.assert_allclose([float(apples), float(new_waste)], [apple_p, waste_p], rtol=1e-6)


def test_at_most_one_waste_cell_a_step_uniform_over_clean_cells_even_under_agents():
    river = jnp.zeros((3, 6), bool).at[1, 1:5].set(True)
    waste = jnp.zeros((3, 6), bool).at[1, 1].set(True)  # 3 clean cells
    occupied = jnp.zeros((3, 6), bool).at[1, 2].set(True)
    spawn = jax.jit(jax.vmap(lambda k: ssd_rules.cleanup_spawn(k, jnp.zeros((3, 6), bool), waste, np.zeros((0, 2), np.int32), river, occupied, 0.0, 0.5)[1]))
    new = np.asarray(spawn(jax.random.split(jax.random.PRNGKey(9), 4000))) & ~np.asarray(waste)
    count = new.sum(axis=(1, 2))
    assert count.max() == 1
    assert abs(count.mean() - (1 - 0.5**3)) < 0.02
    share = new[count == 1][:, 1, 2:5].mean(axis=0)
    np.testing.assert_allclose(share, [1 / 3] * 3, atol=0.03)


def test_cleanup_apples_never_spawn_under_agents():
    apples_at = np.array([[0, 0], [0, 1]], np.int32)
    occupied = jnp.zeros((2, 2), bool).at[0, 1].set(True)
    apples, _ = ssd_rules.cleanup_spawn(jax.random.PRNGKey(0), jnp.zeros((2, 2), bool), jnp.zeros((2, 2), bool), apples_at, jnp.zeros((2, 2), bool), occupied, 1.0, 0.0)
    assert cells_of(apples) == {(0, 0)}


def test_cleanup_reset_has_no_apples_on_a_polluted_map():
    """SSD test_reset (MINI_CLEANUP_MAP): waste 1 of 2 river cells, so the reset spawn pass grows nothing."""
    mini = to_legend(("@@@@@@", "@ P  @", "@H BB@", "@R BB@", "@S BP@", "@@@@@@"))
    params = CLEANUP.default_params(preset="ssd", layout=mini, n_agents=2)
    state, _ = CLEANUP.reset(jax.random.PRNGKey(0), params)
    assert not bool(state.apples.any()) and cells_of(state.waste) == {(2, 1)}


def test_the_reset_spawn_pass_runs():
    """SSD's reset calls custom_map_update: a clean river gets its first waste cell (p = 1 − 0.5^3) at reset."""
    clean = to_legend(("@@@@@", "@RRR@", "@P P@", "@BBB@", "@@@@@"))
    params = CLEANUP.default_params(preset="ssd", layout=clean, n_agents=2, apple_respawn_prob=1.0)
    states = jax.jit(jax.vmap(lambda k: CLEANUP.reset(k, params)[0]))(jax.random.split(jax.random.PRNGKey(2), 400))
    assert np.all(np.asarray(states.apples).sum(axis=(1, 2)) == 3)  # every apple cell grows at density 0
    assert 0.8 < np.asarray(states.waste).sum(axis=(1, 2)).mean() < 0.95
