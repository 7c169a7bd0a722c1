"""Case-study validation rubrics (spec §6), scored on **our** environments (``motivegym validate``).

The reference's scores come from stand-alone scripts that re-implement simplified models (spec §6); here each
rubric is computed by running the registered env with a documented policy:

* **SLCD** (§6.1, 60 points): Gauss-Seidel best responses on ``SLCD-v0``'s one-step integrated reward
  (``trust_enabled=False`` so ``W = D``, as the suite's ``U_i = π_i + Σ D_ij π_j``). Baseline: the same env
  with ``D = 0`` and ``γ = 0``. Log value is the env default (scored); the power form (β=.75, γ=.5) is reported too.
* **RenaultNissan** (§6.2, 60 points): the suite's five scripted action phases stepped through
  ``RenaultNissan-v0`` (``phase="formation"``, the alliance's start); the suite's actions on a 0–10 scale around
  a baseline of 5 are mapped to ``a_i = b_i + (x − 5)``, which gives the same trust signals ``tanh(a − b)``.
* **ApacheProject** (§6.3, 60 points): per phase (emergence/growth/maturity/evolution ↔ Formation/Growth/
  Maturation/Evolution) the Gauss-Seidel best-response equilibrium of ``ApacheProject-v0``'s one-step reward
  ``private + loyalty`` (the world payoff with its institutions plus the TR-3 loyalty motive), start 25.
  The details also hold the equilibrium without the institution multipliers (``collective_multipliers=False``).
* **AppleAppStore** (§6.4, 51 cells): the suite's adaptive reciprocity dynamics and shock schedule driven by
  ``AppleAppStore-v0``: cooperation levels ``c ∈ [0,1]`` are played as ``a = c·e``; after each quarter
  ``c ← clip(c + 0.12·Σ_j effect_ij − 0.05(c − base), 0, 1)`` with the env's Eq. 44 pair terms
  ``info["reciprocity_effects"]``, and ``base ← 0.92 base + 0.08 c`` (no noise).

The rubric scoring functions are the reference suites' (spec §6.1–§6.4) and are exposed so tests can check
them on constructed inputs; ``suite_*`` functions re-implement the suites' own models where that is cheap.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

CASES = ("SLCD", "RenaultNissan", "ApacheProject", "AppleAppStore")


@dataclasses.dataclass
class Criterion:
    """One scored rubric item."""

    category: str
    name: str
    target: str
    points: float
    max_points: float
    value: Any = None

    @property
    def passed(self) -> bool:
        return self.points >= self.max_points

    def as_dict(self) -> dict:
        value = self.value
        if isinstance(value, np.generic | np.ndarray):
            value = np.asarray(value).tolist()
        return {**dataclasses.asdict(self), "value": value, "passed": self.passed}


@dataclasses.dataclass
class RubricResult:
    """A case's criteria, total and the run details (policy, predictions …)."""

    case: str
    criteria: list[Criterion]
    max_score: float
    details: dict = dataclasses.field(default_factory=dict)
    pass_fraction: float | None = None  # the Apple rubric passes at ≥ 83%

    @property
    def score(self) -> float:
        return float(sum(c.points for c in self.criteria))

    @property
    def passed(self) -> bool:
        return self.pass_fraction is None or self.score / self.max_score >= self.pass_fraction

    def as_dict(self) -> dict:
        return {
            "case": self.case,
            "score": self.score,
            "max_score": self.max_score,
            "percent": 100.0 * self.score / self.max_score,
            "passed": self.passed,
            "criteria": [c.as_dict() for c in self.criteria],
            "details": jsonable(self.details),
        }

    def report(self) -> str:
        lines = [f"== {self.case} =="]
        for c in self.criteria:
            mark = "PASS" if c.passed else ("part" if c.points > 0 else "FAIL")
            shown = "" if c.value is None else f"  value={format_value(c.value)}"
            lines.append(f"  [{mark}] {c.category:<22} {c.name:<34} {c.points:g}/{c.max_points:g}  target: {c.target}{shown}")
        lines.append(f"  total {self.score:g}/{self.max_score:g} ({100 * self.score / self.max_score:.1f}%)")
        return "\n".join(lines)


def format_value(value: Any) -> str:
    if isinstance(value, float | np.floating):
        return f"{float(value):.4g}"
    if isinstance(value, list | tuple | np.ndarray):
        return "[" + ", ".join(format_value(v) for v in np.asarray(value).ravel().tolist()) + "]"
    return str(value)


def jsonable(tree: Any) -> Any:
    if isinstance(tree, dict):
        return {str(k): jsonable(v) for k, v in tree.items()}
    if isinstance(tree, list | tuple):
        return [jsonable(v) for v in tree]
    if isinstance(tree, np.ndarray | jax.Array):
        return np.asarray(tree).tolist()
    if isinstance(tree, np.generic):
        return tree.item()
    return tree


