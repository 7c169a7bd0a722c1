"""A rewarded functional env: ``make_jax`` plus a reward layer, as pure JAX functions (the JAX user's door).

``make_jax`` returns the raw env, whose step pays payoffs and checks nothing. ``make_rewarded`` (the
documented sibling of ``make_jax(..., reward=...)``, which ``core/registry.py`` cannot offer without
importing reward layers) fuses the env with a reward layer::

    env, params = motivegym.make_rewarded("PrisonersDilemma-v0", reward="cooperative", autoreset=True)
    state, obs = env.reset(key, params)                                   # obs [n_agents, obs_size]
    state, obs, rewards, done, info = env.step(key, state, actions, params)

Same protocol and argument order as the raw env (``(state, obs)`` first), with ``rewards [n_agents]`` where
the raw step returns payoffs; ``info`` adds ``payoffs`` and ``reward_components``. ``state`` is a
:class:`RewardedState` carrying the layer's state. Everything is jit/vmap-safe.

**Keys.** ``reset(key)`` draws ``(_, reset_key, layer_key)`` as the adapters do
(``motivegym.adapters.host.reset_keys``); ``step(key)`` steps the env with ``split(key)[0]`` and, with
``autoreset=True``, restarts a finished episode from ``env.reset(split(key)[1], params)``. Fed the keys of
the adapters' documented schedule, it plays ``gymnasium.make``'s game (``tests/adapters/test_functional.py``).

**Auto-reset** (``autoreset=True``) is same-step (as the learners and ``make_vec(..., autoreset_mode="same-step")``; ``make_vec``'s default is Gymnasium's next-step): where ``done``, the returned
``state``/``obs`` belong to the new episode, the terminal observation is ``info["final_obs"]``, and
``rewards``/``done``/``info`` are the finished step's. The reward layer's state carries over to the new
episode (layers that keep per-episode memory clear it themselves at ``terminated | truncated``).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from motivegym.adapters.host import build_env, reset_keys
from motivegym.core.batching import reset_finished, reset_where_done, split_step_and_reset_keys
from motivegym.core.env import FunctionalEnv, Transition
from motivegym.core.pytree import pytree_dataclass
from motivegym.reward_layers import LayerSpec, RewardLayer
from motivegym.reward_layers.base import refuse_rollout_fitting

Array = jax.Array


@pytree_dataclass
class RewardedState:
    """The raw env's state and the reward layer's state."""

    env: Any
    layer: Any


class RewardedEnv:
    """``env`` fused with ``layer``: ``reset``/``step`` are pure functions of ``(key, state, actions, params)``.

    ``rewards = layer.apply(layer_state, Transition(obs, actions, payoffs, next_obs, terminated,
    truncated, info))``, exactly as the Gymnasium and PettingZoo adapters compute them. Shape and bounds
    helpers (``n_agents``, ``action_kind``, ``num_actions``, ``action_bounds``, ...) are the raw env's, so
    ``motivegym.checked`` works on it too.
    """

    def __init__(self, env: FunctionalEnv, layer: RewardLayer, autoreset: bool = False):
        refuse_rollout_fitting(layer, "RewardedEnv")
        self.env = env
        self.layer = layer
        self.autoreset = bool(autoreset)
        self.action_kind = env.action_kind
        self.name = env.name

    def __repr__(self) -> str:
        return f"RewardedEnv({self.env.name}, reward={self.layer.name!r}, autoreset={self.autoreset})"

    # ----- the functional API -----
    def reset(self, key: Array, params: Any) -> tuple[RewardedState, Array]:
        """``(state, obs [n, d])`` of a new episode; the layer starts from ``layer.init(layer_key, spec)``."""
        _, reset_key, layer_key = reset_keys(key)
        env_state, obs = self.env.reset(reset_key, params)
        layer_state = self.layer.init(layer_key, LayerSpec.of(self.env, params))
        return RewardedState(env_state, layer_state), obs

    def step(self, key: Array, state: RewardedState, actions: Array, params: Any):
        """``(state, obs, rewards [n], done, info)`` of one step (same-step auto-reset when ``autoreset``)."""
        step_key, reset_key = jax.random.split(key)
        state, obs, rewards, done, info = self._transition(step_key, state, actions, params)
        if not self.autoreset:
            return state, obs, rewards, done, info
        env_state, (obs,) = reset_where_done(self.env, params, reset_key, done, state.env, (obs,), (self._observer(params),))
        return RewardedState(env_state, state.layer), obs, rewards, done, info

    def batch_reset(self, key: Array, params: Any, num_envs: int) -> tuple[RewardedState, Array]:
        """``num_envs`` independent episodes (env ``b`` from ``split(key, num_envs)[b]``)."""
        return jax.vmap(self.reset, in_axes=(0, None))(jax.random.split(key, num_envs), params)

    def batch_step(self, keys: Array, states: RewardedState, actions: Array, params: Any):
        """``vmap(step)`` over ``keys [B]``, with the auto-reset of :func:`~motivegym.core.batching.reset_finished`:
        fresh episodes are built only for the finished envs (a plain ``vmap(step)`` builds one for every env)."""
        step_keys, reset_keys_ = split_step_and_reset_keys(keys)
        states, obs, rewards, done, info = jax.vmap(self._transition, in_axes=(0, 0, 0, None))(step_keys, states, actions, params)
        if not self.autoreset:
            return states, obs, rewards, done, info
        env_states, (obs,) = reset_finished(self.env, params, reset_keys_, done, states.env, (obs,), (self._observer(params),))
        return RewardedState(env_states, states.layer), obs, rewards, done, info

    def _transition(self, step_key: Array, state: RewardedState, actions: Array, params: Any):
        """The env step and the layer, no reset: ``info`` gets ``payoffs``, ``reward_components`` (and
        ``final_obs`` = ``next_obs`` when ``autoreset``, so the info structure does not depend on ``done``)."""
        actions = jnp.asarray(actions)
        obs = self.env.observe(state.env, params)
        env_state, next_obs, payoffs, done, info = self.env.step(step_key, state.env, actions, params)
        transition = Transition(obs, actions, payoffs, next_obs, info["terminated"], info["truncated"], info)
        layer_state, rewards, components = self.layer.apply(state.layer, transition)
        info = {**info, "payoffs": payoffs, "reward_components": components}
        if self.autoreset:
            info["final_obs"] = next_obs
        return RewardedState(env_state, layer_state), next_obs, rewards, done, info

    def _observer(self, params: Any):
        return lambda env_state: self.env.observe(env_state, params)

    # ----- the raw env's views and shape information -----
    def default_params(self, **overrides: Any) -> Any:
        return self.env.default_params(**overrides)

    def observe(self, state: RewardedState, params: Any) -> Array:
        """Per-agent observations ``[n, d]`` of ``state``."""
        return self.env.observe(state.env, params)

    def global_state(self, state: RewardedState, params: Any) -> Array:
        """The joint (critic) observation of ``state``."""
        return self.env.global_state(state.env, params)

    def n_agents(self, params: Any) -> int:
        return self.env.n_agents(params)

    def num_actions(self, params: Any) -> int:
        return self.env.num_actions(params)

    def action_bounds(self, params: Any) -> tuple[Array, Array]:
        return self.env.action_bounds(params)

    def agent_names(self, params: Any) -> tuple[str, ...]:
        return self.env.agent_names(params)

    def observation_size(self, params: Any) -> int:
        return self.env.observation_size(params)

    def global_state_size(self, params: Any) -> int:
        return self.env.global_state_size(params)

    def max_episode_steps(self, params: Any) -> int:
        return self.env.max_episode_steps(params)


def make_rewarded(env_id: str, reward: str | RewardLayer | None = None, autoreset: bool = False, **env_kwargs: Any):
    """``(env, params)``: a :class:`RewardedEnv` of ``env_id`` under ``reward`` (a layer name such as
    ``"cooperative"`` or ``"integrated+0.05*rnd"``, a ``RewardLayer``, or ``None`` for the registry's
    default) and its validated params. Unknown keyword arguments raise, listing the valid ones.

    The step checks nothing (like ``make_jax``); ``motivegym.checked(env)`` validates actions on the host.
    """
    if not isinstance(autoreset, bool):
        raise ValueError(f"autoreset must be True or False, got {autoreset!r}")
    _, env, params, layer = build_env(env_id, reward, env_kwargs, ())
    return RewardedEnv(env, layer, autoreset), params
