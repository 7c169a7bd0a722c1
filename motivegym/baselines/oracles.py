"""Oracles: equilibrium and optimum policies computed on the env's *real* episode return.

The reference's oracles (spec §2.7) solve a one-shot stage game with trust fixed or ignored and
hand-made extra terms. Here every oracle is defined by an objective over a family of policies and
solved on what the environment actually pays: the episode is rolled out with ``jax.lax.scan``
through ``env.step`` (trust dynamics, early termination, world mechanics and the reward layer all
included), averaged over ``samples`` episode keys when the env is stochastic.

Notation: ``R^L_i(θ)`` is agent i's undiscounted episode return under reward layer L when the agents
play the policy with parameters θ; ``Π_i(θ)`` is its episode payoff return (``Σ_t π_i,t``).

Solver (``solve_policy_game``): Gauss-Seidel iterated best response over the policy parameters. Each
parameter coordinate (agent i, parameter p) is set to the best value for its owner's objective by a
vmapped grid over its bounds followed by successively finer grids around the best point
(``grid`` points, ``refinements`` levels: resolution ``(hi − lo)/(grid − 1)^(refinements+1)·2^refinements``).
A coordinate only moves when that strictly improves the owner's objective. Iterations stop when no
coordinate moved by more than ``tolerance`` of its range during a sweep, or after ``max_sweeps``.
``OracleResult.max_gain`` is the largest improvement any owner finds by changing one of its own
parameters on a 101-point grid (ε of the ε-equilibrium).

The seven oracles (names as in the reference roles):

* ``equilibrium``: stationary equilibrium, each agent plays a constant ``a_i`` and maximises ``R^L_i``.
* ``trust_aware``: the same objective over open-loop *schedules* of 4 constant blocks, so an agent can
  plan the time path of the partners' trust (build it early, harvest it late); warm-started from
  ``equilibrium``.
* ``nash``: stationary equilibrium of the selfish game, each agent maximises its payoff return ``Π_i``
  (independent of the evaluation reward layer).
* ``loyalty``: the best common norm, one level ``c ∈ [0, 1]`` shared by all (``a_i = c·e_i``) maximising
  ``Σ_i R^L_i`` (the docs' "best constant-action policy", refined beyond the 101 levels).
* ``social_optimum``: per-agent constants maximising the total payoff ``Σ_i Π_i`` (coordinate ascent
  from the best common level; independent of the reward layer).
* ``reciprocity_equilibrium``: equilibrium over reciprocal policies ``Reciprocal(window=1)``: agent i picks
  its target ``x_i`` and reciprocity weight ``w_i`` to maximise ``R^L_i``.
* ``bounded_reciprocity``: the same with bounded memory: the reciprocated signal is the partners' mean
  cooperation rate over the last ``k`` steps (``k`` = the env's ``memory_window`` parameter when it has
  one, else 5, the TR-4 default).

``solve_stage_game`` is the reference's static one-shot solver (spec §1.8) and reproduces Appendix B.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from motivegym.baselines.policies import Policy, PolicyState, Reciprocal, Schedule, base_state, episode_rollout
from motivegym.core.env import FunctionalEnv
from motivegym.envs.coopetition.value import private_payoff
from motivegym.reward_layers import RewardLayer, reward_layer

Array = jax.Array

ORACLE_NAMES = (
    "equilibrium",
    "trust_aware",
    "nash",
    "loyalty",
    "social_optimum",
    "reciprocity_equilibrium",
    "bounded_reciprocity",
)
#: oracles whose objective does not depend on the reward layer
LAYER_FREE_ORACLES = ("nash", "social_optimum")
DEFAULT_MEMORY_WINDOW = 5


def canonical_oracle_name(name: str) -> str:
    """``"Oracle_TrustAware"``, ``"trust-aware"``, ``"oracle:trust_aware"`` → ``"trust_aware"``."""
    key = name.strip().lower()
    for prefix in ("oracle:", "oracle_", "oracle"):
        if key.startswith(prefix):
            key = key[len(prefix) :]
            break
    squashed = key.replace("_", "").replace("-", "")
    for oracle in ORACLE_NAMES:
        if squashed == oracle.replace("_", ""):
            return oracle
    raise ValueError(f"unknown oracle {name!r}; valid oracles: {', '.join(ORACLE_NAMES)}")


# ----------------------------------------------------------------------------------------------
# policy families: parameters θ [P, n] with per-coordinate bounds
# ----------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class ScheduleFamily:
    """θ = the schedule table ``[blocks, n]`` (``θ[k, i] ∈ [0, e_i]``)."""

    blocks: int = 1

    @property
    def policy(self) -> Schedule:
        return Schedule(self.blocks)

    def bounds(self, high: Array) -> tuple[Array, Array]:
        upper = jnp.broadcast_to(high, (self.blocks,) + high.shape)
        return jnp.zeros_like(upper), upper

    def state(self, env: FunctionalEnv, params: Any, theta: Array) -> PolicyState:
        return self.policy.init(env, params, table=theta)


@dataclasses.dataclass(frozen=True)
class ReciprocalFamily:
    """θ = ``[[x_i], [w_i]]``: target ``x_i ∈ [0, e_i]`` and reciprocity weight ``w_i ∈ [0, 1]``."""

    window: int = 1

    @property
    def policy(self) -> Reciprocal:
        return Reciprocal(self.window)

    def bounds(self, high: Array) -> tuple[Array, Array]:
        upper = jnp.stack([high, jnp.ones_like(high)])
        return jnp.zeros_like(upper), upper

    def state(self, env: FunctionalEnv, params: Any, theta: Array) -> PolicyState:
        return self.policy.init(env, params, target=theta[0], weight=theta[1])


Family = ScheduleFamily | ReciprocalFamily


@dataclasses.dataclass(frozen=True)
class SolverSettings:
    """Grid best-response settings (see the module docstring)."""

    grid: int = 33
    refinements: int = 3
    max_sweeps: int = 30
    tolerance: float = 1e-4
    samples: int = 8  # episode keys averaged in stochastic envs (deterministic envs use 1)
    check_grid: int = 101  # grid of the unilateral-deviation check (max_gain)


# ----------------------------------------------------------------------------------------------
# objective: episode returns of a batch of parameter vectors
# ----------------------------------------------------------------------------------------------


def return_table(
    env: FunctionalEnv,
    params: Any,
    layers: tuple[RewardLayer, ...],
    family: Family,
    horizon: int,
    keys: Array,
    theta: Array,
) -> Array:
    """``[L + 1, n]``: mean episode return under each layer (rows 0..L−1) and payoff return (row L)."""
    state = family.state(env, params, theta)
    stats = jax.vmap(lambda key: episode_rollout(env, params, layers, family.policy, state, key, horizon))(keys)
    rewards = jnp.mean(stats.reward_returns, axis=0)
    payoffs = jnp.mean(stats.payoff_returns, axis=0)
    return jnp.concatenate([rewards, payoffs[None]], axis=0)


_SHARED_ENVS: dict[type, FunctionalEnv] = {}


def shared_env(env: FunctionalEnv) -> FunctionalEnv:
    """One instance per env class (envs are stateless), so jit caches keyed on the env are reused."""
    return _SHARED_ENVS.setdefault(type(env), env)


@functools.partial(jax.jit, static_argnames=("env", "layers", "family", "horizon", "settings"))
def _solve(env, params, layers, family, horizon, settings, keys, theta0, owner_weights, active):
    """Iterated grid best response; ``owner_weights[i]`` ([L+1, n]) weights the return table into agent i's objective.

    ``active`` ([P, n] bool) selects the coordinates that are optimised (the others stay at ``theta0``).
    """
    _, high = env.action_bounds(params)
    lower, upper = family.bounds(jnp.asarray(high, jnp.float32))
    n_params, n_agents = lower.shape

    def objectives(thetas: Array, weights: Array) -> Array:
        tables = jax.vmap(lambda th: return_table(env, params, layers, family, horizon, keys, th))(thetas)
        return jnp.einsum("bln,ln->b", tables, weights)

    def best_response(theta: Array, coordinate: Array) -> Array:
        agent, param = coordinate // n_params, coordinate % n_params
        weights = owner_weights[agent]
        low, high_ = lower[param, agent], upper[param, agent]
        current = theta[param, agent]
        current_value = objectives(theta[None], weights)[0]
        threshold = 1e-6 * jnp.abs(current_value) + 1e-6

        def refine(carry, _):
            a, b, best_x, best_value = carry
            candidates = jnp.linspace(a, b, settings.grid)
            values = objectives(jax.vmap(lambda c: theta.at[param, agent].set(c))(candidates), weights)
            k = jnp.argmax(values)
            better = values[k] > best_value + threshold
            best_x = jnp.where(better, candidates[k], best_x)
            best_value = jnp.where(better, values[k], best_value)
            step = (b - a) / (settings.grid - 1)
            return (jnp.maximum(low, best_x - step), jnp.minimum(high_, best_x + step), best_x, best_value), None

        (_, _, best_x, _), _ = jax.lax.scan(
            refine, (low, high_, current, current_value), None, length=settings.refinements + 1
        )
        best_x = jnp.where(active[param, agent], best_x, current)
        return theta.at[param, agent].set(best_x)

    span = jnp.maximum(upper - lower, 1e-12)

    def sweep(carry):
        theta, sweeps, _ = carry
        new_theta = jax.lax.fori_loop(0, n_params * n_agents, lambda c, th: best_response(th, c), theta)
        change = jnp.max(jnp.abs(new_theta - theta) / span)
        return new_theta, sweeps + 1, change

    def keep_going(carry):
        _, sweeps, change = carry
        return (sweeps < settings.max_sweeps) & (change > settings.tolerance)

    theta, sweeps, change = jax.lax.while_loop(keep_going, sweep, (theta0, jnp.int32(0), jnp.float32(jnp.inf)))
    table = return_table(env, params, layers, family, horizon, keys, theta)
    gains = unilateral_gains(env, params, layers, family, horizon, settings.check_grid, keys, theta, owner_weights)
    return theta, sweeps, change, table, gains


def unilateral_gains(env, params, layers, family, horizon, grid, keys, theta, owner_weights):
    """``[P, n]``: the best improvement of each owner's objective by moving one of its coordinates on a grid."""
    _, high = env.action_bounds(params)
    lower, upper = family.bounds(jnp.asarray(high, jnp.float32))
    n_params, n_agents = lower.shape

    def gain(coordinate):
        agent, param = coordinate // n_params, coordinate % n_params
        weights = owner_weights[agent]
        candidates = jnp.linspace(lower[param, agent], upper[param, agent], grid)
        thetas = jax.vmap(lambda c: theta.at[param, agent].set(c))(candidates)
        tables = jax.vmap(lambda th: return_table(env, params, layers, family, horizon, keys, th))(thetas)
        values = jnp.einsum("bln,ln->b", tables, weights)
        here = jnp.sum(return_table(env, params, layers, family, horizon, keys, theta) * weights)
        return jnp.max(values) - here

    gains = jax.lax.map(gain, jnp.arange(n_params * n_agents))
    return gains.reshape(n_agents, n_params).T


