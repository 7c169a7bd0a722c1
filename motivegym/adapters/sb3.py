"""Stable-Baselines3 adapter: each agent of each env is one SB3 sub-env (parameter sharing).

``vec_env("TrustDilemma-v0", num_envs=8, reward="private")`` is an SB3 ``VecEnv`` with
``num_envs · n_agents`` sub-envs stepped as one JAX program:

* observation: the agent's own observation row, with the agent one-hot appended (``agent_id=True``), in a
  ``Box`` with the env's ``observation_bounds`` (``[0, 1]`` for the one-hot);
* action of a **continuous** env: ``Box(-1, 1, (1,))`` mapped affinely to the agent's ``[low_i, high_i]``
  (SB3 prefers symmetric, normalised boxes, and one shared space serves agents with different bounds; the
  map runs in float64, so ``-1``, ``1`` and the midpoint land exactly on ``low_i``, ``high_i`` and their
  mean). Values outside ``[-1, 1]`` are clipped to it;
* action of a **discrete** env: ``Discrete(k)``, the env's action index unchanged (every discrete motivegym
  env gives each agent one index in ``0..k-1``, so no env needs ``MultiDiscrete``);
* actions are checked first (:func:`motivegym.core.actions.check_actions`): NaN/inf, complex values,
  bools, a wrong shape and (discrete) fractional or out-of-range indices raise ``ValueError`` naming the
  sub-env and agent. Shapes ``(games·agents, 1)``, ``(games·agents,)`` and ``(games, agents)`` are accepted;
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
        self.env_id, self.num_games, self.agent_id = spec.id, num_envs, agent_id
        self.n_agents = self.core_env.n_agents(self.params)
        self._stepper = host_stepper(spec.id, self.core_env, self.params, self.reward_layer, "agents", self.num_games)
        env_spec = self._stepper.action_spec
        self.discrete = env_spec.kind == "discrete"
        self._low, self._span = env_spec.low, env_spec.high - env_spec.low  # float64 (0 and k − 1 when discrete)
        self._action_check = agent_action_spec(env_spec)
        observation_space = agent_observation_space(self.core_env, self.params, self.n_agents if self.agent_id else 0)
        action_space = agent_action_space(env_spec)
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
        """Check ``actions`` (shape ``(games·agents, 1)``, ``(games·agents,)`` or ``(games, agents)``): action
        indices of a discrete env, values in ``[-1, 1]`` of a continuous one (mapped to the env's bounds)."""
        total = self.num_games * self.n_agents
        try:
            shape = np.shape(actions)
        except ValueError as error:  # ragged
            raise ValueError(f"actions must be an array of shape ({total}, 1): {error}") from None
        if shape not in ((total, 1), (total,), (self.num_games, self.n_agents)):
            raise ValueError(f"actions must have shape ({total}, 1) (one per agent of each env), got shape {shape}")
        games = check_actions(self._action_check, np.reshape(actions, (self.num_games, self.n_agents)), (self.num_games,))
        self._actions = games if self.discrete else to_bounds(games, self._low, self._span)

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


def agent_observation_space(env: Any, params: Any, n_ids: int) -> gymnasium.spaces.Box:
    """The env's observation ``Box`` (its ``observation_bounds``) with ``n_ids`` one-hot entries in ``[0, 1]`` appended."""
    size = env.observation_size(params)
    low, high = (float(bound) for bound in env.observation_bounds(params))
    lows = np.concatenate([np.full(size, low), np.zeros(n_ids)]).astype(np.float32)
    highs = np.concatenate([np.full(size, high), np.ones(n_ids)]).astype(np.float32)
    return gymnasium.spaces.Box(lows, highs, dtype=np.float32)


def agent_action_spec(env_spec: ActionSpec) -> ActionSpec:
    """What one SB3 action is checked against: the env's indices (discrete) or SB3's ``[-1, 1]`` box (continuous)."""
    if env_spec.kind == "discrete":
        return env_spec
    ones = np.ones(env_spec.n_agents)
    return ActionSpec("continuous", -ones, ones, env_spec.labels)


def agent_action_space(env_spec: ActionSpec) -> gymnasium.spaces.Space:
    """The action space every agent shares: ``Discrete(k)`` or ``Box(-1, 1, (1,))``."""
    if env_spec.kind == "discrete":
        return gymnasium.spaces.Discrete(int(env_spec.high[0]) + 1)
    return gymnasium.spaces.Box(-1.0, 1.0, shape=(1,), dtype=np.float32)


def to_bounds(unit_actions: np.ndarray, low: np.ndarray, span: np.ndarray) -> np.ndarray:
    """``[-1, 1]`` actions (clipped to it) mapped affinely, in float64, to ``[low, low + span]`` (float32)."""
    unit = (np.clip(unit_actions.astype(np.float64), -1.0, 1.0) + 1.0) * 0.5
    return (low + unit * span).astype(np.float32)


def from_bounds(actions: np.ndarray, low: np.ndarray, span: np.ndarray) -> np.ndarray:
    """The inverse of :func:`to_bounds` on ``[low, low + span]``: env actions as ``[-1, 1]`` (float32)."""
    return (2.0 * (np.asarray(actions, np.float64) - low) / span - 1.0).astype(np.float32)


def vec_env(env_id: str, num_envs: int = 8, reward: str | RewardLayer | None = None, **kwargs: Any) -> AgentsVecEnv:
    """SB3 ``VecEnv`` exposing each agent as a sub-env (see module docstring)."""
    return AgentsVecEnv(env_id, num_envs=num_envs, reward=reward, **kwargs)
