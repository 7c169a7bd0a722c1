"""``motivegym list | run | bench | validate | eval | train | sweep | report | schelling | intrinsic | docs | llm … | oni``
and more (``motivegym --help``)."""

from __future__ import annotations

import argparse
import sys

import numpy as np

from motivegym.core.params import parse_env_kwargs
from motivegym.llm_cli import add_llm_commands, add_oni_command


def command_list(args: argparse.Namespace) -> int:
    import motivegym

    print(f"{'id':<28} {'family':<12} {'tier':<5} {'n':>3} {'horizon':>7}  mechanism")
    for env_id in motivegym.list_envs(args.family):
        spec = motivegym.get_spec(env_id)
        env, params = motivegym.make_jax(env_id)
        print(f"{env_id:<28} {spec.family:<12} {spec.tier:<5} {env.n_agents(params):>3} {env.max_episode_steps(params):>7}  {spec.mechanism}")
    return 0


def rollout_policy(policy: str, action_space, rng: np.random.Generator, env=None):
    """A host-side action source for ``motivegym run``: ``random``, ``constant:<fraction of each endowment>`` or
    ``checkpoint:<path>`` (the greedy policy of a trained baseline; ``env`` is the Gymnasium env it acts in)."""
    if policy.startswith("checkpoint:"):
        return checkpoint_actor(policy, env, rng)
    if policy == "random":  # uniform over the space (Box or MultiDiscrete), seeded from rng
        action_space.seed(int(rng.integers(2**31)))
        return action_space.sample
    if policy.startswith("constant:"):
        if not hasattr(action_space, "high"):
            raise ValueError(f"constant:<level> is a fraction of each endowment and needs continuous actions; this env's actions are {action_space}")
        level = float(policy.split(":", 1)[1])
        if not 0.0 <= level <= 1.0:
            raise ValueError(f"constant level must be in [0, 1], got {level}")
        return lambda: (level * action_space.high).astype(np.float32)
    raise ValueError(f"unknown policy {policy!r}; use 'random', 'constant:<level>' or 'checkpoint:<path>'")


def checkpoint_actor(policy: str, env, rng: np.random.Generator):
    """Greedy actions of a checkpoint on the host: the jitted policy applied to the per-agent observations
    ``[n_agents, obs_size]`` of the env's current JAX state (the Gymnasium observation is the global state)."""
    import jax

    from motivegym.baselines.checkpoint import CheckpointPolicy

    core = env.unwrapped
    actor = CheckpointPolicy.from_spec(policy)
    state = actor.init(core.core_env, core.params)  # ValueError unless the env and its params match the checkpoint
    act = jax.jit(lambda key, obs: actor(key, obs, state)[0])
    key = jax.random.PRNGKey(int(rng.integers(2**31)))

    def next_action() -> np.ndarray:
        obs = core.core_env.observe(core.env_state(), core.params)
        return np.asarray(act(key, obs), env.action_space.dtype)

    return next_action


def command_run(args: argparse.Namespace) -> int:
    import gymnasium

    import motivegym  # noqa: F401

    env_name, env_kwargs = args.env or "TrustDilemma-v0", parse_env_kwargs(args.param)
    if args.env is None and args.policy.startswith("checkpoint:"):  # the env (and params) the checkpoint was trained on
        from motivegym.baselines.checkpoint import read_metadata

        metadata = read_metadata(args.policy.split(":", 1)[1])
        env_name, env_kwargs = metadata["env_id"], env_kwargs or metadata["env_kwargs"]
    env_id = f"motivegym/{motivegym.get_spec(env_name).id}"
    # vector rewards are intended (one per agent); check_env is run by the test suite
    env = gymnasium.make(env_id, reward=args.reward, scalarize=None, disable_env_checker=True, **env_kwargs)
    policy = rollout_policy(args.policy, env.action_space, np.random.default_rng(args.seed), env)
    obs, info = env.reset(seed=args.seed)
    names = env.unwrapped.agent_names
    print(f"{env_name}  reward={env.unwrapped.reward_layer.name}  agents={', '.join(names)}  policy={args.policy}  seed={args.seed}")
    print(f"{'t':>4}  {'actions':<28} {'payoffs':<28} {'rewards':<28} {'mean trust':>10}")
    payoff_total = np.zeros(len(names))
    reward_total = np.zeros(len(names))
    fmt = lambda v: " ".join(f"{x:8.2f}" for x in v[:3]) + (" …" if len(v) > 3 else "")  # noqa: E731
    for t in range(1, args.steps + 1):
        action = policy()
        obs, reward, terminated, truncated, info = env.step(action)
        info.setdefault("actions", np.atleast_1d(action))  # envs whose info does not echo the joint action (matrix games)
        payoff_total += info["payoffs"]
        reward_total += info["rewards"]
        trust = float(info.get("mean_trust", np.nan))
        print(f"{t:>4}  {fmt(info['actions']):<28} {fmt(info['payoffs']):<28} {fmt(info['rewards']):<28} {trust:>10.3f}")
        if terminated or truncated:
            print(f"episode ended at t={t} ({'terminated' if terminated else 'truncated'})")
            break
    print(f"total payoffs {np.round(payoff_total, 2).tolist()}  welfare {payoff_total.sum():.2f}")
    print(f"total rewards {np.round(reward_total, 2).tolist()}")
    return 0


