"""IQL / VDN / QMIX: TD targets on hand-made batches, mixer monotonicity, replay ring buffer,
exploration schedule, and a small statistical learning test on discretised TrustDilemma."""

import csv

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import motivegym
from motivegym.baselines.value_based import (
    MultiAgentQLearning,
    ValueConfig,
    episode_payoffs,
    epsilon_greedy,
    epsilon_schedule,
    iql_targets,
    mixer_init,
    next_action_values,
    qmix_mix,
    qmix_targets,
    replay_add,
    replay_init,
    replay_sample,
    taken_action_values,
    td_loss,
    team_reward,
    update_target,
    vdn_targets,
)
from motivegym.envs.wrappers import discretized
from motivegym.reward_layers import private

# a batch of B=2 transitions, n=2 agents, A=3 actions
NEXT_Q_ONLINE = jnp.array([[[0.0, 5.0, 1.0], [2.0, 0.0, 0.0]], [[3.0, 0.0, 0.0], [0.0, 0.0, 9.0]]])
NEXT_Q_TARGET = jnp.array([[[4.0, 1.0, 2.0], [0.5, 3.0, 0.0]], [[1.0, 6.0, 0.0], [2.0, 0.0, 7.0]]])
REWARDS = jnp.array([[1.0, 2.0], [3.0, -1.0]])
TERMINATED = jnp.array([False, True])
GAMMA = 0.5


def test_gather_of_taken_actions():
    q = jnp.array([[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], [[7.0, 8.0, 9.0], [10.0, 11.0, 12.0]]])
    actions = jnp.array([[2, 0], [1, 1]])
    np.testing.assert_array_equal(taken_action_values(q, actions), [[3.0, 4.0], [8.0, 11.0]])


def test_iql_targets_take_the_max_of_the_target_net_and_mask_terminal_steps():
    targets = iql_targets(REWARDS, TERMINATED, NEXT_Q_ONLINE, NEXT_Q_TARGET, GAMMA, double_q=False)
    # first transition: r + 0.5 * max target Q = (1 + 0.5*4, 2 + 0.5*3); second is terminal: r only
    np.testing.assert_allclose(targets, [[3.0, 3.5], [3.0, -1.0]])


def test_double_q_selects_with_the_online_net_and_evaluates_with_the_target_net():
    # online argmax: agent 0 → action 1, agent 1 → action 0 (first row); target values there are 1 and 0.5
    np.testing.assert_allclose(next_action_values(NEXT_Q_ONLINE, NEXT_Q_TARGET, double_q=True), [[1.0, 0.5], [1.0, 7.0]])
    targets = iql_targets(REWARDS, TERMINATED, NEXT_Q_ONLINE, NEXT_Q_TARGET, GAMMA, double_q=True)
    np.testing.assert_allclose(targets, [[1.5, 2.25], [3.0, -1.0]])


def test_vdn_targets_sum_the_agents_next_values():
    team = team_reward(REWARDS, "sum")
    np.testing.assert_allclose(team, [3.0, 2.0])
    targets = vdn_targets(team, TERMINATED, NEXT_Q_ONLINE, NEXT_Q_TARGET, GAMMA, double_q=False)
    np.testing.assert_allclose(targets, [3.0 + 0.5 * (4.0 + 3.0), 2.0])
    double = vdn_targets(team, TERMINATED, NEXT_Q_ONLINE, NEXT_Q_TARGET, GAMMA, double_q=True)
    np.testing.assert_allclose(double, [3.0 + 0.5 * (1.0 + 0.5), 2.0])
    np.testing.assert_allclose(team_reward(REWARDS, "mean"), [1.5, 1.0])


