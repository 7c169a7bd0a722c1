"""ELLM-style goal rewards (Du et al. 2023, "Guiding Pretraining in RL with Large Language Models").

The LLM proposes goals from a caption of the current state; the bonus of a transition is the
cosine similarity between the transition caption and the closest goal, in a local text embedding
(hashed n-grams, :mod:`.text`; no model download)::

    b_t = max_g cos(φ(caption_t), φ(g))   if that is ≥ threshold, else 0      (ELLM Eq. 2)

and, as in ELLM, a goal pays at most once per episode (``once_per_episode=True``).

**Host side.** Captions are built from state arrays outside jit, so this is not a jitted reward
layer: :class:`ELLMRewardWrapper` wraps a motivegym Gymnasium env and adds ``coef · b_t`` to the
reward (every agent gets the same bonus: the caption describes the joint state).
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np

from motivegym.core.captions import caption, transition_caption
from motivegym.reward_layers.llm.client import LLMClient
from motivegym.reward_layers.llm.text import DEFAULT_DIM, encode_text, encode_texts

GOAL_SYSTEM = "You suggest useful goals for agents in a multi-agent environment. You are concise."
GOAL_TEMPLATE = (
    "Objective: {objective}\n\nCurrent situation:\n{caption}\n\n"
    "Suggest up to {max_goals} short, concrete goals the agents could achieve next, one per line, each starting with '- '."
)
BULLETS = ("-", "*", "•")


def goal_messages(state_caption: str, objective: str, max_goals: int) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": GOAL_SYSTEM},
        {"role": "user", "content": GOAL_TEMPLATE.format(objective=objective, caption=state_caption, max_goals=max_goals)},
    ]


def goal_of_line(line: str) -> str | None:
    """The goal of a bulleted (``- x``, ``* x``, ``• x``) or numbered (``1. x``, ``2) x``) line, else ``None``.

    String scans only (no backtracking regex): linear in the line's length."""
    text = line.strip()
    if text[:1] in BULLETS:
        rest = text[1:]
    else:
        digits = len(text) - len(text.lstrip("0123456789"))
        if not digits or text[digits : digits + 1] not in (".", ")"):
            return None
        rest = text[digits + 1 :]
    return rest.strip() or None


def parse_goals(answer: str, max_goals: int) -> tuple[str, ...]:
    """The first ``max_goals`` distinct (case-insensitive) goal lines of ``answer``; linear in its length."""
    goals: list[str] = []
    seen: set[str] = set()
    for line in answer.splitlines():
        if len(goals) >= max_goals:
            break
        goal = goal_of_line(line)
        if goal is not None and goal.lower() not in seen:
            seen.add(goal.lower())
            goals.append(goal)
    return tuple(goals)


def propose_goals(client: LLMClient, state_caption: str, objective: str, max_goals: int = 5, **chat_params: Any) -> tuple[str, ...]:
    """Goals the LLM suggests for ``state_caption``; an answer without goal lines raises ``ValueError``."""
    chat_params.setdefault("temperature", 0.0)
    answer = client.chat(goal_messages(state_caption, objective, max_goals), **chat_params)
    goals = parse_goals(answer, max_goals)
    if not goals:
        raise ValueError(f"the LLM proposed no goals (expected lines starting with '- '): {answer[:200]!r}")
    return goals


def goal_bonus(caption_text: str, goal_embeddings: np.ndarray, available: np.ndarray, threshold: float, dim: int = DEFAULT_DIM) -> tuple[float, int]:
    """``(b, g*)``: the best similarity among available goals (0 and ``-1`` below ``threshold``)."""
    if goal_embeddings.shape[0] == 0 or not available.any():
        return 0.0, -1
    similarity = goal_embeddings @ encode_text(caption_text, dim)
    similarity = np.where(available, similarity, -np.inf)
    best = int(np.argmax(similarity))
    return (float(similarity[best]), best) if similarity[best] >= threshold else (0.0, -1)


class ELLMRewardWrapper(gymnasium.Wrapper):
    """Adds ``coef · b_t`` (ELLM goal bonus) to the reward of a motivegym Gymnasium env.

    Goals are proposed at reset and, with ``propose_every=k > 0``, again every ``k`` steps.
    ``info["ellm_bonus"]``, ``info["ellm_goal"]`` (the matched goal or ``""``) and
    ``info["ellm_goals"]`` report what happened.
    """

    def __init__(
        self,
        env: gymnasium.Env,
        client: LLMClient,
        objective: str,
        coef: float = 1.0,
        threshold: float = 0.5,
        max_goals: int = 5,
        propose_every: int = 0,
        once_per_episode: bool = True,
        dim: int = DEFAULT_DIM,
    ):
        super().__init__(env)
        unwrapped = env.unwrapped
        if not hasattr(unwrapped, "core_env") or not hasattr(unwrapped, "env_state"):
            raise ValueError("ELLMRewardWrapper wraps a motivegym Gymnasium env (gymnasium.make('motivegym/...'))")
        if not -1.0 <= threshold <= 1.0 or propose_every < 0:
            raise ValueError(f"threshold must be in [-1, 1] and propose_every >= 0, got {threshold}, {propose_every}")
        self.client, self.objective, self.coef, self.threshold = client, objective, float(coef), float(threshold)
        self.max_goals, self.propose_every, self.once_per_episode, self.dim = max_goals, propose_every, once_per_episode, dim
        self.goals: tuple[str, ...] = ()
        self._embeddings = np.zeros((0, dim), np.float32)
        self._achieved = np.zeros(0, bool)
        self._steps = 0
        self._state: Any = None

    def _core_state(self) -> Any:
        return self.env.unwrapped.env_state()

    def _propose(self) -> None:
        unwrapped = self.env.unwrapped
        self.goals = propose_goals(self.client, caption(unwrapped.core_env, self._state, unwrapped.params), self.objective, self.max_goals)
        self._embeddings = encode_texts(list(self.goals), self.dim)
        self._achieved = np.zeros(len(self.goals), bool)

    def reset(self, **kwargs: Any):
        obs, info = self.env.reset(**kwargs)
        self._state, self._steps = self._core_state(), 0
        self._propose()
        info["ellm_goals"] = self.goals
        return obs, info

    def step(self, action: Any):
        obs, reward, terminated, truncated, info = self.env.step(action)
        unwrapped = self.env.unwrapped
        next_state = self._core_state()
        text = transition_caption(unwrapped.core_env, self._state, np.asarray(action), info["payoffs"], next_state, unwrapped.params)
        available = ~self._achieved if self.once_per_episode else np.ones(len(self.goals), bool)
        bonus, goal = goal_bonus(text, self._embeddings, available, self.threshold, self.dim)
        if goal >= 0:
            self._achieved[goal] = True
        info = {**info, "ellm_bonus": bonus, "ellm_goal": self.goals[goal] if goal >= 0 else "", "ellm_goals": self.goals}
        reward = reward + self.coef * bonus if np.isscalar(reward) else np.asarray(reward) + np.float32(self.coef * bonus)
        self._state, self._steps = next_state, self._steps + 1
        if self.propose_every and self._steps % self.propose_every == 0 and not (terminated or truncated):
            self._propose()
        return obs, reward, terminated, truncated, info
