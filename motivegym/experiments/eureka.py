"""Eureka (Ma et al. 2023): the LLM writes reward code, each candidate is trained briefly, the best
candidates' training statistics go into the next prompt ("reward reflection").

Candidates are checked, sandboxed and validated by :mod:`motivegym.reward_layers.llm.reward_code`
(a rejected one keeps its error and status ``unsafe``/``invalid``); training lives here, in
``experiments``, because reward layers never train (DESIGN "Layering"). ``motivegym llm evolve`` runs
:func:`evolve` with :func:`ippo_trainer`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import jax
import numpy as np

from motivegym.baselines.ppo import MultiAgentPPO, PPOConfig, episode_payoffs
from motivegym.core.env import Transition
from motivegym.reward_layers.base import RewardLayer
from motivegym.reward_layers.llm.reward_code import (
    ALLOWED_JNP,
    RewardCodeError,
    UnsafeRewardCodeError,
    extract_code,
    sample_transitions,
    validate_reward_code,
)

EUREKA_SYSTEM = "You write reward functions for multi-agent reinforcement learning. Answer with one Python code block."
EUREKA_TEMPLATE = """Environment: {env_name}
{env_doc}

Write a reward function for every agent at once, in this exact form:

```python
def reward(obs, actions, payoffs, next_obs, info):
    ...
    return <array of shape [{n_agents}]>
```

Fields (JAX arrays, one row per agent; agents: {agents}):
- obs, next_obs: float32 [{n_agents}, {obs_size}] (observation before / after the step)
- actions: [{n_agents}]  (the joint action)
- payoffs: float32 [{n_agents}]  (what the world paid this step)
- info["<key>"]: step information after the step; keys and shapes: {info_keys}

Rules: only arithmetic, comparisons, indexing of these arrays, local variables and calls jnp.<f>(...) with f in:
{allowed}. No imports, loops, if statements, attribute access or other functions (use jnp.where).

Objective: {objective}
{feedback}"""


def describe_fields(env, params) -> dict[str, Any]:
    """Facts about the env the Eureka prompt states (names, shapes, info keys)."""
    transitions = sample_transitions(env, params)
    info_keys = ", ".join(f"{k} {list(np.shape(v))[1:]}" for k, v in transitions.info.items())
    doc = (type(env).__doc__ or "").strip()
    return {
        "env_name": env.name,
        "env_doc": doc,
        "n_agents": env.n_agents(params),
        "obs_size": env.observation_size(params),
        "agents": ", ".join(env.agent_names(params)),
        "info_keys": info_keys,
        "allowed": ", ".join(sorted(ALLOWED_JNP)),
    }


def feedback_text(history: list[dict[str, Any]], top: int = 3) -> str:
    """Eureka's reward reflection: the best earlier candidates with their training statistics, and errors of the last round."""
    if not history:
        return ""
    scored = sorted((c for c in history if c["score"] is not None), key=lambda c: -c["score"])[:top]
    lines = ["", "Earlier candidates and what training with them achieved (higher score is better):"]
    for candidate in scored:
        stats = ", ".join(f"{k}={_round(v)}" for k, v in candidate["stats"].items())
        lines.append(f"--- score {candidate['score']:.4g} ({stats})\n```python\n{candidate['code'].strip()}\n```")
    last_round = max(c["iteration"] for c in history)
    errors = [c for c in history if c["iteration"] == last_round and c["error"]]
    for candidate in errors[:top]:
        lines.append(f"--- rejected: {candidate['error']}")
    lines.append("Write an improved reward function.")
    return "\n".join(lines)


def _round(value: Any) -> Any:
    if isinstance(value, list):
        return [_round(v) for v in value]
    return round(float(value), 4) if isinstance(value, float | int) else value


