"""``preset="ssd"`` side by side with the upstream Sequential Social Dilemma games (SSD), in one process.

    python benchmarks/ssd_side_by_side.py --ssd-src /tmp/ssd_src [--seconds 3] [--check 200] [--json out.json]

``--ssd-src`` is a checkout of eugenevinitsky/sequential_social_dilemma_games (``git archive`` of the mirror).
Its package does not install here: ``setup.py`` pins ``ray[rllib]==0.8.5`` (no wheel for this Python; the
oldest on the index is 2.3.0) and ``python_requires <3.10``. Its env code only needs NumPy and matplotlib:
the imports it makes but the env step never uses (``ray.rllib`` base classes, ``gym.spaces``, ``cv2``) are
replaced by empty stand-ins (:func:`load_upstream`), and its ``HarvestEnv`` / ``CleanupEnv`` are stepped directly.

Throughput (same map, 5 agents, uniformly random actions, no resets; SSD has no horizon):

* ``upstream``: SSD's ``env.step`` in a Python loop (its observations included: RGB views of every agent);
* ``gymnasium``: ``gymnasium.make("motivegym/<Env>-v0", preset=...)`` host loop (``motivegym bench``'s measure);
* ``batched B``: env-steps/s of ``B`` vmapped envs in one jitted scan (``motivegym bench``'s measure).

``--check N``: equivalence of the step on ``N`` random small configurations (a 6×6 room, 4 agents on random
cells of a 3×3 block, facings, apples, waste and actions): SSD stepped 300 times with NumPy seeds 0..299 against this
package's step with 300 keys; the joint outcome (positions, facings, payoffs, apple cells, waste cells after the
step, and every agent's 15×15 RGB view) must have the same support and close frequencies. Apple and waste spawning are switched off on both sides
for the check (SSD's module constants ``SPAWN_PROB``, ``appleRespawnProbability``, ``wasteSpawnProbability`` set to
0; the preset's probabilities set to 0), so the maps after eating and cleaning are compared exactly; the spawn
rules themselves are tested in ``tests/envs/spatial/test_ssd_*.py``. Reports the configurations checked and
the largest frequency difference.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import hashlib
import json
import sys
import time
import types

import jax
import jax.numpy as jnp
import numpy as np

ORIENT_NAMES = ("UP", "RIGHT", "DOWN", "LEFT")  # this package's orientation index -> SSD's name


def load_upstream(src: str) -> types.SimpleNamespace:
    """SSD's HarvestEnv and CleanupEnv from a source checkout, with stand-ins for imports the env step never uses."""

    def stub(name: str, **attributes) -> None:
        if name in sys.modules:
            return
        module = types.ModuleType(name)
        module.__dict__.update(attributes)
        sys.modules[name] = module

    class Space:  # gym.spaces stand-in (only built by observation_space / action_space, unused here)
        def __init__(self, *args, **kwargs):
            pass

    for name in ("ray", "ray.rllib", "ray.rllib.agents"):
        stub(name)
    stub("ray.rllib.agents.callbacks", DefaultCallbacks=object)
    stub("ray.rllib.env", MultiAgentEnv=object)
    stub("gym")
    stub("gym.spaces", Box=Space, Dict=Space, Discrete=Space)
    stub("cv2")
    sys.path.insert(0, src)
    import matplotlib

    matplotlib.use("Agg")
    from social_dilemmas.envs.cleanup import CleanupEnv
    from social_dilemmas.envs.harvest import HarvestEnv

    return types.SimpleNamespace(Harvest=HarvestEnv, Cleanup=CleanupEnv)


# ----- throughput -----
def upstream_steps_per_second(env_class, n_actions: int, seconds: float, n_agents: int = 5) -> float:
    np.random.seed(0)
    env = env_class(num_agents=n_agents)
    env.reset()
    rng = np.random.default_rng(0)
    actions = [{f"agent-{i}": int(a) for i, a in enumerate(row)} for row in rng.integers(0, n_actions, (256, n_agents))]
    for k in range(50):  # warm-up
        env.step(actions[k])
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        env.step(actions[steps % len(actions)])
        steps += 1
    return steps / (time.perf_counter() - start)


