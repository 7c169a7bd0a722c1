"""Batched evaluation of reference policies and oracles (``motivegym eval``).

``evaluate(env_id, policy, reward, episodes, seed)`` rolls ``episodes`` independent episodes in one
jitted program (``vmap`` over episode keys of a ``lax.scan`` over steps) and reports, averaged over
episodes:

* per-agent returns under the reward layer ``R_i = Σ_t r_i,t`` and payoff returns ``Π_i = Σ_t π_i,t``;
* the summed return ``R = Σ_i R_i`` (the reference's episode return, spec §2.6) and welfare ``Σ_i Π_i``;
* cooperation rate ``mean_t mean_i a_i,t/e_i`` and ``info["mean_trust"]`` after the last step;
* the social outcome metrics of Perolat et al. (2017) on payoffs (``motivegym.core.social_metrics``):
  efficiency ``Σ_i Π_i / T``, equality ``1 − Gini(Π)``, sustainability (mean time of positive payoffs)
  and peace (agents not tagged out per step; ``n`` for envs without tagging);
* scores on **payoffs**, comparable across reward layers, against the env's dilemma-strength constants
  (``motivegym.envs.strength``): the normalised score ``(W − W_random)/(W_opt − W_random)`` (0 = random
  play, 1 = the social optimum) and ``Gap% = (W − W_opt)/|W_opt|·100``, the welfare gap to the optimum;
* equilibrium-relative, for the coopetition envs: ``(R − R_oracle)/|R_oracle|·100``, the layer's own
  return against the env's reference oracle (``get_spec(env_id).reference_oracle``) solved for the same
  reward layer and evaluated on the same episode keys. The oracle is an equilibrium of that layer's game,
  not an optimum, so this column can be positive and is not comparable across reward layers.

Policy names: ``constant:<level>`` (fraction of each agent's own endowment), ``random``, ``titfortat``
(``titfortat:relative``), ``oracle:<name>`` with ``<name>`` one of ``motivegym.baselines.oracles.ORACLE_NAMES``,
``checkpoint:<path>``: the greedy policy of a trained baseline's checkpoint (``docs/checkpoints.md``; the env
and its params must be the ones it was trained on).
"""

from __future__ import annotations

import dataclasses
import functools
import sys
from typing import Any

import jax
import numpy as np

from motivegym.baselines.oracles import ORACLE_NAMES, OraclePolicy, canonical_oracle_name, shared_env, solve_oracle
from motivegym.baselines.policies import Constant, EpisodeStats, Policy, PolicyState, Random, TitForTat, episode_rollout
from motivegym.core.env import FunctionalEnv
from motivegym.core.registry import get_spec, make_jax
from motivegym.core.social_metrics import SOCIAL_METRICS, SocialTotals, outcomes_from_totals
from motivegym.envs.strength import dilemma_strength, normalized_score
from motivegym.reward_layers import RewardLayer, reward_layer

POLICY_NAMES = ("constant:<level>", "random", "titfortat", "titfortat:relative") + tuple(
    f"oracle:{n}" for n in ORACLE_NAMES
) + ("checkpoint:<path>",)


def make_policy(name: str | Policy, reward: str | RewardLayer = "integrated") -> Policy:
    """A policy from its name (see the module docstring); oracles are solved for ``reward``."""
    if isinstance(name, Policy):
        return name
    kind, _, argument = name.strip().partition(":")
    kind = kind.lower()
    if kind == "constant":
        try:
            return Constant(float(argument))
        except ValueError:
            raise ValueError(f"constant policy needs a level in [0, 1], e.g. 'constant:0.5', got {name!r}") from None
    if kind == "random" and not argument:
        return Random()
    if kind in ("titfortat", "tft") and argument in ("", "relative"):
        return TitForTat(relative=argument == "relative")
    if kind == "oracle":
        return OraclePolicy(canonical_oracle_name(argument), reward)
    if kind == "checkpoint":
        from motivegym.baselines.checkpoint import CheckpointPolicy

        if not argument:
            raise ValueError(f"a checkpoint policy needs a file, e.g. 'checkpoint:runs/train/checkpoints/seed0.safetensors', got {name!r}")
        return CheckpointPolicy(argument)
    raise ValueError(f"unknown policy {name!r}; valid policies: {', '.join(POLICY_NAMES)}")


def resolve_policy(policy: Policy, env: FunctionalEnv, params: Any) -> tuple[Policy, PolicyState]:
    """``(policy to roll out, its state)``; an oracle is solved and replaced by the policy it found."""
    if isinstance(policy, OraclePolicy):
        result = policy.solve(env, params)
        return result.policy, result.policy_state
    return policy, policy.init(env, params)