@functools.partial(jax.jit, static_argnames=("env", "layers", "horizon"))
def _tables_over_keys(env, params, layers, horizon, keys):
    family = ScheduleFamily(1)
    _, high = env.action_bounds(params)
    theta = 0.5 * jnp.asarray(high, jnp.float32)[None]
    return jax.vmap(lambda k: return_table(env, params, layers, family, horizon, k[None], theta))(keys)


_STOCHASTIC_CACHE: dict[tuple, bool] = {}


def is_stochastic(env: FunctionalEnv, params: Any, layers: tuple[RewardLayer, ...], horizon: int) -> bool:
    """Whether episode returns of a fixed open-loop policy depend on the episode key (e.g. SynergySearch's γ)."""
    cache_key = (type(env), _params_digest(params), layers, horizon)
    if cache_key not in _STOCHASTIC_CACHE:
        keys = jax.random.split(jax.random.PRNGKey(12345), 4)
        tables = np.asarray(_tables_over_keys(shared_env(env), params, layers, horizon, keys))
        _STOCHASTIC_CACHE[cache_key] = bool(np.max(np.abs(tables - tables[0])) > 1e-4 * (np.max(np.abs(tables)) + 1.0))
    return _STOCHASTIC_CACHE[cache_key]


# ----------------------------------------------------------------------------------------------
# results and the oracle policy
# ----------------------------------------------------------------------------------------------


