import numpy as np
import pytest
from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test, seed_test

import motivegym
from motivegym.adapters.pettingzoo_env import env_factory

ALL_ENVS = motivegym.list_envs()
#: checked in the default run; the others carry the ``slow`` mark (run by .ci/run after the default run)
DEFAULT_API_ENVS = {"TrustDilemma-v0", "PartnerHoldUp-v0", "PlatformEcosystem-v0", "SynergySearch-v0", "ApacheProject-v0",
                    "AppleAppStore-v0", "PrisonersDilemma-v0", "PublicGoodsPunishment-v0", "DonorGame-v0", "CoinGame-v0",
                    "KeyDoorGift-v0"}  # fmt: skip
API_CASES = [pytest.param(e, marks=() if e in DEFAULT_API_ENVS else pytest.mark.slow) for e in ALL_ENVS]

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


@pytest.mark.parametrize("env_id", API_CASES)
def test_pettingzoo_api_and_seed_tests(env_id):
    parallel_api_test(motivegym.parallel_env(env_id), num_cycles=40)
    api_test(motivegym.aec_env(env_id), num_cycles=10)
    parallel_seed_test(env_factory(env_id))
    seed_test(env_factory(env_id, "aec"))


def test_parallel_runs_the_envs_own_logic():
    """The reference skips env logic under PettingZoo (spec §5.4); here it is one pipeline."""
    par = motivegym.parallel_env("CooperativeNegotiation-v0", reward="integrated")
    par.reset(seed=0)
    for a in [(50, 50), (50, 50), (50, 50), (20, 20), (60, 60)]:
        _, rewards, _, _, infos = par.step({"agent_0": np.array([a[0]], np.float32), "agent_1": np.array([a[1]], np.float32)})
    assert infos["agent_0"]["env"]["breach_occurred"]
    import gymnasium

    gym = gymnasium.make("motivegym/CooperativeNegotiation-v0", scalarize=None)
    gym.reset(seed=0)
    for a in [(50, 50), (50, 50), (50, 50), (20, 20), (60, 60)]:
        _, reward, _, _, gym_info = gym.step(np.array(a, np.float32))
    np.testing.assert_allclose([rewards["agent_0"], rewards["agent_1"]], reward, rtol=1e-6)
    np.testing.assert_allclose([infos["agent_0"]["payoff"], infos["agent_1"]["payoff"]], gym_info["payoffs"], rtol=1e-6)


def test_parallel_infos_rewards_and_errors():
    par = motivegym.parallel_env("TrustDilemma-v0", reward="private")
    obs, infos = par.reset(seed=0)
    assert par.possible_agents == ["agent_0", "agent_1"] and obs["agent_0"].shape == (12,)
    _, rewards, _, _, infos = par.step({"agent_0": 80.0, "agent_1": np.array([20.0])})
    assert rewards["agent_0"] == pytest.approx(121.889, abs=2e-3) == infos["agent_0"]["payoff"]
    assert infos["agent_1"]["reward_components"]["payoff"] == pytest.approx(154.890, abs=2e-3)
    assert par.state().shape == (15,)
    with pytest.raises(ValueError, match="missing actions"):
        par.step({"agent_0": 1.0})
    with pytest.raises(ValueError, match="agent_1"):
        par.step({"agent_0": 1.0, "agent_1": float("nan")})
    with pytest.raises(ValueError, match="unknown"):
        par.step({"agent_0": 1.0, "agent_1": 1.0, "agent_9": 1.0})
    with pytest.raises(ValueError, match="did you mean"):
        motivegym.parallel_env("TrustDilemma-v0", lambda_plsu=0.1)


def test_episode_end_removes_agents_and_aec_rewards_after_round():
    par = motivegym.parallel_env("TrustDilemma-v0", max_steps=2)
    par.reset(seed=0)
    par.step({a: 50.0 for a in par.agents})
    *_, truncations, _ = par.step({a: 50.0 for a in par.agents})
    assert all(truncations.values()) and par.agents == []
    aec = motivegym.aec_env("TrustDilemma-v0")
    aec.reset(seed=0)
    aec.step(np.array([50.0], np.float32))
    assert aec.rewards["agent_0"] == 0.0
    aec.step(np.array([50.0], np.float32))
    assert aec.rewards["agent_0"] == pytest.approx(196.554, abs=2e-3)


def test_render_ansi():
    par = motivegym.parallel_env("RenaultNissan-v0", render_mode="ansi")
    par.reset(seed=0)
    assert "Nissan" in par.render()