def award(category: str, name: str, target: str, condition: bool, points: float, value: Any = None) -> Criterion:
    return Criterion(category, name, target, float(points) if condition else 0.0, float(points), value)


# ======================================================================================= S-LCD (§6.1)


def slcd_metrics(
    equilibrium: Sequence[float],
    baseline: Sequence[float],
    payoffs_equilibrium: Sequence[float],
    payoffs_baseline: Sequence[float],
    value_equilibrium: float,
    value_baseline: float,
    converged: bool,
) -> dict:
    """The suite's derived metrics: coop%, value%, share0 = π₀/(π₀+π₁), asym = |a₀ − a₁|/mean(a)."""
    a_eq, a_base = np.asarray(equilibrium, float), np.asarray(baseline, float)
    pi_eq = np.asarray(payoffs_equilibrium, float)
    return {
        "equilibrium": a_eq.tolist(),
        "baseline": a_base.tolist(),
        "payoffs_equilibrium": pi_eq.tolist(),
        "payoffs_baseline": np.asarray(payoffs_baseline, float).tolist(),
        "value_equilibrium": float(value_equilibrium),
        "value_baseline": float(value_baseline),
        "converged": bool(converged),
        "cooperation_increase_percent": float((a_eq.mean() - a_base.mean()) / a_base.mean() * 100),
        "value_increase_percent": float((value_equilibrium - value_baseline) / value_baseline * 100),
        "share0": float(pi_eq[0] / pi_eq.sum()),
        "asymmetry": float(abs(a_eq[0] - a_eq[1]) / a_eq.mean()),
    }


def slcd_rubric(metrics: dict) -> list[Criterion]:
    """The TR-1 suite's 60-point plausibility rubric (spec §6.1) on :func:`slcd_metrics`."""
    a_eq, a_base = np.asarray(metrics["equilibrium"]), np.asarray(metrics["baseline"])
    pi_eq, pi_base = np.asarray(metrics["payoffs_equilibrium"]), np.asarray(metrics["payoffs_baseline"])
    coop, value = metrics["cooperation_increase_percent"], metrics["value_increase_percent"]
    v_eq, conv = metrics["value_equilibrium"], metrics["converged"]
    c1, c2, c3, c4, c5 = "convergence", "cooperation", "value creation", "value distribution", "strategic realism"
    return [
        award(c1, "converged", "solver converged", conv, 2, conv),
        award(c1, "positive actions", "all a > 0", bool(np.all(a_eq > 0)), 2, a_eq),
        award(c1, "bounded actions", "all a < 100", bool(np.all(a_eq < 100)), 2, a_eq),
        award(c1, "finite payoffs", "both π finite", bool(np.all(np.isfinite(pi_eq))), 2, pi_eq),
        award(c1, "finite value", "V(a_eq) finite", math.isfinite(v_eq), 2, v_eq),
        award(c2, "coop% > 0", "> 0", coop > 0, 1, coop),
        award(c2, "coop% > 10", "> 10", coop > 10, 2, coop),
        award(c2, "coop% > 15", "> 15", coop > 15, 2, coop),
        award(c2, "coop% < 100", "< 100", coop < 100, 3, coop),
        award(c2, "coop% < 80", "< 80", coop < 80, 2, coop),
        award(c2, "coop% in 15-60", "15 ≤ coop% ≤ 60", 15 <= coop <= 60, 3, coop),
        award(c2, "both above baseline", "a_eq,i > a_base,i for both", bool(np.all(a_eq > a_base)), 2, a_eq),
        award(c3, "value% > 0", "> 0", value > 0, 2, value),
        award(c3, "value% > 10", "> 10", value > 10, 2, value),
        award(c3, "value% > 15", "> 15", value > 15, 2, value),
        award(c3, "value% < 100", "< 100", value < 100, 3, value),
        award(c3, "value% in 10-50", "10 ≤ value% ≤ 50", 10 <= value <= 50, 3, value),
        award(c3, "V_eq > V_base", "V_eq > V_base", v_eq > metrics["value_baseline"], 3, v_eq),
        award(c4, "positive payoffs", "both π > 0", bool(np.all(pi_eq > 0)), 3, pi_eq),
        award(c4, "Pareto improvement", "both π above baseline π", bool(np.all(pi_eq > pi_base)), 3, pi_eq),
        award(c4, "Samsung share", "0.50 ≤ share0 ≤ 0.65", 0.50 <= metrics["share0"] <= 0.65, 4, metrics["share0"]),
        award(c5, "converged", "solver converged", conv, 3, conv),
        award(c5, "more cooperation", "mean(a_eq) > mean(a_base)", a_eq.mean() > a_base.mean(), 3, a_eq.mean()),
        award(c5, "moderate asymmetry", "0.02 < asym < 0.3", 0.02 < metrics["asymmetry"] < 0.3, 4, metrics["asymmetry"]),
    ]


