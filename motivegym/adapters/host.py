"""The one jitted env + reward-layer step that every host-side adapter drives.

``HostStepper`` fuses ``env.step`` and ``layer.apply`` into one compiled call on packed buffers
(see ``core/packing.py``) and returns numpy results. With ``num_envs`` it is vmapped with
same-step auto-reset (the vector env). Adapters only translate these results into an API.

**Params are compile-time constants** of the compiled step (XLA folds what depends only on them: measured
8-20 µs of a 15-50 µs step on PlatformEcosystem and ApacheProject against params passed as traced
arguments). Constants must not change a decision: the envs compute rates with
``motivegym.core.thresholds.ratio`` (a division XLA cannot turn into ``a · (1/e)``) and decide threshold
rules with that module's tolerance, so a baked step plays the game of ``jax.jit(env.step)(key, state,
actions, params)`` to float32 rounding (``tests/test_doors.py``).

**Keys** (documented so that every door can be driven with the same randomness): an adapter turns its seed
into a 31-bit JAX seed with ``numpy.random.default_rng(seed).integers(0, 2**31 - 1)`` (Gymnasium's
``np_random``); a single env starts from ``fold_in(PRNGKey(jax_seed), 0)``. A batched reset takes either one
seed (sub-env ``b`` starts from ``fold_in(PRNGKey(jax_seed), b)``; the SB3 adapter) or one seed per sub-env
(sub-env ``b`` starts from ``fold_in(PRNGKey(jax_seed_b), 0)``, as ``gymnasium.make`` with that seed would:
``make_vec``). See :func:`episode_key`, :func:`reset_keys` and :func:`step_keys`.
"""

from __future__ import annotations

import collections
import numbers
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from motivegym.core.actions import action_spec, check_actions
from motivegym.core.batching import reset_finished
from motivegym.core.env import FunctionalEnv, Transition
from motivegym.core.packing import HostUnpacker, TreePacker
from motivegym.core.registry import get_spec
from motivegym.reward_layers import LayerSpec, RewardLayer, reward_layer
from motivegym.reward_layers.base import refuse_rollout_fitting

ADAPTER_ARGUMENTS = ("reward", "render_mode")

#: compiled cores kept by :func:`compiled_core`, least recently used dropped first. A core is keyed by the
#: env id, the params (structure and every value), the layer, the view and ``num_envs``, and holds its jitted
#: programs (about 7 MiB for a small env); envs that still use a dropped core keep it alive.
COMPILED_CACHE_SIZE = 16


# ----- keys -----
def episode_key(jax_seed: int | jax.Array, index: int | jax.Array = 0) -> jax.Array:
    """The root key of sub-env ``index`` (0 for a single env): ``fold_in(PRNGKey(jax_seed), index)``."""
    return jax.random.fold_in(jax.random.PRNGKey(jax_seed), index)


