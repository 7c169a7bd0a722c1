import numpy as np
import pytest

pytest.importorskip("stable_baselines3")

import gymnasium  # noqa: E402
import torch  # noqa: E402
from stable_baselines3 import PPO  # noqa: E402
from stable_baselines3.common.vec_env import VecNormalize  # noqa: E402

import motivegym  # noqa: E402, F401
from motivegym.adapters.sb3 import from_bounds, to_bounds, vec_env  # noqa: E402
from motivegym.baselines.sb3_runners import ALGORITHMS, SingleAgentVecEnv, evaluate, train_independent, train_shared  # noqa: E402

CONTINUOUS_ALGORITHMS = ("ppo", "a2c", "sac", "td3")
DISCRETE_ALGORITHMS = ("ppo", "a2c", "dqn")


def test_each_agent_is_a_sub_env_with_mapped_actions():
    env = vec_env("PartnerHoldUp-v0", num_envs=3, reward="private")
    assert env.num_envs == 6 and env.observation_space.shape == (12 + 2,)
    env.seed(0)
    obs = env.reset()
    np.testing.assert_array_equal(obs[:2, -2:], np.eye(2))  # agent one-hot
    actions = np.tile(np.array([[-1.0], [1.0]], np.float32), (3, 1))  # agent 0 → 0, agent 1 → e_1 = 80
    _, rewards, dones, infos = env.step(actions)
    gym = gymnasium.make("motivegym/PartnerHoldUp-v0", reward="private", scalarize=None)
    gym.reset(seed=0)
    _, reward, *_ = gym.step(np.array([0.0, 80.0], np.float32))
    reward = np.asarray(reward).reshape(-1)
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


def test_action_maps_are_inverse_and_exact_on_the_bounds():
    env = vec_env("PartnerHoldUp-v0", num_envs=1)
    bounds = np.array([[0.0, 0.0], [60.0, 40.0], [120.0, 80.0]])
    unit = from_bounds(bounds, env._low, env._span)
    np.testing.assert_array_equal(unit, [[-1, -1], [0, 0], [1, 1]])
    np.testing.assert_array_equal(to_bounds(unit, env._low, env._span), bounds)
    np.testing.assert_array_equal(to_bounds(np.array([[-3.0, 7.0]]), env._low, env._span), [[0.0, 80.0]])  # clipped


def test_discrete_env_has_a_shared_discrete_space_and_checked_indices():
    env = vec_env("PrisonersDilemma-v0", num_envs=2, reward="private")
    assert env.action_space == gymnasium.spaces.Discrete(2) and env.observation_space.shape == (6 + 2,)
    env.seed(0)
    env.reset()
    # game 0: (C, D) → (S, T) = (0, 5); game 1: (D, D) → (P, P) = (1, 1); SB3 gives int64 of shape (4,)
    _, rewards, dones, infos = env.step(np.array([0, 1, 1, 1], np.int64))
    np.testing.assert_array_equal(rewards, [0.0, 5.0, 1.0, 1.0])
    assert [info["payoff"] for info in infos] == [0.0, 5.0, 1.0, 1.0] and not dones.any()
    _, rewards, *_ = env.step(np.array([[0, 0], [1, 0]]))  # (games, agents) also accepted
    np.testing.assert_array_equal(rewards, [3.0, 3.0, 5.0, 0.0])
    for bad, text in ((np.array([0, 2, 0, 0]), "sub-env 0, agent_1"), (np.array([0, 0, 0.5, 0]), "sub-env 1, agent_0"),
                      (np.array([0, 0, 0, -1]), "sub-env 1, agent_1"), (np.zeros(5, np.int64), "shape")):  # fmt: skip
        with pytest.raises(ValueError, match=text):
            env.step(bad)