def golden_section_maximum(function: Callable[[float], float], low: float, high: float, tolerance: float = 1e-10) -> float:
    """Maximiser of a unimodal scalar function on ``[low, high]`` (golden-section search, float64)."""
    ratio = (math.sqrt(5) - 1) / 2
    a, b = low, high
    c, d = b - ratio * (b - a), a + ratio * (b - a)
    fc, fd = function(c), function(d)
    while b - a > tolerance:
        if fc > fd:
            b, d, fd = d, c, fc
            c = b - ratio * (b - a)
            fc = function(c)
        else:
            a, c, fc = c, d, fd
            d = a + ratio * (b - a)
            fd = function(d)
    return (a + b) / 2


def suite_slcd_metrics(specification: str = "log") -> dict:
    """The TR-1 suite's own model (spec §6.1) in float64: Gauss-Seidel best responses over [0.01, 100], start 10."""
    endowments, alpha = np.array([100.0, 100.0]), np.array([0.55, 0.45])
    case_d = np.array([[0.0, 0.64], [0.86, 0.0]])
    if specification == "log":
        gamma, value_of = 0.65, lambda a: 20.0 * np.log1p(a)
    elif specification == "power":
        gamma, value_of = 0.5, lambda a: np.where(a > 0, np.maximum(a, 0.0) ** 0.75, 0.0)
    else:
        raise ValueError(f"specification must be 'log' or 'power', got {specification!r}")

    def payoffs(actions, synergy_weight):
        individual = value_of(actions)
        synergy = math.sqrt(actions[0] * actions[1]) if np.all(actions > 0) else 0.0
        return endowments - actions + individual + alpha * synergy_weight * synergy

    def total_value(actions, synergy_weight):
        synergy = math.sqrt(actions[0] * actions[1]) if np.all(actions > 0) else 0.0
        return float(np.sum(value_of(actions)) + synergy_weight * synergy)

    def solve(dependence, synergy_weight):
        actions = np.full(2, 10.0)
        for _ in range(1000):
            previous = actions.copy()
            for i in range(2):
                def utility(x, i=i):
                    trial = actions.copy()
                    trial[i] = max(0.001, x)
                    pi = payoffs(trial, synergy_weight)
                    return pi[i] + dependence[i] @ pi

                actions[i] = golden_section_maximum(utility, 0.01, 100.0)
            if np.max(np.abs(actions - previous)) < 1e-6:
                return actions, True
        return actions, False

    base, _ = solve(np.zeros((2, 2)), 0.0)
    eq, converged = solve(case_d, gamma)
    return slcd_metrics(eq, base, payoffs(eq, gamma), payoffs(base, gamma), total_value(eq, gamma), total_value(base, gamma), converged)


# ----------------------------------------------------------------------------- best responses on our envs


def stage_reward_function(env: Any, params: Any, layer: Any) -> Callable[[jax.Array], jax.Array]:
    """``actions -> rewards [n]`` of one step from the reset state under ``layer`` (pure, jittable)."""
    from motivegym.core.env import Transition
    from motivegym.reward_layers import LayerSpec

    key = jax.random.PRNGKey(0)
    state, obs = env.reset(key, params)
    layer_state = layer.init(key, LayerSpec.of(env, params))

    def rewards(actions):
        next_state, next_obs, payoffs, done, info = env.step(key, state, actions, params)
        transition = Transition(obs, actions, payoffs, next_obs, info["terminated"], info["truncated"], info)
        return layer.apply(layer_state, transition)[1]

    return rewards


def best_response_equilibrium(
    reward_fn: Callable[[jax.Array], jax.Array],
    start: Any,
    low: Any,
    high: Any,
    grid_points: int = 65,
    refinements: int = 6,
    tolerance: float = 1e-4,
    max_sweeps: int = 200,
) -> tuple[np.ndarray, bool, int]:
    """Gauss-Seidel best responses: each a global grid search over ``[low_i, high_i]`` refined ``refinements``
    times around the best point (±2 grid steps), which handles the discontinuous institution multipliers, then
    polished by bisection on ``dU_i/da_i`` (``jax.grad``) inside the coarse bracket where the derivative changes sign.

    Returns ``(actions, converged, sweeps)``; converged when ``max|Δa| < tolerance`` (float32 envs).
    """
    low, high = jnp.asarray(low, jnp.float32), jnp.asarray(high, jnp.float32)
    n = low.shape[0]

    def best_response(actions, i):
        def utility(x):
            return reward_fn(actions.at[i].set(x))[i]

        def grid(bounds):
            lo, hi = bounds
            candidates = jnp.linspace(lo, hi, grid_points)
            best = candidates[jnp.argmax(jax.vmap(utility)(candidates))]
            step = (hi - lo) / (grid_points - 1)
            return best, (jnp.maximum(low[i], best - 2 * step), jnp.minimum(high[i], best + 2 * step))

        _, coarse = grid((low[i], high[i]))
        best, _ = jax.lax.fori_loop(0, refinements, lambda _, carry: grid(carry[1]), (low[i], coarse))
        # float32 utilities are flat near a smooth optimum (±0.05 for log value), so polish with the sign of
        # dU/da_i: bisection inside the coarse bracket when the derivative changes sign there.
        derivative = jax.grad(utility)
        lo, hi = coarse

        def bisect(_, bounds):
            a, b = bounds
            middle = 0.5 * (a + b)
            rising = derivative(middle) > 0
            return jnp.where(rising, middle, a), jnp.where(rising, b, middle)

        a, b = jax.lax.fori_loop(0, 40, bisect, (lo, hi))
        root = 0.5 * (a + b)
        sign_change = (derivative(lo) > 0) & (derivative(hi) < 0)
        accept = sign_change & (utility(root) >= utility(best) - 1e-4 * jnp.abs(utility(best)))
        return actions.at[i].set(jnp.where(accept, root, best))

    @jax.jit
    def sweep(actions):
        return jax.lax.fori_loop(0, n, lambda i, a: best_response(a, i), actions)

    actions = jnp.asarray(start, jnp.float32)
    for sweeps in range(1, max_sweeps + 1):
        new = sweep(actions)
        change = float(jnp.max(jnp.abs(new - actions)))
        actions = new
        if change < tolerance:
            return np.asarray(actions), True, sweeps
    return np.asarray(actions), False, max_sweeps


