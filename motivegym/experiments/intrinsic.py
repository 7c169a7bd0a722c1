"""IPPO with vs without intrinsic-motivation reward layers (``docs/intrinsic.md``).

``motivegym intrinsic --env ENV --layers none,count,rnd,novelty --seeds 10 --steps N --out DIR``

For each entry of ``--layers`` it trains IPPO (``--algo mappo`` for MAPPO) on the reward
``base + coef · layer`` (``none``: the base alone; ``base`` defaults to the env's registered reward), the seeds
of a group (``--seed-group``, default all) vmapped in one compiled program, then evaluates each seed on
``--eval-episodes`` episodes. Seed ``s`` trains from ``fold_in(PRNGKey(--seed), s)``, so a seed's run does not
depend on its group, and every layer uses the same seeds and the same evaluation episodes. It records payoff
returns and, where the env's info has an ``achievements`` array of flags, each episode's flags.

**Resumable.** Every finished (layer, seed group) is a part file ``DIR/parts/<layer>.seeds<a>-<b>.json``,
written atomically; a rerun with the same settings skips the parts it finds (more seeds or layers may be added
later), and refuses parts written with other settings. The tables are rebuilt from all parts after each one:

* ``runs.csv`` (layer × seed), ``summary.csv`` (layer × metric: mean over seeds, 95% Student-t interval from
  :func:`motivegym.experiments.statistics.mean_interval`), ``curves.csv`` (training welfare and bonus per chunk),
  ``parts.csv`` (each part's wall time, compilation and evaluation included, and machine);
* with achievements: ``achievements.csv`` (layer × seed × episode × agent flags; ``motivegym crafter-score DIR``
  scores it per agent and for the team) and ``crafter_score.csv``;
* ``comparison.csv``: each layer's headline metric (the team Crafter score with achievements, then also evaluation
  welfare; else evaluation welfare alone) minus the ``none`` layer's, with a Welch t interval, and the verdict
  ``higher`` / ``lower`` / ``not distinguishable`` (the interval excludes 0 or not);
* ``intrinsic.png`` (training curves, evaluation bars) and, with achievements, ``achievements.png`` (team success
  rate per achievement and layer).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

ALGORITHMS = {"ippo": {"centralized_critic": False}, "mappo": {"centralized_critic": True}}
EVAL_POLICIES = ("greedy", "sample")
NO_LAYER = "none"
LLM_LAYER_KINDS = ("progress", "learned")  # reward-layer specs whose file came from an LLM (or stands in for one)


def mean_ci95(values: np.ndarray) -> tuple[float, float, float]:
    """``(mean, low, high)``: ``x̄ ± t_{0.975, k−1} · s/√k`` over the ``k`` values (NaN bounds for one value)."""
    from motivegym.experiments.statistics import mean_interval

    return mean_interval(np.asarray(values, np.float64).reshape(-1)).as_tuple()


def layer_entry(entry: str) -> tuple[str, str]:
    """``(label, spec)`` of a ``--layers`` entry: ``"label=spec"``, or the spec as its own label."""
    label, separator, spec = entry.partition("=")
    if not separator or "(" in label:  # an '=' inside options, as in 'icm(normalize=true)', is not a label
        return entry.strip(), entry.strip()
    return label.strip(), spec.strip()


def spec_file_digest(spec: str) -> str | None:
    """SHA-256 of the file an LLM-derived spec (``progress:<file.py>``, ``learned:<model.npz>``) reads, else ``None``:
    a part records it, so a resumed run refuses parts trained with another version of the file."""
    import hashlib

    name, _, argument = spec.partition(":")
    if name not in LLM_LAYER_KINDS:
        return None
    return hashlib.sha256(Path(argument).read_bytes()).hexdigest()


def parse_layers(text: str) -> list[str]:
    """Comma-separated ``--layers`` entries: ``none``, intrinsic layer specs (``count``, ``rnd:0.1``, …) and
    LLM-derived bonuses (``progress:<file.py>``, ``learned:<model.npz>``), each optionally labelled
    ``label=spec`` (the label names its parts and table rows); commas inside a layer's options
    (``icm_norm=icm(normalize=true, hidden=32)@rollout``) do not separate entries. Unknown names, bad files and repeated labels raise
    ``ValueError``."""
    from motivegym.reward_layers import INTRINSIC_LAYER_NAMES, IntrinsicLayer, reward_layer, split_specs

    entries = split_specs(text)
    if not entries:
        raise ValueError("--layers needs at least one entry, e.g. 'none,count,rnd,novelty'")
    labels = []
    for entry in entries:
        label, spec = layer_entry(entry)
        if not label or not spec:
            raise ValueError(f"--layers entry {entry!r}: write 'label=spec', e.g. 'llm_progress=progress:progress.py'")
        if spec == NO_LAYER:
            labels.append(label)
            continue
        kind = spec.partition(":")[0]
        layer = reward_layer(spec)  # a missing file or bad code raises here, naming it
        if not (isinstance(layer, IntrinsicLayer) or kind in LLM_LAYER_KINDS):
            kinds = ", ".join(f"{k}:<file>" for k in LLM_LAYER_KINDS)
            raise ValueError(f"--layers entry {entry!r} is not an intrinsic layer ({', '.join(INTRINSIC_LAYER_NAMES)}), an LLM-derived bonus ({kinds}) or 'none'")
        labels.append(label)
    if len(set(labels)) != len(labels):
        raise ValueError(f"--layers names an entry twice: {text!r}")
    return entries


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


def make_evaluator(algo, episodes: int, policy: str, has_achievements: bool) -> Callable[[dict, jax.Array], dict]:
    """A jitted ``(runner, key) → {"payoff": [episodes, n], "achievements": [episodes, …]}``: ``episodes`` episodes of the
    runner's policy (``greedy`` or ``sample``) from fresh resets, no auto-reset, each run until it ends. Episode ``e``
    plays its step ``t`` with ``split(run_key_e, max_steps)[t]``; the loop stops once every episode has ended (a
    Crafter episode that dies early does not cost ``max_steps`` steps)."""
    from motivegym.baselines.normalization import normalize

    env, params, cfg = algo.env, algo.env_params, algo.config
    max_steps = int(params.max_steps)

    def one_episode(runner, episode_key):
        reset_key, run_key = jax.random.split(episode_key)
        state, obs = env.reset(reset_key, params)
        step_keys = jax.random.split(run_key, max_steps)

        def body(carry):
            t, state, obs, total, unlocked, alive = carry
            action_key, env_key = jax.random.split(step_keys[t])
            norm_obs = normalize(runner["obs_stats"], obs) if cfg.normalize_observations else obs
            output = algo.policy_output(runner["networks"], norm_obs)
            raw = algo.greedy(output) if policy == "greedy" else algo.sample(action_key, output)[0]
            state, obs, payoffs, done, info = env.step(env_key, state, algo.env_action(raw), params)
            if has_achievements:
                unlocked = unlocked | (alive & info["achievements"].astype(bool))
            return t + 1, state, obs, total + jnp.where(alive, payoffs, 0.0), unlocked, alive & ~done

        flags = jnp.zeros(achievement_shape(env, params) or (), bool)
        init = (jnp.int32(0), state, obs, jnp.zeros(algo.n_agents), flags, jnp.bool_(True))
        *_, total, unlocked, _ = jax.lax.while_loop(lambda carry: carry[-1] & (carry[0] < max_steps), body, init)
        return {"payoff": total, "achievements": unlocked}

    return jax.jit(lambda runner, key: jax.vmap(one_episode, in_axes=(None, 0))(runner, jax.random.split(key, episodes)))


def evaluate_runner(algo, runner: dict, key: jax.Array, episodes: int, policy: str, has_achievements: bool) -> dict:
    """Payoff returns ``[episodes, n]`` and, with achievements, the flags ever set ``[episodes, …]`` (no auto-reset);
    see :func:`make_evaluator`, which builds the function once for many runners."""
    return make_evaluator(algo, episodes, policy, has_achievements)(runner, key)


def chunk_sizes(num_updates: int, chunks: int = 10) -> list[int]:
    chunks = min(chunks, num_updates)
    return [num_updates // chunks + (1 if k < num_updates % chunks else 0) for k in range(chunks)]


def seed_keys(seed: int, seed_ids: list[int]) -> jax.Array:
    """``[len(seed_ids), 2]`` training keys: seed ``s`` trains from ``fold_in(PRNGKey(seed), s)`` whatever its group."""
    root = jax.random.PRNGKey(seed)
    return jnp.stack([jax.random.fold_in(root, s) for s in seed_ids])


def train_layer(env, params, reward_layer_, config, seed_ids: list[int], seed: int, intrinsic: bool, progress=None) -> tuple[Any, dict]:
    """Train the seeds ``seed_ids`` (vmapped) in chunks; the curve holds welfare and the per-step intrinsic bonus per chunk.

    ``progress`` (a tqdm bar, optional) advances by the env steps per seed of each finished chunk."""
    from motivegym.baselines.ppo import MultiAgentPPO
    from motivegym.core.batching import split_across_devices

    algo = MultiAgentPPO(env, params, reward_layer_, config)
    _, init, run = algo.make_stages()
    sizes = chunk_sizes(config.num_updates)
    devices = jax.local_devices()  # seeds split across devices (one XLA host device per core from main())
    run_all = {size: jax.jit(split_across_devices(jax.vmap(lambda r, size=size: run(r, size)), devices)) for size in set(sizes)}
    init_all = jax.jit(split_across_devices(jax.vmap(lambda key: init(key, 0)), devices))
    runners = init_all(seed_keys(seed, seed_ids))
    curve: dict[str, list] = {"updates": [], "welfare": [], "bonus": []}
    done_updates, previous_bonus = 0, np.zeros(len(seed_ids))
    for size in sizes:
        runners, metrics = run_all[size](runners)
        done_updates += size
        if progress is not None:
            progress.update(size * config.num_envs * config.num_steps * len(seed_ids))
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


def arm_shares(layer, state: dict) -> dict[str, float]:
    """``{"arm_share_<arm>": fraction of the credited PPO updates}`` over the rows (agents) of a bandit layer (``auto``)
    whose state counts its pulls; ``{}`` for any other layer."""
    if "pulls" not in state.get("core", {}) or not hasattr(layer, "arms"):
        return {}
    pulls = np.asarray(state["core"]["pulls"]).reshape(-1, len(layer.arms)).sum(0)
    total = max(pulls.sum(), 1.0)
    return {f"arm_share_{arm}": float(n / total) for arm, n in zip(layer.arms, pulls)}


# ----- parts: one file per (layer, seed group), so a long experiment runs in sessions -----
PARTS_DIR = "parts"


def seed_groups(seed_ids: list[int], group: int | None) -> list[list[int]]:
    """The seeds in runs of consecutive ids, each cut into groups of at most ``group`` (``None``: whole runs):
    ``seed_groups([0, 1, 2, 3, 4], 2) == [[0, 1], [2, 3], [4]]``, ``seed_groups([2, 3, 7], 5) == [[2, 3], [7]]``."""
    if group is not None and group < 1:
        raise ValueError(f"--seed-group must be positive, got {group}")
    runs: list[list[int]] = []
    for s in sorted(seed_ids):
        if runs and s == runs[-1][-1] + 1:
            runs[-1].append(s)
        else:
            runs.append([s])
    size = group or max(len(seed_ids), 1)
    return [run[first:first + size] for run in runs for first in range(0, len(run), size)]


def part_path(out: Path, layer: str, seed_ids: list[int]) -> Path:
    """``out/parts/<layer>.seeds<a>-<b>.json`` (characters other than letters, digits, ``._-`` become ``_``)."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", layer)
    return out / PARTS_DIR / f"{safe}.seeds{seed_ids[0]}-{seed_ids[-1]}.json"


