"""IPPO/MAPPO learn on TrustDilemma and on the discrete Prisoner's Dilemma (statistical, several seeds; no timing assertions)."""

import jax
import numpy as np
import pytest

import motivegym
from motivegym.baselines.ppo import MultiAgentPPO, PPOConfig, episode_payoffs
from motivegym.reward_layers import cooperative, integrated, private

SEEDS = 3


@pytest.fixture(scope="module")
def trust_dilemma():
    return motivegym.make_jax("TrustDilemma-v0", max_steps=25)


def trained_initial_and_random_welfare(algo: MultiAgentPPO, seed: int, eval_seed: int, episodes: int = 32):
    """``((welfare per trained seed, untrained-policy welfare, Random welfare), training metrics)`` on shared eval keys."""
    seeds = jax.random.split(jax.random.PRNGKey(seed), SEEDS)
    runners, metrics = jax.jit(jax.vmap(algo.make_train(), in_axes=(0, None)))(seeds, 0)
    eval_key = jax.random.PRNGKey(eval_seed)
    trained = [float(episode_payoffs(algo, jax.tree.map(lambda x, s=s: x[s], runners), eval_key, episodes).sum(-1).mean()) for s in range(SEEDS)]
    untrained_runner = {"networks": algo.init_networks(jax.random.PRNGKey(9)), "obs_stats": jax.tree.map(lambda x: x[0], runners["obs_stats"])}
    initial = float(episode_payoffs(algo, untrained_runner, eval_key, episodes, "sample").sum(-1).mean())
    random = float(episode_payoffs(algo, None, eval_key, episodes, "random").sum(-1).mean())
    return (trained, initial, random), metrics


@pytest.mark.slow  # the discrete-dilemma test below is the default run's learning check
@pytest.mark.parametrize("centralized", [False, True], ids=["ippo", "mappo"])
def test_training_beats_initial_and_random_policies(trust_dilemma, centralized):
    env, params = trust_dilemma
    config = PPOConfig(total_steps=60_000, num_envs=16, num_steps=100, centralized_critic=centralized)
    algo = MultiAgentPPO(env, params, private(), config)
    (trained, initial, random), metrics = trained_initial_and_random_welfare(algo, seed=0, eval_seed=123)
    assert min(trained) > initial + 500 and min(trained) > random + 500, (trained, initial, random)
    curve = np.asarray(metrics["episode_payoff"]).sum(-1).mean(0)
    assert curve[-5:].mean() > curve[:3].mean()


def test_vmapped_over_seeds_and_reward_layers_in_one_call(trust_dilemma):
    env, params = trust_dilemma
    config = PPOConfig(total_steps=3_200, num_envs=8, num_steps=25, share_parameters=False)
    algo = MultiAgentPPO(env, params, (private(), integrated(), cooperative()), config)
    train = jax.vmap(jax.vmap(algo.make_train(), in_axes=(0, None)), in_axes=(None, 0))
    seeds = jax.random.split(jax.random.PRNGKey(0), 2)
    _, metrics = jax.jit(train)(seeds, np.arange(3))
    rewards = np.asarray(metrics["episode_reward"])  # [layer, seed, update, agent]
    payoffs = np.asarray(metrics["episode_payoff"])
    assert rewards.shape == (3, 2, config.num_updates, 2)
    done = np.asarray(metrics["episodes"]) > 0
    # private reward is the payoff; integrated adds partner terms; cooperative is equal across agents
    np.testing.assert_allclose(rewards[0][done[0]], payoffs[0][done[0]], rtol=1e-5)
    assert np.all(rewards[1][done[1]] > payoffs[1][done[1]])
    np.testing.assert_allclose(rewards[2][done[2]][:, 0], rewards[2][done[2]][:, 1], rtol=1e-5)


@pytest.mark.slow  # a long end-to-end run: .ci/run runs it with -m slow
@pytest.mark.parametrize("centralized", [False, True], ids=["ippo", "mappo"])
def test_training_on_a_discrete_dilemma_beats_initial_and_random_policies(centralized):
    """Prisoner's Dilemma under the cooperative (team-mean) reward: mutual cooperation (welfare 6 per round)
    beats the untrained policy and Random (welfare 4.5 per round in expectation)."""
    env, params = motivegym.make_jax("PrisonersDilemma-v0", max_steps=10)
    config = PPOConfig(total_steps=20_480, num_envs=16, num_steps=40, centralized_critic=centralized, ent_coef=0.01)
    algo = MultiAgentPPO(env, params, cooperative(), config)
    (trained, initial, random), _ = trained_initial_and_random_welfare(algo, seed=1, eval_seed=7)
    assert min(trained) > initial + 5 and min(trained) > random + 5, (trained, initial, random)


@pytest.mark.parametrize("share", [True, False], ids=["shared", "per-agent"])
@pytest.mark.parametrize("hidden", [(16, 8), ()], ids=["mlp", "linear"])
def test_centralized_critic_equals_the_dense_network_on_state_and_agent_id(share, hidden):
    """MAPPO's critic is MLP_i([global state, one-hot i]) for every agent i (computed without n state copies)."""
    from motivegym.baselines.networks import mlp_apply

    env, params = motivegym.make_jax("PlatformEcosystem-v0")
    algo = MultiAgentPPO(env, params, (private(),), PPOConfig(centralized_critic=True, share_parameters=share, hidden_sizes=hidden))
    networks = algo.init_networks(jax.random.PRNGKey(1))
    networks = jax.tree.map(lambda w: w + 0.1 * jax.random.normal(jax.random.PRNGKey(2), w.shape), networks)  # non-zero biases
    n, batch = algo.n_agents, (3, 2)
    state = jax.random.normal(jax.random.PRNGKey(3), batch + (algo.state_size,))
    obs = jax.random.normal(jax.random.PRNGKey(4), batch + (n, algo.obs_size))
    values = np.asarray(algo.value(networks, obs, state))
    assert values.shape == batch + (n,)
    for i in range(n):
        inputs = np.concatenate([np.asarray(state), np.broadcast_to(np.eye(n)[i], batch + (n,))], axis=-1)
        layers = networks["critic"] if share else jax.tree.map(lambda w, i=i: w[i], networks["critic"])
        np.testing.assert_allclose(values[..., i], np.asarray(mlp_apply(layers, inputs))[..., 0], rtol=2e-4, atol=2e-4)