def hand_mixer(scale=1.0):
    """State size 1, hidden 1, embed 1, t = tanh(s): W1 = (t, −2t)·scale, b1 = 0, W2 = −t, V = 3t."""
    dense = lambda w, b: {"w": jnp.array(w, jnp.float32), "b": jnp.array(b, jnp.float32)}  # noqa: E731
    tanh_of_state = dense([[1.0]], [0.0])
    return {
        "w1": [tanh_of_state, dense([[scale, -2.0 * scale]], [0.0, 0.0])],
        "b1": [tanh_of_state, dense([[0.0]], [0.0])],
        "w2": [tanh_of_state, dense([[-1.0]], [0.0])],
        "v": [tanh_of_state, dense([[3.0]], [0.0])],
    }


def test_qmix_mix_uses_absolute_hypernetwork_weights_elu_and_state_value():
    values = jnp.array([[1.0, -2.0], [0.5, 0.25]])
    states = jnp.array([[2.0], [1.0]])
    # row 0 (t = tanh 2): |W1| = (t, 2t), hidden = elu(t − 4t) = e^(−3t) − 1, |W2| = t, V = 3t
    # row 1 (t = tanh 1): |W1| = (t, 2t), hidden = elu(0.5t + 0.5t) = t, |W2| = t, V = 3t
    t0, t1 = np.tanh(2.0), np.tanh(1.0)
    expected = [np.expm1(-3 * t0) * t0 + 3 * t0, t1 * t1 + 3 * t1]
    np.testing.assert_allclose(qmix_mix(hand_mixer(), values, states), expected, rtol=1e-6)


def test_qmix_targets_go_through_the_target_mixer_with_the_next_states():
    states = jnp.array([[2.0], [1.0]])
    team = team_reward(REWARDS, "sum")
    targets = qmix_targets(team, TERMINATED, NEXT_Q_ONLINE, NEXT_Q_TARGET, hand_mixer(), states, GAMMA, double_q=False)
    mixed = qmix_mix(hand_mixer(), jnp.array([[4.0, 3.0], [6.0, 7.0]]), states)
    np.testing.assert_allclose(targets, [3.0 + 0.5 * float(mixed[0]), 2.0], rtol=1e-6)
    other = qmix_targets(team, TERMINATED, NEXT_Q_ONLINE, NEXT_Q_TARGET, hand_mixer(scale=-3.0), states, GAMMA, double_q=False)
    assert float(other[0]) != float(targets[0])  # the mixer matters


@pytest.mark.parametrize("seed", range(4))
def test_qmix_is_monotone_in_every_agent_value(seed):
    key_params, key_states, key_values = jax.random.split(jax.random.PRNGKey(seed), 3)
    mixer = jax.jit(mixer_init, static_argnums=(1, 2, 3))(key_params, 3, 5, 8)
    mixer = jax.tree.map(lambda x: x * 3.0, mixer)  # large weights of both signs
    states = 4.0 * jax.random.normal(key_states, (64, 5))
    values = 5.0 * jax.random.normal(key_values, (64, 3))
    gradients = jax.jit(jax.vmap(jax.grad(lambda q, s: qmix_mix(mixer, q, s))))(values, states)
    assert gradients.shape == (64, 3) and float(gradients.min()) >= 0.0 and float(gradients.max()) > 0.0


def test_losses():
    prediction, target = jnp.array([0.0, 0.5, 3.0]), jnp.array([0.0, 0.0, 0.0])
    np.testing.assert_allclose(td_loss(prediction, target, "mse"), (0.25 + 9.0) / 3)
    np.testing.assert_allclose(td_loss(prediction, target, "huber"), (0.125 + 2.5) / 3)


def test_replay_buffer_wraps_around_and_samples_only_filled_slots():
    buffer = replay_init({"x": jnp.zeros(2), "flag": jnp.bool_(False)}, capacity=5)
    add = lambda buffer, values: replay_add(buffer, {"x": jnp.stack([values, -values], 1), "flag": values > 2})  # noqa: E731
    buffer = add(buffer, jnp.array([1.0, 2.0, 3.0]))
    assert int(buffer.size) == 3 and int(buffer.position) == 3
    samples = replay_sample(buffer, jax.random.PRNGKey(0), 200)
    assert set(np.asarray(samples["x"][:, 0]).tolist()) == {1.0, 2.0, 3.0}
    buffer = add(buffer, jnp.array([4.0, 5.0, 6.0]))
    assert int(buffer.size) == 5 and int(buffer.position) == 1
    np.testing.assert_array_equal(buffer.data["x"][:, 0], [6.0, 2.0, 3.0, 4.0, 5.0])
    np.testing.assert_array_equal(buffer.data["x"][:, 1], [-6.0, -2.0, -3.0, -4.0, -5.0])
    np.testing.assert_array_equal(buffer.data["flag"], [True, False, True, True, True])