def command_bench(args: argparse.Namespace) -> int:
    import motivegym
    from motivegym.core.cpu_defaults import request_host_devices
    from motivegym.experiments.throughput import bench_cli

    request_host_devices(args.host_devices)
    env_ids = args.envs.split(",") if args.envs else motivegym.list_envs()
    for env_id in env_ids:
        motivegym.get_spec(env_id)
    sizes = tuple(int(b) for b in args.batch_sizes.split(","))
    compare = tuple(c for c in args.compare.split(",") if c and c != "none")
    presets = tuple(args.preset.split(",")) if args.preset else (None,)
    return bench_cli([motivegym.get_spec(e).id for e in env_ids], args.seconds, sizes, args.json, compare=compare, presets=presets)


def command_validate(args: argparse.Namespace) -> int:
    from motivegym.experiments.validation import validate_cli

    return validate_cli(args.case, args.out)


def command_eval(args: argparse.Namespace) -> int:
    from motivegym.experiments.evaluation import eval_cli

    return eval_cli(args.env, args.policy, args.reward, args.episodes, args.seed)


def command_train(args: argparse.Namespace) -> int:
    from motivegym.baselines.train import train_cli

    return train_cli(args.algo, args.env, args.reward, args.seeds, int(float(args.steps)), args.out, args.num_envs, args.num_steps, args.seed, args.bins)


def command_sweep(args: argparse.Namespace) -> int:
    from motivegym.core.cpu_defaults import request_host_devices
    from motivegym.experiments.sweep import sweep_cli

    request_host_devices(args.host_devices)
    return sweep_cli(args)


def command_report(args: argparse.Namespace) -> int:
    from motivegym.experiments.report import report_cli
    from motivegym.experiments.sweep import split_list

    return report_cli(args.dir, split_list(args.envs) if args.envs else None, args.out)


def command_scenario(args: argparse.Namespace) -> int:
    from motivegym.experiments.scenarios import scenario_cli

    return scenario_cli(args)


def command_crossplay(args: argparse.Namespace) -> int:
    from motivegym.experiments.crossplay import crossplay_cli

    return crossplay_cli(args)


def command_intrinsic(args: argparse.Namespace) -> int:
    from motivegym.experiments.intrinsic import intrinsic_cli

    return intrinsic_cli(args)