def read_parts(out: Path, settings: dict) -> list[dict]:
    """Every part under ``out/parts`` (sorted by layer, then first seed); ``ValueError`` naming the settings that
    differ when a part was written by another experiment."""
    parts = []
    for path in sorted((out / PARTS_DIR).glob("*.json")):
        part = json.loads(path.read_text())
        if part["settings"] != settings:
            differ = sorted(k for k in set(part["settings"]) | set(settings) if part["settings"].get(k) != settings.get(k))
            detail = ", ".join(f"{k}: {part['settings'].get(k)!r} there, {settings.get(k)!r} now" for k in differ)
            raise ValueError(f"{path} belongs to an experiment with other settings ({detail}); use another --out")
        parts.append(part)
    return parts


def check_part_specs(parts: list[dict], entries: list[str]) -> None:
    """``ValueError`` when a part found under a requested label was trained from another spec or another version of
    its file (parts written before labels existed carry no spec: their label is their spec)."""
    for entry in entries:
        label, spec = layer_entry(entry)
        digest = spec_file_digest(spec)
        for part in (p for p in parts if p["layer"] == label):
            if (part.get("spec", label), part.get("spec_digest")) != (spec, digest):
                raise ValueError(f"the parts of {label!r} were trained from {part.get('spec', label)!r} (file digest "
                                 f"{part.get('spec_digest')}), not {spec!r} (digest {digest}); give this entry another label or use another --out")  # fmt: skip


