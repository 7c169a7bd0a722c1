"""Rule scenarios of :mod:`motivegym.envs.spatial.meltingpot_rules` (Melting Pot / dmlab2d rules, one by one)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from motivegym.envs.spatial import meltingpot_rules as mp
from motivegym.envs.spatial.grid import FORWARD, NOOP

N, E, S, W = range(4)
#: jitted once per shape: eager op-by-op dispatch is the slow part of these small scenarios
ZAP = jax.jit(mp.zap_beams, static_argnums=(5, 6))
CLEAN = jax.jit(mp.clean_beams, static_argnums=(5, 6))
SPAWN_DIRT = jax.jit(mp.spawn_dirt)


def room(h: int = 7, w: int = 9) -> jnp.ndarray:
    walls = np.zeros((h, w), bool)
    walls[0, :] = walls[-1, :] = walls[:, 0] = walls[:, -1] = True
    return jnp.asarray(walls)


def zap(pos, orient, fires, walls, length=3, radius=1, on_map=None):
    pos = jnp.asarray(pos, jnp.int32)
    on_map = jnp.ones(len(pos), bool) if on_map is None else jnp.asarray(on_map)
    return np.asarray(ZAP(pos, jnp.asarray(orient, jnp.int32), jnp.asarray(fires), on_map, walls, length, radius))


# ----- regrowth by the exact neighbour count -----
def test_disc_count_is_the_radius_2_disc_without_the_centre():
    apples = jnp.zeros((9, 9), bool).at[4, 4].set(True)
    counts = np.asarray(mp.disc_count(apples, 2))
    assert counts.sum() == 12 and counts[4, 4] == 0
    assert counts[2, 4] == counts[4, 6] == counts[3, 3] == 1  # distance 2 straight, √2 diagonal
    assert counts[2, 3] == 0 and counts[2, 2] == 0  # √5 and √8 lie outside the disc


def test_sprout_probability_is_indexed_by_the_count_0_1_2_3_or_more():
    # an empty cell with exactly k live neighbours for k = 0..4, the cells 6 apart so their discs do not overlap
    apples = jnp.zeros((25, 25), bool)
    targets = [(2, 2), (2, 8), (2, 14), (8, 2), (8, 8)]
    neighbours = [(0, 1), (1, 0), (0, -1), (-1, 0)]
    for k, (r, c) in enumerate(targets):
        for dr, dc in neighbours[:k]:
            apples = apples.at[r + dr, c + dc].set(True)
    spawn = np.array(targets, np.int32)
    counts = np.asarray(mp.disc_count(apples, 2))[spawn[:, 0], spawn[:, 1]]
    assert counts.tolist() == [0, 1, 2, 3, 4]
    for level in range(4):  # probability 1 at exactly one count level: only those cells sprout
        probs = jnp.zeros(4).at[level].set(1.0)
        grows = np.asarray(mp.density_sprouts(jax.random.PRNGKey(level), apples, spawn, probs, 2))[spawn[:, 0], spawn[:, 1]]
        expected = [min(k, 3) == level for k in range(5)]
        assert grows.tolist() == expected, level


def test_harvest_open_rates_and_a_patch_with_no_live_neighbour_never_regrows():
    probs = jnp.asarray([0.0, 0.0025, 0.005, 0.025])
    apples = jnp.zeros((7, 7), bool).at[3, 3].set(True)
    spawn = np.array([[3, 4], [0, 0]], np.int32)  # one live neighbour / none
    keys = jax.random.split(jax.random.PRNGKey(0), 20000)
    grows = jax.jit(jax.vmap(lambda k: mp.density_sprouts(k, apples, spawn, probs, 2)[spawn[:, 0], spawn[:, 1]]))(keys)
    rate = np.asarray(grows).mean(axis=0)
    assert rate[1] == 0.0
    assert abs(rate[0] - 0.0025) < 4 * np.sqrt(0.0025 / 20000)


def test_an_apple_that_appears_under_a_player_is_eaten_by_it():
    apples = jnp.zeros((5, 5), bool)
    grows = apples.at[1, 1].set(True).at[3, 3].set(True)
    pos = jnp.asarray([[1, 1], [2, 2], [3, 3]], jnp.int32)
    on_map = jnp.asarray([True, True, False])
    after, eaten = mp.grow_under_players(apples, grows, pos, on_map)
    assert np.asarray(eaten).tolist() == [True, False, False]
    assert not bool(after[1, 1]) and bool(after[3, 3])  # a removed player eats nothing


# ----- zap beam -----
def test_each_lane_stops_at_the_first_player():
    walls = room()
    # firer 0 at (3, 1) facing east; 1 right ahead, 2 behind 1 in the same lane, 3 in the left lane two ahead
    hits = zap([[3, 1], [3, 2], [3, 3], [2, 3]], [E, W, W, W], [True, False, False, False], walls)
    assert hits[0].tolist() == [False, True, False, True]


def test_side_lanes_start_level_with_the_firer_and_the_centre_lane_one_ahead():
    walls = room()
    # length 3, radius 1: side lanes cover 0..2 cells ahead, the centre lane 1..3
    firer_east = zap([[3, 3], [2, 3], [3, 6], [4, 6]], [E, S, S, S], [True, False, False, False], walls)
    assert firer_east[0].tolist() == [False, True, True, False]  # beside: hit; centre 3 ahead: hit; side 3 ahead: missed


def test_walls_block_the_beam_and_nobody_zaps_itself():
    walls = room().at[3, 3].set(True)
    hits = zap([[3, 2], [3, 4]], [E, W], [True, True], walls)
    assert not hits.any()


def test_mutual_zaps_both_land():
    hits = zap([[3, 2], [3, 3]], [E, W], [True, True], room())
    assert hits[0, 1] and hits[1, 0]


def test_removed_players_neither_block_nor_get_hit():
    hits = zap([[3, 1], [3, 2], [3, 3]], [E, W, W], [True, False, False], room(), on_map=[True, False, True])
    assert hits[0].tolist() == [False, False, True]


def test_wider_beams_skip_outer_lanes_blocked_at_their_first_cell():
    lateral, ahead, valid, inner = mp.beam_lanes(4, 2)
    assert lateral.tolist() == [-1, -2, 1, 2, 0]
    assert valid.sum(axis=1).tolist() == [4, 3, 4, 3, 4] and ahead[4, 0] == 1 and ahead[0, 0] == 0
    walls = room(9, 9)
    # firer at (4, 4) facing north: its left lanes are columns 3 and 2; a wall right beside it (4, 3) blocks the
    # first lane at its first cell, so the outer lane (column 2) is skipped
    open_hits = zap([[4, 4], [3, 2]], [N, S], [True, False], walls, length=4, radius=2)
    blocked_hits = zap([[4, 4], [3, 2]], [N, S], [True, False], walls.at[4, 3].set(True), length=4, radius=2)
    assert open_hits[0, 1] and not blocked_hits[0, 1]


# ----- cooldown -----
def test_zap_cooldown_lets_a_player_fire_every_cooldown_plus_one_steps():
    cooldown, fired, ready = jnp.zeros(1, jnp.int32), [], []
    for _ in range(8):
        fires, cooldown = mp.cooldown_fire(cooldown, jnp.ones(1, bool), jnp.ones(1, bool), jnp.int32(2))
        fired.append(bool(fires[0]))
        ready.append(float(mp.ready_to_shoot(cooldown, jnp.ones(1, bool), jnp.int32(2))[0]))
    assert fired == [True, False, False, True, False, False, True, False]
    assert ready == [0.0, 0.5, 1.0, 0.0, 0.5, 1.0, 0.0, 0.5]


def test_the_timer_stands_still_while_removed_and_a_removed_player_reads_not_ready():
    fires, cooldown = mp.cooldown_fire(jnp.asarray([2]), jnp.asarray([False]), jnp.asarray([True]), jnp.int32(2))
    assert not bool(fires[0]) and int(cooldown[0]) == 2
    assert float(mp.ready_to_shoot(jnp.asarray([0]), jnp.asarray([False]), jnp.int32(2))[0]) == 0.0


# ----- movement -----
def test_moves_are_processed_one_after_another_so_followers_may_follow():
    walls = room()
    pos = jnp.asarray([[3, 2], [3, 3]], jnp.int32)  # 0 behind 1, both facing east and moving forward
    orient = jnp.asarray([E, E], jnp.int32)
    keys = jax.random.split(jax.random.PRNGKey(0), 40)
    moved = jax.jit(jax.vmap(lambda k: mp.sequential_moves(k, pos, orient, jnp.asarray([FORWARD, FORWARD]), walls, jnp.ones(2, bool))))(keys)
    outcomes = {tuple(map(tuple, new)) for new in np.asarray(moved).tolist()}
    assert outcomes == {((3, 3), (3, 4)), ((3, 2), (3, 4))}  # 1 always moves; 0 follows iff 1 went first


def test_swaps_fail_and_a_contested_cell_goes_to_exactly_one_player():
    walls = room()
    swap = mp.sequential_moves(jax.random.PRNGKey(0), jnp.asarray([[3, 2], [3, 3]]), jnp.asarray([E, W]), jnp.asarray([FORWARD, FORWARD]), walls, jnp.ones(2, bool))
    assert np.asarray(swap).tolist() == [[3, 2], [3, 3]]
    keys = jax.random.split(jax.random.PRNGKey(1), 40)
    contest = jax.vmap(lambda k: mp.sequential_moves(k, jnp.asarray([[3, 2], [3, 4]]), jnp.asarray([E, W]), jnp.asarray([FORWARD, FORWARD]), walls, jnp.ones(2, bool)))
    cols = np.asarray(jax.jit(contest)(keys))[:, :, 1]
    assert np.all(np.sum(cols == 3, axis=1) == 1)  # exactly one player takes the cell, the other stays
    assert set(np.argmax(cols == 3, axis=1).tolist()) == {0, 1}


def test_removed_players_do_not_block_and_walls_do():
    walls = room()
    new = mp.sequential_moves(jax.random.PRNGKey(0), jnp.asarray([[3, 2], [3, 3], [1, 1]]), jnp.asarray([E, E, N]), jnp.asarray([FORWARD, NOOP, FORWARD]), walls, jnp.asarray([True, False, True]))
    assert np.asarray(new).tolist() == [[3, 3], [3, 3], [1, 1]]


# ----- Cleanup -----
def test_apple_growth_probability_interpolates_between_the_thresholds():
    p = [float(mp.apple_growth_probability(jnp.float32(d), 0.05, 0.4, 0.0)) for d in (0.0, 0.2, 0.4, 0.6)]
    np.testing.assert_allclose(p, [0.05, 0.025, 0.0, 0.0], atol=1e-7)


def test_dirt_spawns_one_clean_cell_at_a_time_and_only_when_active():
    river = jnp.zeros((4, 4), bool).at[1, :].set(True)
    waste = river.at[1, 0].set(False).at[1, 1].set(False) & river
    idle = SPAWN_DIRT(jax.random.PRNGKey(0), waste, river, jnp.float32(1.0), jnp.bool_(False))
    assert bool(jnp.all(idle == waste))
    keys = jax.random.split(jax.random.PRNGKey(0), 30)
    after = np.asarray(jax.jit(jax.vmap(lambda k: SPAWN_DIRT(k, waste, river, jnp.float32(1.0), jnp.bool_(True))))(keys))
    new = after & ~np.asarray(waste)
    assert np.all(new.sum(axis=(1, 2)) == 1)
    assert new[:, 1, 0].any() and new[:, 1, 1].any() and new.sum() == new[:, 1, :2].sum()
    full = SPAWN_DIRT(jax.random.PRNGKey(0), river, river, jnp.float32(1.0), jnp.bool_(True))
    assert bool(jnp.all(full == river))


def test_clean_beam_cleans_the_first_dirt_of_each_lane_and_passes_players():
    walls = room()
    waste = jnp.zeros((7, 9), bool).at[3, 3].set(True).at[3, 4].set(True).at[2, 2].set(True)
    pos = jnp.asarray([[3, 1], [3, 2]], jnp.int32)  # player 1 stands in the centre lane before the dirt
    after, cleaned = CLEAN(pos, jnp.asarray([E, N]), jnp.asarray([True, False]), waste, walls, 3, 1)
    assert not bool(after[3, 3]) and bool(after[3, 4])  # the centre lane stops at its first dirt
    assert not bool(after[2, 2]) and np.asarray(cleaned).tolist() == [2, 0]


def test_two_clean_beams_on_the_same_dirt_are_both_credited():
    waste = jnp.zeros((7, 9), bool).at[3, 4].set(True)
    after, cleaned = CLEAN(jnp.asarray([[3, 2], [3, 6]]), jnp.asarray([E, W]), jnp.asarray([True, True]), waste, room(), 3, 1)
    assert not bool(after.any()) and np.asarray(cleaned).tolist() == [1, 1]
