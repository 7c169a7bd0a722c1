"""Schelling diagrams (``motivegym schelling ENV``): is the env a social dilemma for its cooperator and defector policies?

Definition (Schelling 1973; Perolat et al. 2017; Leibo et al. 2017; Hughes et al. 2018, Fig. 1). For an n-agent env and
``k = 0 … n−1`` other cooperators, ``R_c(k)`` is the mean **payoff** return ``Π_i = Σ_t π_i,t`` (payoffs, not a reward
layer) of a focal agent i that plays the cooperator policy while k of the other n−1 agents cooperate and the rest
defect; ``R_d(k)`` is the same for a focal defector. The policies are joint policies (default: the scripted bots
``make_bot(env_id, "cooperator" | "defector")`` of ``motivegym.baselines.bots``, whose table documents what each plays;
any pair of :class:`~motivegym.baselines.policies.Policy` objects, trained ones included, works through the Python API).

Profiles. A profile is a role per slot. Both joint policies run on the same observations every step and each slot
executes the action of its role's policy (:class:`motivegym.baselines.policies.Mixed`); where a policy keeps ``last_actions`` in its state, it is
overwritten with the executed joint action clipped to the bounds, so a policy that reads its partners' past actions
sees what was played. Slot asymmetries (spawn points, endowments) are averaged out: every agent i is focal in turn and
the k cooperating others are the next k slots after i (cyclically); per episode, the focal returns are averaged over
the n focal slots. Distinct role vectors are rolled out once, all in one jitted ``vmap`` over profiles × episodes, with
the same episode keys for every profile (common random numbers).

Intervals: Student-t over episodes (:func:`motivegym.experiments.statistics.mean_interval`); comparisons between two
points use the paired t interval of their per-episode differences (same keys), so "holds" means the whole 95 %
interval of the difference is above 0.

Conditions (Macy & Flache 2002; Hughes et al. 2018), with ``m = (n−1)/2``:

1. mutual cooperation is preferred to mutual defection: ``R_c(n−1) > R_d(0)``;
2. mutual cooperation is preferred to being exploited by defectors: ``R_c(n−1) > R_c(0)``;
3. at least one of **greed**, ``R_d(k) > R_c(k)`` for some ``k ≥ m`` (defecting pays when most others cooperate), and
   **fear**, ``R_d(k) > R_c(k)`` for some ``k ≤ m`` (defecting pays when most others defect).

Each test is ``yes`` (interval above 0), ``no`` (interval below 0, or an exact tie) or ``not distinguishable`` (the
interval contains 0); with one episode the point estimate decides. The env is a social dilemma under these policies
iff 1, 2 and 3 hold.
"""

from __future__ import annotations

import csv
import dataclasses
import math
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from motivegym.baselines.bots import bot_roles, make_bot
from motivegym.baselines.policies import Mixed, Policy
from motivegym.core.registry import get_spec, make_jax
from motivegym.experiments.evaluation import episode_keys, rollout_batch
from motivegym.experiments.statistics import Interval, mean_interval, paired_difference_interval
from motivegym.reward_layers import reward_layer

Array = jax.Array
ROLES = ("cooperator", "defector")
YES, NO, UNCLEAR = "yes", "no", "not distinguishable"


def profile_roles(n: int, k: int, focal: int, focal_cooperates: bool) -> tuple[bool, ...]:
    """Roles (True = cooperator) with ``focal`` playing its role and the ``k`` next slots after it (cyclically) cooperating."""
    if not 0 <= k <= n - 1:
        raise ValueError(f"k must be in [0, {n - 1}], got {k}")
    roles = [False] * n
    roles[focal] = focal_cooperates
    for step in range(1, k + 1):
        roles[(focal + step) % n] = True
    return tuple(roles)