@pytest.mark.parametrize("env_id", ["CoinGame-v0", "Harvest-v0", "CrafterTeam-v0", "KeyDoorGift-v0", "DonorGame-v0"])
def test_every_discrete_family_steps_through_the_adapter(env_id):
    env = vec_env(env_id, num_envs=2)
    n = env.n_agents
    assert env.num_envs == 2 * n and isinstance(env.action_space, gymnasium.spaces.Discrete)
    env.action_space.seed(0)
    env.seed(0)
    obs = env.reset()
    for _ in range(3):
        obs, rewards, dones, infos = env.step(np.array([env.action_space.sample() for _ in range(2 * n)]))
    assert obs.shape == (2 * n, env.observation_space.shape[0]) and np.all(np.isfinite(rewards))
    assert all(env.observation_space.contains(row) for row in obs), "observations outside the declared bounds"
    np.testing.assert_array_equal(obs[:n, -n:], np.eye(n))


@pytest.mark.parametrize("algo", ALGORITHMS)
def test_shared_runners_train_and_evaluate(algo):
    kwargs = {"n_steps": 32, "batch_size": 32} if algo == "ppo" else {"n_steps": 8} if algo == "a2c" else {"learning_starts": 32}
    for env_id, kind in (("TrustDilemma-v0", CONTINUOUS_ALGORITHMS), ("PrisonersDilemma-v0", DISCRETE_ALGORITHMS)):
        if algo not in kind:
            continue
        model, env = train_shared(algo, env_id, "private", steps=128, num_envs=2, **kwargs)
        assert model.action_space == env.action_space
        returns = evaluate(model, env_id, "private", episodes=2)
        assert returns.shape == (2,) and np.all(np.isfinite(returns))


def test_runner_algorithms_cover_both_action_kinds():
    assert set(ALGORITHMS) == set(CONTINUOUS_ALGORITHMS) | set(DISCRETE_ALGORITHMS)


def test_independent_learners_have_one_model_per_agent_on_own_observations():
    models = train_independent("ppo", "SLCD-v0", "private", steps=128, num_envs=2, rounds=2, n_steps=32, batch_size=32)
    assert len(models) == 2 and models[0] is not models[1]
    assert models[0].observation_space.shape == (14,)
    view = models[1].get_env()
    assert isinstance(view, SingleAgentVecEnv) and view.agent == 1 and view.num_envs == 2
    assert evaluate(models, "SLCD-v0", "private", episodes=2).shape == (2,)


def test_independent_learners_on_a_discrete_env():
    models = train_independent("ppo", "PrisonersDilemma-v0", "private", steps=128, num_envs=2, rounds=2, n_steps=32, batch_size=32)
    assert [m.action_space for m in models] == [gymnasium.spaces.Discrete(2)] * 2
    assert evaluate(models, "PrisonersDilemma-v0", "private", episodes=2).shape == (2,)


# ----- PPO learns through the adapter: the trained policy moves the way the reward layer says -----
def ppo(env, seed: int, **kwargs) -> PPO:
    """A small SB3 PPO on one CPU thread (the test machine's other core runs another worker)."""
    torch.set_num_threads(1)
    return PPO("MlpPolicy", env, n_steps=32, batch_size=128, learning_rate=3e-3, seed=seed, device="cpu", verbose=0, **kwargs)


def cooperation_probability(model: PPO, obs: np.ndarray) -> float:
    """Mean probability of action 0 (cooperate) that the policy gives ``obs``."""
    with torch.no_grad():
        distribution = model.policy.get_distribution(model.policy.obs_to_tensor(obs)[0])
        return float(distribution.distribution.probs[:, 0].mean())


def test_ppo_learns_the_prisoners_dilemma_direction_of_each_reward_layer():
    """Discrete dilemma: under ``private`` PPO learns to defect (dominant), under ``cooperative`` (team mean) to
    cooperate. The untrained policy cooperates with probability ≈ 0.5 on the first-round observation."""
    learnt = {}
    for reward in ("private", "cooperative"):
        env = vec_env("PrisonersDilemma-v0", num_envs=8, reward=reward, rounds=5)
        env.seed(0)
        model = ppo(env, seed=0)
        first_round = env.reset()
        assert abs(cooperation_probability(model, first_round) - 0.5) < 0.1
        model.learn(4096)
        learnt[reward] = cooperation_probability(model, first_round)
    assert learnt["private"] < 0.2 and learnt["cooperative"] > 0.8, learnt


