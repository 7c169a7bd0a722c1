"""Scripted bots of GiftRefinement-v0 and Territory-v0, read from each agent's own observation row.

Both read the egocentric window (row 0 farthest ahead, the agent at ``(view_ahead, view_side)`` facing up) like
:class:`~motivegym.baselines.heuristics.GridForager` and reuse its ``approach``/``nearest`` helpers; with no target in
view an agent explores (forward 60 %, turn left or right 20 % each); with probability ``epsilon`` it makes a uniformly
random move or turn (never a beam), which breaks deadlocks.

* :class:`TokenTrader` (GiftRefinement). ``gift=False`` (the **defector**): consumes as soon as it holds a token,
  otherwise walks to the nearest visible token. ``gift=True`` (the **cooperator**): consumes only once it holds a
  top-level token (which no gift can refine); holding lower tokens it walks to the nearest visible agent (first
  sideways into its column, then forward; turns round for one behind it) and fires the gift beam when that agent
  stands in its lane within beam reach and the beam is ready; with nothing to give it collects tokens.
* :class:`TerritoryBot` (Territory). ``aggressive=False`` (the **cooperator**): fires the claim beam only when its
  lane holds an unclaimed resource and no resource claimed by another agent, walks to the nearest visible unclaimed
  resource (facing it claims it by touch), turns away rather than face another agent's claim, stays put next to its
  own claims when nothing is left to claim, and never zaps. ``aggressive=True`` (the **defector**): zaps any agent
  within the zap beam's reach when ready, fires the claim beam whenever its lane holds a resource it does not own
  (others' claims included) and walks to the nearest resource it does not own.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from motivegym.baselines.heuristics import (
    FORWARD,
    NOOP,
    STEP_LEFT,
    STEP_RIGHT,
    TURN_LEFT,
    TURN_RIGHT,
    approach,
    nearest,
    per_agent,
)
from motivegym.baselines.policies import Policy, PolicyState
from motivegym.core.env import FunctionalEnv

Array = jax.Array
GIFT, CONSUME = 7, 8  # GiftRefinement's refine_and_gift, consume_tokens
ZAP, CLAIM = 7, 8  # Territory's fire_zap, fire_claim


def window_offsets(params: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(d, lateral)`` int32 ``[rows, cols]``: forward distance and rightward offset of each window cell."""
    rows, cols = params.view_ahead + params.view_behind + 1, 2 * params.view_side + 1
    return np.meshgrid(params.view_ahead - np.arange(rows), np.arange(cols) - params.view_side, indexing="ij")


def check_env(env: FunctionalEnv, expected: str, policy: str) -> None:
    if env.name != expected:
        raise ValueError(f"the {policy} bot plays {expected}, got {env.name}")


def explore_or(key: Array, action: Array, epsilon: Array) -> Array:
    """``action`` (−1: explore) with the exploration and ``epsilon``-random move rules of the module docstring."""
    explore_key, eps_key, random_key = jax.random.split(key, 3)
    explore = jax.random.choice(explore_key, jnp.array([FORWARD, TURN_LEFT, TURN_RIGHT]), p=jnp.array([0.6, 0.2, 0.2]))
    action = jnp.where(action < 0, explore, action)
    uniform = jax.random.randint(random_key, (), NOOP, TURN_RIGHT + 1)
    return jnp.where(jax.random.uniform(eps_key) < epsilon, uniform, action).astype(jnp.int32)


def line_up(d: Array, lateral: Array) -> Array:
    """The move that brings a target at egocentric ``(d, lateral)`` into the agent's facing lane, then ahead of it."""
    return jnp.where(lateral > 0, STEP_RIGHT, jnp.where(lateral < 0, STEP_LEFT, jnp.where(d > 0, FORWARD, TURN_RIGHT)))


