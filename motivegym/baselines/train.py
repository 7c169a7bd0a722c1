"""``motivegym train ALGO ENV --reward R --seeds K --steps N``: one vmapped jitted run over seeds.

``ALGO`` is ``ippo``/``mappo`` (``ppo.py``) or ``iql``/``vdn``/``qmix`` (``value_based.py``; continuous
envs are discretised into ``--bins`` actions per agent with ``DiscretizedActions``).
Writes ``learning_curve.csv`` (one row per seed × update), ``learning_curve.png`` and one checkpoint per
seed, ``checkpoints/seed<s>.safetensors`` (the trained greedy policy with its env, params digest, reward,
config and versions: ``motivegym/baselines/checkpoint.py``, ``docs/checkpoints.md``) to ``--out``; evaluate
one with ``motivegym eval ENV checkpoint:OUT/checkpoints/seed0.safetensors``.
"""

from __future__ import annotations

import csv
import time
from pathlib import Path

import jax
import numpy as np

PPO_ALGORITHMS = {"ippo": {"centralized_critic": False}, "mappo": {"centralized_critic": True}}
VALUE_ALGORITHMS = ("iql", "vdn", "qmix")
ALGORITHMS = (*PPO_ALGORITHMS, *VALUE_ALGORITHMS)
#: learners whose objective is the team reward (mean over agents of the layer's rewards), not each agent's own
TEAM_REWARD_ALGORITHMS = ("vdn", "qmix")


def build_learner(
    algo: str, env_id: str, rewards: str | tuple, steps: int, num_envs: int, num_steps: int, bins: int, share_parameters: bool = True
):
    """``(learner, config, episode_payoffs)`` of one algorithm; value-based ones get discrete actions
    (``bins`` evenly spaced actions per agent on continuous envs). ``rewards``: one layer or a tuple chosen by index."""
    import motivegym

    env, params = motivegym.make_jax(env_id)
    sizes = dict(total_steps=int(steps), num_envs=num_envs, num_steps=num_steps, share_parameters=share_parameters)
    if algo in PPO_ALGORITHMS:
        from motivegym.baselines.ppo import MultiAgentPPO, PPOConfig, episode_payoffs

        config = PPOConfig(**sizes, **PPO_ALGORITHMS[algo])
        return MultiAgentPPO(env, params, rewards, config), config, episode_payoffs
    from motivegym.baselines.value_based import MultiAgentQLearning, ValueConfig, episode_payoffs
    from motivegym.envs.wrappers import DiscretizedActions

    if env.action_kind == "continuous":
        env = DiscretizedActions(env, bins)
    config = ValueConfig(algorithm=algo, **sizes)
    return MultiAgentQLearning(env, params, rewards, config), config, episode_payoffs