def test_epsilon_decays_linearly_then_stays_at_the_final_value():
    values = [float(epsilon_schedule(t, 1.0, 0.1, 100.0)) for t in (0, 50, 100, 1000)]
    np.testing.assert_allclose(values, [1.0, 0.55, 0.1, 0.1], rtol=1e-6)


def test_epsilon_greedy_is_greedy_at_zero_and_uniform_at_one():
    q = jnp.broadcast_to(jnp.array([0.0, 2.0, 1.0]), (2000, 3))
    np.testing.assert_array_equal(epsilon_greedy(jax.random.PRNGKey(0), q, 0.0), 1)
    counts = np.bincount(np.asarray(epsilon_greedy(jax.random.PRNGKey(0), q, 1.0)), minlength=3)
    assert np.all(np.abs(counts - 2000 / 3) < 100), counts


def test_target_update_hard_copy_every_interval_or_polyak():
    online, target = {"w": jnp.array(1.0)}, {"w": jnp.array(0.0)}
    assert float(update_target(online, target, jnp.int32(3), 1.0, 4)["w"]) == 0.0
    assert float(update_target(online, target, jnp.int32(8), 1.0, 4)["w"]) == 1.0
    np.testing.assert_allclose(update_target(online, target, jnp.int32(3), 0.25, 4)["w"], 0.25)


def test_config_and_env_validation():
    with pytest.raises(ValueError, match="did you mean 'qmix'"):
        ValueConfig(algorithm="qmx")
    with pytest.raises(ValueError, match="loss"):
        ValueConfig(loss="l1")
    with pytest.raises(ValueError, match="buffer_size"):
        ValueConfig(buffer_size=4, num_envs=8)
    with pytest.raises(ValueError, match="tau"):
        ValueConfig(tau=0.0)
    env, params = motivegym.make_jax("TrustDilemma-v0")
    with pytest.raises(ValueError, match="DiscretizedActions"):
        MultiAgentQLearning(env, params, private(), ValueConfig())


@pytest.mark.parametrize("share", [True, False], ids=["shared", "per-agent"])
def test_q_values_shape_and_per_agent_parameters(share):
    env, params = discretized("TrustDilemma-v0", bins=5, max_steps=5)
    algo = MultiAgentQLearning(env, params, private(), ValueConfig(share_parameters=share))
    networks = jax.jit(algo.init_networks)(jax.random.PRNGKey(0))
    obs = jax.random.normal(jax.random.PRNGKey(1), (7, 2, algo.obs_size))
    q_values = jax.jit(algo.q_values)
    q = q_values(networks, obs)
    assert q.shape == (7, 2, 5)
    if not share:  # agent 1's network ignores agent 0's parameters
        zeroed = jax.tree.map(lambda x: x.at[0].set(0.0), networks)
        np.testing.assert_array_equal(q_values(zeroed, obs)[:, 1], q[:, 1])


