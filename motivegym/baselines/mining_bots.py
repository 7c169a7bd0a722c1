"""Scripted bots of CoopMining-v0 and Mushrooms-v0 (Melting Pot ``coop_mining`` and ``externality_mushrooms``).

Both read only their own egocentric observation (the rotated one-hot window, row 0 farthest ahead, column 0 leftmost;
then the env's flags) and act in the default action vocabulary (0 noop .. 6 turn right, 7 beam).

* :class:`OreMiner` (CoopMining): walks until its target ore lies straight ahead within the mine beam's reach, with no
  wall or other ore in between, then mines it whenever the beam is ready. ``gold=True`` (the **cooperator**, the
  stag hunter): targets gold, partly mined gold first (someone is waiting there), and keeps re-mining the gold it hit
  so the ore stays partly mined while it waits for a partner; it never mines iron. ``gold=False`` (the **defector**,
  the hare hunter): mines iron only. With nothing to mine in view it explores (forward 0.6, turn 0.2 each).
* :class:`MushroomEater` (Mushrooms): walks onto the nearest mushroom of its ``kinds`` and steps around the others;
  never zaps. The **cooperator** eats green (payoff shared by all) and blue (payoff to everyone else) — the mushrooms
  Melting Pot calls prosocial; the **defector** eats only red (all the payoff to the eater, no externality). Neither
  eats orange, which costs everyone; defecting here is taking the private mushroom and leaving the group-sustaining
  ones (whose spores regrow green and blue) uneaten.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from motivegym.baselines.heuristics import approach, nearest, per_agent
from motivegym.baselines.policies import Policy, PolicyState
from motivegym.core.env import FunctionalEnv
from motivegym.envs.spatial.grid import BACKWARD, FORWARD, NOOP, STEP_LEFT, STEP_RIGHT, TURN_LEFT, TURN_RIGHT

Array = jax.Array
BEAM = 7


def window_offsets(params: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(d, lateral)`` int32 ``[rows, cols]``: each window cell's distance ahead and to the right of the agent."""
    rows, cols = params.view_ahead + params.view_behind + 1, 2 * params.view_side + 1
    return np.meshgrid(params.view_ahead - np.arange(rows), np.arange(cols) - params.view_side, indexing="ij")


def explore(key: Array) -> Array:
    """Forward with probability 0.6, else a turn."""
    return jax.random.choice(key, jnp.array([FORWARD, TURN_LEFT, TURN_RIGHT]), p=jnp.array([0.6, 0.2, 0.2]))


def check_env(env: FunctionalEnv, name: str) -> None:
    if env.name != name:
        raise ValueError(f"this bot plays {name}-v0, got {env.name}")


@dataclasses.dataclass(frozen=True)
class OreMiner(Policy):
    """CoopMining miner (module docstring); ``gold`` may be a per-agent tuple."""

    gold: bool | tuple[bool, ...] = True
    epsilon: float = 0.02

    @property
    def name(self) -> str:
        return f"ore_miner(gold={self.gold})"

    def init(self, env: FunctionalEnv, params: Any) -> PolicyState:
        check_env(env, "CoopMining")
        d, lateral = window_offsets(params)
        reach = min(int(params.mine_beam_length), int(params.view_ahead))
        lane_rows = params.view_ahead - np.arange(1, reach + 1)  # window rows 1 .. reach cells straight ahead
        return {"d": jnp.asarray(d, jnp.int32), "lateral": jnp.asarray(lateral, jnp.int32), "lane_rows": jnp.asarray(lane_rows, jnp.int32),
                "gold": per_agent(self.gold, env.n_agents(params), bool), "epsilon": jnp.float32(self.epsilon)}  # fmt: skip

    def __call__(self, key: Array, obs: Array, state: PolicyState) -> tuple[Array, PolicyState]:
        n = obs.shape[0]
        actions = jax.vmap(lambda k, o, g: self.act(k, o, g, state))(jax.random.split(key, n), obs, state["gold"])
        return actions, state

    def act(self, key: Array, obs: Array, gold: Array, state: PolicyState) -> Array:
        d, lateral = state["d"], state["lateral"]
        rows, cols = d.shape
        view = obs[:-1].reshape(rows, cols, 5) > 0.5
        ready = obs[-1] > 0.5
        wall, iron, raw_gold, partial = view[..., 0], view[..., 1], view[..., 2], view[..., 3]
        ore = iron | raw_gold | partial
        wanted = jnp.where(gold, raw_gold | partial, iron)
        tie_key, explore_key, eps_key, random_key = jax.random.split(key, 4)

        # the beam lane: what the first wall or ore within reach straight ahead is
        centre = cols // 2
        stops = (wall | ore)[state["lane_rows"], centre]
        first = jnp.argmax(stops)
        in_sight = jnp.any(stops) & wanted[state["lane_rows"][first], centre]

        # prefer partly mined gold (a partner waits there), then the nearest wanted ore; stand so it lies ahead
        noise = jax.random.uniform(tie_key, d.shape)
        partner_waiting = gold & jnp.any(partial)
        seen, od, ol = nearest(jnp.where(partner_waiting, partial, wanted), d, lateral, noise)
        toward = jnp.where(
            ol != 0,
            jnp.where(od >= 1, jnp.where(ol > 0, STEP_RIGHT, STEP_LEFT), jnp.where(ol > 0, TURN_RIGHT, TURN_LEFT)),
            jnp.where(od >= 1, FORWARD, jnp.where(od == 0, BACKWARD, TURN_RIGHT)),
        )
        action = jnp.where(in_sight, jnp.where(ready, BEAM, NOOP), jnp.where(seen, toward, explore(explore_key)))
        uniform = jax.random.randint(random_key, (), NOOP, TURN_RIGHT + 1)
        return jnp.where(jax.random.uniform(eps_key) < state["epsilon"], uniform, action).astype(jnp.int32)


