"""Coin Game (CoinGame-v0): two players on a small torus; taking the other's coin hurts it more than it helps you.

Lerer & Peysakhovich's (2017) rules: one coin at a time. JaxMARL's two-coin variant is ``coin_game_jaxmarl.py``.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import jax
import jax.numpy as jnp
import numpy as np

from motivegym.core.env import FunctionalEnv, Info
from motivegym.core.params import override_params
from motivegym.core.pytree import pytree_dataclass, static_field
from motivegym.envs.spatial.grid import AGENT_COLOURS

Array = jax.Array

#: absolute moves (row, col) of the actions noop, up, down, left, right
MOVES = np.array([[0, 0], [-1, 0], [1, 0], [0, -1], [0, 1]], np.int32)
ACTION_NAMES = ("noop", "up", "down", "left", "right")
OBSERVATIONS = ("full", "egocentric")
PLAYER_NAMES = ("red", "blue")


@pytree_dataclass
class CoinGameParams:
    max_steps: Array  # int32 horizon
    coin_reward: Array  # payoff of picking up any coin (+1)
    stolen_penalty: Array  # payoff lost by a coin's owner when the other player picks it up (2)
    grid_size: int = static_field()
    observation: str = static_field()


@pytree_dataclass
class CoinGameState:
    pos: Array  # [2, 2] int32 (row, col) of red, blue
    coin_pos: Array  # [2] int32
    coin_colour: Array  # int32: 0 red, 1 blue
    t: Array  # int32 steps taken


def random_free_cell(key: Array, occupied: Array, grid_size: int) -> Array:
    """int32 ``[2]``: a uniformly random cell of the ``grid_size²`` grid not in ``occupied [k, 2]``."""
    cells = jnp.stack(jnp.unravel_index(jnp.arange(grid_size * grid_size), (grid_size, grid_size)), axis=1)
    taken = jnp.any(jnp.all(cells[:, None, :] == occupied[None, :, :], axis=-1), axis=1)
    scores = jax.random.uniform(key, (cells.shape[0],)) + taken.astype(jnp.float32)
    return cells[jnp.argmin(scores)].astype(jnp.int32)


def coin_payoffs(picked: Array, coin_colour: Array, coin_reward: Array, stolen_penalty: Array) -> Array:
    """``π_i = coin_reward·picked_i − stolen_penalty·[coin is i's]·picked_{other}`` (Lerer & Peysakhovich 2017)."""
    owner = jnp.arange(2) == coin_colour
    stolen = picked[::-1] & owner  # the other player picked up i's coin
    return coin_reward * picked.astype(jnp.float32) - stolen_penalty * stolen.astype(jnp.float32)


class CoinGame(FunctionalEnv):
    """Coin Game: red and blue collect coins on a torus; taking the other's coin costs its owner 2.

    * **Mechanism:** sequential social dilemma with a social-dilemma payoff structure, following Lerer &
      Peysakhovich (2017), the game Foerster et al. (2018, LOLA) also use. One coin is on the grid at
      a time, coloured red (player 0) or blue (player 1). A player moving onto the coin picks it up;
      both pick it up if both arrive. A new coin of uniformly random colour then appears at a random
      cell not occupied by a player. **Not JaxMARL's coin game** (``CoinGameJaxMARL-v0`` is that one):
      JaxMARL keeps one red and one blue coin on the grid at all times, respawns a picked coin on any
      cell (under a player or on the other coin too), plays 10 inner games of 10 steps (positions redrawn
      between them, the last step of each paying 0), orders its actions right, left, up (row +1), down
      (row −1), stay, and lays its observation out (row, column, channel). ``docs/coin_game.md`` lists
      every difference.
    * **Agents:** 2: ``red`` (agent_0) and ``blue`` (agent_1); they may share a cell.
    * **Actions:** ``Discrete(5)``: 0 noop, 1 up, 2 down, 3 left, 4 right (absolute moves that wrap
      around the torus); out-of-range indices act as noop.
    * **Observation:** per agent ``[4·g²]``, 4 one-hot ``g×g`` planes relative to the observer
      (own position, other position, own-colour coin, other-colour coin), flattened row-major
      (channel, row, column). ``observation="full"``: planes in absolute grid coordinates;
      ``"egocentric"``: planes rolled on the torus so the observer sits at cell ``(g//2, g//2)``.
      Global state: absolute planes (red, blue, red coin, blue coin) ``4·g²`` and ``t/max_steps``.
    * **Payoff:** picker of any coin ``+coin_reward`` (1); the coin's owner ``−stolen_penalty`` (2)
      when the other player picks it up (so both arriving at a red coin pays red −1, blue +1).
    * **Termination:** never terminates; truncation at ``max_steps``.
    * **Defaults:** 3×3 grid, ``max_steps=16``, ``coin_reward=1``, ``stolen_penalty=2``,
      ``observation="full"``. Reset: players on two distinct random cells, the coin of random colour
      on a third.
    * **Info:** ``step``; after a step also ``own_coin_picked [2]``, ``other_coin_picked [2]`` (bool).
    """

    name: ClassVar[str] = "CoinGame"
    action_kind: ClassVar[str] = "discrete"

    def make_params(self) -> CoinGameParams:
        return CoinGameParams(
            max_steps=jnp.int32(16),
            coin_reward=jnp.float32(1.0),
            stolen_penalty=jnp.float32(2.0),
            grid_size=3,
            observation="full",
        )

    def default_params(self, **overrides: Any) -> CoinGameParams:
        params = override_params(self.make_params(), overrides, self.name)
        if not isinstance(params.grid_size, int) or params.grid_size < 2:
            raise ValueError(f"{self.name}: grid_size must be an int >= 2, got {params.grid_size!r}")
        if params.observation not in OBSERVATIONS:
            raise ValueError(f"{self.name}: observation must be one of {OBSERVATIONS}, got {params.observation!r}")
        if int(params.max_steps) < 1:
            raise ValueError(f"{self.name}: max_steps must be >= 1, got {int(params.max_steps)}")
        return params

    def parameter_names(self) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(CoinGameParams))

    def n_agents(self, params: Any) -> int:
        return 2

    def num_actions(self, params: Any) -> int:
        return len(MOVES)

    def agent_names(self, params: Any) -> tuple[str, ...]:
        return PLAYER_NAMES

    def reset(self, key: Array, params: CoinGameParams) -> tuple[CoinGameState, Array]:
        g = params.grid_size
        cells_key, colour_key = jax.random.split(key)
        cells = jax.random.choice(cells_key, g * g, (3,), replace=False)
        pos = jnp.stack(jnp.unravel_index(cells, (g, g)), axis=1).astype(jnp.int32)
        state = CoinGameState(
            pos=pos[:2], coin_pos=pos[2], coin_colour=jax.random.randint(colour_key, (), 0, 2, jnp.int32), t=jnp.int32(0)
        )
        return state, self.observe(state, params)

    def step(self, key: Array, state: CoinGameState, actions: Array, params: CoinGameParams):
        g = params.grid_size
        actions = jnp.asarray(actions).astype(jnp.int32)
        actions = jnp.where((actions >= 0) & (actions < len(MOVES)), actions, 0)
        pos = (state.pos + jnp.asarray(MOVES)[actions]) % g
        picked = jnp.all(pos == state.coin_pos[None, :], axis=1)
        payoffs = coin_payoffs(picked, state.coin_colour, params.coin_reward, params.stolen_penalty)

        cell_key, colour_key = jax.random.split(key)
        taken = jnp.any(picked)
        coin_pos = jnp.where(taken, random_free_cell(cell_key, pos, g), state.coin_pos)
        coin_colour = jnp.where(taken, jax.random.randint(colour_key, (), 0, 2, jnp.int32), state.coin_colour)
        own = picked & (jnp.arange(2) == state.coin_colour)
        new_state = CoinGameState(pos=pos, coin_pos=coin_pos, coin_colour=coin_colour, t=state.t + 1)

        truncated = new_state.t >= params.max_steps
        terminated = jnp.bool_(False)
        info = self.describe(new_state, params)
        info.update({"own_coin_picked": own, "other_coin_picked": picked & ~own, "terminated": terminated, "truncated": truncated})
        return new_state, self.observe(new_state, params), payoffs, terminated | truncated, info

    def describe(self, state: CoinGameState, params: Any) -> Info:
        return {"step": state.t}

    def planes(self, state: CoinGameState, params: CoinGameParams) -> Array:
        """float32 ``[4, g, g]`` absolute planes: red, blue, red coin, blue coin."""
        g = params.grid_size
        grid = jnp.zeros((4, g, g), jnp.float32)
        grid = grid.at[0, state.pos[0, 0], state.pos[0, 1]].set(1.0).at[1, state.pos[1, 0], state.pos[1, 1]].set(1.0)
        return grid.at[2 + state.coin_colour, state.coin_pos[0], state.coin_pos[1]].set(1.0)

    def observation_bounds(self, params: Any) -> tuple[float, float]:
        """Every observation and global-state entry lies in ``[0.0, 1.0]``: occupancy planes and ``t / max_steps``."""
        return 0.0, 1.0

    def observe(self, state: CoinGameState, params: CoinGameParams) -> Array:
        planes = self.planes(state, params)
        relative = jnp.stack([planes, planes[jnp.array([1, 0, 3, 2])]])  # [observer, 4, g, g]
        if params.observation == "egocentric":
            centre = params.grid_size // 2
            relative = jnp.stack([jnp.roll(relative[i], tuple(centre - state.pos[i]), axis=(1, 2)) for i in range(2)])
        return relative.reshape(2, -1)

    def global_state(self, state: CoinGameState, params: CoinGameParams) -> Array:
        return jnp.concatenate([self.planes(state, params).ravel(), (state.t.astype(jnp.float32) / params.max_steps)[None]])

    def render_text(self, state: CoinGameState, params: CoinGameParams) -> str:
        g = params.grid_size
        chars = np.full((g, g), ".")
        coin_r, coin_c = np.asarray(state.coin_pos)
        chars[coin_r, coin_c] = "rb"[int(state.coin_colour)]
        for i, symbol in enumerate("RB"):
            r, c = np.asarray(state.pos[i])
            chars[r, c] = "X" if (np.asarray(state.pos[0]) == np.asarray(state.pos[1])).all() else symbol
        lines = [f"{self.name}  step {int(state.t)}/{int(params.max_steps)}  (R red, B blue, X both; r/b coin)"]
        return "\n".join(lines + ["".join(row) for row in chars])

    def render_rgb(self, state: CoinGameState, params: CoinGameParams) -> np.ndarray:
        """uint8 ``[g·16, g·16, 3]``: players as squares, the coin as a smaller square of its colour."""
        scale, g = 16, params.grid_size
        image = np.full((g * scale, g * scale, 3), 40, np.uint8)
        coin_r, coin_c = np.asarray(state.coin_pos) * scale
        quarter = scale // 4
        for i in range(2):
            r, c = np.asarray(state.pos[i]) * scale
            half = slice(c, c + scale // 2) if i == 0 else slice(c + scale // 2, c + scale)  # overlapping players stay visible
            image[r : r + scale, half] = AGENT_COLOURS[i]
        image[coin_r + quarter : coin_r + scale - quarter, coin_c + quarter : coin_c + scale - quarter] = (
            AGENT_COLOURS[int(state.coin_colour)] // 2 + 127
        )
        return image
