"""Melting Pot's "in the Matrix" substrates: a matrix game played through inventories collected on a grid.

One engine (:class:`InTheMatrix`) and two thin envs that differ only in their payoff matrices and maps:
``PrisonersDilemmaInTheMatrix-v0`` and ``StagHuntInTheMatrix-v0`` (Melting Pot's
``prisoners_dilemma_in_the_matrix__arena`` / ``stag_hunt_in_the_matrix__arena``; ``preset="repeated"`` gives the
two-player ``__repeated`` substrates). Rules read from Melting Pot's configs and ``lua/levels/the_matrix/components.lua``
(``TheMatrix``, ``Resource``, ``Destroyable``, ``GameInteractionZapper``); the code is this package's own.

Step order:

1. decode actions; agents that are frozen (waiting for an interaction to settle) or removed do ``noop``;
2. turn, then move (:func:`motivegym.envs.spatial.grid.move`);
3. collection: an on-map agent standing on a resource of class ``k`` takes it: ``inventory[k] += 1``, it becomes
   *ready* (it collected at least one resource since its inventory was last reset), the resource starts to wait;
4. interaction beams (:func:`interaction_beams`) of the agents that fire with a cooled-down beam: each lane stops at
   its first wall, agent or resource; a resource hit loses one health point and disappears at 0
   (:func:`damage_resources`); each firer's beam meets at most one agent (the nearest first hit);
5. interactions (:func:`resolve_interactions`), firers in a random order: a firer and the agent its beam met
   interact unless one of them already took part in a beam contact this step; the contact counts only if the
   target is not frozen and both are ready. The firer is the row player, the target the column player.
   With inventories ``x`` (row) and ``y`` (column), mixed strategies ``s = x / Σx`` and ``c = y / Σy``
   (Melting Pot ``GameInteractionZapper:_resolve``), the payoffs are ``π_row = s · M_row · c`` and
   ``π_col = s · M_col · c``; both agents freeze for ``freeze_steps`` steps;
6. settlement: an agent whose freeze ends this step (immediately if ``freeze_steps = 0``) receives its pending
   payoff, its inventory resets to ``initial_inventory`` per class, it is no longer ready, and it leaves the map
   for ``respawn_delay`` steps (then respawns at a random free spawn point,
   :func:`motivegym.envs.spatial.grid.remove_and_respawn`);
7. resource regrowth (:func:`regrow_resources`): a waiting resource that has waited ``regrowth_delay`` steps
   reappears with probability ``regrowth_rate`` per step unless an agent stands on its cell; with
   ``refill_when_all_removed`` every waiting resource reappears on a step when no agent is on the map
   (Melting Pot's ``SpawnResourcesWhenAllPlayersZapped``, the repeated substrates);
8. ``t ← t + 1``; truncation at ``t ≥ max_steps`` (never terminated).

Map legend (own characters; Melting Pot's ``W`` walls are ``#`` here): ``#`` wall, space floor, ``P`` spawn point,
``1``…``9`` a resource of that class, ``a`` a resource whose class (1 or 2) is drawn uniformly at every reset (Melting
Pot's ``{"type": "choice"}`` cells).

Payoffs only: no reward for collecting (Melting Pot's ``Taste`` with no tasty class pays 0), no shaping. ``info`` holds
what a reward layer may need: ``interaction_inventories [n, 2, K]`` (own, partner; −1 where no interaction, as
Melting Pot's ``INTERACTION_INVENTORIES``), partners, row roles, the payoff computed at the interaction and the
inventories.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any, ClassVar

import jax
import jax.numpy as jnp
import numpy as np

from motivegym.core.env import Info
from motivegym.core.pytree import pytree_dataclass, static_field
from motivegym.envs.spatial.base import RGB_SCALE, GridSubstrate, grid_params
from motivegym.envs.spatial.grid import (
    ACTION_NAMES,
    CELL_COLOURS,
    FIRE_TAG,
    MELTINGPOT_VIEW,
    AgentState,
    agent_status,
    beam_cells,
    beam_reach,
    bernoulli_at_cells,
    char_grid,
    decode_actions,
    draw_agents,
    floor_canvas,
    global_state_vector,
    initial_agents,
    occupancy,
    on_map,
    read_cells,
    remove_and_respawn,
    render_rgb_grid,
    turn_and_move,
    validate_view,
    views_of_others,
    window_size,
)
from motivegym.envs.spatial.grid_extensions import first_stops, hits_per_cell
from motivegym.envs.spatial.meltingpot_rules import cooldown_fire

Array = jax.Array

#: the action that fires the interaction beam (Melting Pot's ``INTERACT``, index 7 of its action set)
INTERACT = FIRE_TAG
MATRIX_ACTION_NAMES = ACTION_NAMES[:7] + ("interact",)
#: map legend of this module
MATRIX_WALL, MATRIX_FLOOR, MATRIX_SPAWN, MATRIX_CHOICE = "#", " ", "P", "a"
MATRIX_LEGEND = {
    MATRIX_WALL: "wall",
    MATRIX_FLOOR: "floor",
    MATRIX_SPAWN: "agent spawn point",
    MATRIX_CHOICE: "resource of class 1 or 2, drawn uniformly at every reset",
    **{str(k): f"resource of class {k}" for k in range(1, 10)},
}
#: Melting Pot's resource colours (class 1 green, class 2 red), then extra classes
RESOURCE_COLOURS = np.array([[30, 225, 185], [225, 30, 70], [240, 200, 40], [150, 90, 220], [90, 160, 240],
                             [240, 140, 60], [200, 200, 200], [120, 200, 80], [220, 120, 180]], np.uint8)  # fmt: skip

# Melting Pot's maps (W → #); 'a' cells draw their class at every reset.
PD_ARENA_LAYOUT = (
    "#########################",
    "#PPPP      # #      PPPP#",
    "#PPPP               PPPP#",
    "#PPPP               PPPP#",
    "#PPPP               PPPP#",
    "#                       #",
    "#        11             #",
    "#        11             #",
    "#        aa             #",
    "#    ##     #  222      #",
    "##    1a    #  222      #",
    "###   1a  #########     #",
    "#     1a    111       ###",
    "#           111         #",
    "#       aa #            #",
    "#       22 #   ##       #",
    "#       22     #aaa     #",
    "#               222     #",
    "#                       #",
    "#PPPP               PPPP#",
    "#PPPP               PPPP#",
    "#PPPP               PPPP#",
    "#PPPP         #     PPPP#",
    "#########################",
)
STAG_HUNT_ARENA_LAYOUT = (
    "#########################",
    "#PPPPPPP   # #   PPPPPPP#",
    "#PPPP               PPPP#",
    "#PPPP               PPPP#",
    "#PPPP       2222    PPPP#",
    "#P                     P#",
    "#P     222222   222    P#",
    "#P 2     11    11      P#",
    "#  2     11  a     222  #",
    "#    ##     #1 11a      #",
    "##    21 11 #  11a  2   #",
    "###   21  ######### 2   #",
    "#   2 aa    111  1a   ###",
    "#   2       111  1a     #",
    "#       aa #        22  #",
    "#  22   2a #aa ##       #",
    "#P      22     #222    P#",
    "#P              222    P#",
    "#P         222         P#",
    "#PPPP               PPPP#",
    "#PPPP               PPPP#",
    "#PPPP               PPPP#",
    "#PPPPPPP      #  PPPPPPP#",
    "#########################",
)
PD_REPEATED_LAYOUT = (
    "#######################",
    "#P         P         P#",
    "#   ### #  #  # ##    #",
    "#    # 11a # a22 #    #",
    "#P  ## 11a # a22 ##  P#",
    "#      11a   a22      #",
    "#                     #",
    "#P ##  ##  P ##  ### P#",
    "#                     #",
    "#      22a # a11      #",
    "#P   # 22a # a11 #   P#",
    "#    # 22a # a11 ##   #",
    "#  #### #  #  # ###   #",
    "#P         P         P#",
    "#######################",
)
STAG_HUNT_REPEATED_LAYOUT = (
    "#######################",
    "#P         P         P#",
    "#  2### #  #  # ##2   #",
    "#    # 11a # 222 #    #",
    "#P  ## 11a # a22 ##  P#",
    "#      1aa 2 a22      #",
    "#  2               2  #",
    "#P ##  ##2 P ##  ### P#",
    "#   2            2    #",
    "#      22a 2 aa1      #",
    "#P   # 22a # a11 #   P#",
    "#   2# 222 # a11 ##   #",
    "#  #### #  #  # ###2  #",
    "#P         P         P#",
    "#######################",
)


@dataclasses.dataclass(frozen=True)
class MatrixLayout:
    """A parsed map (numpy, host side)."""

    walls: np.ndarray  # [H, W] bool
    fixed_class: np.ndarray  # [H, W] int32: 1..9 for fixed resource cells, 0 elsewhere
    choice_cells: np.ndarray  # [H, W] bool: 'a' cells (class drawn at reset)
    spawn_points: np.ndarray  # [S, 2] int32 (row, col) in reading order

    @property
    def shape(self) -> tuple[int, int]:
        return self.walls.shape

    @property
    def resource_cells(self) -> np.ndarray:
        """``[R, 2]`` (row, col) of every resource cell (fixed and drawn)."""
        return np.argwhere((self.fixed_class > 0) | self.choice_cells).astype(np.int32).reshape(-1, 2)


@functools.lru_cache(maxsize=64)
def parse_matrix_layout(rows: tuple[str, ...]) -> MatrixLayout:
    """Parse a map in :data:`MATRIX_LEGEND`; ragged rows or unknown characters raise ``ValueError``."""
    grid = char_grid(rows, MATRIX_LEGEND)
    fixed = np.zeros(grid.shape, np.int32)
    for k in range(1, 10):
        fixed[grid == str(k)] = k
    return MatrixLayout(
        walls=grid == MATRIX_WALL,
        fixed_class=fixed,
        choice_cells=grid == MATRIX_CHOICE,
        spawn_points=np.argwhere(grid == MATRIX_SPAWN).astype(np.int32).reshape(-1, 2),
    )


# ----- params and state -----


@pytree_dataclass
class InTheMatrixParams:
    """Params of the in-the-Matrix substrates (defaults: Melting Pot's arena configs)."""

    max_steps: Array  # int32 horizon
    row_matrix: Array  # [K, K] row player's payoffs (the firer's); row = own strategy, column = partner's
    col_matrix: Array  # [K, K] column player's payoffs (the target's), indexed [row strategy, column strategy]
    initial_inventory: Array  # inventory of every class at reset and after each interaction (Melting Pot: 1)
    respawn_delay: Array  # int32 steps an agent is off the map after its interaction settles (framesTillRespawn)
    freeze_steps: Array  # int32 steps both interactants stay frozen before payoffs and removal (freezeOnInteraction)
    cooldown_steps: Array  # int32 steps after firing before the beam fires again (cooldownTime)
    regrowth_rate: Array  # per-step probability a waiting resource reappears (regenerationRate)
    regrowth_delay: Array  # int32 steps a taken resource waits before it can reappear (regenerationDelay)
    resource_health: Array  # int32 beam hits that destroy a resource (Destroyable initialHealth)
    require_ready: Array  # bool: interactions need both players ready (disallowUnreadyInteractions)
    refill_when_all_removed: Array  # bool: SpawnResourcesWhenAllPlayersZapped (the repeated substrates)
    layout: tuple[str, ...] = static_field()
    n_agents: int = static_field()
    view_ahead: int = static_field()
    view_behind: int = static_field()
    view_side: int = static_field()
    beam_length: int = static_field()
    beam_width: int = static_field()


@pytree_dataclass
class InTheMatrixState:
    agents: AgentState
    inventory: Array  # [n, K] float32 resources held
    ready: Array  # [n] bool: collected at least one resource since the last reset of the inventory
    cooldown: Array  # [n] int32 steps until the beam can fire again
    freeze: Array  # [n] int32 steps left frozen (0 = not frozen)
    pending: Array  # [n] bool: an interaction waits to be settled
    pending_payoff: Array  # [n] float32 payoff of that interaction
    resource_class: Array  # [H, W] int32 class of each resource cell (0: none), fixed for the episode
    resources: Array  # [H, W] bool resource present
    resource_wait: Array  # [H, W] int32 steps since the resource was taken or destroyed
    resource_damage: Array  # [H, W] int32 beam hits taken since it (re)appeared
    t: Array  # int32 steps taken


def matrix_params(**values: Any) -> InTheMatrixParams:
    """Params from plain values (:func:`~motivegym.envs.spatial.base.grid_params`): static fields as given, counts as
    int32, the two flags as bool, the rest float32."""
    ints = ("max_steps", "respawn_delay", "freeze_steps", "cooldown_steps", "regrowth_delay", "resource_health")
    return grid_params(InTheMatrixParams, int_names=ints, bool_names=("require_ready", "refill_when_all_removed"), **values)


# ----- rules (pure functions) -----


def mixed_strategy(inventory: Array) -> Array:
    """``[..., K]``: ``inventory / Σ inventory`` (an empty inventory stays zero, as Melting Pot's ``_resolve``)."""
    total = jnp.sum(inventory, axis=-1, keepdims=True)
    return jnp.where(total > 0, inventory / jnp.where(total > 0, total, 1.0), 0.0)


def matrix_payoffs(row_inventory: Array, col_inventory: Array, row_matrix: Array, col_matrix: Array) -> tuple[Array, Array]:
    """``(π_row, π_col) = (s·M_row·c, s·M_col·c)`` with ``s, c`` the two inventories as mixed strategies."""
    s, c = mixed_strategy(row_inventory), mixed_strategy(col_inventory)
    return s @ row_matrix @ c, s @ col_matrix @ c


def interaction_beams(
    pos: Array, orient: Array, firing: Array, active: Array, walls: Array, resources: Array, length: int, width: int
) -> tuple[Array, Array]:
    """First hits of the interaction beams.

    Each firing agent's beam has ``width`` lanes (centred on its facing line) of ``length`` cells ahead; a lane stops
    at its first wall (no effect), its first on-map agent or its first present resource (Melting Pot: avatars and
    undestroyed ``Destroyable`` resources block ``gameInteraction`` beams; the lane rule is
    :func:`~motivegym.envs.spatial.grid_extensions.first_stops`).

    Returns ``(distance [n_firer, n_target]`` int32: the distance of the nearest lane whose first hit is that agent,
    ``length + 1`` where none; ``resource_hits [H, W]`` int32: beams whose first hit is the resource there).
    """
    cells = beam_cells(pos, orient, length, width)  # [n, w, L, 2]
    agent_hits, cell_hits = first_stops(cells, beam_reach(cells, walls), firing, pos, active, resources)
    distance = jnp.arange(1, length + 1)[None, None, :, None]
    nearest = jnp.min(jnp.where(agent_hits, distance, length + 1), axis=(1, 2))
    return nearest.astype(jnp.int32), hits_per_cell(cell_hits, cells, walls.shape)


def beam_targets(distance: Array, length: int) -> Array:
    """int32 ``[n]``: the agent each firer's beam meets (nearest; ties to the lower index), −1 where none."""
    best = jnp.argmin(distance, axis=1)
    return jnp.where(jnp.min(distance, axis=1) <= length, best, -1).astype(jnp.int32)


def resolve_interactions(
    order: Array, target: Array, frozen: Array, ready: Array, require_ready: Array | bool
) -> tuple[Array, Array]:
    """Sequential resolution of the beam contacts (Melting Pot ``GameInteractionZapper:onHit``).

    Firers are taken in ``order``. A contact between firer ``f`` and its ``target[f]`` is skipped when either already
    took part in a contact this step; otherwise both are marked as having taken part, and the contact becomes an
    interaction only if the target is not frozen and (with ``require_ready``) both are ready.

    Returns ``(partner [n]`` int32, −1 where none; ``is_row [n]`` bool: the agent fired the beam).
    """
    n = target.shape[0]

    def visit(carry, firer):
        busy, partner, is_row = carry
        j = target[firer]
        jj = jnp.maximum(j, 0)
        contact = (j >= 0) & ~busy[firer] & ~busy[jj]
        ok = contact & ~frozen[jj] & ((ready[firer] & ready[jj]) | ~jnp.asarray(require_ready))
        busy = busy.at[firer].set(busy[firer] | contact).at[jj].set(busy[jj] | contact)
        partner = partner.at[firer].set(jnp.where(ok, jj, partner[firer])).at[jj].set(jnp.where(ok, firer, partner[jj]))
        is_row = is_row.at[firer].set(is_row[firer] | ok)
        return (busy, partner, is_row), None

    init = (jnp.zeros(n, bool), jnp.full(n, -1, jnp.int32), jnp.zeros(n, bool))
    (_, partner, is_row), _ = jax.lax.scan(visit, init, order)
    return partner, is_row


def interaction_results(partner: Array, is_row: Array, inventory: Array, row_matrix: Array, col_matrix: Array) -> Array:
    """float32 ``[n]``: each interacting agent's payoff (0 where ``partner < 0``): the row player gets
    ``s_self · M_row · s_partner``, the column player ``s_partner · M_col · s_self``."""
    other = inventory[jnp.maximum(partner, 0)]
    row_inv = jnp.where(is_row[:, None], inventory, other)
    col_inv = jnp.where(is_row[:, None], other, inventory)
    row_pay, col_pay = jax.vmap(matrix_payoffs, in_axes=(0, 0, None, None))(row_inv, col_inv, row_matrix, col_matrix)
    return jnp.where(partner >= 0, jnp.where(is_row, row_pay, col_pay), 0.0).astype(jnp.float32)


def damage_resources(
    resources: Array, damage: Array, wait: Array, hits: Array, health: Array
) -> tuple[Array, Array, Array, Array]:
    """``(resources, damage, wait, destroyed)`` after beam hits: a resource whose damage reaches ``health`` is destroyed
    (starts waiting; its damage resets, Melting Pot ``Destroyable:onHit``)."""
    damage = damage + hits * resources
    destroyed = resources & (damage >= health)
    return resources & ~destroyed, jnp.where(destroyed, 0, damage), jnp.where(destroyed, 0, wait), destroyed


def regrow_resources(
    key: Array, resources: Array, resource_class: Array, wait: Array, cells: np.ndarray, blocked: Array, rate: Array, delay: Array
) -> tuple[Array, Array]:
    """``(resources, wait)`` after one regrowth draw: a waiting resource cell whose wait reached ``delay`` reappears
    with probability ``rate`` unless ``blocked`` (an agent stands there); waiting cells count one more step."""
    waiting = (resource_class > 0) & ~resources
    draws = bernoulli_at_cells(key, cells, rate, resources.shape)
    grows = waiting & (wait >= delay) & draws & ~blocked
    return resources | grows, jnp.where(waiting & ~grows, wait + 1, 0)


# ----- the engine -----


class InTheMatrix(GridSubstrate):
    """Engine of the in-the-Matrix substrates; subclasses set ``name`` and the default matrices and maps.

    * **Mechanism:** a two-player matrix game embedded in a grid world (Vezhnevets et al. 2020; Melting Pot
      ``*_in_the_matrix``). Agents walk over resources of ``K`` classes (one per pure strategy) and collect them into
      an inventory; the inventory, normalised, is the mixed strategy they play. Firing the interaction beam at a
      partner plays the game: the firer is the row player, ``π_row = s·M_row·c``, ``π_col = s·M_col·c``. Both
      interactants freeze, are paid, then leave the map for ``respawn_delay`` steps with their inventories reset.
    * **Agents:** ``n_agents`` identical players (``agent_i`` → digit ``i`` in renders).
    * **Actions:** ``Discrete(8)`` (Melting Pot's order): 0 noop, 1 forward, 2 backward, 3 step left, 4 step right,
      5 turn left, 6 turn right, 7 interact. Moves are relative to the orientation (collisions as
      :mod:`motivegym.envs.spatial.grid`); out-of-range indices act as noop; frozen or removed agents do noop.
    * **Observation:** per agent ``[window·(K + 3) + K + 4]``: the egocentric window (``view_ahead`` rows ahead,
      ``view_behind`` behind, ``view_side`` each side; row 0 farthest ahead), each cell one-hot over (wall, resource
      class 1..K, other agent, other agent that is ready), off-grid cells read wall, flattened (row, column, channel);
      then the agent's own mixed strategy ``[K]`` (Melting Pot's ``INVENTORY``, normalised), ready flag, beam
      readiness ``1 − cooldown/cooldown_steps`` (``READY_TO_SHOOT``), frozen flag and removed flag. A removed agent
      sees a zero window. Global state: the map channels except walls ``H·W·(K+2)``, per agent (row/H, col/W,
      orientation one-hot, removed) ``7n``, mixed strategies ``K·n``, ready flags ``n`` and ``t/max_steps``.
    * **Payoff:** the matrix payoff of an interaction, paid on the step it settles (``freeze_steps`` after the
      beam contact); nothing else (collecting pays 0).
    * **Termination:** never terminates; truncation at ``max_steps``.
    * **Info:** ``step``, ``removed [n]``, ``ready [n]``, ``inventory [n, K]``, ``resource_count [K]``; after a step
      also ``collected [n, K]``, ``fired [n]``, ``interacted [n]``, ``interaction_partner [n]`` (−1: none),
      ``interaction_row_player [n]``, ``interaction_payoff [n]`` (computed at the contact),
      ``interaction_inventories [n, 2, K]`` (own, partner; −1 where no interaction), ``settled [n]`` (paid and removed
      this step), ``resources_destroyed``.
    """

    name: ClassVar[str] = "InTheMatrix"
    substrate_actions: ClassVar[tuple[str, ...]] = MATRIX_ACTION_NAMES
    #: Melting Pot's matrices (row player, column player) and maps: set by subclasses
    row_matrix: ClassVar[tuple] = ((3.0, 0.0), (5.0, 1.0))
    col_matrix: ClassVar[tuple] = ((3.0, 5.0), (0.0, 1.0))
    arena_layout: ClassVar[tuple[str, ...]] = PD_ARENA_LAYOUT
    repeated_layout: ClassVar[tuple[str, ...]] = PD_REPEATED_LAYOUT
    repeated_regrowth_rate: ClassVar[float] = 0.02
    #: names of the pure strategies (resource classes 1..K)
    strategy_names: ClassVar[tuple[str, ...]] = ("cooperate", "defect")

    # ----- params -----
    def make_params(self) -> InTheMatrixParams:
        """Melting Pot's ``*_in_the_matrix__arena``: 8 players, 24×25 map, 11×11 view (9 ahead, 1 behind, 5 each side),
        beam 3 long × 3 wide, cooldown 2, freeze 16, respawn 50, regrowth 0.04 after 10 steps, resource health 3,
        inventories start at 1 of each, interactions need both players ready; horizon 1000 (Melting Pot ends
        episodes at random after 1000 steps)."""
        return matrix_params(
            max_steps=1000,
            row_matrix=self.row_matrix,
            col_matrix=self.col_matrix,
            initial_inventory=1.0,
            respawn_delay=50,
            freeze_steps=16,
            cooldown_steps=2,
            regrowth_rate=0.04,
            regrowth_delay=10,
            resource_health=3,
            layout=self.arena_layout,
            n_agents=8,
            **MELTINGPOT_VIEW,
            beam_length=3,
            beam_width=3,
            require_ready=True,
            refill_when_all_removed=False,
        )

    def make_repeated_params(self) -> InTheMatrixParams:
        """``preset="repeated"``: Melting Pot's two-player ``*_in_the_matrix__repeated`` (15×23 map, 5×5 view: 3 ahead,
        1 behind, 2 each side; respawn 5; regrowth 0.02; all resources refill when both players are off the map)."""
        return dataclasses.replace(
            self.make_params(),
            layout=self.repeated_layout,
            n_agents=2,
            view_ahead=3,
            view_behind=1,
            view_side=2,
            respawn_delay=jnp.int32(5),
            regrowth_rate=jnp.float32(self.repeated_regrowth_rate),
            refill_when_all_removed=jnp.bool_(True),
        )

    def preset_makers(self) -> dict[str, Callable[[], InTheMatrixParams]]:
        """``"default"`` (the arena) and ``"repeated"`` (:meth:`make_repeated_params`)."""
        return {"default": self.make_params, "repeated": self.make_repeated_params}

    def validate(self, params: InTheMatrixParams) -> None:
        """Raise ``ValueError`` on params the dynamics cannot honour."""
        where = self.name
        layout = self.layout(params)
        k = self.num_resources(params)
        if np.asarray(params.row_matrix).shape != (k, k) or np.asarray(params.col_matrix).shape != (k, k):
            raise ValueError(f"{where}: row_matrix and col_matrix must both be square [K, K], got "
                             f"{np.asarray(params.row_matrix).shape} and {np.asarray(params.col_matrix).shape}")  # fmt: skip
        if not 1 <= k <= 9:
            raise ValueError(f"{where}: the matrices must have 1 to 9 strategies (resource classes), got {k}")
        if int(layout.fixed_class.max(initial=0)) > k or (k < 2 and layout.choice_cells.any()):
            raise ValueError(f"{where}: the layout has resource classes above the matrices' {k} strategies")
        if params.n_agents < 1 or len(layout.spawn_points) < params.n_agents:
            raise ValueError(
                f"{where}: the layout has {len(layout.spawn_points)} spawn points ('P') for {params.n_agents} agents"
            )
        if params.beam_length < 1 or params.beam_width < 1 or params.beam_width % 2 == 0:
            raise ValueError(
                f"{where}: the beam needs length >= 1 and an odd width >= 1, got {params.beam_length}, {params.beam_width}"
            )
        validate_view(params, where)
        for name, low in (("max_steps", 1), ("respawn_delay", 1), ("freeze_steps", 0), ("cooldown_steps", 0),
                          ("regrowth_delay", 0), ("resource_health", 1)):  # fmt: skip
            if int(getattr(params, name)) < low:
                raise ValueError(f"{where}: {name} must be >= {low}, got {int(getattr(params, name))}")
        if not 0.0 <= float(params.regrowth_rate) <= 1.0:
            raise ValueError(f"{where}: regrowth_rate must lie in [0, 1], got {float(params.regrowth_rate)}")
        if float(params.initial_inventory) < 0:
            raise ValueError(f"{where}: initial_inventory must be >= 0, got {float(params.initial_inventory)}")

    def layout(self, params: InTheMatrixParams) -> MatrixLayout:
        """The parsed map (:data:`MATRIX_LEGEND`)."""
        return parse_matrix_layout(tuple(params.layout))

    def num_resources(self, params: InTheMatrixParams) -> int:
        return int(jnp.shape(params.row_matrix)[0])

    def channel_names(self, params: InTheMatrixParams) -> tuple[str, ...]:
        return ("wall", *(f"resource_{k + 1}" for k in range(self.num_resources(params))), "agent", "ready_agent")

    # ----- reset -----
    def reset(self, key: Array, params: InTheMatrixParams) -> tuple[InTheMatrixState, Array]:
        layout = self.layout(params)
        n, k = params.n_agents, self.num_resources(params)
        agent_key, class_key = jax.random.split(key)
        drawn = jax.random.randint(class_key, layout.shape, 1, 3, jnp.int32)
        resource_class = jnp.where(jnp.asarray(layout.choice_cells), drawn, jnp.asarray(layout.fixed_class))
        state = InTheMatrixState(
            agents=initial_agents(agent_key, layout.spawn_points, n),
            inventory=jnp.full((n, k), params.initial_inventory, jnp.float32),
            ready=jnp.zeros(n, bool),
            cooldown=jnp.zeros(n, jnp.int32),
            freeze=jnp.zeros(n, jnp.int32),
            pending=jnp.zeros(n, bool),
            pending_payoff=jnp.zeros(n, jnp.float32),
            resource_class=resource_class,
            resources=resource_class > 0,
            resource_wait=jnp.zeros(layout.shape, jnp.int32),
            resource_damage=jnp.zeros(layout.shape, jnp.int32),
            t=jnp.int32(0),
        )
        return state, self.observe(state, params)

    # ----- step -----
    def step(self, key: Array, state: InTheMatrixState, actions: Array, params: InTheMatrixParams):
        layout = self.layout(params)
        walls = jnp.asarray(layout.walls)
        n, k = params.n_agents, self.num_resources(params)
        move_key, order_key, respawn_key, regrow_key = jax.random.split(key, 4)

        # 1-2. actions, turn, move
        active = on_map(state.agents)
        frozen = state.freeze > 0
        acting = active & ~frozen
        decoded = decode_actions(actions, self.num_actions(params), acting)
        agents = turn_and_move(move_key, state.agents, decoded, walls)

        # 3. collection
        cls_here = read_cells(state.resource_class * state.resources, agents.pos, outside=0)
        collects = active & (cls_here > 0)
        collected = jax.nn.one_hot(cls_here - 1, k, dtype=jnp.float32) * collects[:, None]
        inventory = state.inventory + collected
        ready = state.ready | collects
        taken = occupancy(agents.pos, collects, layout.shape)
        resources = state.resources & ~taken
        wait = jnp.where(taken, 0, state.resource_wait)

        # 4. beams (cooldown: Melting Pot's coolingTimer counts down on the steps the agent may act: acting as on_map)
        fired, cooldown = cooldown_fire(state.cooldown, acting, decoded == INTERACT, params.cooldown_steps)
        distance, resource_hits = interaction_beams(
            agents.pos, agents.orient, fired, active, walls, resources, params.beam_length, params.beam_width
        )
        resources, damage, wait, destroyed = damage_resources(
            resources, state.resource_damage, wait, resource_hits, params.resource_health
        )

        # 5. interactions
        order = jax.random.permutation(order_key, n)
        partner, is_row = resolve_interactions(
            order, beam_targets(distance, params.beam_length), frozen, ready, params.require_ready
        )
        interacted = partner >= 0
        payoff_now = interaction_results(partner, is_row, inventory, params.row_matrix, params.col_matrix)
        partner_inventory = inventory[jnp.maximum(partner, 0)]
        inventories_seen = jnp.where(interacted[:, None, None], jnp.stack([inventory, partner_inventory], axis=1), -1.0)

        # 6. settlement: payoff, inventory reset, removal
        freeze = jnp.where(interacted, params.freeze_steps, jnp.maximum(state.freeze - 1, 0))
        pending = state.pending | interacted
        pending_payoff = jnp.where(interacted, payoff_now, state.pending_payoff)
        settled = pending & (freeze == 0)
        payoffs = jnp.where(settled, pending_payoff, 0.0).astype(jnp.float32)
        inventory = jnp.where(settled[:, None], params.initial_inventory, inventory)
        ready = ready & ~settled
        agents = remove_and_respawn(respawn_key, agents, settled, params.respawn_delay, layout.spawn_points)

        # 7. resource regrowth
        blocked = occupancy(agents.pos, on_map(agents), layout.shape)
        resources, wait = regrow_resources(
            regrow_key,
            resources,
            state.resource_class,
            wait,
            layout.resource_cells,
            blocked,
            params.regrowth_rate,
            params.regrowth_delay,
        )
        refill = params.refill_when_all_removed & ~jnp.any(on_map(agents)) & (state.resource_class > 0)
        resources = resources | refill
        wait = jnp.where(refill, 0, wait)

        new_state = InTheMatrixState(
            agents=agents,
            inventory=inventory,
            ready=ready,
            cooldown=cooldown,
            freeze=freeze,
            pending=pending & ~settled,
            pending_payoff=jnp.where(settled, 0.0, pending_payoff),
            resource_class=state.resource_class,
            resources=resources,
            resource_wait=wait,
            resource_damage=damage,
            t=state.t + 1,
        )
        step_info = {
            "collected": collected.astype(jnp.int32),
            "fired": fired,
            "interacted": interacted,
            "interaction_partner": partner,
            "interaction_row_player": is_row,
            "interaction_payoff": payoff_now,
            "interaction_inventories": inventories_seen,
            "settled": settled,
            "resources_destroyed": jnp.sum(destroyed).astype(jnp.int32),
        }
        return self.finish_step(new_state, params, payoffs, step_info)

    def describe(self, state: InTheMatrixState, params: InTheMatrixParams) -> Info:
        k = self.num_resources(params)
        counts = jnp.sum((state.resource_class[..., None] == jnp.arange(1, k + 1)) & state.resources[..., None], axis=(0, 1))
        return {
            "step": state.t,
            "removed": ~on_map(state.agents),
            "ready": state.ready,
            "inventory": state.inventory,
            "resource_count": counts.astype(jnp.int32),
        }

    # ----- observations -----
    def grid_channels(self, state: InTheMatrixState, params: InTheMatrixParams) -> Array:
        """bool ``[H, W, K + 3]``: wall, resource classes 1..K, agent, ready agent."""
        layout = self.layout(params)
        k = self.num_resources(params)
        active = on_map(state.agents)
        classes = (state.resource_class[..., None] == jnp.arange(1, k + 1)) & state.resources[..., None]
        agents = occupancy(state.agents.pos, active, layout.shape)
        ready_agents = occupancy(state.agents.pos, active & state.ready, layout.shape)
        return jnp.concatenate(
            [jnp.asarray(layout.walls)[..., None], classes, agents[..., None], ready_agents[..., None]], axis=-1
        )

    def own_features(self, state: InTheMatrixState, params: InTheMatrixParams) -> Array:
        """float32 ``[n, K + 4]``: mixed strategy, ready, beam readiness, frozen, removed."""
        active = on_map(state.agents)
        shoot = 1.0 - state.cooldown.astype(jnp.float32) / jnp.maximum(params.cooldown_steps, 1).astype(jnp.float32)
        flags = [state.ready.astype(jnp.float32), shoot, (state.freeze > 0).astype(jnp.float32), (~active).astype(jnp.float32)]
        return jnp.concatenate([mixed_strategy(state.inventory), jnp.stack(flags, axis=1)], axis=1)

    def observe(self, state: InTheMatrixState, params: InTheMatrixParams) -> Array:
        channels = self.grid_channels(state, params)
        pos, orient = state.agents.pos, state.agents.orient
        # the agent's own body: its agent and ready-agent bits
        views = views_of_others(channels, pos, orient, params.view_ahead, params.view_behind, params.view_side, body_channels=2)
        active = on_map(state.agents)
        return jnp.concatenate([views * active[:, None], self.own_features(state, params)], axis=1)

    def observation_size(self, params: InTheMatrixParams) -> int:
        k = self.num_resources(params)
        return window_size(params.view_ahead, params.view_behind, params.view_side) * (k + 3) + k + 4

    def global_state(self, state: InTheMatrixState, params: InTheMatrixParams) -> Array:
        maps = self.grid_channels(state, params)[..., 1:]
        return global_state_vector(maps, state.agents, state.t, params.max_steps, mixed_strategy(state.inventory), state.ready.astype(jnp.float32))

    # ----- rendering -----
    def render_text(self, state: InTheMatrixState, params: InTheMatrixParams) -> str:
        layout = self.layout(params)
        chars = np.full(layout.shape, MATRIX_FLOOR)
        chars[layout.walls] = MATRIX_WALL
        classes = np.asarray(state.resource_class) * np.asarray(state.resources)
        for k in range(1, self.num_resources(params) + 1):
            chars[classes == k] = chr(ord("A") + k - 1)
        draw_agents(chars, state.agents)
        inventory = np.asarray(state.inventory)
        status = []
        for i, word in enumerate(agent_status(state.agents)):
            inv = "/".join(f"{v:g}" for v in inventory[i])
            status.append(f"{word}[{inv}]" + ("*" if bool(state.ready[i]) else ""))
        header = f"{self.step_header(state, params)}  (A, B: resources of class 1, 2; digits: agents [inventory], * ready)"
        return "\n".join([header, *("".join(r) for r in chars), "agents: " + " ".join(status)])

    def render_rgb(self, state: InTheMatrixState, params: InTheMatrixParams) -> np.ndarray:
        layout = self.layout(params)
        rgb = floor_canvas(layout.shape)
        classes = np.asarray(state.resource_class) * np.asarray(state.resources)
        for k in range(1, self.num_resources(params) + 1):
            rgb[classes == k] = RESOURCE_COLOURS[(k - 1) % len(RESOURCE_COLOURS)]
        rgb[layout.walls] = CELL_COLOURS["wall"]
        return render_rgb_grid(rgb, state.agents, scale=RGB_SCALE)


class PrisonersDilemmaInTheMatrix(InTheMatrix):
    """Prisoner's Dilemma in the Matrix (Melting Pot ``prisoners_dilemma_in_the_matrix__arena``).

    * **Defaults:** resource 1 (green) is *cooperate*, resource 2 (red) *defect*; Melting Pot's matrices
      ``M_row = [[3, 0], [5, 1]]`` and ``M_col = [[3, 5], [0, 1]]`` (indexed [row strategy, column strategy]), its
      24×25 arena map (8 players; 'a' cells draw their class at reset), 1000 steps.
      ``preset="repeated"``: ``prisoners_dilemma_in_the_matrix__repeated`` (2 players, 15×23 map).
    """

    name: ClassVar[str] = "PrisonersDilemmaInTheMatrix"


class StagHuntInTheMatrix(InTheMatrix):
    """Stag Hunt in the Matrix (Melting Pot ``stag_hunt_in_the_matrix__arena``).

    * **Defaults:** resource 1 (green) is *stag*, resource 2 (red) *hare*; Melting Pot's matrices
      ``M_row = [[4, 0], [2, 2]]`` and ``M_col = [[4, 2], [0, 2]]``, its 24×25 arena map with more hare than stag
      (8 players), 1000 steps. ``preset="repeated"``: ``stag_hunt_in_the_matrix__repeated`` (2 players, 15×23 map).
    """

    name: ClassVar[str] = "StagHuntInTheMatrix"
    row_matrix: ClassVar[tuple] = ((4.0, 0.0), (2.0, 2.0))
    col_matrix: ClassVar[tuple] = ((4.0, 2.0), (0.0, 2.0))
    arena_layout: ClassVar[tuple[str, ...]] = STAG_HUNT_ARENA_LAYOUT
    repeated_layout: ClassVar[tuple[str, ...]] = STAG_HUNT_REPEATED_LAYOUT
    strategy_names: ClassVar[tuple[str, ...]] = ("stag", "hare")


def _engine_sections() -> str:
    """The engine's bullet list (mechanism … info), appended to each game's docstring so every registered class
    documents the whole env (``docs/environments.md`` is generated from class docstrings)."""
    doc = InTheMatrix.__doc__ or ""
    return doc[doc.index("    * **Mechanism:**") :]


for _game in (PrisonersDilemmaInTheMatrix, StagHuntInTheMatrix):
    _game.__doc__ = (_game.__doc__ or "").rstrip() + "\n" + _engine_sections()
