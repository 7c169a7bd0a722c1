"""Territory (Territory-v0): claim wall-like resources that pay their claimant over time (Melting Pot's territory__open/rooms)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, ClassVar

import jax
import jax.numpy as jnp
import numpy as np

from motivegym.core.env import Info
from motivegym.core.pytree import pytree_dataclass, static_field
from motivegym.envs.spatial.base import RGB_SCALE, GridSubstrate
from motivegym.envs.spatial.grid import ACTION_NAMES as GRID_ACTION_NAMES
from motivegym.envs.spatial.grid import (
    AGENT_COLOURS,
    CELL_COLOURS,
    DIRECTIONS,
    FIRE_CLEAN,
    FIRE_TAG,
    MELTINGPOT_VIEW,
    AgentState,
    agent_symbol,
    beam_cells,
    beam_reach,
    decode_actions,
    draw_agents,
    egocentric_views,
    floor_canvas,
    global_state_vector,
    initial_agents,
    occupancy,
    on_map,
    own_body_mask,
    read_cells,
    render_rgb_grid,
    turn_and_move,
    validate_layout,
    window_size,
)
from motivegym.envs.spatial.grid_extensions import (
    first_hits,
    graduated_sanctions,
    hits_per_cell,
    tick_cooldown,
    window_values,
)

Array = jax.Array

#: action indices: grid moves/turns 0-6, then Melting Pot's FIRE_ZAP and FIRE_CLAIM
ZAP, CLAIM = FIRE_TAG, FIRE_CLEAN
ACTION_NAMES = GRID_ACTION_NAMES[:7] + ("fire_zap", "fire_claim")
RESOURCE = "R"  # a claimable resource: blocks movement like a wall until destroyed
EXTRA_CHARS = ((RESOURCE, "#"),)
UNCLAIMED_COLOUR = (90, 80, 70)

#: Melting Pot's territory__open map (23×39, 88 resources, 18 spawn points); its wall characters written ``#``
TERRITORY_OPEN_LAYOUT = (
    "#######################################",
    "#  RRRRR  RR  RR      RR      RR      #",
    "#     RR      RR      RR              #",
    "#     RR      RR                      #",
    "# RR  RR      RR          R   RR   RR #",
    "#     RR      RR          R   RR      #",
    "#     RR          RRRR    R           #",
    "#  RR RR                  R           #",
    "#     RR       RR         R           #",
    "#     RRRR                     RR     #",
    "#                    RR               #",
    "#                                     #",
    "#  RRRR   RRRRRR           RR    R    #",
    "#                                R    #",
    "#                RR                P  #",
    "#    RR                RR       P     #",
    "#         RR                     P  P #",
    "#                           P  P      #",
    "#                             P   P   #",
    "#  P    P   P  P   P    P P  P  P  P  #",
    "#                                     #",
    "#                                     #",
    "#######################################",
)

#: Melting Pot's territory__rooms map (21×21, nine 5×5 rooms walled by 180 resources, one spawn point each);
#: Melting Pot plays it on a torus, here the grid is bounded
TERRITORY_ROOMS_LAYOUT = (
    "#RRRRR##RRRRR##RRRRR#",
    "R     RR     RR     R",
    "R     RR     RR     R",
    "R  P  RR  P  RR  P  R",
    "R     RR     RR     R",
    "R     RR     RR     R",
    "#RRRRR##RRRRR##RRRRR#",
    "#RRRRR##RRRRR##RRRRR#",
    "R     RR     RR     R",
    "R     RR     RR     R",
    "R  P  RR  P  RR  P  R",
    "R     RR     RR     R",
    "R     RR     RR     R",
    "#RRRRR##RRRRR##RRRRR#",
    "#RRRRR##RRRRR##RRRRR#",
    "R     RR     RR     R",
    "R     RR     RR     R",
    "R  P  RR  P  RR  P  R",
    "R     RR     RR     R",
    "R     RR     RR     R",
    "#RRRRR##RRRRR##RRRRR#",
)


@pytree_dataclass
class TerritoryParams:
    max_steps: Array  # int32 horizon
    resource_reward: Array  # payoff of one rewarding draw of a claimed resource (Melting Pot reward 1)
    reward_rate: Array  # probability per step that a matured claimed resource pays its claimant (0.01)
    reward_delay: Array  # int32 steps after a claim before the resource pays (rewardDelay 25)
    resource_health: Array  # int32 zaps that destroy a resource (initialHealth 2)
    repair_delay: Array  # int32 steps after its last zap before a damaged resource may self-repair (15)
    repair_prob: Array  # probability per step of repairing one health point (0.1)
    zap_cooldown: Array  # int32 steps between two zaps of one agent (cooldownTime 4)
    freeze_steps: Array  # int32 steps a first-zapped agent cannot act (freeze 25)
    mark_steps: Array  # int32 steps a zap mark lasts; a marked agent zapped again is removed for good (recoveryTime 50)
    layout: tuple[str, ...] = static_field()
    n_agents: int = static_field()
    claim_beam_length: int = static_field()
    zap_beam_length: int = static_field()
    zap_beam_width: int = static_field()
    view_ahead: int = static_field()
    view_behind: int = static_field()
    view_side: int = static_field()


@pytree_dataclass
class TerritoryState:
    agents: AgentState  # timeout 1 = removed for good (zapped out), 0 = on the map
    frozen: Array  # [n] int32 steps left frozen (on the map, cannot act)
    marked: Array  # [n] int32 steps left of the zap mark (0 = unmarked)
    cooldown: Array  # [n] int32 steps until the zap beam can fire again
    owner: Array  # [H, W] int32 claimant of each resource cell, −1 unclaimed (−1 off resources)
    claim_age: Array  # [H, W] int32 steps since the current claim (capped at reward_delay)
    health: Array  # [H, W] int32 health of resource cells
    since_zapped: Array  # [H, W] int32 steps since the cell was last zapped
    destroyed: Array  # [H, W] bool resources destroyed (now floor)
    t: Array  # int32 steps taken


def resolve_claims(key: Array, cells: Array, valid: Array, owner: Array) -> tuple[Array, Array]:
    """``(new owner [H, W], changed [H, W])`` from each agent's claimed ``cells [n, k, 2]`` (``valid [n, k]``): where several
    agents claim a cell in one step a uniformly random one of them wins (each agent draws one priority per step; the
    highest claimant of a cell wins it); claiming one's own cell changes nothing (Melting Pot ``Resource:_claim``)."""
    n, k = valid.shape
    shape = owner.shape
    priority = jnp.broadcast_to(jax.random.uniform(key, (n, 1)), (n, k))
    rows = jnp.where(valid, cells[..., 0], shape[0])  # invalid claims: dropped
    best = jnp.full(shape, -1.0).at[rows, cells[..., 1]].max(priority, mode="drop")
    wins = valid & (read_cells(best, cells, outside=-1.0) == priority)
    agent = jnp.broadcast_to(jnp.arange(n, dtype=jnp.int32)[:, None], (n, k))
    winner = jnp.full(shape, -1, jnp.int32).at[jnp.where(wins, rows, shape[0]), cells[..., 1]].set(agent, mode="drop")
    new_owner = jnp.where(winner >= 0, winner, owner)
    return new_owner, new_owner != owner


