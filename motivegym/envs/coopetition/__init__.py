"""The Coopetition-Gym family (TR-1 … TR-4), reimplemented as JAX functional envs."""

from motivegym.core.registry import EnvSpec, register
from motivegym.envs.coopetition.base import CoopetitionEnv, CoopetitionParams, CoopetitionState
from motivegym.envs.coopetition.benchmark import RecoveryRace, SynergySearch
from motivegym.envs.coopetition.case_studies import SLCD, RenaultNissan
from motivegym.envs.coopetition.dyadic import PartnerHoldUp, TrustDilemma
from motivegym.envs.coopetition.ecosystem import DynamicPartnerSelection, PlatformEcosystem
from motivegym.envs.coopetition.extended import CooperativeNegotiation, ReputationMarket

#: (class, mechanism, tier, reference oracle) in the reference's registration order (spec §4.0)
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
]

for _cls, _mechanism, _tier, _oracle in COOPETITION_ENVS:
    register(EnvSpec(f"{_cls.name}-v0", _cls, "coopetition", _mechanism, _tier, "integrated", _oracle))

__all__ = ["CoopetitionEnv", "CoopetitionParams", "CoopetitionState"] + [c.__name__ for c, *_ in COOPETITION_ENVS]
