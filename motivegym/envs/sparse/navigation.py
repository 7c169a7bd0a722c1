"""CooperativeNavigation-v0: a sparse grid version of MPE's cooperative navigation (Lowe et al. 2017)."""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import jax
import jax.numpy as jnp
import numpy as np

from motivegym.core.env import FunctionalEnv, Info
from motivegym.core.params import override_params
from motivegym.core.pytree import pytree_dataclass, static_field
from motivegym.envs.sparse.grid import DIRECTIONS, agent_colours, paint_cells, top_cells, upscale

Array = jax.Array

ACTION_NAMES = ("noop", "move_up", "move_down", "move_left", "move_right")
N_ACTIONS = len(ACTION_NAMES)


@pytree_dataclass
class NavigationParams:
    max_steps: Array  # int32 horizon
    success_payoff: Array  # paid to every agent when all landmarks are covered
    n_agents: int = static_field(3)
    size: int = static_field(7)


@pytree_dataclass
class NavigationState:
    positions: Array  # [n, 2] int32
    landmarks: Array  # [n, 2] int32
    t: Array  # int32


def covered_landmarks(positions: Array, landmarks: Array) -> Array:
    """``[n]`` bool: landmark ``k`` has at least one agent on its cell."""
    return jnp.any(jnp.all(landmarks[:, None, :] == positions[None, :, :], axis=-1), axis=1)


def move_agents(positions: Array, actions: Array, size: int) -> Array:
    """Simultaneous moves clipped to the grid; agents may share cells; out-of-range actions are noop."""
    valid = (actions >= 1) & (actions < N_ACTIONS)
    offsets = jnp.where(valid[:, None], jnp.asarray(DIRECTIONS)[jnp.clip(actions - 1, 0, 3)], 0)
    return jnp.clip(positions + offsets, 0, size - 1)


