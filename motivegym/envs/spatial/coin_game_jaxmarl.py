"""Coin Game as JaxMARL plays it (CoinGameJaxMARL-v0): always one red and one blue coin, 10 inner × 10 outer steps.

Rules read from JaxMARL (``jaxmarl/environments/coin_game/coin_game.py``, ``jaxmarl==0.2.0`` = GitHub
FLAIROx/JaxMARL at c793d09, 2026-07); written here from those rules, not copied. ``CoinGame-v0``
(``coin_game.py``) keeps Lerer & Peysakhovich's original rules; ``docs/coin_game.md`` lists the differences.
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

#: JaxMARL's grid is fixed at 3×3 (its positions are taken ``% 3``)
GRID_SIZE = 3
#: moves (Δ first coordinate, Δ second coordinate) of JaxMARL's actions, in its order and with its names:
#: 0 "right" (0, +1), 1 "left" (0, −1), 2 "up" (+1, 0), 3 "down" (−1, 0), 4 "stay"
MOVES = np.array([[0, 1], [0, -1], [1, 0], [-1, 0], [0, 0]], np.int32)
ACTION_NAMES = ("right", "left", "up", "down", "stay")
STAY = 4
PLAYER_NAMES = ("red", "blue")
#: JaxMARL's default ``payoff_matrix``: row i = player i's [own coin, other's coin, penalty when its coin is taken]
DEFAULT_PAYOFF_MATRIX = ((1.0, 1.0, -2.0), (1.0, 1.0, -2.0))


@pytree_dataclass
class CoinGameJaxMARLParams:
    num_inner_steps: Array  # int32: steps of one inner game (positions are redrawn after it)
    num_outer_steps: Array  # int32: inner games per episode
    max_steps: Array  # int32: env-step cap of the episode (default num_inner_steps × num_outer_steps, JaxMARL's episode)
    payoff_matrix: Array  # float32 [2, 3]: row i = player i's (own coin, other's coin, penalty when its coin is taken)
    egocentric: bool = static_field()


@pytree_dataclass
class CoinGameJaxMARLState:
    pos: Array  # [2, 2] int32 (row, col) of red, blue
    coin_pos: Array  # [2, 2] int32 (row, col) of the red coin, the blue coin
    inner_t: Array  # int32 steps taken in the current inner game (0 .. num_inner_steps − 1)
    outer_t: Array  # int32 inner games completed


def random_positions(key: Array) -> Array:
    """int32 ``[4, 2]``: red, blue, red coin, blue coin, each uniform over the 3×3 grid and independent (may coincide).

    Draws exactly as JaxMARL's ``_reset(key)``: ``randint(split(key)[1], (4, 2), 0, 3)``."""
    _, subkey = jax.random.split(key)
    return jax.random.randint(subkey, (4, 2), 0, GRID_SIZE)


def jaxmarl_payoffs(pos: Array, coin_pos: Array, payoff_matrix: Array) -> tuple[Array, Array]:
    """``(payoffs [2], on_coin [2, 2])`` with ``on_coin[i, c]`` = player i (after moving) stands on coin c.

    ``π_i = M[i,0]·on_coin[i,i] + M[i,1]·on_coin[i,1−i] + M[i,2]·on_coin[1−i,i]``: the own coin, the other's coin,
    and the penalty when the other player takes player i's coin. Every match counts, so a player on both coins
    (they may share a cell) collects both, and both players on one coin each collect it."""
    on_coin = jnp.all(pos[:, None, :] == coin_pos[None, :, :], axis=-1)  # [player, coin]
    own, other = jnp.diagonal(on_coin), jnp.diagonal(on_coin[:, ::-1])
    taken_by_other = jnp.diagonal(on_coin[::-1])  # on_coin[1−i, i]
    terms = jnp.stack([own, other, taken_by_other], axis=1).astype(jnp.float32)
    return jnp.sum(payoff_matrix * terms, axis=1), on_coin


