"""Cleanup-v0 under ``preset="meltingpot"``: dirt spawning after the delay, apple growth from the dirt fraction, the
clean beam and its cooldown, zap removal for 50 frames."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from motivegym.envs.spatial.cleanup import Cleanup, MeltingPotCleanupState
from motivegym.envs.spatial.grid import FIRE_CLEAN, FIRE_TAG, NOOP, AgentState, parse_layout

N, E = 0, 1
ROOM = (
    "#########",
    "#~~~*~~~#",
    "#P     P#",
    "#aaa aaa#",
    "#########",
)
ENV = Cleanup()


def params(**overrides):
    return ENV.default_params(preset="meltingpot", layout=ROOM, n_agents=2, view_ahead=2, view_behind=1, view_side=1, **overrides)


def place(p, pos, orient, waste=None):
    """A state with the players at ``pos`` facing ``orient``, timers ready (built directly: no reset to compile)."""
    layout = parse_layout(p.layout)
    n = len(pos)
    agents = AgentState(pos=jnp.asarray(pos, jnp.int32), orient=jnp.asarray(orient, jnp.int32), timeout=jnp.zeros(n, jnp.int32))
    return MeltingPotCleanupState(
        agents=agents, apples=jnp.asarray(layout.initial_apples), waste=jnp.asarray(layout.initial_waste) if waste is None else waste,
        t=jnp.int32(0), zap_cooldown=jnp.zeros(n, jnp.int32), clean_cooldown=jnp.zeros(n, jnp.int32),
    )  # fmt: skip


def run(p, state, actions, steps):
    step = jax.jit(lambda k, s, a: ENV.step(k, s, a, p))
    out = []
    for t in range(steps):
        state, obs, payoffs, _, info = step(jax.random.PRNGKey(t), state, jnp.asarray(actions, jnp.int32))
        out.append((state, obs, payoffs, info))
    return out


def test_dirt_spawns_one_cell_a_step_after_the_delay():
    p = params(waste_spawn_prob=1.0, waste_spawn_delay=3, apple_respawn_prob=0.0)
    state = place(p, [[2, 1], [2, 7]], [N, N])
    counts = [int(np.asarray(s.waste).sum()) for s, *_ in run(p, state, [NOOP, NOOP], 6)]
    assert counts == [1, 1, 1, 2, 3, 4]


def test_apples_grow_at_the_full_rate_on_a_clean_river_and_not_at_all_above_depletion():
    clean = params(apple_respawn_prob=1.0, waste_spawn_prob=0.0)
    state = place(clean, [[2, 1], [2, 7]], [N, N], waste=jnp.zeros((5, 9), bool))
    s, _, _, info = run(clean, state, [NOOP, NOOP], 1)[0]
    assert float(info["apple_spawn_prob"]) == 1.0 and int(np.asarray(s.apples).sum()) == 6
    dirty = params(apple_respawn_prob=1.0, waste_spawn_prob=0.0)
    waste = jnp.zeros((5, 9), bool).at[1, 1:5].set(True)  # 4 of 7 river cells: d = 0.57 >= 0.4
    s, _, _, info = run(dirty, place(dirty, [[2, 1], [2, 7]], [N, N], waste=waste), [NOOP, NOOP], 1)[0]
    assert float(info["apple_spawn_prob"]) == 0.0 and int(np.asarray(s.apples).sum()) == 0


def test_an_apple_growing_under_a_player_is_eaten_at_once():
    p = params(apple_respawn_prob=1.0, waste_spawn_prob=0.0)
    state = place(p, [[3, 1], [2, 7]], [N, N], waste=jnp.zeros((5, 9), bool))
    s, _, payoffs, info = run(p, state, [NOOP, NOOP], 1)[0]
    assert np.asarray(payoffs).tolist() == [1.0, 0.0] and not bool(s.apples[3, 1]) and int(info["apples_eaten"][0]) == 1


def test_clean_beam_cools_down_and_cleans_the_first_dirt_of_its_lane():
    p = params(apple_respawn_prob=0.0, waste_spawn_prob=0.0)
    waste = jnp.zeros((5, 9), bool).at[1, 4].set(True).at[1, 3].set(True)
    state = place(p, [[2, 4], [2, 7]], [N, N], waste=waste)
    out = run(p, state, [FIRE_CLEAN, NOOP], 4)
    assert [bool(info["fired_clean"][0]) for *_, info in out] == [True, False, False, True]
    first = out[0][3]
    assert np.asarray(first["waste_cleaned"]).tolist() == [2, 0]  # centre lane (1, 4), left side lane (1, 3)
    assert not bool(out[0][0].waste.any())


def test_zapped_players_stay_out_for_fifty_one_steps():
    p = params(apple_respawn_prob=0.0, waste_spawn_prob=0.0)
    state = place(p, [[2, 3], [2, 4]], [E, N])
    step = jax.jit(lambda k, s, a: ENV.step(k, s, a, p))
    removed = []
    for t in range(53):
        state, _, _, _, info = step(jax.random.PRNGKey(t), state, jnp.asarray([FIRE_TAG if t == 0 else NOOP, NOOP]))
        removed.append(bool(info["removed"][1]))
    assert removed == [True] * 51 + [False] * 2  # clean_up: framesTillRespawn = 50
