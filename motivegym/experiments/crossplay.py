"""Cross-play: populations trained under different reward layers, evaluated against each other (``motivegym crossplay``).

For one sweep group (env × algorithm × parameter sharing) every reward layer ``L`` of the sweep is a population:
its trained seeds' final policies (``OUT/checkpoints/<run>.safetensors``, written by ``motivegym sweep``). Cell
``(A, B)`` puts population A in the focal slots (the scenarios' ``n − ⌊n/2⌋`` first slots,
:func:`motivegym.experiments.scenarios.default_focal_slots`) and population B in the others, **seed-paired**
(seed s of A with seed s of B), and reports on payoffs:

* ``focal_per_capita``: mean over focal slots of the episode payoff return (what A earns among B);
* ``welfare``: everybody's summed payoff return;

each with a 95% Student-t interval over the seed pairs (``motivegym.experiments.statistics.mean_interval``).
The diagonal is self-play (the sweep's own evaluation, on other episode keys). Every cell of a group, all seed
pairs × episodes, is one compiled call (``vmap`` over stacked policy states and episode keys). Writes
``crossplay/<env>__<algo>__<sharing>.csv`` and a heatmap ``.png`` per group.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any

import jax
import numpy as np

from motivegym.experiments.statistics import Interval, mean_interval


@dataclasses.dataclass
class CrossplayMatrix:
    """``focal[a][b]`` and ``welfare[a][b]``: population ``rewards[a]`` (focal) among ``rewards[b]`` (background)."""

    env_id: str
    algo: str
    sharing: str
    rewards: list[str]
    seeds: list[int]
    episodes: int
    focal_slots: tuple[int, ...]
    focal: list[list[Interval]]
    welfare: list[list[Interval]]

    def rows(self) -> list[dict[str, Any]]:
        out = []
        for a, focal_reward in enumerate(self.rewards):
            for b, background_reward in enumerate(self.rewards):
                f, w = self.focal[a][b], self.welfare[a][b]
                out.append({"env": self.env_id, "algo": self.algo, "sharing": self.sharing, "focal_reward": focal_reward,
                            "background_reward": background_reward, "seed_pairs": len(self.seeds), "episodes": self.episodes,
                            "focal_per_capita": f.estimate, "focal_low": f.low, "focal_high": f.high,
                            "welfare": w.estimate, "welfare_low": w.low, "welfare_high": w.high})  # fmt: skip
        return out


def populations(sweep_dir: Path) -> dict[tuple[str, str, str], dict[str, dict[int, Path]]]:
    """``{(env, algo, sharing): {reward: {seed: checkpoint path}}}`` of the sweep's trained runs with a checkpoint."""
    from motivegym.experiments.sweep import read_results

    results = sweep_dir / "results.csv"
    if not results.exists():
        raise ValueError(f"{results} not found: run `motivegym sweep --out {sweep_dir}` first")
    found: dict[tuple[str, str, str], dict[str, dict[int, Path]]] = {}
    for row in read_results(results):
        if row.get("status") != "ok" or not row.get("checkpoint"):
            continue
        path = sweep_dir / row["checkpoint"]
        if path.exists():
            found.setdefault((row["env"], row["algo"], row["sharing"]), {}).setdefault(row["reward"], {})[row["seed"]] = path
    if not found:
        raise ValueError(
            f"{sweep_dir} has no trained runs with checkpoints (sweeps write them since checkpoints were added; "
            "rerun the sweep, finished runs without a checkpoint are not retrained: delete their run files first)"
        )
    return found


def crossplay_group(
    env_id: str, algo: str, sharing: str, by_reward: dict[str, dict[int, Path]], episodes: int = 8, seed: int = 0
) -> CrossplayMatrix:
    """The cross-play matrix of one group (one compiled call for every cell, seed pair and episode)."""
    import motivegym
    from motivegym.baselines.checkpoint import CheckpointPolicy
    from motivegym.baselines.policies import Mixed
    from motivegym.experiments.evaluation import episode_keys, rollout_batch
    from motivegym.experiments.scenarios import default_focal_slots
    from motivegym.reward_layers import reward_layer

    rewards = list(by_reward)
    seeds = sorted(set.intersection(*(set(s) for s in by_reward.values())))
    if len(rewards) < 2 or not seeds:
        raise ValueError(f"{env_id} {algo} {sharing}: cross-play needs two or more reward layers with a common seed, got {by_reward}")
    env, params = motivegym.make_jax(env_id)
    n = env.n_agents(params)
    mask = np.zeros(n, bool)
    focal_slots = default_focal_slots(n)
    mask[list(focal_slots)] = True
    policies = {(r, s): CheckpointPolicy(str(by_reward[r][s])) for r in rewards for s in seeds}
    states = {key: policy.init(env, params) for key, policy in policies.items()}
    cells = [(a, b, s) for a in rewards for b in rewards for s in seeds]
    stack = lambda picked: jax.tree.map(lambda *leaves: np.stack(leaves), *picked)  # noqa: E731
    batch = Mixed.init_states(
        np.broadcast_to(mask, (len(cells), n)), stack([states[(a, s)] for a, _, s in cells]), stack([states[(b, s)] for _, b, s in cells])
    )
    player = policies[(rewards[0], seeds[0])]  # one network definition for the whole group: the states carry the weights
    stats = rollout_batch(
        env, params, (reward_layer("private"),), Mixed(player, player), env.max_episode_steps(params), batch,
        episode_keys(seed, episodes), batched_states=True,
    )  # fmt: skip
    payoffs = np.asarray(stats.payoff_returns, np.float64).reshape(len(rewards), len(rewards), len(seeds), episodes, n)
    focal = payoffs[..., mask].mean(-1).mean(-1)  # [A, B, S]
    welfare = payoffs.sum(-1).mean(-1)
    return CrossplayMatrix(
        env_id, algo, sharing, rewards, seeds, episodes, focal_slots,
        [[mean_interval(focal[a, b]) for b in range(len(rewards))] for a in range(len(rewards))],
        [[mean_interval(welfare[a, b]) for b in range(len(rewards))] for a in range(len(rewards))],
    )  # fmt: skip