@dataclasses.dataclass
class SchellingDiagram:
    """Per-episode focal returns ``returns[role][k]`` (``[episodes]``, averaged over focal slots) and their intervals."""

    env_id: str
    n_agents: int
    episodes: int
    seed: int
    env_kwargs: dict[str, Any]
    policies: dict[str, str]
    returns: dict[str, np.ndarray]  # role -> [n, episodes]

    def interval(self, role: str, k: int) -> Interval:
        return mean_interval(self.returns[role][k])

    def rows(self) -> list[dict[str, Any]]:
        """CSV rows: k, role, mean, ci_low, ci_high, episodes."""
        out = []
        for k in range(self.n_agents):
            for role in ROLES:
                iv = self.interval(role, k)
                out.append({"k": k, "role": role, "mean": iv.estimate, "ci_low": iv.low, "ci_high": iv.high, "episodes": self.episodes})
        return out

    def greater(self, a: tuple[str, int], b: tuple[str, int]) -> tuple[str, Interval]:
        """``(verdict, paired interval of R_a − R_b)`` for the claim ``R_a > R_b``."""
        iv = paired_difference_interval(self.returns[a[0]][a[1]], self.returns[b[0]][b[1]])
        return verdict(iv), iv

    def conditions(self) -> dict[str, Any]:
        """The three conditions and the verdict (see the module docstring)."""
        top, middle = self.n_agents - 1, (self.n_agents - 1) / 2
        c1, iv1 = self.greater(("cooperator", top), ("defector", 0))
        c2, iv2 = self.greater(("cooperator", top), ("cooperator", 0))
        per_k = {k: self.greater(("defector", k), ("cooperator", k)) for k in range(self.n_agents)}
        greed = any_of([per_k[k][0] for k in range(self.n_agents) if k >= middle])
        fear = any_of([per_k[k][0] for k in range(self.n_agents) if k <= middle])
        c3 = any_of([greed, fear])
        dilemma = all_of([c1, c2, c3])
        return {
            "mutual cooperation > mutual defection": (c1, iv1),
            "mutual cooperation > being exploited": (c2, iv2),
            "greed": greed,
            "fear": fear,
            "greed or fear": c3,
            "defecting pays at k": {k: per_k[k] for k in range(self.n_agents)},
            "social dilemma": dilemma,
        }


def verdict(iv: Interval) -> str:
    """``yes`` if the interval of a difference lies above 0, ``no`` below 0 or an exact tie, else not distinguishable."""
    if math.isnan(iv.low) or math.isnan(iv.high):  # one episode: the estimate decides
        return YES if iv.estimate > 0 else NO
    if iv.low > 0:
        return YES
    if iv.high < 0 or (iv.low == iv.high == 0):
        return NO
    return UNCLEAR


def any_of(verdicts: Sequence[str]) -> str:
    return YES if YES in verdicts else (UNCLEAR if UNCLEAR in verdicts else NO)


def all_of(verdicts: Sequence[str]) -> str:
    return NO if NO in verdicts else (UNCLEAR if UNCLEAR in verdicts else YES)


def role_policy(spec: str | Policy, env_id: str, env: Any, params: Any) -> tuple[Policy, Any, str]:
    """``(policy, state, name)`` of a role's policy: a :class:`Policy` or a spec string as ``motivegym scenario``
    takes it (``bot:<role>``, ``constant:<level>``, ``oracle:<name>``, ``checkpoint:FILE`` …); an oracle is solved
    for ``env``/``params`` (its selfish oracles, e.g. ``oracle:nash``, do not depend on a reward layer)."""
    from motivegym.experiments.scenarios import resolve_population

    policy, state, batched = resolve_population(spec, env_id, env, params)
    if batched:
        raise ValueError(f"a Schelling role needs one policy, got a population of checkpoint seeds: {spec!r}")
    name = spec if isinstance(spec, str) and not spec.startswith("bot:") else policy.name
    return policy, state, name


