"""LLM judge of whole episodes (Kwon et al. 2023, "Reward Design with Language Models").

The LLM reads a caption of one episode and a natural-language objective and answers either
``Answer: yes|no`` (``mode="yes_no"``, the paper's binary reward ``r ∈ {0, 1}``) or
``Score: s`` with ``0 ≤ s ≤ 10`` (``mode="score"``, proxy reward ``s / 10``). The proxy reward is
given once per episode (host side, e.g. added to the return of the last step). Answers go through the
client's cache, so judging the same episode text again sends nothing. An answer that cannot be
parsed gives ``NaN`` (the raw answers are returned too), never a made-up value.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from typing import Any

import jax
import numpy as np

from motivegym.core.batching import random_actions
from motivegym.core.captions import caption, format_value
from motivegym.reward_layers.llm.client import LLMClient

JUDGE_MODES = ("score", "yes_no")
MAX_SCORE = 10.0
JUDGE_SYSTEM = "You evaluate episodes of a multi-agent environment against an objective. You are strict and concise."
JUDGE_TEMPLATE = "Objective: {objective}\n\nEpisode:\n{episode}\n\n{question}"
QUESTIONS = {
    "score": 'How well does the episode meet the objective? Reason in at most two sentences, then end with one line "Score: <number from 0 to 10>".',
    "yes_no": 'Does the episode meet the objective? Reason in at most two sentences, then end with one line "Answer: yes" or "Answer: no".',
}
SCORE_PATTERN = re.compile(r"score\s*[:=]\s*(-?\d+(?:\.\d+)?)(?:\s*/\s*10)?", re.IGNORECASE)
YES_NO_PATTERN = re.compile(r"answer\s*[:=]\s*(yes|no)\b", re.IGNORECASE)
MAX_LISTED_STEPS = 12


def _check_mode(mode: str) -> None:
    if mode not in JUDGE_MODES:
        raise ValueError(f"judge mode must be one of {JUDGE_MODES}, got {mode!r}")


def judge_messages(episode: str, objective: str, mode: str = "score") -> list[dict[str, str]]:
    _check_mode(mode)
    return [
        {"role": "system", "content": JUDGE_SYSTEM},
        {"role": "user", "content": JUDGE_TEMPLATE.format(objective=objective, episode=episode, question=QUESTIONS[mode])},
    ]


def parse_judgement(answer: str, mode: str = "score") -> float | None:
    """The proxy reward in ``[0, 1]`` from the last ``Score:``/``Answer:`` line; ``None`` when absent or out of range."""
    _check_mode(mode)
    if mode == "yes_no":
        matches = YES_NO_PATTERN.findall(answer)
        if not matches:
            bare = answer.strip().strip(".!").lower()
            matches = [bare] if bare in ("yes", "no") else []
        return (1.0 if matches[-1].lower() == "yes" else 0.0) if matches else None
    matches = SCORE_PATTERN.findall(answer)
    if not matches:
        return None
    score = float(matches[-1])
    return score / MAX_SCORE if 0.0 <= score <= MAX_SCORE else None


@dataclasses.dataclass(frozen=True)
class Judgement:
    rewards: np.ndarray  # [episodes] in [0, 1], NaN where the answer could not be parsed
    answers: tuple[str, ...]

    @property
    def num_unparsed(self) -> int:
        return int(np.isnan(self.rewards).sum())


def judge_episodes(client: LLMClient, episodes: Sequence[str], objective: str, mode: str = "score", **chat_params: Any) -> Judgement:
    """One proxy reward per episode caption (requests run concurrently, answers are cached)."""
    _check_mode(mode)
    chat_params.setdefault("temperature", 0.0)
    answers = client.chat_many([judge_messages(text, objective, mode) for text in episodes], **chat_params)
    rewards = [parse_judgement(answer, mode) for answer in answers]
    return Judgement(np.array([np.nan if r is None else r for r in rewards], np.float64), tuple(answers))


# ----- episodes as text -----
@dataclasses.dataclass(frozen=True)
class EpisodeRecord:
    """Host-side record of one episode: ``states[0..T]``, ``actions[T, n]``, ``payoffs[T, n]``."""

    states: tuple[Any, ...]
    actions: np.ndarray
    payoffs: np.ndarray


def record_episode(env, params, seed: int = 0, policy: str = "random") -> EpisodeRecord:
    """Roll out one episode with ``policy``: ``"random"`` (uniform actions) or ``"constant:<fraction of the action range>"``."""
    key = jax.random.PRNGKey(seed)
    key, reset_key = jax.random.split(key)
    state, _ = env.reset(reset_key, params)
    step = jax.jit(lambda k, s, a: env.step(k, s, a, params))
    states, actions, payoffs = [state], [], []
    for _ in range(int(params.max_steps)):
        key, action_key, step_key = jax.random.split(key, 3)
        action = policy_action(env, params, policy, action_key)
        state, _, payoff, done, _ = step(step_key, state, action)
        states.append(state)
        actions.append(np.asarray(action))
        payoffs.append(np.asarray(payoff))
        if bool(done):
            break
    return EpisodeRecord(tuple(states), np.stack(actions), np.stack(payoffs))


def policy_action(env, params, policy: str, key: jax.Array) -> Any:
    """One joint action of ``policy`` (see :func:`record_episode`)."""
    if policy == "random":
        return random_actions(env, params, key)
    if policy.startswith("constant:"):
        level = float(policy.split(":", 1)[1])
        if not 0.0 <= level <= 1.0:
            raise ValueError(f"constant level must be in [0, 1], got {level}")
        if env.action_kind == "discrete":
            return np.full(env.n_agents(params), int(round(level * (env.num_actions(params) - 1))), np.int32)
        low, high = (np.asarray(b, np.float32) for b in env.action_bounds(params))
        return (low + level * (high - low)).astype(np.float32)
    raise ValueError(f"unknown policy {policy!r}; use 'random' or 'constant:<level>'")


def episode_caption(env, params, record: EpisodeRecord, max_listed_steps: int = MAX_LISTED_STEPS) -> str:
    """Start and final captions, up to ``max_listed_steps`` evenly spaced steps (actions, payoffs) and total payoffs."""
    names = tuple(env.agent_names(params))
    steps = len(record.actions)
    listed = np.unique(np.linspace(0, steps - 1, min(steps, max_listed_steps)).round().astype(int))
    lines = [f"Start: {caption(env, record.states[0], params)}"]
    for t in listed:
        lines.append(f"Step {t + 1}: {format_value('actions', record.actions[t], names)}; {format_value('payoffs', record.payoffs[t], names)}")
    lines.append(f"End after {steps} steps: {caption(env, record.states[-1], params)}")
    lines.append(format_value("Total payoffs", record.payoffs.sum(0), names))
    return "\n".join(lines)
