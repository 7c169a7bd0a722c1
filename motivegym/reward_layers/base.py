"""Reward layers: pure functions with their own state that turn payoffs into rewards.

A layer has ``init(key, spec) -> layer_state`` and
``apply(layer_state, transition) -> (layer_state, rewards [n_agents], components)``.
Both are jit/vmap-safe, so a layer fuses into the batched env step. ``components`` names every
term (``{"private": …, "partner": …}``) so a sweep can log them. Layers compose::

    layer = integrated() + 0.05 * rnd()        # a WeightedSum
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp

from motivegym.core.env import Transition
from motivegym.core.params import check_value, real, show

Array = jax.Array


@dataclasses.dataclass(frozen=True)
class LayerSpec:
    """What a layer may need to know about the env at ``init``."""

    n_agents: int
    obs_size: int
    action_size: int = 1  # the number of actions of a discrete env; the action size per agent (1) otherwise

    @classmethod
    def of(cls, env: Any, params: Any) -> LayerSpec:
        """The spec of a functional env: its agents, observation size and (discrete) number of actions."""
        discrete = env.action_kind == "discrete"
        return cls(int(env.n_agents(params)), int(env.observation_size(params)), int(env.num_actions(params)) if discrete else 1)


class RewardLayer:
    """Base class; subclasses are frozen dataclasses (hashable, so they can be static jit args)."""

    name: str = "layer"

    def init(self, key: Array, spec: LayerSpec) -> Any:
        return ()

    def apply(self, state: Any, transition: Transition) -> tuple[Any, Array, dict[str, Array]]:  # pragma: no cover
        raise NotImplementedError

    def fits_on_rollouts(self) -> bool:
        """Whether a learner must call :meth:`fit_rollout` after each rollout (a model trained with
        ``train_on="rollout"``; see :mod:`~motivegym.reward_layers.intrinsic`)."""
        return False

    def fit_rollout(self, states: Any, transitions: Transition, key: Array) -> Any:
        """Train on a rollout: ``states`` with a leading env axis ``[E]``, ``transitions`` with ``[T, E]``."""
        return states

    def __add__(self, other: RewardLayer) -> WeightedSum:
        return WeightedSum.of(self) + WeightedSum.of(other)

    def __mul__(self, weight: float) -> WeightedSum:
        return WeightedSum(tuple((w * float(weight), layer) for w, layer in WeightedSum.of(self).terms))

    __rmul__ = __mul__


#: a weight of a :class:`WeightedSum` term: any finite float32 number
WEIGHT = real()


@dataclasses.dataclass(frozen=True)
class WeightedSum(RewardLayer):
    """``r = Σ_k w_k r_k``; components are prefixed by each term's layer name."""

    terms: tuple[tuple[float, RewardLayer], ...]

    def __post_init__(self):
        for weight, layer in self.terms:
            if not isinstance(layer, RewardLayer):
                raise ValueError(f"a weighted sum needs reward layers, got {show(layer)}")
            check_value(f"reward term {show(weight)}*{layer.name}", "weight", weight, WEIGHT)

    @property
    def name(self) -> str:  # type: ignore[override]
        return " + ".join(f"{w:g}*{layer.name}" for w, layer in self.terms)

    @staticmethod
    def of(layer: RewardLayer) -> WeightedSum:
        return layer if isinstance(layer, WeightedSum) else WeightedSum(((1.0, layer),))

    def __add__(self, other: RewardLayer) -> WeightedSum:
        return WeightedSum(self.terms + WeightedSum.of(other).terms)

    def init(self, key: Array, spec: LayerSpec) -> Any:
        keys = jax.random.split(key, len(self.terms))
        return tuple(layer.init(k, spec) for k, (_, layer) in zip(keys, self.terms))

    def fits_on_rollouts(self) -> bool:
        return any(layer.fits_on_rollouts() for _, layer in self.terms)

    def fit_rollout(self, states, transitions, key):
        return fit_each([layer for _, layer in self.terms], states, transitions, key)

    def term_names(self) -> list[str]:
        """Each term's layer name, suffixed ``#k`` when a name repeats."""
        names = [layer.name for _, layer in self.terms]
        return [f"{n}#{k}" if names.count(n) > 1 else n for k, n in enumerate(names)]

    def apply(self, state, transition):
        total = jnp.zeros(transition.payoffs.shape, jnp.float32)
        components: dict[str, Array] = {}
        new_states = []
        for name, (weight, layer), layer_state in zip(self.term_names(), self.terms, state):
            layer_state, rewards, parts = layer.apply(layer_state, transition)
            new_states.append(layer_state)
            total = total + weight * rewards
            components[name] = weight * rewards
            components.update({f"{name}.{part}": weight * value for part, value in parts.items()})
        return tuple(new_states), total, components


@dataclasses.dataclass(frozen=True)
class LayerChoice(RewardLayer):
    """One of several layers, chosen by a traced index in the layer state.

    Lets one compiled program be vmapped over reward types: every candidate is computed (and its
    state advanced) and the rewards of ``layers[index]`` are returned. Set the index with
    :meth:`with_index` after :meth:`init`.
    """

    layers: tuple[RewardLayer, ...]
    name: str = "choice"

    def init(self, key: Array, spec: LayerSpec) -> Any:
        keys = jax.random.split(key, len(self.layers))
        return {"index": jnp.int32(0), "states": tuple(layer.init(k, spec) for k, layer in zip(keys, self.layers))}

    @staticmethod
    def with_index(state: Any, index: Any) -> Any:
        return {**state, "index": jnp.asarray(index, jnp.int32)}

    def fits_on_rollouts(self) -> bool:
        return any(layer.fits_on_rollouts() for layer in self.layers)

    def fit_rollout(self, states, transitions, key):
        return {**states, "states": fit_each(self.layers, states["states"], transitions, key)}

    def apply(self, state, transition):
        results = [layer.apply(s, transition) for layer, s in zip(self.layers, state["states"])]
        rewards = jnp.stack([r for _, r, _ in results])[state["index"]]
        new_state = {"index": state["index"], "states": tuple(s for s, _, _ in results)}
        names = [layer.name for layer in self.layers]
        labels = [name if names.count(name) == 1 else f"{name}#{i}" for i, name in enumerate(names)]
        components = {"selected": rewards}
        for label, (_, _, parts) in zip(labels, results):  # every candidate's terms, for logging
            components.update({f"{label}.{key}": value for key, value in parts.items()})
        return new_state, rewards, components


def fit_each(layers: Sequence[RewardLayer], states: Sequence[Any], transitions: Transition, key: Array) -> tuple:
    """:meth:`RewardLayer.fit_rollout` of every layer on its own state, each with its own split of ``key``."""
    keys = jax.random.split(key, len(layers))
    return tuple(layer.fit_rollout(state, transitions, k) for layer, state, k in zip(layers, states, keys))


def refuse_rollout_fitting(layer: RewardLayer, user: str) -> None:
    """``ValueError`` when ``layer`` needs :meth:`RewardLayer.fit_rollout`, which ``user`` (an adapter or a
    learner without rollouts) never calls: its model would never train."""
    if layer.fits_on_rollouts():
        raise ValueError(
            f"{user} applies reward layers step by step and never fits a layer on rollouts, but {layer.name!r} "
            "does (a model with train_on='rollout', '@rollout', or 'auto', which picks its arm once per PPO update): "
            "train it with MultiAgentPPO (ippo/mappo), or per step (drop '@rollout'; 'auto' has no per-step form)"
        )
