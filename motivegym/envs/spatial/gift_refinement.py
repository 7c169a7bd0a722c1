"""Gift Refinement (GiftRefinement-v0): tokens multiply only when they are given away (Melting Pot's gift_refinements)."""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import jax
import jax.numpy as jnp
import numpy as np

from motivegym.core.env import Info
from motivegym.core.pytree import pytree_dataclass, static_field
from motivegym.envs.spatial.base import RGB_SCALE, GridSubstrate
from motivegym.envs.spatial.grid import (
    ACTION_NAMES as GRID_ACTION_NAMES,
)
from motivegym.envs.spatial.grid import (
    CELL_COLOURS,
    FIRE_TAG,
    MELTINGPOT_VIEW,
    AgentState,
    agent_symbol,
    beam_cells,
    beam_reach,
    decode_actions,
    draw_agents,
    floor_canvas,
    global_state_vector,
    initial_agents,
    occupancy,
    read_cells,
    render_rgb_grid,
    turn_and_move,
    validate_layout,
    views_of_others,
    window_size,
)
from motivegym.envs.spatial.grid_extensions import first_hits, tick_cooldown

Array = jax.Array

#: action indices: grid moves/turns 0-6, then the gift beam (Melting Pot's REFINE_AND_GIFT) and CONSUME_TOKENS
GIFT, CONSUME = FIRE_TAG, FIRE_TAG + 1
ACTION_NAMES = GRID_ACTION_NAMES[:7] + ("refine_and_gift", "consume_tokens")
TOKEN = "T"  # a token cell (walkable floor where tokens spawn); the rest of the legend is grid.LEGEND
EXTRA_CHARS = ((TOKEN, " "),)
TOKEN_COLOUR = (230, 200, 40)

#: Melting Pot's gift_refinements map (27×27, 18 spawn points, 538 token cells); ``W`` written ``#``
GIFT_REFINEMENT_LAYOUT = (
    "###########################",
    "#TTTTTTTTTTTTTTTTTTTTTTTTT#",
    "#TPTTTTTTTTTPTTTTTPTTTTTPT#",
    "#TTTTTTTT#TTTTTTTTTTTTTTTT#",
    "#TTTTTTTT#TTTTTTTTTT#TTTTT#",
    "#TTTTTTTT#TTTTTTTTTT#TTTTT#",
    "#TTTTTTTT#######TTTT#TTTPT#",
    "#TPT##TTTT#TTTTTTTTT#TTTTT#",
    "#TTTTTTTTT#TTPTTTTTTTTTTTT#",
    "#TTTTTTTTT#TTTTT###TTTTTTT#",
    "#TTTTTTTTT#TTTTTTTTTTTTTTT#",
    "#TTTTTTTTTTTTTTTTTTTTTTTPT#",
    "#TPTTT###TTTTTT########TTT#",
    "#TT####TTTTTTTTTTTTTTTTTTT#",
    "#TTTTT#TTTT#TTTTTPTTTTTTTT#",
    "#TTTTT#TTTT#TTTTTTTTTTTTPT#",
    "#TTTTT#TTTTT#TTTTTTTT#TTTT#",
    "#TTTTTT#TTTTT####TTTT#TTTT#",
    "#TPTTTTT#TTTTTTTTTTTT#TTTT#",
    "#TTTTTTTT#TTTPTTTTTTTTTTPT#",
    "#TTTTTTTTT#TTTTTTTT#TTTTTT#",
    "#TTTT#TTTTTTTTTTTTT#TTTTTT#",
    "#TTTT#TTTTTTTTT########TTT#",
    "#TTTT#TTTTTTTTTTTT#TTTTTTT#",
    "#TPTTTTTTPTTTTTTTTPTTTTTPT#",
    "#TTTTTTTTTTTTTTTTTTTTTTTTT#",
    "###########################",
)


