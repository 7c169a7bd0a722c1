"""IPPO with vs without intrinsic-motivation reward layers (``docs/intrinsic.md``).

``python -m motivegym.experiments.intrinsic --env ENV --layers none,count,rnd,novelty --seeds 3 --steps N --out DIR``

For each entry of ``--layers`` it trains IPPO (``--algo mappo`` for MAPPO) on the reward
``base + coef · layer`` (``none``: the base alone; ``base`` defaults to the env's registered reward), all
seeds vmapped in one compiled program per layer, then evaluates each seed on ``--eval-episodes`` episodes.
It records payoff returns and, where the env's info has an ``achievements`` array of flags, the number of
achievements unlocked per episode and each achievement's success rate (fraction of episodes in which it was
unlocked at least once), and reports means over seeds with 95% Student-t confidence intervals.

Writes to ``--out``: ``runs.csv`` (one row per layer × seed), ``summary.csv`` (one row per layer × metric,
with the CI), ``curves.csv`` (training curve per layer × seed × chunk) and ``intrinsic.png``.
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

#: two-sided 95% Student-t quantiles t_{0.975, df} for df = 1 … 30 (normal quantile beyond)
T_QUANTILES_95 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip
ALGORITHMS = {"ippo": {"centralized_critic": False}, "mappo": {"centralized_critic": True}}
EVAL_POLICIES = ("greedy", "sample")
NO_LAYER = "none"


def mean_ci95(values: np.ndarray) -> tuple[float, float, float]:
    """``(mean, low, high)``: ``x̄ ± t_{0.975, k−1} · s/√k`` over the ``k`` values (a zero-width interval for one)."""
    values = np.asarray(values, np.float64)
    mean = float(values.mean())
    if values.size < 2:
        return mean, mean, mean
    df = values.size - 1
    quantile = T_QUANTILES_95[df - 1] if df <= len(T_QUANTILES_95) else 1.96
    half = quantile * float(values.std(ddof=1)) / math.sqrt(values.size)
    return mean, mean - half, mean + half


def parse_layers(text: str) -> list[str]:
    """Comma-separated intrinsic layer specs (``none``, ``count``, ``rnd:0.1``, …); unknown names raise ``ValueError``."""
    from motivegym.reward_layers import INTRINSIC_LAYER_NAMES, IntrinsicLayer, reward_layer

    layers = [part.strip() for part in text.split(",") if part.strip()]
    if not layers:
        raise ValueError("--layers needs at least one entry, e.g. 'none,count,rnd,novelty'")
    for spec in layers:
        if spec != NO_LAYER and not isinstance(reward_layer(spec), IntrinsicLayer):
            raise ValueError(f"--layers entry {spec!r} is not an intrinsic layer ({', '.join(INTRINSIC_LAYER_NAMES)}) or 'none'")
    if len(set(layers)) != len(layers):
        raise ValueError(f"--layers lists an entry twice: {text!r}")
    return layers


def combined_layer(base: str, intrinsic: str, coef: float):
    """``base`` alone (``none``) or ``WeightedSum(((1, base), (coef, intrinsic)))``: its state is ``(base, intrinsic)``."""
    from motivegym.reward_layers import WeightedSum, reward_layer

    if intrinsic == NO_LAYER:
        return reward_layer(base)
    return WeightedSum(((1.0, reward_layer(base)), (float(coef), reward_layer(intrinsic))))


def achievement_shape(env, params) -> tuple[int, ...] | None:
    """Shape of ``info["achievements"]`` of one step, or ``None`` when the env reports none."""

    def one_step(key):
        state, _ = env.reset(key, params)
        zero = jnp.zeros(env.n_agents(params), jnp.int32 if env.action_kind == "discrete" else jnp.float32)
        return env.step(key, state, zero, params)[4]

    info = jax.eval_shape(one_step, jax.random.PRNGKey(0))
    return tuple(info["achievements"].shape) if "achievements" in info else None


def achievement_labels(env, params, shape: tuple[int, ...]) -> list[str]:
    """One label per flattened flag: ``<name>_agent<i>`` for ``[n, K]`` flags named in ``static_info()["achievement_names"]``, else the index."""
    names = env.static_info(params).get("achievement_names")
    if len(shape) == 2 and names is not None and len(names) == shape[1]:
        return [f"{name}_agent{i}" for i in range(shape[0]) for name in names]
    return [str(j) for j in range(int(np.prod(shape)))]


def evaluate_runner(algo, runner: dict, key: jax.Array, episodes: int, policy: str, has_achievements: bool) -> dict:
    """Payoff returns ``[episodes, n]`` and, with achievements, the flags ever set ``[episodes, …]`` (no auto-reset)."""
    from motivegym.baselines.normalization import normalize

    env, params, cfg = algo.env, algo.env_params, algo.config

    def one_episode(episode_key):
        reset_key, run_key = jax.random.split(episode_key)
        state, obs = env.reset(reset_key, params)

        def body(carry, step_key):
            state, obs, total, unlocked, alive = carry
            action_key, env_key = jax.random.split(step_key)
            norm_obs = normalize(runner["obs_stats"], obs) if cfg.normalize_observations else obs
            output = algo.policy_output(runner["networks"], norm_obs)
            raw = algo.greedy(output) if policy == "greedy" else algo.sample(action_key, output)[0]
            state, obs, payoffs, done, info = env.step(env_key, state, algo.env_action(raw), params)
            if has_achievements:
                unlocked = unlocked | (alive & info["achievements"].astype(bool))
            return (state, obs, total + jnp.where(alive, payoffs, 0.0), unlocked, alive & ~done), None

        flags = jnp.zeros(achievement_shape(env, params) or (), bool)
        init = (state, obs, jnp.zeros(algo.n_agents), flags, jnp.bool_(True))
        (_, _, total, unlocked, _), _ = jax.lax.scan(body, init, jax.random.split(run_key, int(params.max_steps)))
        return {"payoff": total, "achievements": unlocked}

    return jax.vmap(one_episode)(jax.random.split(key, episodes))


def chunk_sizes(num_updates: int, chunks: int = 10) -> list[int]:
    chunks = min(chunks, num_updates)
    return [num_updates // chunks + (1 if k < num_updates % chunks else 0) for k in range(chunks)]


def train_layer(env, params, reward_layer_, config, seeds: int, seed: int, intrinsic: bool, progress=None) -> tuple[Any, dict]:
    """Train all seeds (vmapped) in chunks; the curve holds welfare and the per-step intrinsic bonus per chunk.

    ``progress`` (a tqdm bar, optional) advances by the env steps per seed of each finished chunk."""
    from motivegym.baselines.ppo import MultiAgentPPO
    from motivegym.core.batching import split_across_devices

    algo = MultiAgentPPO(env, params, reward_layer_, config)
    _, init, run = algo.make_stages()
    sizes = chunk_sizes(config.num_updates)
    devices = jax.local_devices()  # seeds split across devices (one XLA host device per core from main())
    run_all = {size: jax.jit(split_across_devices(jax.vmap(lambda r, size=size: run(r, size)), devices)) for size in set(sizes)}
    init_all = jax.jit(split_across_devices(jax.vmap(lambda key: init(key, 0)), devices))
    runners = init_all(jax.random.split(jax.random.PRNGKey(seed), seeds))
    curve: dict[str, list] = {"updates": [], "welfare": [], "bonus": []}
    done_updates, previous_bonus = 0, np.zeros(seeds)
    for size in sizes:
        runners, metrics = run_all[size](runners)
        done_updates += size
        if progress is not None:
            progress.update(size * config.num_envs * config.num_steps)
        welfare = np.asarray(metrics["episode_payoff"]).sum(-1)  # [seeds, updates]
        finished = np.asarray(metrics["episodes"]) > 0
        curve["updates"].append(done_updates)
        curve["welfare"].append(np.nanmean(np.where(finished, welfare, np.nan), axis=1))
        if intrinsic:
            total = np.asarray(intrinsic_state(runners)["totals"]["bonus"]).mean(axis=(1, 2))  # mean over envs, agents
            curve["bonus"].append((total - previous_bonus) / (size * config.num_steps))
            previous_bonus = total
    return (algo, runners), {k: np.array(v) for k, v in curve.items()}


def intrinsic_state(runners: dict) -> dict:
    """The intrinsic term's layer state inside ``MultiAgentPPO`` runners (LayerChoice → WeightedSum term 1)."""
    return runners["layer_states"]["states"][0][1]


