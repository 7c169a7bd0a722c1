"""Generate ``docs/reference_policies.md``: reference policies and oracles for every registered env.

``python -m motivegym.experiments.reference_table [--episodes N] [--seed S] [--output PATH] [--envs A,B] [--oracles X,Y]``

For every registered env with continuous actions (registry-driven: new envs are included
automatically) and every reward type (private, integrated, cooperative) it reports the summed episode
return ``R = Σ_i Σ_t r_i,t`` (mean over episodes, common episode keys) of:

* the best of the 101 constant levels (one vmapped call over all levels and episodes) and its level;
* ``random`` and ``titfortat``;
* each of the seven oracles of ``motivegym.baselines.oracles``, solved for that reward type, with the solver's
  own ε (``OracleResult.max_gain``) and, where ``docs/oracle_check.json`` covers the oracle, the ε and label of the
  independent deviation check (``motivegym.experiments.oracle_check``), whose section is inserted between its
  markers (``python -m motivegym.experiments.oracle_check --write-docs`` rewrites only that section).
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import time
from pathlib import Path

import numpy as np
from tqdm import tqdm

from motivegym.baselines.oracles import ORACLE_NAMES, STANDARD_LAYERS, canonical_oracle_name, shared_env, solve_oracle
from motivegym.baselines.policies import CONSTANT_LEVELS, Constant, Random, TitForTat, constant_states
from motivegym.core.registry import get_spec, list_envs, make_jax
from motivegym.experiments.evaluation import episode_keys, rollout_batch
from motivegym.experiments.oracle_check import DEFAULT_OUTPUT as CHECK_DATA
from motivegym.experiments.oracle_check import TOLERANCE, docs_section, load_check

DEFAULT_OUTPUT = Path(__file__).resolve().parents[2] / "docs" / "reference_policies.md"
REWARD_NAMES = tuple(layer.name for layer in STANDARD_LAYERS)


@dataclasses.dataclass
class EnvTable:
    """Summed returns per policy row and reward type for one env."""

    env_id: str
    reference_oracle: str | None
    rows: dict[str, dict[str, float]]  # row label → reward name → summed return
    best_levels: dict[str, float]  # reward name → best constant level
    oracle_gains: dict[str, dict[str, float]]  # oracle → reward name → ε (max unilateral gain)
    skipped: str = ""


def summed_returns(stats) -> np.ndarray:
    """``[..., L]``: mean over episodes (axis −3 of ``reward_returns``) of ``Σ_i R^l_i``."""
    return np.asarray(stats.reward_returns).sum(axis=-1).mean(axis=-2)


def env_table(
    env_id: str, episodes: int, seed: int, progress: tqdm | None = None, oracles: tuple[str, ...] = ORACLE_NAMES
) -> EnvTable:
    """All rows of one env (every reward type at once for the non-oracle policies)."""
    spec = get_spec(env_id)
    env, params = make_jax(env_id)
    reference = canonical_oracle_name(spec.reference_oracle) if spec.reference_oracle else None
    if env.action_kind != "continuous":
        return EnvTable(
            env_id, reference, {}, {}, {}, skipped=f"action kind {env.action_kind!r} (policies need continuous actions)"
        )
    env = shared_env(env)
    horizon = env.max_episode_steps(params)
    keys = episode_keys(seed, episodes)
    layers = STANDARD_LAYERS
    rows: dict[str, dict[str, float]] = {}

    def note(label: str) -> None:
        if progress is not None:
            progress.set_postfix_str(f"{env_id}: {label}")

    note("constant levels")
    stats = rollout_batch(
        env, params, layers, Constant(), horizon, constant_states(env, params), keys, batched_states=True
    )
    by_level = summed_returns(stats)  # [levels, L]
    best = np.argmax(by_level, axis=0)
    rows["best constant"] = {name: float(by_level[best[k], k]) for k, name in enumerate(REWARD_NAMES)}
    best_levels = {name: float(CONSTANT_LEVELS[best[k]]) for k, name in enumerate(REWARD_NAMES)}
    for policy in (Random(), TitForTat()):
        note(policy.name)
        totals = summed_returns(rollout_batch(env, params, layers, policy, horizon, policy.init(env, params), keys))
        rows[policy.name] = {name: float(totals[k]) for k, name in enumerate(REWARD_NAMES)}
    gains: dict[str, dict[str, float]] = {}
    for oracle in oracles:
        rows[f"oracle:{oracle}"], gains[oracle] = {}, {}
        for k, layer in enumerate(layers):
            note(f"{oracle} / {layer.name}")
            solved = solve_oracle(oracle, env, params, layer)
            totals = summed_returns(
                rollout_batch(env, params, layers, solved.policy, horizon, solved.policy_state, keys)
            )
            rows[f"oracle:{oracle}"][layer.name] = float(totals[k])
            gains[oracle][layer.name] = max(0.0, solved.max_gain)
        if progress is not None:
            progress.update(1)
    return EnvTable(env_id, reference, rows, best_levels, gains)


def header_lines(episodes: int, seed: int, seconds: float, date: str, with_check: bool) -> list[str]:
    """The page header (title, provenance and what every row and column means)."""
    lines = [
        "# Reference policies and oracles",
        "",
        "<!-- GENERATED FILE: do not edit. Regenerate with `python -m motivegym.experiments.reference_table`. -->",
        "",
        f"*Generated by `motivegym.experiments.reference_table` on {date} "
        f"({episodes} episode(s) per policy, seed {seed}, {seconds / 60:.1f} min).*",
        "",
        "Every number is the summed episode return `R = Σ_i Σ_t r_i,t` (undiscounted, averaged over episodes with",
        "common episode keys) under the column's reward type, with default env parameters. Rows:",
        "",
        "* **best constant**: the best of the 101 levels `a_i = c·e_i` (fraction of each agent's *own* endowment;",
        "  the reference scales by the max endowment), level in brackets;",
        "* **random**: `a_i ~ U(0, e_i)`; **titfortat**: `0.5·e` first, then the partners' mean previous action;",
        "* **oracle:…**: the oracles of `motivegym/baselines/oracles.py`, each solved on the env's real episode return",
        "  (trust dynamics and termination included) for the column's reward type; `nash` and `social_optimum` have",
        "  layer-free objectives (own payoff return, total payoff return) and are evaluated under each reward type.",
        "  The reference oracle of each env (used for Gap%) is marked with ★.",
        "",
        "**ε (max over rewards)** is only the *solver's own* check (`OracleResult.max_gain`): the largest gain an agent",
        "gets by moving *one parameter of the oracle's own policy family* (a constant level, a schedule block, a",
        "reciprocal target or weight) on a 101-point grid, the other parameters fixed. It is not an equilibrium test: no",
        "time-varying or other out-of-family deviation is tried, and `loyalty` has no checked coordinate at all (its one",
        "common level is not an agent's own parameter), so its 0.00 says nothing. The **independent equilibrium check**",
        "below (`motivegym.experiments.oracle_check`, data in `docs/oracle_check.json`) searches full deviation paths",
        "of every agent (constants, schedules by coordinate ascent, random paths) and labels every reference oracle,",
        "all seven oracles on TrustDilemma-v0 and RecoveryRace-v0's reciprocity_equilibrium as an equilibrium or an",
        "optimum.",
    ]
    if with_check:
        lines += [
            "",
            "**check** (per-env tables): that check's largest ε % over the three reward types and its labels",
            f"(eq = equilibrium, ε % ≤ {100 * TOLERANCE:g} %; opt = optimum; ✗ = not an equilibrium/optimum); empty where",
            "the check does not cover the oracle.",
        ]
    return lines + [""]


def check_cell(check: dict | None, env_id: str, oracle: str) -> str:
    """``"0.047% eq"``: the independent check's worst ε % over the reward types and its labels, or ``""``."""
    if check is None:
        return ""
    entries = [e for e in check["entries"] if e["env"] == env_id and e["oracle"] == oracle]
    if not entries:
        return ""
    worst = max(max(e["epsilon_rel"], 0.0) for e in entries)
    short = {"equilibrium": "eq", "optimum": "opt"}
    labels = sorted({short.get(e["label"], "✗") for e in entries}, key=["eq", "opt", "✗"].index)
    return f"{100 * worst:.3f}% {'/'.join(labels)}"