def count_per_agent(owner: Array, mask: Array, n: int) -> Array:
    """int32 ``[n]``: cells of ``mask`` owned by each agent (a ``bincount`` over the owner grid, −1 ignored)."""
    return jnp.bincount(jnp.where(mask, owner, -1).ravel() + 1, length=n + 1)[1:].astype(jnp.int32)


class Territory(GridSubstrate):
    """Territory: agents paint wall-like resources in their colour; held claims pay over time; zaps freeze, remove and destroy.

    * **Mechanism:** territory / conflict over property (Melting Pot ``territory__open`` and ``territory__rooms``).
      Resources (``R``) block movement and beams like walls. An agent claims a resource by facing it from the
      next cell (Melting Pot's paintbrush touches the cell ahead every step) or with the claim beam
      (``claim_beam_length`` cells straight ahead, passing through resources and agents, stopped by walls,
      claiming every resource it crosses, others' claims included). A claimed resource pays its claimant
      ``resource_reward`` with probability ``reward_rate`` per step once it has been held ``reward_delay`` steps;
      a new claim restarts that delay. The zap beam (``zap_beam_width`` lanes of ``zap_beam_length``, at most every
      ``zap_cooldown`` steps) stops in each lane at the first agent or resource: a resource loses one health and is
      destroyed at 0 (it becomes floor for good, its claim lost); a damaged resource not zapped for
      ``repair_delay`` steps regains one health with probability ``repair_prob`` per step. A zapped agent is frozen
      for ``freeze_steps`` and marked for ``mark_steps``; zapped again while marked it is removed for good and all
      its claims return to unclaimed.
    * **Agents:** ``n_agents`` (default 9), ``agent_i`` → digit ``i``.
    * **Actions:** ``Discrete(9)``: 0 noop, 1 forward, 2 backward, 3 step left, 4 step right, 5 turn left,
      6 turn right, 7 fire zap, 8 fire claim (Melting Pot's order). Frozen and removed agents' actions are noops.
      Moves as in :mod:`motivegym.envs.spatial.grid`, with intact resources blocking like walls.
    * **Step order:** turn, move; zaps (from the post-move cells: damage and destruction, freezes, removals and their
      claims released); claims by the agents still on the map (touch, then beams; simultaneous claims of one cell: a
      random claimant wins); payoffs from matured claims; self-repair; countdowns; ``t ← t + 1``.
    * **Observation:** per agent ``[window·6 + 3]``: the egocentric window (as Harvest's: ``view_ahead`` rows ahead,
      ``view_behind`` behind, ``view_side`` each side, rotated to the agent's facing) one-hot over (wall, unclaimed
      resource, resource claimed by the observer, resource claimed by another agent, damaged resource, other agent),
      flattened (row, column, channel); then ready-to-zap ``1 − cooldown / zap_cooldown``, a frozen flag and a removed
      flag (a removed agent sees zeros and the flag). Global state: intact resources, unclaimed resources,
      ``(owner + 1)/n`` and damaged resources over the map, agents ``5·H·W``; per agent (row/H, col/W, orientation,
      removed) ``7n`` and frozen ``n``; ``t/max_steps``.
    * **Payoff:** ``π_i = resource_reward · #{resources owned by i, held ≥ reward_delay steps, whose draw u < reward_rate}``.
      Zapping, claiming and being zapped pay nothing by themselves.
    * **Termination:** never terminates; truncation at ``max_steps``.
    * **Defaults (presets):** ``preset="open"`` (default): Melting Pot's 23×39 :data:`TERRITORY_OPEN_LAYOUT` with
      9 agents; ``preset="rooms"``: :data:`TERRITORY_ROOMS_LAYOUT` (bounded, not a torus) with 9 agents. Both:
      ``max_steps=1000``, ``resource_reward=1``, ``reward_rate=0.01``, ``reward_delay=25``, ``resource_health=2``,
      ``repair_delay=15``, ``repair_prob=0.1``, claim beam 2 long × 1, zap beam 2 long × 3 wide, ``zap_cooldown=4``,
      ``freeze_steps=25``, ``mark_steps=50``, view 9 ahead, 1 behind, 5 each side. ``docs/gift_territory.md`` lists
      the deviations from Melting Pot and SocialJax.
    * **Info:** ``step``, ``claimed [n]`` (resources held), ``removed [n]``, ``frozen [n]``, ``resources_left``;
      after a step also ``fired_zap [n]``, ``fired_claim [n]``, ``zap_hits [n, n]`` (firer, target),
      ``removed_now [n]``, ``new_claims [n]``, ``stolen [n]`` (new claims taken from another agent),
      ``resources_destroyed``, ``paying [n]`` (resources that paid this step).
    """

    name: ClassVar[str] = "Territory"
    substrate_actions: ClassVar[tuple[str, ...]] = ACTION_NAMES
    extra_chars: ClassVar[tuple[tuple[str, str], ...]] = EXTRA_CHARS
    channel_names: ClassVar[tuple[str, ...]] = ("wall", "unclaimed", "own_claim", "other_claim", "damaged", "agent")

    # ----- params -----
    def make_params(self, layout: tuple[str, ...] = TERRITORY_OPEN_LAYOUT) -> TerritoryParams:
        return TerritoryParams(
            max_steps=jnp.int32(1000),
            resource_reward=jnp.float32(1.0),
            reward_rate=jnp.float32(0.01),
            reward_delay=jnp.int32(25),
            resource_health=jnp.int32(2),
            repair_delay=jnp.int32(15),
            repair_prob=jnp.float32(0.1),
            zap_cooldown=jnp.int32(4),
            freeze_steps=jnp.int32(25),
            mark_steps=jnp.int32(50),
            layout=layout,
            n_agents=9,
            claim_beam_length=2,
            zap_beam_length=2,
            zap_beam_width=3,
            **MELTINGPOT_VIEW,
        )

    def preset_makers(self) -> dict[str, Callable[[], TerritoryParams]]:
        """``"open"`` (the default) and ``"rooms"``: the same params on Melting Pot's two maps."""
        return {"open": self.make_params, "rooms": lambda: self.make_params(TERRITORY_ROOMS_LAYOUT)}

    def validate(self, params: TerritoryParams) -> None:
        where = self.name
        validate_layout(self.layout(params), params.n_agents, where)
        if not np.any(self.resource_mask(params)):
            raise ValueError(f"{where}: the layout has no resources ({RESOURCE!r})")
        if params.zap_beam_width % 2 == 0:
            raise ValueError(f"{where}: zap_beam_width must be odd (centred on the agent), got {params.zap_beam_width}")

    def resource_mask(self, params: Any) -> np.ndarray:
        """bool ``[H, W]``: the resource cells of the map (:meth:`layout`'s ``walls`` include them)."""
        return self.layout_masks(params)[RESOURCE]

    def fixed_walls(self, params: Any) -> np.ndarray:
        """bool ``[H, W]``: walls that are not resources (indestructible, never claimable)."""
        return self.layout(params).walls & ~self.resource_mask(params)

    # ----- reset / step -----
    def reset(self, key: Array, params: TerritoryParams) -> tuple[TerritoryState, Array]:
        layout = self.layout(params)
        n = params.n_agents
        resources = jnp.asarray(self.resource_mask(params))
        state = TerritoryState(
            agents=initial_agents(key, layout.spawn_points, n),
            frozen=jnp.zeros(n, jnp.int32),
            marked=jnp.zeros(n, jnp.int32),
            cooldown=jnp.zeros(n, jnp.int32),
            owner=jnp.full(layout.shape, -1, jnp.int32),
            claim_age=jnp.zeros(layout.shape, jnp.int32),
            health=jnp.where(resources, params.resource_health, 0).astype(jnp.int32),
            since_zapped=jnp.zeros(layout.shape, jnp.int32),
            destroyed=jnp.zeros(layout.shape, bool),
            t=jnp.int32(0),
        )
        return state, self.observe(state, params)

    def intact(self, state: TerritoryState, params: Any) -> Array:
        """bool ``[H, W]``: resources not destroyed."""
        return jnp.asarray(self.resource_mask(params)) & ~state.destroyed

    def step(self, key: Array, state: TerritoryState, actions: Array, params: TerritoryParams):
        n = params.n_agents
        shape = self.layout(params).shape
        fixed_walls = jnp.asarray(self.fixed_walls(params))
        move_key, claim_key, reward_key, repair_key = jax.random.split(key, 4)
        intact = self.intact(state, params)
        present = on_map(state.agents)
        acting = present & (state.frozen == 0)
        decoded = decode_actions(actions, self.num_actions(params), acting)
        agents = turn_and_move(move_key, state.agents, decoded, fixed_walls | intact)

        # zaps: each lane stops at its first agent or intact resource
        fired_zap = (decoded == ZAP) & (state.cooldown == 0)
        cells = beam_cells(agents.pos, agents.orient, params.zap_beam_length, params.zap_beam_width)
        zap_hits, cell_hits = first_hits(cells, beam_reach(cells, fixed_walls), fired_zap, agents.pos, present, intact)
        damage = hits_per_cell(cell_hits, cells, shape)
        health = state.health - damage
        newly_destroyed = intact & (health <= 0)
        destroyed = state.destroyed | newly_destroyed
        since_zapped = jnp.where(damage > 0, 0, state.since_zapped)
        freeze, remove = graduated_sanctions(jnp.sum(zap_hits, axis=0), state.marked)  # removed for good here
        remove = remove & present
        released = (state.owner >= 0) & remove[jnp.maximum(state.owner, 0)]  # a removed agent's claims
        owner = jnp.where(newly_destroyed | released, -1, state.owner)
        claim_age = jnp.where(owner != state.owner, 0, state.claim_age)
        intact = intact & ~newly_destroyed

        # claims by the agents still on the map: the cell ahead (touch), then the claim beam
        staying = present & ~remove
        ahead = agents.pos + jnp.asarray(DIRECTIONS)[agents.orient]
        fired_claim = (decoded == CLAIM) & staying
        claim_cells = beam_cells(agents.pos, agents.orient, params.claim_beam_length, 1).reshape(n, -1, 2)
        claim_reach = beam_reach(claim_cells, fixed_walls) & fired_claim[:, None]
        cells = jnp.concatenate([ahead[:, None, :], claim_cells], axis=1)  # [n, 1 + claim_beam_length, 2]
        valid = jnp.concatenate([staying[:, None], claim_reach], axis=1) & read_cells(intact, cells, outside=False)
        new_owner, changed = resolve_claims(claim_key, cells, valid, owner)
        stolen_cells = changed & (owner >= 0)
        owner = new_owner
        claim_age = jnp.where(changed, 0, claim_age)

        # payoffs from matured claims
        matured = intact & (owner >= 0) & (claim_age >= params.reward_delay)
        pays = matured & (jax.random.uniform(reward_key, shape) < params.reward_rate)
        paying = count_per_agent(owner, pays, n)
        payoffs = params.resource_reward * paying.astype(jnp.float32)

        # self-repair, countdowns
        damaged = intact & (health < params.resource_health)
        repaired = damaged & (since_zapped >= params.repair_delay) & (jax.random.uniform(repair_key, shape) < params.repair_prob)
        health = health + repaired.astype(jnp.int32)
        frozen = jnp.where(freeze, params.freeze_steps, jnp.maximum(state.frozen - 1, 0))
        marked = jnp.where(freeze, params.mark_steps, jnp.maximum(state.marked - 1, 0))
        agents = dataclasses.replace(agents, timeout=jnp.where(remove, 1, agents.timeout).astype(jnp.int32))
        new_state = TerritoryState(
            agents=agents,
            frozen=jnp.where(remove, 0, frozen).astype(jnp.int32),
            marked=jnp.where(remove, 0, marked).astype(jnp.int32),
            cooldown=tick_cooldown(state.cooldown, fired_zap, params.zap_cooldown),
            owner=owner,
            claim_age=jnp.minimum(claim_age + 1, params.reward_delay),
            health=health,
            since_zapped=jnp.minimum(since_zapped + 1, params.repair_delay),
            destroyed=destroyed,
            t=state.t + 1,
        )
        step_info = {
            "fired_zap": fired_zap,
            "fired_claim": fired_claim,
            "zap_hits": zap_hits,
            "removed_now": remove,
            "new_claims": count_per_agent(owner, changed, n),
            "stolen": count_per_agent(owner, stolen_cells, n),
            "resources_destroyed": jnp.sum(newly_destroyed).astype(jnp.int32),
            "paying": paying,
        }
        return self.finish_step(new_state, params, payoffs, step_info)

    def describe(self, state: TerritoryState, params: Any) -> Info:
        n = params.n_agents
        claimed = count_per_agent(state.owner, state.owner >= 0, n)
        return {
            "step": state.t,
            "claimed": claimed,
            "removed": ~on_map(state.agents),
            "frozen": state.frozen > 0,
            "resources_left": jnp.sum(self.intact(state, params)).astype(jnp.int32),
        }

    # ----- observations -----
    def shared_channels(self, state: TerritoryState, params: Any) -> Array:
        """bool ``[H, W, 4]``: wall, unclaimed resource, damaged resource, agent (channels that look alike to every observer)."""
        intact = self.intact(state, params)
        agents = occupancy(state.agents.pos, on_map(state.agents), intact.shape)
        unclaimed = intact & (state.owner < 0)
        damaged = intact & (state.health < params.resource_health)
        return jnp.stack([jnp.asarray(self.fixed_walls(params)), unclaimed, damaged, agents], axis=-1)

    def observe(self, state: TerritoryState, params: TerritoryParams) -> Array:
        pos, orient = state.agents.pos, state.agents.orient
        a, b, s = params.view_ahead, params.view_behind, params.view_side
        n = params.n_agents
        shared = egocentric_views(self.shared_channels(state, params), pos, orient, a, b, s).reshape(n, -1, 4)
        owners = window_values(jnp.where(self.intact(state, params), state.owner, -1), pos, orient, a, b, s, outside=-1).reshape(
            n, -1
        )
        own = owners == jnp.arange(n)[:, None]
        other = (owners >= 0) & ~own
        cells = jnp.stack([shared[..., 0], shared[..., 1], own, other, shared[..., 2], shared[..., 3]], axis=-1).astype(
            jnp.float32
        )
        present = on_map(state.agents)
        ready = 1.0 - state.cooldown.astype(jnp.float32) / params.zap_cooldown.astype(jnp.float32)
        scalars = jnp.stack([ready * present, (state.frozen > 0).astype(jnp.float32), (~present).astype(jnp.float32)], axis=1)
        return jnp.concatenate([cells.reshape(n, -1) * own_body_mask(a, b, s, cells.shape[-1]) * present[:, None], scalars], axis=1)

    def observation_size(self, params: Any) -> int:
        return window_size(params.view_ahead, params.view_behind, params.view_side) * len(self.channel_names) + 3

    def global_state(self, state: TerritoryState, params: Any) -> Array:
        intact = self.intact(state, params)
        shared = self.shared_channels(state, params)
        owner = jnp.where(intact, (state.owner + 1).astype(jnp.float32) / params.n_agents, 0.0)
        maps = jnp.stack([intact, shared[..., 1], owner, shared[..., 2], shared[..., 3]], axis=-1).astype(jnp.float32)
        return global_state_vector(maps, state.agents, state.t, params.max_steps, (state.frozen > 0).astype(jnp.float32))

    # ----- rendering -----
    def render_text(self, state: TerritoryState, params: Any) -> str:
        """``#`` wall, ``R`` unclaimed resource, ``a``–``z`` resource claimed by agent 0–25 (upper case once it pays), digits agents."""
        chars = np.full(self.layout(params).shape, " ")
        chars[self.fixed_walls(params)] = "#"
        intact = np.asarray(self.intact(state, params))
        owner, age = np.asarray(state.owner), np.asarray(state.claim_age)
        chars[intact] = RESOURCE
        for r, c in zip(*np.nonzero(intact & (owner >= 0))):
            letter = "abcdefghijklmnopqrstuvwxyz"[owner[r, c] % 26]
            chars[r, c] = letter.upper() if age[r, c] >= int(params.reward_delay) else letter
        draw_agents(chars, state.agents)
        timeout, frozen = np.asarray(state.agents.timeout), np.asarray(state.frozen)
        status = ["out" if timeout[i] else (f"frozen {frozen[i]}" if frozen[i] else "on") for i in range(len(timeout))]
        lines = [self.step_header(state, params)] + ["".join(row) for row in chars]
        return "\n".join(lines + ["agents: " + " ".join(f"{agent_symbol(i)}:{s}" for i, s in enumerate(status))])

    def render_rgb(self, state: TerritoryState, params: Any) -> np.ndarray:
        """uint8 ``[H·8, W·8, 3]``: walls grey, unclaimed resources brown-grey, claimed ones in the claimant's colour
        (dim until they pay), agents as coloured squares with a white bar on the side they face."""
        rgb = floor_canvas(self.layout(params).shape)
        rgb[self.fixed_walls(params)] = CELL_COLOURS["wall"]
        intact = np.asarray(self.intact(state, params))
        owner, age = np.asarray(state.owner), np.asarray(state.claim_age)
        rgb[intact] = UNCLAIMED_COLOUR
        claimed = intact & (owner >= 0)
        colours = AGENT_COLOURS[np.maximum(owner, 0) % len(AGENT_COLOURS)].astype(np.int32)
        dim = np.where((age >= int(params.reward_delay))[..., None], colours, colours // 2 + 20)
        rgb[claimed] = dim[claimed].astype(np.uint8)
        return render_rgb_grid(rgb, state.agents, scale=RGB_SCALE)
