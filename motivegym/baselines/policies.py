"""Reference policies as pure JAX functions, plus the batched episode rollout they are scored with.

A policy is a frozen (hashable) dataclass with

* ``init(env, params) -> policy_state``: a pytree holding everything the policy needs, including its
  parameters (a constant level, a schedule table …), so a batch of policies of one kind is one vmap;
* ``__call__(key, obs, policy_state) -> (actions [n_agents], policy_state)``: jit/vmap-safe.

Scope: the coopetition family (continuous actions, agent i acts in ``[0, e_i]``, where ``e_i`` is the
upper action bound of ``env.action_bounds``). Policies are *joint*: one call emits every agent's action.

**Previous actions come from the policy state, not from the observation.** Every policy records in
``policy_state["last_actions"]`` the joint action it emitted, clipped to the action bounds, which is
exactly what a coopetition env executes (the env clips to ``[0, e_i]`` too). This works with every
observation preset (``minimal`` carries no partner actions) and every env of the family. When a policy
controls only some agents, overwrite the record with the executed actions (``record_actions``).

Policies:

* ``Constant(level)``: ``a_i = level · e_i``, a fraction of each agent's **own** endowment.
  Deviation: the reference's ``Constant_XX`` returns ``level · max_j e_j`` and lets the env clip
  (spec §2.7), so in heterogeneous envs its ``Constant_50`` is not 50% of every agent's endowment.
  ``CONSTANT_LEVELS`` are the 101 levels 0.00 … 1.00.
* ``Random()``: ``a_i ~ U(0, e_i)``.
* ``TitForTat()``: ``a_i,0 = 0.5·e_i``; then ``a_i,t = clip(mean_{j≠i} a_j,t−1, 0, e_i)`` (raw units);
  ``relative=True`` copies the partners' mean cooperation *rate*: ``a_i,t = e_i · mean_{j≠i} a_j,t−1/e_j``.
  (The reference copies agent ``(i+1) mod n`` only, spec §2.7.)
* ``Schedule(blocks)``: open-loop, piecewise constant: ``a_t = table[min(⌊t·K/H⌋, K−1)]`` (K blocks over
  the horizon H); ``blocks=1`` is a per-agent constant. Used by the equilibrium oracles.
* ``Reciprocal(window)``: ``a_i,0 = x_i``; ``a_i,t = clip((1 − w_i)·x_i + w_i·e_i·c̄_−i,t, 0, e_i)`` with
  ``c̄_−i,t`` the partners' mean cooperation rate ``a_j/e_j`` over the last ``min(t, window)`` steps.
  ``w_i = 0`` is a constant, ``w_i = 1`` rate-matching tit-for-tat. Used by the reciprocity oracles.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from motivegym.core.env import FunctionalEnv, Transition
from motivegym.core.pytree import pytree_dataclass
from motivegym.core.social_metrics import SocialTotals, add_step, empty_totals
from motivegym.reward_layers import LayerSpec, RewardLayer

Array = jax.Array
PolicyState = dict[str, Any]

#: the 101 constant levels 0.00, 0.01, …, 1.00 (fractions of each agent's own endowment)
CONSTANT_LEVELS = np.round(np.linspace(0.0, 1.0, 101), 2)


def check_continuous(env: FunctionalEnv) -> None:
    """The reference policies act in ``[0, e_i]``: only continuous-action envs are supported."""
    if env.action_kind != "continuous":
        raise ValueError(f"{env.name}: reference policies need continuous actions, got action_kind={env.action_kind!r}")


def base_state(env: FunctionalEnv, params: Any) -> PolicyState:
    """State every policy carries: action bounds, the last emitted (clipped) joint action and the step count."""
    check_continuous(env)
    low, high = env.action_bounds(params)
    low, high = jnp.asarray(low, jnp.float32), jnp.asarray(high, jnp.float32)
    return {"low": low, "high": high, "last_actions": jnp.zeros_like(high), "t": jnp.int32(0)}


def record_actions(state: PolicyState, actions: Array) -> PolicyState:
    """Clip ``actions`` to the bounds, store them as ``last_actions`` and advance ``t``."""
    clipped = jnp.clip(actions, state["low"], state["high"])
    return {**state, "last_actions": clipped, "t": state["t"] + 1}


def partner_mean(values: Array) -> Array:
    """``mean_{j≠i} values_j`` for every i (``values`` has agents on the last axis)."""
    n = values.shape[-1]
    total = jnp.sum(values, axis=-1, keepdims=True)
    return (total - values) / max(n - 1, 1)


class Policy:
    """Base class of the reference policies (subclasses are frozen dataclasses)."""

    @property
    def name(self) -> str:  # pragma: no cover - overridden
        return type(self).__name__.lower()

    def init(self, env: FunctionalEnv, params: Any) -> PolicyState:
        return base_state(env, params)

    def __call__(self, key: Array, obs: Array, state: PolicyState) -> tuple[Array, PolicyState]:  # pragma: no cover
        raise NotImplementedError


@dataclasses.dataclass(frozen=True)
class Constant(Policy):
    """``a_i = level · e_i`` every step (level ∈ [0, 1], a fraction of each agent's own endowment)."""

    level: float = 0.5

    def __post_init__(self):
        if not 0.0 <= float(self.level) <= 1.0:
            raise ValueError(f"constant level must be in [0, 1], got {self.level}")

    @property
    def name(self) -> str:
        return f"constant:{float(self.level):.2f}"

    def init(self, env: FunctionalEnv, params: Any) -> PolicyState:
        return {**base_state(env, params), "level": jnp.float32(self.level)}

    def __call__(self, key, obs, state):
        actions = state["level"] * state["high"]
        return actions, record_actions(state, actions)


def constant_states(env: FunctionalEnv, params: Any, levels: Sequence[float] = CONSTANT_LEVELS) -> PolicyState:
    """Stacked ``Constant`` states, one per level (leading axis), for a single vmapped evaluation."""
    states = [Constant(float(level)).init(env, params) for level in levels]
    return jax.tree.map(lambda *leaves: jnp.stack(leaves), *states)


@dataclasses.dataclass(frozen=True)
class Random(Policy):
    """``a_i ~ U(low_i, high_i)`` independently every step; uniform over the actions in discrete envs."""

    @property
    def name(self) -> str:
        return "random"

    def init(self, env: FunctionalEnv, params: Any) -> PolicyState:
        if env.action_kind == "discrete":
            return {"num_actions": jnp.int32(env.num_actions(params)), "n_agents": jnp.zeros(env.n_agents(params), jnp.int32)}
        return base_state(env, params)

    def __call__(self, key, obs, state):
        if "num_actions" in state:
            return jax.random.randint(key, state["n_agents"].shape, 0, state["num_actions"]), state
        actions = jax.random.uniform(key, state["high"].shape, jnp.float32, state["low"], state["high"])
        return actions, record_actions(state, actions)


@dataclasses.dataclass(frozen=True)
class TitForTat(Policy):
    """``0.5·e_i`` first; then the mean of the partners' previous actions (raw units, or rates if ``relative``)."""

    relative: bool = False

    @property
    def name(self) -> str:
        return "titfortat:relative" if self.relative else "titfortat"

    def __call__(self, key, obs, state):
        high, previous = state["high"], state["last_actions"]
        if self.relative:
            copied = high * partner_mean(previous / high)
        else:
            copied = partner_mean(previous)
        actions = jnp.where(state["t"] == 0, 0.5 * high, jnp.clip(copied, state["low"], high))
        return actions, record_actions(state, actions)


@dataclasses.dataclass(frozen=True)
class Schedule(Policy):
    """Open-loop piecewise-constant actions: block ``k = min(⌊t·K/H⌋, K−1)`` plays ``table[k]``."""

    blocks: int = 1

    @property
    def name(self) -> str:
        return f"schedule:{self.blocks}"

    def init(self, env: FunctionalEnv, params: Any, table: Any = None) -> PolicyState:
        state = base_state(env, params)
        if table is None:
            table = jnp.broadcast_to(0.5 * state["high"], (self.blocks,) + state["high"].shape)
        table = jnp.asarray(table, jnp.float32)
        if table.shape != (self.blocks,) + state["high"].shape:
            raise ValueError(
                f"schedule table must have shape {(self.blocks,) + state['high'].shape}, got {table.shape}"
            )
        return {**state, "table": table, "horizon": jnp.asarray(params.max_steps, jnp.int32)}

    def __call__(self, key, obs, state):
        block = jnp.minimum(state["t"] * self.blocks // jnp.maximum(state["horizon"], 1), self.blocks - 1)
        actions = state["table"][block]
        return actions, record_actions(state, actions)


@dataclasses.dataclass(frozen=True)
class Reciprocal(Policy):
    """``a_i = (1 − w_i) x_i + w_i e_i c̄_−i`` with c̄ the partners' mean rate over the last ``window`` steps."""

    window: int = 1

    def __post_init__(self):
        if int(self.window) < 1:
            raise ValueError(f"window must be >= 1, got {self.window}")

    @property
    def name(self) -> str:
        return f"reciprocal:{self.window}"

    def init(self, env: FunctionalEnv, params: Any, target: Any = None, weight: Any = None) -> PolicyState:
        state = base_state(env, params)
        high = state["high"]
        target = 0.5 * high if target is None else jnp.asarray(target, jnp.float32)
        weight = jnp.zeros_like(high) if weight is None else jnp.asarray(weight, jnp.float32)
        history = jnp.zeros((self.window,) + high.shape, jnp.float32)
        return {**state, "target": target, "weight": weight, "rate_history": history}

    def __call__(self, key, obs, state):
        high, t = state["high"], state["t"]
        filled = jnp.minimum(t, self.window)
        slot_used = jnp.arange(self.window) < filled
        mean_rates = jnp.sum(jnp.where(slot_used[:, None], state["rate_history"], 0.0), axis=0) / jnp.maximum(filled, 1)
        reciprocated = (1.0 - state["weight"]) * state["target"] + state["weight"] * high * partner_mean(mean_rates)
        actions = jnp.where(t == 0, state["target"], jnp.clip(reciprocated, state["low"], high))
        new_state = record_actions(state, actions)
        rates = new_state["last_actions"] / high
        new_state["rate_history"] = state["rate_history"].at[t % self.window].set(rates)
        return actions, new_state


@dataclasses.dataclass(frozen=True)
class Mixed(Policy):
    """A population of two joint policies: slots with ``state["focal"][i]`` act by ``focal``, the others by
    ``background`` (both see the full observation and emit every agent's action; each slot keeps its own).

    Its state is ``{"focal": bool [n], "focal_state", "background_state"}`` (:meth:`init_states`). A policy that
    records its previous joint action (``last_actions``, the coopetition reference policies) gets the
    executed joint action written back, so a tit-for-tat background reacts to what the focal agents did.
    """

    focal: Policy
    background: Policy

    @property
    def name(self) -> str:
        return f"{self.focal.name} among {self.background.name}"

    def init(self, env: FunctionalEnv, params: Any) -> PolicyState:
        raise TypeError("Mixed needs its focal slots: use init_states(focal_mask, focal_state, background_state)")

    @staticmethod
    def init_states(focal_mask: Any, focal_state: PolicyState, background_state: PolicyState) -> PolicyState:
        return {"focal": jnp.asarray(focal_mask, bool), "focal_state": focal_state, "background_state": background_state}

    def __call__(self, key, obs, state):
        focal_key, background_key = jax.random.split(key)
        focal_actions, focal_state = self.focal(focal_key, obs, state["focal_state"])
        background_actions, background_state = self.background(background_key, obs, state["background_state"])
        mask = state["focal"].reshape(state["focal"].shape + (1,) * (focal_actions.ndim - 1))
        actions = jnp.where(mask, focal_actions, background_actions)
        return actions, {
            "focal": state["focal"],
            "focal_state": executed_record(focal_state, actions),
            "background_state": executed_record(background_state, actions),
        }


def executed_record(state: PolicyState, actions: Array) -> PolicyState:
    """``state`` with ``last_actions`` (if it keeps one) replaced by the executed joint action, clipped to the bounds."""
    if not isinstance(state, dict) or "last_actions" not in state:
        return state
    executed = jnp.clip(actions, state["low"], state["high"]) if "low" in state else actions
    return {**state, "last_actions": executed.astype(state["last_actions"].dtype)}


@dataclasses.dataclass(frozen=True)
class LearnedPolicy(Policy):
    """A trained learner's greedy policy (``learner.greedy_actions``: Beta mean / argmax) as a policy callable.

    Its state is ``{"networks", "obs_stats"}`` of the learner's runner (one run, or batched for a vmap);
    the actions are in the action space of ``learner.env`` (bin indices for a ``DiscretizedActions`` env).
    """

    learner: Any

    @property
    def name(self) -> str:
        return "learned"

    def __call__(self, key, obs, state):
        return self.learner.greedy_actions(state, obs), state


# ----------------------------------------------------------------------------------------------
# episode rollout (one episode; vmap it over keys and/or policy states)
# ----------------------------------------------------------------------------------------------


@pytree_dataclass
class EpisodeStats:
    """Totals of one episode (accumulated only while the episode is running).

    ``reward_returns[l, i] = Σ_t r^l_{i,t}`` for every layer l; ``cooperation_sum = Σ_t`` the step cooperation
    of :func:`cooperation_measure`; ``final_trust`` is ``info["mean_trust"]`` after the last step (NaN if the
    env has none); ``social`` holds the running sums of the social outcome metrics (payoffs, and
    ``info["removed"]`` where the env reports it), which also give ``payoff_returns[i] = Σ_t π_{i,t}`` and
    ``length``, the number of steps before ``done``.
    """

    reward_returns: Array
    cooperation_sum: Array
    final_trust: Array
    social: SocialTotals

    @property
    def payoff_returns(self) -> Array:
        return self.social.returns

    @property
    def length(self) -> Array:
        return self.social.length


def cooperation_measure(env: FunctionalEnv, params: Any):
    """``(actions, info) -> cooperation`` of one step: the env's ``info["cooperation_rate"]`` when it
    reports one, else ``mean_i clip(a_i, 0, e_i)/e_i`` for continuous envs, else NaN."""
    if "cooperation_rate" in jax.eval_shape(lambda: env.describe(env.reset(jax.random.PRNGKey(0), params)[0], params)):
        return lambda actions, info: jnp.asarray(info["cooperation_rate"], jnp.float32)
    if env.action_kind == "continuous":
        high = jnp.asarray(env.action_bounds(params)[1], jnp.float32)
        return lambda actions, info: jnp.mean(jnp.clip(actions, 0.0, high) / high)
    return lambda actions, info: jnp.float32(jnp.nan)


def episode_rollout(
    env: FunctionalEnv,
    params: Any,
    layers: tuple[RewardLayer, ...],
    policy: Policy,
    policy_state: PolicyState,
    key: Array,
    horizon: int,
) -> EpisodeStats:
    """Roll one episode of at most ``horizon`` steps (``jax.lax.scan``); every layer sees the same transitions.

    Steps after ``done`` are still computed (fixed-length scan) but masked out of every total.
    """
    n = env.n_agents(params)
    spec = LayerSpec.of(env, params)
    reset_key, layer_key, scan_key = jax.random.split(key, 3)
    state, obs = env.reset(reset_key, params)
    layer_states = tuple(
        layer.init(k, spec) for layer, k in zip(layers, jax.random.split(layer_key, max(len(layers), 1)))
    )
    initial_trust = jnp.asarray(env.describe(state, params).get("mean_trust", jnp.nan), jnp.float32)
    cooperation_of = cooperation_measure(env, params)
    totals = EpisodeStats(
        reward_returns=jnp.zeros((len(layers), n), jnp.float32),
        cooperation_sum=jnp.float32(0.0),
        final_trust=initial_trust,
        social=empty_totals(n),
    )

    def body(carry, step_key):
        state, obs, layer_states, policy_state, alive, totals = carry
        policy_key, env_key = jax.random.split(step_key)
        actions, policy_state = policy(policy_key, obs, policy_state)
        next_state, next_obs, payoffs, done, info = env.step(env_key, state, actions, params)
        transition = Transition(obs, actions, payoffs, next_obs, info["terminated"], info["truncated"], info)
        new_layer_states, rewards = [], []
        for layer, layer_state in zip(layers, layer_states):
            layer_state, layer_rewards, _ = layer.apply(layer_state, transition)
            new_layer_states.append(layer_state)
            rewards.append(layer_rewards)
        live = alive.astype(jnp.float32)
        reward_stack = jnp.stack(rewards) if rewards else jnp.zeros((0, n), jnp.float32)
        totals = EpisodeStats(
            reward_returns=totals.reward_returns + live * reward_stack,
            cooperation_sum=totals.cooperation_sum + live * cooperation_of(actions, info),
            final_trust=jnp.where(alive, jnp.asarray(info.get("mean_trust", jnp.nan), jnp.float32), totals.final_trust),
            social=add_step(totals.social, payoffs, info.get("removed", jnp.zeros((n,), bool)), live),
        )
        layer_states = jax.tree.map(lambda new, old: jnp.where(alive, new, old), tuple(new_layer_states), layer_states)
        return (next_state, next_obs, layer_states, policy_state, alive & ~done, totals), None

    carry = (state, obs, layer_states, policy_state, jnp.bool_(True), totals)
    (*_, totals), _ = jax.lax.scan(body, carry, jax.random.split(scan_key, horizon))
    return totals
