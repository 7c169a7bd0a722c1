import jax
import jax.numpy as jnp
import numpy as np
import pytest

from motivegym.envs.spatial import grid
from motivegym.envs.spatial.grid import (
    BACKWARD,
    FORWARD,
    NOOP,
    STEP_LEFT,
    STEP_RIGHT,
    TURN_LEFT,
    TURN_RIGHT,
    AgentState,
)

N, E, S, W = range(4)
LAYOUT = (
    "#######",
    "#P   P#",
    "#  #  #",
    "#P   P#",
    "#######",
)


def agents(pos, orient, timeout=None):
    pos = jnp.asarray(pos, jnp.int32)
    timeout = jnp.zeros(len(pos), jnp.int32) if timeout is None else jnp.asarray(timeout, jnp.int32)
    return AgentState(pos=pos, orient=jnp.asarray(orient, jnp.int32), timeout=timeout)


def walls():
    return jnp.asarray(grid.parse_layout(LAYOUT).walls)


def test_parse_layout_reads_every_cell_kind():
    layout = grid.parse_layout(("#####", "#PA~#", "#a* #", "#####"))
    assert layout.shape == (4, 5)
    assert layout.walls.sum() == 14 and layout.walls[0].all()
    np.testing.assert_array_equal(layout.spawn_points, [[1, 1]])
    assert layout.initial_apples[1, 2] and layout.apple_spawn[1, 2] and layout.apple_spawn[2, 1] and not layout.initial_apples[2, 1]
    assert layout.river[1, 3] and layout.river[2, 2] and layout.initial_waste[2, 2] and not layout.initial_waste[1, 3]
    np.testing.assert_array_equal(layout.apple_cells, [[1, 2], [2, 1]])
    np.testing.assert_array_equal(layout.river_cells, [[1, 3], [2, 2]])


def test_parse_layout_rejects_bad_maps():
    with pytest.raises(ValueError, match="equal length"):
        grid.parse_layout(("###", "##"))
    with pytest.raises(ValueError, match="unknown characters"):
        grid.parse_layout(("#X#",))
    with pytest.raises(ValueError, match="spawn points"):
        grid.validate_layout(grid.parse_layout(LAYOUT), 5, "test")


def test_out_of_range_and_removed_agents_do_noop():
    decoded = grid.decode_actions(jnp.array([1, 9, -1, 7]), 8, jnp.array([True, True, True, False]))
    np.testing.assert_array_equal(decoded, [FORWARD, NOOP, NOOP, NOOP])


def test_turning_wraps_around_the_compass():
    orient = jnp.array([N, E, S, W, N, W])
    actions = jnp.array([TURN_LEFT, TURN_LEFT, TURN_RIGHT, TURN_RIGHT, NOOP, FORWARD])
    np.testing.assert_array_equal(grid.turn(orient, actions), [W, N, W, N, N, W])


@pytest.mark.parametrize(
    "orient, action, expected",
    [
        (N, FORWARD, [0, 1]), (N, BACKWARD, [2, 1]), (N, STEP_LEFT, [1, 0]), (N, STEP_RIGHT, [1, 2]),
        (E, FORWARD, [1, 2]), (E, STEP_LEFT, [0, 1]), (S, FORWARD, [2, 1]), (S, STEP_LEFT, [1, 2]),
        (W, FORWARD, [1, 0]), (W, STEP_RIGHT, [0, 1]), (W, BACKWARD, [1, 2]), (N, NOOP, [1, 1]),
    ],
)  # fmt: skip
def test_moves_are_relative_to_the_orientation(orient, action, expected):
    open_grid = jnp.zeros((3, 3), bool)
    pos = grid.move(jax.random.PRNGKey(0), agents([[1, 1]], [orient]), jnp.array([action]), open_grid)
    np.testing.assert_array_equal(pos, [expected])


