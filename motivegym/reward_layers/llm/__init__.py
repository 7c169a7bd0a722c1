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
    annotate_pairs,
    collect_pairs,
    distill,
    learned_reward,
)
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
    "RewardModel",
    "UnsafeRewardCodeError",
    "annotate_pairs",
    "code_reward_from_file",
    "collect_pairs",
    "distill",
    "judge_episodes",
    "learned_reward",
    "parse_judgement",
    "propose_goals",
    "validate_reward_code",
]