def run_experiment(
    env_id: str,
    layers: list[str],
    seeds: int,
    steps: int,
    out: str | Path,
    base: str | None = None,
    coef: float = 0.05,
    algo: str = "ippo",
    num_envs: int = 16,
    num_steps: int = 128,
    eval_episodes: int = 32,
    eval_policy: str = "greedy",
    seed: int = 0,
    progress: bool = True,
    **env_overrides: Any,
) -> dict:
    """Train and evaluate every layer; write the CSVs and plot; return ``{"runs", "summary", "curves"}`` rows."""
    from tqdm import tqdm

    import motivegym
    from motivegym.baselines.ppo import PPOConfig
    from motivegym.core.errors import check_names
    from motivegym.core.registry import get_spec

    check_names("algorithm", [algo], ALGORITHMS, "intrinsic experiment")
    check_names("evaluation policy", [eval_policy], EVAL_POLICIES, "intrinsic experiment")
    if seeds < 1 or steps < 1 or eval_episodes < 1:
        raise ValueError(f"seeds, steps and eval_episodes must be positive, got {seeds}, {steps}, {eval_episodes}")
    spec = get_spec(env_id)
    base = spec.default_reward if base is None else base
    env, params = motivegym.make_jax(spec.id, **env_overrides)
    config = PPOConfig(total_steps=int(steps), num_envs=num_envs, num_steps=num_steps, **ALGORITHMS[algo])
    flags_shape = achievement_shape(env, params)
    flag_labels = achievement_labels(env, params, flags_shape) if flags_shape is not None else []
    steps_per_update = config.num_envs * config.num_steps
    runs, curves = [], []
    bar = tqdm(total=len(layers) * config.num_updates * steps_per_update, desc=f"intrinsic {spec.id}", unit="step", unit_scale=True, disable=not progress)
    for layer_name in layers:
        reward = combined_layer(base, layer_name, coef)
        intrinsic = layer_name != NO_LAYER
        bar.set_postfix_str(f"layer {layer_name}")
        (learner, runners), curve = train_layer(env, params, reward, config, seeds, seed, intrinsic, bar)
        for s in range(seeds):
            runner = jax.tree.map(lambda x, s=s: x[s], runners)
            result = evaluate_runner(learner, runner, jax.random.PRNGKey(seed + 1), eval_episodes, eval_policy, flags_shape is not None)
            payoff = np.asarray(result["payoff"])
            row = {"layer": layer_name, "reward": reward.name, "seed": s, "eval_welfare": float(payoff.sum(-1).mean())}
            row.update({f"eval_payoff_{i}": float(v) for i, v in enumerate(payoff.mean(0))})
            if intrinsic:
                totals = intrinsic_state(runner)["totals"]["bonus"]
                row["bonus_per_step"] = float(np.mean(totals) / (config.num_updates * config.num_steps))
            if flags_shape is not None:
                unlocked = np.asarray(result["achievements"]).reshape(eval_episodes, -1)
                row["achievements_unlocked"] = float(unlocked.sum(-1).mean())
                row.update({f"achievement_{label}_rate": float(v) for label, v in zip(flag_labels, unlocked.mean(0))})
            runs.append(row)
            for k, updates in enumerate(curve["updates"]):
                curves.append({
                    "layer": layer_name, "seed": s, "update": int(updates), "env_steps": int(updates) * steps_per_update,
                    "welfare": float(curve["welfare"][k, s]),
                    "bonus_per_step": float(curve["bonus"][k, s]) if intrinsic else "",
                })  # fmt: skip
        # after every layer, so a long experiment that is stopped keeps the layers it finished
        done = layers[: layers.index(layer_name) + 1]
        summary = write_outputs(Path(out), runs, curves, done, f"{algo.upper()} on {spec.id}: {base} + {coef:g}·layer")
    bar.close()
    return {"runs": runs, "summary": summary, "curves": curves}