def test_walls_and_grid_edges_block_moves():
    body = agents([[1, 3], [1, 1], [3, 1]], [S, N, W])  # (2,3) is a wall; (0,1) a border wall; (3,0) a wall
    pos = grid.move(jax.random.PRNGKey(0), body, jnp.array([FORWARD, FORWARD, FORWARD]), walls())
    np.testing.assert_array_equal(pos, [[1, 3], [1, 1], [3, 1]])
    off_grid = grid.move(jax.random.PRNGKey(0), agents([[0, 0]], [N]), jnp.array([FORWARD]), jnp.zeros((2, 2), bool))
    np.testing.assert_array_equal(off_grid, [[0, 0]])


def test_a_cell_occupied_at_the_start_of_the_step_cannot_be_entered():
    # agent 0 follows agent 1, which moves away: agent 0 waits; swapping agents both stay
    body = agents([[1, 1], [1, 2], [3, 1], [3, 2]], [E, E, E, W])
    pos = grid.move(jax.random.PRNGKey(0), body, jnp.array([FORWARD] * 4), walls())
    np.testing.assert_array_equal(pos, [[1, 1], [1, 3], [3, 1], [3, 2]])


def test_removed_agents_do_not_block_cells():
    body = agents([[1, 1], [1, 2]], [E, N], timeout=[0, 3])
    pos = grid.move(jax.random.PRNGKey(0), body, jnp.array([FORWARD, NOOP]), walls())
    np.testing.assert_array_equal(pos[0], [1, 2])


def test_contested_cell_goes_to_exactly_one_agent_chosen_by_the_key():
    body = agents([[1, 1], [1, 3]], [E, W])  # both step into (1, 2)
    actions = jnp.array([FORWARD, FORWARD])
    keys = jax.random.split(jax.random.PRNGKey(1), 200)
    pos = jax.vmap(lambda k: grid.move(k, body, actions, walls()))(keys)
    moved = np.all(np.asarray(pos) == [1, 2], axis=-1)
    assert (moved.sum(axis=1) == 1).all()
    assert 60 < moved[:, 0].sum() < 140  # fair over keys
    np.testing.assert_array_equal(grid.move(keys[0], body, actions, walls()), pos[0])  # deterministic per key


def test_beam_covers_lanes_ahead_and_stops_at_walls():
    cells = grid.beam_cells(jnp.array([[1, 3]]), jnp.array([S]), length=3, width=3)
    assert cells.shape == (1, 3, 3, 2)
    np.testing.assert_array_equal(cells[0, 1], [[2, 3], [3, 3], [4, 3]])  # centre lane straight down
    np.testing.assert_array_equal(cells[0, 0, 0], [2, 4])  # facing south, the left lane is east
    reach = grid.beam_reach(cells, walls())
    np.testing.assert_array_equal(reach[0], [[True, True, False], [False, False, False], [True, True, False]])


def test_beam_hits_agents_in_range_but_not_the_firer_or_removed_agents():
    pos = jnp.array([[1, 1], [1, 3], [1, 5], [3, 2]])
    orient = jnp.array([E, W, W, N])
    cells = grid.beam_cells(pos, orient, 2, 1)
    reach = grid.beam_reach(cells, walls())
    firing = jnp.array([True, False, True, False])
    targetable = jnp.array([True, True, True, True])
    hits = grid.beam_hits(cells, reach, firing, pos, targetable)
    expected = np.zeros((4, 4), bool)
    expected[0, 1] = True  # agent 0 hits agent 1 two cells east; agent 2 is out of range
    expected[2, 1] = True  # agent 2 hits agent 1 two cells west
    np.testing.assert_array_equal(hits, expected)
    hits = grid.beam_hits(cells, reach, firing, pos, jnp.array([True, False, True, True]))
    assert not hits[:, 1].any()


def test_beam_grid_marks_reached_cells_of_firing_agents():
    pos, orient = jnp.array([[1, 1], [3, 5]]), jnp.array([E, N])
    cells = grid.beam_cells(pos, orient, 2, 1)
    covered = grid.beam_grid(cells, grid.beam_reach(cells, walls()), jnp.array([True, False]), (5, 7))
    expected = np.zeros((5, 7), bool)
    expected[1, 2] = expected[1, 3] = True
    np.testing.assert_array_equal(covered, expected)