def ippo_trainer(total_steps: int = 20_000, num_envs: int = 8, num_steps: int = 64, eval_episodes: int = 16, seed: int = 0) -> Callable:
    """A trainer for :func:`evolve`: IPPO (``motivegym.baselines.ppo``) on the candidate reward, scored by
    the greedy policy's mean episode welfare (sum of **payoffs**, the task fitness)."""

    def train(env, params, layer: RewardLayer) -> dict[str, Any]:
        config = PPOConfig(total_steps=total_steps, num_envs=num_envs, num_steps=num_steps, num_minibatches=1)
        algo = MultiAgentPPO(env, params, layer, config)
        runner, metrics = jax.jit(algo.make_train())(jax.random.PRNGKey(seed), 0)
        payoffs = np.asarray(episode_payoffs(algo, runner, jax.random.PRNGKey(seed + 1), eval_episodes))
        rewards = np.asarray(metrics["episode_reward"])[-1]
        welfare = float(payoffs.sum(-1).mean())
        return {"score": welfare, "welfare": welfare, "episode_payoffs": payoffs.mean(0).tolist(), "final_episode_rewards": rewards.tolist()}

    return train


def evolve(
    env,
    params,
    client,
    objective: str,
    num_candidates: int = 4,
    iterations: int = 3,
    train_fn: Callable[[Any, Any, RewardLayer], dict[str, Any]] | None = None,
    out_path: str | Path | None = None,
    temperature: float = 1.0,
) -> dict[str, Any]:
    """Eureka: each iteration asks for ``num_candidates`` reward functions (seeds ``0..K−1``), validates
    them, trains with each (``train_fn(env, params, layer) -> {"score": float, …}``, default
    :func:`ippo_trainer`) and feeds the best ones' statistics into the next prompt.

    Returns (and writes to ``out_path`` as JSON after every candidate) ``{"candidates": [...], "best": ...}``;
    every candidate keeps its code, status, error, score and statistics.
    """
    if num_candidates < 1 or iterations < 1:
        raise ValueError(f"num_candidates and iterations must be >= 1, got {num_candidates}, {iterations}")
    train_fn = train_fn or ippo_trainer()
    fields = describe_fields(env, params)
    samples = sample_transitions(env, params)
    history: list[dict[str, Any]] = []
    for iteration in range(iterations):
        prompt = EUREKA_TEMPLATE.format(objective=objective, feedback=feedback_text(history), **fields)
        messages = [{"role": "system", "content": EUREKA_SYSTEM}, {"role": "user", "content": prompt}]
        seeds = [iteration * num_candidates + k for k in range(num_candidates)]  # distinct samples, distinct cache keys
        with ThreadPoolExecutor(max_workers=min(client.max_workers, num_candidates)) as pool:
            answers = list(pool.map(lambda seed, messages=messages: client.chat(messages, temperature=temperature, seed=seed), seeds))
        for index, answer in enumerate(answers):
            history.append(_evaluate_candidate(iteration, index, extract_code(answer), env, params, train_fn, samples))
            _write(out_path, history)
    return _write(out_path, history)


def _evaluate_candidate(iteration: int, index: int, code: str, env, params, train_fn, samples: Transition) -> dict[str, Any]:
    candidate: dict[str, Any] = {"iteration": iteration, "index": index, "code": code, "status": "ok", "error": None, "score": None, "stats": {}}
    try:
        layer = validate_reward_code(code, env, params, transitions=samples)
    except RewardCodeError as error:
        candidate.update(status="unsafe" if isinstance(error, UnsafeRewardCodeError) else "invalid", error=str(error))
        return candidate
    stats = dict(train_fn(env, params, layer))
    if "score" not in stats:
        raise ValueError(f"train_fn must return a dict with a 'score', got keys {sorted(stats)}")
    score = float(stats.pop("score"))
    candidate.update(score=score if np.isfinite(score) else None, stats=stats)
    if not np.isfinite(score):
        candidate.update(status="invalid", error=f"training score is not finite ({score})")
    return candidate


def _write(out_path: str | Path | None, history: list[dict[str, Any]]) -> dict[str, Any]:
    scored = [c for c in history if c["score"] is not None]
    result = {"candidates": history, "best": max(scored, key=lambda c: c["score"]) if scored else None}
    if out_path is not None:
        Path(out_path).parent.mkdir(parents=True, exist_ok=True)
        Path(out_path).write_text(json.dumps(result, indent=2), encoding="utf-8")
    return result