def write_outputs(out_dir: Path, runs: list[dict], curves: list[dict], layers: list[str], title: str) -> list[dict]:
    """Write runs.csv, summary.csv, curves.csv and intrinsic.png for the finished ``layers``; return the summary."""
    summary = summarize_runs(runs, layers)
    out_dir.mkdir(parents=True, exist_ok=True)
    write_csv(out_dir / "runs.csv", runs)
    write_csv(out_dir / "summary.csv", summary)
    write_csv(out_dir / "curves.csv", curves)
    plot_comparison(curves, summary, layers, out_dir / "intrinsic.png", title)
    return summary


def summarize_runs(runs: list[dict], layers: list[str]) -> list[dict]:
    """One row per layer × numeric metric: mean over seeds and its 95% CI."""
    rows = []
    for layer in layers:
        layer_runs = [r for r in runs if r["layer"] == layer]
        metrics = [k for k in layer_runs[0] if k not in ("layer", "reward", "seed")]
        for metric in metrics:
            mean, low, high = mean_ci95(np.array([r[metric] for r in layer_runs]))
            rows.append({"layer": layer, "metric": metric, "mean": mean, "ci95_low": low, "ci95_high": high, "seeds": len(layer_runs)})
    return rows


def write_csv(path: Path, rows: list[dict]) -> None:
    """Atomically (a stopped run never leaves half a table)."""
    import io

    from motivegym.experiments.sweep import write_atomic

    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(dict.fromkeys(k for row in rows for k in row)), restval="")
    writer.writeheader()
    writer.writerows(rows)
    write_atomic(path, buffer.getvalue())