def mean_unit_contribution(model: PPO, env_id: str, normalizer: VecNormalize, **kwargs) -> float:
    """Mean deterministic action (in ``[-1, 1]``) over a 10-step rollout of 4 fresh games."""
    env = vec_env(env_id, num_envs=4, reward="private", **kwargs)
    env.seed(99)
    obs, actions = env.reset(), []
    for _ in range(10):
        action, _ = model.predict(normalizer.normalize_obs(obs), deterministic=True)
        actions.append(action)
        obs, *_ = env.step(action)
    return float(np.mean(actions))


def test_ppo_learns_the_public_goods_direction_of_each_reward_layer():
    """Continuous env: payoff ``e − a_i + m·Σa/n`` with m/n = 0.75, so contributing lowers the own payoff
    (``private`` → contribute nothing, action −1) and raises the team mean (``cooperative`` → contribute all,
    action 1). The stage payoff ignores the past, hence ``gamma=0``; SB3's ``VecNormalize`` scales the
    observations and rewards. The untrained policy's mean action is ≈ 0 (half the endowment)."""
    kwargs = {"n_agents": 2, "multiplier": 1.5, "max_steps": 10}
    learnt = {}
    for reward in ("private", "cooperative"):
        env = vec_env("PublicGoods-v0", num_envs=8, reward=reward, **kwargs)
        env.seed(0)
        normalized = VecNormalize(env, gamma=0.0)
        model = ppo(normalized, seed=0, gamma=0.0)
        assert abs(mean_unit_contribution(model, "PublicGoods-v0", normalized, **kwargs)) < 0.1
        model.learn(4096)
        learnt[reward] = mean_unit_contribution(model, "PublicGoods-v0", normalized, **kwargs)
    assert learnt["private"] < -0.5 and learnt["cooperative"] > 0.3, learnt


@pytest.mark.parametrize("env_id", ["CoinGame-v0", "Harvest-v0", "DonorGame-v0"])
def test_discrete_adapter_plays_the_parallel_envs_game(env_id):
    """Same seed and random actions: the adapter's game 0 and ``motivegym.parallel_env`` give the same rewards,
    payoffs, observations and episode end (the auto-reset that follows draws from the batched key schedule)."""
    kwargs = {"reward": "private", "max_steps": 4}
    adapter = vec_env(env_id, num_envs=1, agent_id=False, **kwargs)
    parallel = motivegym.parallel_env(env_id, **kwargs)
    agents, n = parallel.possible_agents, adapter.n_agents
    adapter.seed(3)
    observations, _ = parallel.reset(seed=3)
    np.testing.assert_array_equal(adapter.reset(), np.stack([observations[a] for a in agents]))
    rng = np.random.default_rng(0)
    for t in range(4):
        actions = rng.integers(0, adapter.action_space.n, n)
        obs, rewards, dones, infos = adapter.step(actions)
        observations, p_rewards, terminations, truncations, p_infos = parallel.step(dict(zip(agents, actions.tolist(), strict=True)))
        where = f"{env_id} step {t + 1}"
        np.testing.assert_allclose(rewards, [p_rewards[a] for a in agents], rtol=1e-6, err_msg=where)
        np.testing.assert_allclose([i["payoff"] for i in infos], [p_infos[a]["payoff"] for a in agents], rtol=1e-6, err_msg=where)
        assert bool(dones[0]) == (terminations[agents[0]] or truncations[agents[0]]), where
        final = np.stack([i["terminal_observation"] for i in infos]) if dones[0] else obs
        np.testing.assert_allclose(final, np.stack([observations[a] for a in agents]), rtol=1e-6, err_msg=where)
    assert dones.all() and all(info["TimeLimit.truncated"] for info in infos)
