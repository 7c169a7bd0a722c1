import numpy as np
import pytest

pytest.importorskip("stable_baselines3")

import gymnasium  # noqa: E402

import motivegym  # noqa: E402, F401
from motivegym.adapters.sb3 import vec_env  # noqa: E402
from motivegym.baselines.sb3_runners import ALGORITHMS, SingleAgentVecEnv, evaluate, train_independent, train_shared  # noqa: E402


def test_each_agent_is_a_sub_env_with_mapped_actions():
    env = vec_env("PartnerHoldUp-v0", num_envs=3, reward="private")
    assert env.num_envs == 6 and env.observation_space.shape == (12 + 2,)
    env.seed(0)
    obs = env.reset()
    np.testing.assert_array_equal(obs[:2, -2:], np.eye(2))  # agent one-hot
    actions = np.tile(np.array([[-1.0], [1.0]], np.float32), (3, 1))  # agent 0 → 0, agent 1 → e_1 = 80
    _, rewards, dones, infos = env.step(actions)
    gym = gymnasium.make("motivegym/PartnerHoldUp-v0", reward="private")
    gym.reset(seed=0)
    _, reward, *_ = gym.step(np.array([0.0, 80.0], np.float32))
    np.testing.assert_allclose(rewards[:2], reward, rtol=1e-6)
    assert not dones.any() and infos[1]["payoff"] == pytest.approx(float(reward[1]), rel=1e-6)
    with pytest.raises(ValueError, match="agent_1"):
        env.step(np.array([[0.0], [np.nan]] * 3, np.float32))


def test_same_step_autoreset_with_terminal_observation():
    env = vec_env("TrustDilemma-v0", num_envs=2, reward="integrated", max_steps=2)
    env.seed(1)
    env.reset()
    env.step(np.zeros((4, 1), np.float32))
    obs, _, dones, infos = env.step(np.zeros((4, 1), np.float32))
    assert dones.all()
    assert all(info["TimeLimit.truncated"] for info in infos)
    assert infos[0]["terminal_observation"][11] == pytest.approx(1.0)  # t/max_steps of the final state
    assert obs[0, 11] == 0.0  # reset observation


@pytest.mark.parametrize("algo", ALGORITHMS)
def test_shared_runners_train_and_evaluate(algo):
    kwargs = {"n_steps": 32, "batch_size": 32} if algo == "ppo" else {"n_steps": 8} if algo == "a2c" else {"learning_starts": 32}
    model, _ = train_shared(algo, "TrustDilemma-v0", "private", steps=128, num_envs=2, **kwargs)
    returns = evaluate(model, "TrustDilemma-v0", "private", episodes=2)
    assert returns.shape == (2,) and np.all(np.isfinite(returns))


def test_independent_learners_have_one_model_per_agent_on_own_observations():
    models = train_independent("ppo", "SLCD-v0", "private", steps=128, num_envs=2, rounds=2, n_steps=32, batch_size=32)
    assert len(models) == 2 and models[0] is not models[1]
    assert models[0].observation_space.shape == (14,)
    view = models[1].get_env()
    assert isinstance(view, SingleAgentVecEnv) and view.agent == 1 and view.num_envs == 2
    assert evaluate(models, "SLCD-v0", "private", episodes=2).shape == (2,)
