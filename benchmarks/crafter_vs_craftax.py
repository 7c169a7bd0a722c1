"""CrafterTeam (``preset="crafter"``, 1 and 2 agents) next to Craftax-Classic-Symbolic, batched, in one process.

    python -m venv /tmp/craftaxvenv && /tmp/craftaxvenv/bin/pip install craftax==1.6.1   # never into the main env
    python benchmarks/crafter_vs_craftax.py [--batch-sizes 256,1024] [--steps 32] [--repeats 3]

Craftax is imported from ``--craftax-site`` (the venv's site-packages, appended to ``sys.path`` so this
environment's jax and numpy win; both must be jax 0.10.2 here). Every measurement is ``jax.jit`` of a
``lax.scan`` over ``--steps`` steps of ``vmap``-ed envs with uniformly random actions; the scan's result sums the
rewards and observations so XLA cannot drop them. Two reset modes:

* ``no_reset``: the plain step (CrafterTeam's ``env.step``, Craftax's ``CraftaxClassicSymbolicEnvNoAutoReset``);
  episodes that end keep being stepped (nothing resets inside the timed loop);
* ``auto_reset``: each library's own auto-reset (CrafterTeam: ``motivegym.core.batching.random_rollout``, which
  builds fresh episodes only on steps where some env finished; Craftax: ``CraftaxClassicSymbolicEnv``, whose
  step computes a reset every step and selects it where ``done``).

Compile time is excluded (one untimed call first); each cell is the median of ``--repeats`` timed calls, the
libraries interleaved. Reports env-steps/s and agent-steps/s (env-steps × agents).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

import motivegym  # noqa: E402
from motivegym.core.batching import random_rollout  # noqa: E402


def motivegym_runner(n_agents: int, num_envs: int, steps: int, auto_reset: bool):
    env, params = motivegym.make_jax("CrafterTeam-v0", preset="crafter", n_agents=n_agents)
    if auto_reset:
        return jax.jit(random_rollout(env, params, num_envs, steps)), n_agents
    n_actions = env.num_actions(params)

    def run(key):
        key, reset_key = jax.random.split(key)
        states, _ = jax.vmap(env.reset, in_axes=(0, None))(jax.random.split(reset_key, num_envs), params)

        def body(carry, _):
            states, key, total = carry
            key, action_key, step_key = jax.random.split(key, 3)
            actions = jax.random.randint(action_key, (num_envs, n_agents), 0, n_actions)
            step = jax.vmap(env.step, in_axes=(0, 0, 0, None))
            states, obs, payoffs, _, _ = step(jax.random.split(step_key, num_envs), states, actions, params)
            return (states, key, total + jnp.sum(payoffs) + jnp.sum(obs)), None

        (_, _, total), _ = jax.lax.scan(body, (states, key, jnp.float32(0)), None, length=steps)
        return total

    return jax.jit(run), n_agents


def craftax_runner(num_envs: int, steps: int, auto_reset: bool):
    from craftax.craftax_classic.envs.craftax_symbolic_env import CraftaxClassicSymbolicEnv, CraftaxClassicSymbolicEnvNoAutoReset

    env = CraftaxClassicSymbolicEnv() if auto_reset else CraftaxClassicSymbolicEnvNoAutoReset()
    params = env.default_params
    n_actions = env.num_actions

    def run(key):
        key, reset_key = jax.random.split(key)
        _, states = jax.vmap(env.reset, in_axes=(0, None))(jax.random.split(reset_key, num_envs), params)

        def body(carry, _):
            states, key, total = carry
            key, action_key, step_key = jax.random.split(key, 3)
            actions = jax.random.randint(action_key, (num_envs,), 0, n_actions)
            step = jax.vmap(env.step, in_axes=(0, 0, 0, None))
            obs, states, rewards, _, _ = step(jax.random.split(step_key, num_envs), states, actions, params)
            return (states, key, total + jnp.sum(rewards) + jnp.sum(obs)), None

        (_, _, total), _ = jax.lax.scan(body, (states, key, jnp.float32(0)), None, length=steps)
        return total

    return jax.jit(run), 1


def timed(runs: dict, repeats: int) -> dict[str, float]:
    """Median seconds per call of each runner: compiled first, then timed round-robin (one call of each per round)."""
    for run, _ in runs.values():
        jax.block_until_ready(run(jax.random.PRNGKey(0)))  # compile
    times: dict[str, list[float]] = {name: [] for name in runs}
    for r in range(repeats):
        for name, (run, _) in runs.items():
            start = time.perf_counter()
            jax.block_until_ready(run(jax.random.PRNGKey(r + 1)))
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) for name, values in times.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--batch-sizes", default="256,1024")
    parser.add_argument("--steps", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--modes", default="no_reset,auto_reset")
    parser.add_argument("--craftax-site", default="/tmp/craftaxvenv/lib/python3.11/site-packages")
    args = parser.parse_args(argv)
    sys.path.append(args.craftax_site)
    print(f"jax {jax.__version__}, devices {jax.devices()}, {args.steps} steps per call, median of {args.repeats}")
    print(f"{'mode':<11}{'envs':>6}  {'library':<34}{'env-steps/s':>13}{'agent-steps/s':>15}{'vs Craftax (agent-steps)':>26}")
    for mode in args.modes.split(","):
        for num_envs in (int(b) for b in args.batch_sizes.split(",")):
            runners = {
                "Craftax-Classic-Symbolic": craftax_runner(num_envs, args.steps, mode == "auto_reset"),
                "CrafterTeam crafter, 1 agent": motivegym_runner(1, num_envs, args.steps, mode == "auto_reset"),
                "CrafterTeam crafter, 2 agents": motivegym_runner(2, num_envs, args.steps, mode == "auto_reset"),
            }
            seconds = timed(runners, args.repeats)
            rates = {name: (num_envs * args.steps / seconds[name], agents) for name, (_, agents) in runners.items()}
            reference = rates["Craftax-Classic-Symbolic"][0]
            for name, (env_rate, agents) in rates.items():
                print(f"{mode:<11}{num_envs:>6}  {name:<34}{env_rate:>13,.0f}{env_rate * agents:>15,.0f}{env_rate * agents / reference:>25.2f}x")
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
