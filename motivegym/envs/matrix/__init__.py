"""Matrix-game social dilemmas with closed-form payoffs: IPD, Stag Hunt, Chicken, public goods
with punishment, donor game with image scoring (one-shot with ``max_steps=1``, repeated otherwise; ``max_steps`` counts env steps, ``rounds`` is
its alias)."""

from motivegym.core.registry import EnvSpec, register
from motivegym.envs.matrix.base import Chicken, MatrixGame, PrisonersDilemma, StagHunt
from motivegym.envs.matrix.donor import DonorGame
from motivegym.envs.matrix.public_goods import PublicGoodsPunishment

#: (class, mechanism)
MATRIX_ENVS = [
    (PrisonersDilemma, "iterated prisoner's dilemma"),
    (StagHunt, "stag hunt (coordination)"),
    (Chicken, "chicken (anti-coordination)"),
    (PublicGoodsPunishment, "N-player public goods with punishment"),
    (DonorGame, "donor game with image scoring"),
]

for _cls, _mechanism in MATRIX_ENVS:
    register(EnvSpec(f"{_cls.name}-v0", _cls, "dilemmas", _mechanism, default_reward="private"))

__all__ = ["MatrixGame"] + [c.__name__ for c, _ in MATRIX_ENVS]
