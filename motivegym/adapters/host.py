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

from motivegym.core.batching import reset_finished
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


def validate_actions(actions: Any, n_agents: int) -> np.ndarray:
    """Joint actions as a ``[n_agents]`` array; wrong shapes or non-numbers raise ``ValueError``.

    Finiteness is checked inside the compiled step (see :meth:`HostStepper.step`), which costs nothing here.
    """
    if type(actions) is np.ndarray and actions.shape == (n_agents,) and actions.dtype.kind in "fiub":
        return actions
    try:
        array = np.asarray(actions, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise ValueError(f"actions must be numeric with shape ({n_agents},): {error}") from None
    if array.shape != (n_agents,):
        raise ValueError(f"actions must have shape ({n_agents},) (one per agent), got shape {array.shape}")
    return array


def nonfinite_message(actions: np.ndarray, agent_names: tuple[str, ...]) -> str:
    """Name every agent (and sub-env, for batched actions) whose action is NaN or inf."""
    label = lambda i: f"agent_{i}" + (f" ({agent_names[i]})" if agent_names[i] != f"agent_{i}" else "")  # noqa: E731
    bad = np.argwhere(~np.isfinite(actions))
    if actions.ndim == 1:
        return "non-finite action for agent(s) " + ", ".join(f"{label(i)}={actions[i]}" for (i,) in bad)
    return "non-finite action for " + ", ".join(f"sub-env {e} for {label(i)}={actions[e, i]}" for e, i in bad)


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
            """One env's step; with ``num_envs`` also returns the key for its possible reset and its done flag."""
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
            return (next_state, layer_state, key), out, (reset_key, done)

        def step_batch(carry, actions):
            """``num_envs`` steps with same-step auto-reset of the finished envs (see ``reset_finished``)."""
            (next_states, layer_states, keys), out, (reset_keys, done) = jax.vmap(step_single)(carry, actions)
            next_states, (obs,) = reset_finished(env, params, reset_keys, done, next_states, (out["obs"],), (view_of,))
            return (next_states, layer_states, keys), {**out, "final_obs": out["obs"], "obs": obs}

        def step(carry, actions):
            return step_single(carry, actions)[:2] if num_envs is None else step_batch(carry, actions)

        key = jax.random.PRNGKey(0)
        if num_envs is None:
            carry_shape, reset_out = jax.eval_shape(lambda k: reset_single(k, None), key)
            action_shape = jax.ShapeDtypeStruct((self.n_agents,), jnp.int32 if env.action_kind == "discrete" else jnp.float32)
            _, step_out = jax.eval_shape(step, carry_shape, action_shape)
        else:
            keys = jax.random.split(key, num_envs)
            carry_shape, reset_out = jax.eval_shape(jax.vmap(lambda k: reset_single(k, None)), keys)
            dtype = jnp.int32 if env.action_kind == "discrete" else jnp.float32
            action_shape = jax.ShapeDtypeStruct((num_envs, self.n_agents), dtype)
            _, step_out = jax.eval_shape(step, carry_shape, action_shape)
        unbatched = jax.tree.map(lambda x: jax.ShapeDtypeStruct(x.shape[1:], x.dtype), carry_shape) if num_envs else carry_shape
        self.carry_packer = TreePacker(unbatched)
        strip = (lambda tree: jax.tree.map(lambda x: jax.ShapeDtypeStruct(x.shape[1:], x.dtype), tree)) if num_envs else (lambda t: t)
        self.reset_unpacker = HostUnpacker(strip(reset_out))
        self.step_unpacker = HostUnpacker(strip(step_out))
        self.carry_words = self.carry_packer.bounds[-1]
        self.action_dtype = np.dtype(action_shape.dtype)
        self.agent_names = env.agent_names(params)
        carry_packer, reset_unpacker, step_unpacker = self.carry_packer, self.reset_unpacker, self.step_unpacker
        carry_words = self.carry_words

        # Each compiled call takes and returns ONE uint32 buffer ``[carry words | action or result words]``:
        # on CPU every extra argument or result of a jitted call costs microseconds of dispatch.
        def as_words(results):
            return jax.lax.bitcast_convert_type(results, jnp.uint32)

        def packed_reset(key, layer_state):
            carry, out = reset_single(key, layer_state)
            return jnp.concatenate([carry_packer.pack(carry), as_words(reset_unpacker.flatten(out))])

        def packed_step(buffer):  # [carry words | action words], with a leading env axis when batched
            batched = jax.vmap if num_envs is not None else (lambda f: f)
            carry = batched(carry_packer.unpack)(buffer[..., :carry_words])
            actions = jax.lax.bitcast_convert_type(buffer[..., carry_words:], action_shape.dtype)
            carry, out = step(carry, actions)
            # last word: 1 when every action of the env is finite; the host raises on 0 before committing the carry
            finite = jnp.all(jnp.isfinite(actions), axis=-1).astype(jnp.uint32)[..., None]
            results = as_words(batched(step_unpacker.flatten)(out))
            return jnp.concatenate([batched(carry_packer.pack)(carry), results, finite], axis=-1)

        def reset_keeping_layer(key, packed_carry):
            return packed_reset(key, carry_packer.unpack(packed_carry)[1])

        fresh_reset = lambda key: packed_reset(key, None)  # noqa: E731
        if num_envs is not None:
            fresh_reset, reset_keeping_layer = jax.vmap(fresh_reset), jax.vmap(reset_keeping_layer)

        def keys_of(seed):  # inside jit: an eager PRNGKey costs more than a whole step
            key = jax.random.PRNGKey(seed)
            return key if num_envs is None else jax.random.split(key, num_envs)

        self.reset_fn = jax.jit(lambda seed: fresh_reset(keys_of(seed)))
        self.reset_keep_fn = jax.jit(lambda seed, packed_carry: reset_keeping_layer(keys_of(seed), packed_carry))
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
    """One env instance: a host buffer ``[carry words | action words]`` plus a shared :class:`CompiledCore`.

    The buffer is allocated once; each step writes the actions into its tail, runs the compiled
    step on it and copies the new carry back into its head (no per-step allocation or concatenate).
    """

    def __init__(self, core: CompiledCore):
        self.core = core
        self.n_agents = core.n_agents
        self.batch_shape = core.batch_shape
        self.num_envs = core.num_envs
        self.reset_unpacker, self.step_unpacker = core.reset_unpacker, core.step_unpacker
        self._reset, self._reset_keep, self._step = core.reset_fn, core.reset_keep_fn, core.step_fn
        self._carry_words = core.carry_words
        self._buffer = np.zeros(self.batch_shape + (core.carry_words + core.n_agents,), np.uint32)
        self._actions = self._buffer[..., core.carry_words :].view(core.action_dtype)
        self._has_state = False

    def reset(self, seed: int, keep_layer_state: bool = False) -> dict:
        seed = np.uint32(seed)
        if keep_layer_state and self._has_state:
            words = np.asarray(self._reset_keep(seed, self._buffer[..., : self._carry_words]))
        else:
            words = np.asarray(self._reset(seed))
        self._buffer[..., : self._carry_words] = words[..., : self._carry_words]
        self._has_state = True
        return self.reset_unpacker.to_numpy(words[..., self._carry_words :].view(np.float32), self.batch_shape)

    def step(self, actions: np.ndarray) -> dict:
        """Step on ``actions`` (shape ``batch_shape + (n_agents,)``, checked by the adapter).

        Non-finite actions raise ``ValueError`` naming the agent (and sub-env); the state is then unchanged.
        """
        if not self._has_state:
            raise RuntimeError("call reset() before step()")
        self._actions[...] = actions
        words = np.asarray(self._step(self._buffer))
        # a single env's flag is one scalar word: indexing it skips a ufunc reduction (~4 µs of a ~30 µs step)
        if not (words[..., -1].all() if self.batch_shape else words[-1]):
            raise ValueError(nonfinite_message(np.asarray(actions, np.float32), self.core.agent_names))
        self._buffer[..., : self._carry_words] = words[..., : self._carry_words]
        return self.step_unpacker.to_numpy(words[..., self._carry_words : -1].view(np.float32), self.batch_shape)

    def state(self) -> Any:
        """The current (unpacked) env state, for rendering."""
        if not self._has_state:
            raise RuntimeError("call reset() first")
        return self.core.carry_packer.unpack(jnp.asarray(self._buffer[..., : self._carry_words]))[0]
