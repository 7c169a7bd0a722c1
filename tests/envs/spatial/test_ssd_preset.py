"""``preset="ssd"``: maps, params, the 15×15 view (SSD ``TestMapEnv.test_view`` and ``test_rotations``) and the doors."""

import dataclasses

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import motivegym
from motivegym.envs.spatial import ssd_rules
from motivegym.envs.spatial.cleanup import Cleanup
from motivegym.envs.spatial.grid import AgentState
from motivegym.envs.spatial.harvest import Harvest
from motivegym.envs.spatial.ssd_maps import SSD_AGENT_COLOURS, SSD_COLOURS, STAY, to_legend

UP, RIGHT, DOWN, LEFT = range(4)


def test_harvest_preset_is_ssd_harvest():
    env, params = motivegym.make_jax("Harvest-v0", preset="ssd")
    layout = env.layout(params)
    assert layout.shape == (16, 38) and layout.apple_spawn.sum() == 155 and len(layout.spawn_points) == 20
    assert env.n_agents(params) == 5 and env.num_actions(params) == 8 and int(params.max_steps) == 1000
    assert (float(params.tag_cost), float(params.tag_penalty)) == (1.0, 50.0)
    np.testing.assert_allclose(params.regrowth_probs, [0.0, 0.005, 0.02, 0.05])
    assert (params.tag_beam_length, params.tag_beam_width, params.rules, params.view_encoding) == (5, 3, "ssd", "rgb")
    assert env.observation_size(params) == 15 * 15 * 3 and env.observation_bounds(params) == (0.0, 255.0)
    state, obs = env.reset(jax.random.PRNGKey(0), params)
    assert obs.shape == (5, 675) and int(state.apples.sum()) == 155


def test_cleanup_preset_is_ssd_cleanup():
    env, params = motivegym.make_jax("Cleanup-v0", preset="ssd")
    layout = env.layout(params)
    assert layout.shape == (25, 18) and layout.river.sum() == 119 and layout.initial_waste.sum() == 56
    assert layout.stream.sum() == 12 and layout.apple_spawn.sum() == 103 and len(layout.spawn_points) == 10
    assert env.num_actions(params) == 9 and float(params.waste_spawn_prob) == 0.5 and float(params.clean_cost) == 0.0
    assert (params.clean_beam_length, params.clean_beam_width) == (5, 3)
    state, obs = env.reset(jax.random.PRNGKey(0), params)
    assert obs.shape == (5, 675) and int(state.waste.sum()) == 56 and int(state.apples.sum()) == 0  # 56/119 ≥ 0.4


def test_default_preset_is_unchanged_and_unknown_presets_raise():
    env = Harvest()
    default, named = env.default_params(), env.default_params(preset="default")
    assert jax.tree.structure(default) == jax.tree.structure(named)  # static fields (layout, rules, ...) included
    assert all(np.array_equal(a, b) for a, b in zip(jax.tree.leaves(default), jax.tree.leaves(named)))
    assert env.default_params().rules == "motivegym"
    with pytest.raises(ValueError, match="preset"):
        motivegym.make_jax("Harvest-v0", preset="melting-pot")
    with pytest.raises(ValueError, match="view_ahead, view_behind and view_side must be equal"):
        env.default_params(preset="ssd", view_ahead=9)
    with pytest.raises(ValueError, match="needs rules='ssd'"):
        env.default_params(view_encoding="rgb")


def test_preset_values_can_be_overridden():
    params = Cleanup().default_params(preset="ssd", n_agents=3, tag_penalty=0.0)
    assert params.n_agents == 3 and float(params.tag_penalty) == 0.0 and params.rules == "ssd"


# ----- the view (SSD TEST_MAP_1: a 5×5 floor inside walls; view_len 2) -----
ROOM = to_legend(("@@@@@@@", "@P    @", "@     @", "@     @", "@     @", "@     @", "@@@@@@@"))
ENV = Harvest()
PARAMS = ENV.default_params(preset="ssd", layout=ROOM, n_agents=1, view_ahead=2, view_behind=2, view_side=2)
WALL, BLACK, ME = SSD_COLOURS["wall"], (0, 0, 0), tuple(SSD_AGENT_COLOURS[0])


def view_at(pos, orient=UP, t=1, params=PARAMS):
    state, _ = ENV.reset(jax.random.PRNGKey(0), params)
    agents = AgentState(pos=jnp.asarray([pos], jnp.int32), orient=jnp.asarray([orient], jnp.int32), timeout=jnp.zeros(1, jnp.int32))
    state = dataclasses.replace(state, agents=agents, t=jnp.int32(t))
    return np.asarray(ENV.observe(state, params)).reshape(5, 5, 3)