def reset_keys(key: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
    """``(carry_key, reset_key, layer_key)`` of a reset from ``key``: ``env.reset(reset_key, params)``,
    ``layer.init(layer_key, spec)``; ``carry_key`` feeds the steps."""
    carry_key, reset_key, layer_key = jax.random.split(key, 3)
    return carry_key, reset_key, layer_key


def step_keys(carry_key: jax.Array) -> tuple[jax.Array, jax.Array]:
    """``(carry_key, env_key)`` of one step. ``env_key`` is what ``learner_batch_step`` takes per env: the env
    steps with ``split(env_key)[0]`` and an auto-reset uses ``split(env_key)[1]``."""
    carry_key, env_key = jax.random.split(carry_key)
    return carry_key, env_key


# ----- adapter options -----
def check_num_envs(num_envs: Any) -> int:
    """``num_envs`` as an int ≥ 1; floats (``2.5``, also ``2.0``), bools and strings raise ``ValueError``."""
    if isinstance(num_envs, bool) or not isinstance(num_envs, numbers.Integral) or int(num_envs) < 1:
        raise ValueError(f"num_envs must be an int >= 1, got {num_envs!r}")
    return int(num_envs)


def check_choice(name: str, value: Any, choices: tuple | list) -> Any:
    """``value`` if it is one of ``choices`` (compared by type and value: ``True`` is not ``1``), else ``ValueError``."""
    if not any(type(value) is type(choice) and value == choice for choice in choices):
        raise ValueError(f"{name} must be one of {list(choices)}, got {value!r}")
    return value


def check_flag(name: str, value: Any) -> bool:
    """A ``bool`` option (``0``/``1``/strings are refused)."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def check_seed(seed: Any) -> int | None:
    """``None`` or a non-negative int (floats, bools and strings raise ``ValueError``)."""
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or int(seed) < 0:
        raise ValueError(f"seed must be None or an int >= 0, got {seed!r}")
    return int(seed)


def jax_seed(rng: np.random.Generator) -> int:
    """The next 31-bit JAX seed drawn from an adapter's numpy generator."""
    return int(rng.integers(0, 2**31 - 1))


def build_env(env_id: str, reward: str | RewardLayer | None, env_kwargs: dict[str, Any], adapter_arguments: tuple[str, ...]):
    """Resolve ``(spec, env, params, layer)``; unknown keyword arguments raise ``ValueError`` listing all valid ones."""
    from motivegym.core.errors import check_names

    if not isinstance(env_id, str):
        raise ValueError(f"env_id must be a string, got {env_id!r}")
    spec = get_spec(env_id)
    env = spec.make_env()
    check_names("keyword argument", env_kwargs, env.parameter_names() + adapter_arguments, spec.gymnasium_id)
    if reward is not None and not isinstance(reward, (str, RewardLayer)):
        raise ValueError(f"reward must be a layer name, a RewardLayer or None, got {reward!r}")
    params = env.default_params(**env_kwargs)
    layer = reward_layer(spec.default_reward if reward is None else reward)
    refuse_rollout_fitting(layer, f"the {spec.gymnasium_id} adapter")
    return spec, env, params, layer


def warn_unused_options(options: dict | None) -> None:
    """motivegym envs define no reset options; say so rather than ignore them silently."""
    if options is not None and not isinstance(options, dict):
        raise ValueError(f"options must be a dict or None, got {options!r}")
    if options:
        import gymnasium

        gymnasium.logger.warn(f"motivegym envs define no reset options; ignoring {sorted(options)}")


def as_arrays(params: Any) -> Any:
    """``params`` with every leaf a JAX array (numpy float64 leaves become float32, as under ``jit``)."""
    return jax.tree.map(jnp.asarray, params)


class CompiledCore:
    """The jitted reset/step functions of ``env`` under ``layer`` and their result layouts.

    ``view="global"`` returns ``env.global_state`` as ``obs`` (Gymnasium joint view);
    ``view="agents"`` returns the per-agent observations ``[n, d]`` (PettingZoo).
    ``params`` are baked into the compiled functions. Built by :func:`compiled_core` and shared by the
    adapter instances with the same params, so creating many envs compiles once.
    """

    def __init__(self, env: FunctionalEnv, params: Any, layer: RewardLayer, view: str = "global", num_envs: int | None = None):
        if view not in ("global", "agents"):
            raise ValueError(f"view must be 'global' or 'agents', got {view!r}")
        params = as_arrays(params)
        self.num_envs = num_envs
        self.n_agents = env.n_agents(params)
        spec = LayerSpec.of(env, params)

        def view_of(state, params):
            return env.global_state(state, params) if view == "global" else env.observe(state, params)

        def reset_single(key, layer_state, params):
            key, reset_key, layer_key = reset_keys(key)
            state, _ = env.reset(reset_key, params)
            layer_state = layer.init(layer_key, spec) if layer_state is None else layer_state
            info = env.describe(state, params) if hasattr(env, "describe") else {}
            return (state, layer_state, key), {"obs": view_of(state, params), "info": info}

        def step_single(carry, actions, params):
            """One env's step; also returns the key for its possible reset and its done flag."""
            state, layer_state, key = carry
            key, env_key = step_keys(key)
            step_key, reset_key = jax.random.split(env_key)
            obs = env.observe(state, params)
            next_state, next_obs, payoffs, done, info = env.step(step_key, state, actions, params)
            transition = Transition(obs, actions, payoffs, next_obs, info["terminated"], info["truncated"], info)
            layer_state, rewards, components = layer.apply(layer_state, transition)
            out = {
                "obs": view_of(next_state, params),
                "payoffs": payoffs,
                "rewards": rewards,
                "components": components,
                "terminated": info["terminated"],
                "truncated": info["truncated"],
                "info": info,
            }
            return (next_state, layer_state, key), out, (reset_key, done)

        def step_batch(carry, actions, params):
            """``num_envs`` steps with same-step auto-reset of the finished envs (see ``reset_finished``)."""
            (next_states, layer_states, keys), out, (reset_keys_, done) = jax.vmap(step_single, in_axes=(0, 0, None))(
                carry, actions, params
            )
            view = lambda state: view_of(state, params)  # noqa: E731
            next_states, (obs,) = reset_finished(env, params, reset_keys_, done, next_states, (out["obs"],), (view,))
            return (next_states, layer_states, keys), {**out, "final_obs": out["obs"], "obs": obs}

        def step(carry, actions, params):
            return step_single(carry, actions, params)[:2] if num_envs is None else step_batch(carry, actions, params)

        def keys_of(seed):  # inside jit: an eager PRNGKey costs more than a whole step
            if num_envs is None:
                return episode_key(seed)
            if jnp.ndim(seed) == 1:  # one seed per sub-env: each starts as gymnasium.make with that seed would
                return jax.vmap(episode_key)(seed, jnp.zeros(num_envs, jnp.int32))
            return jax.vmap(episode_key, in_axes=(None, 0))(seed, jnp.arange(num_envs))

        dtype = jnp.int32 if env.action_kind == "discrete" else jnp.float32
        action_shape = jax.ShapeDtypeStruct((() if num_envs is None else (num_envs,)) + (self.n_agents,), dtype)
        fresh = (lambda k: reset_single(k, None, params)) if num_envs is None else jax.vmap(lambda k: reset_single(k, None, params))
        carry_shape, reset_out = jax.eval_shape(lambda seed: fresh(keys_of(seed)), jnp.uint32(0))
        _, step_out = jax.eval_shape(lambda c, a: step(c, a, params), carry_shape, action_shape)
        strip = (lambda tree: jax.tree.map(lambda x: jax.ShapeDtypeStruct(x.shape[1:], x.dtype), tree)) if num_envs else (lambda t: t)
        self.carry_packer = TreePacker(strip(carry_shape))
        self.reset_unpacker = HostUnpacker(strip(reset_out))
        self.step_unpacker = HostUnpacker(strip(step_out))
        self.carry_words = self.carry_packer.bounds[-1]
        self.action_dtype = np.dtype(action_shape.dtype)
        carry_packer, reset_unpacker, step_unpacker = self.carry_packer, self.reset_unpacker, self.step_unpacker
        carry_words = self.carry_words
        batched = jax.vmap if num_envs is not None else (lambda f: f)

        # Each compiled call takes ONE uint32 buffer ``[carry words | action words]`` and returns one
        # ``[carry words | result words]``: on CPU every extra argument or result of a jitted call costs
        # microseconds of dispatch.
        def as_words(results):
            return jax.lax.bitcast_convert_type(results, jnp.uint32)

        def packed_reset(key, layer_state, params):
            carry, out = reset_single(key, layer_state, params)
            return jnp.concatenate([carry_packer.pack(carry), as_words(reset_unpacker.flatten(out))])

        def packed_step(buffer):  # [carry words | action words], with a leading env axis when batched
            carry = batched(carry_packer.unpack)(buffer[..., :carry_words])
            actions = jax.lax.bitcast_convert_type(buffer[..., carry_words:], action_shape.dtype)
            carry, out = step(carry, actions, params)
            return jnp.concatenate([batched(carry_packer.pack)(carry), as_words(batched(step_unpacker.flatten)(out))], axis=-1)

        def fresh_reset(seed):
            return batched(lambda key: packed_reset(key, None, params))(keys_of(seed))

        def reset_keeping_layer(seed, packed_carry):
            layer_states = lambda packed: carry_packer.unpack(packed)[1]  # noqa: E731
            return batched(lambda key, packed: packed_reset(key, layer_states(packed), params))(keys_of(seed), packed_carry)

        self.reset_fn = jax.jit(fresh_reset)
        self.reset_keep_fn = jax.jit(reset_keeping_layer)
        self.step_fn = jax.jit(packed_step)
        self.batch_shape = () if num_envs is None else (num_envs,)


_COMPILED: collections.OrderedDict[tuple, CompiledCore] = collections.OrderedDict()


def params_key(params: Any) -> tuple:
    """A hashable key of ``params``: the tree structure (static fields included) and every leaf's shape, dtype and bytes.

    Keyed by value, not by the keyword arguments' repr (numpy abbreviates large arrays with "...", and
    ``rounds=5`` / ``max_steps=5`` build the same params).
    """
    leaves, treedef = jax.tree.flatten(as_arrays(params))
    return treedef, tuple((tuple(leaf.shape), str(leaf.dtype), np.asarray(leaf).tobytes()) for leaf in leaves)


def compiled_core(env_id: str, env, params, layer: RewardLayer, view: str, num_envs: int | None) -> CompiledCore:
    """A cached :class:`CompiledCore` (LRU of :data:`COMPILED_CACHE_SIZE`, keyed by env id, params, layer, view
    and ``num_envs``); unhashable keys (a user layer) are not cached."""
    key = (env_id, params_key(params), layer, view, num_envs)
    try:
        hash(key)
    except TypeError:
        return CompiledCore(env, params, layer, view, num_envs)
    if key in _COMPILED:
        _COMPILED.move_to_end(key)
        return _COMPILED[key]
    core = _COMPILED[key] = CompiledCore(env, params, layer, view, num_envs)
    while len(_COMPILED) > COMPILED_CACHE_SIZE:
        _COMPILED.popitem(last=False)
    return core


class HostStepper:
    """One env instance: a host buffer ``[carry words | action words]`` and a shared :class:`CompiledCore`.

    The buffer is allocated once; each step writes the (already checked) actions into its tail, runs the
    compiled step on it and copies the new carry back into its head. Results are fresh, writable arrays.
    """

    def __init__(self, core: CompiledCore, env: FunctionalEnv, params: Any):
        self.core = core
        self.n_agents = core.n_agents
        self.batch_shape = core.batch_shape
        self.num_envs = core.num_envs
        self.action_spec = action_spec(env, params)
        self.reset_unpacker, self.step_unpacker = core.reset_unpacker, core.step_unpacker
        self._reset, self._reset_keep, self._step = core.reset_fn, core.reset_keep_fn, core.step_fn
        self._carry_words = core.carry_words
        self._buffer = np.zeros(self.batch_shape + (core.carry_words + core.n_agents,), np.uint32)
        self._has_state = False

    def check(self, actions: Any) -> np.ndarray:
        """``actions`` (shape ``batch_shape + (n_agents,)``) validated by :func:`motivegym.core.actions.check_actions`."""
        return check_actions(self.action_spec, actions, self.batch_shape)

    def _results(self, words: np.ndarray) -> np.ndarray:
        """The result words after the carry, copied (writable) and viewed as float32."""
        return np.array(words[..., self._carry_words :]).view(np.float32)

    def reset(self, seed: int | np.ndarray, keep_layer_state: bool = False, rows: np.ndarray | None = None) -> dict:
        """Reset from ``seed`` (batched: one int for all sub-envs, keys ``fold_in(PRNGKey(seed), b)``, or one seed
        per sub-env, keys ``fold_in(PRNGKey(seed_b), 0)``). ``rows`` (a bool mask) resets only those sub-envs."""
        seed = np.asarray(seed, np.uint32)
        if keep_layer_state and self._has_state:
            words = np.asarray(self._reset_keep(seed, self._buffer[..., : self._carry_words]))
        else:
            words = np.asarray(self._reset(seed))
        if rows is None:
            self._buffer[..., : self._carry_words] = words[..., : self._carry_words]
        else:
            self._buffer[rows, : self._carry_words] = words[rows, : self._carry_words]
        self._has_state = True
        return self.reset_unpacker.to_numpy(self._results(words), self.batch_shape)

    def step(self, actions: np.ndarray, frozen: np.ndarray | None = None) -> dict:
        """Step on ``actions`` that :meth:`check` returned (the adapters check before calling). Sub-envs in the
        bool mask ``frozen`` keep their state (their results are computed and should be ignored)."""
        if not self._has_state:
            raise RuntimeError("call reset() before step()")
        # a fresh view each step: a view kept as an attribute stops aliasing the buffer in a copy.deepcopy or
        # pickled copy of the env (SuperSuit's vec envs copy the env), which then stepped with stale actions
        self._buffer[..., self._carry_words :].view(self.core.action_dtype)[...] = actions
        words = np.asarray(self._step(self._buffer))
        if frozen is None:
            self._buffer[..., : self._carry_words] = words[..., : self._carry_words]
        else:
            self._buffer[~frozen, : self._carry_words] = words[~frozen, : self._carry_words]
        return self.step_unpacker.to_numpy(self._results(words), self.batch_shape)

    def state(self) -> Any:
        """The current (unpacked) env state, for rendering."""
        if not self._has_state:
            raise RuntimeError("call reset() first")
        return self.core.carry_packer.unpack(jnp.asarray(self._buffer[..., : self._carry_words]))[0]


def host_stepper(env_id: str, env: FunctionalEnv, params: Any, layer: RewardLayer, view: str, num_envs: int | None) -> HostStepper:
    """A :class:`HostStepper` on the cached core of ``(env_id, params, layer, view, num_envs)``."""
    return HostStepper(compiled_core(env_id, env, params, layer, view, num_envs), env, params)
