"""Functional env wrappers: a continuous-action env seen through a different action interface."""

from __future__ import annotations

from typing import Any, ClassVar

import jax
import jax.numpy as jnp

from motivegym.core.env import FunctionalEnv, Info
from motivegym.core.registry import make_jax

Array = jax.Array


class DiscretizedActions(FunctionalEnv):
    """A continuous-action env with ``bins`` evenly spaced discrete actions per agent.

    Action ``k`` of agent ``i`` is the continuous action ``(1 − f)·low_i + f·high_i`` with
    ``f = k / (bins − 1)``, so ``k = 0`` is exactly ``low_i`` and ``k = bins − 1`` exactly ``high_i``.
    Out-of-range indices are clipped to ``[0, bins − 1]``. Everything but the action interface
    (reset, dynamics, observations, payoffs, info, rendering as text) is the wrapped env's.
    """

    action_kind: ClassVar[str] = "discrete"

    def __init__(self, env: FunctionalEnv, bins: int = 11):
        if env.action_kind != "continuous":
            raise ValueError(f"DiscretizedActions needs a continuous-action env, {env.name} has action_kind={env.action_kind!r}")
        if isinstance(bins, bool) or not isinstance(bins, int) or bins < 2:
            raise ValueError(f"DiscretizedActions: bins must be an integer >= 2, got {bins!r}")
        self.env = env
        self.bins = bins
        self.name = f"{env.name}[{bins} bins]"

    # ----- the action interface -----
    def num_actions(self, params: Any) -> int:
        return self.bins

    def action_levels(self, params: Any) -> Array:
        """``[n_agents, bins]`` continuous action of every discrete action."""
        low, high = (jnp.asarray(bound, jnp.float32) for bound in self.env.action_bounds(params))
        fraction = jnp.arange(self.bins, dtype=jnp.float32) / (self.bins - 1)
        return (1.0 - fraction) * low[:, None] + fraction * high[:, None]

    def continuous_actions(self, actions: Array, params: Any) -> Array:
        """Map int actions ``[n_agents]`` to the wrapped env's continuous actions (indices clipped)."""
        index = jnp.clip(jnp.asarray(actions, jnp.int32), 0, self.bins - 1)
        return jnp.take_along_axis(self.action_levels(params), index[:, None], axis=1)[:, 0]

    def step(self, key: Array, state: Any, actions: Array, params: Any):
        return self.env.step(key, state, self.continuous_actions(actions, params), params)

    # ----- delegated -----
    def default_params(self, **overrides: Any) -> Any:
        return self.env.default_params(**overrides)

    def parameter_names(self) -> tuple[str, ...]:
        return self.env.parameter_names()

    def reset(self, key: Array, params: Any) -> tuple[Any, Array]:
        return self.env.reset(key, params)

    def observe(self, state: Any, params: Any) -> Array:
        return self.env.observe(state, params)

    def global_state(self, state: Any, params: Any) -> Array:
        return self.env.global_state(state, params)

    def n_agents(self, params: Any) -> int:
        return self.env.n_agents(params)

    def agent_names(self, params: Any) -> tuple[str, ...]:
        return self.env.agent_names(params)

    def describe(self, state: Any, params: Any) -> Info:
        return self.env.describe(state, params)

    def static_info(self, params: Any) -> Info:
        return self.env.static_info(params)

    def render_text(self, state: Any, params: Any) -> str:
        return self.env.render_text(state, params)


def discretized(env_id: str, bins: int = 11, **param_overrides: Any) -> tuple[DiscretizedActions, Any]:
    """``make_jax`` for a registered continuous env with discretised actions: ``(env, params)``."""
    env, params = make_jax(env_id, **param_overrides)
    return DiscretizedActions(env, bins), params
