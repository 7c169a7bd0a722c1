"""The shared substrate mechanics (``grid_extensions`` and the view / render helpers of ``grid``): rule scenarios."""

import jax.numpy as jnp
import numpy as np
import pytest

from motivegym.envs.spatial import grid
from motivegym.envs.spatial.grid import AgentState
from motivegym.envs.spatial.grid_extensions import (
    countdown_then_fire,
    first_hits,
    first_stops,
    graduated_sanctions,
    hits_per_cell,
    tick_cooldown,
)

N, E, S, W = range(4)


def east_lane(pos, length=4, width=1, walls=None):
    """Beam cells and reach of agent 0 facing east on an open 5×7 grid (``walls`` optional)."""
    pos = jnp.asarray(pos, jnp.int32)
    orient = jnp.full(len(pos), E, jnp.int32)
    cells = grid.beam_cells(pos, orient, length, width)
    walls = jnp.zeros((5, 7), bool) if walls is None else walls
    return pos, cells, grid.beam_reach(cells, walls)


def test_a_lane_stops_at_the_first_agent_or_blocking_cell():
    pos, cells, reach = east_lane([[2, 1], [2, 3], [2, 4]])
    firing = jnp.array([True, False, False])
    hits, cell_hits = first_hits(cells, reach, firing, pos, jnp.ones(3, bool))
    np.testing.assert_array_equal(hits[0], [False, True, False])  # agent 2 stands behind agent 1
    assert not cell_hits.any()
    hits, _ = first_hits(cells, reach, firing, pos, jnp.array([True, False, True]))
    np.testing.assert_array_equal(hits[0], [False, False, True])  # an untargetable agent does not stop the lane
    blocking = jnp.zeros((5, 7), bool).at[2, 2].set(True)
    hits, cell_hits = first_hits(cells, reach, firing, pos, jnp.ones(3, bool), blocking)
    assert not hits.any() and bool(cell_hits[0, 0, 0]) and int(cell_hits.sum()) == 1  # the block one cell ahead
    walls = jnp.zeros((5, 7), bool).at[2, 2].set(True)
    _, cells, reach = east_lane([[2, 1], [2, 3], [2, 4]], walls=walls)
    hits, cell_hits = first_hits(cells, reach, firing, pos, jnp.ones(3, bool), blocking)
    assert not hits.any() and not cell_hits.any()  # a wall stops the lane before anything is hit


def test_first_stops_reports_the_lane_cell_of_each_hit_and_nothing_for_idle_agents():
    pos, cells, reach = east_lane([[2, 1], [2, 3]], width=3)
    agent_hits, _ = first_stops(cells, reach, jnp.array([True, True]), pos, jnp.ones(2, bool))
    assert agent_hits.shape == (2, 3, 4, 2)
    assert bool(agent_hits[0, 1, 1, 1]) and int(agent_hits.sum()) == 1  # centre lane, two cells ahead; agent 1's lanes are empty
    agent_hits, cell_hits = first_stops(cells, reach, jnp.array([False, False]), pos, jnp.ones(2, bool), jnp.ones((5, 7), bool))
    assert not agent_hits.any() and not cell_hits.any()


def test_hits_per_cell_counts_every_lane():
    cells = jnp.array([[[[1, 2], [1, 3]]], [[[1, 2], [0, 0]]]], jnp.int32)  # [n=2, w=1, L=2, 2]
    cell_hits = jnp.array([[[True, False]], [[True, False]]])
    counts = hits_per_cell(cell_hits, cells, (3, 4))
    assert int(counts[1, 2]) == 2 and int(counts.sum()) == 2


@pytest.mark.parametrize("period", [1, 3])
def test_both_cooldown_conventions_fire_on_the_same_steps(period):
    presses = np.random.default_rng(period).random((20, 3)) < 0.6
    before, after = jnp.zeros(3, jnp.int32), jnp.zeros(3, jnp.int32)  # countdown_then_fire's timer, tick_cooldown's
    for pressed in presses:
        ready_next = np.asarray(before <= 1)
        fired_a, before = countdown_then_fire(before, jnp.asarray(pressed), period)
        fired_b = jnp.asarray(pressed) & (after == 0)
        after = tick_cooldown(after, fired_b, jnp.int32(period))
        np.testing.assert_array_equal(fired_a, fired_b)
        np.testing.assert_array_equal(np.asarray(fired_a), ready_next & pressed)
        np.testing.assert_array_equal(np.maximum(np.asarray(before) - 1, 0), np.asarray(after))


def test_graduated_sanctions_freeze_first_then_remove():
    freeze, remove = graduated_sanctions(jnp.array([1, 1, 2, 0]), jnp.array([False, True, False, True]))
    np.testing.assert_array_equal(freeze, [True, False, False, False])
    np.testing.assert_array_equal(remove, [False, True, True, False])


def test_views_of_others_hide_only_the_observers_own_body():
    walls = jnp.zeros((3, 3), bool)
    agents_map = jnp.zeros((3, 3), bool).at[1, 1].set(True).at[0, 1].set(True)
    channels = jnp.stack([walls, agents_map, agents_map], axis=-1)  # the last two channels mark agents
    pos, orient = jnp.array([[1, 1]], jnp.int32), jnp.array([N], jnp.int32)
    one = np.asarray(grid.views_of_others(channels, pos, orient, 1, 1, 1)).reshape(3, 3, 3)
    np.testing.assert_array_equal(one[1, 1], [0, 1, 0])  # own cell: the last channel hidden
    np.testing.assert_array_equal(one[0, 1], [0, 1, 1])  # the agent ahead is seen
    two = np.asarray(grid.views_of_others(channels, pos, orient, 1, 1, 1, body_channels=2)).reshape(3, 3, 3)
    np.testing.assert_array_equal(two[1, 1], [0, 0, 0])


def test_text_render_pieces():
    agents = AgentState(pos=jnp.array([[1, 1], [0, 2]], jnp.int32), orient=jnp.array([E, S], jnp.int32), timeout=jnp.array([0, 3], jnp.int32))
    chars = np.full((3, 3), " ")
    grid.draw_agents(chars, agents)
    assert ["".join(r) for r in chars] == ["   ", " 0 ", "   "]  # the removed agent 1 is not drawn
    assert grid.agent_status(agents) == ["0>", "1:out 3"]
    assert grid.floor_canvas((2, 3)).shape == (2, 3, 3)
