"""PettingZoo adapters: ``motivegym.parallel_env(id, ...)`` and ``motivegym.aec_env(id, ...)``.

Both run the env's own JAX step (the same compiled pipeline as Gymnasium, so no env logic is
skipped: spec §7.24 fixed). Agents are ``agent_0 … agent_{n-1}``; each observes its own row of
``env.observe`` (a ``Box`` with the env's ``observation_bounds``) and acts with ``Box(low_i, high_i, (1,))``
(continuous) or ``Discrete(k)``; ``state()`` is the global state, in ``state_space``.
Rewards are the reward layer's per-agent values; each agent's info holds its ``payoff``,
``reward`` and ``reward_components`` plus the shared env info under ``"env"`` (``info="nested"``, the default).
``info="flat"`` gives each agent a flat dict of numbers with the same keys and shapes at reset and at every
step (``payoff``, ``reward``, ``reward_components/<name>``, ``env/<key>``; zeros where a step has not happened
yet; strings such as action names are left out): what array-based tools (TorchRL's ``PettingZooWrapper``)
need. Nested stays the default because it keeps the text entries (action names, phase labels) and existing
code reads ``infos[agent]["env"][...]``.

The horizon is ``max_steps`` (env steps) on every env; PettingZoo's conventional ``max_cycles`` is accepted
as its alias (a conflicting pair raises ``ValueError``), so ``pettingzoo.test.max_cycles_test`` runs on
:func:`env_module`. ``render_mode="human"`` prints the text view at reset, at each step and on ``render()``
(which returns ``None``); ``"ansi"`` returns the text, ``"rgb_array"`` an ``uint8`` image (grid envs).
The AEC env is PettingZoo's standard ``parallel_to_aec`` conversion: actions are collected in
``agent_0 …`` order and the joint step runs when the last agent has acted. Each agent's action is checked
(:func:`motivegym.core.actions.check_actions`) when it is given, so a refused action is not stored and the
agent can simply act again; the Parallel env checks the joint action the same way (errors name the agent).
"""

from __future__ import annotations

import functools
import types
from collections.abc import Iterator
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

#: ``info=`` choices: per-agent nested dicts (default) or flat, numeric, reset/step-consistent dicts
INFO_MODES = ("nested", "flat")
#: keywords the PettingZoo constructors take besides the env's parameters
PETTINGZOO_ARGUMENTS = (*ADAPTER_ARGUMENTS, "info", "max_cycles")


def horizon_kwargs(env_kwargs: dict[str, Any]) -> dict[str, Any]:
    """``env_kwargs`` with PettingZoo's ``max_cycles`` turned into ``max_steps`` (both given and different: ``ValueError``)."""
    if "max_cycles" not in env_kwargs:
        return dict(env_kwargs)
    kwargs = {k: v for k, v in env_kwargs.items() if k != "max_cycles"}
    cycles = env_kwargs["max_cycles"]
    if "max_steps" in kwargs and not _same_number(kwargs["max_steps"], cycles):
        raise ValueError(
            f"max_cycles={cycles!r} conflicts with max_steps={kwargs['max_steps']!r}: give one horizon "
            "(max_cycles is PettingZoo's name for max_steps, the number of env steps)"
        )
    kwargs["max_steps"] = cycles
    return kwargs


def _same_number(a: Any, b: Any) -> bool:
    """Whether ``a`` and ``b`` are one and the same scalar (``4``, ``np.int32(4)``); anything else is ``False``."""
    try:
        return bool(np.asarray(a) == np.asarray(b)) and np.ndim(a) == 0
    except (TypeError, ValueError):
        return False


def flat_items(prefix: str, value: Any) -> Iterator[tuple[str, np.ndarray]]:
    """The numeric leaves of ``value`` as ``(key, array)``: dicts nest with ``/``; strings (and tuples of them) are left out."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from flat_items(f"{prefix}/{key}" if prefix else str(key), item)
        return
    try:
        array = np.asarray(value)
    except (TypeError, ValueError):
        return
    if array.dtype.kind in "biuf":
        yield prefix, array


def flat_agent_info(index: int, out: dict[str, Any], env_info: dict[str, Any]) -> dict[str, np.ndarray]:
    """Agent ``index``'s flat info from a step result ``out`` (``payoffs``, ``rewards``, ``components``) and the env info."""
    info = {"payoff": np.float32(out["payoffs"][index]), "reward": np.float32(out["rewards"][index])}
    info.update({f"reward_components/{name}": np.float32(values[index]) for name, values in out["components"].items()})
    info.update(flat_items("env", env_info))
    return info


def zero_result(unpacker: Any) -> dict[str, Any]:
    """A result of ``unpacker``'s layout (a :class:`motivegym.core.packing.HostUnpacker`) with every entry zero."""
    size = unpacker.groups[-1][2] if unpacker.groups else 0
    return unpacker.to_numpy(np.zeros(size, np.float32))


