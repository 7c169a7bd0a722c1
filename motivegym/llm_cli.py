"""``motivegym llm annotate | distill | evolve | judge``: LLM-shaped rewards from the command line.

Every command talks to an OpenAI-compatible server (``--base-url``, ``--model``; or the variables
``MOTIVEGYM_LLM_BASE_URL``, ``MOTIVEGYM_LLM_MODEL``, ``MOTIVEGYM_LLM_API_KEY``) and caches answers
on disk, so a rerun sends nothing already answered. See ``docs/llm.md``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

DEFAULT_OBJECTIVE = "The agents should build trust and cooperate so that everyone's long-run payoff is high."


def add_client_arguments(parser: argparse.ArgumentParser, default_cache: str | None) -> None:
    parser.add_argument("--base-url", default=None, help="OpenAI-compatible API root, e.g. http://localhost:11434/v1 (default: $MOTIVEGYM_LLM_BASE_URL)")
    parser.add_argument("--model", default=None, help="model name (default: $MOTIVEGYM_LLM_MODEL)")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per LLM call: connecting, every read and all retries")
    parser.add_argument("--max-retries", type=int, default=3)
    parser.add_argument("--max-workers", type=int, default=4, help="concurrent requests")
    parser.add_argument("--cache", default=default_cache, help="JSON-lines response cache" + (f" (default: {default_cache})" if default_cache else ""))


def make_client(args: argparse.Namespace, cache: str | Path | None):
    from motivegym.reward_layers.llm.client import LLMClient

    return LLMClient(args.base_url, args.model, timeout=args.timeout, max_retries=args.max_retries, max_workers=args.max_workers, cache_path=cache)


def make_env(args: argparse.Namespace):
    """``(env, params)`` for ``args.env`` with the ``--param`` pairs parsed by the ``env_kwargs`` given to :func:`add_llm_commands`."""
    import motivegym

    return motivegym.make_jax(args.env, **args.env_kwargs(args.param))


def command_annotate(args: argparse.Namespace) -> int:
    from motivegym.reward_layers.llm.motif import annotate_pairs, collect_pairs

    env, params = make_env(args)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    dataset = collect_pairs(env, params, args.pairs, seed=args.seed)
    dataset.save(out / "pairs.npz")
    client = make_client(args, args.cache or out / "llm_cache.jsonl")
    labels = annotate_pairs(dataset.caption_pairs, client, out / "labels.jsonl", args.objective)
    counts = {name: sum(label == value for label in labels) for name, value in (("first", 0), ("second", 1), ("tie", 2), ("unparsed", None))}
    print(f"annotated {len(labels)} pairs of {args.env} states ({client.requests_sent} requests sent, {client.cache_hits} cached): {counts}")
    print(f"wrote {out / 'pairs.npz'} and {out / 'labels.jsonl'}")
    return 0


def command_distill(args: argparse.Namespace) -> int:
    from motivegym.reward_layers.llm.motif import PairDataset, distill_dataset, pair_key, read_labels

    data_dir = Path(args.data)
    dataset = PairDataset.load(data_dir / "pairs.npz")
    rows = read_labels(data_dir / "labels.jsonl")
    keys = [pair_key(a, b, args.objective) for a, b in dataset.caption_pairs]
    missing = sum(key not in rows for key in keys)
    if missing:
        raise ValueError(f"{missing} of {len(keys)} pairs have no label for this objective in {data_dir / 'labels.jsonl'}: run `motivegym llm annotate` (same --objective) first")
    labels = [rows[key]["label"] for key in keys]
    result = distill_dataset(dataset, labels, feature_kind=args.features, hidden_sizes=tuple(args.hidden), steps=args.steps, seed=args.seed)
    out = Path(args.out) if args.out else data_dir / ("reward_model.npz" if args.features == "obs" else "text_reward_model.npz")
    result.model.save(out)
    print(
        f"distilled {args.features} reward model: train agreement {result.train_agreement:.3f} ({result.num_train} pairs), "
        f"held-out agreement {result.heldout_agreement:.3f} ({result.num_heldout} pairs), {result.num_dropped} unparsed labels dropped"
    )
    print(f"wrote {out}" + (f"  (use it as reward='learned:{out}')" if args.features == "obs" else ""))
    return 0


def command_evolve(args: argparse.Namespace) -> int:
    from motivegym.experiments.eureka import evolve, ippo_trainer

    env, params = make_env(args)
    out = Path(args.out)
    client = make_client(args, args.cache or out.with_suffix(".cache.jsonl"))
    trainer = ippo_trainer(total_steps=int(float(args.steps)), num_envs=args.num_envs, num_steps=args.num_steps, seed=args.seed)
    result = evolve(env, params, client, args.objective, args.candidates, args.iterations, trainer, out, args.temperature)
    statuses = [c["status"] for c in result["candidates"]]
    print(f"{len(statuses)} candidates: {statuses.count('ok')} trained, {statuses.count('unsafe')} unsafe, {statuses.count('invalid')} invalid")
    best = result["best"]
    if best is None:
        print(f"no valid candidate; see {out}")
        return 1
    best_path = out.with_suffix(".best.py")
    best_path.write_text(best["code"], encoding="utf-8")
    print(f"best score {best['score']:.4g} (iteration {best['iteration']}, candidate {best['index']}); wrote {out} and {best_path}")
    print(f"use it as reward='code:{best_path}'")
    return 0


def command_judge(args: argparse.Namespace) -> int:
    import numpy as np

    from motivegym.reward_layers.llm.judge import episode_caption, judge_episodes, record_episode

    env, params = make_env(args)
    captions = [episode_caption(env, params, record_episode(env, params, args.seed + k, args.policy)) for k in range(args.episodes)]
    client = make_client(args, args.cache)
    result = judge_episodes(client, captions, args.objective, args.mode)
    for k, (reward, answer) in enumerate(zip(result.rewards, result.answers)):
        last = answer.strip().splitlines()[-1] if answer.strip() else ""
        print(f"episode {k}: proxy reward {reward:.3f}   ({last[:80]})")
    print(f"mean proxy reward {np.nanmean(result.rewards) if result.num_unparsed < len(captions) else float('nan'):.3f}; {result.num_unparsed} unparsed")
    return 0


def command_progress(args: argparse.Namespace) -> int:
    from motivegym.reward_layers.llm.progress import propose_progress_function

    env, params = make_env(args)
    client = make_client(args, args.cache)
    layer = propose_progress_function(env, params, client, args.objective, temperature=args.temperature)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(layer.source, encoding="utf-8")
    print(f"the LLM's progress function passed the whitelist, the bounded sandbox and {args.env}'s sample transitions; wrote {out}")
    print(f"use it as reward='progress:{out}' (a count bonus 1/sqrt(N) over 20 progress bins in [0, 1]), e.g. --reward 'private+0.1*progress:{out}'")
    return 0


def _guarded(command):
    """LLM and sandbox errors end the command with a message, like ``ValueError`` in ``motivegym.cli.main``."""

    def run(args: argparse.Namespace) -> int:
        from motivegym.reward_layers.llm.client import LLMError
        from motivegym.reward_layers.llm.sandbox import SandboxError

        try:
            return command(args)
        except (LLMError, SandboxError) as error:
            print(f"motivegym: error: {error}", file=sys.stderr)
            return 2

    return run


def add_llm_commands(subparsers, env_kwargs: Callable[[list[str]], dict]) -> None:
    """Register ``llm annotate | distill | evolve | judge`` on the top-level ``motivegym`` subparsers.

    ``env_kwargs`` turns ``--param NAME=VALUE`` pairs into env keyword arguments (``motivegym.core.params.parse_env_kwargs``);
    it is passed in, so this module never imports ``motivegym.cli`` (which imports it)."""
    llm = subparsers.add_parser("llm", help="LLM-shaped rewards (Motif, Eureka, LLM judge) via an OpenAI-compatible server")
    llm.set_defaults(env_kwargs=env_kwargs)
    sub = llm.add_subparsers(dest="llm_command", required=True)

    p = sub.add_parser("annotate", help="caption random state pairs and ask the LLM which is closer to an objective (Motif)")
    p.add_argument("env")
    p.add_argument("--pairs", type=int, default=200)
    p.add_argument("--objective", default=DEFAULT_OBJECTIVE)
    p.add_argument("--out", default="runs/motif", help="folder for pairs.npz, labels.jsonl and the cache")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--param", action="append", default=[], help="env parameter NAME=VALUE (repeatable)")
    add_client_arguments(p, None)
    p.set_defaults(func=_guarded(command_annotate))

    p = sub.add_parser("distill", help="fit a JAX reward model to the preference labels (Bradley-Terry)")
    p.add_argument("data", nargs="?", default="runs/motif", help="the folder written by `llm annotate`")
    p.add_argument("--objective", default=DEFAULT_OBJECTIVE, help="the objective the labels were made for")
    p.add_argument("--features", choices=("obs", "text"), default="obs", help="observation rows (usable in jit) or hashed caption n-grams")
    p.add_argument("--hidden", type=int, nargs="+", default=[64, 64])
    p.add_argument("--steps", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=None, help="model .npz (default: <data>/reward_model.npz)")
    p.set_defaults(func=command_distill)

    p = sub.add_parser("evolve", help="Eureka: the LLM writes reward code, each candidate is trained briefly with IPPO")
    p.add_argument("env")
    p.add_argument("--objective", default=DEFAULT_OBJECTIVE)
    p.add_argument("--candidates", type=int, default=4)
    p.add_argument("--iterations", type=int, default=3)
    p.add_argument("--steps", default="2e4", help="IPPO env steps per candidate")
    p.add_argument("--num-envs", type=int, default=8)
    p.add_argument("--num-steps", type=int, default=64)
    p.add_argument("--temperature", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="runs/evolve.json", help="every candidate with its score (JSON)")
    p.add_argument("--param", action="append", default=[], help="env parameter NAME=VALUE (repeatable)")
    add_client_arguments(p, None)
    p.set_defaults(func=_guarded(command_evolve))

    p = sub.add_parser("judge", help="score whole episodes against an objective with the LLM (Kwon et al. 2023)")
    p.add_argument("env")
    p.add_argument("--objective", default=DEFAULT_OBJECTIVE)
    p.add_argument("--episodes", type=int, default=4)
    p.add_argument("--policy", default="random", help="'random' or 'constant:<level>'")
    p.add_argument("--mode", choices=("score", "yes_no"), default="score")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--param", action="append", default=[], help="env parameter NAME=VALUE (repeatable)")
    add_client_arguments(p, "runs/llm_cache.jsonl")
    p.set_defaults(func=_guarded(command_judge))

    p = sub.add_parser("progress", help="the LLM writes a progress function (Sarukkai et al. 2024) for reward='progress:<file.py>'")
    p.add_argument("env")
    p.add_argument("--objective", default=DEFAULT_OBJECTIVE)
    p.add_argument("--temperature", type=float, default=0.0)
    p.add_argument("--out", default="runs/progress.py", help="where to write the checked `def progress(obs, info)`")
    p.add_argument("--param", action="append", default=[], help="env parameter NAME=VALUE (repeatable)")
    add_client_arguments(p, "runs/llm_cache.jsonl")
    p.set_defaults(func=_guarded(command_progress))


def command_oni(args: argparse.Namespace) -> int:
    from motivegym.baselines.ppo import PPOConfig
    from motivegym.experiments.oni import ONIConfig, ONIWorkerError, train_oni

    env, params = make_env(args)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    client = make_client(args, args.cache or out / "llm_cache.jsonl")
    ppo = PPOConfig(total_steps=int(float(args.steps)), num_envs=args.num_envs, num_steps=args.num_steps, centralized_critic=args.algo == "mappo")
    config = ONIConfig(
        objective=args.objective, coef=args.coef, states_per_update=args.states_per_update, min_labels=args.min_labels,
        distill_every=args.distill_every, distill_steps=args.distill_steps, warm_distill_steps=args.warm_distill_steps, hidden_sizes=tuple(args.hidden),
        first_model_by_update=args.first_model_by, worker_nice=args.worker_nice, seed=args.seed,
    )  # fmt: skip
    base = None if args.reward == "none" else args.reward
    try:
        result = train_oni(env, params, client, ppo, config, base, seed=args.seed, out_dir=out, progress=True)
    except ONIWorkerError as error:  # the cause (server error, timeout) is in the message
        print(f"motivegym: error: {error}", file=sys.stderr)
        return 2
    stats = result.stats
    print(
        f"trained {result.env_steps:,} env-steps in {result.wall_s:.1f} s (compile included); {stats.labels} labels "
        f"({stats.pairs_sent} pairs sent, {client.requests_sent} requests, {client.cache_hits} cached, {stats.dropped} snapshots dropped); "
        f"{stats.distills} reward models distilled, swapped in {len(result.swaps)} times (before updates {result.swaps[:10]}{' …' if len(result.swaps) > 10 else ''})"
    )
    if stats.labels == 0:
        print(
            f"note: the feedback worker labelled nothing in this run (its process runs at niceness {args.worker_nice}, on the CPU "
            "that the learner and other jobs leave); on a busy machine lower --worker-nice or train for more --steps",
            file=sys.stderr,
        )
    print(f"wrote {out / 'summary.json'}" + (f" and {out / 'reward_model.npz'} (use it as reward='learned:{out / 'reward_model.npz'}')" if result.model is not None else ""))
    return 0


def add_oni_command(subparsers, env_kwargs: Callable[[list[str]], dict]) -> None:
    """Register ``motivegym oni ENV``: PPO with ONI-style online LLM feedback (``motivegym.experiments.oni``)."""
    p = subparsers.add_parser("oni", help="ONI: PPO while an asynchronous worker labels captions with an LLM and swaps in a distilled reward model")
    p.set_defaults(env_kwargs=env_kwargs)
    p.add_argument("env")
    p.add_argument("--server", dest="base_url", default=None, help="OpenAI-compatible API root (same as --base-url)")
    p.add_argument("--algo", choices=("ippo", "mappo"), default="ippo")
    p.add_argument("--reward", default="private", help="base reward layer the online model is added to ('none': the model alone)")
    p.add_argument("--coef", type=float, default=0.1, help="weight of the online reward model")
    p.add_argument("--objective", default=DEFAULT_OBJECTIVE)
    p.add_argument("--steps", default="1e5", help="env steps (summed over parallel envs)")
    p.add_argument("--num-envs", type=int, default=16)
    p.add_argument("--num-steps", type=int, default=128)
    p.add_argument("--states-per-update", type=int, default=4, help="env states sent to the annotator after each update")
    p.add_argument("--min-labels", type=int, default=32, help="labels before the first distillation")
    p.add_argument("--distill-every", type=int, default=32, help="new labels between distillations")
    p.add_argument("--distill-steps", type=int, default=300, help="AdamW steps of the first fit (from scratch)")
    p.add_argument("--warm-distill-steps", type=int, default=60, help="AdamW steps of each later fit, continued from the previous model")
    p.add_argument("--hidden", type=int, nargs="+", default=[64, 64], help="reward model hidden sizes")
    p.add_argument("--first-model-by", type=int, default=None, help="wait at this update until the first reward model is in (default: never wait)")
    p.add_argument("--worker-nice", type=int, default=19, help="niceness of the feedback worker's process, 0-19 (19: only the CPU the learner leaves)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="runs/oni", help="folder for summary.json, labels.jsonl, the cache and reward_model.npz")
    p.add_argument("--param", action="append", default=[], help="env parameter NAME=VALUE (repeatable)")
    add_client_arguments(p, None)
    p.set_defaults(func=_guarded(command_oni))
