"""CleaningForager, Cleanup's cooperator bot: it cleans while the river it sees is dirty and eats otherwise."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from motivegym.baselines.bots import make_bot, make_river_cleaners
from motivegym.baselines.heuristics import BACKWARD, FORWARD, CleaningForager, GridForager, next_mode
from motivegym.core.registry import make_jax
from motivegym.envs.spatial.grid import FIRE_CLEAN, AgentState
from motivegym.envs.spatial.ssd_maps import CLEAN

NORTH = 0
ME = (8, 10)  # default map: one row above the orchard, facing north it sees the river rows 1-3, columns 5-15
OTHERS = [(12, 1), (12, 2), (12, 17), (12, 18)]  # out of its view
DIRTY_ROW = [(3, c) for c in range(5, 16)]  # 11 of the 33 river cells in view: a waste fraction of 1/3


def placed(env, params, positions, waste=(), apples=()):
    """A mid-episode state with the agents facing north and exactly the given waste and apple cells."""
    state, _ = env.reset(jax.random.PRNGKey(0), params)
    grids = {}
    for name, cells in (("waste", waste), ("apples", apples)):
        grid = np.zeros(state.apples.shape, bool)
        for cell in cells:
            grid[cell] = True
        grids[name] = jnp.asarray(grid)
    n = len(positions)
    agents = AgentState(
        pos=jnp.asarray(positions, jnp.int32), orient=jnp.full(n, NORTH, jnp.int32), timeout=jnp.zeros(n, jnp.int32)
    )
    state = dataclasses.replace(state, agents=agents, t=jnp.int32(1), **grids)
    return state, env.observe(state, params)


def first_action(bot, env, params, obs, cleaning: bool):
    state = bot.init(env, params)
    state = {**state, "clean": jnp.full(env.n_agents(params), cleaning)}
    actions, new_state = bot(jax.random.PRNGKey(3), obs, state)
    return int(actions[0]), bool(new_state["clean"][0])


def test_cleans_when_the_river_is_dirty_and_eats_when_it_is_clean():
    """Same place, same apple right behind it: an eating agent that sees a dirty river goes to clean it (forward
    to the waste); a cleaning agent that sees a clean river goes to eat (a step back onto the apple)."""
    env, params = make_jax("Cleanup-v0")
    bot = CleaningForager(epsilon=0.0)
    apple = [(9, 10)]
    _, dirty = placed(env, params, [ME, *OTHERS], waste=DIRTY_ROW, apples=apple)
    assert first_action(bot, env, params, dirty, cleaning=False) == (FORWARD, True)
    _, clean = placed(env, params, [ME, *OTHERS], apples=apple)
    assert first_action(bot, env, params, clean, cleaning=True) == (BACKWARD, False)
    # below the dirty threshold an eating agent keeps eating
    _, slightly = placed(env, params, [ME, *OTHERS], waste=DIRTY_ROW[:3], apples=apple)  # 3/33 < 0.2
    assert first_action(bot, env, params, slightly, cleaning=False) == (BACKWARD, False)


def test_fires_the_clean_beam_at_waste_in_reach():
    env, params = make_jax("Cleanup-v0")
    _, obs = placed(env, params, [(5, 10), *OTHERS], waste=DIRTY_ROW)  # waste 2 ahead, in the 3-long beam
    assert first_action(CleaningForager(epsilon=0.0), env, params, obs, cleaning=False) == (FIRE_CLEAN, True)


@pytest.mark.parametrize("cleaning, limit", [(True, "clean_steps"), (False, "eat_steps")])
def test_each_mode_ends_after_its_step_budget_when_the_river_is_out_of_view(cleaning, limit):
    env, params = make_jax("Cleanup-v0")
    bot = CleaningForager(**{limit: 7})
    state = {**bot.init(env, params), "clean": jnp.full(5, cleaning)}
    blind = jnp.zeros((5, env.observation_size(params)))  # no river in view: only the budget can switch
    steps = []
    for _ in range(7):
        mode, counter = next_mode(blind, state)
        state = {**state, "clean": mode, "mode_steps": counter}
        steps.append(bool(mode[0]))
    assert steps == [cleaning] * 6 + [not cleaning]
    assert int(state["mode_steps"][0]) == 0


def test_deterministic_given_the_key_and_starts_cleaning():
    env, params = make_jax("Cleanup-v0")
    bot = make_bot("Cleanup-v0", "cooperator", env, params)
    assert isinstance(bot, CleaningForager)
    assert bool(jnp.all(bot.init(env, params)["clean"]))

    def rollout(seed):
        env_state, obs = env.reset(jax.random.PRNGKey(seed), params)
        state, key, actions = bot.init(env, params), jax.random.PRNGKey(seed), []
        act, step = jax.jit(bot.__call__), jax.jit(lambda k, s, a: env.step(k, s, a, params))
        for _ in range(20):
            key, act_key, step_key = jax.random.split(key, 3)
            action, state = act(act_key, obs, state)
            env_state, obs, *_ = step(step_key, env_state, action)
            actions.append(np.asarray(action))
        return np.stack(actions)

    np.testing.assert_array_equal(rollout(0), rollout(0))


def test_bad_settings_are_refused():
    env, params = make_jax("Cleanup-v0")
    with pytest.raises(ValueError, match="clean_fraction < dirty_fraction"):
        CleaningForager(clean_fraction=0.3, dirty_fraction=0.2).init(env, params)
    with pytest.raises(ValueError, match="cleaners must be 0"):
        CleaningForager(cleaners=2).init(env, params)
    harvest, harvest_params = make_jax("Harvest-v0")
    with pytest.raises(ValueError, match="needs an env with waste"):
        CleaningForager().init(harvest, harvest_params)


def test_the_former_cooperator_is_still_reachable():
    env, params = make_jax("Cleanup-v0")
    cleaners = make_river_cleaners(env, params)
    assert isinstance(cleaners, GridForager) and cleaners.cleaners == 5


def test_ssd_preset_cleans_the_dirty_reset_river_and_stops_on_a_clean_one():
    """SSD's map: the reset river has waste at (2, 3), within reach of an agent at (4, 3) facing north."""
    env, params = make_jax("Cleanup-v0", preset="ssd", view_encoding="onehot")
    bot = make_bot("Cleanup-v0", "cooperator", env, params)
    state, _ = env.reset(jax.random.PRNGKey(0), params)
    assert bool(state.waste[2, 3])
    far = [(20, 10), (21, 10), (22, 10), (23, 10)]
    agents = AgentState(
        pos=jnp.asarray([(4, 3), *far], jnp.int32), orient=jnp.zeros(5, jnp.int32), timeout=jnp.zeros(5, jnp.int32)
    )
    dirty = dataclasses.replace(state, agents=agents, t=jnp.int32(1))
    assert first_action(bot, env, params, env.observe(dirty, params), cleaning=False) == (CLEAN, True)
    clean = dataclasses.replace(dirty, waste=jnp.zeros_like(state.waste))
    action, cleaning = first_action(bot, env, params, env.observe(clean, params), cleaning=True)
    assert action != CLEAN and not cleaning


@pytest.mark.slow
def test_background_cooperators_eat_in_the_scenario():
    """``Cleanup-v0/cooperator`` among focal defectors: the background cooperators earn apples (the former
    pure cleaner earned 0 there)."""
    from motivegym.experiments.scenarios import run_scenario

    result = run_scenario("Cleanup-v0/cooperator", "bot:defector", episodes=1)
    assert result.background_per_capita.estimate > 0.0


@pytest.mark.slow
def test_cleaning_foragers_reach_more_welfare_than_defectors():
    """All-cooperator Cleanup (they clean and eat) beats all-defector Cleanup, where the river silts up."""
    from motivegym.experiments.evaluation import episode_keys, rollout_batch, summarize
    from motivegym.reward_layers import reward_layer

    env, params = make_jax("Cleanup-v0")
    welfare = {}
    for role in ("cooperator", "defector"):
        bot = make_bot("Cleanup-v0", role, env, params)
        stats = rollout_batch(
            env, params, (reward_layer("private"),), bot, env.max_episode_steps(params), bot.init(env, params), episode_keys(0, 2)
        )
        welfare[role] = summarize(stats)["welfare"]
    assert welfare["cooperator"] > 2 * welfare["defector"]
