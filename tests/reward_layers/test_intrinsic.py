import functools

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import motivegym
from motivegym.baselines.ppo import MultiAgentPPO, PPOConfig
from motivegym.core.env import Transition
from motivegym.reward_layers import (
    RND,
    CountBonus,
    EpisodicNovelty,
    ImpactBonus,
    LayerSpec,
    LearningProgress,
    WeightedSum,
    integrated,
    private,
    reward_layer,
)
from motivegym.reward_layers.intrinsic import empty_moments, merge_moments

SPEC = LayerSpec(n_agents=2, obs_size=3)
A = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], np.float32)
B = np.array([[0.0, 0.0, 3.0], [2.0, -1.0, 0.0]], np.float32)
NOVEL = np.array([[-2.0, 1.0, 1.0], [1.0, -3.0, -2.0]], np.float32)
W = jnp.array([[0.0, 0.5], [0.5, 0.0]])

LAYERS = {
    "count": CountBonus(),
    "rnd": RND(normalize=False),
    "novelty": EpisodicNovelty(),
    "impact": ImpactBonus(),
    "learning_progress": LearningProgress(),
}


def transition(obs, next_obs, done=False, payoffs=(1.0, 2.0)):
    return Transition(
        obs=jnp.asarray(obs, jnp.float32),
        actions=jnp.zeros(2),
        payoffs=jnp.asarray(payoffs, jnp.float32),
        next_obs=jnp.asarray(next_obs, jnp.float32),
        terminated=jnp.bool_(done),
        truncated=jnp.bool_(False),
        info={"interdependence_weights": W},
    )


@functools.cache
def jitted_apply(layer):
    """One compiled ``apply`` per (hashable) layer configuration: compiling is the slow part of these tests."""
    return jax.jit(layer.apply)


def run(layer, transitions, state=None):
    """Bonus component ``[steps, n]`` (raw bonus) of applying ``layer`` to ``transitions`` in order."""
    state = layer.init(jax.random.PRNGKey(0), SPEC) if state is None else state
    apply = jitted_apply(layer)
    bonuses = []
    for t in transitions:
        state, rewards, parts = apply(state, t)
        bonuses.append(np.asarray(parts["bonus"]))
    return state, np.array(bonuses)


def repeated(next_obs, steps, obs=None):
    return [transition(next_obs if obs is None else obs, next_obs) for _ in range(steps)]


@pytest.mark.parametrize("name", ["count", "rnd", "novelty"])
def test_state_bonus_falls_for_a_repeated_state_and_is_high_for_a_novel_one(name):
    layer = LAYERS[name]
    state, bonus = run(layer, repeated(A, 100))
    assert np.all(bonus[-1] < 0.5 * bonus[0]), bonus[[0, -1]]  # NGU with k=10 saturates at 1/√11
    if name != "rnd":  # counts only grow; an Adam-trained predictor's error may wobble on its way down
        assert np.all(np.diff(bonus[1:], axis=0) <= 1e-6), "the bonus of a repeated state never rises"
    _, novel = run(layer, [transition(A, NOVEL)], state)
    assert np.all(novel[0] > 2 * bonus[-1]), (novel, bonus[-1])


def test_count_bonus_is_one_over_sqrt_of_the_visit_count():
    _, bonus = run(CountBonus(), repeated(A, 9))
    np.testing.assert_allclose(bonus[:, 0], 1 / np.sqrt(np.arange(1, 10)), rtol=1e-6)


def test_impact_is_embedding_change_over_sqrt_episodic_count():
    layer = ImpactBonus()
    alternating = [transition(A, B) if t % 2 == 0 else transition(B, A) for t in range(12)]
    state, bonus = run(layer, alternating)
    assert np.all(bonus[0] > 0)
    # visits of B are steps 0, 2, 4, …: the k-th visit has count k
    np.testing.assert_allclose(bonus[::2, 0], bonus[0, 0] / np.sqrt(np.arange(1, 7)), rtol=1e-5)
    _, novel = run(layer, [transition(A, NOVEL)], state)
    assert np.all(novel[0] > 2 * bonus[-1])
    _, unchanged = run(layer, [transition(A, A)], state)
    np.testing.assert_allclose(unchanged[0], 0.0, atol=1e-6)


