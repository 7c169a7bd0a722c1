"""JAX-batched Gymnasium vector env: ``gymnasium.make_vec("motivegym/TrustDilemma-v0", num_envs=4096)``.

All sub-envs step in one compiled, vmapped call, and play the game ``sync``/``async`` play:

* **Seeds** as Gymnasium's vector envs take them: ``reset(seed=s)`` seeds sub-env ``i`` with ``s + i``,
  ``reset(seed=[s_0, s_1, ...])`` one seed each (``None`` entries continue that sub-env's generator).
  Sub-env ``i`` seeded with ``s_i`` plays the game of ``gymnasium.make`` reset with ``seed=s_i``, and after an
  episode ends it draws its next episode's seed from its own generator as ``gymnasium.make``'s env does on
  ``reset()``: same seeds, same results in ``sync``, ``async`` and ``vector_entry_point`` modes.
* **Autoreset** (``metadata["autoreset_mode"]``): ``NEXT_STEP`` by default, as Gymnasium's ``SyncVectorEnv``
  and ``AsyncVectorEnv``: the step that ends an episode returns its terminal observation, the next step ignores
  that sub-env's action and returns its reset observation with reward 0. ``autoreset_mode=SAME_STEP``
  (``make_vec(..., autoreset_mode="same-step")``) resets inside the compiled step, returns the reset
  observation and puts the terminal one in ``info["final_obs"]`` (masked by ``info["_final_obs"]``); its later
  episodes use JAX keys split inside the step (the learners' schedule) rather than the generators.
* **Rewards** float64 ``[num_envs]`` (the sum over agents by default, as ``gymnasium.make``;
  ``scalarize="mean"``) or ``[num_envs, n_agents]`` with ``scalarize=None``, which only this mode offers
  (Gymnasium's ``sync``/``async`` batch scalar rewards). ``info`` holds batched ``payoffs``, ``rewards``,
  ``reward_components`` and the env's info arrays; on a ``NEXT_STEP`` reset step a sub-env's step-only info
  entries are 0. Actions ``[num_envs, n_agents]`` are checked as in ``gymnasium.make`` (errors name the
  sub-env and the agent).
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from motivegym.adapters.gymnasium_env import (
    DEFAULT_SCALARIZE,
    SCALARIZATIONS,
    action_space_of,
    observation_space_of,
    scalarized,
    step_info,
)
from motivegym.adapters.host import (
    ADAPTER_ARGUMENTS,
    build_env,
    check_num_envs,
    check_seed,
    host_stepper,
    jax_seed,
    warn_unused_options,
)
from motivegym.reward_layers import RewardLayer

AUTORESET_MODES = (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP)


def check_autoreset_mode(mode: Any) -> AutoresetMode:
    """``mode`` as an ``AutoresetMode`` if this env implements it, else ``ValueError``. Accepts the enum, its value
    (``"SameStep"``) or its name in any case and punctuation (``"same-step"``, ``"SAME_STEP"``)."""
    key = "".join(ch for ch in str(getattr(mode, "value", mode)).lower() if ch.isalnum())
    found = [m for m in AUTORESET_MODES if m.value.lower() == key]
    if not found:
        raise ValueError(f"autoreset_mode must be one of {[m.value for m in AUTORESET_MODES]}, got {mode!r}")
    return found[0]


def seed_list(seed: int | list | tuple | None, num_envs: int) -> list[int | None]:
    """Gymnasium's vector seeding: ``None`` -> all ``None``, ``s`` -> ``[s, s+1, ...]``, a list -> checked as is."""
    if seed is None:
        return [None] * num_envs
    if isinstance(seed, (list, tuple)):
        if len(seed) != num_envs:
            raise ValueError(f"got {len(seed)} seeds for {num_envs} sub-envs")
        return [check_seed(s) for s in seed]
    first = check_seed(seed)
    return [first + i for i in range(num_envs)]


def merge_rows(values: Any, replacement: Any, rows: np.ndarray) -> Any:
    """``values`` with ``rows`` (bool mask over the leading axis) taken from ``replacement`` (nested dicts too)."""
    if isinstance(values, dict):
        replacement = replacement if isinstance(replacement, dict) else {}
        return {k: merge_rows(v, replacement.get(k, 0), rows) for k, v in values.items()}
    if not isinstance(values, np.ndarray) or values.ndim == 0:
        return values
    merged = values.copy()
    merged[rows] = np.asarray(replacement, values.dtype)[rows] if np.ndim(replacement) else replacement
    return merged