def motivegym_rates(env_id: str, preset: str, seconds: float, batch_sizes: tuple[int, ...]) -> dict:
    import gymnasium

    import motivegym
    from motivegym.experiments.throughput import sharded_random_rollout, single_env_steps_per_second

    gym_rate = single_env_steps_per_second(lambda: gymnasium.make(f"motivegym/{env_id}", preset=preset), "gymnasium", seconds)
    env, params = motivegym.make_jax(env_id, preset=preset)
    batched = {}
    for num_envs in batch_sizes:
        num_steps = min(max(16, 200_000 // num_envs), 2000)
        devices = jax.local_devices()
        devices = devices if num_envs % len(devices) == 0 else devices[:1]
        run = sharded_random_rollout(env, params, num_envs, num_steps, devices)
        run(jax.random.PRNGKey(0)).block_until_ready()
        steps, start, calls = 0, time.perf_counter(), 0
        while time.perf_counter() - start < seconds or calls == 0:
            run(jax.random.PRNGKey(calls + 1)).block_until_ready()
            steps += num_envs * num_steps
            calls += 1
        batched[num_envs] = steps / (time.perf_counter() - start)
    return {"gymnasium": gym_rate, "batched": batched}


# ----- equivalence -----
ROOM = ("@@@@@@", "@PP  @", "@PP  @", "@    @", "@    @", "@@@@@@")
CLEANUP_ROOM = ("@@@@@@", "@PPRR@", "@PPRR@", "@  RR@", "@    @", "@@@@@@")


def random_config(rng: np.random.Generator, n_actions: int, river: list[tuple[int, int]]) -> dict:
    interior = [(r, c) for r in range(1, 5) for c in range(1, 5)]
    corner = rng.integers(1, 3, 2)  # agents crowd a random 3×3 block: conflicts are common
    block = [(int(corner[0]) + r, int(corner[1]) + c) for r in range(3) for c in range(3)]
    cells = [block[k] for k in rng.choice(len(block), 4, replace=False)]
    moves_weight = np.ones(n_actions)
    moves_weight[:5] = 4.0  # mostly moves and stays: that is where conflicts happen
    return {
        "pos": cells,
        "orient": rng.integers(0, 4, 4).tolist(),
        "apples": [cell for cell in interior if cell not in river and rng.random() < 0.3],
        "waste": [cell for cell in river if rng.random() < 0.3],
        "actions": rng.choice(n_actions, 4, p=moves_weight / moves_weight.sum()).tolist(),
    }


#: hand-made configurations checked before the random ones (all agents face UP; SSD actions)
FIXED_CONFIGS = {
    # agents 1 and 2 contest [2, 2], whose occupant (agent 0) fails to leave because agent 3, turning, has no
    # move on [1, 2]: SSD moves the contest's winner in anyway and two agents end up sharing [2, 2]
    "shared cell": {"pos": [(2, 2), (2, 1), (2, 3), (1, 2)], "orient": [0, 0, 0, 0], "actions": [2, 1, 0, 5]},
    # the same, and agent 3 fires down the column: the beam hits the higher-index agent of the shared cell
    "shared cell, fired at": {"pos": [(2, 2), (2, 1), (2, 3), (1, 2)], "orient": [0, 0, 0, 2], "actions": [2, 1, 0, 7]},
    # a 2×2 rotation and a 3-cycle around a block
    "rotation": {"pos": [(3, 2), (2, 3), (2, 2), (3, 3)], "orient": [0, 0, 0, 0], "actions": [2, 3, 1, 0]},
}
#: Cleanup only: two clean beams into a polluted river (lanes stop at the first waste cell and at agents)
FIXED_CLEANUP_CONFIGS = {
    "clean beams": {"pos": [(2, 2), (3, 2), (4, 4), (1, 1)], "orient": [1, 1, 0, 0], "actions": [8, 8, 4, 4], "waste": [(1, 3), (2, 3), (2, 4), (3, 3), (3, 4)]},
}


def view_digest(views: np.ndarray) -> str:
    """A short digest of the agents' 15×15 RGB views (uint8) for the outcome key."""
    return hashlib.sha256(np.asarray(views, np.uint8).tobytes()).hexdigest()[:12]


def upstream_outcomes(env_class, rows: tuple[str, ...], config: dict, trials: int, cleanup: bool) -> collections.Counter:
    outcomes = collections.Counter()
    np.random.seed(12345)
    env = env_class(ascii_map=list(rows), num_agents=4)
    env.reset()
    for trial in range(trials):
        env.reset()
        # set the map: no apples except the config's; waste only where the config says
        for r in range(1, 5):
            for c in range(1, 5):
                char = b" "
                if cleanup and rows[r][c] == "R":
                    char = b"H" if (r, c) in config["waste"] else b"R"
                if (r, c) in config["apples"]:
                    char = b"A"
                env.single_update_map(r, c, char)
        for i, agent in enumerate(env.agents.values()):
            agent.set_pos(np.array(config["pos"][i]))
            agent.update_agent_rot(ORIENT_NAMES[config["orient"][i]])
        np.random.seed(trial)
        observations, rewards, _, _ = env.step({f"agent-{i}": a for i, a in enumerate(config["actions"])})
        agents = list(env.agents.values())
        key = (
            tuple(tuple(int(x) for x in a.pos) for a in agents),
            tuple(ORIENT_NAMES.index(a.orientation) for a in agents),
            tuple(float(rewards[f"agent-{i}"]) for i in range(4)),
            tuple(map(tuple, np.argwhere(env.world_map == b"A").tolist())),
            tuple(map(tuple, np.argwhere(env.world_map == b"H").tolist())),
            view_digest(np.stack([observations[f"agent-{i}"]["curr_obs"] for i in range(4)])),
        )
        outcomes[key] += 1
    return outcomes


def motivegym_outcomes(env, params, config: dict, trials: int, step) -> collections.Counter:
    from motivegym.envs.spatial.grid import AgentState

    state, _ = env.reset(jax.random.PRNGKey(0), params)
    shape = env.layout(params).shape
    grids = {}
    for name in ("apples", "waste"):
        if hasattr(state, name):
            grid = np.zeros(shape, bool)
            for cell in config[name]:
                grid[cell] = True
            grids[name] = jnp.asarray(grid)
    agents = AgentState(pos=jnp.asarray(config["pos"], jnp.int32), orient=jnp.asarray(config["orient"], jnp.int32), timeout=jnp.zeros(4, jnp.int32))
    state = dataclasses.replace(state, agents=agents, t=jnp.int32(1), **grids)
    new = step(jax.random.split(jax.random.PRNGKey(7), trials), state, jnp.asarray(config["actions"]), params)
    new, obs, payoffs = new[0], new[1], new[2]
    pos, orient, pay, apples = (np.asarray(x) for x in (new.agents.pos, new.agents.orient, payoffs, new.apples))
    views = np.asarray(obs).reshape(trials, 4, 15, 15, 3)
    waste = np.asarray(new.waste) if hasattr(new, "waste") else np.zeros_like(apples)
    return collections.Counter(
        (
            tuple(tuple(int(x) for x in p) for p in pos[k]),
            tuple(int(o) for o in orient[k]),
            tuple(float(v) for v in pay[k]),
            tuple(map(tuple, np.argwhere(apples[k]).tolist())),
            tuple(map(tuple, np.argwhere(waste[k]).tolist())),
            view_digest(views[k]),
        )
        for k in range(trials)
    )


def check(upstream, configs: int, trials: int = 300) -> dict:
    import social_dilemmas.envs.cleanup as upstream_cleanup
    import social_dilemmas.envs.harvest as upstream_harvest

    from motivegym.envs.spatial.cleanup import Cleanup
    from motivegym.envs.spatial.harvest import Harvest
    from motivegym.envs.spatial.ssd_maps import to_legend

    upstream_harvest.SPAWN_PROB = [0.0, 0.0, 0.0, 0.0]  # no spawning on either side: the maps compare exactly
    upstream_cleanup.appleRespawnProbability = 0.0
    upstream_cleanup.wasteSpawnProbability = 0.0
    no_spawn = {"Harvest": {"regrowth_probs": [0.0, 0.0, 0.0, 0.0]}, "Cleanup": {"apple_respawn_prob": 0.0, "waste_spawn_prob": 0.0}}
    report = {}
    for name, env, rows, upstream_class, n_actions in (
        ("Harvest", Harvest(), ROOM, upstream.Harvest, 8),
        ("Cleanup", Cleanup(), CLEANUP_ROOM, upstream.Cleanup, 9),
    ):
        cleanup = name == "Cleanup"
        river = [(r, c) for r in range(len(rows)) for c in range(len(rows[0])) if rows[r][c] == "R"]
        params = env.default_params(preset="ssd", layout=to_legend(rows), n_agents=4, **no_spawn[name])
        step = jax.jit(jax.vmap(env.step, in_axes=(0, None, None, None)))
        rng = np.random.default_rng(2024)
        worst, same_support, random_cases = 0.0, 0, 0
        named = {**FIXED_CONFIGS, **(FIXED_CLEANUP_CONFIGS if cleanup else {})}
        fixed = [{"apples": [(2, 2)], "waste": [], **c} for c in named.values()]
        for k in range(configs + len(fixed)):
            config = fixed[k] if k < len(fixed) else random_config(rng, n_actions, river)
            theirs = upstream_outcomes(upstream_class, rows, config, trials, cleanup)
            ours = motivegym_outcomes(env, params, config, trials, step)
            same_support += set(theirs) == set(ours)
            random_cases += len(theirs) > 1
            if k < len(fixed):
                print(f"{name} {list(named)[k]}: upstream {dict(theirs)}")
            gap = max(abs(theirs[o] - ours[o]) / trials for o in set(theirs) | set(ours))
            worst = max(worst, gap)
            if set(theirs) != set(ours):
                print(f"{name} config {k}: outcomes differ\n  config {config}\n  upstream {dict(theirs)}\n  ours {dict(ours)}")
        report[name] = {"configs": configs + len(fixed), "same_support": same_support, "random_outcomes": random_cases, "max_frequency_gap": worst}
        print(f"{name}: {same_support}/{configs + len(fixed)} configurations with the same outcomes ({random_cases} with random ones), largest frequency gap {worst:.3f}")
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ssd-src", required=True, help="a checkout of eugenevinitsky/sequential_social_dilemma_games")
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--batch-sizes", default="1,64,1024")
    parser.add_argument("--check", type=int, default=0, help="random configurations for the equivalence check (0: skip)")
    parser.add_argument("--skip-throughput", action="store_true")
    parser.add_argument("--json")
    args = parser.parse_args()
    upstream = load_upstream(args.ssd_src)
    results: dict = {"device": str(jax.devices()[0])}
    if not args.skip_throughput:
        sizes = tuple(int(b) for b in args.batch_sizes.split(","))
        print("| env | preset | upstream SSD steps/s | gymnasium steps/s | ratio | " + " | ".join(f"batched {b}" for b in sizes) + " |")
        print("|---|---|---|---|---|" + "---|" * len(sizes))
        for env_id, upstream_class, n_actions in (("Harvest-v0", upstream.Harvest, 8), ("Cleanup-v0", upstream.Cleanup, 9)):
            reference = upstream_steps_per_second(upstream_class, n_actions, args.seconds)
            for preset in ("ssd", "default"):
                rates = motivegym_rates(env_id, preset, args.seconds, sizes)
                shown = f"{reference:,.0f}" if preset == "ssd" else "–"
                ratio = f"{rates['gymnasium'] / reference:.2f}×" if preset == "ssd" else "–"
                batched = " | ".join(f"{rates['batched'][b]:,.0f}" for b in sizes)
                print(f"| {env_id} | {preset} | {shown} | {rates['gymnasium']:,.0f} | {ratio} | {batched} |", flush=True)
                results[f"{env_id}/{preset}"] = {"upstream_steps_per_s": reference if preset == "ssd" else None, **rates}
    if args.check:  # after the throughput runs: it switches SSD's spawning off
        results["check"] = check(upstream, args.check)
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(results, handle, indent=1, default=str)


if __name__ == "__main__":
    main()
