"""Register every registry row with Gymnasium (ids ``motivegym/<Name>-v0``)."""

from __future__ import annotations

import gymnasium

from motivegym.core.registry import REGISTRY


def register_gymnasium_envs() -> None:
    """Idempotently register all motivegym ids with ``gymnasium.register``."""
    for spec in REGISTRY.values():
        if spec.gymnasium_id in gymnasium.registry:
            continue
        gymnasium.register(
            id=spec.gymnasium_id,
            entry_point="motivegym.adapters.gymnasium_env:make_env",
            vector_entry_point="motivegym.adapters.vector_env:VectorEnv",
            kwargs={"env_id": spec.id},
            max_episode_steps=None,  # truncation is part of the env (params.max_steps)
        )