@functools.partial(jax.jit, static_argnames=("env", "layers", "policy", "horizon", "batched_states"))
def rollout_batch(
    env: FunctionalEnv,
    params: Any,
    layers: tuple[RewardLayer, ...],
    policy: Policy,
    horizon: int,
    policy_state: PolicyState,
    keys: jax.Array,
    batched_states: bool = False,
) -> EpisodeStats:
    """Episode stats ``[episodes]`` (or ``[states, episodes]`` with ``batched_states``): one compiled call."""

    def over_keys(state):
        return jax.vmap(lambda key: episode_rollout(env, params, layers, policy, state, key, horizon))(keys)

    return jax.vmap(over_keys)(policy_state) if batched_states else over_keys(policy_state)


def episode_keys(seed: int, episodes: int) -> jax.Array:
    """The evaluation's episode keys (the same for every policy, so comparisons use common random numbers)."""
    if episodes < 1:
        raise ValueError(f"episodes must be >= 1, got {episodes}")
    return jax.random.split(jax.random.PRNGKey(seed), episodes)


@dataclasses.dataclass
class EvalResult:
    """Averages over ``episodes`` (see the module docstring for the definitions)."""

    env_id: str
    policy: str
    reward: str
    episodes: int
    seed: int
    agent_names: tuple[str, ...]
    reward_returns: np.ndarray  # [n] mean Σ_t r_i,t
    payoff_returns: np.ndarray  # [n] mean Σ_t π_i,t
    total_return: float  # mean Σ_i Σ_t r_i,t
    total_return_std: float  # std over episodes
    welfare: float  # mean Σ_i Σ_t π_i,t
    cooperation_rate: float  # mean_t mean_i a_i/e_i
    final_trust: float  # info["mean_trust"] after the last step (NaN if the env has none)
    episode_length: float
    efficiency: float  # Perolat et al. (2017) social outcome metrics, episode means (NaN episodes skipped)
    equality: float
    sustainability: float
    peace: float
    normalized_score: float = float("nan")  # (W − W_random)/(W_opt − W_random), dilemma-strength constants
    gap_percent: float = float("nan")  # (W − W_opt)/|W_opt|·100: welfare gap to the social optimum
    reference_oracle: str | None = None
    oracle_return: float | None = None  # the reference oracle's summed return under the same layer (an equilibrium)
    return_vs_oracle_percent: float | None = None  # (R − R_oracle)/|R_oracle|·100

    def as_dict(self) -> dict:
        out = dataclasses.asdict(self)
        out["reward_returns"] = self.reward_returns.tolist()
        out["payoff_returns"] = self.payoff_returns.tolist()
        return out


def summarize(stats: EpisodeStats, layer_row: int = 0) -> dict[str, Any]:
    """Episode-averaged metrics of ``stats`` (leading axis: episodes) for reward layer ``layer_row``."""
    rewards = np.asarray(stats.reward_returns, np.float64)[:, layer_row]  # [E, n]
    length = np.asarray(stats.length, np.float64)
    totals = rewards.sum(axis=-1)
    return {
        "reward_returns": rewards.mean(axis=0),
        "payoff_returns": np.asarray(stats.payoff_returns, np.float64).mean(axis=0),
        "total_return": float(totals.mean()),
        "total_return_std": float(totals.std()),
        "welfare": float(np.asarray(stats.payoff_returns, np.float64).sum(axis=-1).mean()),
        "cooperation_rate": float(np.mean(np.asarray(stats.cooperation_sum) / np.maximum(length, 1.0))),
        "final_trust": float(np.mean(np.asarray(stats.final_trust))),
        "episode_length": float(length.mean()),
        **social_summary(stats.social),
    }


def social_summary(totals: SocialTotals) -> dict[str, float]:
    """Episode means of the four social outcome metrics (leading axis: episodes; NaN episodes skipped)."""
    outcomes = jax.vmap(outcomes_from_totals)(totals)
    return {name: nan_mean(outcomes[name]) for name in SOCIAL_METRICS}


def nan_mean(values: Any) -> float:
    values = np.asarray(values, np.float64)
    finite = values[np.isfinite(values)]
    return float(finite.mean()) if finite.size else float("nan")


def percent_difference(value: float, reference: float) -> float:
    """``(value − reference)/|reference|·100`` (NaN when ``reference = 0``)."""
    return float("nan") if reference == 0 else (value - reference) / abs(reference) * 100.0


