"""The registry: one table maps an env id to its factory, default reward layer and metadata.

Gymnasium registration, the PettingZoo factories, the CLI and the docs page are all generated
from this table, so they cannot drift apart.
"""

from __future__ import annotations

import dataclasses
import difflib
from typing import Any

from motivegym.core.env import FunctionalEnv

NAMESPACE = "motivegym"


@dataclasses.dataclass(frozen=True)
class EnvSpec:
    """One registry row."""

    id: str  # "TrustDilemma-v0" (Gymnasium id: "motivegym/TrustDilemma-v0")
    env_class: type[FunctionalEnv]
    family: str  # "coopetition", "dilemmas", "sparse"
    mechanism: str  # short mechanism class, e.g. "trust dilemma"
    tier: str = ""  # e.g. "TR-1", "TR-2" for the coopetition family
    default_reward: str = "integrated"
    reference_oracle: str = ""  # name of the reference oracle for Gap%
    reference_steps: int = 0  # the reference benchmark's training budget per run (env steps); 0: none

    @property
    def gymnasium_id(self) -> str:
        return f"{NAMESPACE}/{self.id}"

    def make_env(self) -> FunctionalEnv:
        return self.env_class()

    @property
    def summary(self) -> str:
        doc = (self.env_class.__doc__ or "").strip()
        return doc.splitlines()[0] if doc else ""


REGISTRY: dict[str, EnvSpec] = {}


def register(spec: EnvSpec) -> EnvSpec:
    if spec.id in REGISTRY:
        raise ValueError(f"environment {spec.id!r} is already registered")
    REGISTRY[spec.id] = spec
    return spec


def canonical_id(env_id: str) -> str:
    """Strip an optional ``motivegym/`` (or ``motivegym:motivegym/``) prefix."""
    env_id = env_id.split(":", 1)[-1]
    if env_id.startswith(NAMESPACE + "/"):
        env_id = env_id[len(NAMESPACE) + 1 :]
    return env_id


def get_spec(env_id: str) -> EnvSpec:
    """The registry row of ``env_id``; unknown ids raise ``ValueError`` listing the valid ones."""
    key = canonical_id(env_id)
    if key not in REGISTRY:
        close = difflib.get_close_matches(key, list(REGISTRY), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ValueError(f"unknown environment {env_id!r}{hint}. Registered: {', '.join(REGISTRY)}")
    return REGISTRY[key]


def list_envs(family: str | None = None) -> list[str]:
    """Registered ids in registration order, optionally of one family."""
    return [k for k, spec in REGISTRY.items() if family is None or spec.family == family]


def make_jax(env_id: str, **param_overrides: Any) -> tuple[FunctionalEnv, Any]:
    """The JAX functional API: ``env, params = make_jax("TrustDilemma-v0", max_steps=50)``."""
    env = get_spec(env_id).make_env()
    return env, env.default_params(**param_overrides)