def train_part(env, params, settings: dict, config, entry: str, seed_ids: list[int], flags_shape, flag_labels, bar) -> dict:
    """Train and evaluate one (``--layers`` entry, seed group): its run rows, curve rows and per-seed achievement flags."""
    layer_name, spec = layer_entry(entry)
    reward = combined_layer(settings["base"], spec, settings["coef"])
    intrinsic = spec != NO_LAYER
    episodes, seed = settings["eval_episodes"], settings["seed"]
    steps_per_update = config.num_envs * config.num_steps
    (learner, runners), curve = train_layer(env, params, reward, config, seed_ids, seed, intrinsic, bar)
    runs, curves, flags = [], [], []
    evaluate = make_evaluator(learner, episodes, settings["eval_policy"], flags_shape is not None)
    for k, s in enumerate(seed_ids):
        runner = jax.tree.map(lambda x, k=k: x[k], runners)
        result = evaluate(runner, jax.random.PRNGKey(seed + 1))
        payoff = np.asarray(result["payoff"])
        row = {"layer": layer_name, "reward": reward.name, "seed": s, "eval_welfare": float(payoff.sum(-1).mean())}
        row.update({f"eval_payoff_{i}": float(v) for i, v in enumerate(payoff.mean(0))})
        if intrinsic:
            totals = intrinsic_state(runner)["totals"]["bonus"]
            row["bonus_per_step"] = float(np.mean(totals) / (config.num_updates * config.num_steps))
            row.update(arm_shares(reward.terms[1][1], intrinsic_state(runner)))
        if flags_shape is not None:
            unlocked = np.asarray(result["achievements"])
            flat = unlocked.reshape(episodes, -1)
            row["achievements_unlocked"] = float(flat.sum(-1).mean())
            row.update({f"achievement_{label}_rate": float(v) for label, v in zip(flag_labels, flat.mean(0))})
            flags.append(unlocked.astype(int).tolist())
        runs.append(row)
        for j, updates in enumerate(curve["updates"]):
            curves.append({
                "layer": layer_name, "seed": s, "update": int(updates), "env_steps": int(updates) * steps_per_update,
                "welfare": float(curve["welfare"][j, k]),
                "bonus_per_step": float(curve["bonus"][j, k]) if intrinsic else "",
            })  # fmt: skip
    return {"settings": settings, "layer": layer_name, "spec": spec, "spec_digest": spec_file_digest(spec), "seeds": seed_ids,
            "runs": runs, "curves": curves, "flags": flags}  # fmt: skip


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
    seed_group: int | None = None,
    tables_only: bool = False,
    **env_overrides: Any,
) -> dict:
    """Train and evaluate every (layer, seed group) not yet under ``out/parts`` (none with ``tables_only``); rebuild
    the tables and figures from all parts after each; return ``{"runs", "summary", "curves", "comparison",
    "trained"}`` (``trained``: the parts this call ran)."""
    from tqdm import tqdm

    import motivegym
    from motivegym.baselines.ppo import PPOConfig
    from motivegym.core.errors import check_names
    from motivegym.core.registry import get_spec
    from motivegym.experiments.sweep import write_atomic

    check_names("algorithm", [algo], ALGORITHMS, "intrinsic experiment")
    check_names("evaluation policy", [eval_policy], EVAL_POLICIES, "intrinsic experiment")
    if seeds < 1 or steps < 1 or eval_episodes < 1:
        raise ValueError(f"seeds, steps and eval_episodes must be positive, got {seeds}, {steps}, {eval_episodes}")
    spec = get_spec(env_id)
    base = spec.default_reward if base is None else base
    env, params = motivegym.make_jax(spec.id, **env_overrides)
    config = PPOConfig(total_steps=int(steps), num_envs=num_envs, num_steps=num_steps, **ALGORITHMS[algo])
    settings = {
        "env": spec.id, "env_kwargs": {k: env_overrides[k] for k in sorted(env_overrides)}, "base": base, "coef": float(coef),
        "algo": algo, "steps": int(steps), "num_envs": num_envs, "num_steps": num_steps, "eval_episodes": eval_episodes,
        "eval_policy": eval_policy, "seed": seed,
    }  # fmt: skip
    settings = json.loads(json.dumps(settings))  # as a part file stores it (tuples become lists)
    out = Path(out)
    found = read_parts(out, settings)
    check_part_specs(found, layers)
    labels = [layer_entry(entry)[0] for entry in layers]
    done = {(p["layer"], s) for p in found for s in p["seeds"]}  # a seed trained in any group is done
    todo = [
        (entry, ids) for entry in layers
        for ids in seed_groups([s for s in range(seeds) if (layer_entry(entry)[0], s) not in done], seed_group)
    ]  # fmt: skip
    if tables_only:
        if not found:
            raise ValueError(f"--tables-only: no parts under {out / PARTS_DIR} to build tables from")
        todo = []
    flags_shape = achievement_shape(env, params)
    flag_labels = achievement_labels(env, params, flags_shape) if flags_shape is not None else []
    names = env.static_info(params).get("achievement_names") if flags_shape is not None and len(flags_shape) == 2 else None
    title = f"{algo.upper()} on {spec.id}: {base} + {coef:g}·layer"
    per_seed = config.num_updates * config.num_envs * config.num_steps
    bar = tqdm(total=sum(len(ids) for _, ids in todo) * per_seed, desc=f"intrinsic {spec.id}", unit="step", unit_scale=True, disable=not progress)
    tables = None
    for entry, seed_ids in todo:
        bar.set_postfix_str(f"layer {layer_entry(entry)[0]}, seeds {seed_ids[0]}-{seed_ids[-1]}")
        started = time.perf_counter()
        part = train_part(env, params, settings, config, entry, seed_ids, flags_shape, flag_labels, bar)
        part["timing"] = part_timing(time.perf_counter() - started)
        path = part_path(out, part["layer"], seed_ids)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, json.dumps(part))
        tables = write_outputs(out, read_parts(out, settings), labels, title, names)
    bar.close()
    if tables is None:  # nothing left to train: rebuild the tables from the parts found
        tables = write_outputs(out, read_parts(out, settings), labels, title, names)
    return {**tables, "trained": todo}