def plot_matrix(matrix: CrossplayMatrix, path: Path) -> None:
    """Heatmap of the focal per-capita payoff (rows: focal population, columns: background), intervals in the cells."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    k = len(matrix.rewards)
    values = np.array([[cell.estimate for cell in row] for row in matrix.focal])
    fig, ax = plt.subplots(figsize=(1.9 * k + 2.2, 1.4 * k + 1.6))
    image = ax.imshow(values, cmap="viridis")
    scale = np.nanmax(np.abs(values)) or 1.0
    digits = 0 if scale >= 1000 else (1 if scale >= 10 else 2)
    for a in range(k):
        for b in range(k):
            cell = matrix.focal[a][b]
            text = f"{cell.estimate:,.{digits}f}"
            if not math.isnan(cell.low):
                text += f"\n[{cell.low:,.{digits}f}, {cell.high:,.{digits}f}]"
            shade = (values[a, b] - np.nanmin(values)) / ((np.nanmax(values) - np.nanmin(values)) or 1.0)
            ax.text(b, a, text, ha="center", va="center", fontsize=7, color="black" if shade > 0.6 else "white")
    ax.set_xticks(range(k), matrix.rewards, rotation=30, ha="right")
    ax.set_yticks(range(k), matrix.rewards)
    ax.set_xlabel("background population (trained with)")
    ax.set_ylabel("focal population (trained with)")
    ax.set_title(f"{matrix.env_id} {matrix.algo.upper()}: focal per-capita payoff\n{len(matrix.seeds)} seed pairs × {matrix.episodes} episodes, 95% t-CI")
    fig.colorbar(image, ax=ax, shrink=0.8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def write_matrix(matrix: CrossplayMatrix, out: Path) -> tuple[Path, Path]:
    """``<env>__<algo>__<sharing>.csv`` and ``.png`` in ``out``."""
    import csv

    out.mkdir(parents=True, exist_ok=True)
    stem = out / f"{matrix.env_id}__{matrix.algo}__{matrix.sharing}"
    rows = matrix.rows()
    with open(stem.with_suffix(".csv"), "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    plot_matrix(matrix, stem.with_suffix(".png"))
    return stem.with_suffix(".csv"), stem.with_suffix(".png")


def run_crossplay(
    sweep_dir: str | Path, envs: tuple[str, ...] = (), algos: tuple[str, ...] = (), episodes: int = 8, seed: int = 0,
    out: str | Path | None = None, progress: bool = True,
) -> list[CrossplayMatrix]:  # fmt: skip
    """Every group's matrix (optionally only ``envs``/``algos``), written to ``out`` (default ``SWEEP_DIR/crossplay``)."""
    from tqdm import tqdm

    if episodes < 1:
        raise ValueError(f"episodes must be >= 1, got {episodes}")
    sweep_dir = Path(sweep_dir)
    groups = populations(sweep_dir)
    chosen = {g: p for g, p in groups.items() if (not envs or g[0] in envs) and (not algos or g[1] in algos)}
    if not chosen:
        raise ValueError(f"no group of {sweep_dir} matches envs={list(envs)} algos={list(algos)}; groups: {sorted(groups)}")
    target = Path(out) if out else sweep_dir / "crossplay"
    matrices = []
    for (env_id, algo, sharing), by_reward in tqdm(sorted(chosen.items()), desc="cross-play", unit="group", disable=not progress):
        matrix = crossplay_group(env_id, algo, sharing, by_reward, episodes, seed)
        write_matrix(matrix, target)
        matrices.append(matrix)
    return matrices


def format_matrix(matrix: CrossplayMatrix) -> str:
    from motivegym.experiments.report import format_interval

    width = max(14, *(len(r) for r in matrix.rewards))
    cells = [[format_interval(cell) for cell in row] for row in matrix.focal]
    column = 2 + max(max(len(r) for r in matrix.rewards), *(len(c) for row in cells for c in row))
    lines = [f"{matrix.env_id} {matrix.algo} ({matrix.sharing}): focal per-capita payoff, rows focal, columns background "
             f"({len(matrix.seeds)} seed pairs × {matrix.episodes} episodes)"]  # fmt: skip
    lines.append(" " * width + "".join(f"{r:>{column}}" for r in matrix.rewards))
    for reward, row in zip(matrix.rewards, cells):
        lines.append(f"{reward:<{width}}" + "".join(f"{c:>{column}}" for c in row))
    return "\n".join(lines)


def crossplay_cli(args: Any) -> int:
    from motivegym.experiments.sweep import split_list

    matrices = run_crossplay(args.dir, split_list(args.envs or ""), split_list(args.algos or ""), args.episodes, args.seed, args.out)
    for matrix in matrices:
        print(format_matrix(matrix))
        print()
    print(f"wrote {len(matrices)} matrices (CSV + heatmap) to {Path(args.out) if args.out else Path(args.dir) / 'crossplay'}")
    return 0