def expected(rows):
    """``rows`` of '@' wall, ' ' floor, '0' off the map, '1' the agent -> colours."""
    colour = {"@": WALL, " ": BLACK, "0": BLACK, "1": ME}
    return np.array([[colour[c] for c in row] for row in rows], np.float32)


@pytest.mark.parametrize(
    "pos, rows",
    [
        ([3, 3], ["     ", "     ", "  1  ", "     ", "     "]),
        ([2, 3], ["@@@@@", "     ", "  1  ", "     ", "     "]),
        ([1, 3], ["00000", "@@@@@", "  1  ", "     ", "     "]),
        ([3, 2], ["@    ", "@    ", "@ 1  ", "@    ", "@    "]),
        ([3, 1], ["0@   ", "0@   ", "0@1  ", "0@   ", "0@   "]),
        ([4, 3], ["     ", "     ", "  1  ", "     ", "@@@@@"]),
        ([5, 3], ["     ", "     ", "  1  ", "@@@@@", "00000"]),
        ([3, 5], ["   @0", "   @0", "  1@0", "   @0", "   @0"]),
        ([5, 5], ["   @0", "   @0", "  1@0", "@@@@0", "00000"]),
    ],
)
def test_view_matches_ssd_test_view(pos, rows):
    np.testing.assert_array_equal(view_at(pos), expected(rows))


def test_view_rotations_are_ssd_color_view():
    """SSD test_rotations / color_view: LEFT = np.rot90(k=1), DOWN = k=2, RIGHT = k=3 of the north-up window."""
    numbers = jnp.arange(25, dtype=jnp.int32).reshape(5, 5, 1)
    for orient, k in ((UP, 0), (LEFT, 1), (DOWN, 2), (RIGHT, 3)):
        view = ssd_rules.window_views(numbers, jnp.asarray([[2, 2]]), jnp.asarray([orient]), 2)[0, ..., 0]
        np.testing.assert_array_equal(view, np.rot90(np.arange(25).reshape(5, 5), k=k))


def test_reset_view_shows_no_agents_and_later_views_show_every_agent():
    assert not np.any(np.all(view_at([3, 3], t=0) == ME, axis=-1))
    assert np.all(view_at([3, 3], t=1)[2, 2] == ME)


def test_onehot_encoding_of_the_ssd_window():
    params = ENV.default_params(preset="ssd", layout=ROOM, n_agents=1, view_ahead=2, view_behind=2, view_side=2, view_encoding="onehot")
    assert ENV.observation_size(params) == 25 * 3 and ENV.observation_bounds(params) == (0.0, 1.0)
    view = view_at([1, 3], params=params).reshape(5, 5, 3)
    assert view[1, :, 0].all() and not view[0].any() and view[2, 2, 2] == 1.0  # walls, off-map zeros, own body


def test_cleanup_colours():
    env = Cleanup()
    params = env.default_params(preset="ssd", layout=to_legend(("@@@@@", "@RHS@", "@P P@", "@@@@@")), n_agents=2, view_ahead=1, view_behind=1, view_side=1)
    state, _ = env.reset(jax.random.PRNGKey(0), params)
    agents = AgentState(pos=jnp.asarray([[2, 2], [2, 3]], jnp.int32), orient=jnp.asarray([UP, UP], jnp.int32), timeout=jnp.zeros(2, jnp.int32))
    obs = env.observe(dataclasses.replace(state, agents=agents, t=jnp.int32(1)), params)
    view = np.asarray(obs[0]).reshape(3, 3, 3)
    np.testing.assert_array_equal(view[0], [SSD_COLOURS["river"], SSD_COLOURS["waste"], SSD_COLOURS["stream"]])
    np.testing.assert_array_equal(view[1], [BLACK, SSD_AGENT_COLOURS[0], SSD_AGENT_COLOURS[1]])


# ----- the doors -----
@pytest.mark.parametrize("env_id", ["Harvest-v0", "Cleanup-v0"])
def test_gymnasium_and_pettingzoo_take_the_preset(env_id):
    env = gymnasium.make(f"motivegym/{env_id}", preset="ssd")
    obs, _ = env.reset(seed=0)
    assert obs.shape == env.observation_space.shape and env.observation_space.high.max() == 255.0
    obs, reward, *_ = env.step(np.full(5, STAY))
    assert env.observation_space.contains(obs)
    env.close()
    parallel = motivegym.parallel_env(env_id, preset="ssd")
    observations, _ = parallel.reset(seed=0)
    assert observations["agent_0"].shape == (675,)
    observations, rewards, *_ = parallel.step({agent: STAY for agent in parallel.agents})
    assert set(rewards) == set(parallel.possible_agents)
    parallel.close()
