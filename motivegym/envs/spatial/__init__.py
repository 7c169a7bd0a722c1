"""Spatial sequential social dilemmas (family "dilemmas"): Harvest, Cleanup and the Coin Game as JAX grid worlds."""

from motivegym.core.registry import EnvSpec, register
from motivegym.envs.spatial.cleanup import Cleanup
from motivegym.envs.spatial.coin_game import CoinGame
from motivegym.envs.spatial.coin_game_jaxmarl import CoinGameJaxMARL
from motivegym.envs.spatial.coop_mining import CoopMining
from motivegym.envs.spatial.gift_refinement import GiftRefinement
from motivegym.envs.spatial.harvest import Harvest
from motivegym.envs.spatial.in_the_matrix import PrisonersDilemmaInTheMatrix, StagHuntInTheMatrix
from motivegym.envs.spatial.mushrooms import Mushrooms
from motivegym.envs.spatial.territory import Territory

#: (class, mechanism) in registration order; none reports interdependence weights, so all default to "private"
SPATIAL_ENVS = [
    (Harvest, "common-pool resource"),
    (Cleanup, "public good (river cleaning)"),
    (CoinGame, "sequential prisoner's dilemma"),
    (CoinGameJaxMARL, "sequential prisoner's dilemma"),
    (CoopMining, "spatial stag hunt (joint gold mining)"),
    (Mushrooms, "collective action with externalities (mushroom eating)"),
    (PrisonersDilemmaInTheMatrix, "prisoner's dilemma in the matrix (inventory strategies)"),
    (StagHuntInTheMatrix, "stag hunt in the matrix (inventory strategies)"),
    (GiftRefinement, "trust / gift exchange"),
    (Territory, "territory / property conflict"),
]

for _cls, _mechanism in SPATIAL_ENVS:
    register(EnvSpec(f"{_cls.name}-v0", _cls, family="dilemmas", mechanism=_mechanism, default_reward="private"))

__all__ = [c.__name__ for c, _ in SPATIAL_ENVS]
