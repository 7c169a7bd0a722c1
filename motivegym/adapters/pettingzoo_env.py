"""PettingZoo adapters: ``motivegym.parallel_env(id, ...)`` and ``motivegym.aec_env(id, ...)``.

Both run the env's own JAX step (the same compiled pipeline as Gymnasium, so no env logic is
skipped: spec §7.24 fixed). Agents are ``agent_0 … agent_{n-1}``; each observes its own row of
``env.observe`` and acts with ``Box(low_i, high_i, (1,))`` (continuous) or ``Discrete(k)``.
Rewards are the reward layer's per-agent values; each agent's info holds its ``payoff``,
``reward`` and ``reward_components`` plus the shared env info under ``"env"``.
The AEC env is PettingZoo's standard ``parallel_to_aec`` conversion: actions are collected in
``agent_0 …`` order and the joint step runs when the last agent has acted. Each agent's action is checked
(:func:`motivegym.core.actions.check_actions`) when it is given, so a refused action is not stored and the
agent can simply act again; the Parallel env checks the joint action the same way (errors name the agent).
"""

from __future__ import annotations

import functools
from typing import Any

import gymnasium
import numpy as np
from pettingzoo import ParallelEnv as PettingZooParallelEnv
from pettingzoo.utils.conversions import parallel_to_aec_wrapper
from pettingzoo.utils.wrappers import OrderEnforcingWrapper

from motivegym.adapters.host import (
    ADAPTER_ARGUMENTS,
    build_env,
    check_choice,
    check_seed,
    host_stepper,
    jax_seed,
    warn_unused_options,
)
from motivegym.core.actions import check_actions
from motivegym.reward_layers import RewardLayer


class ParallelEnv(PettingZooParallelEnv):
    """A registered motivegym env as a PettingZoo ``ParallelEnv``."""

    metadata = {"render_modes": ["ansi", "human", "rgb_array"], "name": "motivegym", "is_parallelizable": True}  # narrowed per env

    def __init__(self, env_id: str, reward: str | RewardLayer | None = None, render_mode: str | None = None, **env_kwargs: Any):
        spec, self.core_env, self.params, self.reward_layer = build_env(env_id, reward, env_kwargs, ADAPTER_ARGUMENTS)
        self.metadata = {**self.metadata, "render_modes": self.core_env.render_modes()}
        self.render_mode = check_choice("render_mode", render_mode, [None, *self.metadata["render_modes"]])
        self.env_id = spec.id
        self.metadata = {**self.metadata, "name": f"motivegym_{spec.id}"}
        n = self.core_env.n_agents(self.params)
        self.possible_agents = [f"agent_{i}" for i in range(n)]
        self.agents: list[str] = []
        self._index = {agent: i for i, agent in enumerate(self.possible_agents)}
        self._stepper = host_stepper(spec.id, self.core_env, self.params, self.reward_layer, "agents", None)
        obs_size = self.core_env.observation_size(self.params)
        self._observation_spaces = {
            a: gymnasium.spaces.Box(-np.inf, np.inf, shape=(obs_size,), dtype=np.float32) for a in self.possible_agents
        }
        self._discrete = self.core_env.action_kind == "discrete"
        if self._discrete:
            k = self.core_env.num_actions(self.params)
            self._action_spaces = {a: gymnasium.spaces.Discrete(k) for a in self.possible_agents}
        else:
            low, high = (np.asarray(b, np.float32) for b in self.core_env.action_bounds(self.params))
            self._action_spaces = {
                a: gymnasium.spaces.Box(low[i : i + 1], high[i : i + 1], shape=(1,), dtype=np.float32)
                for i, a in enumerate(self.possible_agents)
            }
        self._static_info = self.core_env.static_info(self.params)
        self._global_state: np.ndarray | None = None
        self._rng = np.random.default_rng()

    def observation_space(self, agent: str) -> gymnasium.spaces.Space:
        return self._observation_spaces[agent]

    def action_space(self, agent: str) -> gymnasium.spaces.Space:
        return self._action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict | None = None):
        warn_unused_options(options)
        if check_seed(seed) is not None:
            self._rng = np.random.default_rng(seed)
        out = self._stepper.reset(jax_seed(self._rng), keep_layer_state=seed is None)
        self.agents = list(self.possible_agents)
        env_info = {**out["info"], **self._static_info}
        observations = {a: out["obs"][i] for i, a in enumerate(self.agents)}
        return observations, {a: {"env": env_info} for a in self.agents}

    def _single_value(self, agent: str, action: Any) -> np.ndarray:
        """One agent's action as a shape ``(1,)`` array (given as a scalar, ``()`` or ``(1,)``).

        Values that are not plain numbers are checked here, so the error names the agent; the joint check follows.
        """
        try:
            value = np.asarray(action)
        except (TypeError, ValueError) as error:
            raise ValueError(f"action of {agent} must be a single real number: {error}") from None
        if value.size != 1:
            raise ValueError(f"action of {agent} must be a single value (shape (1,) or ()), got shape {value.shape}")
        value = value.reshape(1)
        if value.dtype.kind not in "iuf":
            value = check_actions(self._stepper.action_spec.agent(self._index[agent]), value, name=f"action of {agent}")
        return value

    def check_agent_action(self, agent: str, action: Any) -> np.ndarray:
        """``agent``'s action checked on its own (the AEC env checks each action when it is given)."""
        spec = self._stepper.action_spec.agent(self._index[agent])
        return check_actions(spec, self._single_value(agent, action), name=f"action of {agent}")

    def _joint_actions(self, actions: dict) -> np.ndarray:
        if not isinstance(actions, dict):
            raise ValueError(f"actions must be a dict {{agent: action}}, got {type(actions).__name__}")
        unknown = set(actions) - set(self.agents)
        if unknown:
            raise ValueError(f"actions for unknown or finished agents {sorted(unknown, key=str)}; live agents: {self.agents}")
        missing = [a for a in self.agents if a not in actions]
        if missing:
            raise ValueError(f"missing actions for agents {missing}")
        return self._stepper.check(np.concatenate([self._single_value(agent, actions[agent]) for agent in self.possible_agents]))

    def step(self, actions: dict):
        if not self.agents:
            raise RuntimeError("all agents are done: call reset()")
        out = self._stepper.step(self._joint_actions(actions))
        env_info = {**out["info"], **self._static_info}
        terminated, truncated = bool(out["terminated"]), bool(out["truncated"])
        observations, rewards, terminations, truncations, infos = {}, {}, {}, {}, {}
        for i, agent in enumerate(self.agents):
            observations[agent] = out["obs"][i]
            rewards[agent] = float(out["rewards"][i])
            terminations[agent] = terminated
            truncations[agent] = truncated
            infos[agent] = {
                "payoff": float(out["payoffs"][i]),
                "reward": rewards[agent],
                "reward_components": {name: float(v[i]) for name, v in out["components"].items()},
                "env": env_info,
            }
        if terminated or truncated:
            self.agents = []
        if self.render_mode == "human":
            print(self.render())
        return observations, rewards, terminations, truncations, infos

    def state(self) -> np.ndarray:
        """The global state (the Gymnasium observation) of the current env state."""
        return np.asarray(self.core_env.global_state(self._stepper.state(), self.params))

    def render(self):
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode")
            return None
        if self.render_mode == "rgb_array":
            return np.asarray(self.core_env.render_rgb(self._stepper.state(), self.params), np.uint8)
        return self.core_env.render_text(self._stepper.state(), self.params)

    def close(self):
        pass


