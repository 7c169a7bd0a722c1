"""Scripted bots of the in-the-Matrix substrates (``PrisonersDilemmaInTheMatrix``, ``StagHuntInTheMatrix``).

:class:`InventoryBot` plays one pure strategy: it collects only resources of class ``strategy`` (0-based: 0 is
cooperate / stag, 1 defect / hare) until its inventory's share of that class reaches ``target_share``, steering around
the other class; then it seeks a ready partner and fires the interaction beam when one stands in the beam's reach.
It reads only its own observation (:meth:`motivegym.envs.spatial.in_the_matrix.InTheMatrix.observe`): the
egocentric window and its own features (mixed strategy, ready, beam readiness, frozen, removed).

Rules, per agent and step (``a`` cells ahead, ``l`` cells to the right, from the window):

1. *collect* while not ready or ``share < target_share``: the target is the nearest visible wanted resource;
2. otherwise *seek*: fire if a ready agent is in the beam (``1 ≤ a ≤ beam_length``, ``|l| ≤ beam_width // 2``)
   and the beam is cooled down; else the target is the nearest visible agent (ready agents first);
3. with a target: a target level or behind with a lateral offset → turn towards it; else the relative move
   (forward, backward, step left, step right) that brings it nearest, never into a wall or agent; an unwanted
   resource counts as 1.5 cells more (among equally short moves the bot avoids it, but it does not sidestep a fence);
4. no target: forward when the cell ahead is free and not unwanted (probability ``1 − turn_rate``), else a random turn.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from motivegym.baselines.heuristics import per_agent
from motivegym.baselines.policies import Policy, PolicyState
from motivegym.core.env import FunctionalEnv
from motivegym.envs.spatial.grid import BACKWARD, FORWARD, NOOP, STEP_LEFT, STEP_RIGHT, TURN_LEFT, TURN_RIGHT
from motivegym.envs.spatial.in_the_matrix import INTERACT, InTheMatrix

Array = jax.Array

#: the relative moves and their (ahead, right) displacement
MOVES = ((FORWARD, 1, 0), (BACKWARD, -1, 0), (STEP_LEFT, 0, -1), (STEP_RIGHT, 0, 1))
FAR = 1000
#: extra cells an unwanted resource counts as: below the 2 cells of a sidestep, so a bot steps over an unwanted resource
#: rather than around it when no other move brings it nearer (Stag Hunt's map fences stag in with hare)
UNWANTED_COST = 1.5


@dataclasses.dataclass(frozen=True)
class InventoryBot(Policy):
    """Collects resource class ``strategy`` (per agent: an int or a sequence) to ``target_share`` of its inventory,
    then seeks a ready partner and interacts (rules in the module docstring)."""

    strategy: int | tuple[int, ...] = 0
    target_share: float = 0.75
    turn_rate: float = 0.2

    @property
    def name(self) -> str:
        return f"inventory_bot(strategy={self.strategy}, target_share={self.target_share})"

    def init(self, env: FunctionalEnv, params: Any) -> PolicyState:
        if not isinstance(env, InTheMatrix):
            raise ValueError(f"{env.name}: InventoryBot plays the in-the-Matrix substrates only")
        k, n = env.num_resources(params), env.n_agents(params)
        strategy = per_agent(self.strategy, n, np.int32)
        if np.any(np.asarray(strategy) < 0) or np.any(np.asarray(strategy) >= k):
            raise ValueError(f"{env.name}: InventoryBot strategy must be a resource class in 0..{k - 1}, got {self.strategy!r}")
        if not 0.0 < self.target_share <= 1.0:
            raise ValueError(f"InventoryBot target_share must be in (0, 1], got {self.target_share}")
        rows, cols = params.view_ahead + params.view_behind + 1, 2 * params.view_side + 1
        ahead = np.repeat(np.arange(params.view_ahead, -params.view_behind - 1, -1), cols)
        right = np.tile(np.arange(-params.view_side, params.view_side + 1), rows)
        half = params.beam_width // 2
        in_beam = (ahead >= 1) & (ahead <= params.beam_length) & (np.abs(right) <= half)
        return {
            "want": jax.nn.one_hot(strategy, k, dtype=jnp.float32),  # [n, K]
            "ahead": jnp.asarray(ahead, jnp.int32),  # [cells]
            "right": jnp.asarray(right, jnp.int32),
            "in_beam": jnp.asarray(in_beam),
            "target_share": jnp.float32(self.target_share),
            "turn_rate": jnp.float32(self.turn_rate),
        }

    def __call__(self, key: Array, obs: Array, state: PolicyState) -> tuple[Array, PolicyState]:
        n, k = state["want"].shape
        cells = state["ahead"].shape[0]
        channels = k + 3
        window = obs[:, : cells * channels].reshape(n, cells, channels) > 0.5
        own = obs[:, cells * channels :]
        keys = jax.random.split(key, n)
        actions = jax.vmap(self._act, in_axes=(0, 0, 0, 0, None))(keys, window, own, state["want"], state)
        return actions, state

    @staticmethod
    def _act(key: Array, window: Array, own: Array, want: Array, state: PolicyState) -> Array:
        k = want.shape[0]
        ahead, right = state["ahead"], state["right"]
        wall, resources, agent, ready_agent = window[:, 0], window[:, 1 : 1 + k], window[:, k + 1], window[:, k + 2]
        wanted = jnp.any(resources & (want > 0.5), axis=-1)
        unwanted = jnp.any(resources & (want < 0.5), axis=-1)
        share, is_ready, shoot = jnp.sum(own[:k] * want), own[k] > 0.5, own[k + 1]
        collecting = ~is_ready | (share < state["target_share"] - 1e-6)

        distance = jnp.abs(ahead) + jnp.abs(right)
        fire = ~collecting & (shoot >= 1.0) & jnp.any(ready_agent & state["in_beam"])
        partner_cost = jnp.where(ready_agent, distance, jnp.where(agent, distance + 50, FAR))
        cost = jnp.where(collecting, jnp.where(wanted, distance, FAR), partner_cost)
        best = jnp.argmin(cost)
        has_target = cost[best] < FAR
        ta, tr = ahead[best], right[best]

        def cell_at(a, r):
            return jnp.argmax((ahead == a) & (right == r)), jnp.any((ahead == a) & (right == r))

        scores = []
        for _, da, dr in MOVES:
            index, visible = cell_at(da, dr)
            blocked = ~visible | wall[index] | agent[index]
            scores.append(jnp.abs(ta - da) + jnp.abs(tr - dr) + UNWANTED_COST * unwanted[index] + FAR * blocked)
        move = jnp.asarray([m for m, _, _ in MOVES])[jnp.argmin(jnp.stack(scores))]
        face = jnp.where(tr > 0, TURN_RIGHT, TURN_LEFT)
        towards = jnp.where((ta <= 0) & (tr != 0), face, jnp.where((ta < 0) & (tr == 0), TURN_RIGHT, move))

        turn_key, side_key = jax.random.split(key)
        front, front_visible = cell_at(1, 0)
        free_ahead = front_visible & ~wall[front] & ~agent[front] & ~unwanted[front]
        go = free_ahead & (jax.random.uniform(turn_key) >= state["turn_rate"])
        wander = jnp.where(go, FORWARD, jnp.where(jax.random.bernoulli(side_key), TURN_LEFT, TURN_RIGHT))
        action = jnp.where(fire, INTERACT, jnp.where(has_target, towards, wander))
        return jnp.where(jnp.any(own[k + 2 :] > 0.5), NOOP, action).astype(jnp.int32)  # frozen or removed