@pytree_dataclass
class GiftRefinementParams:
    max_steps: Array  # int32 horizon
    gift_cooldown: Array  # int32 steps between two gift beams of one agent (Melting Pot cooldownTime 3)
    gift_multiplier: Array  # int32 tokens of the next level the recipient gets per token gifted below the top level
    capacity: Array  # int32 tokens per level an inventory holds (excess is lost)
    token_values: Array  # [levels] payoff per token consumed, by refinement level (Melting Pot: 1 each)
    regrow_prob: Array  # per empty, unoccupied token cell and step
    initial_token_prob: Array  # probability that a token cell holds a token at reset (Melting Pot: 0)
    layout: tuple[str, ...] = static_field()
    n_agents: int = static_field()
    levels: int = static_field()  # number of refinement levels (token types)
    gift_beam_length: int = static_field()
    view_ahead: int = static_field()
    view_behind: int = static_field()
    view_side: int = static_field()


@pytree_dataclass
class GiftRefinementState:
    agents: AgentState
    tokens: Array  # [H, W] bool: a token lies on the cell
    inventory: Array  # [n, levels] int32 tokens held per refinement level (level 0 = raw)
    cooldown: Array  # [n] int32 steps until the gift beam can fire again
    t: Array  # int32 steps taken


def pick_up(inventory: Array, picked: Array, capacity: Array) -> Array:
    """Each picking agent adds one raw (level-0) token, capped at ``capacity`` (Melting Pot ``Pickable``/``addTokens``)."""
    return inventory.at[:, 0].set(jnp.minimum(inventory[:, 0] + picked.astype(jnp.int32), capacity))


def highest_level_held(inventory: Array) -> Array:
    """int32 ``[n]``: the highest level with at least one token, −1 for an empty inventory."""
    levels = inventory.shape[1]
    held = inventory > 0
    return jnp.where(jnp.any(held, axis=1), levels - 1 - jnp.argmax(held[:, ::-1], axis=1), -1)


def gift_transfers(inventory: Array, hits: Array, multiplier: Array, capacity: Array) -> tuple[Array, Array, Array]:
    """Inventories after the gifts ``hits [giver, recipient]`` (at most one recipient per giver) and the tokens received.

    Rule (Melting Pot ``GiftBeam:onHit``): a giver holding tokens loses one token of its **highest** level ``ℓ``;
    the recipient gains ``multiplier`` tokens of level ``ℓ+1``, or one token of level ``ℓ`` when ``ℓ`` is the top
    level (no refinement, no multiplication). Gifts of one step are simultaneous: every giver's level is read
    before any transfer; each level of a recipient's inventory is then capped at ``capacity`` (the excess is lost).
    A giver with an empty inventory gives nothing. Returns ``(inventory [n, levels], received [n, levels] tokens
    added before the cap, gave [n] bool)``."""
    levels = inventory.shape[1]
    source = highest_level_held(inventory)
    gives = jnp.any(hits, axis=1) & (source >= 0)
    top = source == levels - 1
    target_level = jnp.where(top, source, source + 1)
    amount = jnp.where(top, 1, multiplier) * gives
    sent = jax.nn.one_hot(jnp.where(gives, source, -1), levels, dtype=jnp.int32)  # [giver, level]
    delivered = jax.nn.one_hot(target_level, levels, dtype=jnp.int32) * amount[:, None]  # [giver, level]
    received = jnp.einsum("gr,gl->rl", (hits & gives[:, None]).astype(jnp.int32), delivered)
    return jnp.minimum(inventory - sent + received, capacity), received, gives


def consumption_payoff(inventory: Array, consuming: Array, token_values: Array) -> Array:
    """``π_i = [consumes_i] · Σ_ℓ inventory_iℓ · token_values_ℓ`` (Melting Pot ``Inventory:update``: every token pays 1)."""
    return consuming.astype(jnp.float32) * (inventory.astype(jnp.float32) @ token_values)


