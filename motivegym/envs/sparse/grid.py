"""Grid helpers shared by the sparse-reward worlds: moves, windows, occupancy and pixel art."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

Array = jax.Array

#: Row/column offsets of the four moves in action order: up, down, left, right.
DIRECTIONS = np.array([[-1, 0], [1, 0], [0, -1], [0, 1]], dtype=np.int32)


def in_bounds(position: Array, height: int, width: int) -> Array:
    """True where ``position = (row, col)`` lies inside a ``height × width`` grid."""
    return (position[..., 0] >= 0) & (position[..., 0] < height) & (position[..., 1] >= 0) & (position[..., 1] < width)


def cell_value(grid: Array, position: Array, outside: int) -> Array:
    """``grid[position]``, or ``outside`` when the position leaves the grid."""
    height, width = grid.shape
    row = jnp.clip(position[0], 0, height - 1)
    col = jnp.clip(position[1], 0, width - 1)
    return jnp.where(in_bounds(position, height, width), grid[row, col], outside)


def local_window(grid: Array, centre: Array, height: int, width: int, fill: int) -> Array:
    """The ``height × width`` window of ``grid`` centred on ``centre`` (odd sizes), padded with ``fill``."""
    pad_rows, pad_cols = height // 2, width // 2
    padded = jnp.pad(grid, ((pad_rows, pad_rows), (pad_cols, pad_cols)), constant_values=fill)
    return jax.lax.dynamic_slice(padded, (centre[0], centre[1]), (height, width))


def occupancy(positions: Array, present: Array, height: int, width: int) -> Array:
    """``[height, width]`` bool grid, True at every position whose ``present`` flag is set."""
    grid = jnp.zeros((height, width), jnp.int32)
    rows = jnp.clip(positions[:, 0], 0, height - 1)
    cols = jnp.clip(positions[:, 1], 0, width - 1)
    return grid.at[rows, cols].add(present.astype(jnp.int32)) > 0


def matches(positions: Array, target: Array, present: Array) -> Array:
    """``[k]`` bool: which present entities stand on ``target``."""
    return present & jnp.all(positions == target[None, :], axis=-1)


def top_cells(scores: Array, allowed: Array, k: int) -> Array:
    """``[k, 2]`` (row, col) of the ``k`` highest-scoring allowed cells (uniform scores: a uniform draw without replacement)."""
    width = allowed.shape[1]
    _, flat = jax.lax.top_k(jnp.where(allowed, scores, -1.0).ravel(), k)
    return jnp.stack([flat // width, flat % width], axis=-1).astype(jnp.int32)


def upscale(image: np.ndarray, cell: int) -> np.ndarray:
    """Repeat every pixel of an ``[H, W, 3]`` image into a ``cell × cell`` block."""
    return np.repeat(np.repeat(image, cell, axis=0), cell, axis=1)


def paint_cells(image: np.ndarray, cells: np.ndarray, colours: np.ndarray, cell: int, margin: int) -> None:
    """Draw a filled square inset by ``margin`` pixels in each of ``cells`` (``[k, 2]`` row/col) in place."""
    for (row, col), colour in zip(np.asarray(cells), np.asarray(colours)):
        top, left = row * cell + margin, col * cell + margin
        image[top : (row + 1) * cell - margin, left : (col + 1) * cell - margin] = colour


def agent_colours(n: int) -> np.ndarray:
    """``[n, 3]`` uint8 colours, distinct per agent (the same palette in every env of the family)."""
    palette = np.array(
        [[230, 25, 75], [0, 130, 200], [255, 225, 25], [145, 30, 180], [245, 130, 48], [70, 240, 240], [240, 50, 230], [60, 180, 75]],
        dtype=np.uint8,
    )
    return palette[np.arange(n) % len(palette)]
