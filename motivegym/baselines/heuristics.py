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
  planned: walking to a target can trample (eat) other apples on the way. Under ``preset="ssd"`` (needs
  ``view_encoding="onehot"``) it maps its intended actions to SSD's by name (``env.action_names``), uses
  SSD's beam shapes (centre lane ``1..length`` ahead, side lanes ``0..length−1``) and tracks whether SSD's
  view is turned over (SSD shows east/west-facing agents a window whose top row lies behind them); see
  :meth:`GridForager.ssd_call`.
* ``CleaningForager`` (Cleanup's cooperator): a ``GridForager`` whose agents each switch between cleaning the
  river and eating, by the waste fraction of the river in their own view and a step budget per mode.
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
        ssd = bool(getattr(env, "is_ssd", lambda p: False)(params))
        if ssd and params.view_encoding != "onehot":
            raise ValueError(
                f"{env.name}: the grid forager reads one-hot cell channels; under preset='ssd' pass view_encoding='onehot' "
                f"(got view_encoding={params.view_encoding!r})"
            )
        rows, cols = params.view_ahead + params.view_behind + 1, 2 * params.view_side + 1
        d, lateral = np.meshgrid(params.view_ahead - np.arange(rows), np.arange(cols) - params.view_side, indexing="ij")
        cleaners = np.arange(n) < self.cleaners if isinstance(self.cleaners, int) else self.cleaners
        if np.any(cleaners) and "waste" not in names:
            raise ValueError(f"{env.name}: cleaners need an env with waste (Cleanup)")
        channel = {c: names.index(c) if c in names else 0 for c in ("apple", "waste", "river")}
        state = {
            "d": jnp.asarray(d, jnp.int32),  # [rows, cols] forward distance of each window cell (its shape is static)
            "lateral": jnp.asarray(lateral, jnp.int32),
            "channels": jnp.asarray([channel["apple"], channel["waste"], channel["river"], len(names) - 1], jnp.int32),
            "restraint": per_agent(self.restraint, n, np.int32),
            "tag": per_agent(self.tag, n, bool),
            "clean": per_agent(cleaners, n, bool),
            "epsilon": jnp.float32(self.epsilon),
        }
        if ssd:
            state.update(ssd_state(env, params, n, names, d, lateral))
        return state

    def __call__(self, key, obs, state):
        n = obs.shape[0]
        if "ssd_actions" in state:
            return self.ssd_call(key, obs, state)
        actions = jax.vmap(lambda k, o, r, t, c: self.act(k, o, state, r, t, c))(
            jax.random.split(key, n), obs, state["restraint"], state["tag"], state["clean"]
        )
        return actions, state

    def act(self, key: Array, obs: Array, state: PolicyState, restraint: Array, tag: Array, clean: Array) -> Array:
        """One agent's action in the default preset's vocabulary (``NOOP`` .. ``FIRE_CLEAN``)."""
        d = state["d"]
        rows, cols = d.shape
        view = obs[:-1].reshape(rows, cols, -1) > 0.5
        in_beam = (d >= 1) & (d <= 3) & (jnp.abs(state["lateral"]) <= 1)
        return self.intent(key, view, state, restraint, tag, clean, in_beam, in_beam)

    def intent(
        self, key: Array, view: Array, state: PolicyState, restraint: Array, tag: Array, clean: Array, tag_beam: Array, clean_beam: Array
    ) -> Array:
        """The intended action (default vocabulary) from a bool ``[rows, cols, C]`` view whose top row lies ahead."""
        d, lateral = state["d"], state["lateral"]
        rows, cols = d.shape
        apple_ch, waste_ch, river_ch, agent_ch = (state["channels"][k] for k in range(4))
        apples, waste, river, agents = view[..., apple_ch], view[..., waste_ch], view[..., river_ch], view[..., agent_ch]
        tie_key, explore_key, eps_key, random_key = jax.random.split(key, 4)
        noise = jax.random.uniform(tie_key, d.shape)

        padded = jnp.pad(apples.astype(jnp.int32), 2)
        neighbours = sum(padded[2 + a : 2 + a + rows, 2 + b : 2 + b + cols] for a, b in DISC_2)
        seen, ad, al = nearest(apples & (neighbours >= restraint), d, lateral, noise)
        forage = jnp.where(seen, approach(ad, al), -1)

        waste_seen, wd, wl = nearest(waste, d, lateral, noise)
        turn_to = jnp.where(wl < 0, TURN_LEFT, TURN_RIGHT)
        to_waste = jnp.where(wd >= 1, jnp.where(jnp.abs(wl) <= 1, FORWARD, approach(0, wl)), turn_to)
        river_seen, rd, rl = nearest(river | waste, d, lateral, noise)
        to_river = jnp.where(river_seen, approach(rd, rl), -1)
        cleaning = jnp.where(jnp.any(waste & clean_beam), FIRE_CLEAN, jnp.where(waste_seen, to_waste, to_river))

        action = jnp.where(clean, cleaning, forage)
        action = jnp.where(tag & jnp.any(agents & tag_beam), FIRE_TAG, action)
        explore = jax.random.choice(explore_key, jnp.array([FORWARD, TURN_LEFT, TURN_RIGHT]), p=jnp.array([0.6, 0.2, 0.2]))
        action = jnp.where(action < 0, explore, action)
        uniform = jax.random.randint(random_key, (), NOOP, TURN_RIGHT + 1)  # a random move or turn (never a beam)
        return jnp.where(jax.random.uniform(eps_key) < state["epsilon"], uniform, action).astype(jnp.int32)

    def ssd_call(self, key: Array, obs: Array, state: PolicyState) -> tuple[Array, PolicyState]:
        """``preset="ssd"``: the SSD view is a square window whose top row lies *behind* the agent when it faces
        east or west (``map_env.color_view``, see :func:`~motivegym.envs.spatial.ssd_rules.view_offsets`), and
        nothing in the observation says which way the agent faces. Each agent keeps a belief ``flipped`` (the
        view is turned 180°), updated by :func:`update_flip_belief` from its own last action and the shift of
        the scene between its last two views. Intended actions
        are mapped to SSD's indices by name (``env.action_names``)."""
        n = obs.shape[0]
        d = state["d"]
        rows, cols = d.shape
        views = obs.reshape(n, rows, cols, -1) > 0.5
        static = views[..., :-1]  # [n, rows, cols, C − 1]: every channel but agents
        flipped = update_flip_belief(state["ssd_flipped"], state["ssd_last_intent"], state["ssd_prev_static"], static)
        upright = jnp.where(flipped[:, None, None, None], views[:, ::-1, ::-1], views)

        def one(k, view, r, t, c):
            return self.intent(k, view, state, r, t, c, state["ssd_tag_beam"], state["ssd_clean_beam"])

        intents = jax.vmap(one)(jax.random.split(key, n), upright, state["restraint"], state["tag"], state["clean"])
        new_state = {**state, "ssd_flipped": flipped, "ssd_last_intent": intents, "ssd_prev_static": static}
        return state["ssd_actions"][intents], new_state


#: the fewest river cells (clean or polluted) a view must show before :class:`CleaningForager` judges the river by it
MIN_RIVER_CELLS = 9


@dataclasses.dataclass(frozen=True)
class CleaningForager(GridForager):
    """Cleanup cooperator that cleans **and** eats: each agent switches between a cleaning and an eating mode
    by what its own view shows and how long it has been in the mode (Hughes et al. 2018's cooperators and
    Melting Pot ``clean_up``'s cleaning bots both clean the river and harvest the orchard).

    Per agent, from its own observation only (``w`` = waste cells, ``r`` = river cells, clean or polluted, in
    the view; the river is *in view* when ``r ≥ MIN_RIVER_CELLS``; ``t`` = steps since the last switch):

    * **cleaning** (the ``cleaners`` behaviour of :class:`GridForager`: walk to the nearest visible waste, fire the
      clean beam once waste is in reach, head for the river when none is visible) → **eating** when the river is
      in view and ``w / r ≤ clean_fraction`` (the stretch it sees is clean), or when ``t ≥ clean_steps`` (a
      cleaner that cannot keep up alone still eats);
    * **eating** (greedy forager, ``restraint`` 0 by default: walk to the nearest visible apple) → **cleaning**
      when the river is in view and ``w / r ≥ dirty_fraction``, or when ``t ≥ eat_steps`` (it goes back to check
      the river it cannot see from the orchard).

    Every agent starts cleaning. The rule depends on the river, never on what the others do, so it cooperates
    unconditionally (the ``cooperator`` role). It never tags unless ``tag`` is set. ``restraint``, ``tag`` and
    ``epsilon`` act as in :class:`GridForager` (``cleaners`` is the mode here and must stay 0); works under
    ``preset="ssd"`` (with ``view_encoding="onehot"``) like the forager."""

    clean_fraction: float = 0.0
    dirty_fraction: float = 0.2
    clean_steps: int = 100
    eat_steps: int = 100

    @property
    def name(self) -> str:
        return (
            f"cleaning_forager(clean_fraction={self.clean_fraction}, dirty_fraction={self.dirty_fraction}, "
            f"clean_steps={self.clean_steps}, eat_steps={self.eat_steps})"
        )

    def init(self, env: FunctionalEnv, params: Any) -> PolicyState:
        if self.cleaners != 0:
            raise ValueError(f"CleaningForager picks each agent's mode itself; cleaners must be 0, got {self.cleaners!r}")
        if "waste" not in tuple(env.channel_names):
            raise ValueError(f"{env.name}: the cleaning forager needs an env with waste (Cleanup)")
        if not 0.0 <= self.clean_fraction < self.dirty_fraction <= 1.0:
            raise ValueError(
                f"need 0 <= clean_fraction < dirty_fraction <= 1, got clean_fraction={self.clean_fraction}, "
                f"dirty_fraction={self.dirty_fraction}"
            )
        if self.clean_steps < 1 or self.eat_steps < 1:
            raise ValueError(f"clean_steps and eat_steps must be >= 1, got {self.clean_steps}, {self.eat_steps}")
        state = super().init(env, params)
        n = env.n_agents(params)
        state["clean"] = jnp.ones(n, bool)  # everybody starts in the cleaning mode
        state["mode_steps"] = jnp.zeros(n, jnp.int32)
        state["mode_limits"] = jnp.asarray([self.clean_steps, self.eat_steps], jnp.int32)
        state["mode_fractions"] = jnp.asarray([self.clean_fraction, self.dirty_fraction], jnp.float32)
        return state

    def __call__(self, key, obs, state):
        cleaning, steps = next_mode(obs, state)
        actions, new_state = super().__call__(key, obs, {**state, "clean": cleaning})
        return actions, {**new_state, "clean": cleaning, "mode_steps": steps}


def next_mode(obs: Array, state: PolicyState) -> tuple[Array, Array]:
    """``(cleaning [n] bool, steps in that mode [n])`` of :class:`CleaningForager` after reading ``obs``."""
    n, (rows, cols) = obs.shape[0], state["d"].shape
    channels = obs.shape[1] // (rows * cols)  # the default preset appends one removed flag per row
    views = obs[:, : rows * cols * channels].reshape(n, rows * cols, channels) > 0.5
    waste = jnp.sum(views[..., state["channels"][1]], axis=1)
    river = waste + jnp.sum(views[..., state["channels"][2]], axis=1)
    fraction = waste / jnp.maximum(river, 1)
    river_in_view = river >= MIN_RIVER_CELLS
    cleaning, steps = state["clean"], state["mode_steps"] + 1
    (clean_limit, eat_limit), (clean_fraction, dirty_fraction) = state["mode_limits"], state["mode_fractions"]
    stop_cleaning = cleaning & ((river_in_view & (fraction <= clean_fraction)) | (steps >= clean_limit))
    start_cleaning = ~cleaning & ((river_in_view & (fraction >= dirty_fraction)) | (steps >= eat_limit))
    switch = stop_cleaning | start_cleaning
    return cleaning ^ switch, jnp.where(switch, 0, steps)


#: the env action names each intended action (default vocabulary, index = intent) may go by, first match wins
INTENT_NAMES = (
    ("noop", "STAY"), ("forward", "MOVE_UP"), ("backward", "MOVE_DOWN"), ("step_left", "MOVE_LEFT"), ("step_right", "MOVE_RIGHT"),
    ("turn_left", "TURN_COUNTERCLOCKWISE"), ("turn_right", "TURN_CLOCKWISE"), ("fire_tag", "FIRE"), ("fire_clean", "CLEAN"),
)  # fmt: skip
#: the shift (rows, cols) of the static cells between two views of an upright (unflipped) window after a move:
#: forward brings cells ahead one row down, a step right moves the world one column left
MOVE_SHIFTS = {FORWARD: (1, 0), BACKWARD: (-1, 0), STEP_LEFT: (0, 1), STEP_RIGHT: (0, -1)}


def intent_actions(action_names: tuple[str, ...]) -> np.ndarray:
    """int32 ``[9]``: the env index of each intended action; an intent the env lacks (``fire_clean`` in Harvest)
    maps to the env's noop/STAY (the forager never chooses it there)."""
    index = {name: i for i, name in enumerate(action_names)}
    noop = next((index[name] for name in INTENT_NAMES[NOOP] if name in index), None)
    if noop is None:
        raise ValueError(f"the forager needs a noop/STAY action, the env has {action_names}")
    table = [next((index[name] for name in names if name in index), noop) for names in INTENT_NAMES]
    missing = [INTENT_NAMES[i][0] for i in range(FIRE_TAG) if all(name not in index for name in INTENT_NAMES[i])]
    if missing:
        raise ValueError(f"the forager needs the actions {missing}; the env has {action_names}")
    return np.asarray(table, np.int32)


def ssd_state(env: FunctionalEnv, params: Any, n: int, names: tuple[str, ...], d: np.ndarray, lateral: np.ndarray) -> PolicyState:
    """The extra policy state of the forager under ``preset="ssd"`` (see :meth:`GridForager.ssd_call`).

    Beams as ``ssd_rules.beam_cells``: the centre lane ``1..length`` ahead, side lanes ``0..length−1``."""
    width = params.tag_beam_width

    def beam(length: int, width: int) -> np.ndarray:
        centre = (lateral == 0) & (d >= 1) & (d <= length)
        side = (np.abs(lateral) >= 1) & (np.abs(lateral) <= (width - 1) // 2) & (d >= 0) & (d <= length - 1)
        return centre | side

    return {
        "ssd_actions": jnp.asarray(intent_actions(env.action_names(params))),
        "ssd_tag_beam": jnp.asarray(beam(params.tag_beam_length, width)),
        "ssd_clean_beam": jnp.asarray(beam(getattr(params, "clean_beam_length", 0), getattr(params, "clean_beam_width", 1))),
        "ssd_flipped": jnp.zeros(n, bool),
        "ssd_last_intent": jnp.full(n, NOOP, jnp.int32),
        "ssd_prev_static": jnp.zeros((n, *d.shape, len(names) - 1), bool),
    }


def shifted_mismatch(now: Array, before: Array, rows: int, cols: int) -> Array:
    """int ``[...]``: cells (and channels) where ``now[i, j] != before[i − rows, j − cols]`` on the overlap."""
    h, w = now.shape[-3:-1]
    a = now[..., max(rows, 0) : h + min(rows, 0), max(cols, 0) : w + min(cols, 0), :]
    b = before[..., max(-rows, 0) : h + min(-rows, 0), max(-cols, 0) : w + min(-cols, 0), :]
    return jnp.sum(a != b, axis=(-3, -2, -1))


def update_flip_belief(flipped: Array, last_intent: Array, before: Array, now: Array) -> Array:
    """``[n]`` belief that the view's top row lies behind. A turn toggles it. After a move the scene (every
    channel but agents) shifted by the move's shift if the view is upright and by the opposite one if it is
    turned over: the belief follows the shift with strictly the fewest mismatching cells, and stays when
    not shifting at all fits as well (a blocked move) or both shifts fit equally (a featureless view)."""
    turned = (last_intent == TURN_LEFT) | (last_intent == TURN_RIGHT)
    flipped = jnp.where(turned, ~flipped, flipped)
    moves = (FORWARD, BACKWARD, STEP_LEFT, STEP_RIGHT)
    is_move = [last_intent == m for m in moves]
    upright = jnp.select(is_move, [shifted_mismatch(now, before, *MOVE_SHIFTS[m]) for m in moves], 0)
    over = jnp.select(is_move, [shifted_mismatch(now, before, -MOVE_SHIFTS[m][0], -MOVE_SHIFTS[m][1]) for m in moves], 0)
    stay = jnp.sum(now != before, axis=(-3, -2, -1))
    moved = jnp.any(jnp.stack(is_move), axis=0)
    return jnp.where(
        moved & (upright < over) & (upright < stay), False, jnp.where(moved & (over < upright) & (over < stay), True, flipped)
    )


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
