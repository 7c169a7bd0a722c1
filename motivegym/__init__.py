"""motivegym: mixed-motive and sparse-reward multi-agent environments whose payoffs are kept apart
from configurable reward layers. JAX cores; Gymnasium, PettingZoo and functional APIs.

    import gymnasium, motivegym
    env = gymnasium.make("motivegym/TrustDilemma-v0", reward="private")
    par = motivegym.parallel_env("TrustDilemma-v0", reward="integrated")
    env, params = motivegym.make_jax("TrustDilemma-v0")
"""

from motivegym.adapters.pettingzoo_env import aec_env, parallel_env
from motivegym.adapters.registration import register_gymnasium_envs
from motivegym.core.registry import REGISTRY, get_spec, list_envs, make_jax
from motivegym.envs import coopetition as _coopetition  # noqa: F401  (registers the family)
from motivegym.envs import matrix as _matrix  # noqa: F401
from motivegym.envs import sparse as _sparse  # noqa: F401
from motivegym.envs import spatial as _spatial  # noqa: F401

__version__ = "0.1.0"

register_gymnasium_envs()

__all__ = ["REGISTRY", "aec_env", "get_spec", "list_envs", "make_jax", "parallel_env", "__version__"]
