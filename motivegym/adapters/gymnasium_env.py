"""Gymnasium adapter: the joint (centralised-control) view of a motivegym env.

``gymnasium.make("motivegym/TrustDilemma-v0", reward="private", scalarize=None)``

* **Action:** the joint action ``Box(low_i, high_i, (n,))`` with **per-agent** bounds (``MultiDiscrete`` for
  discrete envs). Checked by :func:`motivegym.core.actions.check_actions` before it enters the JAX step:
  finite values outside ``[0, e_i]`` are clipped by the env; NaN/inf, complex, non-integer or out-of-range
  discrete actions and a wrong shape raise ``ValueError`` naming the agent or the argument.
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
    build_env,
    check_choice,
    check_seed,
    host_stepper,
    jax_seed,
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
        check_choice("scalarize", scalarize, SCALARIZATIONS)
        self.metadata = {**self.metadata, "render_modes": self.core_env.render_modes()}
        check_choice("render_mode", render_mode, [None, *self.metadata["render_modes"]])
        self.scalarize, self.render_mode = scalarize, render_mode
        self.env_id = spec.id
        self.n_agents = self.core_env.n_agents(self.params)
        self.agent_names = self.core_env.agent_names(self.params)
        self._stepper = host_stepper(spec.id, self.core_env, self.params, self.reward_layer, "global", None)
        self.action_space = action_space_of(self.core_env, self.params)
        size = self.core_env.global_state_size(self.params)
        self.observation_space = gymnasium.spaces.Box(-np.inf, np.inf, shape=(size,), dtype=np.float32)
        self._static_info = self.core_env.static_info(self.params)
        self.metadata = {**self.metadata, "name": spec.id}

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=check_seed(seed))
        warn_unused_options(options)
        out = self._stepper.reset(jax_seed(self.np_random), keep_layer_state=seed is None)
        info = dict(out["info"])
        info.update(self._static_info)
        return out["obs"], info

    def step(self, action: Any):
        out = self._stepper.step(self._stepper.check(action))
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
