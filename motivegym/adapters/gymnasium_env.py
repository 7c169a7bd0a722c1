"""Gymnasium adapter: the joint (centralised-control) view of a motivegym env.

``gymnasium.make("motivegym/TrustDilemma-v0", reward="private", scalarize=None)``

* **Action:** the joint action ``Box(low_i, high_i, (n,))`` with **per-agent** bounds; values outside
  ``[0, e_i]`` are clipped by the env, NaN/inf or a wrong shape raise ``ValueError``.
* **Observation:** ``env.global_state`` (for the coopetition family the reference's legacy layout).
* **Reward:** the reward layer's per-agent vector (float32 ``[n]``, as the reference returns);
  ``scalarize="sum"`` or ``"mean"`` returns a float instead.
* **Info:** the env's info plus ``payoffs``, ``rewards`` and ``reward_components`` (each ``[n]``).
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np

from motivegym.adapters.host import (
    ADAPTER_ARGUMENTS,
    HostStepper,
    build_env,
    compiled_core,
    validate_actions,
    warn_unused_options,
)
from motivegym.reward_layers import RewardLayer

SCALARIZATIONS = (None, "sum", "mean")


def action_space_of(env, params) -> gymnasium.spaces.Space:
    n = env.n_agents(params)
    if env.action_kind == "discrete":
        return gymnasium.spaces.MultiDiscrete(np.full(n, env.num_actions(params)))
    low, high = (np.asarray(b, np.float32) for b in env.action_bounds(params))
    return gymnasium.spaces.Box(low=low, high=high, shape=(n,), dtype=np.float32)


def step_info(out: dict, static_info: dict) -> dict:
    """The Gymnasium info dict of one step (env info + payoffs + rewards + components)."""
    info = dict(out["info"])
    info["payoffs"] = out["payoffs"]
    info["rewards"] = out["rewards"]
    info["reward_components"] = out["components"]
    info.update(static_info)
    return info


class GymnasiumEnv(gymnasium.Env):
    """A registered motivegym env as a single Gymnasium env with joint actions."""

    metadata = {"render_modes": ["ansi", "human", "rgb_array"], "render_fps": 4}  # narrowed per env in __init__

    def __init__(
        self,
        env_id: str,
        reward: str | RewardLayer | None = None,
        scalarize: str | None = None,
        render_mode: str | None = None,
        **env_kwargs: Any,
    ):
        spec, self.core_env, self.params, self.reward_layer = build_env(
            env_id, reward, env_kwargs, ADAPTER_ARGUMENTS + ("scalarize",)
        )
        if scalarize not in SCALARIZATIONS:
            raise ValueError(f"scalarize must be one of {SCALARIZATIONS}, got {scalarize!r}")
        self.metadata = {**self.metadata, "render_modes": self.core_env.render_modes()}
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}")
        self.scalarize, self.render_mode = scalarize, render_mode
        self.env_id = spec.id
        self.n_agents = self.core_env.n_agents(self.params)
        self.agent_names = self.core_env.agent_names(self.params)
        self._stepper = HostStepper(compiled_core(spec.id, env_kwargs, self.core_env, self.params, self.reward_layer, "global", None))
        self.action_space = action_space_of(self.core_env, self.params)
        size = self.core_env.global_state_size(self.params)
        self.observation_space = gymnasium.spaces.Box(-np.inf, np.inf, shape=(size,), dtype=np.float32)
        self._static_info = self.core_env.static_info(self.params)
        self._discrete = self.core_env.action_kind == "discrete"
        self.metadata = {**self.metadata, "name": spec.id}

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        warn_unused_options(options)
        jax_seed = int(self.np_random.integers(0, 2**31 - 1))
        out = self._stepper.reset(jax_seed, keep_layer_state=seed is None)
        info = dict(out["info"])
        info.update(self._static_info)
        return out["obs"], info

    def step(self, action: Any):
        actions = validate_actions(action, self.n_agents)
        out = self._stepper.step(actions)
        rewards = out["rewards"]
        if self.scalarize == "sum":
            reward: Any = float(rewards.sum())
        elif self.scalarize == "mean":
            reward = float(rewards.mean())
        else:
            reward = rewards
        if self.render_mode == "human":
            print(self.render_text())
        return out["obs"], reward, bool(out["terminated"]), bool(out["truncated"]), step_info(out, self._static_info)

    def env_state(self) -> Any:
        """The current JAX env state (a pytree), e.g. for captions or custom rendering."""
        return self._stepper.state()

    def render_text(self) -> str:
        return self.core_env.render_text(self.env_state(), self.params)

    def render(self):
        if self.render_mode == "ansi":
            return self.render_text()
        if self.render_mode == "rgb_array":
            return np.asarray(self.core_env.render_rgb(self._stepper.state(), self.params), np.uint8)
        if self.render_mode == "human":
            print(self.render_text())
        return None
