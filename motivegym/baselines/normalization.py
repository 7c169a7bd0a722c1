"""Running mean/variance (parallel Welford) for per-agent observation and reward normalisation."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from motivegym.core.pytree import pytree_dataclass

Array = jax.Array


@pytree_dataclass
class RunningStats:
    mean: Array
    var: Array
    count: Array


def running_stats(shape: tuple[int, ...]) -> RunningStats:
    return RunningStats(jnp.zeros(shape, jnp.float32), jnp.ones(shape, jnp.float32), jnp.float32(1e-4))


def update_stats(stats: RunningStats, batch: Array) -> RunningStats:
    """Merge a batch (leading axis = samples) into the running moments (Chan et al. parallel update)."""
    batch_mean = jnp.mean(batch, axis=0)
    batch_var = jnp.var(batch, axis=0)
    batch_count = jnp.float32(batch.shape[0])
    delta = batch_mean - stats.mean
    total = stats.count + batch_count
    mean = stats.mean + delta * batch_count / total
    m2 = stats.var * stats.count + batch_var * batch_count + delta**2 * stats.count * batch_count / total
    return RunningStats(mean, m2 / total, total)


def normalize(stats: RunningStats, x: Array, clip: float = 10.0) -> Array:
    return jnp.clip((x - stats.mean) / jnp.sqrt(stats.var + 1e-8), -clip, clip)