def env_slcd_metrics(value_form: str = "log") -> dict:
    """S-LCD metrics from ``SLCD-v0`` (see the module docstring for the policy)."""
    import motivegym
    from motivegym.reward_layers import Integrated

    overrides = {"trust_enabled": False}
    if value_form == "power":
        overrides.update(value_form="power", beta=0.75, gamma=0.5)
    env, params = motivegym.make_jax("SLCD-v0", **overrides)
    _, base_params = motivegym.make_jax("SLCD-v0", **{**overrides, "interdependence": np.zeros((2, 2), np.float32), "gamma": 0.0})
    low = jnp.full((2,), 0.01, jnp.float32)
    high = params.endowments
    base, _, _ = best_response_equilibrium(stage_reward_function(env, base_params, Integrated()), [10.0, 10.0], low, high)
    eq, converged, sweeps = best_response_equilibrium(stage_reward_function(env, params, Integrated()), [10.0, 10.0], low, high)
    key = jax.random.PRNGKey(0)
    state, _ = env.reset(key, params)

    def payoffs_and_value(actions):
        _, _, payoffs, _, info = env.step(key, state, jnp.asarray(actions, jnp.float32), params)
        return np.asarray(payoffs, float), float(info["total_value"])

    pi_eq, v_eq = payoffs_and_value(eq)
    pi_base, v_base = payoffs_and_value(base)  # V with the specification's γ for both profiles, as the suite
    metrics = slcd_metrics(eq, base, pi_eq, pi_base, v_eq, v_base, converged)
    metrics["sweeps"] = sweeps
    return metrics


def validate_slcd() -> RubricResult:
    log = env_slcd_metrics("log")
    power = env_slcd_metrics("power")
    power_score = sum(c.points for c in slcd_rubric(power))
    details = {
        "env": "SLCD-v0",
        "policy": "Gauss-Seidel grid best responses on the one-step integrated reward (trust_enabled=False); "
        "baseline D=0, γ=0",
        "log": log,
        "power": {**power, "score": power_score},
        "reference_suite_scores": {"log": 58, "power": 46},
    }
    return RubricResult("SLCD", slcd_rubric(log), 60.0, details)


# ================================================================================ Renault–Nissan (§6.2)

#: (phase, duration in periods, action on the suite's 0–10 scale; baseline 5)   (spec §6.2)
RENAULT_NISSAN_SCRIPT = (
    ("Formation & Integration", 12, 6.5),
    ("Mature Cooperation", 40, 7.0),
    ("Crisis", 4, 2.0),
    ("Recovery", 15, 6.2),
    ("Current State", 8, 6.5),
)
SUITE_BASELINE = 5.0


