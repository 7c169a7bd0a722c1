"""``preset="meltingpot"`` (and Harvest's ``meltingpot_closed`` / ``meltingpot_partnership``): maps, params, seeds,
the RGB view and the doors."""

from __future__ import annotations

import gymnasium
import jax
import numpy as np
import pytest

import motivegym
from motivegym.envs.spatial.cleanup import Cleanup
from motivegym.envs.spatial.grid import NOOP, parse_layout
from motivegym.envs.spatial.harvest import Harvest
from motivegym.envs.spatial.meltingpot_maps import MP_AVATAR_COLOURS, MP_COLOURS, MP_HARVEST_OPEN_MAP, to_legend


def test_harvest_presets_are_the_three_commons_harvest_substrates():
    env = Harvest()
    open_, closed, partnership = (env.default_params(preset=f"meltingpot{s}") for s in ("", "_closed", "_partnership"))
    for p in (open_, closed, partnership):
        layout = parse_layout(p.layout)
        assert layout.shape == (18, 24) and layout.initial_apples.sum() == 64 and len(layout.spawn_points) == 60
        assert len(layout.inside_spawn_points) == 2 and p.n_agents == 7 and p.rules == "meltingpot"
        assert (p.view_ahead, p.view_behind, p.view_side, p.tag_beam_width, p.regrowth_radius) == (9, 1, 5, 3, 2)
    assert open_.layout == to_legend(MP_HARVEST_OPEN_MAP)
    np.testing.assert_allclose(open_.regrowth_probs, [0.0, 0.0025, 0.005, 0.025])
    np.testing.assert_allclose(closed.regrowth_probs, [0.0, 0.001, 0.005, 0.025])
    assert (int(open_.zap_cooldown), open_.tag_beam_length, int(open_.tag_timeout)) == (2, 3, 5)
    assert (int(closed.zap_cooldown), closed.tag_beam_length, int(closed.tag_timeout)) == (1, 4, 101)
    walls_closed, walls_partner = (parse_layout(p.layout).walls for p in (closed, partnership))
    assert walls_closed.sum() - walls_partner.sum() == 14  # the partnership map opens the middle wall (its 14 "I" tiles)


def test_cleanup_preset_is_clean_up():
    p = Cleanup().default_params(preset="meltingpot")
    layout = parse_layout(p.layout)
    assert layout.shape == (21, 30) and layout.river.sum() == 147 and layout.initial_waste.sum() == 79
    assert layout.apple_spawn.sum() == 122 and layout.initial_apples.sum() == 0 and len(layout.spawn_points) == 19
    assert (int(p.zap_cooldown), int(p.clean_cooldown), int(p.tag_timeout), int(p.waste_spawn_delay)) == (10, 2, 51, 50)
    np.testing.assert_allclose([float(p.waste_spawn_prob), float(p.apple_respawn_prob)], [0.5, 0.05])


def test_unknown_presets_raise_and_the_rooms_are_harvest_only():
    with pytest.raises(ValueError, match="meltingpot_partnership"):
        Harvest().default_params(preset="melting-pot")
    with pytest.raises(ValueError, match="preset"):
        Cleanup().default_params(preset="meltingpot_closed")
    with pytest.raises(ValueError, match="rgb"):
        Harvest().default_params(view_encoding="rgb")


@pytest.mark.slow
@pytest.mark.parametrize("env_id", ["Harvest-v0", "Cleanup-v0"])
def test_same_key_same_episode_other_key_other_episode(env_id):
    env, p = motivegym.make_jax(env_id, preset="meltingpot")
    step = jax.jit(lambda k, s, a: env.step(k, s, a, p))

    def rollout(seed):
        key = jax.random.PRNGKey(seed)
        state, _ = env.reset(key, p)
        total = 0.0
        for _ in range(20):
            key, action_key, step_key = jax.random.split(key, 3)
            actions = jax.random.randint(action_key, (p.n_agents,), 0, env.num_actions(p))
            state, _, payoffs, _, _ = step(step_key, state, actions)
            total += float(payoffs.sum())
        return np.asarray(state.agents.pos), total

    a, b, c = rollout(0), rollout(0), rollout(1)
    np.testing.assert_array_equal(a[0], b[0])
    assert a[1] == b[1] and not np.array_equal(a[0], c[0])


def test_rgb_view_draws_melting_pot_colours_the_self_colour_and_ready_to_shoot():
    env = Harvest()
    p = env.default_params(preset="meltingpot", view_encoding="rgb")
    state, obs = jax.jit(lambda key: env.reset(key, p))(jax.random.PRNGKey(0))
    assert obs.shape == (7, 11 * 11 * 3 + 1) and env.observation_bounds(p) == (0.0, 255.0)
    view = np.asarray(obs[:, :-1]).reshape(7, 11, 11, 3)
    np.testing.assert_array_equal(view[:, 9, 5], np.broadcast_to(MP_COLOURS["self"], (7, 3)))  # own cell, 9 rows ahead of the top
    colours = {tuple(c) for c in view.reshape(-1, 3).astype(int).tolist()}
    assert colours <= {tuple(MP_COLOURS[k]) for k in ("outside", "floor", "grass", "apple", "wall", "self")} | {tuple(c) for c in MP_AVATAR_COLOURS[:7].tolist()}
    assert np.all(np.asarray(obs[:, -1]) == 1.0)


@pytest.mark.parametrize(("env_id", "preset", "size"), [("Harvest-v0", "meltingpot", 364), ("Harvest-v0", "meltingpot_closed", 364), ("Cleanup-v0", "meltingpot", 606)])
def test_gymnasium_and_pettingzoo_take_the_preset(env_id, preset, size):
    env = gymnasium.make(f"motivegym/{env_id}", preset=preset)
    obs, _ = env.reset(seed=0)
    assert obs.shape == env.observation_space.shape
    obs, reward, *_ = env.step(np.full(7, NOOP))
    assert env.observation_space.contains(obs)
    env.close()
    parallel = motivegym.parallel_env(env_id, preset=preset)
    observations, _ = parallel.reset(seed=0)
    assert len(parallel.agents) == 7 and observations["agent_0"].shape == (size,)
    observations, rewards, *_ = parallel.step({agent: NOOP for agent in parallel.agents})
    assert set(rewards) == set(parallel.possible_agents)
    parallel.close()