class ParallelEnv(PettingZooParallelEnv):
    """A registered motivegym env as a PettingZoo ``ParallelEnv``."""

    metadata = {"render_modes": ["ansi", "human", "rgb_array"], "name": "motivegym", "is_parallelizable": True}  # narrowed per env

    def __init__(
        self,
        env_id: str,
        reward: str | RewardLayer | None = None,
        render_mode: str | None = None,
        info: str = "nested",
        **env_kwargs: Any,
    ):
        self.info_mode = check_choice("info", info, list(INFO_MODES))
        env_kwargs = horizon_kwargs(env_kwargs)
        spec, self.core_env, self.params, self.reward_layer = build_env(env_id, reward, env_kwargs, PETTINGZOO_ARGUMENTS)
        self.metadata = {**self.metadata, "render_modes": self.core_env.render_modes()}
        self.render_mode = check_choice("render_mode", render_mode, [None, *self.metadata["render_modes"]])
        self.env_id = spec.id
        self.metadata = {**self.metadata, "name": f"motivegym_{spec.id}"}
        n = self.core_env.n_agents(self.params)
        self.possible_agents = [f"agent_{i}" for i in range(n)]
        self.agents: list[str] = []
        self._index = {agent: i for i, agent in enumerate(self.possible_agents)}
        self._stepper = host_stepper(spec.id, self.core_env, self.params, self.reward_layer, "agents", None)
        low, high = self.core_env.observation_bounds(self.params)
        obs_size = self.core_env.observation_size(self.params)
        self._observation_spaces = {
            a: gymnasium.spaces.Box(low, high, shape=(obs_size,), dtype=np.float32) for a in self.possible_agents
        }
        #: the space of :meth:`state` (the global state; the Gymnasium observation)
        self.state_space = gymnasium.spaces.Box(low, high, shape=(self.core_env.global_state_size(self.params),), dtype=np.float32)
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
        self._rng = np.random.default_rng()
        step_zero = zero_result(self._stepper.step_unpacker)
        #: the flat-info layout: every key a step or a reset reports, zero until it happens
        self._zero_step = {**step_zero, "info": {**zero_result(self._stepper.reset_unpacker)["info"], **step_zero["info"]}}

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
        observations = {a: out["obs"][i] for i, a in enumerate(self.agents)}
        if self.info_mode == "flat":
            infos = self._flat_infos({**self._zero_step, "info": out["info"]})
        else:
            infos = {a: {"env": {**out["info"], **self._static_info}} for a in self.agents}
        if self.render_mode == "human":
            self.render()
        return observations, infos

    def _nested_infos(self, out: dict[str, Any]) -> dict[str, dict[str, Any]]:
        """Per live agent: ``payoff``, ``reward``, ``reward_components`` and the shared env info under ``"env"``."""
        env_info = {**out["info"], **self._static_info}
        return {
            a: {
                "payoff": float(out["payoffs"][i]),
                "reward": float(out["rewards"][i]),
                "reward_components": {name: float(v[i]) for name, v in out["components"].items()},
                "env": env_info,
            }
            for i, a in enumerate(self.agents)
        }

    def _flat_infos(self, out: dict[str, Any]) -> dict[str, dict[str, np.ndarray]]:
        """Flat infos of the live agents; the layout of :attr:`_zero_step` filled from ``out``."""
        env_info = {**self._zero_step["info"], **out["info"], **self._static_info}
        return {a: flat_agent_info(self._index[a], out, env_info) for a in self.agents}

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
        terminated, truncated = bool(out["terminated"]), bool(out["truncated"])
        observations = {a: out["obs"][i] for i, a in enumerate(self.agents)}
        rewards = {a: float(out["rewards"][i]) for i, a in enumerate(self.agents)}
        terminations = dict.fromkeys(self.agents, terminated)
        truncations = dict.fromkeys(self.agents, truncated)
        infos = self._flat_infos(out) if self.info_mode == "flat" else self._nested_infos(out)
        if terminated or truncated:
            self.agents = []
        if self.render_mode == "human":
            self.render()
        return observations, rewards, terminations, truncations, infos

    def state(self) -> np.ndarray:
        """The global state (the Gymnasium observation) of the current env state."""
        return np.asarray(self.core_env.global_state(self._stepper.state(), self.params))

    def render(self) -> str | np.ndarray | None:
        """``"ansi"``: the text view; ``"rgb_array"``: an ``[H, W, 3]`` ``uint8`` image; ``"human"``: prints the text view, returns ``None``."""
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode")
            return None
        if self.render_mode == "rgb_array":
            return np.asarray(self.core_env.render_rgb(self._stepper.state(), self.params), np.uint8)
        text = self.core_env.render_text(self._stepper.state(), self.params)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self):
        pass


def parallel_env(env_id: str, reward: str | RewardLayer | None = None, render_mode: str | None = None, **env_kwargs: Any) -> ParallelEnv:
    """PettingZoo Parallel env of a registered id (``"TrustDilemma-v0"`` or ``"motivegym/TrustDilemma-v0"``).

    Besides the env's parameters it takes ``info="nested"|"flat"`` and ``max_cycles`` (alias of ``max_steps``)."""
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
    """A constructor of ``env_id`` with ``kwargs`` bound, callable with more keywords (what PettingZoo's tests take)."""
    make = {"parallel": parallel_env, "aec": aec_env}[check_choice("api", api, ["parallel", "aec"])]
    return functools.partial(make, env_id, **kwargs)


def env_module(env_id: str, **kwargs: Any) -> types.SimpleNamespace:
    """``env_id`` shaped like a PettingZoo environment module: ``env(**kw)`` (AEC), ``raw_env`` and ``parallel_env(**kw)``.

    ``pettingzoo.test.max_cycles_test(env_module("PrisonersDilemma-v0"))`` runs as on PettingZoo's own envs."""
    aec = env_factory(env_id, "aec", **kwargs)
    return types.SimpleNamespace(env=aec, raw_env=aec, parallel_env=env_factory(env_id, "parallel", **kwargs))