class CooperativeNavigation(FunctionalEnv):
    """Sparse cooperative navigation: n agents must cover n landmarks at the same time.

    * **Mechanism:** pure coordination with a sparse team payoff (MPE ``simple_spread``, Lowe et
      al. 2017, on a grid with no shaping): nothing is paid until every landmark is covered at once.
    * **Agents:** ``n_agents`` (default 3) on an open ``size × size`` grid; they move
      simultaneously and may share cells. Landmarks (as many as agents) and agents spawn on
      distinct random cells (no agent starts on a landmark).
    * **Actions:** ``Discrete(5)``: 0 noop, 1 up, 2 down, 3 left, 4 right (moves off the grid stay
      put; out-of-range actions are noop).
    * **Observation:** per agent: own position ``/(size−1)`` (2), landmark offsets ``(Δrow, Δcol)/(size−1)``
      (2n), other agents' offsets in index order (2(n−1)), landmark-covered flags (n): ``5n``.
      Global state: agent positions and landmark positions ``/(size−1)`` (4n), covered flags (n), ``t/max_steps``.
    * **Payoff:** ``π_i = success_payoff`` for every agent on the step all landmarks are covered, else 0.
    * **Termination:** all landmarks covered; truncation at ``max_steps``.
    * **Defaults:** 3 agents, 7×7 grid, success_payoff 1, max_steps 50.
    """

    name: ClassVar[str] = "CooperativeNavigation"
    action_kind: ClassVar[str] = "discrete"

    def default_params(self, **overrides: Any) -> NavigationParams:
        params = NavigationParams(max_steps=jnp.int32(50), success_payoff=jnp.float32(1.0))
        params = override_params(params, overrides, self.name)
        if not (isinstance(params.size, int) and params.size >= 2):
            raise ValueError(f"{self.name}: size must be an int >= 2, got {params.size!r}")
        if not (isinstance(params.n_agents, int) and 2 <= params.n_agents <= min(8, params.size**2 // 2)):
            raise ValueError(f"{self.name}: n_agents must be an int in [2, min(8, size²/2)], got {params.n_agents!r}")
        if int(params.max_steps) < 1:
            raise ValueError(f"{self.name}: max_steps must be >= 1, got {int(params.max_steps)}")
        return params

    def parameter_names(self) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(NavigationParams))

    def n_agents(self, params: NavigationParams) -> int:
        return params.n_agents

    def num_actions(self, params: NavigationParams) -> int:
        return N_ACTIONS

    def static_info(self, params: NavigationParams) -> Info:
        return {"action_names": ACTION_NAMES}

    def reset(self, key: Array, params: NavigationParams) -> tuple[NavigationState, Array]:
        n, size = params.n_agents, params.size
        cells = top_cells(jax.random.uniform(key, (size, size)), jnp.ones((size, size), bool), 2 * n)
        state = NavigationState(positions=cells[:n], landmarks=cells[n:], t=jnp.int32(0))
        return state, self.observe(state, params)

    def step(self, key: Array, state: NavigationState, actions: Array, params: NavigationParams):
        actions = jnp.asarray(actions, jnp.int32).reshape(params.n_agents)
        positions = move_agents(state.positions, actions, params.size)
        state = NavigationState(positions=positions, landmarks=state.landmarks, t=state.t + 1)
        success = jnp.all(covered_landmarks(state.positions, state.landmarks))
        payoffs = jnp.full(params.n_agents, params.success_payoff * success, jnp.float32)
        info = self.describe(state, params)
        info["terminated"] = success
        info["truncated"] = state.t >= params.max_steps
        return state, self.observe(state, params), payoffs, success | info["truncated"], info

    def describe(self, state: NavigationState, params: NavigationParams) -> Info:
        covered = covered_landmarks(state.positions, state.landmarks)
        return {"step": state.t, "covered": covered, "n_covered": jnp.sum(covered).astype(jnp.int32)}

    def observation_bounds(self, params: Any) -> tuple[float, float]:
        """Every observation and global-state entry lies in ``[-1.0, 1.0]``: positions / (size − 1) in [0, 1], offsets in [−1, 1], covered flags."""
        return -1.0, 1.0

    def observe(self, state: NavigationState, params: NavigationParams) -> Array:
        n, scale = params.n_agents, float(params.size - 1)
        others = np.array([[j for j in range(n) if j != i] for i in range(n)], np.int32)
        position = state.positions.astype(jnp.float32)
        landmark_offsets = (state.landmarks[None].astype(jnp.float32) - position[:, None]) / scale
        other_offsets = (position[others] - position[:, None]) / scale
        covered = jnp.broadcast_to(covered_landmarks(state.positions, state.landmarks).astype(jnp.float32), (n, n))
        return jnp.concatenate([position / scale, landmark_offsets.reshape(n, -1), other_offsets.reshape(n, -1), covered], axis=1)

    def global_state(self, state: NavigationState, params: NavigationParams) -> Array:
        scale = float(params.size - 1)
        return jnp.concatenate(
            [
                state.positions.ravel().astype(jnp.float32) / scale,
                state.landmarks.ravel().astype(jnp.float32) / scale,
                covered_landmarks(state.positions, state.landmarks).astype(jnp.float32),
                (state.t / params.max_steps).astype(jnp.float32)[None],
            ]
        )

    def render_rgb(self, state: NavigationState, params: NavigationParams, cell: int = 16) -> np.ndarray:
        """Light floor, landmarks as dark squares (green when covered), agents in their colours."""
        image = upscale(np.full((params.size, params.size, 3), 230, np.uint8), cell)
        covered = np.asarray(covered_landmarks(state.positions, state.landmarks))
        landmark_colours = np.where(covered[:, None], [[40, 170, 70]], [[60, 60, 60]]).astype(np.uint8)
        paint_cells(image, np.asarray(state.landmarks), landmark_colours, cell, margin=1)
        paint_cells(image, np.asarray(state.positions), agent_colours(params.n_agents), cell, margin=4)
        return image

    def render_text(self, state: NavigationState, params: NavigationParams) -> str:
        grid = [["." for _ in range(params.size)] for _ in range(params.size)]
        for r, c in np.asarray(state.landmarks):
            grid[r][c] = "L"
        for i, (r, c) in enumerate(np.asarray(state.positions)):
            grid[r][c] = str(i) if grid[r][c] != "L" else "*"
        covered = int(np.sum(np.asarray(covered_landmarks(state.positions, state.landmarks))))
        lines = [f"{self.name}  step {int(state.t)}/{int(params.max_steps)}  n={params.n_agents}"] + ["".join(r) for r in grid]
        lines.append(f"  landmarks covered: {covered}/{params.n_agents} (* = agent on a landmark)")
        return "\n".join(lines)
