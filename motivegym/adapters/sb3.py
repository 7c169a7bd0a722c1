"""Stable-Baselines3 adapter: each agent of each env is one SB3 sub-env (parameter sharing).

``vec_env("TrustDilemma-v0", num_envs=8, reward="private")`` is an SB3 ``VecEnv`` with
``num_envs · n_agents`` sub-envs stepped as one JAX program:

* observation: the agent's own observation row, with the agent one-hot appended (``agent_id=True``);
* action: ``Box(-1, 1, (1,))`` mapped affinely to the agent's ``[low_i, high_i]`` (SB3 prefers
  symmetric, normalised boxes; the map runs in float64, so ``-1``, ``1`` and the midpoint land exactly on
  ``low_i``, ``high_i`` and their mean). Actions are checked first (:func:`motivegym.core.actions.check_actions`):
  values outside ``[-1, 1]`` are clipped to it, NaN/inf, complex values and a wrong shape raise ``ValueError``;
* reward: the reward layer's value for that agent; the episode ends for all agents together, with
  same-step auto-reset, ``infos[k]["terminal_observation"]`` and ``"TimeLimit.truncated"``.

Requires the optional extra: ``pip install "motivegym[sb3]"``.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from stable_baselines3.common.vec_env.base_vec_env import VecEnv

from motivegym.adapters.host import build_env, check_flag, check_num_envs, check_seed, host_stepper, jax_seed
from motivegym.core.actions import ActionSpec, check_actions
from motivegym.reward_layers import RewardLayer


class AgentsVecEnv(VecEnv):
    """SB3 ``VecEnv`` over ``num_envs`` batched motivegym envs, one sub-env per (env, agent)."""

    def __init__(self, env_id: str, num_envs: int = 8, reward: str | RewardLayer | None = None, agent_id: bool = True, **env_kwargs: Any):
        num_envs, agent_id = check_num_envs(num_envs), check_flag("agent_id", agent_id)
        spec, self.core_env, self.params, self.reward_layer = build_env(env_id, reward, env_kwargs, ("reward", "agent_id"))
        if self.core_env.action_kind != "continuous":
            raise ValueError(f"{spec.id} has discrete actions; the SB3 adapter supports continuous envs")
        self.env_id, self.num_games, self.agent_id = spec.id, num_envs, agent_id
        self.n_agents = self.core_env.n_agents(self.params)
        self._stepper = host_stepper(spec.id, self.core_env, self.params, self.reward_layer, "agents", self.num_games)
        env_spec = self._stepper.action_spec
        self._low, self._span = env_spec.low, env_spec.high - env_spec.low  # float64
        ones = np.ones(self.n_agents)
        self._action_check = ActionSpec("continuous", -ones, ones, env_spec.labels)  # SB3's normalised box
        size = self.core_env.observation_size(self.params) + (self.n_agents if self.agent_id else 0)
        observation_space = gymnasium.spaces.Box(-np.inf, np.inf, shape=(size,), dtype=np.float32)
        action_space = gymnasium.spaces.Box(-1.0, 1.0, shape=(1,), dtype=np.float32)
        self.render_mode = None
        super().__init__(self.num_games * self.n_agents, observation_space, action_space)
        self._ids = np.tile(np.eye(self.n_agents, dtype=np.float32), (self.num_games, 1))
        self._actions: np.ndarray | None = None
        self._rng = np.random.default_rng()

    def _flat_obs(self, obs: np.ndarray) -> np.ndarray:
        flat = obs.reshape(self.num_games * self.n_agents, -1)
        return np.concatenate([flat, self._ids], axis=1) if self.agent_id else np.ascontiguousarray(flat)

    def reset(self) -> np.ndarray:
        seed = check_seed(self._seeds[0] if self._seeds else None)
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self._reset_seeds()
        out = self._stepper.reset(jax_seed(self._rng), keep_layer_state=seed is None)
        return self._flat_obs(out["obs"])

    def step_async(self, actions: np.ndarray) -> None:
        """Check ``actions`` (shape ``(games·agents, 1)``, ``(games·agents,)`` or ``(games, agents)``, in ``[-1, 1]``)
        and map them to the env's bounds."""
        total = self.num_games * self.n_agents
        try:
            shape = np.shape(actions)
        except ValueError as error:  # ragged
            raise ValueError(f"actions must be an array of shape ({total}, 1): {error}") from None
        if shape not in ((total, 1), (total,), (self.num_games, self.n_agents)):
            raise ValueError(f"actions must have shape ({total}, 1) (one per agent of each env), got shape {shape}")
        games = check_actions(self._action_check, np.reshape(actions, (self.num_games, self.n_agents)), (self.num_games,))
        unit = (np.clip(games.astype(np.float64), -1.0, 1.0) + 1.0) * 0.5
        self._actions = (self._low + unit * self._span).astype(np.float32)

    def step_wait(self):
        out = self._stepper.step(self._actions)
        obs = self._flat_obs(out["obs"])
        rewards = out["rewards"].reshape(-1).astype(np.float32)
        done_games = out["terminated"] | out["truncated"]
        dones = np.repeat(done_games, self.n_agents)
        infos: list[dict] = [{} for _ in range(dones.shape[0])]
        if done_games.any():
            final = self._flat_obs(out["final_obs"])
            truncated = np.repeat(out["truncated"] & ~out["terminated"], self.n_agents)
            for k in np.flatnonzero(dones):
                infos[k] = {"terminal_observation": final[k], "TimeLimit.truncated": bool(truncated[k])}
        payoffs = out["payoffs"].reshape(-1)
        for k in range(dones.shape[0]):
            infos[k]["payoff"] = float(payoffs[k])
        return obs, rewards, dones, infos

    def close(self) -> None:
        pass

    def get_attr(self, attr_name: str, indices=None) -> list:
        return [getattr(self, attr_name)] * len(self._get_indices(indices))

    def set_attr(self, attr_name: str, value: Any, indices=None) -> None:
        raise AttributeError("motivegym sub-envs share one compiled program; attributes cannot be set per sub-env")

    def env_method(self, method_name: str, *args, indices=None, **kwargs) -> list:
        return [getattr(self, method_name)(*args, **kwargs)] * len(self._get_indices(indices))

    def env_is_wrapped(self, wrapper_class, indices=None) -> list[bool]:
        return [False] * len(self._get_indices(indices))

    def _get_indices(self, indices) -> list[int]:
        if indices is None:
            return list(range(self.num_envs))
        return [indices] if isinstance(indices, int) else list(indices)


def vec_env(env_id: str, num_envs: int = 8, reward: str | RewardLayer | None = None, **kwargs: Any) -> AgentsVecEnv:
    """SB3 ``VecEnv`` exposing each agent as a sub-env (see module docstring)."""
    return AgentsVecEnv(env_id, num_envs=num_envs, reward=reward, **kwargs)
