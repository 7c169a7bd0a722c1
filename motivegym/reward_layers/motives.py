"""Motive layers for the TR-3/TR-4 coopetition envs: team loyalty and reciprocity.

Both motives are part of the agent, not of the world (DESIGN), so the envs only *report* the quantities
(computed from world state the agent cannot change retroactively: loyalty θ, the action memory) and these
layers turn them into rewards. Each wraps a base layer (any ``RewardLayer``):

* ``Loyalty(base=Private())``: ``r_i = base_i + L_i`` with ``L_i = θ_i(φ_B π̄_{−i} + φ_C c a_i)`` from
  ``info["loyalty_modifier"]`` — with the private base this is the TR-3 loyalty-augmented utility
  ``U_i^loyal = π_i + L_i``.
* ``Reciprocity(base=Integrated())``: ``r_i = m_i · base_i`` with the TR-4 Eq. 44 multiplier
  ``m_i = max(0.01, 1 + Σ_j λ_R T_ij (1 + ω D_ij) ρ_ij tanh(κ s_ij) / mean(e))`` from
  ``info["reciprocity_modifier"]`` — the reference's reward form (integrated utility × modifier).
"""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp

from motivegym.core.env import Transition
from motivegym.reward_layers.base import LayerSpec, RewardLayer
from motivegym.reward_layers.social import Integrated, Private

#: the deepest chain of wrapping motive layers (``loyalty:reciprocity:…``) a layer may have
MAX_NESTING = 16


def check_base(layer: str, base: RewardLayer) -> None:
    """``base`` must be a reward layer, wrapped at most :data:`MAX_NESTING` motive layers deep."""
    depth = 0
    while isinstance(base, (Loyalty, Reciprocity)):
        depth, base = depth + 1, base.base
        if depth >= MAX_NESTING:
            raise ValueError(f"{layer}: base is nested more than {MAX_NESTING} motive layers deep; at most {MAX_NESTING} allowed")
    if not isinstance(base, RewardLayer):
        raise ValueError(f"{layer}: base={base!r} is invalid: base must be a reward layer")


def info_term(transition: Transition, key: str, layer: str, envs: str) -> jnp.ndarray:
    """A per-agent motive quantity from the env's info; envs without it raise a ``ValueError``."""
    if key not in transition.info:
        raise ValueError(f"the {layer!r} reward layer needs info[{key!r}], which only the {envs} envs provide")
    return transition.info[key].astype(jnp.float32)


class MotiveOnBase(RewardLayer):
    """A motive layer around a ``base`` layer: the state, initialisation and rollout fitting are the base's."""

    base: RewardLayer
    name: str

    def __post_init__(self):
        check_base(self.name, self.base)

    def init(self, key, spec: LayerSpec):
        return self.base.init(key, spec)

    def fits_on_rollouts(self) -> bool:
        return self.base.fits_on_rollouts()

    def fit_rollout(self, states, transitions, key):
        return self.base.fit_rollout(states, transitions, key)


@dataclasses.dataclass(frozen=True)
class Loyalty(MotiveOnBase):
    """``r_i = base_i + L_i`` (TR-3 loyalty motive; ``L`` = ``info["loyalty_modifier"]``)."""

    base: RewardLayer = Private()
    name: str = "loyalty"

    def apply(self, state, transition):
        state, base_rewards, parts = self.base.apply(state, transition)
        loyalty = info_term(transition, "loyalty_modifier", self.name, "TR-3 collective-action")
        components = {f"{self.base.name}.{k}": v for k, v in parts.items()}
        components.update({self.base.name: base_rewards, "loyalty": loyalty})
        return state, base_rewards + loyalty, components


@dataclasses.dataclass(frozen=True)
class Reciprocity(MotiveOnBase):
    """``r_i = m_i · base_i`` (TR-4 Eq. 44 reciprocity multiplier; ``m`` = ``info["reciprocity_modifier"]``)."""

    base: RewardLayer = Integrated()
    name: str = "reciprocity"

    def apply(self, state, transition):
        state, base_rewards, parts = self.base.apply(state, transition)
        modifier = info_term(transition, "reciprocity_modifier", self.name, "TR-4 reciprocity")
        rewards = modifier * base_rewards
        components = {f"{self.base.name}.{k}": v for k, v in parts.items()}
        components.update({self.base.name: base_rewards, "reciprocity": rewards - base_rewards})
        return state, rewards, components


def loyalty(base: RewardLayer | None = None) -> Loyalty:
    return Loyalty(base or Private())


def reciprocity(base: RewardLayer | None = None) -> Reciprocity:
    return Reciprocity(base or Integrated())