def test_learning_progress_rises_while_learning_fades_when_stationary_and_jumps_on_novelty():
    state, bonus = run(LearningProgress(), repeated(A, 300))
    peak = bonus.max(axis=0)
    assert np.all(bonus[0] < 1e-3 * peak)  # bias-corrected EMAs agree on the first step (up to rounding)
    assert np.all(bonus[-1] < 0.2 * peak), (bonus[-1], peak)
    _, novel = run(LearningProgress(), [transition(A, NOVEL)], state)
    assert np.all(novel[0] > 5 * bonus[-1])


@pytest.mark.parametrize("name", ["novelty", "impact"])
def test_episodic_memory_is_emptied_at_episode_end(name):
    layer = LAYERS[name]
    first_episode = [transition(B, A) for _ in range(5)] + [transition(B, A, done=True)]
    _, bonus = run(layer, first_episode + [transition(B, A)])
    np.testing.assert_allclose(bonus[-1], bonus[0], rtol=1e-5)  # the next episode starts afresh
    assert np.all(bonus[-2] < bonus[0])


def test_rnd_predictor_learns_and_observation_moments_match_numpy():
    rng = np.random.default_rng(0)
    observations = rng.normal(size=(30, 2, 3)).astype(np.float32) * [1.0, 5.0, 0.1] + [0.0, 3.0, -1.0]
    for shared in (False, True):
        state, _ = run(RND(normalize=False, shared=shared), [transition(o, o) for o in observations])
        moments = state["core"]["obs_moments"]
        pooled_obs = observations.reshape(1, -1, 3) if shared else observations.transpose(1, 0, 2)
        np.testing.assert_allclose(moments.mean, pooled_obs.mean(axis=1), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(moments.var, pooled_obs.var(axis=1), rtol=1e-4, atol=1e-6)
        assert state["core"]["predictor"][0]["w"].shape[0] == (1 if shared else 2)


def test_welford_merge_matches_numpy_over_uneven_batches():
    rng = np.random.default_rng(1)
    data = rng.normal(3.0, 2.0, size=(4, 57)).astype(np.float32)
    moments = empty_moments((4,))
    for start, stop in [(0, 1), (1, 8), (8, 9), (9, 40), (40, 57)]:
        moments = merge_moments(moments, jnp.asarray(data[:, start:stop]))
    assert float(moments.count) == 57
    np.testing.assert_allclose(moments.mean, data.mean(axis=1), rtol=1e-5)
    np.testing.assert_allclose(moments.var, data.var(axis=1), rtol=1e-4)


def test_reward_normalisation_divides_by_running_std_of_intrinsic_returns():
    layer = CountBonus(normalize=True, gamma=0.9)
    state = layer.init(jax.random.PRNGKey(0), SPEC)
    returns, rewards = [], []
    ret = np.zeros(2)
    for _ in range(6):
        state, reward, parts = layer.apply(state, transition(A, A))
        ret = 0.9 * ret + np.asarray(parts["bonus"])
        returns.append(ret.copy())
        rewards.append(np.asarray(reward))
        std = np.std(returns, axis=0)
        expected = np.asarray(parts["bonus"]) / np.where(std > 0, std, 1.0)
        np.testing.assert_allclose(reward, expected, rtol=1e-4)


def test_coefficient_schedules():
    state = CountBonus().init(jax.random.PRNGKey(0), SPEC)
    for t in (0, 3, 10):
        step = jnp.int32(t)
        np.testing.assert_allclose(CountBonus(coef=2.0, decay=0.9).coefficient(step), 2.0 * 0.9**t, rtol=1e-6)
        np.testing.assert_allclose(CountBonus(coef=2.0, linear_decay_steps=5).coefficient(step), 2.0 * max(0.0, 1 - t / 5), atol=1e-7)
    layer = CountBonus(coef=0.5, decay=0.5)
    for t in range(3):
        state, reward, parts = layer.apply(state, transition(A, A))
        np.testing.assert_allclose(reward, 0.5 * 0.5**t * parts["bonus"], rtol=1e-6)
    with pytest.raises(ValueError, match="one schedule"):
        CountBonus(decay=0.9, linear_decay_steps=10)
    with pytest.raises(ValueError, match="decay"):
        RND(decay=1.5)


def test_per_agent_statistics_are_separate_and_shared_ones_are_pooled():
    """Agent 0 visits state S three times (agent 1 elsewhere), then agent 1 visits S: a new state for agent 1
    per agent, a known one when shared."""
    s, elsewhere = np.array([1.0, 0.0, 0.0]), np.array([0.0, 0.0, 1.0])
    before = [transition(np.stack([s, elsewhere]), np.stack([s, elsewhere])) for _ in range(3)]
    swap = transition(np.stack([elsewhere, s]), np.stack([elsewhere, s]))
    for layer_class in (CountBonus, EpisodicNovelty, RND):
        options = {"normalize": False} if layer_class is RND else {}
        _, separate = run(layer_class(**options), before + [swap])
        _, pooled = run(layer_class(shared=True, **options), before + [swap])
        # per agent, S is at least (almost) as novel for agent 1 as its very first state was
        assert separate[-1, 1] >= 0.99 * separate[0, 1], (layer_class.name, separate[:, 1])
        assert pooled[-1, 1] < 0.9 * separate[-1, 1], (layer_class.name, pooled[-1, 1], separate[-1, 1])
    _, counts = run(CountBonus(shared=True), before + [swap])
    np.testing.assert_allclose(counts[-1, 1], 1 / np.sqrt(4))  # three visits by agent 0, one by agent 1


@pytest.mark.slow  # default suite time (CI: keep the default run under ~10 min on 2 cores)
def test_layer_states_carry_through_jit_vmap_over_envs_and_scan():
    """All five layers as one sum (one compilation), vmapped over 8 envs and scanned over 50 steps."""
    layer = WeightedSum(tuple((1.0, LAYERS[name]) for name in sorted(LAYERS)))
    num_envs, steps = 8, 50
    rng = np.random.default_rng(2)
    obs = rng.integers(0, 3, size=(steps + 1, num_envs, 2, 3)).astype(np.float32)
    done = rng.random((steps, num_envs)) < 0.1
    batch = Transition(
        obs=jnp.asarray(obs[:-1]),
        actions=jnp.zeros((steps, num_envs, 2)),
        payoffs=jnp.zeros((steps, num_envs, 2)),
        next_obs=jnp.asarray(obs[1:]),
        terminated=jnp.asarray(done),
        truncated=jnp.zeros((steps, num_envs), bool),
        info={},
    )
    keys = jax.random.split(jax.random.PRNGKey(3), num_envs)
    bonus_names = [f"{name}.bonus" for name in sorted(LAYERS)]

    @jax.jit
    def scanned(keys, batch):
        states = jax.vmap(lambda k: layer.init(k, SPEC))(keys)

        def body(states, t):
            states, rewards, parts = jax.vmap(layer.apply)(states, t)
            return states, {name: parts[name] for name in bonus_names}

        return jax.lax.scan(body, states, batch)

    states, bonuses = scanned(keys, batch)
    # env 3 of the batch is exactly the same layer run alone, step by step
    state = layer.init(keys[3], SPEC)
    single = []
    for t in range(steps):
        state, _, parts = jitted_apply(layer)(state, jax.tree.map(lambda x, t=t: x[t, 3], batch))
        single.append({name: parts[name] for name in bonus_names})
    for term, name in enumerate(bonus_names):
        assert bonuses[name].shape == (steps, num_envs, 2) and np.isfinite(bonuses[name]).all(), name
        np.testing.assert_array_equal(states[term]["step"], np.full(num_envs, steps))
        alone = np.array([s[name] for s in single])
        np.testing.assert_allclose(alone, bonuses[name][:, 3], rtol=2e-4, atol=1e-5, err_msg=name)
        np.testing.assert_allclose(states[term]["totals"]["bonus"][3], alone.sum(axis=0), rtol=1e-4, err_msg=name)


def test_string_names_coefficients_and_sums():
    assert reward_layer("rnd") == RND()
    assert reward_layer("count:0.1") == CountBonus(coef=0.1)
    assert reward_layer("novelty:2") == EpisodicNovelty(coef=2.0)
    assert reward_layer("impact") == ImpactBonus() and reward_layer("learning_progress:0.5") == LearningProgress(coef=0.5)
    layer = reward_layer("integrated + 0.05*rnd")
    assert layer == integrated() + 0.05 * RND()
    assert reward_layer("private+1e-3*count") == private() + 1e-3 * CountBonus()
    assert reward_layer("0.5*count") == WeightedSum(((0.5, CountBonus()),))
    with pytest.raises(ValueError, match="needs a number"):
        reward_layer("rnd:big")
    with pytest.raises(ValueError, match="must be a number"):
        reward_layer("integrated+x*rnd")
    with pytest.raises(ValueError, match="empty term"):
        reward_layer("integrated+")
    with pytest.raises(ValueError, match="did you mean 'rnd'"):
        reward_layer("integrated+0.05*rdn")


def test_composition_with_integrated_logs_each_component():
    layer = reward_layer("integrated+0.05*rnd")
    state = layer.init(jax.random.PRNGKey(0), SPEC)
    _, rewards, parts = jitted_apply(layer)(state, transition(A, B, payoffs=(10.0, 20.0)))
    assert {"integrated", "integrated.partner", "rnd", "rnd.bonus"} <= set(parts)
    np.testing.assert_allclose(parts["integrated"], [20.0, 25.0])
    np.testing.assert_allclose(rewards, parts["integrated"] + parts["rnd"], rtol=1e-6)
    assert np.all(np.asarray(parts["rnd"]) > 0)


def test_through_gymnasium_make_components_are_in_info():
    env = gymnasium.make("motivegym/TrustDilemma-v0", reward="integrated+0.05*count", max_steps=5, scalarize=None)
    env.reset(seed=0)
    bonuses = []
    for _ in range(12):  # across an episode boundary: the layer state is kept by reset() without a seed
        _, reward, terminated, truncated, info = env.step(np.full(2, 20.0, np.float32))
        parts = info["reward_components"]
        np.testing.assert_allclose(reward, parts["integrated"] + parts["count"], rtol=1e-5)
        bonuses.append(parts["count.bonus"] / 0.05)
        if terminated or truncated:
            env.reset()
    assert bonuses[-1].max() < bonuses[0].min(), "the same constant action revisits the same hashed states"


@pytest.mark.slow  # a long end-to-end run: .ci/run runs it with -m slow
def test_inside_multi_agent_ppo_for_a_tiny_budget():
    env, params = motivegym.make_jax("TrustDilemma-v0", max_steps=25)
    config = PPOConfig(total_steps=200, num_envs=2, num_steps=50, update_epochs=1, num_minibatches=2, hidden_sizes=(16,))
    algo = MultiAgentPPO(env, params, integrated() + 0.05 * RND(), config)
    runner, metrics = jax.jit(algo.make_train())(jax.random.PRNGKey(0), 0)
    rnd_state = runner["layer_states"]["states"][0][1]  # LayerChoice → WeightedSum terms → RND
    steps_per_env = config.num_updates * config.num_steps
    np.testing.assert_array_equal(rnd_state["step"], np.full(config.num_envs, steps_per_env))
    bonus = np.asarray(rnd_state["totals"]["bonus"])
    assert bonus.shape == (config.num_envs, 2) and np.all(bonus > 0)
    assert np.isfinite(np.asarray(metrics["episode_reward"])).all()
    done = np.asarray(metrics["episodes"]) > 0
    reward, payoff = np.asarray(metrics["episode_reward"])[done], np.asarray(metrics["episode_payoff"])[done]
    assert not np.allclose(reward, payoff), "the rewards include the partner term and the bonus"


def test_intrinsic_arguments_are_finite_and_in_range():
    for spec, argument in (("count:nan", "coef"), ("rnd:inf", "coef"), ("novelty:1e39", "coef"), ("impact:-inf", "coef")):
        with pytest.raises(ValueError, match=rf"{argument}=\S+ is invalid"):
            reward_layer(spec)
    bad = [
        (lambda: CountBonus(bits=2.5), "bits"),
        (lambda: CountBonus(table_bits=30), "table_bits"),
        (lambda: RND(hidden=0), "hidden"),
        (lambda: RND(learning_rate=float("nan")), "learning_rate"),
        (lambda: RND(gamma=1.0), "gamma"),
        (lambda: CountBonus(linear_decay_steps=float("nan")), "linear_decay_steps"),
        (lambda: EpisodicNovelty(kernel_epsilon=0.0), "kernel_epsilon"),
        (lambda: EpisodicNovelty(embedding="pixels"), "embedding"),
        (lambda: LearningProgress(fast_rate=float("inf")), "fast_rate"),
        (lambda: ImpactBonus(normalize="yes"), "normalize"),
    ]
    for make, argument in bad:
        with pytest.raises(ValueError, match=rf"{argument}=\S+ is invalid"):
            make()
