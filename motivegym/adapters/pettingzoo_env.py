"""PettingZoo adapters: ``motivegym.parallel_env(id, ...)`` and ``motivegym.aec_env(id, ...)``.

Both run the env's own JAX step (the same compiled pipeline as Gymnasium, so no env logic is
skipped: spec §7.24 fixed). Agents are ``agent_0 … agent_{n-1}``; each observes its own row of
``env.observe`` and acts with ``Box(low_i, high_i, (1,))`` (continuous) or ``Discrete(k)``.
Rewards are the reward layer's per-agent values; each agent's info holds its ``payoff``,
``reward`` and ``reward_components`` plus the shared env info under ``"env"``.
The AEC env is PettingZoo's standard ``parallel_to_aec`` conversion: actions are collected in
``agent_0 …`` order and the joint step runs when the last agent has acted.
"""

from __future__ import annotations

import functools
from typing import Any

import gymnasium
import numpy as np
from pettingzoo import ParallelEnv as PettingZooParallelEnv
from pettingzoo.utils.conversions import parallel_to_aec

from motivegym.adapters.host import ADAPTER_ARGUMENTS, HostStepper, build_env, compiled_core, warn_unused_options
from motivegym.reward_layers import RewardLayer


class ParallelEnv(PettingZooParallelEnv):
    """A registered motivegym env as a PettingZoo ``ParallelEnv``."""

    metadata = {"render_modes": ["ansi", "human", "rgb_array"], "name": "motivegym", "is_parallelizable": True}  # narrowed per env

    def __init__(self, env_id: str, reward: str | RewardLayer | None = None, render_mode: str | None = None, **env_kwargs: Any):
        spec, self.core_env, self.params, self.reward_layer = build_env(env_id, reward, env_kwargs, ADAPTER_ARGUMENTS)
        self.metadata = {**self.metadata, "render_modes": self.core_env.render_modes()}
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}")
        self.render_mode = render_mode
        self.env_id = spec.id
        self.metadata = {**self.metadata, "name": f"motivegym_{spec.id}"}
        n = self.core_env.n_agents(self.params)
        self.possible_agents = [f"agent_{i}" for i in range(n)]
        self.agents: list[str] = []
        self._index = {agent: i for i, agent in enumerate(self.possible_agents)}
        self._stepper = HostStepper(compiled_core(spec.id, env_kwargs, self.core_env, self.params, self.reward_layer, "agents", None))
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
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        out = self._stepper.reset(int(self._rng.integers(0, 2**31 - 1)), keep_layer_state=seed is None)
        self.agents = list(self.possible_agents)
        env_info = {**out["info"], **self._static_info}
        observations = {a: out["obs"][i] for i, a in enumerate(self.agents)}
        return observations, {a: {"env": env_info} for a in self.agents}

    def _joint_actions(self, actions: dict) -> np.ndarray:
        unknown = set(actions) - set(self.agents)
        if unknown:
            raise ValueError(f"actions for unknown or finished agents {sorted(unknown)}; live agents: {self.agents}")
        missing = [a for a in self.agents if a not in actions]
        if missing:
            raise ValueError(f"missing actions for agents {missing}")
        joint = np.zeros(len(self.possible_agents), np.int32 if self._discrete else np.float32)
        for agent, action in actions.items():
            value = np.asarray(action, dtype=joint.dtype)
            if value.size != 1:
                raise ValueError(f"action of {agent} must be a single value (shape (1,) or ()), got shape {value.shape}")
            value = value.reshape(())
            joint[self._index[agent]] = value
        return joint

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


def aec_env(env_id: str, reward: str | RewardLayer | None = None, render_mode: str | None = None, **env_kwargs: Any):
    """PettingZoo AEC env: the standard ``parallel_to_aec`` of :func:`parallel_env`."""
    return parallel_to_aec(parallel_env(env_id, reward=reward, render_mode=render_mode, **env_kwargs))


def env_factory(env_id: str, api: str = "parallel", **kwargs: Any):
    """A zero-argument constructor (what PettingZoo's tests take)."""
    make = {"parallel": parallel_env, "aec": aec_env}[api]
    return functools.partial(make, env_id, **kwargs)
