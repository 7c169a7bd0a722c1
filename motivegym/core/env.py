"""The functional environment protocol shared by every motivegym environment.

An environment is a stateless object whose methods are pure JAX functions::

    state, obs = env.reset(key, params)
    state, obs, payoffs, done, info = env.step(key, state, actions, params)

* ``obs`` has shape ``[n_agents, obs_size]`` (one row per agent).
* ``payoffs`` has shape ``[n_agents]``: what the world pays. Rewards are made from payoffs by a
  reward layer (``motivegym.reward_layers``); the env never returns rewards.
* ``done`` is ``terminated | truncated``; both flags are in ``info``.
* ``info`` is a dict of arrays with a fixed structure; it carries what reward layers need
  (``interdependence_weights``: the effective ``W``, zero diagonal).
* ``global_state(state, params)`` is the joint (centralised) observation: the Gymnasium
  observation and the MAPPO critic input.

Everything is jit/vmap-safe: shapes depend only on static params fields.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import jax

from motivegym.core.params import validated_default_params
from motivegym.core.pytree import pytree_dataclass

Array = jax.Array
Info = dict[str, Any]


@pytree_dataclass
class Transition:
    """What a reward layer sees of one step (all leading dims are agents, per env)."""

    obs: Array
    actions: Array
    payoffs: Array
    next_obs: Array
    terminated: Array
    truncated: Array
    info: Info


class FunctionalEnv:
    """Base class: subclasses implement ``default_params``, ``reset``, ``step``, ``observe``.

    Class attributes describe the env for adapters and docs.
    """

    name: ClassVar[str] = "FunctionalEnv"
    #: "continuous" (Box actions, one scalar per agent in [action_low, action_high]) or "discrete"
    action_kind: ClassVar[str] = "continuous"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Every ``default_params`` is wrapped with the parameter checks of ``core/params.py`` (the one place)."""
        super().__init_subclass__(**kwargs)
        if "default_params" in vars(cls):
            cls.default_params = validated_default_params(vars(cls)["default_params"])  # type: ignore[method-assign]

    def default_params(self, **overrides: Any) -> Any:  # pragma: no cover - interface
        """Default params with keyword overrides; every value is validated (``motivegym.core.params``)."""
        raise NotImplementedError

    def reset(self, key: Array, params: Any) -> tuple[Any, Array]:  # pragma: no cover
        raise NotImplementedError

    def step(self, key: Array, state: Any, actions: Array, params: Any):  # pragma: no cover
        raise NotImplementedError

    def observe(self, state: Any, params: Any) -> Array:  # pragma: no cover
        raise NotImplementedError

    def global_state(self, state: Any, params: Any) -> Array:  # pragma: no cover
        raise NotImplementedError

    # --- shape and bounds information (host side, from static params) ---
    def n_agents(self, params: Any) -> int:  # pragma: no cover
        raise NotImplementedError

    def action_bounds(self, params: Any) -> tuple[Array, Array]:
        """Per-agent ``(low, high)`` for continuous envs, each of shape ``[n_agents]``."""
        raise NotImplementedError

    def num_actions(self, params: Any) -> int:
        """Number of discrete actions per agent (discrete envs)."""
        raise NotImplementedError

    def agent_names(self, params: Any) -> tuple[str, ...]:
        """Display names of the agents (PettingZoo ids are always ``agent_<i>``)."""
        return tuple(f"agent_{i}" for i in range(self.n_agents(params)))

    def describe(self, state: Any, params: Any) -> Info:
        """Info of a state (what ``reset`` reports; ``step`` adds step-specific keys)."""
        return {}

    def parameter_names(self) -> tuple[str, ...]:
        """Every keyword ``default_params`` accepts (unknown ones raise)."""
        raise NotImplementedError

    def static_info(self, params: Any) -> Info:
        """Non-array facts about the episode (names, phase labels) merged into host-side info."""
        return {}

    def render_text(self, state: Any, params: Any) -> str:
        """A text rendering of ``state`` (used by ``render_mode="ansi"``)."""
        return repr(state)

    def max_episode_steps(self, params: Any) -> int:
        """The horizon in steps (truncation); envs whose params have no ``max_steps`` override it."""
        return int(params.max_steps)

    def observation_bounds(self, params: Any) -> tuple[float, float]:
        """``(low, high)`` that every entry of ``observe`` and ``global_state`` lies in (the adapters' Box bounds).

        Unbounded by default; envs whose features are known to be bounded (one-hot grid views, normalised
        positions, ``t / max_steps``) override it. ``tests/adapters/test_gymnasium_contract.py`` checks it on
        random rollouts of every env."""
        return -math.inf, math.inf

    def render_rgb(self, state: Any, params: Any) -> Any:
        """An ``[H, W, 3]`` uint8 image of ``state`` (``render_mode="rgb_array"``); grid envs override it."""
        raise NotImplementedError(f"{self.name} has no rgb_array rendering")

    @classmethod
    def render_modes(cls) -> list[str]:
        """The adapters' render modes: text always, ``rgb_array`` where :meth:`render_rgb` is implemented."""
        return ["ansi", "human"] + (["rgb_array"] if cls.render_rgb is not FunctionalEnv.render_rgb else [])

    # --- derived helpers ---
    def observation_size(self, params: Any) -> int:
        state, obs = jax.eval_shape(self.reset, jax.random.PRNGKey(0), params)
        return int(obs.shape[-1])

    def global_state_size(self, params: Any) -> int:
        def shape_of(key):
            state, _ = self.reset(key, params)
            return self.global_state(state, params)

        return int(jax.eval_shape(shape_of, jax.random.PRNGKey(0)).shape[-1])

