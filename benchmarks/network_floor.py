"""Lower bound on a sweep group's PPO time: only the learner's network math, nothing else.

    python benchmarks/network_floor.py [--env ApacheProject-v0] [--algo ippo] [--updates 4]

For one env × algorithm of the issue-6 sweep (3 reward layers × 7 seeds = 21 runs, vmapped and split
over one host device per core, 16 envs × 128 steps per update, 4 epochs × 4 minibatches) this times a
program that does only what every PPO update must do with the learner's own networks
(``MultiAgentPPO.policy_output`` / ``value``, the sweep's parameters):

* the rollout's forward passes (actor, critic, and the critic on the final observation), done as one
  large batch instead of 128 small ones, which can only be faster;
* per epoch and minibatch, forward and backward of actor and critic (the loss is a sum of squares;
  no optimiser, no env, no reward layer, no GAE, no shuffling).

Projected over the env's reference budget, this is a floor for the group's training time on this
machine: the real sweep does all of this and more. Compare with ``benchmarks/sweep_time.py``.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from motivegym.core.cpu_defaults import use_host_devices  # noqa: E402  (before JAX starts)

use_host_devices()

import argparse  # noqa: E402
import time  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from sweep_time import REWARDS, SEEDS  # noqa: E402  (the sweep's 3 reward layers × 7 seeds)

import motivegym  # noqa: E402
from motivegym.baselines.train import build_learner  # noqa: E402
from motivegym.core.batching import split_across_devices  # noqa: E402

RUNS, NUM_ENVS, NUM_STEPS, EPOCHS, MINIBATCHES = len(REWARDS) * SEEDS, 16, 128, 4, 4


def network_loss(learner):
    """``loss(nets, obs, states)``: a scalar that needs every actor and critic output (sum of squares)."""

    def loss(nets, obs, states):
        return jnp.sum(learner.policy_output(nets, obs) ** 2) + jnp.sum(learner.value(nets, obs, states) ** 2)

    return loss


def network_only_update(learner, updates: int):
    """``run(keys)``: ``updates`` × (rollout forward passes + EPOCHS × MINIBATCHES gradient steps) of one run."""
    n, batch = learner.n_agents, NUM_ENVS * NUM_STEPS
    loss = network_loss(learner)

    def run(key):
        networks = learner.init_networks(key)
        obs = jax.random.normal(key, (batch, n, learner.obs_size))
        states = jax.random.normal(key, (batch, learner.state_size))

        def one_update(nets, _):
            rollout = learner.policy_output(nets, obs).sum() + 2.0 * learner.value(nets, obs, states).sum()

            def minibatch(nets, index):
                start, size = index * (batch // MINIBATCHES), batch // MINIBATCHES
                rows = (jax.lax.dynamic_slice_in_dim(x, start, size) for x in (obs, states))
                grads = jax.grad(loss)(nets, *rows)
                return jax.tree.map(lambda p, g: p - 1e-6 * g, nets, grads), None

            nets, _ = jax.lax.scan(minibatch, nets, jnp.tile(jnp.arange(MINIBATCHES), EPOCHS))
            return jax.tree.map(lambda p: p + 1e-12 * rollout, nets), None

        nets, _ = jax.lax.scan(one_update, networks, None, length=updates)
        return jax.tree.leaves(nets)[0].sum()

    return jax.jit(split_across_devices(jax.vmap(run), jax.local_devices()))


def update_flops(learner) -> float:
    """XLA's FLOP count of one run's network math per PPO update.

    = forward(actor, critic) on NUM_ENVS × NUM_STEPS rollout observations + critic on the NUM_ENVS final
    observations + EPOCHS × MINIBATCHES × forward-and-backward(actor, critic) on one minibatch.
    """
    nets = learner.init_networks(jax.random.PRNGKey(0))
    loss = network_loss(learner)

    def flops(function, rows: int) -> float:
        obs = jnp.zeros((rows, learner.n_agents, learner.obs_size))
        states = jnp.zeros((rows, learner.state_size))
        return jax.jit(function).lower(nets, obs, states).compile().cost_analysis()["flops"]

    batch = NUM_ENVS * NUM_STEPS
    return (
        flops(loss, batch)
        + flops(lambda nets, obs, states: learner.value(nets, obs, states).sum(), NUM_ENVS)
        + EPOCHS * MINIBATCHES * flops(jax.grad(loss), batch // MINIBATCHES)
    )


def dense_matmul_peak(size: int = 2048, repeats: int = 5) -> float:
    """FLOP/s of large float32 matrix products on every local device at once: the most these cores sustain."""
    devices = jax.local_devices()
    product = jax.pmap(lambda a: a @ a)
    matrices = jax.random.normal(jax.random.PRNGKey(0), (len(devices), size, size))
    jax.block_until_ready(product(matrices))
    start = time.perf_counter()
    for _ in range(repeats):
        result = product(matrices)
    jax.block_until_ready(result)
    return repeats * len(devices) * 2 * size**3 / (time.perf_counter() - start)


def sweep_flops_floor(env_ids: list[str], algo: str) -> None:
    """Print each env's network FLOPs at its reference budget (21 runs) and the sum ÷ this machine's matmul peak."""
    peak = dense_matmul_peak()
    print(f"dense float32 matmul peak on {len(jax.local_devices())} host devices: {peak / 1e9:,.1f} GFLOP/s")
    print("| env | n | budget/run | network PFLOP (21 runs) | hours at the matmul peak |")
    print("|---|---|---|---|---|")
    total = 0.0
    for env_id in env_ids:
        learner = build_learner(algo, env_id, REWARDS, NUM_ENVS * NUM_STEPS, NUM_ENVS, NUM_STEPS, bins=11)[0]
        budget = motivegym.get_spec(env_id).reference_steps
        group_flops = RUNS * update_flops(learner) * (budget // (NUM_ENVS * NUM_STEPS))
        total += group_flops
        print(f"| {env_id} | {learner.n_agents} | {budget:,} | {group_flops / 1e15:.3f} | {group_flops / peak / 3600:.2f} |")
    print(f"{algo}: {len(env_ids)} envs, {total / 1e15:.2f} PFLOP of network math; at the matmul peak "
          f"{total / peak / 3600:.2f} h")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env", default="ApacheProject-v0")
    parser.add_argument("--algo", default="ippo")
    parser.add_argument("--updates", type=int, default=4)
    parser.add_argument("--flops", action="store_true", help="count FLOPs for every sweep env instead of timing --env")
    args = parser.parse_args()
    if args.flops:
        sweep_flops_floor([e for e in motivegym.list_envs() if motivegym.get_spec(e).reference_steps], args.algo)
        return
    learner = build_learner(args.algo, args.env, REWARDS, NUM_ENVS * NUM_STEPS, NUM_ENVS, NUM_STEPS, bins=11)[0]
    program = network_only_update(learner, args.updates)
    keys = jax.random.split(jax.random.PRNGKey(0), RUNS)
    compiled = program.lower(keys).compile()
    jax.block_until_ready(compiled(keys))
    start = time.perf_counter()
    jax.block_until_ready(compiled(keys))
    seconds = time.perf_counter() - start
    budget = motivegym.get_spec(args.env).reference_steps
    updates_needed = budget // (NUM_ENVS * NUM_STEPS)
    rate = RUNS * args.updates * NUM_ENVS * NUM_STEPS / seconds
    print(f"{args.env} {args.algo}: network math only {rate:,.0f} env-steps/s (21 runs); "
          f"floor for the group at {budget:,} steps/run: {seconds / args.updates * updates_needed / 3600:.2f} h")  # fmt: skip


if __name__ == "__main__":
    main()