@dataclasses.dataclass
class OracleResult:
    """A solved oracle: the policy, its parameters and how good an equilibrium/optimum it is.

    ``returns[i]`` is the value of agent i's objective (``R^L_i`` or ``Π_i``; for the total-payoff and
    common-level oracles every entry is the total). ``reward_returns[layer name]`` and ``payoff_returns``
    are the per-agent episode returns of the solved policy (on the solver's episode keys).
    ``max_gain`` is the ε of the ε-equilibrium: the largest improvement any owner gets by moving one of its
    own parameters on a ``check_grid`` grid (≤ 0 when no grid point beats the solution).
    """

    name: str
    objective: str
    policy: Policy
    policy_state: PolicyState
    theta: np.ndarray
    returns: np.ndarray
    reward_returns: dict[str, np.ndarray]
    payoff_returns: np.ndarray
    sweeps: int
    converged: bool
    max_gain: float

    @property
    def actions(self) -> np.ndarray:
        """The first-step joint action (schedules: the first block; reciprocal: the targets)."""
        return np.asarray(self.theta[0])


#: layers every solver call scores at once, so one compiled solver per (env, family) serves all of them
STANDARD_LAYERS: tuple[RewardLayer, ...] = tuple(
    reward_layer(name) for name in ("private", "integrated", "cooperative")
)