@dataclasses.dataclass(frozen=True)
class TokenTrader(Policy):
    """GiftRefinement bot (module docstring); ``gift`` may be a per-agent tuple."""

    gift: bool | tuple[bool, ...] = True
    epsilon: float = 0.05

    @property
    def name(self) -> str:
        return f"token_trader(gift={self.gift})"

    def init(self, env: FunctionalEnv, params: Any) -> PolicyState:
        check_env(env, "GiftRefinement", self.name)
        d, lateral = window_offsets(params)
        return {
            "d": jnp.asarray(d, jnp.int32),
            "lateral": jnp.asarray(lateral, jnp.int32),
            "levels": jnp.zeros(params.levels, jnp.int32),  # its shape carries the static number of levels
            "beam": jnp.int32(params.gift_beam_length),
            "gift": per_agent(self.gift, env.n_agents(params), bool),
            "epsilon": jnp.float32(self.epsilon),
        }

    def __call__(self, key, obs, state):
        n = obs.shape[0]
        return jax.vmap(lambda k, o, g: self.act(k, o, state, g))(jax.random.split(key, n), obs, state["gift"]), state

    def act(self, key: Array, obs: Array, state: PolicyState, gift: Array) -> Array:
        d, lateral = state["d"], state["lateral"]
        levels = state["levels"].shape[0]
        cells = d.size
        view = obs[: cells * 3].reshape(d.shape + (3,)) > 0.5
        inventory = obs[cells * 3 : cells * 3 + levels]
        ready = obs[-1] >= 1.0
        tie_key, act_key = jax.random.split(key)
        noise = jax.random.uniform(tie_key, d.shape)
        tokens_seen, td, tl = nearest(view[..., 1], d, lateral, noise)
        forage = jnp.where(tokens_seen, approach(td, tl), -1)
        holding = jnp.any(inventory > 0)

        agents_seen, ad, al = nearest(view[..., 2], d, lateral, noise)
        in_lane = jnp.any(view[..., 2] & (lateral == 0) & (d >= 1) & (d <= state["beam"]))
        give = jnp.where(in_lane, jnp.where(ready, GIFT, NOOP), jnp.where(agents_seen, line_up(ad, al), forage))
        cooperate = jnp.where(inventory[levels - 1] > 0, CONSUME, jnp.where(holding, give, forage))
        defect = jnp.where(holding, CONSUME, forage)
        return explore_or(act_key, jnp.where(gift, cooperate, defect), state["epsilon"])


@dataclasses.dataclass(frozen=True)
class TerritoryBot(Policy):
    """Territory bot (module docstring); ``aggressive`` may be a per-agent tuple."""

    aggressive: bool | tuple[bool, ...] = False
    epsilon: float = 0.05

    @property
    def name(self) -> str:
        return f"territory_bot(aggressive={self.aggressive})"

    def init(self, env: FunctionalEnv, params: Any) -> PolicyState:
        check_env(env, "Territory", self.name)
        d, lateral = window_offsets(params)
        return {
            "d": jnp.asarray(d, jnp.int32),
            "lateral": jnp.asarray(lateral, jnp.int32),
            "claim_reach": jnp.int32(params.claim_beam_length),
            "zap_reach": jnp.int32(params.zap_beam_length),
            "zap_side": jnp.int32((params.zap_beam_width - 1) // 2),
            "aggressive": per_agent(self.aggressive, env.n_agents(params), bool),
            "epsilon": jnp.float32(self.epsilon),
        }

    def __call__(self, key, obs, state):
        n = obs.shape[0]
        return jax.vmap(lambda k, o, a: self.act(k, o, state, a))(jax.random.split(key, n), obs, state["aggressive"]), state

    def act(self, key: Array, obs: Array, state: PolicyState, aggressive: Array) -> Array:
        d, lateral = state["d"], state["lateral"]
        view = obs[: d.size * 6].reshape(d.shape + (6,)) > 0.5
        unclaimed, own, other, agents = view[..., 1], view[..., 2], view[..., 3], view[..., 5]
        ready = obs[-3] >= 1.0
        tie_key, act_key = jax.random.split(key)
        noise = jax.random.uniform(tie_key, d.shape)
        lane = (lateral == 0) & (d >= 1) & (d <= state["claim_reach"])
        ahead = (lateral == 0) & (d == 1)

        seen, ud, ul = nearest(unclaimed, d, lateral, noise)
        home = jnp.where(jnp.any(own), NOOP, -1)
        peaceful = jnp.where(seen, approach(ud, ul), home)
        peaceful = jnp.where(jnp.any(unclaimed & lane) & ~jnp.any(other & lane), CLAIM, peaceful)
        peaceful = jnp.where(jnp.any(other & ahead), TURN_LEFT, peaceful)

        target_seen, gd, gl = nearest(unclaimed | other, d, lateral, noise)
        zap_zone = (d >= 1) & (d <= state["zap_reach"]) & (jnp.abs(lateral) <= state["zap_side"])
        hostile = jnp.where(target_seen, approach(gd, gl), -1)
        hostile = jnp.where(jnp.any((unclaimed | other) & lane), CLAIM, hostile)
        hostile = jnp.where(ready & jnp.any(agents & zap_zone), ZAP, hostile)
        return explore_or(act_key, jnp.where(aggressive, hostile, peaceful), state["epsilon"])
