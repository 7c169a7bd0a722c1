"""Harvest-v0 under ``preset="meltingpot"``: zap cooldown, removal timing, first-hit beam and regrowth in the env step."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from motivegym.envs.spatial.grid import FIRE_TAG, NOOP, AgentState, parse_layout
from motivegym.envs.spatial.harvest import Harvest, MeltingPotHarvestState

E, N = 1, 0
ROOM = (
    "#########",
    "#P  a  P#",
    "#       #",
    "#P  a  P#",
    "#########",
)
ENV = Harvest()


def params(**overrides):
    return ENV.default_params(preset="meltingpot", layout=ROOM, n_agents=3, view_ahead=2, view_behind=1, view_side=1, **overrides)


def place(p, pos, orient, apples=None):
    """A state with the players at ``pos`` facing ``orient``, all zaps ready (built directly: no reset to compile)."""
    agents = AgentState(pos=jnp.asarray(pos, jnp.int32), orient=jnp.asarray(orient, jnp.int32), timeout=jnp.zeros(len(pos), jnp.int32))
    apples = jnp.asarray(parse_layout(p.layout).initial_apples) if apples is None else apples
    return MeltingPotHarvestState(agents=agents, apples=apples, t=jnp.int32(0), zap_cooldown=jnp.zeros(len(pos), jnp.int32))


def run(p, state, actions, steps):
    step = jax.jit(lambda k, s, a: ENV.step(k, s, a, p))
    out = []
    for t in range(steps):
        state, obs, payoffs, _, info = step(jax.random.PRNGKey(t), state, jnp.asarray(actions, jnp.int32))
        out.append((state, obs, payoffs, info))
    return out


def test_removal_lasts_frames_till_respawn_plus_one_steps_and_the_zap_cools_down():
    p = params(regrowth_probs=[0.0, 0.0, 0.0, 0.0])
    # 0 at (2, 2) facing east fires every step; 1 stands right ahead of it; 2 far away
    state = place(p, [[2, 2], [2, 3], [3, 7]], [E, N, N])
    out = run(p, state, [FIRE_TAG, NOOP, NOOP], 8)
    removed = [bool(info["removed"][1]) for *_, info in out]
    assert removed == [True] * 5 + [False] * 3  # commons_harvest__open: framesTillRespawn = 4 -> back after step 5
    fired = [bool(info["fired_tag"][0]) for *_, info in out]
    assert fired == [True, False, False, True, False, False, True, False]
    ready = [float(obs[0, -1]) for _, obs, _, _ in out]
    assert ready[:3] == [0.0, 0.5, 1.0]
    assert bool(out[0][3]["tag_hits"][0, 1]) and not bool(out[0][3]["tag_hits"][0, 2])
    assert float(out[0][1][1].sum()) == 0.0  # a removed player sees nothing (and is not ready to shoot)


def test_the_beam_stops_at_the_first_player():
    p = params(regrowth_probs=[0.0, 0.0, 0.0, 0.0])
    state = place(p, [[2, 2], [2, 3], [2, 4]], [E, N, N])
    info = run(p, state, [FIRE_TAG, NOOP, NOOP], 1)[0][3]
    assert np.asarray(info["removed"]).tolist() == [False, True, False]


def test_an_apple_that_regrows_under_a_standing_player_is_eaten_at_once():
    p = params(regrowth_probs=[1.0, 1.0, 1.0, 1.0])
    # 0 stands on the empty apple cell (1, 4); the other apple cell (3, 4) regrows and stays
    state = place(p, [[1, 4], [1, 1], [3, 1]], [N, N, N], apples=jnp.zeros((5, 9), bool))
    out = run(p, state, [NOOP, NOOP, NOOP], 3)
    assert [float(payoffs[0]) for _, _, payoffs, _ in out] == [1.0, 1.0, 1.0]
    assert all(not bool(s.apples[1, 4]) and bool(s.apples[3, 4]) for s, *_ in out)


def test_regrowth_reads_the_map_of_the_start_of_the_step():
    p = params(regrowth_probs=[0.0, 1.0, 1.0, 1.0])
    # (1, 4) is empty with one live neighbour at (3, 4), which player 0 eats this step: (1, 4) still sprouts
    apples = jnp.zeros((5, 9), bool).at[3, 4].set(True)
    state = place(p, [[3, 3], [1, 1], [1, 7]], [E, N, N], apples=apples)
    s, _, payoffs, info = run(p, state, [1, NOOP, NOOP], 1)[0]  # 1 = forward
    assert float(payoffs[0]) == 1.0 and bool(s.apples[1, 4]) and int(info["apples_regrown"]) == 1


def test_reset_puts_the_first_two_players_on_the_inside_spawn_points():
    env = Harvest()
    p = env.default_params(preset="meltingpot")
    inside = {(7, 7), (7, 16)}
    reset = jax.jit(lambda key: env.reset(key, p))
    for seed in range(3):
        state, obs = reset(jax.random.PRNGKey(seed))
        pos = [tuple(x) for x in np.asarray(state.agents.pos).tolist()]
        assert set(pos[:2]) == inside and not inside & set(pos[2:]) and len(set(pos)) == 7
        assert isinstance(state, MeltingPotHarvestState) and obs.shape == (7, 364)
        assert np.all(np.asarray(obs[:, -1]) == 1.0)  # everybody ready to shoot at reset