def add_intrinsic_arguments(parser: argparse.ArgumentParser) -> None:
    """``motivegym intrinsic`` (:mod:`motivegym.experiments.intrinsic`)."""
    parser.add_argument("--env", required=True, help="registered env id, e.g. CrafterTeam-v0")
    parser.add_argument("--env-kwarg", action="append", default=[], help="env parameter NAME=VALUE (repeatable), e.g. preset=crafter")
    parser.add_argument("--layers", default="none,count,rnd,novelty", help="comma-separated entries: 'none', an intrinsic layer ('rnd', 'rnd:0.1', 'icm@rollout', 'icm(normalize=true)'), "
                        "an LLM-derived bonus ('progress:FILE.py'), each optionally 'label=spec'")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--seed-group", type=int, default=None, help="seeds per compiled program and part file (default: all)")
    parser.add_argument("--steps", type=int, default=100_000, help="env steps per seed (summed over parallel envs)")
    parser.add_argument("--out", required=True, help="output directory; its parts/ make a rerun resume")
    parser.add_argument("--base", default=None, help="base reward layer (default: the env's registered reward)")
    parser.add_argument("--coef", type=float, default=0.05, help="weight of the intrinsic layer in base + coef·layer")
    parser.add_argument("--algo", default="ippo", choices=("ippo", "mappo"))
    parser.add_argument("--num-envs", type=int, default=16)
    parser.add_argument("--num-steps", type=int, default=128)
    parser.add_argument("--eval-episodes", type=int, default=32)
    parser.add_argument("--eval-policy", default="greedy", choices=("greedy", "sample"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tables-only", action="store_true", help="train nothing: rebuild the tables and figures from the parts under --out "
                        "(the listed layers first, in order)")


def command_crafter_score(args: argparse.Namespace) -> int:
    from motivegym.experiments.crafter_score import crafter_score_cli

    return crafter_score_cli(args.run_dir)


def command_docs(args: argparse.Namespace) -> int:
    from motivegym.envdocs import write_environment_docs

    path = write_environment_docs(args.out)
    print(f"wrote {path}")
    return 0


def command_schelling(args: argparse.Namespace) -> int:
    from motivegym.experiments.schelling import schelling_cli

    return schelling_cli(args.env, args.out, args.episodes, args.seed, parse_env_kwargs(args.env_kwarg), args.cooperator, args.defector)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="motivegym", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("list", help="list registered environments")
    p.add_argument("--family", default=None)
    p.set_defaults(func=command_list)

    p = sub.add_parser("run", help="roll out one episode through gymnasium.make and print it")
    p.add_argument("env", nargs="?", default=None, help="env id (default TrustDilemma-v0, or a checkpoint policy's env and params)")
    p.add_argument("--reward", default=None, help="reward layer (default: the env's registry default)")
    p.add_argument(
        "--policy", default="random", help="'random', 'constant:<level>' or 'checkpoint:<path>' (a trained baseline, docs/checkpoints.md)"
    )
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--param", action="append", default=[], help="env parameter NAME=VALUE (repeatable)")
    p.set_defaults(func=command_run)

    p = sub.add_parser("bench", help="throughput benchmark (single-env and batched)")
    p.add_argument("--envs", default=None, help="comma-separated ids (default: all)")
    p.add_argument("--seconds", type=float, default=1.0, help="timed seconds per measurement")
    p.add_argument("--batch-sizes", default="1,64,1024,8192")
    p.add_argument("--json", default=None, help="also write the rows as JSON")
    p.add_argument(
        "--compare",
        default="defaults-off,pinned",
        help="single-env child runs side by side: defaults-off (MOTIVEGYM_XLA_DEFAULTS=0), pinned (one core), or none",
    )
    p.add_argument(
        "--host-devices",
        default="auto",
        help="XLA host (CPU) devices to split batches over: auto (one per core, unless XLA_FLAGS sets it) or N",
    )
    p.add_argument(
        "--preset",
        default=None,
        help="comma-separated preset= values to measure one after another, one row each (Harvest/Cleanup: default,ssd,meltingpot)",
    )
    p.set_defaults(func=command_bench)

    p = sub.add_parser("validate", help="case-study validation rubrics run on our envs")
    p.add_argument("case", nargs="?", default="all", help="SLCD | RenaultNissan | ApacheProject | AppleAppStore | all")
    p.add_argument("--out", default=None, help="JSON report path")
    p.set_defaults(func=command_validate)

    p = sub.add_parser("eval", help="evaluate a reference policy")
    p.add_argument("env", help="env id, or checkpoint:<path> alone (evaluated on the env and keywords it was trained on)")
    p.add_argument("policy", nargs="?", help="constant:<level> | random | titfortat | oracle:<name> | checkpoint:<path> (docs/checkpoints.md)")
    p.add_argument("--reward", default="integrated")
    p.add_argument("--episodes", type=int, default=16)
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=command_eval)

    p = sub.add_parser("train", help="train IPPO/MAPPO/IQL/VDN/QMIX (vmapped over seeds) and write curves + checkpoint")
    p.add_argument("algo", help="ippo | mappo | iql | vdn | qmix")
    p.add_argument("env")
    p.add_argument("--reward", default="integrated")
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--steps", default="1e5", help="env steps per seed (summed over parallel envs)")
    p.add_argument("--num-envs", type=int, default=16)
    p.add_argument("--num-steps", type=int, default=128, help="rollout length per update")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="runs/train")
    p.add_argument("--bins", type=int, default=11, help="discrete actions per agent for iql/vdn/qmix on continuous envs")
    p.set_defaults(func=command_train)

    p = sub.add_parser("sweep", help="reward-type ablation sweep (resumable; one compiled program per env × algo)")
    p.add_argument("--config", default=None, help="TOML or YAML file with the sweep settings (flags override it)")
    p.add_argument(
        "--envs", default=None, help="comma-separated env ids, or 'dilemmas': every env whose dilemma gap passes the threshold"
    )
    p.add_argument("--rewards", default=None, help="comma-separated reward layers (default private,integrated,cooperative)")
    p.add_argument(
        "--algos", default=None, help="comma-separated algorithms: ippo, mappo, iql, vdn, qmix (default ippo; vdn/qmix need one reward)"
    )
    p.add_argument("--sharing", default=None, help="parameter sharing: shared, separate or both (default shared)")
    p.add_argument("--checkpoints", default=None, help="fractions of the budget at which runs are evaluated (default 0.25,0.5,1)")
    p.add_argument("--bins", type=int, default=None, help="discrete actions per agent for iql on continuous envs (default 11)")
    p.add_argument("--seeds", type=int, default=None, help="seeds per (env, algo, sharing, reward) (default 10)")
    p.add_argument(
        "--steps",
        default=None,
        help="env steps per run (default 1e6), or 'reference': the reference benchmark's 500k/1M per env",
    )
    p.add_argument("--num-envs", type=int, default=None)
    p.add_argument("--num-steps", type=int, default=None)
    p.add_argument("--eval-episodes", type=int, default=None)
    p.add_argument("--executor", default="local", help="local | ray")
    p.add_argument("--out", default="runs/sweep")
    p.add_argument(
        "--host-devices",
        default="auto",
        help="XLA host (CPU) devices to split batches over: auto (one per core, unless XLA_FLAGS sets it) or N",
    )
    p.set_defaults(func=command_sweep)

    p = sub.add_parser("report", help="tables with bootstrap CIs, rankings and figures from a sweep directory")
    p.add_argument("dir")
    p.add_argument("--envs", default=None, help="comma-separated env ids: report over these envs' runs only")
    p.add_argument("--out", default=None, help="folder for report.md and the figures (default: DIR)")
    p.set_defaults(func=command_report)

    p = sub.add_parser("scenario", help="focal policies among background bots (held-out co-players): list | run")
    p.add_argument("action", choices=("list", "run"))
    p.add_argument("names", nargs="*", help="scenario names (ENV/ROLE), env ids (all their scenarios) or 'all'")
    p.add_argument("--env", default=None, help="list: only this env's scenarios")
    p.add_argument("--focal", default="random", help="focal policy spec: random | constant:<level> | bot:<role> | checkpoint:PATH | ...")
    p.add_argument("--episodes", type=int, default=None, help="episodes per focal seed (default: the scenario's, 32)")
    p.add_argument("--seed", type=int, default=0, help="seed of the episode keys (the same for every focal policy)")
    p.add_argument("--out", default=None, help="CSV path for the results table")
    p.set_defaults(func=command_scenario)

    p = sub.add_parser("crossplay", help="populations trained under different reward layers against each other (a sweep's checkpoints)")
    p.add_argument("dir", help="a sweep directory (motivegym sweep --out DIR) with checkpoints")
    p.add_argument("--envs", default=None, help="comma-separated env ids (default: every env of the sweep)")
    p.add_argument("--algos", default=None, help="comma-separated algorithms (default: every algorithm of the sweep)")
    p.add_argument("--episodes", type=int, default=8, help="episodes per seed pair and cell")
    p.add_argument("--seed", type=int, default=0, help="seed of the episode keys")
    p.add_argument("--out", default=None, help="output directory (default DIR/crossplay)")
    p.set_defaults(func=command_crossplay)

    p = sub.add_parser("schelling", help="Schelling diagram (cooperator/defector payoffs vs other cooperators) as CSV + PNG")
    p.add_argument("env")
    p.add_argument("--out", default="runs/schelling", help="directory for schelling_ENV.csv and schelling_ENV.png")
    p.add_argument("--episodes", type=int, default=32)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--env-kwarg", action="append", default=[], help="env parameter NAME=VALUE (repeatable)")
    for role in ("cooperator", "defector"):
        p.add_argument(
            f"--{role}", default=None, help=f"policy spec of the {role} (default bot:{role}), e.g. oracle:nash, constant:0.5; names the files"
        )
    p.set_defaults(func=command_schelling)

    p = sub.add_parser("crafter-score", help="Crafter score and per-achievement success rates of a run directory, per agent and team, CIs over seeds")
    p.add_argument("run_dir", help="holds achievements.csv (per-episode flags) or an intrinsic-experiment runs.csv")
    p.set_defaults(func=command_crafter_score)

    p = sub.add_parser("intrinsic", help="IPPO/MAPPO with each intrinsic reward layer vs none, resumable parts, CIs (docs/intrinsic.md)")
    add_intrinsic_arguments(p)
    p.set_defaults(func=command_intrinsic)

    p = sub.add_parser("docs", help="regenerate docs/environments.md from the registry")
    p.add_argument("--out", default="docs/environments.md")
    p.set_defaults(func=command_docs)

    add_llm_commands(sub, parse_env_kwargs)
    add_oni_command(sub, parse_env_kwargs)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except ValueError as error:
        print(f"motivegym: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
