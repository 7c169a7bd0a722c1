"""CrafterTeam (``preset="crafter"``, 1 and 2 agents) next to Craftax-Classic-Symbolic, batched, in one process.

    python -m venv /tmp/craftaxvenv && /tmp/craftaxvenv/bin/pip install craftax==1.6.1   # never into the main env
    python benchmarks/crafter_vs_craftax.py [--batch-sizes 256,1024] [--steps 32] [--repeats 3]
    python benchmarks/crafter_vs_craftax.py --random-episodes 128   # random-policy success rates of both games

Craftax is imported from ``--craftax-site`` (the venv's site-packages, appended to ``sys.path`` so this
environment's jax and numpy win; both must be jax 0.10.2 here). Every measurement is ``jax.jit`` of a
``lax.scan`` over ``--steps`` steps of ``vmap``-ed envs with uniformly random actions; the scan's result sums the
rewards and observations so XLA cannot drop them. Two reset modes:

* ``no_reset``: the plain step (CrafterTeam's ``env.step``, Craftax's ``CraftaxClassicSymbolicEnvNoAutoReset``);
  episodes that end keep being stepped (nothing resets inside the timed loop);
* ``auto_reset``: each library's own auto-reset (CrafterTeam: ``motivegym.core.batching.auto_reset_batch_step``,
  which builds fresh episodes only on steps where some env finished; Craftax: ``CraftaxClassicSymbolicEnv``, whose
  step computes a reset every step and selects it where ``done``).

The first batch of episodes is built outside the timed call, and compile time is excluded (one untimed call
first); each cell is the median of ``--repeats`` timed calls from the same episodes, the libraries interleaved. Reports env-steps/s and agent-steps/s (env-steps × agents).
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
import numpy as np  # noqa: E402

import motivegym  # noqa: E402
from motivegym.core.batching import auto_reset_batch_step  # noqa: E402
from motivegym.experiments.crafter_score import score_of  # noqa: E402


def motivegym_runner(n_agents: int, num_envs: int, steps: int, auto_reset: bool):
    """``(start, run, agents)``: ``start(key)`` builds the batch of episodes (untimed), ``run(states, key)`` steps it."""
    env, params = motivegym.make_jax("CrafterTeam-v0", preset="crafter", n_agents=n_agents)
    n_actions = env.num_actions(params)
    step = auto_reset_batch_step(env) if auto_reset else jax.vmap(env.step, in_axes=(0, 0, 0, None))

    def start(key):
        return jax.vmap(env.reset, in_axes=(0, None))(jax.random.split(key, num_envs), params)[0]

    def run(states, key):
        def body(carry, _):
            states, key, total = carry
            key, action_key, step_key = jax.random.split(key, 3)
            actions = jax.random.randint(action_key, (num_envs, n_agents), 0, n_actions)
            states, obs, payoffs, _, _ = step(jax.random.split(step_key, num_envs), states, actions, params)
            return (states, key, total + jnp.sum(payoffs) + jnp.sum(obs)), None

        (_, _, total), _ = jax.lax.scan(body, (states, key, jnp.float32(0)), None, length=steps)
        return total

    return jax.jit(start), jax.jit(run), n_agents


def craftax_runner(num_envs: int, steps: int, auto_reset: bool):
    """Same as :func:`motivegym_runner` for Craftax-Classic-Symbolic (its own auto-reset or none)."""
    from craftax.craftax_classic.envs.craftax_symbolic_env import CraftaxClassicSymbolicEnv, CraftaxClassicSymbolicEnvNoAutoReset

    env = CraftaxClassicSymbolicEnv() if auto_reset else CraftaxClassicSymbolicEnvNoAutoReset()
    params = env.default_params
    n_actions = env.num_actions
    step = jax.vmap(env.step, in_axes=(0, 0, 0, None))

    def start(key):
        return jax.vmap(env.reset, in_axes=(0, None))(jax.random.split(key, num_envs), params)[1]

    def run(states, key):
        def body(carry, _):
            states, key, total = carry
            key, action_key, step_key = jax.random.split(key, 3)
            actions = jax.random.randint(action_key, (num_envs,), 0, n_actions)
            obs, states, rewards, _, _ = step(jax.random.split(step_key, num_envs), states, actions, params)
            return (states, key, total + jnp.sum(rewards) + jnp.sum(obs)), None

        (_, _, total), _ = jax.lax.scan(body, (states, key, jnp.float32(0)), None, length=steps)
        return total

    return jax.jit(start), jax.jit(run), 1


def random_success(episodes: int, seed: int) -> dict[str, tuple[np.ndarray, np.ndarray, list[str]]]:
    """Random-policy episodes of both games (one agent): ``{library: (flags [episodes, 22] bool, lengths, names)}``."""
    from craftax.craftax_classic.constants import Achievement
    from craftax.craftax_classic.envs.craftax_symbolic_env import CraftaxClassicSymbolicEnvNoAutoReset

    from motivegym.experiments.crafter_score import random_episode_flags

    craftax = CraftaxClassicSymbolicEnvNoAutoReset()
    params = craftax.default_params

    def craftax_episode(key):
        reset_key, run_key = jax.random.split(key)
        _, state = craftax.reset(reset_key, params)

        def body(carry):
            state, k, _, steps = carry
            k, action_key, step_key = jax.random.split(k, 3)
            _, state, _, done, _ = craftax.step(step_key, state, jax.random.randint(action_key, (), 0, craftax.num_actions), params)
            return state, k, done, steps + 1

        state, _, _, steps = jax.lax.while_loop(lambda c: ~c[2], body, (state, run_key, jnp.bool_(False), 0))
        return state.achievements, steps

    keys = jax.random.split(jax.random.PRNGKey(seed), episodes)
    flags, lengths = jax.jit(jax.vmap(craftax_episode))(keys)
    craftax_names = [a.name.lower() for a in Achievement]
    env, team_params = motivegym.make_jax("CrafterTeam-v0", preset="crafter", n_agents=1)
    ours = np.asarray(random_episode_flags(env, team_params, jax.random.PRNGKey(seed), episodes))[:, 0]
    names = list(env.static_info(team_params)["achievement_names"])
    return {
        "Craftax-Classic": (np.asarray(flags), np.asarray(lengths), craftax_names),
        "CrafterTeam crafter": (ours, None, names),
    }


def print_success(episodes: int, seed: int) -> None:
    """Success rates (% of episodes) of a random policy in both games with 95% Wilson intervals, and their scores."""
    results = random_success(episodes, seed)
    (theirs, lengths, craftax_names), (ours, _, names) = results["Craftax-Classic"], results["CrafterTeam crafter"]

    def wilson(k: int, n: int) -> tuple[float, float]:
        p, z = k / n, 1.96
        centre, half = (p + z * z / (2 * n)) / (1 + z * z / n), z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
        return 100 * (centre - half), 100 * (centre + half)

    print(f"random policy, {episodes} episodes each (seed {seed}); Craftax-Classic mean episode length {lengths.mean():.0f} steps")
    print(f"{'achievement':<22}{'Craftax-Classic %':>28}{'CrafterTeam crafter %':>28}")
    for k, name in enumerate(names):
        a, b = int(theirs[:, craftax_names.index(name)].sum()), int(ours[:, k].sum())
        (al, ah), (bl, bh) = wilson(a, episodes), wilson(b, episodes)
        print(f"{name:<22}{100 * a / episodes:>10.1f} [{al:5.1f},{ah:5.1f}]{'':>4}{100 * b / episodes:>10.1f} [{bl:5.1f},{bh:5.1f}]")
    order = [craftax_names.index(name) for name in names]
    for label, flags in (("Craftax-Classic", theirs[:, order]), ("CrafterTeam crafter", ours)):
        print(f"Crafter score {label}: {float(score_of(100 * flags.mean(0))):.2f} %")


def timed(runs: dict, repeats: int) -> dict[str, float]:
    """Median seconds per ``run`` call of each runner: episodes built and ``run`` compiled first (untimed), then timed
    round-robin (one call of each per round), every call from the same fresh episodes."""
    prepared = {}
    for name, (start, run, _) in runs.items():
        states = jax.block_until_ready(start(jax.random.PRNGKey(0)))
        jax.block_until_ready(run(states, jax.random.PRNGKey(0)))  # compile
        prepared[name] = (run, states)
    times: dict[str, list[float]] = {name: [] for name in runs}
    for r in range(repeats):
        for name, (run, states) in prepared.items():
            begin = time.perf_counter()
            jax.block_until_ready(run(states, jax.random.PRNGKey(r + 1)))
            times[name].append(time.perf_counter() - begin)
    return {name: statistics.median(values) for name, values in times.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--batch-sizes", default="256,1024")
    parser.add_argument("--steps", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--modes", default="no_reset,auto_reset")
    parser.add_argument("--craftax-site", default="/tmp/craftaxvenv/lib/python3.11/site-packages")
    parser.add_argument("--random-episodes", type=int, default=0, help="instead of timing: random-policy success rates of both games")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    sys.path.append(args.craftax_site)
    if args.random_episodes:
        print_success(args.random_episodes, args.seed)
        return 0
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
            rates = {name: (num_envs * args.steps / seconds[name], agents) for name, (_, _, agents) in runners.items()}
            reference = rates["Craftax-Classic-Symbolic"][0]
            for name, (env_rate, agents) in rates.items():
                print(f"{mode:<11}{num_envs:>6}  {name:<34}{env_rate:>13,.0f}{env_rate * agents:>15,.0f}{env_rate * agents / reference:>25.2f}x")
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