def part_timing(wall_seconds: float) -> dict:
    """Where and how long a part ran (training, compilation and evaluation), for ``parts.csv``."""
    return {
        "wall_seconds": round(wall_seconds, 1), "finished_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs", "jax_device": jax.devices()[0].device_kind,
    }  # fmt: skip


def parts_table(parts: list[dict]) -> list[dict]:
    """One row per part: its layer, seeds and timing (parts written before timings were kept leave them blank)."""
    fields = ("wall_seconds", "finished_utc", "machine", "jax_device")
    return [
        {"layer": p["layer"], "seeds": f"{p['seeds'][0]}-{p['seeds'][-1]}", **{k: p.get("timing", {}).get(k, "") for k in fields}}
        for p in parts
    ]  # fmt: skip


def ordered_layers(parts: list[dict], layers: list[str]) -> list[str]:
    """The requested layers first (in order), then any other layer found in the parts."""
    found = list(dict.fromkeys(p["layer"] for p in parts))
    return [layer for layer in layers if layer in found] + [layer for layer in found if layer not in layers]


def write_outputs(out_dir: Path, parts: list[dict], layers: list[str], title: str, achievement_names: list[str] | None = None) -> dict:
    """Write runs.csv, summary.csv, curves.csv, parts.csv, comparison.csv, intrinsic.png and, with named per-agent
    achievements, achievements.csv, crafter_score.csv and achievements.png; return the rows."""
    layers = ordered_layers(parts, layers)
    parts = sorted(parts, key=lambda p: (layers.index(p["layer"]), p["seeds"][0]))
    runs = [row for p in parts for row in p["runs"]]
    curves = [row for p in parts for row in p["curves"]]
    summary = summarize_runs(runs, layers)
    out_dir.mkdir(parents=True, exist_ok=True)
    write_csv(out_dir / "runs.csv", runs)
    write_csv(out_dir / "summary.csv", summary)
    write_csv(out_dir / "curves.csv", curves)
    write_csv(out_dir / "parts.csv", parts_table(parts))
    welfare = {layer: {r["seed"]: r["eval_welfare"] for r in runs if r["layer"] == layer} for layer in layers}
    headline, metric = welfare, "eval_welfare"
    if achievement_names is not None and all(p["flags"] for p in parts):
        from motivegym.experiments.crafter_score import FLAGS_FILE, score_of, score_run_dir

        flag_rows = [
            {"group": p["layer"], "seed": s, "episode": e, "agent": i, **dict(zip(achievement_names, agent_flags))}
            for p in parts for s, seed_flags in zip(p["seeds"], p["flags"])
            for e, episode in enumerate(seed_flags) for i, agent_flags in enumerate(episode)
        ]  # fmt: skip
        write_csv(out_dir / FLAGS_FILE, flag_rows)
        (out_dir / "achievements.md").write_text(achievements_markdown(score_run_dir(out_dir), layers) + "\n")
        team_rates = {
            layer: {s: 100.0 * np.asarray(f).any(axis=1).mean(axis=0) for p in parts if p["layer"] == layer for s, f in zip(p["seeds"], p["flags"])}
            for layer in layers
        }  # fmt: skip
        headline = {layer: {s: float(score_of(r)) for s, r in rates.items()} for layer, rates in team_rates.items()}
        metric = "team_crafter_score"
        plot_achievements(team_rates, achievement_names, layers, out_dir / "achievements.png", title)
    comparison = compare_to_none(headline, metric) + (compare_to_none(welfare, "eval_welfare") if metric != "eval_welfare" else [])
    write_csv(out_dir / "comparison.csv", comparison)
    plot_comparison(curves, comparison, layers, out_dir / "intrinsic.png", title)
    (out_dir / "comparison.md").write_text(comparison_markdown(comparison) + "\n")
    return {"runs": runs, "summary": summary, "curves": curves, "comparison": comparison}