def layer_set(layer: RewardLayer) -> tuple[tuple[RewardLayer, ...], int]:
    """The static layer tuple the solver scores and the row of ``layer`` in it."""
    if layer in STANDARD_LAYERS:
        return STANDARD_LAYERS, STANDARD_LAYERS.index(layer)
    return STANDARD_LAYERS + (layer,), len(STANDARD_LAYERS)


def owner_weights(n_layers: int, n_agents: int, row: int, mode: str) -> jnp.ndarray:
    """``[n, L+1, n]``: ``own`` → agent i's entry of table row ``row``; ``total`` → the row's sum, for every i."""
    weights = np.zeros((n_agents, n_layers + 1, n_agents), np.float32)
    for i in range(n_agents):
        if mode == "own":
            weights[i, row, i] = 1.0
        else:
            weights[i, row, :] = 1.0
    return jnp.asarray(weights)


def memory_window(params: Any) -> int:
    """The env's reciprocity memory window (``memory_window`` / ``reciprocity_window`` / ``k``), else 5."""
    for name in ("memory_window", "reciprocity_window", "k"):
        if hasattr(params, name):
            try:
                return max(1, int(getattr(params, name)))
            except (TypeError, ValueError):
                continue
    return DEFAULT_MEMORY_WINDOW


def episode_keys(env: FunctionalEnv, params: Any, settings: SolverSettings) -> Array:
    """The solver's fixed episode keys: ``settings.samples`` for stochastic envs, one otherwise."""
    stochastic = is_stochastic(env, params, STANDARD_LAYERS, env.max_episode_steps(params))
    return jax.random.split(jax.random.PRNGKey(2024), settings.samples if stochastic else 1)


