"""Sparse-reward multi-agent worlds: a multi-agent Crafter, a key/door hidden-gift room and sparse navigation."""

from motivegym.core.registry import EnvSpec, register
from motivegym.envs.sparse.crafter import CrafterParams, CrafterState, CrafterTeam
from motivegym.envs.sparse.key_door import KeyDoorGift, KeyDoorParams, KeyDoorState
from motivegym.envs.sparse.navigation import CooperativeNavigation, NavigationParams, NavigationState

#: (class, mechanism); none of them defines interdependence weights, so all default to "private".
SPARSE_ENVS = [
    (CrafterTeam, "multi-agent Crafter achievements"),
    (KeyDoorGift, "key passing (hidden gift)"),
    (CooperativeNavigation, "sparse joint coverage"),
]

for _cls, _mechanism in SPARSE_ENVS:
    register(EnvSpec(f"{_cls.name}-v0", _cls, family="sparse", mechanism=_mechanism, default_reward="private"))

__all__ = [
    "CooperativeNavigation",
    "CrafterParams",
    "CrafterState",
    "CrafterTeam",
    "KeyDoorGift",
    "KeyDoorParams",
    "KeyDoorState",
    "NavigationParams",
    "NavigationState",
]