def renault_nissan_rubric(
    trust_history: np.ndarray,
    reputation_history: np.ndarray,
    durations: Sequence[int],
    phase_signals: Sequence[float],
    observed_data: bool = False,
) -> list[Criterion]:
    """The TR-2 suite's four 15-point dimensions (spec §6.2). ``trust_history`` is ``[steps + 1, n, n]``
    (index 0 = initial); all trust means are over the whole matrix, diagonal included (as the suite)."""
    trust_means = np.asarray(trust_history, float).reshape(len(trust_history), -1).mean(axis=1)
    starts = np.concatenate([[0], np.cumsum(durations)[:-1]]).astype(int)
    ends = starts + np.asarray(durations, int)
    signals = np.asarray(phase_signals, float)
    deltas = trust_means[ends] - trust_means[starts]
    criteria = [award("trust alignment", "observed-data placeholder", "12 with observed data, else 10", True, 12 if observed_data else 10)]

    matches = int(np.sum(np.sign(deltas) == np.sign(signals)))
    criteria.append(Criterion("behavioural prediction", "phase trust direction", "+3 per phase with sign(ΔT) = sign(signal), cap 15",
                              float(min(15, 3 * matches)), 15.0, deltas.tolist()))

    rates = np.abs(deltas) / np.asarray(durations, float)
    erosion, building = rates[signals < 0], rates[signals > 0]
    asymmetric = erosion.size > 0 and building.size > 0 and erosion.mean() > 1.5 * building.mean()
    hysteresis, ratio = False, None
    for i in range(len(signals) - 1):
        if signals[i] < -0.3 and signals[i + 1] > 0.3:
            before, after = trust_means[max(starts[i] - 1, 0)], trust_means[ends[i + 1]]
            hysteresis, ratio = bool(after < 0.9 * before), float(after / before)
            break
    max_damage = float(np.max(reputation_history))
    criteria += [
        award("mechanism", "negativity bias", "mean erosion rate > 1.5 × mean building rate", asymmetric, 5,
              [float(erosion.mean()) if erosion.size else None, float(building.mean()) if building.size else None]),
        award("mechanism", "hysteresis", "trust after recovery < 0.9 × before the violation", hysteresis, 5, ratio),
        award("mechanism", "reputation damage", "max R > 0.3", max_damage > 0.3, 5, max_damage),
    ]
    final = float(trust_means[-1])
    visible = [int(t) for t in ends[:4] if t + 1 < len(trust_means) and abs(trust_means[t + 1] - trust_means[t - 1]) > 0.05]
    criteria += [
        Criterion("outcome", "final trust level", "0.2 ≤ mean(T_final) ≤ 0.8 → 7, else 4", 7.0 if 0.2 <= final <= 0.8 else 4.0, 7.0, final),
        Criterion("outcome", "visible phase transitions", "+2 per boundary with |ΔT| > 0.05 (first four), cap 8",
                  float(min(8, 2 * len(visible))), 8.0, visible),
    ]
    return criteria


def suite_renault_nissan_history() -> tuple[np.ndarray, np.ndarray]:
    """The TR-2 suite's model (spec §6.2): [Renault, Nissan], D = [[0,.65],[.75,0]], baselines 5, T clipped to
    [0, 1], Nissan's transposed initial row ``[1.0, 0.55]`` whose diagonal slot is never updated."""
    lam_plus, lam_minus, mu, delta, xi, kappa = 0.08, 0.25, 0.55, 0.02, 0.50, 1.0
    dependence = np.array([[0.0, 0.65], [0.75, 0.0]])
    trust = np.array([[1.0, 0.50], [1.0, 0.55]])
    reputation = np.zeros((2, 2))
    trust_history, reputation_history = [trust.copy()], [reputation.copy()]
    pairs = [(0, 1), (1, 0)]
    for _, duration, action in RENAULT_NISSAN_SCRIPT:
        for _ in range(duration):
            signal = math.tanh(kappa * (action - SUITE_BASELINE))
            new_trust, new_reputation = trust.copy(), reputation.copy()
            for i, j in pairs:
                if signal > 0:
                    change = lam_plus * signal * max(0.0, (1.0 - reputation[i, j]) - trust[i, j])
                else:  # s = 0 falls into the erosion branch (ΔT = 0), as in the suite
                    change = lam_minus * signal * trust[i, j] * (1 + xi * dependence[i, j])
                damage = mu * (-signal) * (1 - reputation[i, j]) if signal < 0 else -delta * reputation[i, j]
                new_trust[i, j] = min(1.0, max(0.0, trust[i, j] + change))  # clipped to [0, 1], not the ceiling
                new_reputation[i, j] = min(1.0, max(0.0, reputation[i, j] + damage))
            trust, reputation = new_trust, new_reputation
            trust_history.append(trust.copy())
            reputation_history.append(reputation.copy())
    return np.array(trust_history), np.array(reputation_history)


def script_signals() -> list[float]:
    return [math.tanh(action - SUITE_BASELINE) for _, _, action in RENAULT_NISSAN_SCRIPT]