def test_train_vmaps_over_seeds_and_reward_layers():
    """Traced only (no compile): QMIX uses every part of the carry (mixer, state statistics)."""
    from motivegym.reward_layers import cooperative, integrated

    env, params = discretized("TrustDilemma-v0", bins=3, max_steps=5)
    config = ValueConfig(algorithm="qmix", total_steps=64, num_envs=2, num_steps=8, buffer_size=16, batch_size=4, share_parameters=False)
    algo = MultiAgentQLearning(env, params, (private(), integrated(), cooperative()), config)
    train = jax.vmap(jax.vmap(algo.make_train(), in_axes=(0, None)), in_axes=(None, 0))
    runner, metrics = jax.eval_shape(train, jax.random.split(jax.random.PRNGKey(0), 2), jnp.arange(3))
    assert metrics["episode_reward"].shape == (3, 2, config.num_updates, 2)
    assert metrics["loss"].shape == (3, 2, config.num_updates)
    assert runner["buffer"].data["obs"].shape == (3, 2, 16, 2, algo.obs_size)


SEEDS = 3


# One learning test keeps this file's compile time small on a CPU runner: IQL here, QMIX end to end
# in the train-command test below, VDN and QMIX targets on the hand-made batches above.
@pytest.mark.slow  # a long end-to-end run: .ci/run runs it with -m slow
def test_iql_training_beats_the_random_and_the_initial_policy():
    env, params = discretized("TrustDilemma-v0", bins=11, max_steps=25)
    config = ValueConfig(
        algorithm="iql", total_steps=8_000, num_envs=8, num_steps=100, buffer_size=5_000, learning_starts=500,
        batch_size=64, hidden_sizes=(32, 32), target_update_interval=50,
    )
    algo = MultiAgentQLearning(env, params, private(), config)
    _, init, run = algo.make_stages()
    eval_key = jax.random.PRNGKey(123)

    def train_and_evaluate(key):
        untrained = init(key, 0)
        runner, metrics = run(untrained, config.num_updates)
        policy = lambda r: {"networks": r["networks"], "obs_stats": r["obs_stats"]}  # noqa: E731
        both = jax.tree.map(lambda a, b: jnp.stack([a, b]), policy(runner), policy(untrained))
        welfare = jax.vmap(lambda r: episode_payoffs(algo, r, eval_key, 16).sum(-1).mean())(both)
        return welfare[0], welfare[1], metrics

    trained, initial, metrics = jax.jit(jax.vmap(train_and_evaluate))(jax.random.split(jax.random.PRNGKey(0), SEEDS))
    random = float(episode_payoffs(algo, None, eval_key, 64, "random").sum(-1).mean())
    trained, initial = np.asarray(trained), np.asarray(initial)
    assert trained.mean() > random + 1500 and trained.mean() > initial.mean() + 100, (trained, initial, random)
    curve = np.asarray(metrics["episode_payoff"]).sum(-1).mean(0)
    assert curve[-3:].mean() > curve[:2].mean() + 1000, curve
    vector_steps = config.num_updates * config.num_steps
    first_ready = -(-config.learning_starts // config.num_envs)  # first step with ≥ learning_starts stored transitions
    np.testing.assert_array_equal(np.asarray(metrics["gradient_steps"])[:, -1], vector_steps - first_ready + 1)


@pytest.mark.slow  # default suite time (CI: keep the default run under ~10 min on 2 cores)
def test_train_command_discretises_and_writes_curve_and_checkpoint(tmp_path, capsys):
    from motivegym.baselines.train import train_cli

    out = tmp_path / "run"
    assert train_cli("qmix", "TrustDilemma-v0", "private", 2, 2048, str(out), num_envs=4, num_steps=32, bins=5) == 0
    printed = capsys.readouterr().out
    assert "5 evenly spaced actions" in printed and "greedy evaluation welfare" in printed
    rows = list(csv.DictReader(open(out / "learning_curve.csv")))
    assert len(rows) == 2 * 16 and {r["seed"] for r in rows} == {"0", "1"}
    assert np.isfinite(float(rows[-1]["welfare"]))
    assert (out / "learning_curve.png").stat().st_size > 1000
    from safetensors.numpy import load_file

    assert any(k.startswith("networks/q/") for k in load_file(out / "checkpoints" / "seed1.safetensors"))
    assert any(k.startswith("networks/mixer/") for k in load_file(out / "checkpoints" / "seed0.safetensors"))
