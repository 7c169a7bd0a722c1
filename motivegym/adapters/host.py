"""The one jitted env + reward-layer step that every host-side adapter drives.

``HostStepper`` fuses ``env.step`` and ``layer.apply`` into one compiled call on packed buffers
(see ``core/packing.py``) and returns numpy results. With ``num_envs`` it is vmapped with
same-step auto-reset (the vector env). Adapters only translate these results into an API.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from motivegym.core.batching import select_tree
from motivegym.core.env import FunctionalEnv, Transition
from motivegym.core.packing import HostUnpacker, TreePacker
from motivegym.core.registry import get_spec
from motivegym.reward_layers import LayerSpec, RewardLayer, reward_layer

ADAPTER_ARGUMENTS = ("reward", "render_mode")


def build_env(env_id: str, reward: str | RewardLayer | None, env_kwargs: dict[str, Any], adapter_arguments: tuple[str, ...]):
    """Resolve ``(spec, env, params, layer)``; unknown keyword arguments raise ``ValueError`` listing all valid ones."""
    from motivegym.core.errors import check_names

    spec = get_spec(env_id)
    env = spec.make_env()
    check_names("keyword argument", env_kwargs, env.parameter_names() + adapter_arguments, spec.gymnasium_id)
    params = env.default_params(**env_kwargs)
    layer = reward_layer(spec.default_reward if reward is None else reward)
    return spec, env, params, layer


def warn_unused_options(options: dict | None) -> None:
    """motivegym envs define no reset options; say so rather than ignore them silently."""
    if options:
        import gymnasium

        gymnasium.logger.warn(f"motivegym envs define no reset options; ignoring {sorted(options)}")


def validate_actions(actions: Any, n_agents: int, agent_names: tuple[str, ...], discrete: bool) -> np.ndarray:
    """Joint actions as a ``[n_agents]`` array; NaN/inf or wrong shapes raise ``ValueError`` naming the agent."""
    try:
        array = np.asarray(actions, dtype=np.int32 if discrete else np.float32)
    except (TypeError, ValueError) as error:
        raise ValueError(f"actions must be numeric with shape ({n_agents},): {error}") from None
    if array.shape != (n_agents,):
        raise ValueError(f"actions must have shape ({n_agents},) (one per agent), got shape {array.shape}")
    if not discrete:
        bad = np.flatnonzero(~np.isfinite(array))
        if bad.size:
            label = lambda i: f"agent_{i}" + (f" ({agent_names[i]})" if agent_names[i] != f"agent_{i}" else "")  # noqa: E731
            names = ", ".join(f"{label(i)}={array[i]}" for i in bad)
            raise ValueError(f"non-finite action for agent(s) {names}")
    return array


class CompiledCore:
    """The jitted reset/step functions of ``env`` under ``layer`` and their result layouts.

    ``view="global"`` returns ``env.global_state`` as ``obs`` (Gymnasium joint view);
    ``view="agents"`` returns the per-agent observations ``[n, d]`` (PettingZoo).
    Built once per (env id, params, layer, view, num_envs) by :func:`compiled_core` and shared by
    every adapter instance, so creating many envs compiles once.
    """

    def __init__(self, env: FunctionalEnv, params: Any, layer: RewardLayer, view: str = "global", num_envs: int | None = None):
        if view not in ("global", "agents"):
            raise ValueError(f"view must be 'global' or 'agents', got {view!r}")
        self.num_envs = num_envs
        self.n_agents = env.n_agents(params)
        spec = LayerSpec(n_agents=self.n_agents, obs_size=env.observation_size(params))

        def view_of(state):
            return env.global_state(state, params) if view == "global" else env.observe(state, params)

        def reset_single(key, layer_state):
            key, reset_key, layer_key = jax.random.split(key, 3)
            state, _ = env.reset(reset_key, params)
            layer_state = layer.init(layer_key, spec) if layer_state is None else layer_state
            info = env.describe(state, params) if hasattr(env, "describe") else {}
            return (state, layer_state, key), {"obs": view_of(state), "info": info}

        def step_single(carry, actions):
            state, layer_state, key = carry
            key, step_key, reset_key = jax.random.split(key, 3)
            obs = env.observe(state, params)
            next_state, next_obs, payoffs, done, info = env.step(step_key, state, actions, params)
            transition = Transition(obs, actions, payoffs, next_obs, info["terminated"], info["truncated"], info)
            layer_state, rewards, components = layer.apply(layer_state, transition)
            out = {
                "obs": view_of(next_state),
                "payoffs": payoffs,
                "rewards": rewards,
                "components": components,
                "terminated": info["terminated"],
                "truncated": info["truncated"],
                "info": info,
            }
            if num_envs is not None:  # same-step auto-reset
                reset_state, _ = env.reset(reset_key, params)
                next_state = select_tree(done, reset_state, next_state)
                out["final_obs"] = out["obs"]
                out["obs"] = view_of(next_state)
            return (next_state, layer_state, key), out

        key = jax.random.PRNGKey(0)
        if num_envs is None:
            carry_shape, reset_out = jax.eval_shape(lambda k: reset_single(k, None), key)
            action_shape = jax.ShapeDtypeStruct((self.n_agents,), jnp.int32 if env.action_kind == "discrete" else jnp.float32)
            _, step_out = jax.eval_shape(step_single, carry_shape, action_shape)
        else:
            keys = jax.random.split(key, num_envs)
            carry_shape, reset_out = jax.eval_shape(jax.vmap(lambda k: reset_single(k, None)), keys)
            dtype = jnp.int32 if env.action_kind == "discrete" else jnp.float32
            action_shape = jax.ShapeDtypeStruct((num_envs, self.n_agents), dtype)
            _, step_out = jax.eval_shape(jax.vmap(step_single), carry_shape, action_shape)
        unbatched = jax.tree.map(lambda x: jax.ShapeDtypeStruct(x.shape[1:], x.dtype), carry_shape) if num_envs else carry_shape
        self.carry_packer = TreePacker(unbatched)
        strip = (lambda tree: jax.tree.map(lambda x: jax.ShapeDtypeStruct(x.shape[1:], x.dtype), tree)) if num_envs else (lambda t: t)
        self.reset_unpacker = HostUnpacker(strip(reset_out))
        self.step_unpacker = HostUnpacker(strip(step_out))
        carry_packer, reset_unpacker, step_unpacker = self.carry_packer, self.reset_unpacker, self.step_unpacker

        def packed_reset(key, packed_layer_state):
            layer_state = None if packed_layer_state is None else packed_layer_state
            carry, out = reset_single(key, layer_state)
            return carry_packer.pack(carry), reset_unpacker.flatten(out)

        def packed_step(packed_carry, actions):
            carry, out = step_single(carry_packer.unpack(packed_carry), actions)
            return carry_packer.pack(carry), step_unpacker.flatten(out)

        def reset_keeping_layer(key, packed_carry):
            layer_state = carry_packer.unpack(packed_carry)[1]
            carry, out = reset_single(key, layer_state)
            return carry_packer.pack(carry), reset_unpacker.flatten(out)

        if num_envs is not None:
            packed_reset = jax.vmap(packed_reset, in_axes=(0, None))
            packed_step = jax.vmap(packed_step)
            reset_keeping_layer = jax.vmap(reset_keeping_layer)
        self.reset_fn = jax.jit(lambda key: packed_reset(key, None))
        self.reset_keep_fn = jax.jit(reset_keeping_layer)
        self.step_fn = jax.jit(packed_step)
        self.batch_shape = () if num_envs is None else (num_envs,)


_COMPILED: dict[tuple, CompiledCore] = {}


def compiled_core(env_id: str, env_kwargs: dict[str, Any], env, params, layer: RewardLayer, view: str, num_envs: int | None) -> CompiledCore:
    """A cached :class:`CompiledCore` (keyed by the env id, the kwargs' repr and the layer)."""
    key = (env_id, repr(sorted(env_kwargs.items())), layer, view, num_envs)
    try:
        hash(key)
    except TypeError:  # an unhashable user layer: no caching
        return CompiledCore(env, params, layer, view, num_envs)
    if key not in _COMPILED:
        _COMPILED[key] = CompiledCore(env, params, layer, view, num_envs)
    return _COMPILED[key]


class HostStepper:
    """One env instance: the current packed carry plus a shared :class:`CompiledCore`."""

    def __init__(self, core: CompiledCore):
        self.core = core
        self.n_agents = core.n_agents
        self.batch_shape = core.batch_shape
        self.num_envs = core.num_envs
        self.reset_unpacker, self.step_unpacker = core.reset_unpacker, core.step_unpacker
        self._reset, self._reset_keep, self._step = core.reset_fn, core.reset_keep_fn, core.step_fn
        self._carry: Any = None

    def reset(self, seed: int, keep_layer_state: bool = False) -> dict:
        key = jax.random.PRNGKey(seed)
        if self.num_envs is not None:
            key = jax.random.split(key, self.num_envs)
        if keep_layer_state and self._carry is not None:
            self._carry, out = self._reset_keep(key, self._carry)
        else:
            self._carry, out = self._reset(key)
        return self.reset_unpacker.to_numpy(out, self.batch_shape)

    def step(self, actions: np.ndarray) -> dict:
        if self._carry is None:
            raise RuntimeError("call reset() before step()")
        self._carry, out = self._step(self._carry, actions)
        return self.step_unpacker.to_numpy(out, self.batch_shape)

    def state(self) -> Any:
        """The current (unpacked) env state, for rendering."""
        if self._carry is None:
            raise RuntimeError("call reset() first")
        return self.core.carry_packer.unpack(self._carry)[0]
