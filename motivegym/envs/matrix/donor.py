"""Donor game with image scoring (Nowak & Sigmund 1998): indirect reciprocity."""

from __future__ import annotations

from typing import Any, ClassVar

import jax
import jax.numpy as jnp
import numpy as np

from motivegym.core.env import FunctionalEnv, Info
from motivegym.core.params import override_params
from motivegym.core.pytree import pytree_dataclass, static_field
from motivegym.envs.matrix.base import interdependence_matrix, resolve_rounds

Array = jax.Array


@pytree_dataclass
class DonorParams:
    benefit: Array  # b: what the recipient gets
    cost: Array  # c: what the donor pays
    max_image: Array  # image scores are clipped to [-max_image, max_image]
    interdependence: Array  # W [n, n] for the integrated layer
    max_steps: Array  # horizon in env steps = rounds (int32)
    n_agents: int = static_field(6)


@pytree_dataclass
class DonorState:
    recipients: Array  # [n] int32: whom each agent can give to this round
    image: Array  # [n] int32 image scores
    gave: Array  # [n] bool: last round's decisions
    t: Array  # int32


def draw_recipients(key: Array, n: int) -> Array:
    """A random cyclic pairing: ``order[k]`` donates to ``order[k+1]`` — everyone donates once and
    receives once per round, never to itself."""
    order = jax.random.permutation(key, n)
    recipients = jnp.zeros(n, jnp.int32)
    return recipients.at[order].set(jnp.roll(order, -1).astype(jnp.int32))


def donation_payoffs(gave: Array, recipients: Array, benefit: Array, cost: Array) -> Array:
    """``π_i = b · [i's donor gave] − c · [i gave]``."""
    received = jnp.zeros(gave.shape[0], jnp.float32).at[recipients].add(gave.astype(jnp.float32))
    return benefit * received - cost * gave.astype(jnp.float32)


def image_update(image: Array, gave: Array, max_image: Array) -> Array:
    """Image scoring: a donor's score rises by 1 when it gives and falls by 1 when it refuses."""
    return jnp.clip(image + jnp.where(gave, 1, -1), -max_image, max_image).astype(jnp.int32)


class DonorGame(FunctionalEnv):
    """Repeated donor game with public image scores (Nowak & Sigmund 1998).

    * **Mechanism:** indirect reciprocity: giving is costly (c < b) and never repaid by the
      recipient directly; it raises the donor's public image score, which future donors see.
      Discriminators who give only to good-image recipients can sustain cooperation.
    * **Agents:** ``n_agents`` (default 6); each round a random cyclic pairing makes every agent
      donor once (to its shown recipient) and recipient once.
    * **Actions:** ``Discrete(2)``: 0 = refuse, 1 = give to this round's recipient (clipped).
    * **Observation:** per agent ``[recipient's image / max, own image / max, gave last round,
      fraction of agents that gave last round, t/T]`` (5). Global state: all images / max, all
      last decisions, t/T (2n + 1).
    * **Payoff:** ``π_i = b · 1[i's donor gave] − c · 1[i gave]`` (b=3, c=1).
    * **Termination:** none; truncation after ``max_steps`` rounds (``max_steps=1``: one-shot). ``rounds`` is an
      alias of ``max_steps``; giving both with different values raises ``ValueError``.
    * **Defaults:** n=6, b=3, c=1, images clipped to [−5, 5] and start at 0, max_steps=50,
      ``partner_weight=0.5`` (``W = 0.5(1−I)/(n−1)``).
    """

    name: ClassVar[str] = "DonorGame"
    action_kind: ClassVar[str] = "discrete"

    def default_params(self, **overrides: Any) -> DonorParams:
        n = int(overrides.pop("n_agents", 6))
        if n < 2:
            raise ValueError(f"{self.name}-v0: n_agents must be >= 2, got {n}")
        overrides = resolve_rounds(overrides, f"{self.name}-v0")
        weight = float(overrides.pop("partner_weight", 0.5))
        params = DonorParams(
            benefit=jnp.float32(3.0),
            cost=jnp.float32(1.0),
            max_image=jnp.int32(5),
            interdependence=jnp.asarray(interdependence_matrix(n, weight)),
            max_steps=jnp.int32(50),
            n_agents=n,
        )
        params = override_params(params, overrides, f"{self.name}-v0", ("rounds", "partner_weight"))
        if int(params.max_steps) < 1:
            raise ValueError(f"{self.name}-v0: max_steps (rounds) must be >= 1, got {int(params.max_steps)}")
        return params

    def parameter_names(self) -> tuple[str, ...]:
        return ("benefit", "cost", "max_image", "interdependence", "max_steps", "rounds", "partner_weight", "n_agents")

    def n_agents(self, params: Any) -> int:
        return params.n_agents

    def num_actions(self, params: Any) -> int:
        return 2

    def reset(self, key: Array, params: DonorParams):
        n = params.n_agents
        state = DonorState(draw_recipients(key, n), jnp.zeros(n, jnp.int32), jnp.zeros(n, bool), jnp.int32(0))
        return state, self.observe(state, params)

    def step(self, key: Array, state: DonorState, actions: Array, params: DonorParams):
        gave = jnp.clip(jnp.asarray(actions, jnp.int32), 0, 1) == 1
        payoffs = donation_payoffs(gave, state.recipients, params.benefit, params.cost)
        new_state = DonorState(
            recipients=draw_recipients(key, params.n_agents),
            image=image_update(state.image, gave, params.max_image),
            gave=gave,
            t=state.t + 1,
        )
        truncated = new_state.t >= params.max_steps
        info = self.describe(new_state, params)
        info.update(interdependence_weights=params.interdependence, terminated=jnp.bool_(False), truncated=truncated)
        return new_state, self.observe(new_state, params), payoffs, truncated, info

    def observation_bounds(self, params: Any) -> tuple[float, float]:
        """Every observation and global-state entry lies in ``[-1.0, 1.0]``: image scores / ``max_image`` (clipped to ±1), gave flags, shares and ``t / T``."""
        return -1.0, 1.0

    def observe(self, state: DonorState, params: DonorParams) -> Array:
        scale = params.max_image.astype(jnp.float32)
        n = params.n_agents
        image = state.image.astype(jnp.float32) / scale
        gave = state.gave.astype(jnp.float32)
        shared = jnp.stack([jnp.mean(gave), state.t.astype(jnp.float32) / params.max_steps])
        return jnp.concatenate([image[state.recipients][:, None], image[:, None], gave[:, None], jnp.broadcast_to(shared, (n, 2))], axis=1)

    def global_state(self, state: DonorState, params: DonorParams) -> Array:
        scale = params.max_image.astype(jnp.float32)
        progress = (state.t.astype(jnp.float32) / params.max_steps)[None]
        return jnp.concatenate([state.image.astype(jnp.float32) / scale, state.gave.astype(jnp.float32), progress])

    def describe(self, state: DonorState, params: DonorParams) -> Info:
        return {
            "step": state.t,
            "recipients": state.recipients,
            "image_scores": state.image,
            "gave": state.gave,
            "cooperation_rate": jnp.mean(state.gave.astype(jnp.float32)),  # share of donors who gave
        }

    def render_text(self, state: DonorState, params: DonorParams) -> str:
        images = np.asarray(state.image).tolist()
        pairs = ", ".join(f"{i}->{r}" for i, r in enumerate(np.asarray(state.recipients)))
        return f"{self.name} round {int(state.t)}/{int(params.max_steps)}  images {images}  next donations {pairs}"
