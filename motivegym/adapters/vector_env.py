"""JAX-batched Gymnasium vector env: ``gymnasium.make_vec("motivegym/TrustDilemma-v0", num_envs=4096)``.

All sub-envs step in one compiled, vmapped call. Auto-reset is **same-step**
(``metadata["autoreset_mode"] = AutoresetMode.SAME_STEP``): a finished sub-env returns its reset
observation and the terminal one is in ``info["final_obs"]`` (masked by ``info["_final_obs"]``).
Rewards are ``[num_envs, n_agents]`` (or ``[num_envs]`` with ``scalarize``); ``info`` holds batched
``payoffs``, ``rewards``, ``reward_components`` and the env's info arrays.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from motivegym.adapters.gymnasium_env import SCALARIZATIONS, action_space_of, step_info
from motivegym.adapters.host import ADAPTER_ARGUMENTS, HostStepper, build_env, compiled_core, warn_unused_options
from motivegym.reward_layers import RewardLayer


class VectorEnv(gymnasium.vector.VectorEnv):
    """``num_envs`` copies of a motivegym env stepped as one JAX program."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(
        self,
        env_id: str,
        num_envs: int = 1,
        reward: str | RewardLayer | None = None,
        scalarize: str | None = None,
        render_mode: str | None = None,
        **env_kwargs: Any,
    ):
        if int(num_envs) < 1:
            raise ValueError(f"num_envs must be >= 1, got {num_envs}")
        if render_mode is not None:
            raise ValueError("the batched vector env does not render; use gymnasium.make for rendering")
        if scalarize not in SCALARIZATIONS:
            raise ValueError(f"scalarize must be one of {SCALARIZATIONS}, got {scalarize!r}")
        spec, self.core_env, self.params, self.reward_layer = build_env(
            env_id, reward, env_kwargs, ADAPTER_ARGUMENTS + ("scalarize",)
        )
        self.num_envs, self.scalarize, self.render_mode = int(num_envs), scalarize, None
        self.n_agents = self.core_env.n_agents(self.params)
        self._stepper = HostStepper(compiled_core(spec.id, env_kwargs, self.core_env, self.params, self.reward_layer, "global", self.num_envs))
        self.single_action_space = action_space_of(self.core_env, self.params)
        size = self.core_env.global_state_size(self.params)
        self.single_observation_space = gymnasium.spaces.Box(-np.inf, np.inf, shape=(size,), dtype=np.float32)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self._static_info = self.core_env.static_info(self.params)
        self._np_random_seed = None
        self.metadata = {**self.metadata, "name": spec.id}
        self._discrete = self.core_env.action_kind == "discrete"

    def reset(self, *, seed: int | list[int] | None = None, options: dict | None = None):
        warn_unused_options(options)
        if isinstance(seed, (list, tuple)):
            raise ValueError("pass one int seed: sub-env keys are split from it")
        super().reset(seed=seed)
        jax_seed = int(self.np_random.integers(0, 2**31 - 1))
        out = self._stepper.reset(jax_seed, keep_layer_state=seed is None)
        return out["obs"], {**out["info"], **self._static_info}

    def step(self, actions: Any):
        dtype = np.int32 if self._discrete else np.float32
        actions = np.asarray(actions, dtype=dtype)
        if actions.shape != (self.num_envs, self.n_agents):
            raise ValueError(f"actions must have shape ({self.num_envs}, {self.n_agents}), got {actions.shape}")
        out = self._stepper.step(actions)
        rewards = out["rewards"]
        if self.scalarize == "sum":
            rewards = rewards.sum(axis=-1)
        elif self.scalarize == "mean":
            rewards = rewards.mean(axis=-1)
        done = out["terminated"] | out["truncated"]
        info = step_info(out, self._static_info)
        info["final_obs"] = out["final_obs"]
        info["_final_obs"] = done
        return out["obs"], rewards, out["terminated"], out["truncated"], info