def solve_policy_game(
    env: FunctionalEnv,
    params: Any,
    layer: RewardLayer | None,
    family: Family,
    mode: str,
    theta0: Any,
    settings: SolverSettings = SolverSettings(),
    name: str = "custom",
    active: Any = None,
) -> OracleResult:
    """Iterated best response over ``family``: ``mode="own"`` → equilibrium, ``"total"`` → coordinate ascent.

    Objectives score returns under ``layer``, or payoff returns when ``layer`` is None.
    """
    env = shared_env(env)
    horizon = env.max_episode_steps(params)
    layers, row = layer_set(layer if layer is not None else STANDARD_LAYERS[0])
    row = row if layer is not None else len(layers)
    n = env.n_agents(params)
    weights = owner_weights(len(layers), n, row, mode)
    theta0 = jnp.asarray(theta0, jnp.float32)
    active = jnp.ones(theta0.shape, bool) if active is None else jnp.asarray(active, bool)
    keys = episode_keys(env, params, settings)
    theta, sweeps, change, table, gains = _solve(
        env, params, layers, family, horizon, settings, keys, theta0, weights, active
    )
    gains = np.where(np.asarray(active), np.asarray(gains), -np.inf)
    table = np.asarray(table)
    target = "payoff" if layer is None else layer.name
    objective = f"{'own' if mode == 'own' else 'total'} {target} return"
    returns = table[row] if mode == "own" else np.full(n, table[row].sum())
    return OracleResult(
        name=name,
        objective=objective,
        policy=family.policy,
        policy_state=family.state(env, params, theta),
        theta=np.asarray(theta),
        returns=returns,
        reward_returns={lay.name: table[k] for k, lay in enumerate(layers)},
        payoff_returns=table[-1],
        sweeps=int(sweeps),
        converged=bool(float(change) <= settings.tolerance),
        max_gain=float(np.max(gains)) if np.isfinite(gains).any() else 0.0,
    )


@functools.partial(jax.jit, static_argnames=("env", "layers", "horizon", "grid", "refinements"))
def _best_common_level(env, params, layers, horizon, grid, refinements, row, keys):
    """``argmax_c Σ_i table[row, i]`` with ``a_i = c·e_i`` (grid refinement on [0, 1])."""
    family = ScheduleFamily(1)
    _, high = env.action_bounds(params)
    high = jnp.asarray(high, jnp.float32)

    def totals(levels):
        tables = jax.vmap(lambda c: return_table(env, params, layers, family, horizon, keys, (c * high)[None]))(levels)
        return jnp.sum(tables[:, row], axis=-1)

    def refine(carry, _):
        a, b, best, best_value = carry
        levels = jnp.linspace(a, b, grid)
        values = totals(levels)
        k = jnp.argmax(values)
        better = values[k] > best_value
        best = jnp.where(better, levels[k], best)
        best_value = jnp.where(better, values[k], best_value)
        step = (b - a) / (grid - 1)
        return (jnp.maximum(0.0, best - step), jnp.minimum(1.0, best + step), best, best_value), None

    init = (jnp.float32(0.0), jnp.float32(1.0), jnp.float32(0.5), totals(jnp.float32(0.5)[None])[0])
    (_, _, best, best_value), _ = jax.lax.scan(refine, init, None, length=refinements + 1)
    return best, best_value


def best_common_level(
    env: FunctionalEnv, params: Any, layer: RewardLayer | None, settings: SolverSettings = SolverSettings()
) -> tuple[float, float]:
    """``c* = argmax_c Σ_i R^L_i(c·e)`` (``layer=None``: ``Σ_i Π_i``) on [0, 1], and that total."""
    env = shared_env(env)
    layers, row = layer_set(layer if layer is not None else STANDARD_LAYERS[0])
    row = row if layer is not None else len(layers)
    keys = episode_keys(env, params, settings)
    level, value = _best_common_level(
        env, params, layers, env.max_episode_steps(params), settings.grid, settings.refinements, row, keys
    )
    return float(level), float(value)


