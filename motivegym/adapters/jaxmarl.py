"""A JaxMARL-compatible multi-agent env (``jaxmarl.environments.MultiAgentEnv``'s contract, duck-typed).

    from motivegym.adapters.jaxmarl import make_jaxmarl
    env = make_jaxmarl("PrisonersDilemma-v0", reward="cooperative", max_steps=50)
    obs, state = env.reset(key)                                   # obs: {"agent_0": [d], ...}
    obs, state, rewards, dones, infos = env.step(key, state, actions)

* ``env.agents`` = ``["agent_0", ...]``, ``env.num_agents``; observations, actions and rewards are dicts
  keyed by agent; ``dones`` also has ``"__all__"`` (every motivegym agent finishes with the episode).
* ``observation_space(agent)`` / ``action_space(agent)`` (and the ``observation_spaces`` /
  ``action_spaces`` dicts) follow JaxMARL's spaces: ``Box(low, high, (d,))`` observations (the env's
  ``observation_bounds``, as in the Gymnasium and PettingZoo spaces), ``Discrete(k)`` or
  ``Box(low_i, high_i, (1,))`` actions. They are JaxMARL's own classes when
  ``jaxmarl`` is importable, otherwise :class:`Discrete` / :class:`Box` below, which have the same
  attributes and methods (``n``/``low``/``high``/``shape``/``dtype``, ``sample(key)``, ``contains(x)``).
* ``step(key, state, actions, reset_state=None)`` has JaxMARL's auto-reset: ``key, key_reset = split(key)``,
  the transition uses ``key`` (:meth:`step_env`), and when ``dones["__all__"]`` the returned ``obs``/``state``
  are those of ``reset(key_reset)`` (or of ``reset_state``); ``rewards``/``dones``/``infos`` are the
  finished step's. The reward layer's state carries over to the new episode (as in ``make_vec``).
* ``infos`` holds only arrays of shape ``[num_agents]`` (JaxMARL's IPPO reshapes every info leaf to
  ``NUM_ACTORS``): ``payoffs``, ``terminated``, ``truncated`` and each reward component.
* Rewards come from the reward layer (:mod:`motivegym.adapters.functional`); params are fixed at
  construction (compile-time constants). Actions are not checked, as in JaxMARL.
"""

from __future__ import annotations

import importlib.util
from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from motivegym.adapters.functional import RewardedEnv, RewardedState, make_rewarded
from motivegym.core.batching import reset_where_done, select_envs
from motivegym.reward_layers import RewardLayer

Array = jax.Array


class Discrete:
    """JaxMARL's ``Discrete(n)``: integer actions ``0..n-1``, ``shape == ()``."""

    def __init__(self, num_categories: int, dtype: Any = jnp.int32):
        self.n = int(num_categories)
        self.shape: tuple[int, ...] = ()
        self.dtype = dtype

    def sample(self, rng: Array) -> Array:
        """A uniform action in ``0..n-1``."""
        return jax.random.randint(rng, self.shape, 0, self.n).astype(self.dtype)

    def contains(self, x: Array) -> Array:
        """``0 <= x < n``."""
        return jnp.logical_and(x >= 0, x < self.n)


class Box:
    """JaxMARL's ``Box(low, high, shape, dtype)``: arrays of ``shape`` inside ``[low, high]``."""

    def __init__(self, low: Any, high: Any, shape: tuple[int, ...], dtype: Any = jnp.float32):
        self.low, self.high, self.shape, self.dtype = low, high, tuple(shape), dtype

    def sample(self, rng: Array) -> Array:
        """Uniform in ``[low, high]`` (finite bounds only)."""
        return jax.random.uniform(rng, self.shape, minval=self.low, maxval=self.high).astype(self.dtype)

    def contains(self, x: Array) -> Array:
        """Every entry of ``x`` inside ``[low, high]``."""
        return jnp.logical_and(jnp.all(x >= self.low), jnp.all(x <= self.high))


def space_classes() -> tuple[type, type]:
    """``(Discrete, Box)``: JaxMARL's own classes where ``jaxmarl`` is installed (its wrappers test
    ``isinstance`` against them), else this module's."""
    if importlib.util.find_spec("jaxmarl") is None:
        return Discrete, Box
    from jaxmarl.environments import spaces

    return spaces.Discrete, spaces.Box