def compare_to_none(values: dict[str, dict[int, float]], metric: str) -> list[dict]:
    """Per layer: mean ``metric`` over seeds and its 95% t interval, and the difference to ``none`` with a Welch t
    interval (``scipy.stats.ttest_ind(equal_var=False)``); the verdict says whether that interval excludes 0. Every
    layer is one more test against the same ``none``, so each row also has the Welch p-value and ``p_adjusted``, the
    Benjamini–Hochberg adjusted p-value over all the layers compared on this metric
    (``scipy.stats.false_discovery_control``): a verdict whose adjusted p is above 0.05 may be a false discovery."""
    import scipy.stats

    from motivegym.experiments.statistics import mean_interval

    rows = []
    reference = np.array(list(values.get(NO_LAYER, {}).values()), np.float64)
    for layer, by_seed in values.items():
        data = np.array(list(by_seed.values()), np.float64)
        own = mean_interval(data)
        row = {"layer": layer, "metric": metric, "seeds": data.size, "mean": own.estimate, "ci95_low": own.low, "ci95_high": own.high}
        if layer != NO_LAYER and reference.size >= 2 and data.size >= 2:
            if np.ptp(data) == 0 and np.ptp(reference) == 0:
                low = high = float(data[0] - reference[0])
                p_value = 1.0 if low == 0 else 0.0
            else:
                test = scipy.stats.ttest_ind(data, reference, equal_var=False)
                ci = test.confidence_interval(0.95)
                low, high, p_value = float(ci.low), float(ci.high), float(test.pvalue)
            verdict = "higher" if low > 0 else "lower" if high < 0 else "not distinguishable"
            row.update({"difference_to_none": float(data.mean() - reference.mean()), "difference_ci95_low": low,
                        "difference_ci95_high": high, "verdict": verdict, "p_value": p_value})  # fmt: skip
        rows.append(row)
    tested = [row for row in rows if "p_value" in row]
    if tested:
        adjusted = scipy.stats.false_discovery_control([row["p_value"] for row in tested], method="bh")
        for row, p_adjusted in zip(tested, adjusted):
            row["p_adjusted"] = float(p_adjusted)
    return rows


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


