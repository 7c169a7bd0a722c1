"""The Coopetition-Gym family (TR-1 … TR-4), reimplemented as JAX functional envs."""

from motivegym.core.registry import EnvSpec, register
from motivegym.envs.coopetition.base import CoopetitionEnv, CoopetitionParams, CoopetitionState
from motivegym.envs.coopetition.benchmark import RecoveryRace, SynergySearch
from motivegym.envs.coopetition.case_studies import SLCD, RenaultNissan
from motivegym.envs.coopetition.collective_action import (
    ApacheProject,
    CoalitionFormation,
    LoyaltyTeam,
    PublicGoods,
    TeamProduction,
)
from motivegym.envs.coopetition.dyadic import PartnerHoldUp, TrustDilemma
from motivegym.envs.coopetition.ecosystem import DynamicPartnerSelection, PlatformEcosystem
from motivegym.envs.coopetition.extended import CooperativeNegotiation, ReputationMarket
from motivegym.envs.coopetition.reciprocity_envs import (
    AppleAppStore,
    GiftExchange,
    GraduatedSanction,
    IndirectReciprocity,
    ReciprocalDilemma,
)

#: (class, mechanism, tier, reference oracle[, default reward]) in the reference's registration order (spec §4.0).
#: TR-4 envs default to the reciprocity motive over the integrated utility (the reference's reward form).
COOPETITION_ENVS = [
    (TrustDilemma, "trust dilemma", "TR-2", "Oracle_TrustAware"),
    (PartnerHoldUp, "asymmetric hold-up", "TR-1", "Oracle_Equilibrium"),
    (PlatformEcosystem, "hub-spoke ecosystem", "TR-1", "Oracle_Equilibrium"),
    (DynamicPartnerSelection, "public reputation pool", "TR-1", "Oracle_Equilibrium"),
    (RecoveryRace, "trust recovery", "TR-2", "Oracle_TrustAware"),
    (SynergySearch, "hidden complementarity", "TR-1", "Oracle_Equilibrium"),
    (SLCD, "case study: joint venture", "TR-2", "Oracle_TrustAware"),
    (RenaultNissan, "case study: alliance phases", "TR-1", "Oracle_Equilibrium"),
    (CooperativeNegotiation, "agreements and breaches", "TR-2", "Oracle_TrustAware"),
    (ReputationMarket, "reputation tiers", "TR-2", "Oracle_TrustAware"),
    (TeamProduction, "team production", "TR-3", "Oracle_Nash"),
    (LoyaltyTeam, "loyalty institutions", "TR-3", "Oracle_Loyalty"),
    (CoalitionFormation, "coalition exclusion", "TR-3", "Oracle_Loyalty"),
    (ApacheProject, "case study: open-source community phases", "TR-3", "Oracle_Loyalty"),
    (PublicGoods, "linear public goods", "TR-3", "Oracle_Nash"),
    (ReciprocalDilemma, "direct reciprocity", "TR-4", "Oracle_ReciprocityEquilibrium", "reciprocity"),
    (GiftExchange, "gift exchange", "TR-4", "Oracle_ReciprocityEquilibrium", "reciprocity"),
    (IndirectReciprocity, "group reciprocity", "TR-4", "Oracle_BoundedReciprocity", "reciprocity"),
    (GraduatedSanction, "graduated response", "TR-4", "Oracle_BoundedReciprocity", "reciprocity"),
    (AppleAppStore, "case study: platform reciprocity", "TR-4", "Oracle_ReciprocityEquilibrium", "reciprocity"),
]

#: the reference benchmark's training budget per run by environment module (spec §2.7, ``experiments/config.py``):
#: 500k for the dyadic, benchmark, validated (case-study) and extended categories, 1M for ecosystem,
#: collective-action and reciprocity
REFERENCE_STEPS_BY_MODULE = {
    "dyadic": 500_000, "benchmark": 500_000, "case_studies": 500_000, "extended": 500_000,
    "ecosystem": 1_000_000, "collective_action": 1_000_000, "reciprocity_envs": 1_000_000,
}  # fmt: skip

for _cls, _mechanism, _tier, _oracle, *_reward in COOPETITION_ENVS:
    _steps = REFERENCE_STEPS_BY_MODULE[_cls.__module__.rsplit(".", 1)[-1]]
    register(EnvSpec(f"{_cls.name}-v0", _cls, "coopetition", _mechanism, _tier, (_reward or ["integrated"])[0], _oracle, _steps))

__all__ = ["CoopetitionEnv", "CoopetitionParams", "CoopetitionState"] + [c.__name__ for c, *_ in COOPETITION_ENVS]