class VectorEnv(gymnasium.vector.VectorEnv):
    """``num_envs`` copies of a motivegym env stepped as one JAX program."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}

    def __init__(
        self,
        env_id: str,
        num_envs: int = 1,
        reward: str | RewardLayer | None = None,
        scalarize: str | None = DEFAULT_SCALARIZE,
        render_mode: str | None = None,
        autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP,
        **env_kwargs: Any,
    ):
        num_envs = check_num_envs(num_envs)
        if render_mode is not None:
            raise ValueError(f"the batched vector env does not render (render_mode must be None, got {render_mode!r}); use gymnasium.make")
        if scalarize not in SCALARIZATIONS or isinstance(scalarize, bool):
            raise ValueError(f"scalarize must be one of {list(SCALARIZATIONS)}, got {scalarize!r}")
        self.autoreset_mode = check_autoreset_mode(autoreset_mode)
        spec, self.core_env, self.params, self.reward_layer = build_env(
            env_id, reward, env_kwargs, ADAPTER_ARGUMENTS + ("scalarize", "autoreset_mode")
        )
        self.num_envs, self.scalarize, self.render_mode = num_envs, scalarize, None
        self.n_agents = self.core_env.n_agents(self.params)
        self._stepper = host_stepper(spec.id, self.core_env, self.params, self.reward_layer, "global", self.num_envs)
        self.single_action_space = action_space_of(self.core_env, self.params)
        self.single_observation_space = observation_space_of(self.core_env, self.params)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self._static_info = self.core_env.static_info(self.params)
        self._generators: list[np.random.Generator | None] = [None] * num_envs
        self._pending = np.zeros(num_envs, bool)  # NEXT_STEP: sub-envs whose episode ended on the last step
        self._np_random_seed = None
        self.metadata = {**self.metadata, "name": spec.id, "autoreset_mode": self.autoreset_mode}

    def _next_seeds(self, rows: np.ndarray) -> np.ndarray:
        """One JAX seed per sub-env in ``rows``, drawn from its generator (0 elsewhere), as ``gymnasium.make``'s
        env draws on ``reset``."""
        seeds = np.zeros(self.num_envs, np.uint32)
        for i in np.flatnonzero(rows):
            if self._generators[i] is None:
                self._generators[i] = np.random.default_rng()
            seeds[i] = jax_seed(self._generators[i])
        return seeds

    def reset(self, *, seed: int | list[int | None] | None = None, options: dict | None = None):
        warn_unused_options(options)
        seeds = seed_list(seed, self.num_envs)
        if isinstance(seed, int):
            super().reset(seed=seed)
        seeded = np.array([s is not None for s in seeds])
        for i in np.flatnonzero(seeded):
            self._generators[i] = np.random.default_rng(seeds[i])
        jax_seeds = self._next_seeds(np.ones(self.num_envs, bool))
        out = None
        for rows, keep in ((seeded, False), (~seeded, True)):  # a seeded sub-env starts a fresh reward layer
            if rows.any():
                reset = self._stepper.reset(jax_seeds, keep_layer_state=keep, rows=rows)
                out = reset if out is None else merge_rows(out, reset, rows)
        self._pending[:] = False
        return out["obs"], {**out["info"], **self._static_info}

    def step(self, actions: Any):
        actions = self._stepper.check(actions)
        pending = self._pending.copy()
        out = self._stepper.step(actions, frozen=pending if pending.any() else None)
        done = out["terminated"] | out["truncated"]
        info = step_info(out, self._static_info)
        rewards = scalarized(out["rewards"], self.scalarize).astype(np.float64)
        if self.autoreset_mode == AutoresetMode.SAME_STEP:
            info["final_obs"] = out["final_obs"]
            info["_final_obs"] = done
            return out["obs"], rewards, out["terminated"], out["truncated"], info
        obs, terminated, truncated = out["final_obs"], out["terminated"], out["truncated"]
        if pending.any():
            reset = self._stepper.reset(self._next_seeds(pending), keep_layer_state=True, rows=pending)
            obs = merge_rows(obs, reset["obs"], pending)
            rewards = merge_rows(rewards, 0.0, pending)
            terminated, truncated = merge_rows(terminated, False, pending), merge_rows(truncated, False, pending)
            info = merge_rows(info, {**reset["info"]}, pending)
            done = done & ~pending
        self._pending = done
        return obs, rewards, terminated, truncated, info
