"""GridForager under preset="ssd" (SSD's action order, square 15×15 one-hot view turned over when facing east/west)."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from motivegym.baselines.bots import make_bot
from motivegym.baselines.heuristics import GridForager, intent_actions
from motivegym.core.registry import make_jax
from motivegym.envs.spatial.grid import AgentState
from motivegym.envs.spatial.ssd_maps import CLEAN, FIRE, MOVE_UP, SSD_ACTION_NAMES

FAR = [(1, 2), (2, 3), (3, 2), (1, 4)]  # Harvest's top-left corner, far from the scene at column 25


def ssd(env_id: str):
    return make_jax(env_id, preset="ssd", view_encoding="onehot")


def placed(env, params, positions, orients, **fields):
    """A mid-episode state (t=1, so SSD draws the agents) with the given bodies and fields."""
    state, _ = env.reset(jax.random.PRNGKey(0), params)
    n = len(positions)
    agents = AgentState(pos=jnp.asarray(positions, jnp.int32), orient=jnp.asarray(orients, jnp.int32), timeout=jnp.zeros(n, jnp.int32))
    state = dataclasses.replace(state, agents=agents, t=jnp.int32(1), **fields)
    return state, env.observe(state, params)


def run(env, params, policy, state, obs, steps, seed=0):
    policy_state = policy.init(env, params)
    act, step = jax.jit(policy.__call__), jax.jit(lambda k, s, a: env.step(k, s, a, params))
    key, infos, actions = jax.random.PRNGKey(seed), [], []
    for _ in range(steps):
        key, act_key, step_key = jax.random.split(key, 3)
        action, policy_state = act(act_key, obs, policy_state)
        state, obs, _, _, info = step(step_key, state, action)
        actions.append(np.asarray(action))
        infos.append(info)
    return actions, infos


def one_apple(shape, cell):
    return jnp.zeros(shape, bool).at[cell].set(True)


def test_action_names_follow_the_preset():
    env, params = ssd("Cleanup-v0")
    assert env.action_names(params) == SSD_ACTION_NAMES
    default_env, default_params = make_jax("Harvest-v0")
    assert default_env.action_names(default_params)[:3] == ("noop", "forward", "backward")
    table = intent_actions(SSD_ACTION_NAMES[:8])  # Harvest: no CLEAN; the intent maps to STAY
    assert table.tolist() == [4, 2, 3, 0, 1, 6, 5, 7, 4]


@pytest.mark.parametrize("orient, apple", [(0, (12, 25)), (1, (13, 27))])
def test_forager_walks_onto_an_apple(orient, apple):
    """Facing north the view is upright and the apple ahead is eaten at once; facing east SSD's view is turned
    over, the forager first steps the wrong way, reads the flip from the walls' shift and then gets there."""
    env, params = ssd("Harvest-v0")
    state, obs = placed(env, params, [(13, 25), *FAR], [orient, 0, 0, 0, 0], apples=one_apple((16, 38), apple))
    actions, infos = run(env, params, GridForager(epsilon=0.0), state, obs, steps=1 if orient == 0 else 8)
    eaten = [int(info["apples_eaten"][0]) for info in infos]
    assert sum(eaten) == 1
    if orient == 0:
        assert actions[0][0] == MOVE_UP


def test_tagging_forager_fires_at_an_agent_in_its_beam():
    env, params = ssd("Harvest-v0")
    no_apples = jnp.zeros((16, 38), bool)
    state, obs = placed(env, params, [(13, 25), (11, 25), *FAR[:3]], [0] * 5, apples=no_apples)
    actions, infos = run(env, params, GridForager(tag=True, epsilon=0.0), state, obs, steps=1)
    assert actions[0][0] == FIRE
    assert bool(infos[0]["tagged"][1])
    calm, _ = run(env, params, GridForager(tag=False, epsilon=0.0), state, obs, steps=1)
    assert calm[0][0] != FIRE


def test_cleaner_fires_clean_at_waste_in_reach():
    env, params = ssd("Cleanup-v0")
    state, _ = env.reset(jax.random.PRNGKey(0), params)
    assert bool(state.waste[2, 3]) and not bool(state.waste[3, 3])
    far = [(20, 10), (21, 10), (22, 10), (23, 10)]
    state, obs = placed(env, params, [(4, 3), *far], [0] * 5)
    actions, infos = run(env, params, GridForager(cleaners=5, epsilon=0.0), state, obs, steps=1)
    assert actions[0][0] == CLEAN
    not_cleaner, _ = run(env, params, GridForager(cleaners=0, epsilon=0.0), state, obs, steps=1)
    assert not_cleaner[0][0] != CLEAN


def test_rgb_view_is_refused_with_a_hint():
    env, params = make_jax("Harvest-v0", preset="ssd")
    with pytest.raises(ValueError, match="view_encoding='onehot'"):
        GridForager().init(env, params)


def test_cooperator_bot_earns_positive_welfare_under_ssd():
    env, params = ssd("Harvest-v0")
    bot = make_bot("Harvest-v0", "cooperator", env, params)
    state, obs = env.reset(jax.random.PRNGKey(1), params)
    _, infos = run(env, params, bot, state, obs, steps=150, seed=1)
    assert sum(int(np.sum(info["apples_eaten"])) for info in infos) > 0


@pytest.mark.parametrize("env_id", ["Harvest-v0", "Cleanup-v0"])
def test_defector_tags_only_where_tagging_removes(env_id):
    """The default preset removes a tagged agent (a selfish gain); SSD's beam only costs, so its defector does not tag."""
    assert make_bot(env_id, "defector").tag is True
    env, params = ssd(env_id)
    assert make_bot(env_id, "defector", env, params).tag is False
