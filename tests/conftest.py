import os

# XLA's multi-threaded Eigen pool can deadlock on small CPU machines (seen once in a QMIX run:
# idle inside block_until_ready); single-threaded Eigen keeps the suite from hanging in CI.
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")

import jax
import pytest

import motivegym

TR12_ENVS = [
    "TrustDilemma-v0",
    "PartnerHoldUp-v0",
    "PlatformEcosystem-v0",
    "DynamicPartnerSelection-v0",
    "RecoveryRace-v0",
    "SynergySearch-v0",
    "SLCD-v0",
    "RenaultNissan-v0",
    "CooperativeNegotiation-v0",
    "ReputationMarket-v0",
]


@pytest.fixture(scope="session")
def key():
    return jax.random.PRNGKey(0)


def all_env_ids():
    return motivegym.list_envs()
