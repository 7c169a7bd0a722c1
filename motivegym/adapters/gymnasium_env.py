"""Gymnasium adapter: the joint (centralised-control) view of a motivegym env.

``gymnasium.make("motivegym/TrustDilemma-v0", reward="private")`` (docs: ``docs/gymnasium.md``)

* **Action:** the joint action ``Box(low_i, high_i, (n,))`` with **per-agent** bounds (``MultiDiscrete`` for
  discrete envs). Checked by :func:`motivegym.core.actions.check_actions` before it enters the JAX step:
  finite values outside ``[0, e_i]`` are clipped by the env; NaN/inf, complex, non-integer or out-of-range
  discrete actions and a wrong shape raise ``ValueError`` naming the agent or the argument.
* **Observation:** ``env.global_state`` (for the coopetition family the reference's legacy layout) in a
  ``Box`` with the env's :meth:`~motivegym.core.env.FunctionalEnv.observation_bounds`.
* **Reward:** a Python ``float``, by default the **sum** of the reward layer's per-agent rewards
  (``scalarize="sum"``): the joint controller's return is the team's welfare under the chosen reward layer,
  which is what Gymnasium's contract (a scalar reward), its wrappers and single-agent learners expect.
  ``scalarize="mean"`` divides by ``n``; ``scalarize=None`` returns the per-agent vector (float32 ``[n]``),
  in the style of MO-Gymnasium's vector rewards.
* **Info:** the env's info plus ``payoffs``, ``rewards`` and ``reward_components`` (each ``[n]``).

The registered entry point is :func:`make_env`: in a process forked after JAX started (Gymnasium's
``AsyncVectorEnv`` with the default ``fork`` start method on Linux) JAX would deadlock, so there it returns a
:class:`SubprocessEnv` that runs the env in a fresh interpreter instead.
"""

from __future__ import annotations

import os
import pickle
import struct
import subprocess
import sys
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
from motivegym.core.cpu_defaults import backends_initialized
from motivegym.reward_layers import RewardLayer

SCALARIZATIONS = (None, "sum", "mean")
#: the default reward reduction of the joint view (a float: Gymnasium's contract)
DEFAULT_SCALARIZE = "sum"


def action_space_of(env, params) -> gymnasium.spaces.Space:
    """The joint action space: per-agent Box bounds, or ``MultiDiscrete`` for discrete envs."""
    n = env.n_agents(params)
    if env.action_kind == "discrete":
        return gymnasium.spaces.MultiDiscrete(np.full(n, env.num_actions(params)))
    low, high = (np.asarray(b, np.float32) for b in env.action_bounds(params))
    return gymnasium.spaces.Box(low=low, high=high, shape=(n,), dtype=np.float32)


def observation_space_of(env, params) -> gymnasium.spaces.Box:
    """The joint observation space: ``global_state`` in the env's observation bounds."""
    low, high = env.observation_bounds(params)
    return gymnasium.spaces.Box(np.float32(low), np.float32(high), shape=(env.global_state_size(params),), dtype=np.float32)


def scalarized(rewards: np.ndarray, scalarize: str | None) -> Any:
    """Per-agent ``rewards`` reduced over the last (agent) axis: float64 for ``"sum"``/``"mean"``, unchanged for ``None``."""
    if scalarize == "sum":
        return rewards.sum(axis=-1, dtype=np.float64)
    if scalarize == "mean":
        return rewards.mean(axis=-1, dtype=np.float64)
    return rewards


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
        scalarize: str | None = DEFAULT_SCALARIZE,
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
        self.observation_space = observation_space_of(self.core_env, self.params)
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
        rewards = scalarized(out["rewards"], self.scalarize)
        reward = rewards if self.scalarize is None else float(rewards)
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


# ----- fork safety (Gymnasium's AsyncVectorEnv forks its workers on Linux) -----
_FORKED_AFTER_JAX = False