def env_renault_nissan_history(phase: str = "formation") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``RenaultNissan-v0`` stepped through the scripted phases; returns (T history, R history, actions)."""
    import motivegym

    env, params = motivegym.make_jax("RenaultNissan-v0", phase=phase, max_steps=1000)
    key = jax.random.PRNGKey(0)
    state, _ = env.reset(key, params)
    step = jax.jit(env.step)
    baselines = np.asarray(params.baselines)
    trust, reputation, actions = [np.asarray(state.trust)], [np.asarray(state.reputation)], []
    for _, duration, level in RENAULT_NISSAN_SCRIPT:
        joint = jnp.asarray(baselines + (level - SUITE_BASELINE), jnp.float32)
        for _ in range(duration):
            state, _, _, _, _ = step(key, state, joint, params)
            trust.append(np.asarray(state.trust))
            reputation.append(np.asarray(state.reputation))
            actions.append(np.asarray(joint))
    return np.array(trust), np.array(reputation), np.array(actions)


def validate_renault_nissan() -> RubricResult:
    trust, reputation, actions = env_renault_nissan_history("formation")
    durations = [d for _, d, _ in RENAULT_NISSAN_SCRIPT]
    criteria = renault_nissan_rubric(trust, reputation, durations, script_signals())
    means = trust.reshape(len(trust), -1).mean(axis=1)
    details = {
        "env": "RenaultNissan-v0 (phase='formation')",
        "policy": "scripted phases: a_i = b_i + (x − 5) with x = 6.5, 7.0, 2.0, 6.2, 6.5 for 12, 40, 4, 15, 8 steps",
        "trust_mean_full_matrix": means.tolist(),
        "final_trust": trust[-1].tolist(),
        "max_reputation_damage": float(reputation.max()),
        "reference_suite_score": 49,
    }
    return RubricResult("RenaultNissan", criteria, 60.0, details)


# ==================================================================================== Apache (§6.3)

APACHE_PATTERNS = ("High (founding burst)", "Moderate (scaling)", "Sustained (stable core)", "Declining (transitions)")
APACHE_SUITE_PHASES = ("Formation", "Growth", "Maturation", "Evolution")
APACHE_ENV_PHASES = ("emergence", "growth", "maturity", "evolution")


def pattern_points(label: str, x: float) -> int:
    """Pattern-match points of the TR-3 suite for ``x = predicted/50`` (spec §6.3)."""
    if "High" in label:
        return 4 if x > 0.6 else 3 if x > 0.4 else 2 if x > 0.2 else 1
    if "Moderate" in label:
        return 4 if 0.3 < x < 0.9 else 2 if x > 0.2 else 1
    if "Sustained" in label:
        return 4 if 0.1 < x < 0.6 else 2 if x > 0.05 else 1
    if "Declining" in label:
        return 4 if x < 0.5 else 2 if x < 0.7 else 1
    raise ValueError(f"unknown pattern label {label!r}")


def apache_rubric(predictions: Sequence[float], labels: Sequence[str] = APACHE_PATTERNS, names: Sequence[str] = APACHE_SUITE_PHASES) -> list[Criterion]:
    """The TR-3 suite's per-phase 15-point score (spec §6.3) on the four predicted mean efforts."""
    predictions = np.asarray(predictions, float)
    order = np.argsort(-predictions, kind="stable")
    ranks = np.empty(len(predictions), int)
    ranks[order] = np.arange(len(predictions))
    criteria = []
    for k, (name, label, predicted) in enumerate(zip(names, labels, predictions)):
        stability = sum([predicted > 0, predicted < 100, bool(np.isfinite(predicted))])
        rank_points = {0: 4, 1: 3, 2: 1}.get(abs(int(ranks[k]) - k), 0)
        if k == 0:
            trend = 4 if predicted >= 0.95 * predictions.max() else 2
        else:
            previous = predictions[k - 1]
            trend = 4 if predicted < previous else 2 if predicted == previous else 1 if predicted < 1.1 * previous else 0
        pattern = pattern_points(label, predicted / 50.0)
        points = [stability, rank_points, pattern, trend]  # at most 3 + 4 + 4 + 4 = 15 (the suite's cap)
        criteria += [
            Criterion(name, "convergence & stability", "prediction > 0, < 100, finite (1 each)", float(points[0]), 3.0, float(predicted)),
            Criterion(name, "relative-magnitude rank", "rank equal to phase order → 4, off by 1 → 3, by 2 → 1", float(points[1]), 4.0, int(ranks[k])),
            Criterion(name, "pattern match", f"{label} on x = predicted/50", float(points[2]), 4.0, float(predicted / 50.0)),
            Criterion(name, "cross-phase trend", "phase 0: ≥ 0.95·max; later: below the previous phase", float(points[3]), 4.0, float(predicted)),
        ]
    return criteria


def env_apache_predictions(collective_multipliers: bool = True) -> list[dict]:
    """Per-phase best-response equilibria of ``ApacheProject-v0`` under ``private + loyalty`` (start 25)."""
    import motivegym
    from motivegym.reward_layers.motives import Loyalty

    rows = []
    for phase in APACHE_ENV_PHASES:
        env, params = motivegym.make_jax("ApacheProject-v0", phase=phase, collective_multipliers=collective_multipliers)
        n = env.n_agents(params)
        reward_fn = stage_reward_function(env, params, Loyalty())
        low = jnp.zeros((n,), jnp.float32)
        actions, converged, sweeps = best_response_equilibrium(
            reward_fn, np.full(n, 25.0), low, params.endowments, grid_points=33, refinements=5, max_sweeps=50
        )
        rows.append({
            "phase": phase,
            "n_agents": n,
            "predicted_mean_effort": float(actions.mean()),
            "effort_std": float(actions.std()),
            "converged": converged,
            "sweeps": sweeps,
            "initial_loyalty": float(params.initial_loyalty),
            "nash_equilibrium_closed_form": float(np.asarray(env.describe(env.reset(jax.random.PRNGKey(0), params)[0], params)["nash_equilibrium"])),
        })
    return rows