def schelling_diagram(
    env_id: str,
    episodes: int = 32,
    seed: int = 0,
    cooperator: Policy | str | None = None,
    defector: Policy | str | None = None,
    **env_kwargs: Any,
) -> SchellingDiagram:
    """Roll every profile for ``episodes`` episodes (one jitted call) and collect the focal returns.

    ``cooperator``/``defector`` default to the env's scripted bots (``make_bot``); either may be a
    :class:`Policy` or a policy spec (:func:`role_policy`), e.g. ``defector="oracle:nash"`` for a graded
    defector that plays the env's selfish equilibrium instead of the bot's extreme."""
    spec = get_spec(env_id)
    env, params = make_jax(spec.id, **env_kwargs)
    if cooperator is None or defector is None:
        given = {"cooperator": cooperator, "defector": defector}
        missing = [role for role in ROLES if given[role] is None and role not in bot_roles(spec.id)]
        if missing:
            raise ValueError(f"{spec.id} has no scripted {' or '.join(missing)} bot; pass the policies explicitly")
        cooperator = cooperator or make_bot(spec.id, "cooperator", env, params)
        defector = defector or make_bot(spec.id, "defector", env, params)
    n = env.n_agents(params)
    if n < 2:
        raise ValueError(f"{spec.id} has {n} agent(s); a Schelling diagram needs at least 2")
    wanted = {(role, k, i): profile_roles(n, k, i, role == "cooperator") for role in ROLES for k in range(n) for i in range(n)}
    distinct = sorted(set(wanted.values()))
    index = {roles: row for row, roles in enumerate(distinct)}
    (cooperator, cooperator_state, cooperator_name), (defector, defector_state, defector_name) = (
        role_policy(policy, spec.id, env, params) for policy in (cooperator, defector)
    )
    mix = Mixed(cooperator, defector)  # "focal" slots of Mixed = the cooperating slots
    states = [Mixed.init_states(np.asarray(roles), cooperator_state, defector_state) for roles in distinct]
    stacked = jax.tree.map(lambda *leaves: jnp.stack(leaves), *states)
    keys = episode_keys(seed, episodes)
    stats = rollout_batch(env, params, (reward_layer("private"),), mix, env.max_episode_steps(params), stacked, keys, batched_states=True)
    payoff_returns = np.asarray(stats.payoff_returns, np.float64)  # [profiles, episodes, n]
    returns = {role: np.zeros((n, episodes)) for role in ROLES}
    for (role, k, focal), roles in wanted.items():
        returns[role][k] += payoff_returns[index[roles], :, focal] / n
    return SchellingDiagram(
        env_id=spec.id, n_agents=n, episodes=episodes, seed=seed, env_kwargs=dict(env_kwargs),
        policies={"cooperator": cooperator_name, "defector": defector_name}, returns=returns,
    )  # fmt: skip


def format_interval(iv: Interval) -> str:
    if math.isnan(iv.low):
        return f"{iv.estimate:10.3f}"
    return f"{iv.estimate:10.3f} [{iv.low:.3f}, {iv.high:.3f}]"


def format_diagram(diagram: SchellingDiagram) -> str:
    """The table of ``R_c(k)``, ``R_d(k)`` and the verdict on each condition."""
    kwargs = ", ".join(f"{k}={v!r}" for k, v in diagram.env_kwargs.items()) or "defaults"
    lines = [
        f"Schelling diagram: {diagram.env_id} ({kwargs}), {diagram.n_agents} agents, {diagram.episodes} episode(s), seed {diagram.seed}",
        f"cooperator: {diagram.policies['cooperator']}; defector: {diagram.policies['defector']}",
        "payoff return of the focal agent, mean [95% t interval over episodes]",
        "",
        f"{'k other cooperators':>20}  {'cooperator':>28}  {'defector':>28}",
    ]
    for k in range(diagram.n_agents):
        lines.append(
            f"{k:>20}  {format_interval(diagram.interval('cooperator', k)):>28}  {format_interval(diagram.interval('defector', k)):>28}"
        )
    result = diagram.conditions()
    lines.append("")
    for name in ("mutual cooperation > mutual defection", "mutual cooperation > being exploited"):
        answer, iv = result[name]
        lines.append(f"{name}: {answer} (difference {format_interval(iv).strip()})")
    per_k = ", ".join(f"k={k}: {answer}" for k, (answer, _) in result["defecting pays at k"].items())
    lines.append(f"defecting pays more than cooperating: {per_k}")
    lines.append(f"greed (k >= {(diagram.n_agents - 1) / 2:g}): {result['greed']}; fear (k <= {(diagram.n_agents - 1) / 2:g}): {result['fear']}")
    lines.append(f"social dilemma under these policies: {result['social dilemma']}")
    return "\n".join(lines)