def format_markdown(
    tables: list[EnvTable], episodes: int, seed: int, seconds: float, check: dict | None = None
) -> str:
    """The generated page (with the independent check's column and section when ``check`` is given)."""
    lines = header_lines(episodes, seed, seconds, datetime.date.today().isoformat(), check is not None)
    if check is not None:
        lines += [docs_section(check), ""]
    for table in tables:
        lines.append(f"## {table.env_id}")
        lines.append("")
        if table.skipped:
            lines.extend([f"Skipped: {table.skipped}.", ""])
            continue
        extra = " check |" if check is not None else ""
        lines.append("| policy | " + " | ".join(REWARD_NAMES) + " | ε (max over rewards) |" + extra)
        lines.append("|---|" + "---:|" * len(REWARD_NAMES) + "---:|" + ("---|" if check is not None else ""))
        for label, values in table.rows.items():
            cells = []
            for name in REWARD_NAMES:
                cell = f"{values[name]:.1f}"
                if label == "best constant":
                    cell += f" ({table.best_levels[name]:.2f})"
                cells.append(cell)
            oracle = label.removeprefix("oracle:") if label.startswith("oracle:") else None
            epsilon = f"{max(table.oracle_gains[oracle].values()):.2f}" if oracle else ""
            marker = " ★" if oracle is not None and oracle == table.reference_oracle else ""
            checked = f" {check_cell(check, table.env_id, oracle) if oracle else ''} |" if check is not None else ""
            lines.append(f"| {label}{marker} | " + " | ".join(cells) + f" | {epsilon} |" + checked)
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Build the tables for every coopetition env (the policies and oracles are defined over endowment
    fractions) and write the markdown page."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument("--envs", type=str, default="", help="comma-separated env ids (default: the coopetition family)")
    parser.add_argument("--oracles", type=str, default="", help="comma-separated oracle names (default: all seven)")
    parser.add_argument("--check", type=Path, default=CHECK_DATA, help="independent oracle check data (used if it exists)")
    args = parser.parse_args(argv)
    env_ids = [e.strip() for e in args.envs.split(",") if e.strip()] or list_envs("coopetition")
    oracles = tuple(canonical_oracle_name(o) for o in args.oracles.split(",") if o.strip()) or ORACLE_NAMES
    start = time.time()
    tables = []
    with tqdm(total=len(env_ids) * len(oracles), desc="reference table", unit="oracle") as progress:
        for env_id in env_ids:
            tables.append(env_table(env_id, args.episodes, args.seed, progress, oracles))
    args.output.parent.mkdir(parents=True, exist_ok=True)
    check = load_check(args.check)
    args.output.write_text(format_markdown(tables, args.episodes, args.seed, time.time() - start, check) + "\n")
    print(f"wrote {args.output} ({len(tables)} envs, {time.time() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