class GiftRefinement(GridSubstrate):
    """Gift Refinement: tokens picked up are worth more to others than to oneself; consumed tokens pay the consumer.

    * **Mechanism:** trust / gift exchange (Melting Pot ``gift_refinements``, after the Trust Game). Raw tokens
      spawn on token cells; stepping onto one puts it in the inventory (level 0, raw). The gift beam
      (``refine_and_gift``) hits the first agent within ``gift_beam_length`` cells straight ahead (walls stop
      it): the giver loses one token of its highest level ``ℓ`` held and the recipient gains
      ``gift_multiplier`` tokens of level ``ℓ+1`` (refined and multiplied), or one token of level ``ℓ`` when
      ``ℓ`` is already the top level ``levels − 1``. ``consume_tokens`` empties the inventory for a payoff.
      Giving loses the giver a token and multiplies the group's tokens; consuming at once keeps them.
    * **Agents:** ``n_agents`` (default 6), ``agent_i`` → digit ``i`` in renders; they never leave the map.
    * **Actions:** ``Discrete(9)``: 0 noop, 1 forward, 2 backward, 3 step left, 4 step right, 5 turn left,
      6 turn right, 7 refine and gift, 8 consume tokens (Melting Pot's order). Moves as in
      :mod:`motivegym.envs.spatial.grid` (walls and occupied cells block). The gift beam fires at most every
      ``gift_cooldown`` steps (a fire action while cooling down does nothing); one lane, first agent only.
    * **Step order:** turn, move; pick up tokens under the agents (each level of an inventory holds at
      most ``capacity``; a token picked into a full level is lost); gifts (simultaneous, sources read
      before transfers, :func:`gift_transfers`); consumption; token regrowth (each empty token cell not under
      an agent grows a token with probability ``regrow_prob``); ``t ← t + 1``.
    * **Observation:** per agent ``[window·3 + levels + 1]``: the egocentric window (``view_ahead`` rows ahead,
      ``view_behind`` behind, ``view_side`` columns each side, rotated so the agent faces up, row 0 farthest,
      column 0 leftmost) one-hot over (wall, token, other agent), flattened (row, column, channel); then the
      inventory per level / ``capacity``; then ready-to-gift ``1 − cooldown / gift_cooldown``.
      Global state: token and agent maps ``2·H·W``, per agent (row/H, col/W, orientation one-hot, removed flag)
      ``7n``, inventories / capacity ``n·levels``, ``t/max_steps``.
    * **Payoff:** ``π_i = Σ_ℓ inventory_iℓ · token_values_ℓ`` on the step agent i consumes, else 0
      (:func:`consumption_payoff`). Gifting itself pays nothing (Melting Pot's default role "none").
    * **Termination:** never terminates; truncation at ``max_steps``.
    * **Defaults:** 6 agents on Melting Pot's 27×27 map :data:`GIFT_REFINEMENT_LAYOUT` (18 spawn points,
      538 token cells), empty at reset, ``regrow_prob=0.0002``, ``levels=3``, ``gift_multiplier=5``
      (Melting Pot's ``giftMultiplier``; its docstring and SocialJax say 3), ``capacity=15``,
      ``token_values=(1, 1, 1)``, ``gift_beam_length=5``, ``gift_cooldown=3``, view 9 ahead, 1 behind,
      5 each side (11×11), ``max_steps=1000``. ``docs/gift_territory.md`` lists the deviations.
    * **Info:** ``step``, ``token_count``, ``inventory [n, levels]``; after a step also ``tokens_picked [n]``,
      ``fired_gift [n]``, ``gifts [n, n]`` (giver, recipient), ``tokens_received [n, levels]``,
      ``tokens_consumed [n]``.
    """

    name: ClassVar[str] = "GiftRefinement"
    substrate_actions: ClassVar[tuple[str, ...]] = ACTION_NAMES
    extra_chars: ClassVar[tuple[tuple[str, str], ...]] = EXTRA_CHARS
    channel_names: ClassVar[tuple[str, ...]] = ("wall", "token", "agent")

    # ----- params -----
    def make_params(self) -> GiftRefinementParams:
        return GiftRefinementParams(
            max_steps=jnp.int32(1000),
            gift_cooldown=jnp.int32(3),
            gift_multiplier=jnp.int32(5),
            capacity=jnp.int32(15),
            token_values=jnp.ones(3, jnp.float32),
            regrow_prob=jnp.float32(0.0002),
            initial_token_prob=jnp.float32(0.0),
            layout=GIFT_REFINEMENT_LAYOUT,
            n_agents=6,
            levels=3,
            gift_beam_length=5,
            **MELTINGPOT_VIEW,
        )

    def adapt_base_params(self, base: GiftRefinementParams, overrides: dict[str, Any]) -> GiftRefinementParams:
        """Changing ``levels`` needs ``token_values`` of that length (given in the same call, or ones)."""
        levels = overrides.get("levels", base.levels)
        if isinstance(levels, int) and levels >= 1 and levels != base.levels:
            base = dataclasses.replace(base, levels=levels, token_values=jnp.ones(levels, jnp.float32))
        return base

    def validate(self, params: GiftRefinementParams) -> None:
        where = self.name
        validate_layout(self.layout(params), params.n_agents, where)
        if not np.any(self.token_cells_mask(params)):
            raise ValueError(f"{where}: the layout has no token cells ({TOKEN!r})")
        if params.levels < 1:
            raise ValueError(f"{where}: levels must be >= 1, got {params.levels}")
        if params.token_values.shape != (params.levels,):
            raise ValueError(
                f"{where}: token_values must have one value per level ({params.levels}), got shape {params.token_values.shape}"
            )

    def token_cells_mask(self, params: Any) -> np.ndarray:
        """bool ``[H, W]``: the cells where tokens spawn."""
        return self.layout_masks(params)[TOKEN]

    # ----- reset / step -----
    def reset(self, key: Array, params: GiftRefinementParams) -> tuple[GiftRefinementState, Array]:
        layout = self.layout(params)
        agent_key, token_key = jax.random.split(key)
        agents = initial_agents(agent_key, layout.spawn_points, params.n_agents)
        cells = self.token_cells_mask(params)
        tokens = (jax.random.uniform(token_key, cells.shape) < params.initial_token_prob) & jnp.asarray(cells)
        tokens = tokens & ~occupancy(agents.pos, jnp.ones(params.n_agents, bool), layout.shape)
        n = params.n_agents
        state = GiftRefinementState(
            agents=agents,
            tokens=tokens,
            inventory=jnp.zeros((n, params.levels), jnp.int32),
            cooldown=jnp.zeros(n, jnp.int32),
            t=jnp.int32(0),
        )
        return state, self.observe(state, params)

    def step(self, key: Array, state: GiftRefinementState, actions: Array, params: GiftRefinementParams):
        layout = self.layout(params)
        walls = jnp.asarray(layout.walls)
        n = params.n_agents
        move_key, regrow_key = jax.random.split(key)
        active = jnp.ones(n, bool)
        decoded = decode_actions(actions, self.num_actions(params), active)
        agents = turn_and_move(move_key, state.agents, decoded, walls)

        picked = read_cells(state.tokens, agents.pos, outside=False)
        tokens = state.tokens & ~occupancy(agents.pos, picked, layout.shape)
        inventory = pick_up(state.inventory, picked, params.capacity)

        fired = (decoded == GIFT) & (state.cooldown == 0)
        cells = beam_cells(agents.pos, agents.orient, params.gift_beam_length, 1)
        hits, _ = first_hits(cells, beam_reach(cells, walls), fired, agents.pos, active)
        inventory, received, gave = gift_transfers(inventory, hits, params.gift_multiplier, params.capacity)

        consuming = decoded == CONSUME
        payoffs = consumption_payoff(inventory, consuming, params.token_values)
        consumed = jnp.where(consuming, jnp.sum(inventory, axis=1), 0)
        inventory = jnp.where(consuming[:, None], 0, inventory)

        blocked = occupancy(agents.pos, active, layout.shape)
        draws = jax.random.uniform(regrow_key, tokens.shape) < params.regrow_prob
        tokens = tokens | (draws & jnp.asarray(self.token_cells_mask(params)) & ~blocked)

        new_state = GiftRefinementState(
            agents=agents,
            tokens=tokens,
            inventory=inventory,
            cooldown=tick_cooldown(state.cooldown, fired, params.gift_cooldown),
            t=state.t + 1,
        )
        step_info = {
            "tokens_picked": picked.astype(jnp.int32),
            "fired_gift": fired,
            "gifts": hits & gave[:, None],
            "tokens_received": received,
            "tokens_consumed": consumed.astype(jnp.int32),
        }
        return self.finish_step(new_state, params, payoffs, step_info)

    def describe(self, state: GiftRefinementState, params: Any) -> Info:
        return {"step": state.t, "token_count": jnp.sum(state.tokens).astype(jnp.int32), "inventory": state.inventory}

    # ----- observations -----
    def grid_channels(self, state: GiftRefinementState, params: Any) -> Array:
        """bool ``[H, W, 3]``: wall, token, agent."""
        layout = self.layout(params)
        agents = occupancy(state.agents.pos, jnp.ones(params.n_agents, bool), layout.shape)
        return jnp.stack([jnp.asarray(layout.walls), state.tokens, agents], axis=-1)

    def observe(self, state: GiftRefinementState, params: GiftRefinementParams) -> Array:
        channels = self.grid_channels(state, params)
        views = views_of_others(channels, state.agents.pos, state.agents.orient, params.view_ahead, params.view_behind, params.view_side)
        inventory = state.inventory.astype(jnp.float32) / params.capacity.astype(jnp.float32)
        ready = 1.0 - state.cooldown.astype(jnp.float32) / params.gift_cooldown.astype(jnp.float32)
        return jnp.concatenate([views, inventory, ready[:, None]], axis=1)

    def observation_size(self, params: Any) -> int:
        return window_size(params.view_ahead, params.view_behind, params.view_side) * len(self.channel_names) + params.levels + 1

    def global_state(self, state: GiftRefinementState, params: Any) -> Array:
        inventory = state.inventory.astype(jnp.float32) / params.capacity.astype(jnp.float32)
        return global_state_vector(self.grid_channels(state, params)[..., 1:], state.agents, state.t, params.max_steps, inventory)

    # ----- rendering -----
    def render_text(self, state: GiftRefinementState, params: Any) -> str:
        layout = self.layout(params)
        chars = np.full(layout.shape, " ")
        chars[layout.walls] = "#"
        chars[np.asarray(state.tokens)] = "o"
        draw_agents(chars, state.agents)
        inventory = np.asarray(state.inventory)
        lines = [f"{self.step_header(state, params)}  (o token, digits agents)"]
        lines += ["".join(row) for row in chars]
        lines += [
            "inventories (raw..top): "
            + " ".join(f"{agent_symbol(i)}:{'/'.join(map(str, inventory[i]))}" for i in range(len(inventory)))
        ]
        return "\n".join(lines)

    def render_rgb(self, state: GiftRefinementState, params: Any) -> np.ndarray:
        """uint8 ``[H·8, W·8, 3]``: walls grey, tokens gold, agents coloured squares with a white bar on the side they face."""
        layout = self.layout(params)
        rgb = floor_canvas(layout.shape)
        rgb[np.asarray(state.tokens)] = TOKEN_COLOUR
        rgb[layout.walls] = CELL_COLOURS["wall"]
        return render_rgb_grid(rgb, state.agents, scale=RGB_SCALE)
