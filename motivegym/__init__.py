"""motivegym: mixed-motive and sparse-reward multi-agent environments whose payoffs are kept apart
from configurable reward layers. JAX cores; Gymnasium, PettingZoo and functional APIs.

    import gymnasium, motivegym
    env = gymnasium.make("motivegym/TrustDilemma-v0", reward="private")
    par = motivegym.parallel_env("TrustDilemma-v0", reward="integrated")
    env, params = motivegym.make_jax("TrustDilemma-v0")   # raw jitted step: checks nothing
    checked = motivegym.checked(env)                      # host-side action checks before the step
    env, params = motivegym.make_rewarded("TrustDilemma-v0", reward="integrated", autoreset=True)  # step returns rewards

On import, motivegym sets two CPU-only XLA defaults that make small step programs fast on few-core
hosts (see ``motivegym.core.cpu_defaults``; ``MOTIVEGYM_XLA_DEFAULTS=0`` turns them off).
It also keeps compiled programs in a persistent cache under ``~/.cache/motivegym/jax``, so a second
process starts fast (see ``motivegym.core.compilation_cache``; ``MOTIVEGYM_COMPILATION_CACHE=0`` turns it off).
"""

from motivegym.core.compilation_cache import enable_compilation_cache
from motivegym.core.cpu_defaults import apply_cpu_defaults

CPU_DEFAULTS_APPLIED = apply_cpu_defaults()  # before any submodule creates a JAX array
COMPILATION_CACHE_DIR = enable_compilation_cache()

from motivegym.adapters.functional import make_rewarded  # noqa: E402
from motivegym.adapters.pettingzoo_env import aec_env, parallel_env  # noqa: E402
from motivegym.adapters.registration import register_gymnasium_envs  # noqa: E402
from motivegym.core.actions import checked  # noqa: E402
from motivegym.core.batching import auto_reset_batch_step, auto_reset_step  # noqa: E402
from motivegym.core.registry import REGISTRY, get_spec, list_envs, make_jax  # noqa: E402
from motivegym.envs import coopetition as _coopetition  # noqa: E402, F401  (registers the family)
from motivegym.envs import matrix as _matrix  # noqa: E402, F401
from motivegym.envs import sparse as _sparse  # noqa: E402, F401
from motivegym.envs import spatial as _spatial  # noqa: E402, F401

__version__ = "0.1.0"

register_gymnasium_envs()

__all__ = ["REGISTRY", "aec_env", "auto_reset_batch_step", "auto_reset_step", "checked", "get_spec", "list_envs", "make_jax",
           "make_rewarded", "parallel_env", "__version__"]  # fmt: skip