def solve_oracle(
    name: str,
    env: FunctionalEnv,
    params: Any,
    reward: str | RewardLayer = "integrated",
    settings: SolverSettings = SolverSettings(),
) -> OracleResult:
    """Solve oracle ``name`` (see the module docstring) for ``env``/``params`` under reward layer ``reward``.

    Results are cached per (oracle, env class, params, layer, settings); ``nash`` and ``social_optimum``
    do not depend on the layer and are solved once.
    """
    name = canonical_oracle_name(name)
    layer = reward_layer(reward)
    cache_key = (name, type(env), _params_digest(params), None if name in LAYER_FREE_ORACLES else layer, settings)
    if cache_key in _ORACLE_CACHE:
        return _ORACLE_CACHE[cache_key]
    high = np.asarray(base_state(env, params)["high"])
    start = 0.3 * high[None]  # the reference's start point 0.3·e (spec §1.8)
    if name == "equilibrium":
        result = solve_policy_game(env, params, layer, ScheduleFamily(1), "own", start, settings, name)
    elif name == "nash":
        result = solve_policy_game(env, params, None, ScheduleFamily(1), "own", start, settings, name)
    elif name == "trust_aware":
        stationary = solve_oracle("equilibrium", env, params, layer, settings)
        table = np.repeat(stationary.theta, 4, axis=0)
        result = solve_policy_game(env, params, layer, ScheduleFamily(4), "own", table, settings, name)
    elif name == "loyalty":
        level, _ = best_common_level(env, params, layer, settings)
        inactive = np.zeros((1, high.shape[0]), bool)  # one shared coordinate, optimised above: evaluate only
        result = solve_policy_game(
            env, params, layer, ScheduleFamily(1), "total", level * high[None], settings, name, inactive
        )
        result.objective = f"total {layer.name} return at a common level c·e, c* = {level:.4f}"
    elif name == "social_optimum":
        level, _ = best_common_level(env, params, None, settings)
        result = solve_policy_game(env, params, None, ScheduleFamily(1), "total", level * high[None], settings, name)
    else:
        family = ReciprocalFamily(1 if name == "reciprocity_equilibrium" else memory_window(params))
        level, _ = best_common_level(env, params, layer, settings)
        stationary = solve_oracle("equilibrium", env, params, layer, settings)
        starts = [
            np.stack([level * high, np.full_like(high, 0.5)]),  # cooperative norm, half reciprocal
            np.stack([stationary.theta[0], np.zeros_like(high)]),  # the stationary equilibrium
        ]
        candidates = [solve_policy_game(env, params, layer, family, "own", s, settings, name) for s in starts]
        # the most exact equilibrium (smallest ε); among equally exact ones (within 1e-4 of the returns) the richest
        scale = max(1.0, max(float(np.sum(np.abs(c.returns))) for c in candidates)) * 1e-4
        result = min(candidates, key=lambda c: (round(max(c.max_gain, 0.0) / scale), -float(np.sum(c.returns))))
    _ORACLE_CACHE[cache_key] = result
    return result


_ORACLE_CACHE: dict[tuple, OracleResult] = {}


def _params_digest(params: Any) -> str:
    leaves, treedef = jax.tree.flatten(params)
    digest = hashlib.sha1(str(treedef).encode())
    for leaf in leaves:
        digest.update(np.asarray(leaf).tobytes())
    return digest.hexdigest()


@dataclasses.dataclass(frozen=True)
class OraclePolicy(Policy):
    """A policy whose ``init`` solves oracle ``oracle`` under ``reward``; it then plays the solved policy."""

    oracle: str = "equilibrium"
    reward: str | RewardLayer = "integrated"
    settings: SolverSettings = SolverSettings()
    family_policy: Policy | None = dataclasses.field(default=None, compare=False)

    @property
    def name(self) -> str:
        return f"oracle:{canonical_oracle_name(self.oracle)}"

    def solve(self, env: FunctionalEnv, params: Any) -> OracleResult:
        return solve_oracle(self.oracle, env, params, self.reward, self.settings)

    def init(self, env: FunctionalEnv, params: Any) -> PolicyState:
        result = self.solve(env, params)
        object.__setattr__(self, "family_policy", result.policy)
        return result.policy_state

    def __call__(self, key, obs, state):
        if self.family_policy is None:
            raise RuntimeError("call init(env, params) before using an OraclePolicy")
        return self.family_policy(key, obs, state)


# ----------------------------------------------------------------------------------------------
# static one-shot stage game (spec §1.8, Appendix B)
# ----------------------------------------------------------------------------------------------


@dataclasses.dataclass
class StageEquilibrium:
    """Fixed point of the stage game: actions, payoffs π, utilities U (integrated), convergence."""

    kind: str
    actions: np.ndarray
    payoffs: np.ndarray
    utilities: np.ndarray
    converged: bool
    iterations: int

    @property
    def total_payoff(self) -> float:
        """``Σ_i π_i`` (Appendix B's "Σπ")."""
        return float(np.sum(self.payoffs))