def evaluate(
    env_id: str,
    policy: str | Policy,
    reward: str | RewardLayer = "integrated",
    episodes: int = 32,
    seed: int = 0,
    compare_to_oracle: bool = True,
    **env_kwargs: Any,
) -> EvalResult:
    """Evaluate ``policy`` on ``env_id`` under ``reward`` over ``episodes`` episodes (one jitted, vmapped call)."""
    spec = get_spec(env_id)
    env, params = make_jax(spec.id, **env_kwargs)
    env = shared_env(env)
    layer = reward_layer(reward)
    policy_object = make_policy(policy, layer)
    rollout_policy, policy_state = resolve_policy(policy_object, env, params)
    keys = episode_keys(seed, episodes)
    stats = rollout_batch(env, params, (layer,), rollout_policy, env.max_episode_steps(params), policy_state, keys)
    metrics = summarize(stats)
    result = EvalResult(
        env_id=spec.id,
        policy=policy_object.name,
        reward=layer.name,
        episodes=episodes,
        seed=seed,
        agent_names=tuple(env.agent_names(params)),
        **metrics,
    )
    if not env_kwargs:  # the dilemma-strength constants hold for the default parameters only
        strength = dilemma_strength(spec.id)
        result.normalized_score = float(normalized_score(spec.id, result.welfare))
        result.gap_percent = percent_difference(result.welfare, strength.optimum)
    if compare_to_oracle and spec.reference_oracle:
        oracle = canonical_oracle_name(spec.reference_oracle)
        result.reference_oracle = oracle
        if policy_object.name == f"oracle:{oracle}":
            result.oracle_return = result.total_return
        else:
            solved = solve_oracle(oracle, env, params, layer)
            oracle_stats = rollout_batch(
                env, params, (layer,), solved.policy, env.max_episode_steps(params), solved.policy_state, keys
            )
            result.oracle_return = summarize(oracle_stats)["total_return"]
        result.return_vs_oracle_percent = percent_difference(result.total_return, result.oracle_return)
    return result


def format_result(result: EvalResult) -> str:
    """A readable table of one evaluation."""
    header = f"{result.env_id} | policy {result.policy} | reward {result.reward} | "
    header += f"{result.episodes} episode(s), seed {result.seed}"
    width = max(12, max(len(name) for name in result.agent_names))
    lines = [header, "", f"{'agent':<{width}}  {'reward return':>14}  {'payoff return':>14}"]
    for name, r, p in zip(result.agent_names, result.reward_returns, result.payoff_returns):
        lines.append(f"{name:<{width}}  {r:14.2f}  {p:14.2f}")
    lines.append(f"{'sum':<{width}}  {result.total_return:14.2f}  {result.welfare:14.2f}")
    lines.append("")
    rows = [
        ("summed return (mean ± std)", f"{result.total_return:.2f} ± {result.total_return_std:.2f}"),
        ("welfare (sum of payoffs)", f"{result.welfare:.2f}"),
        ("cooperation rate", "n/a" if np.isnan(result.cooperation_rate) else f"{100 * result.cooperation_rate:.1f}%"),
        ("mean trust at end", "n/a" if np.isnan(result.final_trust) else f"{result.final_trust:.3f}"),
        ("episode length", f"{result.episode_length:.1f}"),
        ("efficiency (welfare per step)", f"{result.efficiency:.3f}"),
        ("equality (1 − Gini)", f"{result.equality:.3f}"),
        ("sustainability (mean reward time)", f"{result.sustainability:.1f}"),
        ("peace (agents present per step)", f"{result.peace:.2f}"),
    ]
    if not np.isnan(result.normalized_score):
        rows.append(("normalised score (0 random, 1 optimum)", f"{result.normalized_score:.3f}"))
        rows.append(("Gap% (welfare vs social optimum)", f"{result.gap_percent:+.2f}%"))
    if result.reference_oracle is not None:
        rows.append((f"reference oracle ({result.reference_oracle}) return", f"{result.oracle_return:.2f}"))
        rows.append(("return vs that equilibrium (same layer)", f"{result.return_vs_oracle_percent:+.2f}%"))
    label_width = max(len(label) for label, _ in rows)
    lines.extend(f"{label:<{label_width}}  {value}" for label, value in rows)
    return "\n".join(lines)


def checkpoint_env(policy: str) -> tuple[str, dict[str, Any]]:
    """The env id and ``make_jax`` keywords a ``checkpoint:PATH`` policy was trained on (from its metadata)."""
    from motivegym.baselines.checkpoint import read_metadata

    metadata = read_metadata(policy.removeprefix("checkpoint:"))
    return metadata["env_id"], dict(metadata.get("env_kwargs") or {})


def eval_cli(env_id: str, policy: str | None, reward: str, episodes: int, seed: int) -> int:
    """``motivegym eval ENV POLICY`` or ``motivegym eval checkpoint:PATH`` (the env and its keywords are the
    checkpoint's): print the evaluation table; returns the exit status (2 on a bad argument)."""
    try:
        env_kwargs: dict[str, Any] = {}
        if policy is None:
            if not env_id.startswith("checkpoint:"):
                raise ValueError(f"missing POLICY after {env_id!r}; only a checkpoint:PATH policy may stand alone")
            policy = env_id
            env_id, env_kwargs = checkpoint_env(policy)
        result = evaluate(env_id, policy, reward=reward, episodes=episodes, seed=seed, **env_kwargs)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(format_result(result))
    return 0
