import jax
import numpy as np
import pytest

import motivegym
from motivegym.envs.sparse.worldgen import COAL, GRASS, LAVA, N_MATERIALS, STONE, TREE, WATER, generate_terrain, spawn_square

ENV, PARAMS = motivegym.make_jax("CrafterTeam-v0", n_agents=6, n_cows=16)
RESET = jax.jit(ENV.reset)


def test_same_key_same_map_different_keys_different_maps():
    first, _ = RESET(jax.random.PRNGKey(11), PARAMS)
    again, _ = RESET(jax.random.PRNGKey(11), PARAMS)
    other, _ = RESET(jax.random.PRNGKey(12), PARAMS)
    for a, b in zip(jax.tree.leaves(first), jax.tree.leaves(again)):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(first.terrain, other.terrain)


@pytest.mark.parametrize("seed", range(8))
def test_spawn_cells_are_walkable_and_distinct(seed):
    state, _ = RESET(jax.random.PRNGKey(seed), PARAMS)
    terrain, agents, cows = np.asarray(state.terrain), np.asarray(state.positions), np.asarray(state.cow_positions)
    assert (terrain[agents[:, 0], agents[:, 1]] == GRASS).all() and (terrain[cows[:, 0], cows[:, 1]] == GRASS).all()
    cells = {tuple(c) for c in np.concatenate([agents, cows])}
    assert len(cells) == len(agents) + len(cows)
    first, last = spawn_square(PARAMS.world_size)
    assert ((agents >= first) & (agents <= last)).all()


def test_maps_hold_the_main_materials_and_lava_is_optional():
    keys = jax.random.split(jax.random.PRNGKey(5), 16)
    maps = np.asarray(jax.vmap(lambda k: generate_terrain(k, 32, True))(keys))
    counts = np.stack([np.bincount(m.ravel(), minlength=N_MATERIALS) for m in maps])
    for material in (GRASS, WATER, TREE, STONE, COAL):
        assert (counts[:, material] > 0).mean() >= 0.75
    assert counts[:, LAVA].sum() > 0
    no_lava = np.asarray(jax.vmap(lambda k: generate_terrain(k, 32, False))(keys))
    assert not (no_lava == LAVA).any()