def parallel_env(env_id: str, reward: str | RewardLayer | None = None, render_mode: str | None = None, **env_kwargs: Any) -> ParallelEnv:
    """PettingZoo Parallel env of a registered id (``"TrustDilemma-v0"`` or ``"motivegym/TrustDilemma-v0"``)."""
    return ParallelEnv(env_id, reward=reward, render_mode=render_mode, **env_kwargs)


class AECEnv(parallel_to_aec_wrapper):
    """PettingZoo's ``parallel_to_aec`` conversion whose ``step`` checks each action before storing it.

    A refused action raises ``ValueError`` naming the agent and leaves the env as it was (the agent acts
    again); if the joint step itself fails, the last agent's action is dropped as well.
    """

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        live = not (self.terminations[agent] or self.truncations[agent])
        if live:
            action = self.env.check_agent_action(agent, action)
        try:
            super().step(action)
        except Exception:
            if live and agent in self._actions:
                self._actions[agent] = None
            raise


def aec_env(env_id: str, reward: str | RewardLayer | None = None, render_mode: str | None = None, **env_kwargs: Any):
    """PettingZoo AEC env: the standard ``parallel_to_aec`` of :func:`parallel_env` (``OrderEnforcingWrapper(AECEnv)``)."""
    return OrderEnforcingWrapper(AECEnv(parallel_env(env_id, reward=reward, render_mode=render_mode, **env_kwargs)))


def env_factory(env_id: str, api: str = "parallel", **kwargs: Any):
    """A zero-argument constructor (what PettingZoo's tests take)."""
    make = {"parallel": parallel_env, "aec": aec_env}[check_choice("api", api, ["parallel", "aec"])]
    return functools.partial(make, env_id, **kwargs)