@functools.partial(jax.jit, static_argnames=("value_form", "sweeps", "bisections"))
def _stage_fixed_point(
    endowments, alpha, theta, beta, gamma, weights, own, start, value_form, sweeps, bisections, tolerance
):
    """Gauss-Seidel best responses; agent i maximises ``own_i π_i + Σ_j weights_ij π_j`` (concave in a_i)."""
    n = endowments.shape[0]

    def payoffs(actions):
        return private_payoff(actions, endowments, alpha, theta, beta, gamma, value_form)

    def objective(actions, i):
        pays = payoffs(actions)
        return own * pays[i] + jnp.sum(weights[i] * pays)

    def best_response(actions, i):
        derivative = jax.grad(lambda a_i: objective(actions.at[i].set(a_i), i))

        def bisect(_, interval):
            low, high = interval
            mid = 0.5 * (low + high)
            rising = derivative(mid) > 0
            return jnp.where(rising, mid, low), jnp.where(rising, high, mid)

        low, high = jax.lax.fori_loop(0, bisections, bisect, (jnp.float32(0.0), endowments[i]))
        return actions.at[i].set(0.5 * (low + high))

    def sweep(carry):
        actions, iteration, _ = carry
        new = jax.lax.fori_loop(0, n, lambda i, a: best_response(a, i), actions)
        return new, iteration + 1, jnp.max(jnp.abs(new - actions))

    def keep_going(carry):
        _, iteration, change = carry
        return (iteration < sweeps) & (change >= tolerance)

    actions, iterations, change = jax.lax.while_loop(keep_going, sweep, (start, jnp.int32(0), jnp.float32(jnp.inf)))
    return actions, iterations, change, payoffs(actions)


def solve_stage_game(
    params: Any,
    kind: str = "coopetitive",
    trust: tuple[Any, Any] | None = None,
    initial_actions: Any = None,
    max_iterations: int = 100,
    tolerance: float = 1e-6,
) -> StageEquilibrium:
    """One-shot equilibrium of the TR-1 stage game (spec §1.8) for a coopetition params object.

    ``kind="nash"``: agent i maximises ``π_i``; ``"coopetitive"``: ``U_i = π_i + Σ_{j≠i} w_ij π_j`` with
    ``w = D`` or, given ``trust=(T, R)``, ``w = D ⊙ min(T, 1 − R)``. Gauss-Seidel best responses from
    ``0.3·e`` (each best response: bisection on ``∂U_i/∂a_i``, exact because ``U_i`` is concave in
    ``a_i``); at most ``max_iterations`` sweeps, stop when ``max |Δa| < tolerance``. World mechanics
    (reputation tiers, breach penalties) are not part of the stage game, as in the reference.
    """
    if kind not in ("nash", "coopetitive"):
        raise ValueError(f"kind must be 'nash' or 'coopetitive', got {kind!r}")
    endowments = jnp.asarray(params.endowments, jnp.float32)
    interdependence = jnp.asarray(params.interdependence, jnp.float32)
    if trust is not None:
        trust_matrix, reputation = (jnp.asarray(x, jnp.float32) for x in trust)
        interdependence = interdependence * jnp.minimum(trust_matrix, 1.0 - reputation)
    weights = interdependence if kind == "coopetitive" else jnp.zeros_like(interdependence)
    start = 0.3 * endowments if initial_actions is None else jnp.asarray(initial_actions, jnp.float32)
    actions, iterations, change, payoffs = _stage_fixed_point(
        endowments,
        jnp.asarray(params.alpha, jnp.float32),
        jnp.asarray(params.theta, jnp.float32),
        jnp.asarray(params.beta, jnp.float32),
        jnp.asarray(params.gamma, jnp.float32),
        weights * (1.0 - jnp.eye(endowments.shape[0])),
        jnp.float32(1.0),
        start,
        params.value_form,
        int(max_iterations),
        48,
        jnp.float32(tolerance),
    )
    payoffs = np.asarray(payoffs, np.float64)
    utilities = payoffs + np.asarray(interdependence, np.float64) @ payoffs
    return StageEquilibrium(
        kind, np.asarray(actions, np.float64), payoffs, utilities, bool(float(change) < tolerance), int(iterations)
    )
