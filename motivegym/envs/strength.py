"""Dilemma strength of every registered env, stored as data next to the registry.

``dilemma_strength.json`` (this folder) holds, per env and with default params over the env's full
horizon, the payoff welfare ``W = mean over episodes of Σ_i Σ_t π_i,t`` (undiscounted; exactly
``experiments.evaluation.summarize(...)["welfare"]``) of

* ``random``: uniform random actions;
* ``best_constant``: the best symmetric constant policy (coopetition: the best common level ``c·e_i``,
  ``best_constant_level = c``; matrix games: every agent plays action ``k`` every step,
  ``best_constant_level = k``, the action index); ``None`` for grid and sparse worlds, where a constant
  action is meaningless;
* ``nash``: the equilibrium welfare, and ``optimum``: the social optimum, each with its source string
  (an oracle, an analytic derivation, or, with ``estimate = True``, scripted policies);
* ``gap = (W_opt − W_nash) / (W_opt − W_random)``: the share of the random-to-optimum range that
  selfish equilibrium play loses. It exceeds 1 when the equilibrium is worse than random play
  (e.g. the Prisoner's Dilemma: mutual defection pays less than uniform random play); it is ``NaN``
  (``null`` in the file) when the optimum does not beat random play.

The file is written by ``python -m motivegym.experiments.dilemma_strength`` (which documents every
choice); this module only reads it and has no dependency on baselines or experiments.

``normalized_score(env_id, W) = (W − W_random) / (W_opt − W_random)`` is the score scale of the
design's evaluation protocol: 0 is random play, 1 the social optimum.

``DILEMMA_GAP_THRESHOLD = 0.1``: a reward-type ablation is only informative where selfish play leaves
a non-negligible share of the achievable welfare on the table. The stored gaps fall in two clusters
with an empty band between them:

* gap ≤ 0.046: the 16 near-optimal coopetition envs (all but TeamProduction, CoalitionFormation,
  ApacheProject and PublicGoods), whose stationary Nash welfare is within 0.35% of the optimum (their
  gap is as large as 0.03–0.046 only because random play there is itself within ~8% of the optimum,
  a small denominator), and the three sparse envs (gap 0 by construction);
* gap ≥ 0.27: every env with a real dilemma (Harvest's scripted estimate 0.27, the coopetition
  dilemmas ≥ 0.5, CoinGame and Cleanup ≈ 1, the matrix games ≥ 1.04).

0.1 sits near the geometric middle of the empty band (0.046, 0.27), more than a factor 2 from both
edges, so Monte-Carlo noise in a regenerated table does not move an env across it (0.05 would sit
only 10% above GiftExchange's 0.045). ``tests/envs/test_strength.py`` checks that the band stays empty.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
from pathlib import Path
from typing import Any

from motivegym.core.registry import REGISTRY, canonical_id, get_spec

DATA_PATH = Path(__file__).with_name("dilemma_strength.json")
REGENERATE_COMMAND = "python -m motivegym.experiments.dilemma_strength"
#: envs with ``gap >= DILEMMA_GAP_THRESHOLD`` are dilemmas worth a reward-type ablation (see the module docstring)
DILEMMA_GAP_THRESHOLD = 0.1


@dataclasses.dataclass(frozen=True)
class DilemmaStrength:
    """One row of ``dilemma_strength.json`` (definitions in the module docstring); ``gap`` is NaN where stored as null."""

    env_id: str
    random: float
    best_constant: float | None
    best_constant_level: float | None
    nash: float
    nash_source: str
    optimum: float
    optimum_source: str
    estimate: bool
    gap: float
    episodes: int
    seed: int
    notes: str

    @property
    def is_dilemma(self) -> bool:
        """``gap >= DILEMMA_GAP_THRESHOLD`` (False when the gap is NaN)."""
        return bool(self.gap >= DILEMMA_GAP_THRESHOLD)


@functools.lru_cache(maxsize=4)
def _load(path: str) -> dict[str, dict[str, Any]]:
    if not Path(path).exists():
        raise ValueError(f"no dilemma-strength data at {path}; generate it with `{REGENERATE_COMMAND}`")
    with open(path) as handle:
        return json.load(handle)


def load_table(path: str | Path = DATA_PATH) -> dict[str, dict[str, Any]]:
    """The raw JSON mapping ``env id -> row`` (cached per path)."""
    return _load(str(path))


def dilemma_strength(env_id: str, path: str | Path = DATA_PATH) -> DilemmaStrength:
    """The stored dilemma strength of ``env_id`` (``"PrisonersDilemma-v0"`` or ``"motivegym/PrisonersDilemma-v0"``).

    Raises ``ValueError`` for an unknown env and for a registered env without data (naming the command that
    regenerates it).
    """
    key = get_spec(canonical_id(env_id)).id
    table = load_table(path)
    if key not in table:
        raise ValueError(
            f"no dilemma-strength data for {key!r} in {path}; regenerate it with `{REGENERATE_COMMAND} --envs {key}`"
        )
    row = dict(table[key])
    missing = [f.name for f in dataclasses.fields(DilemmaStrength) if f.name != "env_id" and f.name not in row]
    if missing:
        raise ValueError(
            f"dilemma-strength row of {key!r} lacks {missing}; regenerate it with `{REGENERATE_COMMAND} --envs {key}`"
        )
    row["gap"] = math.nan if row["gap"] is None else float(row["gap"])
    fields = {f.name for f in dataclasses.fields(DilemmaStrength)}
    return DilemmaStrength(env_id=key, **{k: v for k, v in row.items() if k in fields})


def dilemma_env_ids(threshold: float = DILEMMA_GAP_THRESHOLD, path: str | Path = DATA_PATH) -> tuple[str, ...]:
    """Registered envs whose stored ``gap >= threshold``, in registry order (envs without data are skipped)."""
    table = load_table(path)
    return tuple(env_id for env_id in REGISTRY if env_id in table and dilemma_strength(env_id, path).gap >= threshold)


def normalized_score(env_id: str, welfare: Any, path: str | Path = DATA_PATH) -> Any:
    """``(W − W_random) / (W_opt − W_random)`` (NaN when ``W_opt <= W_random``); works on floats and arrays."""
    row = dilemma_strength(env_id, path)
    span = row.optimum - row.random
    if not span > 0:
        return welfare * math.nan
    return (welfare - row.random) / span