def _note_fork() -> None:
    """At-fork hook (child side): remember whether the parent had started JAX (its thread pools are gone here)."""
    global _FORKED_AFTER_JAX
    _FORKED_AFTER_JAX = _FORKED_AFTER_JAX or backends_initialized()


os.register_at_fork(after_in_child=_note_fork)


def forked_after_jax() -> bool:
    """Whether this process is a ``fork`` of a process whose JAX backends existed (JAX deadlocks here)."""
    return _FORKED_AFTER_JAX


def make_env(**kwargs: Any) -> gymnasium.Env:
    """The registered entry point: a :class:`GymnasiumEnv`, or a :class:`SubprocessEnv` running one in a fresh
    interpreter when this process was forked after JAX started (where using JAX would deadlock)."""
    return SubprocessEnv(kwargs) if forked_after_jax() else GymnasiumEnv(**kwargs)


make_env.metadata = GymnasiumEnv.metadata  # read by gymnasium.make for render-mode checks


def send(stream, message: Any) -> None:
    """Write one length-prefixed pickled message."""
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(struct.pack("<Q", len(data)) + data)
    stream.flush()


def receive(stream) -> Any:
    """Read one length-prefixed pickled message (``EOFError`` when the other side is gone)."""
    header = stream.read(8)
    if len(header) < 8:
        raise EOFError("the env process closed its pipe")
    (size,) = struct.unpack("<Q", header)
    return pickle.loads(stream.read(size))


def host_value(value: Any) -> Any:
    """``value`` with JAX arrays turned into numpy (the forked side must not create JAX arrays)."""
    import jax

    return jax.tree.map(lambda x: np.asarray(x) if isinstance(x, jax.Array) else x, value)


def serve(requests=None, replies=None) -> None:
    """The env process of :class:`SubprocessEnv`: build a :class:`GymnasiumEnv`, answer calls until ``close``."""
    if requests is None:
        replies = os.fdopen(os.dup(1), "wb")
        os.dup2(2, 1)  # the env's own prints (render_mode="human") go to stderr, not into the protocol
        requests = sys.stdin.buffer
    env = None
    while True:
        name, args, kwargs = receive(requests)
        try:
            if name == "__init__":
                env = GymnasiumEnv(**kwargs)
                value = {k: getattr(env, k) for k in ("action_space", "observation_space", "metadata", "render_mode")}
            elif name == "getattr":
                value = host_value(getattr(env, args[0]))
            else:
                value = host_value(getattr(env, name)(*args, **kwargs))
            send(replies, ("ok", value))
        except Exception as error:  # noqa: BLE001 - every failure goes back to the caller
            try:
                send(replies, ("error", error))
            except Exception:  # noqa: BLE001 - an unpicklable exception
                send(replies, ("error", RuntimeError(repr(error))))
        if name == "close":
            return


class SubprocessEnv(gymnasium.Env):
    """A :class:`GymnasiumEnv` in a fresh interpreter, driven over a pipe (the fork-safe entry point's choice).

    Used only where JAX cannot run (a process forked after JAX started); spaces, metadata, ``reset``,
    ``step``, ``render`` and ``close`` behave as in the env it runs, other attributes are fetched from it.
    """

    def __init__(self, kwargs: dict[str, Any]):
        self._process = subprocess.Popen(
            [sys.executable, "-c", "from motivegym.adapters.gymnasium_env import serve; serve()"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        described = self._call("__init__", **kwargs)
        self.action_space, self.observation_space = described["action_space"], described["observation_space"]
        self.metadata, self.render_mode = described["metadata"], described["render_mode"]

    def _call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        send(self._process.stdin, (name, args, kwargs))
        status, value = receive(self._process.stdout)
        if status == "error":
            raise value
        return value

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        return self._call("reset", seed=seed, options=options)

    def step(self, action: Any):
        return self._call("step", np.asarray(action))

    def render(self):
        return self._call("render")

    def close(self) -> None:
        if self._process.poll() is None:
            try:
                self._call("close")
            finally:
                self._process.stdin.close()
                self._process.wait()
                self._process.stdout.close()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return self._call("getattr", name)
