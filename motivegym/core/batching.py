"""Auto-reset and batched rollouts over the functional API (PureJaxRL pattern).

The raw step (``motivegym.make_jax``) never resets: after ``done`` the caller starts a new episode.
Same-step auto-reset (as in ``make_vec`` and the learners) is one call away::

    step = auto_reset_step(env)          # one env; vmap/jit it freely
    state, obs, payoffs, done, info = step(key, state, actions, params)
    step_b = auto_reset_batch_step(env)  # [B] envs; resets only the finished ones

Both split each env's ``key`` into ``(step_key, reset_key) = jax.random.split(key)``: the env steps with
``step_key`` and a finished episode restarts from ``env.reset(reset_key, params)``. The returned
``state``/``obs`` are the new episode's where ``done``; the terminal observation is ``info["final_obs"]``;
``payoffs``, ``done`` and the rest of ``info`` are the finished step's. See ``docs/jax.md``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

from motivegym.core.env import FunctionalEnv

Array = jax.Array


def select_envs(done: Array, on_true: Any, on_false: Any) -> Any:
    """Per-env choice between two batched pytrees: ``leaf[b] = on_true[b] if done[b] else on_false[b]``."""
    return jax.tree.map(lambda a, b: jnp.where(done.reshape(done.shape + (1,) * (a.ndim - done.ndim)), a, b), on_true, on_false)


@jax.custom_batching.custom_vmap
def max_over_mapped_axes(x: Array) -> Array:
    """``x`` itself; under ``vmap``, the maximum over every mapped axis, returned **unbatched**.

    A ``lax.switch`` whose index is batched (an outer ``vmap`` over runs: seeds, layers) becomes a select that runs
    every branch; an index taken through this function stays one number, so one branch runs (batched over the runs).
    Use it where the highest branch is correct for every run whose own index is lower."""
    return x


@max_over_mapped_axes.def_vmap
def _max_over_mapped_axes_rule(axis_size: int, in_batched: list[bool], x: Array) -> tuple[Array, bool]:
    (batched,) = in_batched
    return max_over_mapped_axes(jnp.max(x, axis=0) if batched else x), False


def reset_finished(
    env: FunctionalEnv, params: Any, reset_keys: Array, done: Array, states: Any, views: tuple, view_fns: tuple[Callable, ...]
) -> tuple[Any, tuple]:
    """``(states, views)`` of a batch with the finished envs (``done [B]``) replaced by fresh episodes.

    ``views[k]`` is ``view_fns[k]`` (a function of one env state, e.g. its observations or global
    state) of every env in ``states``; the fresh envs' views are computed from their reset states.
    The result is the same as resetting every env (env ``b`` with ``reset_keys[b]``) and selecting, but
    fresh episodes are only built where needed: nothing when no env finished (fixed-horizon envs that
    end together: Harvest, Cleanup, most coopetition envs), only the finished envs when at most
    ``B // 64`` did (CrafterTeam's world generation costs ~25x its step), every env otherwise. Under an
    outer ``vmap`` (seeds, sweeps over runs) the branch is the highest any run needs (each branch is correct for
    every run that needs a lower one; :func:`max_over_mapped_axes`), so it stays one branch, not a select of all.
    """
    batch = done.shape[0]
    slots = max(1, batch // 64)

    def fresh_episodes(keys: Array) -> tuple[Any, tuple]:
        reset_states, _ = jax.vmap(env.reset, in_axes=(0, None))(keys, params)
        return reset_states, tuple(jax.vmap(view)(reset_states) for view in view_fns)

    def fresh_at(indices: Array) -> tuple[Any, tuple]:  # indices [K]; ``batch`` marks an unused slot
        fresh = fresh_episodes(reset_keys[jnp.minimum(indices, batch - 1)])
        return jax.tree.map(lambda old, new: old.at[indices].set(new, mode="drop"), (states, tuple(views)), fresh)

    def every_env(_):
        return select_envs(done, fresh_episodes(reset_keys), (states, tuple(views)))

    branches = [lambda _: (states, tuple(views)), lambda _: fresh_at(jnp.nonzero(done, size=slots, fill_value=batch)[0]), every_env]
    finished = jnp.sum(done)
    branch = jnp.where(finished == 0, 0, jnp.where(finished <= slots, 1, 2))
    return jax.lax.switch(max_over_mapped_axes(branch), branches, None)


def reset_where_done(
    env: FunctionalEnv, params: Any, reset_key: Array, done: Array, state: Any, views: tuple, view_fns: tuple[Callable, ...]
) -> tuple[Any, tuple]:
    """One env's ``(state, views)`` replaced by a fresh episode ``env.reset(reset_key, params)`` when ``done``.

    The single-env counterpart of :func:`reset_finished` (same ``views``/``view_fns`` convention). It is a
    ``lax.cond``: under ``jit`` the reset runs only when ``done``; under ``vmap`` both branches run for
    every env (a select), so batches should use :func:`reset_finished` or :func:`auto_reset_batch_step`.
    """

    def fresh(_):
        new_state, _ = env.reset(reset_key, params)
        return new_state, tuple(view(new_state) for view in view_fns)

    return jax.lax.cond(done, fresh, lambda _: (state, tuple(views)), None)


def auto_reset_step(env: FunctionalEnv) -> Callable:
    """One env's ``step(key, state, actions, params)`` that starts a new episode in the same call when it ends.

    Returns ``(state, obs, payoffs, done, info)`` like ``env.step``; where ``done``, ``state``/``obs`` are
    the reset ones (from ``split(key)[1]``) and the terminal observation is ``info["final_obs"]``. The env
    steps with ``split(key)[0]``, so env ``b`` of :func:`auto_reset_batch_step` with ``keys[b]`` plays the
    same game.
    """

    def step(key: Array, state: Any, actions: Array, params: Any):
        step_key, reset_key = jax.random.split(key)
        next_state, next_obs, payoffs, done, info = env.step(step_key, state, actions, params)
        state, (obs,) = reset_where_done(env, params, reset_key, done, next_state, (next_obs,), (lambda s: env.observe(s, params),))
        return state, obs, payoffs, done, {**info, "final_obs": next_obs}

    return step


def split_step_and_reset_keys(keys: Array) -> tuple[Array, Array]:
    """Each env's key split into ``(step_key, reset_key)``: ``[B]`` keys -> two ``[B]`` key arrays."""
    pairs = jax.vmap(jax.random.split)(keys)
    return pairs[:, 0], pairs[:, 1]


