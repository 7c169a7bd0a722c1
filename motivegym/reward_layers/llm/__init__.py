"""LLM-shaped rewards without LLM calls in the jitted step (DESIGN "LLM-shaped rewards").

Everything talks to an OpenAI-compatible server through :class:`LLMClient` (vLLM, llama.cpp,
Ollama, or ``examples/llm_server.py`` offline), with an on-disk cache. Four recipes:

* :mod:`.motif`: Motif (Klissarov et al. 2023): LLM preferences over captions → a distilled JAX
  reward model → :class:`LearnedReward` (``reward="learned:<model.npz>"``);
* :mod:`.reward_code`: Eureka (Ma et al. 2023): LLM-written reward code, whitelisted, traced in a
  bounded sandbox (:mod:`.sandbox`) and compiled to JAX → :class:`CodeReward` (``reward="code:<file.py>"``);
  the loop that evolves it by training is :func:`motivegym.experiments.eureka.evolve`;
* :mod:`.ellm`: ELLM (Du et al. 2023): goal-similarity bonus, host side (:class:`ELLMRewardWrapper`);
* :mod:`.judge`: Kwon et al. 2023: an LLM judge of whole episodes (per-episode proxy reward).
* :mod:`.progress`: Sarukkai et al. 2024: an LLM-written progress function (same whitelist and sandbox as
  reward code) and a count bonus over discretised progress → :class:`ProgressCountBonus` (``reward="progress:<file.py>"``).

ONI (Zheng et al. 2024) uses :class:`~.motif.SwappableLearnedReward`, a Motif model carried in the layer
state, so :mod:`motivegym.experiments.oni` can swap models into a running jitted loop.
"""

from motivegym.reward_layers.llm.client import (
    LLMClient,
    LLMError,
    LLMResponseError,
    LLMTimeoutError,
    LLMTruncatedError,
    LLMUnavailableError,
)
from motivegym.reward_layers.llm.ellm import ELLMRewardWrapper, propose_goals
from motivegym.reward_layers.llm.judge import judge_episodes, parse_judgement
from motivegym.reward_layers.llm.motif import (
    LearnedReward,
    PairDataset,
    RewardModel,
    SwappableLearnedReward,
    annotate_pairs,
    collect_pairs,
    distill,
    learned_reward,
)
from motivegym.reward_layers.llm.progress import ProgressCountBonus, propose_progress_function
from motivegym.reward_layers.llm.reward_code import (
    CodeReward,
    InvalidRewardCodeError,
    UnsafeRewardCodeError,
    code_reward_from_file,
    validate_reward_code,
)

__all__ = [
    "CodeReward",
    "ELLMRewardWrapper",
    "InvalidRewardCodeError",
    "LLMClient",
    "LLMError",
    "LLMResponseError",
    "LLMTimeoutError",
    "LLMTruncatedError",
    "LLMUnavailableError",
    "LearnedReward",
    "PairDataset",
    "ProgressCountBonus",
    "RewardModel",
    "SwappableLearnedReward",
    "UnsafeRewardCodeError",
    "annotate_pairs",
    "code_reward_from_file",
    "collect_pairs",
    "distill",
    "judge_episodes",
    "learned_reward",
    "parse_judgement",
    "propose_progress_function",
    "propose_goals",
    "validate_reward_code",
]
