"""Scripted (hand-written) policies for the discrete-action envs, read from each agent's own observation.

They are the documented reference points of the grid and sparse envs where no oracle exists
(``motivegym.experiments.dilemma_strength`` scores them as equilibrium / optimum estimates). Like the
policies of :mod:`motivegym.baselines.policies` they are frozen dataclasses with ``init(env, params)``
and a jit/vmap-safe ``__call__(key, obs, state)`` emitting the joint action; every agent acts on its
own observation row only (no global state, no communication). Per-agent parameters live in the
policy state, so a profile in which one agent plays differently (a unilateral deviation) is one field.

* ``GridForager`` (Harvest, Cleanup; egocentric views): walk to the nearest visible apple and eat it.
  ``restraint=k`` only targets apples with at least ``k`` other apples within Euclidean distance 2
  in the view (Harvest regrowth needs neighbours, so restraint keeps patches alive); ``tag=True``
  fires the tag beam whenever another agent stands in its reach; ``cleaners=m`` makes agents
  ``0..m−1`` river cleaners (walk to the nearest visible waste, fire the clean beam once it is in
  reach; head for the river when no waste is visible). With no target in view an agent explores
  (forward 60%, turn left or right 20% each); every action is uniformly random with probability
  ``epsilon`` (a move or turn, never a beam; this breaks deadlocks between agents wanting each other's cell). Paths are not
  planned: walking to a target can trample (eat) other apples on the way.
* ``CoinChaser`` (CoinGame): shortest torus move towards the coin; ``own_only=True`` only chases
  coins of the agent's own colour and waits (noop) otherwise.
* ``KeyPasser`` (KeyDoorGift): fetch the key, open the own door, drop the key there and step away
  to the top-left interior corner (where agents without a task wait), so the next agent can fetch
  it; a move into another agent, and any move with probability ``epsilon``, becomes a random move.
* ``LandmarkAssignment`` (CooperativeNavigation): agent ``i`` walks to landmark ``i``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from motivegym.baselines.policies import Policy, PolicyState
from motivegym.core.env import FunctionalEnv

Array = jax.Array

#: moves up, down, left, right of the sparse grid worlds (actions 1..4)
DIRECTIONS = np.array([[-1, 0], [1, 0], [0, -1], [0, 1]], np.int32)
# grid dilemma actions (motivegym.envs.spatial.grid)
NOOP, FORWARD, BACKWARD, STEP_LEFT, STEP_RIGHT, TURN_LEFT, TURN_RIGHT, FIRE_TAG, FIRE_CLEAN = range(9)
#: offsets (d, l) with 0 < d² + l² ≤ 4: Harvest's regrowth neighbourhood (``regrowth_radius=2``)
DISC_2 = tuple((a, b) for a in range(-2, 3) for b in range(-2, 3) if 0 < a * a + b * b <= 4)


def per_agent(value: Any, n: int, dtype: Any) -> Array:
    """A scalar broadcast to ``[n]``, or a length-``n`` sequence, as an array."""
    array = np.asarray(value, dtype)
    if array.ndim == 0:
        array = np.full(n, array, dtype)
    if array.shape != (n,):
        raise ValueError(f"expected a scalar or {n} per-agent values, got {value!r}")
    return jnp.asarray(array)


def approach(d: Array, lateral: Array) -> Array:
    """The move bringing an egocentric offset (``d`` ahead, ``lateral`` to the right) closer; noop at 0."""
    along = jnp.abs(d) >= jnp.abs(lateral)
    return jnp.where(
        (d == 0) & (lateral == 0),
        NOOP,
        jnp.where(along, jnp.where(d > 0, FORWARD, BACKWARD), jnp.where(lateral > 0, STEP_RIGHT, STEP_LEFT)),
    )


def nearest(mask: Array, d: Array, lateral: Array, noise: Array) -> tuple[Array, Array, Array]:
    """``(any, d, lateral)`` of the closest (Manhattan) cell of ``mask``; ``noise`` breaks ties."""
    distance = jnp.where(mask, jnp.abs(d) + jnp.abs(lateral) + 0.1 * noise, jnp.inf)
    k = jnp.argmin(distance.ravel())
    return jnp.any(mask), d.ravel()[k], lateral.ravel()[k]


@dataclasses.dataclass(frozen=True)
class GridForager(Policy):
    """Harvest/Cleanup forager (see the module docstring); ``restraint``, ``tag`` may be per-agent tuples."""

    restraint: int | tuple[int, ...] = 0
    tag: bool | tuple[bool, ...] = False
    cleaners: int | tuple[bool, ...] = 0
    epsilon: float = 0.05

    @property
    def name(self) -> str:
        return f"forager(restraint={self.restraint}, tag={self.tag}, cleaners={self.cleaners})"

    def init(self, env: FunctionalEnv, params: Any) -> PolicyState:
        n, names = env.n_agents(params), tuple(env.channel_names)
        rows, cols = params.view_ahead + params.view_behind + 1, 2 * params.view_side + 1
        d, lateral = np.meshgrid(params.view_ahead - np.arange(rows), np.arange(cols) - params.view_side, indexing="ij")
        cleaners = np.arange(n) < self.cleaners if isinstance(self.cleaners, int) else self.cleaners
        if np.any(cleaners) and "waste" not in names:
            raise ValueError(f"{env.name}: cleaners need an env with waste (Cleanup)")
        channel = {c: names.index(c) if c in names else 0 for c in ("apple", "waste", "river")}
        return {
            "d": jnp.asarray(d, jnp.int32),  # [rows, cols] forward distance of each window cell (its shape is static)
            "lateral": jnp.asarray(lateral, jnp.int32),
            "channels": jnp.asarray([channel["apple"], channel["waste"], channel["river"], len(names) - 1], jnp.int32),
            "restraint": per_agent(self.restraint, n, np.int32),
            "tag": per_agent(self.tag, n, bool),
            "clean": per_agent(cleaners, n, bool),
            "epsilon": jnp.float32(self.epsilon),
        }

    def __call__(self, key, obs, state):
        n = obs.shape[0]
        actions = jax.vmap(lambda k, o, r, t, c: self.act(k, o, state, r, t, c))(
            jax.random.split(key, n), obs, state["restraint"], state["tag"], state["clean"]
        )
        return actions, state

    def act(self, key: Array, obs: Array, state: PolicyState, restraint: Array, tag: Array, clean: Array) -> Array:
        d, lateral = state["d"], state["lateral"]
        rows, cols = d.shape
        view = obs[:-1].reshape(rows, cols, -1) > 0.5
        apple_ch, waste_ch, river_ch, agent_ch = (state["channels"][k] for k in range(4))
        apples, waste, river, agents = view[..., apple_ch], view[..., waste_ch], view[..., river_ch], view[..., agent_ch]
        tie_key, explore_key, eps_key, random_key = jax.random.split(key, 4)
        noise = jax.random.uniform(tie_key, d.shape)
        in_beam = (d >= 1) & (d <= 3) & (jnp.abs(lateral) <= 1)

        padded = jnp.pad(apples.astype(jnp.int32), 2)
        neighbours = sum(padded[2 + a : 2 + a + rows, 2 + b : 2 + b + cols] for a, b in DISC_2)
        seen, ad, al = nearest(apples & (neighbours >= restraint), d, lateral, noise)
        forage = jnp.where(seen, approach(ad, al), -1)

        waste_seen, wd, wl = nearest(waste, d, lateral, noise)
        turn_to = jnp.where(wl < 0, TURN_LEFT, TURN_RIGHT)
        to_waste = jnp.where(wd >= 1, jnp.where(jnp.abs(wl) <= 1, FORWARD, approach(0, wl)), turn_to)
        river_seen, rd, rl = nearest(river | waste, d, lateral, noise)
        to_river = jnp.where(river_seen, approach(rd, rl), -1)
        cleaning = jnp.where(jnp.any(waste & in_beam), FIRE_CLEAN, jnp.where(waste_seen, to_waste, to_river))

        action = jnp.where(clean, cleaning, forage)
        action = jnp.where(tag & jnp.any(agents & in_beam), FIRE_TAG, action)
        explore = jax.random.choice(explore_key, jnp.array([FORWARD, TURN_LEFT, TURN_RIGHT]), p=jnp.array([0.6, 0.2, 0.2]))
        action = jnp.where(action < 0, explore, action)
        uniform = jax.random.randint(random_key, (), NOOP, TURN_RIGHT + 1)  # a random move or turn (never a beam)
        return jnp.where(jax.random.uniform(eps_key) < state["epsilon"], uniform, action).astype(jnp.int32)


@dataclasses.dataclass(frozen=True)
class CoinChaser(Policy):
    """CoinGame: shortest torus move towards the coin (``own_only``: only towards coins of the own colour)."""

    own_only: bool | tuple[bool, ...] = False

    @property
    def name(self) -> str:
        return f"coin_chaser(own_only={self.own_only})"

    def init(self, env: FunctionalEnv, params: Any) -> PolicyState:
        return {"own_only": per_agent(self.own_only, env.n_agents(params), bool), "cells": jnp.zeros(params.grid_size)}

    def __call__(self, key, obs, state):
        g = state["cells"].shape[0]
        planes = obs.reshape(obs.shape[0], 4, g * g)
        coords = jnp.stack(jnp.unravel_index(jnp.arange(g * g), (g, g)), axis=1)

        def act(planes, own_only):
            me = coords[jnp.argmax(planes[0])]
            own, other = jnp.any(planes[2] > 0.5), jnp.any(planes[3] > 0.5)
            coin = coords[jnp.argmax(planes[2] + planes[3])]
            delta = (coin - me + g // 2) % g - g // 2  # torus offset in [-g/2, g/2)
            move = jnp.where(delta[0] != 0, jnp.where(delta[0] < 0, 1, 2), jnp.where(delta[1] < 0, 3, 4))
            chase = (own | (other & ~own_only)) & jnp.any(delta != 0)
            return jnp.where(chase, move, 0).astype(jnp.int32)

        return jax.vmap(act)(planes, state["own_only"]), state


@dataclasses.dataclass(frozen=True)
class KeyPasser(Policy):
    """KeyDoorGift: fetch the key, open the own door, drop the key on the door cell and wait in a corner."""

    epsilon: float = 0.1

    @property
    def name(self) -> str:
        return "key_passer"

    def init(self, env: FunctionalEnv, params: Any) -> PolicyState:
        return {"cells": jnp.zeros(params.size), "epsilon": jnp.float32(self.epsilon)}

    def __call__(self, key, obs, state):
        size = state["cells"].shape[0]
        coords = jnp.stack(jnp.unravel_index(jnp.arange(size * size), (size, size)), axis=1)

        def act(key, row):
            grid, (holding, door_open) = row[:-3].reshape(size * size, 8) > 0.5, (row[-3] > 0.5, row[-2] > 0.5)
            me, door, key_cell = (coords[jnp.argmax(grid[:, c])] for c in (5, 1, 4))
            key_free = jnp.any(grid[:, 4])
            target = jnp.where(holding, door, jnp.where(key_free & ~door_open, key_cell, jnp.ones(2, jnp.int32)))
            delta = target - me
            on_border_row = (target[0] == 0) | (target[0] == size - 1)  # doors on the top/bottom wall: fix the column first
            rows_first = jnp.where(on_border_row, delta[1] == 0, jnp.abs(delta[0]) >= jnp.abs(delta[1]))
            row_move, col_move = jnp.where(delta[0] < 0, 1, 2), jnp.where(delta[1] < 0, 3, 4)
            first, second = jnp.where(rows_first, row_move, col_move), jnp.where(rows_first, col_move, row_move)

            def free(move):  # the cell the move enters holds no wall, closed door or agent
                cell = jnp.clip(me + jnp.asarray(DIRECTIONS)[move - 1], 0, size - 1)
                return ~jnp.any(grid[cell[0] * size + cell[1], jnp.array([0, 2, 6])]) & ~(
                    grid[cell[0] * size + cell[1], 1] & ~holding
                )

            useful = jnp.where(rows_first, delta[1] != 0, delta[0] != 0)  # the second axis still has distance to cover
            random_move, eps_key = jax.random.randint(key, (), 1, 5), jax.random.fold_in(key, 1)
            move = jnp.where(free(first), first, jnp.where(useful & free(second), second, random_move))
            move = jnp.where(jax.random.uniform(eps_key) < state["epsilon"], random_move, move)
            move = jnp.where(jnp.all(delta == 0), 0, move)
            on_key = key_free & jnp.all(me == key_cell)
            return jnp.where((holding & door_open) | (on_key & ~door_open & ~holding), 5, move)

        return jax.vmap(act)(jax.random.split(key, obs.shape[0]), obs).astype(jnp.int32), state


@dataclasses.dataclass(frozen=True)
class LandmarkAssignment(Policy):
    """CooperativeNavigation: agent ``i`` walks to landmark ``i`` (a fixed assignment; no communication needed)."""

    @property
    def name(self) -> str:
        return "landmark_assignment"

    def init(self, env: FunctionalEnv, params: Any) -> PolicyState:
        return {"scale": jnp.float32(params.size - 1)}

    def __call__(self, key, obs, state):
        n = obs.shape[0]
        offsets = jnp.round(obs[:, 2 : 2 + 2 * n].reshape(n, n, 2) * state["scale"])[jnp.arange(n), jnp.arange(n)]
        dr, dc = offsets[:, 0], offsets[:, 1]
        move = jnp.where(jnp.abs(dr) >= jnp.abs(dc), jnp.where(dr < 0, 1, 2), jnp.where(dc < 0, 3, 4))
        return jnp.where((dr == 0) & (dc == 0), 0, move).astype(jnp.int32), state