def auto_reset_batch_step(env: FunctionalEnv) -> Callable:
    """Batched ``step(keys [B], states, actions [B, n], params)`` that resets finished episodes in the same call.

    Returns ``(states, obs, payoffs, done, info)`` where ``states``/``obs`` are already the reset ones
    for finished episodes; the terminal observation is ``info["final_obs"]``.
    """

    def step(keys: Array, states: Any, actions: Array, params: Any):
        step_keys, reset_keys = split_step_and_reset_keys(keys)
        next_states, next_obs, payoffs, done, info = jax.vmap(env.step, in_axes=(0, 0, 0, None))(
            step_keys, states, actions, params
        )
        states, (obs,) = reset_finished(env, params, reset_keys, done, next_states, (next_obs,), (lambda s: env.observe(s, params),))
        info = dict(info)
        info["final_obs"] = next_obs
        return states, obs, payoffs, done, info

    return step


def batched_reset(env: FunctionalEnv, params: Any, key: Array, num_envs: int):
    """Reset ``num_envs`` independent envs (vmapped)."""
    return jax.vmap(env.reset, in_axes=(0, None))(jax.random.split(key, num_envs), params)


def random_actions(env: FunctionalEnv, params: Any, key: Array, batch_shape: tuple[int, ...] = ()) -> Array:
    """Uniform random actions inside each agent's bounds (continuous) or over the actions (discrete)."""
    n = env.n_agents(params)
    if env.action_kind == "discrete":
        return jax.random.randint(key, batch_shape + (n,), 0, env.num_actions(params))
    low, high = env.action_bounds(params)
    return jax.random.uniform(key, batch_shape + (n,), jnp.float32, low, high)


def random_rollout(env: FunctionalEnv, params: Any, num_envs: int, num_steps: int) -> Callable[[Array], Array]:
    """A jittable ``run(key) -> total`` that steps ``num_envs`` envs ``num_steps`` times with random
    actions and auto-reset (used by the throughput benchmark).

    ``total`` sums payoffs *and observations*: a program that discarded the observations would let
    XLA drop their computation, and a benchmark of it would overstate what a learner gets (2.3-2.7x
    on Harvest, Cleanup and TrustDilemma: ``benchmarks/observation_cost.py``)."""
    step = auto_reset_batch_step(env)

    def run(key: Array) -> Array:
        key, reset_key = jax.random.split(key)
        states, _ = batched_reset(env, params, reset_key, num_envs)

        def body(carry, _):
            states, key, total = carry
            key, action_key, step_key = jax.random.split(key, 3)
            actions = random_actions(env, params, action_key, (num_envs,))
            states, obs, payoffs, _, _ = step(jax.random.split(step_key, num_envs), states, actions, params)
            return (states, key, total + jnp.sum(payoffs) + jnp.sum(obs)), None

        (_, _, total), _ = jax.lax.scan(body, (states, key, jnp.float32(0)), None, length=num_steps)
        return total

    return run


def split_across_devices(batched_fn: Callable, devices: list) -> Callable:
    """Run ``batched_fn`` (vmapped over the leading axis of every argument) with that axis split across ``devices``.

    Each device gets a contiguous block and runs it without communication (``shard_map``). A batch
    that does not divide evenly is padded with copies of its last element, and the padding is cut
    from every output. On a CPU host started with ``XLA_FLAGS=--xla_force_host_platform_device_count=K``
    the K host devices run on their own threads, so independent runs use all cores. Call it inside
    ``jax.jit``; with one device it is ``batched_fn`` itself.
    """
    if len(devices) <= 1:
        return batched_fn
    import numpy as np
    from jax.sharding import Mesh, PartitionSpec

    mesh = Mesh(np.array(devices), ("devices",))
    spec = PartitionSpec("devices")
    # check_vma=False: carries created inside each shard (env states, optimiser states) are per-device
    sharded = jax.shard_map(batched_fn, mesh=mesh, in_specs=spec, out_specs=spec, check_vma=False)

    def run(*args: Any) -> Any:
        size = jax.tree.leaves(args)[0].shape[0]
        padded = -(-size // len(devices)) * len(devices)

        def pad(x: Array) -> Array:
            return jnp.concatenate([x, jnp.repeat(x[-1:], padded - size, axis=0)]) if padded > size else x

        outputs = sharded(*jax.tree.map(pad, args))
        return jax.tree.map(lambda x: x[:size], outputs)

    return run