def test_tagged_agent_is_removed_for_tag_timeout_steps_then_respawns_on_a_free_spawn_point():
    layout = grid.parse_layout(LAYOUT)
    body = agents([[1, 2], [2, 2]], [N, N])
    key = jax.random.PRNGKey(3)
    body = grid.remove_and_respawn(key, body, jnp.array([False, True]), jnp.int32(3), layout.spawn_points)
    np.testing.assert_array_equal(body.timeout, [0, 3])
    removed_steps = 0
    while body.timeout[1] > 0:
        removed_steps += 1
        key, sub = jax.random.split(key)
        body = AgentState(pos=body.pos.at[0].set(jnp.array([1, 1])), orient=body.orient, timeout=body.timeout)  # agent 0 sits on a spawn point
        body = grid.remove_and_respawn(sub, body, jnp.array([False, False]), jnp.int32(3), layout.spawn_points)
    assert removed_steps == 3
    assert any((np.asarray(body.pos[1]) == sp).all() for sp in layout.spawn_points)
    assert not (np.asarray(body.pos[1]) == [1, 1]).all()


def test_respawn_never_stacks_agents():
    points = np.array([[1, 1], [1, 5], [3, 1]], np.int32)
    body = agents([[1, 1], [0, 0], [0, 0]], [N, N, N], timeout=[0, 1, 1])
    for seed in range(20):
        out = grid.remove_and_respawn(jax.random.PRNGKey(seed), body, jnp.zeros(3, bool), jnp.int32(5), points)
        cells = {tuple(np.asarray(p)) for p in out.pos}
        assert len(cells) == 3 and (1, 1) in cells
        np.testing.assert_array_equal(out.timeout, [0, 0, 0])


def test_egocentric_view_is_rotated_to_the_heading():
    channels = jnp.zeros((5, 5, 2), bool).at[..., 1].set(jnp.zeros((5, 5), bool).at[0, 2].set(True))  # marker north
    pos = jnp.array([[2, 2]] * 4)
    views = grid.egocentric_views(channels, pos, jnp.array([N, E, S, W]), ahead=2, behind=2, side=2)
    views = np.asarray(views).reshape(4, 5, 5, 2)[..., 1]  # marker channel, rows = distance 2, 1, 0, -1, -2
    marker = [tuple(np.argwhere(v)[0]) for v in views]
    assert marker == [(0, 2), (2, 0), (4, 2), (2, 4)]  # ahead, to the left, behind, to the right


def test_egocentric_view_reads_walls_off_the_grid():
    channels = jnp.zeros((3, 3, 2), bool)
    view = np.asarray(grid.egocentric_views(channels, jnp.array([[0, 0]]), jnp.array([N]), 1, 0, 1)).reshape(2, 3, 2)
    np.testing.assert_array_equal(view[..., 0], [[1, 1, 1], [1, 0, 0]])
    assert grid.window_size(9, 1, 5) == 121


def test_occupancy_ignores_removed_agents():
    occupied = grid.occupancy(jnp.array([[1, 1], [2, 2]]), jnp.array([True, False]), (3, 3))
    assert occupied.sum() == 1 and occupied[1, 1]


def test_renderers():
    layout = grid.parse_layout(LAYOUT)
    body = agents([[1, 1], [3, 5]], [E, S], timeout=[0, 4])
    apples = np.zeros(layout.shape, bool)
    apples[2, 1] = True
    text = grid.render_text_grid(layout, body, apples)
    assert text.splitlines()[1] == "#0    #" and text.splitlines()[2] == "#A #  #"
    assert "0> 1:out 4" in text
    image = grid.render_rgb_grid(grid.base_cell_colours(layout, apples), body, scale=4)
    assert image.shape == (20, 28, 3) and image.dtype == np.uint8
    np.testing.assert_array_equal(image[4 + 1, 4 + 1], grid.AGENT_COLOURS[0])
    np.testing.assert_array_equal(image[12, 28 - 1 - 4 - 1 - 2], grid.CELL_COLOURS["floor"])  # removed agent not drawn
