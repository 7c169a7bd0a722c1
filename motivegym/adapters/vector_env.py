"""JAX-batched Gymnasium vector env: ``gymnasium.make_vec("motivegym/TrustDilemma-v0", num_envs=4096)``.

All sub-envs step in one compiled, vmapped call. Auto-reset is **same-step**
(``metadata["autoreset_mode"] = AutoresetMode.SAME_STEP``): a finished sub-env returns its reset
observation and the terminal one is in ``info["final_obs"]`` (masked by ``info["_final_obs"]``).
Rewards are ``[num_envs, n_agents]`` (or ``[num_envs]`` with ``scalarize``); ``info`` holds batched
``payoffs``, ``rewards``, ``reward_components`` and the env's info arrays. Actions ``[num_envs, n_agents]``
are checked as in ``gymnasium.make`` (errors name the sub-env and the agent). Sub-env 0 plays the same game
as ``gymnasium.make`` with the same seed (keys: ``motivegym.adapters.host``).
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from motivegym.adapters.gymnasium_env import SCALARIZATIONS, action_space_of, step_info
from motivegym.adapters.host import (
    ADAPTER_ARGUMENTS,
    build_env,
    check_choice,
    check_num_envs,
    check_seed,
    host_stepper,
    jax_seed,
    warn_unused_options,
)
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
        num_envs = check_num_envs(num_envs)
        if render_mode is not None:
            raise ValueError(f"the batched vector env does not render (render_mode must be None, got {render_mode!r}); use gymnasium.make")
        check_choice("scalarize", scalarize, SCALARIZATIONS)
        spec, self.core_env, self.params, self.reward_layer = build_env(
            env_id, reward, env_kwargs, ADAPTER_ARGUMENTS + ("scalarize",)
        )
        self.num_envs, self.scalarize, self.render_mode = num_envs, scalarize, None
        self.n_agents = self.core_env.n_agents(self.params)
        self._stepper = host_stepper(spec.id, self.core_env, self.params, self.reward_layer, "global", self.num_envs)
        self.single_action_space = action_space_of(self.core_env, self.params)
        size = self.core_env.global_state_size(self.params)
        self.single_observation_space = gymnasium.spaces.Box(-np.inf, np.inf, shape=(size,), dtype=np.float32)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self._static_info = self.core_env.static_info(self.params)
        self._np_random_seed = None
        self.metadata = {**self.metadata, "name": spec.id}

    def reset(self, *, seed: int | list[int] | None = None, options: dict | None = None):
        warn_unused_options(options)
        if isinstance(seed, (list, tuple)):
            raise ValueError("pass one int seed: sub-env keys are split from it")
        super().reset(seed=check_seed(seed))
        out = self._stepper.reset(jax_seed(self.np_random), keep_layer_state=seed is None)
        return out["obs"], {**out["info"], **self._static_info}

    def step(self, actions: Any):
        out = self._stepper.step(self._stepper.check(actions))
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