class CoinGameJaxMARL(FunctionalEnv):
    """Coin Game with JaxMARL's rules: a red and a blue coin are always on the 3×3 torus.

    * **Mechanism:** sequential social dilemma (Lerer & Peysakhovich 2017) in the variant of JaxMARL
      (Rutherford et al. 2024, ``jaxmarl.environments.coin_game``), which recent JaxMARL-based work uses.
      ``CoinGame-v0`` is the original one-coin game; ``docs/coin_game.md`` lists every difference.
    * **Agents:** 2: ``red`` (agent_0, JaxMARL's ``"0"``) and ``blue`` (agent_1, ``"1"``); they may share a cell.
    * **Actions:** ``Discrete(5)`` in JaxMARL's order and names: 0 "right" (column +1), 1 "left" (column −1),
      2 "up" (row +1), 3 "down" (row −1), 4 "stay"; moves wrap around the torus. Out-of-range indices (refused
      on the host by every door) act as stay in the raw jitted step.
    * **Observation:** per agent ``[36]``: a ``3×3×4`` one-hot grid flattened row-major over (row, column,
      channel), as JaxMARL's ``cnn=False`` (``obs.reshape(3, 3, 4)`` is its ``cnn=True`` view), float32 instead
      of int8. Channels: own position, other player, own-colour coin, other-colour coin (each player sees itself
      as red). ``egocentric=True``: the grid is rolled on the torus so the observer sits at cell (1, 1).
      Global state: the absolute grid (red, blue, red coin, blue coin; ``[36]``), then ``inner_t/num_inner_steps``
      and ``outer_t/num_outer_steps``.
    * **Payoff:** with ``M = payoff_matrix`` (default ``[[1, 1, −2], [1, 1, −2]]``) and the players' new cells
      matched against the coins' cells before the step: ``π_i = M[i,0]·[i on own coin] + M[i,1]·[i on other
      coin] + M[i,2]·[other player on i's coin]``. Both players on one coin both score it. The payoffs of the
      step that ends an inner game are 0 (JaxMARL zeroes them), so an inner game pays on its first
      ``num_inner_steps − 1`` steps.
    * **Respawn:** every picked coin moves to a uniform cell of the grid (possibly under a player or on the other
      coin); a player standing on a coin (including one that respawned under it) picks it up on every step it
      stays there.
    * **Termination:** never terminates; truncation after ``num_inner_steps × num_outer_steps`` steps (10 × 10 =
      100). After each ``num_inner_steps``-th step of an inner game the positions of players and coins are redrawn
      (the returned observation is that of the new inner game; ``info["inner_episode_done"]``), the episode
      goes on; only the end of the last inner game is ``done``. ``max_steps`` (default: that product) may end the
      episode earlier — a motivegym addition so every door's horizon (PettingZoo's ``max_cycles``) works; JaxMARL has none.
    * **Defaults:** ``num_inner_steps=10``, ``num_outer_steps=10``, ``payoff_matrix=[[1, 1, −2], [1, 1, −2]]``,
      ``egocentric=False`` (JaxMARL's defaults). Reset and every redraw: the four positions (red, blue, red
      coin, blue coin) are independent uniform cells, so they may coincide.
    * **Randomness:** drawn as JaxMARL draws it (``MultiAgentEnv.step``'s key split, then ``_step``'s), so the
      same key, state and actions give JaxMARL's next state bit for bit (``tests/envs/spatial/
      test_coin_game_jaxmarl.py`` checks whole episodes side by side).
    * **Not reproduced:** JaxMARL's ``shared_rewards`` (a reward choice: use a reward layer, ``reward=
      "cooperative"`` gives the mean, half JaxMARL's sum) and its statistics counters (``red_coop`` …: ``info``
      reports ``own_coin_picked``/``other_coin_picked`` per step instead).
    * **Info:** ``step`` (inner step), ``outer_step``; after a step also ``own_coin_picked [2]``,
      ``other_coin_picked [2]`` (bool, this step's pick-ups, also on a zero-paid boundary step) and
      ``inner_episode_done``.
    """

    name: ClassVar[str] = "CoinGameJaxMARL"
    action_kind: ClassVar[str] = "discrete"

    def make_params(self) -> CoinGameJaxMARLParams:
        return CoinGameJaxMARLParams(
            num_inner_steps=jnp.int32(10),
            num_outer_steps=jnp.int32(10),
            max_steps=jnp.int32(100),
            payoff_matrix=jnp.asarray(DEFAULT_PAYOFF_MATRIX, jnp.float32),
            egocentric=False,
        )

    def default_params(self, **overrides: Any) -> CoinGameJaxMARLParams:
        """``max_steps`` defaults to ``num_inner_steps × num_outer_steps`` (JaxMARL's episode); a smaller value ends the
        episode early (PettingZoo's ``max_cycles`` and every other door's horizon), a larger one is refused."""
        params = override_params(self.make_params(), overrides, self.name)
        episode = int(params.num_inner_steps) * int(params.num_outer_steps)
        if "max_steps" not in overrides:
            params = dataclasses.replace(params, max_steps=jnp.int32(episode))
        elif not 1 <= int(params.max_steps) <= episode:
            raise ValueError(
                f"{self.name}: max_steps must be in [1, num_inner_steps × num_outer_steps = {episode}], got {int(params.max_steps)}"
            )
        if not isinstance(params.egocentric, bool):
            raise ValueError(f"{self.name}: egocentric must be a bool, got {params.egocentric!r}")
        for field in ("num_inner_steps", "num_outer_steps"):
            if int(getattr(params, field)) < 1:
                raise ValueError(f"{self.name}: {field} must be >= 1, got {int(getattr(params, field))}")
        return params

    def parameter_names(self) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(CoinGameJaxMARLParams))

    def n_agents(self, params: Any) -> int:
        return 2

    def num_actions(self, params: Any) -> int:
        return len(MOVES)

    def agent_names(self, params: Any) -> tuple[str, ...]:
        return PLAYER_NAMES

    def max_episode_steps(self, params: CoinGameJaxMARLParams) -> int:
        return int(params.max_steps)

    def reset(self, key: Array, params: CoinGameJaxMARLParams) -> tuple[CoinGameJaxMARLState, Array]:
        cells = random_positions(key)
        state = CoinGameJaxMARLState(pos=cells[:2], coin_pos=cells[2:], inner_t=jnp.int32(0), outer_t=jnp.int32(0))
        return state, self.observe(state, params)

    def step(self, key: Array, state: CoinGameJaxMARLState, actions: Array, params: CoinGameJaxMARLParams):
        step_key, _ = jax.random.split(key)  # JaxMARL's MultiAgentEnv.step keeps the second half for its auto-reset
        redraw_key, respawn_key = jax.random.split(step_key)
        actions = jnp.asarray(actions).astype(jnp.int32)
        actions = jnp.where((actions >= 0) & (actions < len(MOVES)), actions, STAY)
        pos = (state.pos + jnp.asarray(MOVES)[actions]) % GRID_SIZE
        payoffs, on_coin = jaxmarl_payoffs(pos, state.coin_pos, params.payoff_matrix)

        picked = jnp.any(on_coin, axis=0)  # [coin]: someone stands on it
        respawn = jax.random.randint(respawn_key, (2, 2), 0, GRID_SIZE)
        coin_pos = jnp.where(picked[:, None], respawn, state.coin_pos)

        inner_done = state.inner_t + 1 >= params.num_inner_steps
        outer_t = state.outer_t + inner_done.astype(jnp.int32)
        redrawn = random_positions(redraw_key)
        new_state = CoinGameJaxMARLState(
            pos=jnp.where(inner_done, redrawn[:2], pos),
            coin_pos=jnp.where(inner_done, redrawn[2:], coin_pos),
            inner_t=jnp.where(inner_done, 0, state.inner_t + 1),
            outer_t=outer_t,
        )
        payoffs = jnp.where(inner_done, 0.0, payoffs)
        steps_taken = state.outer_t * params.num_inner_steps + state.inner_t + 1
        truncated = (outer_t >= params.num_outer_steps) | (steps_taken >= params.max_steps)
        terminated = jnp.bool_(False)
        info = self.describe(new_state, params)
        info.update({
            "own_coin_picked": jnp.diagonal(on_coin), "other_coin_picked": jnp.diagonal(on_coin[:, ::-1]),
            "inner_episode_done": inner_done, "terminated": terminated, "truncated": truncated,
        })  # fmt: skip
        return new_state, self.observe(new_state, params), payoffs, terminated | truncated, info

    def describe(self, state: CoinGameJaxMARLState, params: Any) -> Info:
        return {"step": state.inner_t, "outer_step": state.outer_t}

    def grid(self, state: CoinGameJaxMARLState) -> Array:
        """float32 ``[3, 3, 4]`` absolute grid: red, blue, red coin, blue coin (JaxMARL's channel order)."""
        cells = jnp.concatenate([state.pos, state.coin_pos])  # [4, 2]
        grid = jnp.zeros((GRID_SIZE, GRID_SIZE, 4), jnp.float32)
        return grid.at[cells[:, 0], cells[:, 1], jnp.arange(4)].set(1.0)

    def observation_bounds(self, params: Any) -> tuple[float, float]:
        """Every observation and global-state entry lies in ``[0.0, 1.0]``: one-hot grids and clock fractions."""
        return 0.0, 1.0

    def observe(self, state: CoinGameJaxMARLState, params: CoinGameJaxMARLParams) -> Array:
        grid = self.grid(state)
        per_player = jnp.stack([grid, grid[:, :, jnp.array([1, 0, 3, 2])]])  # each player sees itself as red
        if params.egocentric:
            centre = GRID_SIZE // 2
            per_player = jnp.stack([jnp.roll(per_player[i], tuple(centre - state.pos[i]), axis=(0, 1)) for i in range(2)])
        return per_player.reshape(2, -1)

    def global_state(self, state: CoinGameJaxMARLState, params: CoinGameJaxMARLParams) -> Array:
        clocks = jnp.stack([state.inner_t / params.num_inner_steps, state.outer_t / params.num_outer_steps]).astype(jnp.float32)
        return jnp.concatenate([self.grid(state).ravel(), clocks])

    def render_text(self, state: CoinGameJaxMARLState, params: CoinGameJaxMARLParams) -> str:
        chars = np.full((GRID_SIZE, GRID_SIZE), ".", dtype="<U2")
        for symbol, (r, c) in zip(("r", "b"), np.asarray(state.coin_pos)):
            chars[r, c] = "rb" if chars[r, c] in ("r", "b") and chars[r, c] != symbol else symbol
        for symbol, (r, c) in zip(("R", "B"), np.asarray(state.pos)):
            chars[r, c] = "X" if chars[r, c] in ("R", "B") else symbol
        header = (f"{self.name}  inner step {int(state.inner_t)}/{int(params.num_inner_steps)}  "
                  f"game {int(state.outer_t)}/{int(params.num_outer_steps)}  (R red, B blue, X both; r/b coins)")  # fmt: skip
        return "\n".join([header] + [" ".join(f"{cell:<2}" for cell in row).rstrip() for row in chars])

    def render_rgb(self, state: CoinGameJaxMARLState, params: CoinGameJaxMARLParams) -> np.ndarray:
        """uint8 ``[48, 48, 3]``: players as half-cell bars, coins as small squares in the cell's lower corners."""
        scale = 16
        image = np.full((GRID_SIZE * scale, GRID_SIZE * scale, 3), 40, np.uint8)
        for i, (r, c) in enumerate(np.asarray(state.pos) * scale):
            half = slice(c, c + scale // 2) if i == 0 else slice(c + scale // 2, c + scale)
            image[r : r + scale // 2, half] = AGENT_COLOURS[i]
        for i, (r, c) in enumerate(np.asarray(state.coin_pos) * scale):
            left = c + 2 if i == 0 else c + scale // 2 + 2
            image[r + scale // 2 + 2 : r + scale - 2, left : left + scale // 2 - 4] = AGENT_COLOURS[i] // 2 + 127
        return image
