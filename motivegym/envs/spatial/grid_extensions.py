"""Grid mechanics of the Melting Pot substrates (CoopMining, Mushrooms, GiftRefinement, Territory, in the Matrix) on
top of :mod:`motivegym.envs.spatial.grid` (they depend only on it); each rule is written once here and called by
every substrate that follows it:

* :func:`parse_layout_with`: maps with extra characters (token cells, claimable resources) on top of the
  shared legend, without widening ``grid.LEGEND`` for every env;
* :func:`first_stops` / :func:`first_hits` / :func:`hits_per_cell`: beams whose every lane stops at the first agent
  or blocking cell it meets (Melting Pot's gift, zap, interaction and mine beams; ``grid.beam_hits`` passes through
  agents);
* :func:`tick_cooldown` / :func:`countdown_then_fire`: the beam cooldown (Melting Pot's ``cooldownTime``) in its two
  storage conventions;
* :func:`graduated_sanctions`: the freeze-then-remove ladder of zapped agents;
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


def first_stops(
    cells: Array, reach: Array, firing: Array, agents_pos: Array, targetable: Array, blocking: Array | None = None
) -> tuple[Array, Array]:
    """Where each lane of each firing agent's beam stops: at its first targetable agent or its first ``blocking`` cell.

    ``cells [n, width, length, 2]`` and ``reach [n, width, length]`` come from ``grid.beam_cells`` / ``grid.beam_reach``
    (lanes already stopped by walls). A lane stops at the first reached cell holding a ``targetable`` agent (never the
    firer) or lying on ``blocking [H, W]`` (``None``: nothing but agents stops it), and hits what is there. Melting
    Pot's gift, zap, interaction and mine beams (``onHit`` returning true ends the lane).

    Returns ``(agent_hits [n, width, length, m], cell_hits [n, width, length])``: lane cell ``(i, w, d)`` is the stop
    of a firing agent's lane and holds agent ``j`` / a blocking cell."""
    n = agents_pos.shape[0]
    covers = jnp.all(cells[:, :, :, None, :] == agents_pos[None, None, None, :, :], axis=-1)  # [n, w, L, m]
    covers = covers & reach[..., None] & targetable[None, None, None, :] & ~jnp.eye(n, dtype=bool)[:, None, None, :]
    blocked = jnp.zeros(reach.shape, bool) if blocking is None else read_cells(blocking, cells, outside=False) & reach
    stop = jnp.any(covers, axis=-1) | blocked
    first = stop & (jnp.cumsum(stop, axis=-1) == 1) & firing[:, None, None]
    return covers & first[..., None], first & blocked


def first_hits(
    cells: Array, reach: Array, firing: Array, agents_pos: Array, targetable: Array, blocking: Array | None = None
) -> tuple[Array, Array]:
    """``(agent_hits [n_firer, n_target], cell_hits [n, width, length])`` of beams whose lanes stop at the first agent or
    blocking cell (:func:`first_stops`): a firer hits an agent when any of its lanes stops on it."""
    agent_hits, cell_hits = first_stops(cells, reach, firing, agents_pos, targetable, blocking)
    return jnp.any(agent_hits, axis=(1, 2)), cell_hits


def hits_per_cell(cell_hits: Array, cells: Array, shape: tuple[int, int]) -> Array:
    """int32 ``[H, W]``: how many lanes (``cell_hits [n, width, length]`` at ``cells [n, width, length, 2]``) hit each
    cell this step (the damage a destroyable cell takes)."""
    rows = jnp.where(cell_hits, cells[..., 0], shape[0]).ravel()  # lanes without a hit: rows out of range, dropped
    return jnp.zeros(shape, jnp.int32).at[rows, cells[..., 1].ravel()].add(1, mode="drop")


def tick_cooldown(cooldown: Array, fired: Array, period: Array) -> Array:
    """Cooldown after a step: ``period − 1`` for agents that fired, else ``max(cooldown − 1, 0)``.

    An agent may fire iff its cooldown is 0, so with ``period = p`` it fires at most every ``p`` steps
    (Melting Pot sets the timer to ``cooldownTime`` on firing and counts it down once in the same frame)."""
    return jnp.where(fired, period - 1, jnp.maximum(cooldown - 1, 0)).astype(jnp.int32)


def countdown_then_fire(cooldown: Array, pressed: Array, period: Array | int) -> tuple[Array, Array]:
    """``(fired [n], cooldown after the step [n])`` for a timer that counts down *before* the fire check: the timer drops
    to ``max(cooldown − 1, 0)``; an agent pressing fire with the timer at 0 fires and the timer becomes ``period``.

    The same firing rule as :func:`tick_cooldown` (at most every ``period`` steps) with the stored timer one higher
    (``tick_cooldown``'s timer is ``max(cooldown − 1, 0)``), so the beam can fire next step iff ``cooldown ≤ 1``."""
    cooldown = jnp.maximum(cooldown - 1, 0)
    fired = pressed & (cooldown == 0)
    return fired, jnp.where(fired, period, cooldown)


def graduated_sanctions(hit_count: Array, marked: Array) -> tuple[Array, Array]:
    """``(freeze [n], remove [n])`` for agents zapped ``hit_count`` times this step (Melting Pot
    ``GraduatedSanctionsMarking``): an unmarked agent hit once is frozen (and marked by the caller); a marked agent
    (``marked`` true or > 0) hit again, or an agent hit twice in one step, is removed."""
    remove = (hit_count >= 2) | ((hit_count >= 1) & (marked > 0))
    return (hit_count >= 1) & ~remove, remove


def window_values(grid: Array, pos: Array, orient: Array, ahead: int, behind: int, side: int, outside: int) -> Array:
    """``[n, ahead + behind + 1, 2·side + 1]``: ``grid [H, W]`` read at each agent's rotated window (``grid.view_cells``),
    ``outside`` off the grid."""
    return read_cells(grid, view_cells(pos, orient, ahead, behind, side), outside=outside)