def validate_apache() -> RubricResult:
    rows = env_apache_predictions(True)
    # rounded to the solver tolerance, so float noise does not rank tied phases (ties keep the phase order)
    predictions = [round(row["predicted_mean_effort"], 4) for row in rows]
    without = env_apache_predictions(False)
    without_predictions = [round(row["predicted_mean_effort"], 4) for row in without]
    details = {
        "env": "ApacheProject-v0 (emergence/growth/maturity/evolution)",
        "policy": "Gauss-Seidel grid best responses on the one-step reward private + loyalty, start 25",
        "phases": rows,
        "without_institution_multipliers": {
            "phases": without,
            "score": sum(c.points for c in apache_rubric(without_predictions)),
        },
        "reference_suite_score": 45,
    }
    return RubricResult("ApacheProject", apache_rubric(predictions), 60.0, details)


# ====================================================================================== Apple (§6.4)

#: (phase, first quarter, last quarter (inclusive slice end))   (spec §6.4)
APPLE_SUITE_PHASES = (("Symbiosis", 0, 16), ("Maturation", 16, 36), ("Tension", 36, 48), ("Crisis", 48, 54), ("Adjustment", 54, 66))
#: phase-mean cooperation targets (Apple, Major, Small)
APPLE_PHASE_TARGETS = {
    "Symbiosis": (0.81, 0.78, 0.80),
    "Maturation": (0.85, 0.84, 0.86),
    "Tension": (0.72, 0.60, 0.68),
    "Crisis": (0.49, 0.22, 0.42),
    "Adjustment": (0.70, 0.47, 0.67),
}
#: quarter → {actor: shock} (float: added then clipped; ("set", x): set)
APPLE_SHOCKS = {36: {1: -0.15, 2: -0.10}, 48: {1: -0.40, 0: -0.25}, 54: {0: 0.20}}
APPLE_INDICATORS = (
    "coop_trend", "response_magnitude", "memory_effects", "asymmetry", "trust_recip_align", "punishment",
    "forgiveness", "phase_timing", "recovery_shape", "eq_stability", "param_sensitivity", "overall_fit",
)


def apple_cell(indicator: str, phase: str, block: np.ndarray, targets: Sequence[float]) -> float | None:
    """One cell of the TR-4 suite's scoring matrix (spec §6.4); ``None`` where not applicable.

    ``block`` is the phase's ``[quarters, 3]`` cooperation levels (inclusive slice).
    """
    delta = float(np.mean(block[-1] - block[0]))
    error = float(np.mean(np.abs(block.mean(axis=0) - np.asarray(targets)) / np.asarray(targets)))
    steps = np.abs(np.diff(block, axis=0))
    if indicator == "coop_trend":
        return {
            "Symbiosis": 1.0 if delta > 0 else 0.5,
            "Maturation": 1.0 if np.mean(block.std(axis=0)) < 0.05 else 0.5,
            "Tension": 1.0 if delta < 0 else 0.0,
            "Crisis": 1.0 if delta < -0.1 else 0.5,
            "Adjustment": 1.0 if delta > 0 else 0.5,
        }[phase]
    if indicator == "response_magnitude":
        return 1.0 if error < 0.15 else 0.5 if error < 0.25 else 0.0
    if indicator == "memory_effects":
        return 0.5 if phase == "Symbiosis" else (1.0 if steps.size and steps.max() < 0.2 else 0.5)
    if indicator == "asymmetry":
        return 1.0 if block[:, 1].std() > 0 or block[:, 2].std() > 0 else 0.0
    if indicator == "trust_recip_align":
        return 0.5 if phase == "Adjustment" else 1.0
    if indicator == "punishment":
        if phase == "Symbiosis":
            return None
        if phase == "Tension":
            return 1.0 if block[-1, 1] < block[0, 1] else 0.5
        if phase == "Crisis":
            return 1.0 if block[-1].mean() < block[0].mean() else 0.5
        return 1.0
    if indicator == "forgiveness":
        return (1.0 if delta > 0.05 else 0.5) if phase == "Adjustment" else None
    if indicator == "phase_timing":
        return 1.0
    if indicator == "recovery_shape":
        if phase != "Adjustment":
            return None
        changes = np.diff(block.mean(axis=1))
        return 1.0 if changes.size and np.mean(changes > -0.01) > 0.7 else 0.5
    if indicator == "eq_stability":
        variance = float(np.mean(block.var(axis=0)))
        limit = 0.05 if phase in ("Tension", "Crisis") else 0.01
        return 1.0 if variance < limit else 0.5
    if indicator == "param_sensitivity":
        return (1.0 if block[0].mean() - block[-1].mean() > 0.1 else 0.5) if phase == "Crisis" else 1.0
    if indicator == "overall_fit":
        return 1.0 if error < 0.15 else 0.5
    raise ValueError(f"unknown indicator {indicator!r}")