@dataclasses.dataclass(frozen=True)
class MushroomEater(Policy):
    """Mushrooms eater (module docstring): ``kinds`` are the mushroom kinds it eats (1 red, 2 green, 3 blue, 4 orange)."""

    kinds: tuple[int, ...] = (2, 3)
    epsilon: float = 0.02

    @property
    def name(self) -> str:
        return f"mushroom_eater(kinds={self.kinds})"

    def init(self, env: FunctionalEnv, params: Any) -> PolicyState:
        check_env(env, "Mushrooms")
        if not set(self.kinds) <= {1, 2, 3, 4}:
            raise ValueError(f"mushroom kinds are 1 red, 2 green, 3 blue, 4 orange; got {self.kinds}")
        d, lateral = window_offsets(params)
        eats = np.zeros(4, bool)
        eats[np.asarray(self.kinds, int) - 1] = True
        return {"d": jnp.asarray(d, jnp.int32), "lateral": jnp.asarray(lateral, jnp.int32), "eats": jnp.asarray(eats),
                "epsilon": jnp.float32(self.epsilon)}  # fmt: skip

    def __call__(self, key: Array, obs: Array, state: PolicyState) -> tuple[Array, PolicyState]:
        n = obs.shape[0]
        return jax.vmap(lambda k, o: self.act(k, o, state))(jax.random.split(key, n), obs), state

    def act(self, key: Array, obs: Array, state: PolicyState) -> Array:
        d, lateral = state["d"], state["lateral"]
        rows, cols = d.shape
        view = obs[:-2].reshape(rows, cols, 6) > 0.5
        mushrooms = view[..., 1:5]
        wanted = jnp.any(mushrooms & state["eats"], axis=-1)
        unwanted = jnp.any(mushrooms & ~state["eats"], axis=-1)
        tie_key, explore_key, eps_key, random_key = jax.random.split(key, 4)
        seen, md, ml = nearest(wanted, d, lateral, jax.random.uniform(tie_key, d.shape))
        action = jnp.where(seen, approach(md, ml), explore(explore_key))
        uniform = jax.random.randint(random_key, (), NOOP, TURN_RIGHT + 1)
        action = jnp.where(jax.random.uniform(eps_key) < state["epsilon"], uniform, action)
        # never step onto a mushroom it does not eat: turn instead
        step_d = jnp.select([action == FORWARD, action == BACKWARD], [1, -1], 0)
        step_l = jnp.select([action == STEP_RIGHT, action == STEP_LEFT], [1, -1], 0)
        onto = jnp.any(unwanted & (d == step_d) & (lateral == step_l)) & ((step_d != 0) | (step_l != 0))
        return jnp.where(onto, TURN_RIGHT, action).astype(jnp.int32)


__all__ = ["MushroomEater", "OreMiner"]
