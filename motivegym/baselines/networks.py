"""Small pure-JAX networks and distributions for the reference baselines (no framework needed)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.scipy.special import betaln, digamma

Array = jax.Array


def orthonormal_columns(matrix: Array) -> Array:
    """Q of the QR factorisation with a positive diagonal of R, by Gram–Schmidt with one re-orthogonalisation.

    Plain array ops instead of LAPACK's ``geqrf``: jaxlib runs a batched (vmapped) QR on XLA's intra-op
    pool and waits on that same pool, so two concurrent QRs on a 2-thread pool deadlock (seen in CI and in
    sweeps on 2 cores: idle in ``block_until_ready``). ``matrix`` is ``[m, n]`` with ``m ≥ n``.
    """
    rows, cols = matrix.shape

    def next_column(j, q):
        v = matrix[:, j]
        for _ in range(2):  # classical Gram–Schmidt twice ("CGS2") is orthogonal to working precision
            v = v - q @ (q.T @ v)  # columns ≥ j of q are still zero
        return q.at[:, j].set(v / jnp.linalg.norm(v))

    return jax.lax.fori_loop(0, cols, next_column, jnp.zeros((rows, cols), matrix.dtype))


def orthogonal_init(key: Array, fan_in: int, fan_out: int, scale: float | Array = 1.0) -> Array:
    """``scale · Q`` with Q Haar-distributed orthogonal ``[fan_in, fan_out]`` (Saxe et al. 2014; the same
    matrix as ``jax.nn.initializers.orthogonal`` for the same key: QR of a Gaussian, signs fixed)."""
    tall = jax.random.normal(key, (max(fan_in, fan_out), min(fan_in, fan_out)), jnp.float32)
    q = orthonormal_columns(tall)
    return scale * (q if fan_in >= fan_out else q.T)


def mlp_init(key: Array, sizes: tuple[int, ...], final_scale: float = 0.01) -> list[dict]:
    """Orthogonal-initialised dense layers ``sizes[0] → … → sizes[-1]`` (last layer scaled down)."""
    keys = jax.random.split(key, len(sizes) - 1)
    layers = []
    for index, (k, fan_in, fan_out) in enumerate(zip(keys, sizes[:-1], sizes[1:])):
        scale = final_scale if index == len(sizes) - 2 else jnp.sqrt(2.0)
        weight = orthogonal_init(k, fan_in, fan_out, scale)
        layers.append({"w": weight, "b": jnp.zeros(fan_out, jnp.float32)})
    return layers


def mlp_apply(layers: list[dict], x: Array) -> Array:
    """tanh hidden layers, linear output."""
    for layer in layers[:-1]:
        x = jnp.tanh(x @ layer["w"] + layer["b"])
    return x @ layers[-1]["w"] + layers[-1]["b"]


def agent_conditioned_mlp(layers: list[dict], x: Array) -> Array:
    """One shared MLP on ``[x_i, onehot(i)]`` for inputs ``x [..., n, d]`` (or ``[..., 1, d]``, one input for all n agents).

    The first layer is computed as ``x_i @ W[:d] + W[d + i] + b``: the same numbers as the layer on the
    concatenation, without n columns of zeros in the matrix product (ApacheProject: 40 of 320 inputs).
    ``layers[0]["w"]`` is ``[d + n, H]``; returns ``[..., n, out]``.
    """
    first, d = layers[0], x.shape[-1]
    hidden = x @ first["w"][:d] + first["w"][d:] + first["b"]
    return hidden if len(layers) == 1 else mlp_apply(layers[1:], jnp.tanh(hidden))


def beta_parameters(raw: Array) -> tuple[Array, Array]:
    """``α, β = 1 + softplus(raw)`` (unimodal Beta on (0, 1))."""
    concentration = 1.0 + jax.nn.softplus(raw)
    return concentration[..., 0], concentration[..., 1]


@jax.custom_jvp
def log_beta_function(a: Array, b: Array) -> Array:
    """``log B(a, b)``: jax.scipy's accurate ``betaln``, differentiated as ``∂a = ψ(a) − ψ(a + b)``.

    Autodiff through ``betaln``'s branchy implementation costs about 4x its closed-form derivative;
    the loss gradient of every Beta policy goes through here.
    """
    return betaln(a, b)


@log_beta_function.defjvp
def _log_beta_function_jvp(primals, tangents):
    a, b = primals
    a_dot, b_dot = tangents
    digamma_total = digamma(a + b)
    return betaln(a, b), (digamma(a) - digamma_total) * a_dot + (digamma(b) - digamma_total) * b_dot


def beta_log_prob(alpha: Array, beta: Array, x: Array) -> Array:
    """``log p(x) = (α − 1) log x + (β − 1) log(1 − x) − log B(α, β)``."""
    return (alpha - 1.0) * jnp.log(x) + (beta - 1.0) * jnp.log1p(-x) - log_beta_function(alpha, beta)


def beta_entropy(alpha: Array, beta: Array) -> Array:
    """``H = log B(α, β) − (α − 1) ψ(α) − (β − 1) ψ(β) + (α + β − 2) ψ(α + β)``."""
    total = alpha + beta
    return (
        log_beta_function(alpha, beta)
        - (alpha - 1.0) * digamma(alpha)
        - (beta - 1.0) * digamma(beta)
        + (total - 2.0) * digamma(total)
    )


def categorical_log_prob(logits: Array, actions: Array) -> Array:
    log_probs = jax.nn.log_softmax(logits)
    return jnp.take_along_axis(log_probs, actions[..., None], axis=-1)[..., 0]


def categorical_entropy(logits: Array) -> Array:
    log_probs = jax.nn.log_softmax(logits)
    return -jnp.sum(jnp.exp(log_probs) * log_probs, axis=-1)