def plot_comparison(curves: list[dict], summary: list[dict], layers: list[str], path: Path, title: str) -> None:
    """Training welfare per layer (mean over seeds with 95% CI band) and final evaluation metrics with CIs."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    bar_metrics = ["eval_welfare"] + (["achievements_unlocked"] if any(r["metric"] == "achievements_unlocked" for r in summary) else [])
    fig, axes = plt.subplots(1, 1 + len(bar_metrics), figsize=(5 * (1 + len(bar_metrics)), 3.6))
    curve_ax = axes[0]
    for layer in layers:
        rows = [r for r in curves if r["layer"] == layer]
        steps = sorted({r["env_steps"] for r in rows})
        stats = [mean_ci95(np.array([r["welfare"] for r in rows if r["env_steps"] == x])) for x in steps]
        mean, low, high = (np.array(v) for v in zip(*stats))
        curve_ax.plot(steps, mean, label=layer)
        curve_ax.fill_between(steps, low, high, alpha=0.2)
    curve_ax.set_xlabel("env steps")
    curve_ax.set_ylabel("training episode welfare (Σ payoffs)")
    curve_ax.legend()
    for ax, metric in zip(axes[1:], bar_metrics):
        rows = {r["layer"]: r for r in summary if r["metric"] == metric}
        means = np.array([rows[layer]["mean"] for layer in layers])
        errors = np.array([[means[k] - rows[layer]["ci95_low"], rows[layer]["ci95_high"] - means[k]] for k, layer in enumerate(layers)]).T
        ax.bar(layers, means, yerr=errors, capsize=4)
        ax.set_ylabel(f"{metric} (mean, 95% CI)")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def format_summary(summary: list[dict]) -> str:
    lines = [f"{'layer':<20} {'metric':<24} {'mean':>12}  95% CI"]
    for r in summary:
        lines.append(f"{r['layer']:<20} {r['metric']:<24} {r['mean']:>12.4g}  [{r['ci95_low']:.4g}, {r['ci95_high']:.4g}]")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m motivegym.experiments.intrinsic", description=__doc__.splitlines()[0])
    parser.add_argument("--env", required=True, help="registered env id, e.g. TrustDilemma-v0")
    parser.add_argument("--layers", default="none,count,rnd,novelty", help="comma-separated: none, count, rnd, novelty, impact, learning_progress (each optionally ':coef')")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=100_000, help="env steps per seed (summed over parallel envs)")
    parser.add_argument("--out", required=True)
    parser.add_argument("--base", default=None, help="base reward layer (default: the env's registered reward)")
    parser.add_argument("--coef", type=float, default=0.05, help="weight of the intrinsic layer in base + coef·layer")
    parser.add_argument("--algo", default="ippo", choices=sorted(ALGORITHMS))
    parser.add_argument("--num-envs", type=int, default=16)
    parser.add_argument("--num-steps", type=int, default=128)
    parser.add_argument("--eval-episodes", type=int, default=32)
    parser.add_argument("--eval-policy", default="greedy", choices=EVAL_POLICIES)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    from motivegym.core.cpu_defaults import request_host_devices

    request_host_devices("auto")  # a fresh process: one XLA host device per core, so every core trains
    try:
        layers = parse_layers(args.layers)
        result = run_experiment(
            args.env, layers, args.seeds, args.steps, args.out, base=args.base, coef=args.coef, algo=args.algo,
            num_envs=args.num_envs, num_steps=args.num_steps, eval_episodes=args.eval_episodes,
            eval_policy=args.eval_policy, seed=args.seed,
        )  # fmt: skip
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(format_summary(result["summary"]))
    print(f"wrote runs.csv, summary.csv, curves.csv and intrinsic.png to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