def file_stem(env_id: str, env_kwargs: dict[str, Any] | None = None) -> str:
    """``schelling_ENV``, then ``_NAME-VALUE`` per env kwarg in the order given (so presets do not overwrite
    the default parameters' files), e.g. ``schelling_Harvest-v0_preset-ssd_view_encoding-onehot``."""
    parts = [f"schelling_{env_id}"] + [f"{name}-{value}" for name, value in (env_kwargs or {}).items()]
    return "_".join(parts)


def write_csv(diagram: SchellingDiagram, path: Path) -> Path:
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=["k", "role", "mean", "ci_low", "ci_high", "episodes"])
        writer.writeheader()
        writer.writerows(diagram.rows())
    return path


def plot(diagram: SchellingDiagram, path: Path, policies: str = "") -> Path:
    """Two lines (cooperator, defector) with 95% bands against the number of other cooperators; ``policies``
    (e.g. ``"defector: oracle:nash"``) is added to the title."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ks = np.arange(diagram.n_agents)
    fig, ax = plt.subplots(figsize=(4.8, 3.4), dpi=120)
    for role, colour in (("cooperator", "tab:blue"), ("defector", "tab:red")):
        ivs = [diagram.interval(role, int(k)) for k in ks]
        mean = np.array([iv.estimate for iv in ivs])
        ax.plot(ks, mean, marker="o", color=colour, label=role)
        low, high = np.array([iv.low for iv in ivs]), np.array([iv.high for iv in ivs])
        if np.all(np.isfinite(low)):
            ax.fill_between(ks, low, high, color=colour, alpha=0.2, linewidth=0)
    ax.set_xticks(ks)
    ax.set_xlabel("number of other cooperators")
    ax.set_ylabel("focal payoff return per episode")
    verdict_text = diagram.conditions()["social dilemma"]
    kwargs = ", ".join(f"{k}={v!r}" for k, v in diagram.env_kwargs.items())
    where = f"{diagram.env_id} ({kwargs})\n" if kwargs else f"{diagram.env_id}: "  # long kwargs: the verdict on a line of its own
    if policies:
        where = f"{diagram.env_id} ({', '.join(filter(None, (kwargs, policies)))})\n"
    ax.set_title(f"{where}social dilemma: {verdict_text}", fontsize=9)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def policy_stem(roles: dict[str, str | None]) -> str:
    """``_ROLE-SPEC`` per role given a policy spec (``_defector-oracle-nash``); characters other than letters,
    digits, ``.`` and ``-`` become ``-``, so the default bots' file names stay as they are."""
    return "".join(f"_{role}-{re.sub(r'[^A-Za-z0-9.-]+', '-', spec)}" for role, spec in roles.items() if spec is not None)


def schelling_cli(
    env_id: str, out: str, episodes: int, seed: int, env_kwargs: dict[str, Any], cooperator: str | None = None, defector: str | None = None
) -> int:
    """``motivegym schelling``: print the table and verdict, write ``OUT/STEM.csv`` and ``.png`` (:func:`file_stem`,
    then :func:`policy_stem` for roles given as policy specs)."""
    try:
        diagram = schelling_diagram(env_id, episodes=episodes, seed=seed, cooperator=cooperator, defector=defector, **env_kwargs)
    except ValueError as error:
        print(f"motivegym: error: {error}", file=sys.stderr)
        return 2
    directory = Path(out)
    directory.mkdir(parents=True, exist_ok=True)
    stem = file_stem(diagram.env_id, diagram.env_kwargs) + policy_stem({"cooperator": cooperator, "defector": defector})
    csv_path = write_csv(diagram, directory / f"{stem}.csv")
    given = ", ".join(f"{role}: {spec}" for role, spec in (("cooperator", cooperator), ("defector", defector)) if spec is not None)
    png_path = plot(diagram, directory / f"{stem}.png", given)
    print(format_diagram(diagram))
    print(f"\nwrote {csv_path} and {png_path}")
    return 0