def apple_rubric(trajectory: np.ndarray) -> list[Criterion]:
    """The 12-indicator × 5-phase matrix (51 applicable cells) on a ``[quarters, 3]`` cooperation trajectory."""
    trajectory = np.asarray(trajectory, float)
    criteria = []
    for phase, start, end in APPLE_SUITE_PHASES:
        block = trajectory[start : end + 1]
        for indicator in APPLE_INDICATORS:
            points = apple_cell(indicator, phase, block, APPLE_PHASE_TARGETS[phase])
            if points is not None:
                criteria.append(Criterion(phase, indicator, "hit 1 / partial 0.5 / miss 0", points, 1.0))
    return criteria


def apply_shocks(levels: np.ndarray, quarter: int) -> np.ndarray:
    levels = levels.copy()
    for actor, shock in APPLE_SHOCKS.get(quarter, {}).items():
        if isinstance(shock, tuple):
            levels[actor] = shock[1]
        else:
            levels[actor] = float(np.clip(levels[actor] + shock, 0.0, 1.0))
    return levels


def env_apple_trajectory(adaptation_rate: float = 0.12, decay: float = 0.05) -> tuple[np.ndarray, dict]:
    """Cooperation levels of the suite's adaptive dynamics driven by ``AppleAppStore-v0`` (module docstring)."""
    import motivegym

    env, params = motivegym.make_jax("AppleAppStore-v0")
    key = jax.random.PRNGKey(0)
    state, _ = env.reset(key, params)
    step = jax.jit(env.step)
    endowments = np.asarray(params.endowments, float)
    levels, base = np.array([0.70, 0.65, 0.68]), np.full(3, 0.5)
    trajectory, mean_trust = [], []
    for quarter in range(int(params.max_steps)):
        levels = apply_shocks(levels, quarter)
        trajectory.append(levels.copy())
        state, _, _, _, info = step(key, state, jnp.asarray(levels * endowments, jnp.float32), params)
        effects = np.asarray(info["reciprocity_effects"], float).sum(axis=1)
        mean_trust.append(float(info["mean_trust"]))
        played = levels.copy()
        levels = np.clip(levels + adaptation_rate * effects - decay * (levels - base), 0.0, 1.0)
        base = 0.92 * base + 0.08 * played
    return np.array(trajectory), {"mean_trust": mean_trust}


def validate_apple() -> RubricResult:
    trajectory, extra = env_apple_trajectory()
    criteria = apple_rubric(trajectory)
    phase_means = {phase: trajectory[s : e + 1].mean(axis=0).tolist() for phase, s, e in APPLE_SUITE_PHASES}
    details = {
        "env": "AppleAppStore-v0",
        "policy": "suite dynamics c ← clip(c + 0.12 Σ_j effect_ij − 0.05 (c − base), 0, 1) with the env's Eq. 44 "
        "pair terms, shocks at q=36/48/54, base ← 0.92 base + 0.08 c, a = c·e, no noise",
        "phase_means": phase_means,
        "phase_scores": {p: sum(c.points for c in criteria if c.category == p) for p, _, _ in APPLE_SUITE_PHASES},
        "mean_trust": extra["mean_trust"],
        "reference_suite_score": "43.0/51",
    }
    return RubricResult("AppleAppStore", criteria, float(len(criteria)), details, pass_fraction=0.83)


# ============================================================================================== CLI

VALIDATORS: dict[str, Callable[[], RubricResult]] = {
    "SLCD": validate_slcd,
    "RenaultNissan": validate_renault_nissan,
    "ApacheProject": validate_apache,
    "AppleAppStore": validate_apple,
}


def validate(case: str) -> list[RubricResult]:
    """Run one case (or ``"all"``) and return its results."""
    if case == "all":
        names = list(CASES)
    elif case in VALIDATORS:
        names = [case]
    else:
        from motivegym.core.errors import unknown_names_error

        raise unknown_names_error("case", [case], list(CASES) + ["all"], "validate")
    return [VALIDATORS[name]() for name in names]


def validate_cli(case: str, out: str | None) -> int:
    """``motivegym validate CASE [--out PATH]``: print every criterion, its target, pass/fail and the totals;
    write the JSON report to ``out``. Returns 0 (the rubrics report scores; they are not pass/fail gates),
    or 2 for an unknown case."""
    try:
        results = validate(case)
    except ValueError as error:
        print(f"motivegym validate: error: {error}")
        return 2
    for result in results:
        print(result.report())
    print("summary: " + ", ".join(f"{r.case} {r.score:g}/{r.max_score:g}" for r in results))
    if out:
        with open(out, "w", encoding="utf-8") as handle:
            json.dump({"results": [r.as_dict() for r in results]}, handle, indent=2)
        print(f"wrote {out}")
    return 0
