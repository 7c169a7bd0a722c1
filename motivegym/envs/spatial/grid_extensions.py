"""Generic grid mechanics that :mod:`motivegym.envs.spatial.grid` lacks, used by GiftRefinement and Territory.

Candidates to fold into ``grid.py`` (they depend only on it):

* :func:`parse_layout_with`: maps with extra characters (token cells, claimable resources) on top of the
  shared legend, without widening ``grid.LEGEND`` for every env;
* :func:`first_agent_hits` / :func:`first_hits`: a beam whose every lane stops at the first agent (or blocking
  cell) it meets (Melting Pot's gift and zap beams; ``grid.beam_hits`` passes through agents);
* :func:`tick_cooldown`: a beam cooldown counter (Melting Pot's ``cooldownTime``);
* :func:`window_values`: each agent's egocentric window of an integer grid (e.g. cell owners), for
  observations that differ per observer (own vs others' claims).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from motivegym.envs.spatial.grid import Layout, parse_layout, read_cells, view_cells

Array = jax.Array


@functools.lru_cache(maxsize=64)
def parse_layout_with(rows: tuple[str, ...], extra: tuple[tuple[str, str], ...]) -> tuple[Layout, dict[str, np.ndarray]]:
    """Parse a map whose ``extra`` characters (``(char, floor_or_wall_char)`` pairs) are not in ``grid.LEGEND``.

    Each extra character is replaced by its stand-in (``" "`` floor or ``"#"`` wall) before
    :func:`~motivegym.envs.spatial.grid.parse_layout`; returns the layout and ``{char: [H, W] bool mask}``.
    Unknown characters still raise ``ValueError`` (from ``parse_layout``)."""
    masks = {char: np.array([[c == char for c in row] for row in rows], bool).reshape(len(rows), -1) for char, _ in extra}
    replaced = tuple(row.translate({ord(char): stand_in for char, stand_in in extra}) for row in rows)
    return parse_layout(replaced), masks


def first_agent_hits(cells: Array, reach: Array, firing: Array, agents_pos: Array, targetable: Array) -> Array:
    """bool ``[n_firer, n_target]``: each lane of each firing agent's beam hits only the first targetable agent on it.

    ``cells [n, width, length, 2]`` and ``reach [n, width, length]`` come from ``grid.beam_cells`` / ``grid.beam_reach``
    (lanes already stopped by walls); the firer itself is never hit and never blocks."""
    n = agents_pos.shape[0]
    covers = jnp.all(cells[:, :, :, None, :] == agents_pos[None, None, None, :, :], axis=-1)  # [n, w, L, m]
    covers = covers & reach[..., None] & targetable[None, None, None, :] & ~jnp.eye(n, dtype=bool)[:, None, None, :]
    occupied = jnp.any(covers, axis=-1)  # [n, w, L]
    first = occupied & (jnp.cumsum(occupied, axis=-1) == 1)
    return jnp.any(covers & first[..., None], axis=(1, 2)) & firing[:, None]


def first_hits(
    cells: Array, reach: Array, firing: Array, agents_pos: Array, targetable: Array, blocking: Array
) -> tuple[Array, Array]:
    """Like :func:`first_agent_hits`, but a lane also stops at the first cell of ``blocking [H, W]`` (which it hits).

    Returns ``(agent_hits [n_firer, n_target], cell_hits [n, width, length])``: each lane of a firing agent hits
    its first targetable agent or its first blocking cell, whichever comes first (an agent never stands on a
    blocking cell)."""
    n = agents_pos.shape[0]
    covers = jnp.all(cells[:, :, :, None, :] == agents_pos[None, None, None, :, :], axis=-1)  # [n, w, L, m]
    covers = covers & reach[..., None] & targetable[None, None, None, :] & ~jnp.eye(n, dtype=bool)[:, None, None, :]
    blocked = read_cells(blocking, cells, outside=False) & reach
    stop = jnp.any(covers, axis=-1) | blocked
    first = stop & (jnp.cumsum(stop, axis=-1) == 1) & firing[:, None, None]
    return jnp.any(covers & first[..., None], axis=(1, 2)), first & blocked


def tick_cooldown(cooldown: Array, fired: Array, period: Array) -> Array:
    """Cooldown after a step: ``period − 1`` for agents that fired, else ``max(cooldown − 1, 0)``.

    An agent may fire iff its cooldown is 0, so with ``period = p`` it fires at most every ``p`` steps
    (Melting Pot sets the timer to ``cooldownTime`` on firing and counts it down once in the same frame)."""
    return jnp.where(fired, period - 1, jnp.maximum(cooldown - 1, 0)).astype(jnp.int32)


def window_values(grid: Array, pos: Array, orient: Array, ahead: int, behind: int, side: int, outside: int) -> Array:
    """``[n, ahead + behind + 1, 2·side + 1]``: ``grid [H, W]`` read at each agent's rotated window (``grid.view_cells``),
    ``outside`` off the grid."""
    return read_cells(grid, view_cells(pos, orient, ahead, behind, side), outside=outside)
