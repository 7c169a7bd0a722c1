"""Seeded procedural terrain for :class:`~motivegym.envs.sparse.crafter.CrafterTeam`.

Thresholded smooth value noise (Perlin 1985 style lattice noise with smoothstep interpolation)
in the spirit of Crafter's simplex-noise generator (Hafner 2021, §3): lakes with sandy shores,
forests, and mountains holding caves, coal, iron, diamonds and (optionally) lava. Spawn area:
the grid centre is pushed towards grass and a ``(2r+1)²`` square around it is cleared, so spawn
cells are always walkable. Everything is a pure function of the key (same key, same map).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from motivegym.envs.sparse.grid import top_cells

Array = jax.Array

# Material indices (shared with crafter.py; OUT only appears in views).
GRASS, SAND, WATER, TREE, STONE, COAL, IRON, DIAMOND, TABLE, FURNACE, LAVA, PATH = range(12)
MATERIAL_NAMES = ("grass", "sand", "water", "tree", "stone", "coal", "iron", "diamond", "table", "furnace", "lava", "path")
N_MATERIALS = len(MATERIAL_NAMES)
OUT = N_MATERIALS

SPAWN_RADIUS = 2  # the cleared spawn square is (2·SPAWN_RADIUS + 1)² cells


def value_noise(lattice: Array, size: int, scale: int) -> Array:
    """``[size, size]`` smooth noise in ``[0, 1]`` from a uniform ``lattice`` spaced ``scale`` cells, smoothstep-interpolated."""
    coords = jnp.arange(size, dtype=jnp.float32) / scale
    base = jnp.floor(coords).astype(jnp.int32)
    frac = coords - base
    frac = frac * frac * (3.0 - 2.0 * frac)
    rows, cols = base[:, None], base[None, :]
    fy, fx = frac[:, None], frac[None, :]
    top = lattice[rows, cols] * (1 - fx) + lattice[rows, cols + 1] * fx
    bottom = lattice[rows + 1, cols] * (1 - fx) + lattice[rows + 1, cols + 1] * fx
    return top * (1 - fy) + bottom * fy


def lattice_side(size: int, scale: int) -> int:
    return size // scale + 2


def split_uniform(key: Array, shapes: list[tuple[int, ...]]) -> list[Array]:
    """Uniform ``[0, 1)`` arrays of the given shapes from ONE draw (one PRNG kernel compiles much faster than many)."""
    sizes = [int(np.prod(shape)) for shape in shapes]
    flat = jax.random.uniform(key, (sum(sizes),))
    offsets = np.cumsum([0] + sizes)
    return [flat[a:b].reshape(shape) for a, b, shape in zip(offsets[:-1], offsets[1:], shapes)]


def spawn_square(size: int) -> tuple[int, int]:
    """``(first, last)`` row/col index of the cleared square around the centre."""
    centre = size // 2
    return centre - SPAWN_RADIUS, centre + SPAWN_RADIUS


def generate_terrain(key: Array, size: int, lava: bool) -> Array:
    """``[size, size]`` int32 material map (see :data:`MATERIAL_NAMES`).

    Fields: water and mountain ``0.65·noise(8) + 0.35·noise(4)`` minus ``0.4·max(0, 1 − d/(0.3·size))``
    near the spawn (``d``: distance to the centre), trees ``noise(4)``, caves and lava ``noise(3)``,
    per-cell uniforms for ores and scattered trees; thresholds below (first match wins).
    """
    scales = [8, 4, 8, 4, 4, 3, 3]  # water ×2 octaves, mountain ×2, trees, caves, lava
    shapes = [(lattice_side(size, s), lattice_side(size, s)) for s in scales] + [(size, size), (size, size)]
    water_c, water_f, mountain_c, mountain_f, trees_l, caves_l, lava_l, ore, scatter = split_uniform(key, shapes)
    coords = jnp.arange(size, dtype=jnp.float32) - size // 2
    distance = jnp.sqrt(coords[:, None] ** 2 + coords[None, :] ** 2)
    near_spawn = jnp.clip(1.0 - distance / (0.3 * size), 0.0, 1.0)
    water = 0.65 * value_noise(water_c, size, 8) + 0.35 * value_noise(water_f, size, 4) - 0.4 * near_spawn
    mountain = 0.65 * value_noise(mountain_c, size, 8) + 0.35 * value_noise(mountain_f, size, 4) - 0.4 * near_spawn
    trees = value_noise(trees_l, size, 4)
    caves = value_noise(caves_l, size, 3)
    lava_noise = value_noise(lava_l, size, 3)

    in_mountain = mountain > 0.6
    terrain = jnp.select(
        [
            water > 0.66,
            water > 0.6,
            in_mountain & (caves > 0.78),
            in_mountain & (mountain > 0.7) & (lava_noise > 0.8) if lava else jnp.zeros((size, size), bool),
            in_mountain & (mountain > 0.68) & (ore > 0.985),
            in_mountain & (mountain > 0.64) & (ore > 0.94),
            in_mountain & (ore > 0.85),
            in_mountain,
            ((trees > 0.6) & (scatter > 0.35)) | (scatter > 0.97),
        ],
        [WATER, SAND, PATH, LAVA, DIAMOND, IRON, COAL, STONE, TREE],
        GRASS,
    ).astype(jnp.int32)
    first, last = spawn_square(size)
    return terrain.at[first : last + 1, first : last + 1].set(GRASS)


def spawn_positions(key: Array, size: int, n: int) -> Array:
    """``[n, 2]`` distinct cells of the cleared spawn square, uniformly drawn."""
    first, last = spawn_square(size)
    rows = jnp.arange(size)
    in_square = ((rows >= first) & (rows <= last))[:, None] & ((rows >= first) & (rows <= last))[None, :]
    return top_cells(jax.random.uniform(key, (size, size)), in_square, n)


def random_cells(key: Array, allowed: Array, k: int) -> Array:
    """``[k, 2]`` distinct cells drawn uniformly among the True cells of ``allowed`` (needs ≥ k of them)."""
    return top_cells(jax.random.uniform(key, allowed.shape), allowed, k)


# ----- Crafter-sized worlds (CrafterTeam rules="crafter") -----


def gradient_noise(key: Array, size: int, rows: int, cols: int) -> Array:
    """``[size, size]`` Perlin gradient noise (Perlin 2002: random unit gradients on a ``(rows+1) × (cols+1)``
    lattice, quintic fade ``6t⁵ − 15t⁴ + 10t³``), min-max normalised to ``[0, 1]``.

    ``rows``/``cols``: lattice periods across the map (more periods: finer features).
    """
    angles = 2.0 * jnp.pi * jax.random.uniform(key, (rows + 1, cols + 1))
    gradients = jnp.stack([jnp.cos(angles), jnp.sin(angles)], axis=-1)

    def lattice(periods: int) -> tuple[Array, Array]:
        coords = jnp.arange(size, dtype=jnp.float32) * periods / size
        cell = jnp.floor(coords).astype(jnp.int32)
        return cell, coords - cell

    row_cell, fy = lattice(rows)
    col_cell, fx = lattice(cols)
    r, c = row_cell[:, None], col_cell[None, :]
    fy, fx = fy[:, None], fx[None, :]

    def ramp(dr: int, dc: int) -> Array:
        g = gradients[r + dr, c + dc]
        return g[..., 0] * (fy - dr) + g[..., 1] * (fx - dc)

    def fade(t: Array) -> Array:
        return t * t * t * (t * (t * 6.0 - 15.0) + 10.0)

    ty, tx = fade(fy), fade(fx)
    top = ramp(0, 0) * (1 - tx) + ramp(0, 1) * tx
    bottom = ramp(1, 0) * (1 - tx) + ramp(1, 1) * tx
    noise = top * (1 - ty) + bottom * ty
    return (noise - noise.min()) / jnp.maximum(noise.max() - noise.min(), 1e-6)


def generate_crafter_terrain(key: Array, size: int, clear_radius: int) -> Array:
    """``[size, size]`` material map laid out as Craftax-Classic's ``world_gen.generate_world`` (Crafter's structure).

    With ``p = clip(|Δrow| + |Δcol| from the centre / 5, 0, 1)`` and Perlin noises in ``[0, 1]`` (lattice periods
    ``size/16`` for water and mountains, ``size/4`` for trees, ``size/8 × size/2`` for tunnels, transposed for the
    other direction): ``w = water + p − 1``: water above 0.7, sand in ``(0.6, 0.75)``; ``m = mountain + 0.05 + p − 1``:
    stone above 0.7, tunnels (path) where ``m > 0.7`` and the tunnel noise exceeds 0.8, caves (path) where ``m > 0.85``
    and ``w > 0.4``; coal on 4 % and iron on 3 % of stone, diamonds on 0.5 % of stone where ``m > 0.8``; trees where
    the tree noise exceeds 0.5 and a uniform exceeds 0.8 (grass only); lava where ``m > 0.85`` and the tree noise
    exceeds 0.7. The ``(2·clear_radius + 1)²`` centre square is grass, and one random stone cell holds a diamond
    (Craftax-Classic's ``always_diamond``).
    """
    keys = jax.random.split(key, 6)
    coal_u, iron_u, diamond_u, tree_u, pick = split_uniform(keys[5], [(size, size)] * 4 + [(size, size)])
    coarse, fine = max(size // 16, 1), max(size // 4, 1)
    water_noise = gradient_noise(keys[0], size, coarse, coarse)
    mountain_noise = gradient_noise(keys[1], size, coarse, coarse)
    tunnels = gradient_noise(keys[2], size, max(size // 8, 1), max(size // 2, 1))
    trees = gradient_noise(keys[3], size, fine, fine)

    rows = jnp.arange(size)
    centre = size // 2
    proximity = jnp.clip((jnp.abs(rows - centre)[:, None] + jnp.abs(rows - centre)[None, :]) / 5.0, 0.0, 1.0)
    water = water_noise + proximity - 1.0
    mountain = mountain_noise + 0.05 + proximity - 1.0

    terrain = jnp.where(water > 0.7, WATER, GRASS)
    terrain = jnp.where((water > 0.6) & (water < 0.75) & (terrain != WATER), SAND, terrain)
    rocky = mountain > 0.7
    terrain = jnp.where(rocky, STONE, terrain)
    terrain = jnp.where(rocky & ((tunnels > 0.8) | (tunnels.T > 0.8)), PATH, terrain)
    terrain = jnp.where((mountain > 0.85) & (water > 0.4), PATH, terrain)
    terrain = jnp.where((terrain == STONE) & (coal_u < 0.04), COAL, terrain)
    terrain = jnp.where((terrain == STONE) & (iron_u < 0.03), IRON, terrain)
    terrain = jnp.where((terrain == STONE) & (mountain > 0.8) & (diamond_u < 0.005), DIAMOND, terrain)
    terrain = jnp.where((terrain == GRASS) & (trees > 0.5) & (tree_u > 0.8), TREE, terrain)
    terrain = jnp.where((mountain > 0.85) & (trees > 0.7), LAVA, terrain)
    first, last = centre - clear_radius, centre + clear_radius
    terrain = terrain.at[first : last + 1, first : last + 1].set(GRASS).astype(jnp.int32)
    diamond_cell = top_cells(pick, terrain == STONE, 1)[0]
    has_stone = jnp.any(terrain == STONE)
    return terrain.at[diamond_cell[0], diamond_cell[1]].set(jnp.where(has_stone, DIAMOND, terrain[diamond_cell[0], diamond_cell[1]]))


def centre_spawn_positions(key: Array, size: int, n: int, radius: int) -> Array:
    """``[n, 2]``: the centre cell for one agent (Crafter, Craftax-Classic), else distinct cells of the ``(2r+1)²`` centre square."""
    centre = size // 2
    if n == 1:
        return jnp.array([[centre, centre]], jnp.int32)
    rows = jnp.arange(size)
    inside = (jnp.abs(rows - centre) <= radius)[:, None] & (jnp.abs(rows - centre) <= radius)[None, :]
    return top_cells(jax.random.uniform(key, (size, size)), inside, n)