def train_cli(
    algo: str, env_id: str, reward: str, seeds: int, steps: int, out: str, num_envs: int = 16, num_steps: int = 128, seed: int = 0, bins: int = 11
) -> int:
    from tqdm import tqdm

    from motivegym.core.errors import check_names

    check_names("algorithm", [algo], ALGORITHMS, "motivegym train")
    if seeds < 1 or steps < 1:
        raise ValueError(f"--seeds and --steps must be positive, got {seeds}, {steps}")
    learner, config, episode_payoffs = build_learner(algo, env_id, reward, steps, num_envs, num_steps, bins)
    if getattr(learner.env, "bins", None):
        print(f"note: {env_id} has continuous actions; {algo.upper()} uses {bins} evenly spaced actions per agent (--bins)")
    _, init, run = learner.make_stages()
    chunks = min(20, config.num_updates)
    sizes = [config.num_updates // chunks + (1 if k < config.num_updates % chunks else 0) for k in range(chunks)]
    init_all = jax.jit(jax.vmap(init, in_axes=(0, None)))
    # one compiled program per distinct chunk size (at most two); the host loop only drives the progress bar
    run_all = {size: jax.jit(jax.vmap(lambda r, size=size: run(r, size))) for size in set(sizes)}
    start = time.perf_counter()
    runners = init_all(jax.random.split(jax.random.PRNGKey(seed), seeds), 0)
    pieces = []
    with tqdm(total=config.num_updates, desc=f"{algo} {env_id} ({seeds} seeds)", unit="update") as bar:
        for size in sizes:
            runners, chunk_metrics = run_all[size](runners)
            jax.block_until_ready(chunk_metrics)
            pieces.append(chunk_metrics)
            bar.update(size)
    metrics = jax.tree.map(lambda *parts: np.concatenate([np.asarray(p) for p in parts], axis=1), *pieces)
    wall = time.perf_counter() - start
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    payoff = np.asarray(metrics["episode_payoff"])  # [seed, update, agent]
    reward_curve = np.asarray(metrics["episode_reward"])
    episodes = np.asarray(metrics["episodes"])
    steps_per_update = config.num_envs * config.num_steps
    with open(out_dir / "learning_curve.csv", "w", newline="") as handle:
        writer = csv.writer(handle)
        n = payoff.shape[-1]
        writer.writerow(["seed", "update", "env_steps", "episodes", "welfare"] + [f"payoff_{i}" for i in range(n)] + [f"reward_{i}" for i in range(n)])
        for s in range(seeds):
            for u in range(config.num_updates):
                writer.writerow([s, u, (u + 1) * steps_per_update, int(episodes[s, u]), float(payoff[s, u].sum())] + payoff[s, u].tolist() + reward_curve[s, u].tolist())
    plot_learning_curve(payoff.sum(-1), episodes, steps_per_update, out_dir / "learning_curve.png", f"{algo.upper()} on {env_id} ({reward} reward)")
    checkpoint_paths = save_seed_checkpoints(learner, runners, out_dir / "checkpoints", algo=algo, env_id=env_id, reward=reward,
                                             seed=seed, steps=config.num_updates * steps_per_update)
    evaluate = jax.jit(jax.vmap(lambda runner: episode_payoffs(learner, runner, jax.random.PRNGKey(seed + 1), 32).sum(-1).mean()))
    evaluation = np.asarray(evaluate(runners)).tolist()
    print(f"trained {seeds} seeds × {config.num_updates * steps_per_update:,} env-steps in {wall:.1f} s (compile included)")
    print(f"greedy evaluation welfare per seed: {np.round(evaluation, 2).tolist()}  (mean {np.mean(evaluation):.2f})")
    print(f"wrote {out_dir / 'learning_curve.csv'}, {out_dir / 'learning_curve.png'} and {len(checkpoint_paths)} checkpoint(s): "
          f"{', '.join(str(p) for p in checkpoint_paths)}")  # fmt: skip
    return 0


def save_seed_checkpoints(
    learner, runners: dict, directory: Path, *, algo: str, env_id: str, reward: str, seed: int, steps: int
) -> list[Path]:
    """``directory/seed<s>.safetensors`` for every seed ``s`` of the vmapped ``runners`` (keys ``split(PRNGKey(seed), seeds)[s]``)."""
    from motivegym.baselines.checkpoint import save_checkpoint

    seeds = int(np.shape(runners["obs_stats"].count)[0])
    paths = []
    for s in range(seeds):
        state = jax.tree.map(lambda leaf, s=s: np.asarray(leaf[s]), {"networks": runners["networks"], "obs_stats": runners["obs_stats"]})
        paths.append(
            save_checkpoint(directory / f"seed{s}.safetensors", learner, state, env_id=env_id, reward=reward, algo=algo, seed=s,
                            steps=steps, extra={"base_seed": seed, "run_key": f"jax.random.split(PRNGKey({seed}), {seeds})[{s}]"})
        )  # fmt: skip
    return paths


def plot_learning_curve(welfare: np.ndarray, episodes: np.ndarray, steps_per_update: int, path: Path, title: str) -> None:
    """Mean ± min/max over seeds of the per-update mean episode welfare (updates with no finished episode skipped)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x = (np.arange(welfare.shape[1]) + 1) * steps_per_update
    valid = episodes > 0
    masked = np.where(valid, welfare, np.nan)
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot(x, np.nanmean(masked, axis=0), label="mean over seeds")
    ax.fill_between(x, np.nanmin(masked, axis=0), np.nanmax(masked, axis=0), alpha=0.25, label="min–max")
    ax.set_xlabel("env steps")
    ax.set_ylabel("episode welfare (Σ payoffs)")
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
