import jax
import jax.numpy as jnp
import numpy as np
import pytest

import motivegym
from motivegym.envs.sparse.key_door import NO_HOLDER, KeyDoorState, door_cells

ENV, PARAMS = motivegym.make_jax("KeyDoorGift-v0")
STEP = jax.jit(ENV.step)
KEY = jax.random.PRNGKey(0)
NOOP, UP, DOWN, LEFT, RIGHT, TOGGLE = range(6)


def room(positions, key_position=(3, 3), holder=NO_HOLDER, doors_open=(False, False)):
    return KeyDoorState(
        positions=jnp.array(positions, jnp.int32),
        key_position=jnp.array(key_position, jnp.int32),
        holder=jnp.int32(holder),
        doors_open=jnp.array(doors_open),
        t=jnp.int32(0),
    )


def act(state, actions, params=PARAMS):
    return STEP(KEY, state, jnp.array(actions, jnp.int32), params)


def test_doors_sit_on_the_border_one_per_agent():
    np.testing.assert_array_equal(door_cells(7, 2), [[0, 3], [6, 3]])
    doors = door_cells(9, 5)
    assert len({tuple(d) for d in doors}) == 5 and all(r in (0, 8) or c in (0, 8) for r, c in doors)


def test_pickup_only_on_the_key_cell_and_drop_leaves_it_there():
    state = room([(3, 3), (1, 1)])
    state, *_ = act(state, [TOGGLE, TOGGLE])
    assert int(state.holder) == 0  # agent 1 is not on the key
    state, *_ = act(state, [RIGHT, NOOP])
    assert int(state.holder) == 0  # the key travels with its holder
    state, *_ = act(state, [TOGGLE, NOOP])
    assert int(state.holder) == NO_HOLDER and tuple(np.asarray(state.key_position)) == (3, 4)


def test_key_holder_opens_its_own_door_by_stepping_into_it():
    state = room([(1, 3), (5, 3)], holder=0)
    state, _, payoffs, done, info = act(state, [UP, DOWN])
    assert list(np.asarray(state.doors_open)) == [True, False] and not bool(done)
    np.testing.assert_array_equal(state.positions, [[0, 3], [5, 3]])  # agent 1 without the key is blocked
    np.testing.assert_allclose(payoffs, [1.0, 0.0])
    np.testing.assert_array_equal(info["achievements"], [[True], [False]])  # open_own_door, per agent
    assert ENV.static_info(PARAMS)["achievement_names"] == ("open_own_door",)
    state, _, payoffs, *_ = act(state, [DOWN, NOOP])
    state, _, payoffs, *_ = act(state, [UP, NOOP])
    np.testing.assert_allclose(payoffs, [0.0, 0.0])  # the door payoff is paid once


def test_holder_cannot_open_another_agents_door_and_walls_block():
    state = room([(5, 3), (1, 1)], holder=0)
    after, _, payoffs, *_ = act(state, [DOWN, UP])
    np.testing.assert_array_equal(after.positions, state.positions)
    assert not bool(after.doors_open.any()) and float(payoffs.sum()) == 0.0


def test_passing_the_key_and_the_collective_bonus_only_when_all_doors_open():
    state = room([(1, 3), (4, 3)], key_position=(1, 3), holder=NO_HOLDER)
    script = [
        ([TOGGLE, NOOP], [0, 0]),  # agent 0 picks up
        ([UP, NOOP], [1, 0]),  # opens its door: individual payoff only
        ([TOGGLE, NOOP], [0, 0]),  # drops the key on its open door
        ([DOWN, NOOP], [0, 0]),
        ([RIGHT, NOOP], [0, 0]),  # agent 0 steps aside
        ([NOOP, UP], [0, 0]),
        ([NOOP, UP], [0, 0]),
        ([NOOP, UP], [0, 0]),
        ([NOOP, UP], [0, 0]),  # agent 1 stands on the dropped key (on door 0)
        ([NOOP, TOGGLE], [0, 0]),
    ]
    for actions, expected in script:
        state, _, payoffs, done, _ = act(state, actions)
        np.testing.assert_allclose(payoffs, expected)
        assert not bool(done)
    assert int(state.holder) == 1
    for _ in range(10):
        state, _, payoffs, done, info = act(state, [NOOP, DOWN])
        if bool(done):
            break
    np.testing.assert_allclose(payoffs, [3.0, 4.0])  # collective 3 for both + agent 1's own door
    assert bool(info["terminated"]) and bool(info["all_doors_open"])


def test_agents_block_each_other_and_bad_actions_are_noop():
    state = room([(2, 2), (2, 3)])
    after, *_ = act(state, [RIGHT, 99])
    np.testing.assert_array_equal(after.positions, state.positions)


def test_reset_places_agents_and_key_on_distinct_interior_cells():
    for seed in range(5):
        state, obs = ENV.reset(jax.random.PRNGKey(seed), PARAMS)
        cells = np.concatenate([np.asarray(state.positions), np.asarray(state.key_position)[None]])
        assert len({tuple(c) for c in cells}) == 3 and ((cells >= 1) & (cells <= 5)).all()
        assert obs.shape == (2, 8 * 49 + 3) and ENV.global_state(state, PARAMS).shape == (49 * 6 + 3 + 2 + 1,)


def test_collective_payoff_is_a_param_and_renderings():
    params = ENV.default_params(collective_payoff=10.0, door_payoff=0.5)
    state = room([(1, 3), (5, 3)], holder=1, doors_open=(True, False))
    _, _, payoffs, *_ = act(state, [NOOP, DOWN], params)
    np.testing.assert_allclose(payoffs, [10.0, 10.5])
    assert ENV.render_rgb(state, PARAMS).shape == (112, 112, 3)
    text = ENV.render_text(state, PARAMS)
    assert text.splitlines()[1] == "###a###" and "held by agent_1" in text
    with pytest.raises(ValueError):
        ENV.default_params(n_agents=1)