class JaxMARLEnv:
    """A motivegym env under a reward layer with JaxMARL's ``MultiAgentEnv`` interface (see the module doc)."""

    def __init__(self, rewarded: RewardedEnv, params: Any, env_id: str):
        if rewarded.autoreset:
            raise ValueError("JaxMARLEnv does its own (JaxMARL-style) auto-reset; pass a RewardedEnv with autoreset=False")
        self.rewarded, self.params, self.env_id = rewarded, params, env_id
        self.num_agents = int(rewarded.n_agents(params))
        self.agents = [f"agent_{i}" for i in range(self.num_agents)]
        self.observation_spaces, self.action_spaces = agent_spaces(rewarded, params, self.agents)

    @property
    def name(self) -> str:
        """The registry id, e.g. ``"PrisonersDilemma-v0"``."""
        return self.env_id

    def observation_space(self, agent: str) -> Any:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> Any:
        return self.action_spaces[agent]

    @partial(jax.jit, static_argnums=(0,))
    def reset(self, key: Array) -> tuple[dict[str, Array], RewardedState]:
        """``(obs, state)`` of a new episode."""
        state, obs = self.rewarded.reset(key, self.params)
        return self.per_agent(obs), state

    @partial(jax.jit, static_argnums=(0,))
    def step(self, key: Array, state: RewardedState, actions: dict[str, Array], reset_state: RewardedState | None = None):
        """``(obs, state, rewards, dones, infos)`` with JaxMARL's auto-reset (see the module doc)."""
        key, key_reset = jax.random.split(key)
        obs, next_state, rewards, dones, infos = self.step_env(key, state, actions)
        done = dones["__all__"]
        observe = lambda env_state: self.rewarded.env.observe(env_state, self.params)  # noqa: E731
        stacked = self.stack(obs)
        if reset_state is None:
            env_state, (stacked,) = reset_where_done(self.rewarded.env, self.params, key_reset, done, next_state.env, (stacked,), (observe,))
        else:
            env_state, stacked = select_envs(done, (reset_state.env, observe(reset_state.env)), (next_state.env, stacked))
        return self.per_agent(stacked), RewardedState(env_state, next_state.layer), rewards, dones, infos

    def step_env(self, key: Array, state: RewardedState, actions: dict[str, Array]):
        """One transition without reset: ``(obs, state, rewards, dones, infos)``, all keyed by agent."""
        state, obs, rewards, done, info = self.rewarded.step(key, state, self.joint_actions(actions), self.params)
        n = self.num_agents
        infos = {
            "payoffs": info["payoffs"],
            "terminated": jnp.broadcast_to(info["terminated"], (n,)),
            "truncated": jnp.broadcast_to(info["truncated"], (n,)),
            **{f"reward_{name}": value for name, value in info["reward_components"].items() if jnp.shape(value) == (n,)},
        }
        dones = {agent: done for agent in self.agents} | {"__all__": done}
        return self.per_agent(obs), state, self.per_agent(rewards), dones, infos

    def get_obs(self, state: RewardedState) -> dict[str, Array]:
        """Observations of ``state`` keyed by agent."""
        return self.per_agent(self.rewarded.observe(state, self.params))

    def global_state(self, state: RewardedState) -> Array:
        """The joint (critic) observation of ``state`` (``env.global_state``), e.g. for MAPPO."""
        return self.rewarded.global_state(state, self.params)

    def get_avail_actions(self, state: RewardedState) -> dict[str, Array]:
        """Every action is always available: all-true masks ``[k]`` (discrete envs only)."""
        if self.rewarded.action_kind != "discrete":
            raise TypeError(f"{self.env_id} has continuous actions; available-action masks exist only for discrete envs")
        k = int(self.rewarded.num_actions(self.params))
        return {agent: jnp.ones((k,), bool) for agent in self.agents}

    # ----- dict <-> array -----
    def per_agent(self, values: Array) -> dict[str, Array]:
        """``{agent_i: values[i]}``."""
        return {agent: values[i] for i, agent in enumerate(self.agents)}

    def stack(self, values: dict[str, Array]) -> Array:
        """``[values[agent_0], values[agent_1], ...]`` stacked on a new leading axis."""
        return jnp.stack([values[agent] for agent in self.agents])

    def joint_actions(self, actions: dict[str, Array]) -> Array:
        """The ``[n_agents]`` action array the core takes: one scalar per agent (a ``(1,)`` Box action is
        flattened), int32 for discrete envs and float32 for continuous ones."""
        dtype = jnp.int32 if self.rewarded.action_kind == "discrete" else jnp.float32
        return jnp.stack([jnp.reshape(actions[agent], ()) for agent in self.agents]).astype(dtype)


def agent_spaces(rewarded: RewardedEnv, params: Any, agents: list[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(observation_spaces, action_spaces)`` keyed by agent, in JaxMARL's spaces convention."""
    discrete, box = space_classes()
    obs_size = rewarded.observation_size(params)
    low, high = (float(bound) for bound in rewarded.env.observation_bounds(params))
    observations = {agent: box(low, high, (obs_size,), jnp.float32) for agent in agents}
    if rewarded.action_kind == "discrete":
        return observations, {agent: discrete(int(rewarded.num_actions(params))) for agent in agents}
    low, high = (np.asarray(bound, np.float32).reshape(len(agents)) for bound in rewarded.action_bounds(params))
    return observations, {agent: box(low[i : i + 1], high[i : i + 1], (1,), jnp.float32) for i, agent in enumerate(agents)}


def make_jaxmarl(env_id: str, reward: str | RewardLayer | None = None, **env_kwargs: Any) -> JaxMARLEnv:
    """A :class:`JaxMARLEnv` of ``env_id`` under ``reward`` (layer name, ``RewardLayer``, or ``None`` for the
    registry default); ``env_kwargs`` are the env's params (unknown names raise, listing the valid ones)."""
    rewarded, params = make_rewarded(env_id, reward=reward, **env_kwargs)
    return JaxMARLEnv(rewarded, params, env_id)