def plot_comparison(curves: list[dict], comparison: list[dict], layers: list[str], path: Path, title: str) -> None:
    """Training welfare per layer (mean over seeds with 95% CI band), then one bar panel per compared metric (the
    headline first): mean with its 95% CI, a dashed line at ``none``'s mean, and ▲/▼ over a layer whose Welch
    interval of the difference to ``none`` excludes 0 (``comparison.csv``'s verdict)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    bar_metrics = list(dict.fromkeys(r["metric"] for r in comparison))
    bar_width = max(5.0, 0.45 * len(layers))  # room for one rotated label per layer
    fig, axes = plt.subplots(
        1, 1 + len(bar_metrics), figsize=(6 + bar_width * len(bar_metrics), 4.2), width_ratios=[6] + [bar_width] * len(bar_metrics)
    )
    colors = plt.get_cmap("tab10" if len(layers) <= 10 else "tab20")(np.arange(len(layers)) % 20)  # one colour per layer
    curve_ax = axes[0]
    for layer, color in zip(layers, colors):
        rows = [r for r in curves if r["layer"] == layer]
        steps = sorted({r["env_steps"] for r in rows})
        stats = [mean_ci95(np.array([r["welfare"] for r in rows if r["env_steps"] == x])) for x in steps]
        mean, low, high = (np.array(v) for v in zip(*stats))
        curve_ax.plot(steps, mean, label=layer, color=color)
        curve_ax.fill_between(steps, low, high, alpha=0.15, color=color)
    curve_ax.set_xlabel("env steps")
    curve_ax.set_ylabel("training episode welfare (Σ payoffs)")
    curve_ax.legend(fontsize=7, ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.24), frameon=False)  # below: no curve hidden
    marks = {"higher": "▲", "lower": "▼"}
    for ax, metric in zip(axes[1:], bar_metrics):
        rows = {r["layer"]: r for r in comparison if r["metric"] == metric}
        means = np.array([rows[layer]["mean"] for layer in layers])
        errors = np.array([[means[k] - rows[layer]["ci95_low"], rows[layer]["ci95_high"] - means[k]] for k, layer in enumerate(layers)]).T
        ax.bar(range(len(layers)), means, yerr=np.nan_to_num(errors), capsize=4, color=colors)
        if NO_LAYER in rows:
            ax.axhline(rows[NO_LAYER]["mean"], color="0.3", linestyle="--", linewidth=1)
        for k, layer in enumerate(layers):
            if rows[layer].get("verdict") in marks:
                ax.annotate(marks[rows[layer]["verdict"]], (k, means[k] + np.nan_to_num(errors[1, k])), ha="center", va="bottom",
                            xytext=(0, 2), textcoords="offset points", fontsize=9)  # fmt: skip
        low, high = ax.get_ylim()
        ax.set_ylim(low, high + 0.08 * (high - low))  # room for a mark above the tallest interval
        ax.set_xticks(range(len(layers)), layers, rotation=35, ha="right")
        ax.set_ylabel(f"{metric} (mean, 95% CI)")
        ax.set_title("▲/▼: Welch 95% CI of the difference to none excludes 0", fontsize=7)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)


def plot_achievements(team_rates: dict[str, dict[int, np.ndarray]], names: list[str], layers: list[str], path: Path, title: str) -> None:
    """Heatmap: team success rate (% of evaluation episodes in which any agent unlocked it; mean over seeds) per
    achievement (rows, in the env's order) and layer (columns), each cell annotated."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    table = np.array([np.mean(list(team_rates[layer].values()), axis=0) for layer in layers]).T  # [achievements, layers]
    fig, ax = plt.subplots(figsize=(max(5.0, 2.5 + 0.9 * len(layers)), max(2.6, 1.4 + 0.32 * len(names))))
    image = ax.imshow(table, cmap="viridis", vmin=0, vmax=100, aspect="auto")
    ax.set_xticks(range(len(layers)), layers, rotation=30, ha="right")
    ax.set_yticks(range(len(names)), names)
    for (i, j), value in np.ndenumerate(table):
        ax.text(j, i, f"{value:.0f}", ha="center", va="center", fontsize=7, color="white" if value < 60 else "black")
    seeds = min(len(v) for v in team_rates.values())
    fig.colorbar(image, ax=ax, label=f"team success %\n(mean of ≥{seeds} seeds)")
    ax.set_title(title, fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120, bbox_inches="tight")  # a one-layer heatmap is narrower than its colour bar label
    plt.close(fig)


def format_summary(summary: list[dict]) -> str:
    lines = [f"{'layer':<20} {'metric':<24} {'mean':>12}  95% CI"]
    for r in summary:
        lines.append(f"{r['layer']:<20} {r['metric']:<24} {r['mean']:>12.4g}  [{r['ci95_low']:.4g}, {r['ci95_high']:.4g}]")
    return "\n".join(lines)


def intrinsic_cli(args: argparse.Namespace) -> int:
    from motivegym.core.cpu_defaults import request_host_devices
    from motivegym.core.params import parse_env_kwargs

    request_host_devices("auto")  # a fresh process: one XLA host device per core, so every core trains
    try:
        layers = parse_layers(args.layers)
        result = run_experiment(
            args.env, layers, args.seeds, args.steps, args.out, base=args.base, coef=args.coef, algo=args.algo,
            num_envs=args.num_envs, num_steps=args.num_steps, eval_episodes=args.eval_episodes,
            eval_policy=args.eval_policy, seed=args.seed, seed_group=args.seed_group, tables_only=args.tables_only,
            **parse_env_kwargs(args.env_kwarg),
        )  # fmt: skip
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(format_summary(result["summary"]))
    print(format_comparison(result["comparison"]))
    print(f"trained {len(result['trained'])} part(s); tables and figures in {args.out}")
    return 0


def interval_text(mean, low, high, decimals: int, signed: bool = False) -> str:
    """``"mean [low, high]"`` with ``decimals`` decimals and a typographic minus (``+`` shown when ``signed``)."""
    sign = "+" if signed else ""
    return f"{float(mean):{sign}.{decimals}f} [{float(low):{sign}.{decimals}f}, {float(high):{sign}.{decimals}f}]".replace("-", "\u2212")


def p_text(p: float) -> str:
    """A p-value with two decimals, ``< 0.01`` below that."""
    return "< 0.01" if p < 0.01 else f"{p:.2f}"


def comparison_markdown(rows: list[dict]) -> str:
    """``comparison.csv`` as one Markdown table (what ``docs/intrinsic.md`` shows): per layer and metric the mean over
    seeds with its 95% t interval, and the difference to ``none`` with its Welch 95% interval, verdict and
    Benjamini–Hochberg adjusted p-value (``BH p``, over the layers compared on that metric)."""
    metrics = list(dict.fromkeys(r["metric"] for r in rows))
    by_layer: dict[str, dict[str, dict]] = {}
    for r in rows:
        by_layer.setdefault(r["layer"], {})[r["metric"]] = r

    header = ["layer", "seeds"]
    for m in metrics:
        header += [f"{m} (mean [95% CI])", "difference to none (Welch 95% CI, BH p)"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for layer, by_metric in by_layer.items():
        cells = [layer, str(next(iter(by_metric.values()))["seeds"])]
        for m in metrics:
            r = by_metric[m]
            cells.append(interval_text(r["mean"], r["ci95_low"], r["ci95_high"], 2))
            has_difference = r.get("verdict") not in (None, "")
            difference = (r.get("difference_to_none"), r.get("difference_ci95_low"), r.get("difference_ci95_high"))
            adjusted = f" (BH p {p_text(float(r['p_adjusted']))})" if r.get("p_adjusted") not in (None, "") else ""
            cells.append(f"{interval_text(*difference, 2, signed=True)}, {r['verdict']}{adjusted}" if has_difference else "")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def achievements_markdown(score_rows: list[dict], layers: list[str]) -> str:
    """The team success rate (%, an episode counts when any agent unlocked it) of every achievement per layer, mean over
    seeds with its 95% t interval, from ``crafter_score.csv``'s rows; the Crafter score is the first row."""
    team = {(r["group"], r["metric"]): r for r in score_rows if r["unit"] == "team"}
    metrics = list(dict.fromkeys(metric for _, metric in team))
    lines = ["| achievement | " + " | ".join(layers) + " |", "|" + "---|" * (len(layers) + 1)]
    for metric in metrics:
        cells = []
        for layer in layers:
            r = team.get((layer, metric))
            cells.append("" if r is None else interval_text(r["mean"], r["ci95_low"], r["ci95_high"], 1))
        name = "Crafter score" if metric == "score" else metric.removeprefix("rate_")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def format_comparison(rows: list[dict]) -> str:
    """Per metric, one line per layer: the metric with its interval and, against ``none``, the difference and verdict."""
    lines = []
    for metric in dict.fromkeys(r["metric"] for r in rows):
        lines.append(f"{'layer':<20} {metric:>28}   difference to none (Welch 95% CI)")
        for r in (r for r in rows if r["metric"] == metric):
            own = f"{r['mean']:.3g} [{r['ci95_low']:.3g}, {r['ci95_high']:.3g}] n={r['seeds']}"
            diff = (f"{r['difference_to_none']:+.3g} [{r['difference_ci95_low']:+.3g}, {r['difference_ci95_high']:+.3g}] {r['verdict']}"
                    if "verdict" in r else "")  # fmt: skip
            lines.append(f"{r['layer']:<20} {own:>28}   {diff}")
    return "\n".join(lines)
