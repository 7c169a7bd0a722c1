"""The model-based and selection intrinsic layers (ICM, disagreement, E3B, RE3, empowerment, auto): each bonus
behaves as its docstring formula says on tiny hand-made transitions."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import motivegym
from motivegym.baselines.ppo import MultiAgentPPO, PPOConfig
from motivegym.core.env import Transition
from motivegym.experiments.intrinsic import parse_layers
from motivegym.reward_layers import (
    E3B,
    ICM,
    INTRINSIC_LAYER_NAMES,
    RE3,
    AutoBonus,
    Disagreement,
    Empowerment,
    LayerSpec,
    WeightedSum,
    reward_layer,
)

SPEC = LayerSpec(n_agents=2, obs_size=3, action_size=4)
A = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], np.float32)
B = np.array([[0.0, 0.0, 3.0], [2.0, -1.0, 0.0]], np.float32)
SMALL = {"hidden": 16, "embed_size": 8}
FAST = {**SMALL, "learning_rate": 3e-3}  # models that fit a repeated transition within 200 steps


def transition(obs, next_obs, actions=(1, 2), done=False, payoffs=(0.0, 0.0)):
    return Transition(
        obs=jnp.asarray(obs, jnp.float32),
        actions=jnp.asarray(actions),
        payoffs=jnp.asarray(payoffs, jnp.float32),
        next_obs=jnp.asarray(next_obs, jnp.float32),
        terminated=jnp.bool_(done),
        truncated=jnp.bool_(False),
        info={},
    )


def stack(transitions):
    return jax.tree.map(lambda *x: jnp.stack(x), *transitions)


@functools.cache
def scanned_apply(layer, spec=SPEC):
    """``(state, batch) -> (state, bonus [steps, n])``: ``layer.apply`` scanned over a stacked batch, compiled once."""

    def run(state, batch):
        def body(state, t):
            state, _, parts = layer.apply(state, t)
            return state, parts["bonus"]

        return jax.lax.scan(body, state, batch)

    return jax.jit(run)


def run(layer, transitions, state=None, spec=SPEC):
    state = layer.init(jax.random.PRNGKey(0), spec) if state is None else state
    state, bonus = scanned_apply(layer, spec)(state, stack(transitions))
    return state, np.asarray(bonus)


# ----- ICM and disagreement: forward-model error falls on a repeated transition -----
@pytest.mark.parametrize(
    "layer, actions, spec",
    [
        (ICM(**FAST), (1, 2), SPEC),
        (ICM(**FAST), np.array([0.3, -0.7], np.float32), LayerSpec(n_agents=2, obs_size=3)),  # continuous
        (Disagreement(**FAST), (1, 2), SPEC),
    ],
    ids=["icm-discrete", "icm-continuous", "disagreement"],
)
def test_forward_model_bonus_falls_on_a_repeated_transition_and_stays_high_for_a_new_one(layer, actions, spec):
    seen = transition(A, B, actions)
    state, bonus = run(layer, [seen] * 200, spec=spec)
    assert np.all(bonus[0] > 0) and np.all(bonus[-1] < 0.1 * bonus[0]), bonus[[0, -1]]
    _, novel = run(layer, [transition(B, -3.0 * A, actions)], state=state, spec=spec)
    assert np.all(novel[0] > 5 * bonus[-1]), (novel, bonus[-1])


def test_icm_bonus_is_half_the_squared_forward_error_of_its_own_models():
    layer = ICM(**SMALL)
    state = layer.init(jax.random.PRNGKey(1), SPEC)
    _, _, parts = jax.jit(layer.apply)(state, transition(A, B))
    model = state["core"]["model"]
    relu = functools.partial(jax.nn.leaky_relu)
    expected = []
    for i in range(2):
        m = jax.tree.map(lambda p, i=i: p[i], model)
        phi = relu(A[i] @ m["embed"][0]["w"] + m["embed"][0]["b"]) @ m["embed"][1]["w"] + m["embed"][1]["b"]
        phi_next = relu(B[i] @ m["embed"][0]["w"] + m["embed"][0]["b"]) @ m["embed"][1]["w"] + m["embed"][1]["b"]
        x = np.concatenate([phi, np.eye(4)[[1, 2][i]]])
        predicted = relu(x @ m["forward"][0]["w"] + m["forward"][0]["b"]) @ m["forward"][1]["w"] + m["forward"][1]["b"]
        expected.append(0.5 * np.sum((predicted - phi_next) ** 2))
    np.testing.assert_allclose(parts["bonus"], expected, rtol=1e-4)


def test_disagreement_is_zero_when_the_members_agree():
    layer = Disagreement(**SMALL)
    state = layer.init(jax.random.PRNGKey(0), SPEC)
    agreeing = jax.tree.map(lambda p: jnp.broadcast_to(p[:, :1], p.shape), state["core"]["models"])  # member 0 everywhere
    state = {**state, "core": {**state["core"], "models": agreeing}}
    _, bonus = run(layer, [transition(A, B)], state=state)
    np.testing.assert_allclose(bonus, 0.0, atol=1e-8)


# ----- E3B: elliptical bonus shrinks within an episode and resets at its end -----
def test_e3b_repeated_state_follows_sherman_morrison_and_resets_at_episode_end():
    layer = E3B(embedding="projection", embed_size=4, ridge=0.5)
    state = layer.init(jax.random.PRNGKey(0), SPEC)
    phi = B @ np.asarray(state["core"]["projection"])
    first = np.sum(phi**2, axis=-1) / 0.5  # φᵀ (I/λ) φ
    steps = [transition(A, B, done=(t == 3)) for t in range(6)]
    _, bonus = run(layer, steps, state=state)
    np.testing.assert_allclose(bonus[0], first, rtol=1e-4)
    for t in (1, 2, 3):  # b ← b / (1 + b) for a repeated embedding
        np.testing.assert_allclose(bonus[t], bonus[t - 1] / (1 + bonus[t - 1]), rtol=1e-3)
    np.testing.assert_allclose(bonus[4], first, rtol=1e-4)  # the episode ended after step 3: C⁻¹ = I/λ again
    np.testing.assert_allclose(bonus[5], bonus[1], rtol=1e-3)


def test_e3b_with_a_learned_inverse_dynamics_embedding_shrinks_and_resets():
    steps = [transition(A, B, done=(t == 9)) for t in range(12)]
    _, bonus = run(E3B(**SMALL), steps)
    # a fixed φ would give b_t = b_0 / (1 + t b_0); the learned φ moves a little between steps
    assert np.all(bonus[1:10] < 0.05 * bonus[0]) and np.all(bonus[9] < bonus[1]), bonus[:10]
    assert np.all(bonus[10] > 10 * bonus[9]), (bonus[9], bonus[10])


def test_e3b_bonus_of_an_orthogonal_state_is_unchanged_by_earlier_states():
    """``φ(s')`` orthogonal to every earlier embedding: ``C⁻¹φ = φ/λ``, so the bonus is its first-visit value."""
    layer = E3B(embedding="projection", embed_size=3, ridge=1.0)
    state = layer.init(jax.random.PRNGKey(0), LayerSpec(n_agents=2, obs_size=3))
    state["core"]["projection"] = jnp.eye(3)
    e0, e1, e2 = np.eye(3, dtype=np.float32)
    _, bonus = run(layer, [transition(A, np.stack([e0, e0])), transition(A, np.stack([e1, e0]))], state=state, spec=LayerSpec(2, 3))
    np.testing.assert_allclose(bonus[:, 0], [1.0, 1.0], rtol=1e-5)
    np.testing.assert_allclose(bonus[:, 1], [1.0, 0.5], rtol=1e-5)


# ----- RE3: k-NN distance in a fixed random encoder's space -----
def test_re3_is_log_one_plus_the_kth_neighbour_distance_and_larger_for_isolated_states():
    layer = RE3(memory_size=16, neighbours=3, **SMALL)
    rng = np.random.default_rng(0)
    cluster = [np.tile([1.0, 1.0, 0.0], (2, 1)) + 0.05 * rng.standard_normal((2, 3)) for _ in range(8)]
    state, bonus = run(layer, [transition(A, c) for c in cluster])
    assert np.all(bonus[0] == 0.0), "an empty buffer gives no bonus"
    probe = np.array([[1.0, 1.0, 0.02], [4.0, -3.0, 2.0]], np.float32)  # agent 0 in the cluster, agent 1 isolated
    _, probe_bonus = run(layer, [transition(A, probe)], state=state)
    assert probe_bonus[0, 1] > 3 * probe_bonus[0, 0], probe_bonus

    core = state["core"]
    y = np.asarray(reward_encoder(core["encoder"], probe))
    for agent in range(2):
        stored = np.asarray(core["memory"][agent, :8])
        kth = np.sort(np.linalg.norm(stored - y[agent], axis=-1))[2]
        np.testing.assert_allclose(probe_bonus[0, agent], np.log1p(kth), rtol=1e-4)


def reward_encoder(encoder, obs):
    from motivegym.reward_layers.intrinsic import mlp_apply

    return mlp_apply(encoder, jnp.asarray(obs))


# ----- empowerment: actions that lead apart vs a corner where they don't -----
def grid_cell(row, col):
    obs = np.zeros(9, np.float32)
    obs[3 * row + col] = 1.0
    return obs


def test_empowerment_is_higher_where_actions_lead_to_different_next_states():
    """A 3×3 grid: from the centre the 4 actions move up/down/left/right; the corner (0, 0) is a trap where every
    action stays. Agent 0 acts in the centre, agent 1 in the corner; one shared model learns both."""
    spec = LayerSpec(n_agents=2, obs_size=9, action_size=4)
    layer = Empowerment(shared=True, **SMALL)
    centre, corner = grid_cell(1, 1), grid_cell(0, 0)
    moves = [grid_cell(0, 1), grid_cell(2, 1), grid_cell(1, 0), grid_cell(1, 2)]
    steps = [transition(np.stack([centre, corner]), np.stack([moves[t % 4], corner]), (t % 4, t % 4)) for t in range(1200)]
    state, _ = run(layer, steps, spec=spec)
    _, bonus = run(layer, [transition(np.stack([centre, centre]), np.stack([centre, corner]))], state=state, spec=spec)
    centre_bonus, corner_bonus = bonus[0]
    assert np.log(4) >= centre_bonus > 0.5 * np.log(4) and corner_bonus < 0.1 * np.log(4), bonus


# ----- auto (its bandit, stepped per rollout: tests/reward_layers/test_intrinsic_rollout.py) -----
def test_auto_first_episode_uses_arm_zero_with_its_own_bonus():
    layer = AutoBonus(arms=("count", "re3"))
    _, bonus = run(layer, [transition(A, B)] * 3)
    np.testing.assert_allclose(bonus, np.tile(1 / np.sqrt([[1.0], [2.0], [3.0]]), (1, 2)), rtol=1e-6)  # SimHash count


# ----- per-agent vs shared statistics -----
@pytest.mark.parametrize(
    "layer_class, options",
    [(ICM, FAST), (Disagreement, FAST), (E3B, {"embedding": "projection", "embed_size": 8}), (RE3, SMALL)],
    ids=["icm", "disagreement", "e3b", "re3"],
)
def test_per_agent_statistics_are_separate_and_shared_ones_are_pooled(layer_class, options):
    """Agent 0 repeats transition ``s → s'`` (agent 1 elsewhere), then agent 1 makes it: new for agent 1 per agent,
    known when shared."""
    s, s_next, elsewhere = np.array([1.0, 0.0, 0.0]), np.array([0.0, 2.0, 1.0]), np.array([-1.0, 0.0, 3.0])
    before = [transition(np.stack([s, elsewhere]), np.stack([s_next, elsewhere]), (1, 3)) for _ in range(200)]
    swap = transition(np.stack([elsewhere, s]), np.stack([elsewhere, s_next]), (3, 1))
    swapped = {}
    for shared in (False, True):  # 200 steps then 1: the same compiled scans as the tests above
        layer = layer_class(shared=shared, **options)
        state, _ = run(layer, before)
        swapped[shared] = run(layer, [swap], state=state)[1][0, 1]
    assert swapped[True] < 0.5 * swapped[False], swapped


# ----- jit, vmap, names, arguments -----
@pytest.mark.slow  # seven compilations (the six layers in one vmapped program, then each alone)
def test_all_layers_through_jit_vmap_over_envs_and_scan():
    layers = (ICM(**SMALL), Disagreement(**SMALL), E3B(**SMALL), RE3(**SMALL), Empowerment(**SMALL), AutoBonus(arms=("count", "icm")))
    layer = WeightedSum(tuple((1.0, each) for each in layers))
    num_envs, steps = 3, 8
    rng = np.random.default_rng(2)
    obs = rng.integers(0, 3, size=(steps + 1, num_envs, 2, 3)).astype(np.float32)
    batch = Transition(
        obs=jnp.asarray(obs[:-1]),
        actions=jnp.asarray(rng.integers(0, 4, size=(steps, num_envs, 2)), jnp.int32),
        payoffs=jnp.asarray(rng.random((steps, num_envs, 2)), jnp.float32),
        next_obs=jnp.asarray(obs[1:]),
        terminated=jnp.asarray(rng.random((steps, num_envs)) < 0.3),
        truncated=jnp.zeros((steps, num_envs), bool),
        info={},
    )
    keys = jax.random.split(jax.random.PRNGKey(3), num_envs)
    names = [f"{name}.bonus" for name in layer.term_names()]

    @jax.jit
    def scanned(keys, batch):
        states = jax.vmap(lambda k: layer.init(k, SPEC))(keys)

        def body(states, t):
            states, _, parts = jax.vmap(layer.apply)(states, t)
            return states, {name: parts[name] for name in names}

        return jax.lax.scan(body, states, batch)

    states, bonuses = scanned(keys, batch)
    for term, name in enumerate(names):
        term_key = jax.random.split(keys[1], len(layers))[term]  # WeightedSum.init splits its key over the terms
        steps_of_env_1 = [jax.tree.map(lambda x, t=t: x[t, 1], batch) for t in range(steps)]
        alone = run(layers[term], steps_of_env_1, state=layers[term].init(term_key, SPEC))[1]
        assert np.isfinite(bonuses[name]).all() and bonuses[name].shape == (steps, num_envs, 2), name
        np.testing.assert_allclose(bonuses[name][:, 1], alone, rtol=2e-3, atol=1e-4, err_msg=name)
        np.testing.assert_array_equal(states[term]["step"], np.full(num_envs, steps))


def test_names_and_the_intrinsic_experiment_accept_the_new_layers():
    assert reward_layer("icm") == ICM() and reward_layer("disagreement:0.5") == Disagreement(coef=0.5)
    assert reward_layer("e3b") == E3B() and reward_layer("re3:2") == RE3(coef=2.0)
    assert reward_layer("empowerment") == Empowerment() and reward_layer("auto:0.1") == AutoBonus(coef=0.1)
    assert reward_layer("private+0.01*icm") == reward_layer("private") + 0.01 * ICM()
    assert parse_layers("none," + ",".join(INTRINSIC_LAYER_NAMES)) == ["none", *INTRINSIC_LAYER_NAMES]
    with pytest.raises(ValueError, match="not an intrinsic layer"):
        parse_layers("none,private")


def test_auto_names_its_arms_after_a_colon():
    assert reward_layer("auto:count/novelty/re3") == AutoBonus(arms=("count", "novelty", "re3"))
    assert reward_layer("0.5*auto:count/re3") == 0.5 * AutoBonus(arms=("count", "re3"))
    assert reward_layer("auto:2") == AutoBonus(coef=2.0) and reward_layer("auto") == AutoBonus()
    assert parse_layers("none,auto_fast=auto:count/novelty") == ["none", "auto_fast=auto:count/novelty"]
    for bad in ("auto:count/", "auto:count/nothing", "auto:count/auto", "auto:private", "auto:1/count"):
        with pytest.raises(ValueError, match="arms separated by '/'"):
            reward_layer(bad)


def test_bad_options_raise_value_error():
    bad = [
        (lambda: ICM(forward_weight=2.0), "forward_weight"),
        (lambda: ICM(num_actions=-1), "num_actions"),
        (lambda: Disagreement(ensemble=1), "ensemble"),
        (lambda: E3B(ridge=0.0), "ridge"),
        (lambda: E3B(embedding="pixels"), "embedding"),
        (lambda: RE3(neighbours=0), "neighbours"),
        (lambda: Empowerment(noise_variance=0.0), "noise_variance"),
        (lambda: AutoBonus(ucb_scale=-1.0), "ucb_scale"),
    ]
    for make, argument in bad:
        with pytest.raises(ValueError, match=rf"{argument}=\S+ is invalid"):
            make()
    with pytest.raises(ValueError, match="neighbours <= memory_size"):
        RE3(neighbours=9, memory_size=8)
    with pytest.raises(ValueError, match="unknown arm"):
        AutoBonus(arms=("count", "curiosity"))
    with pytest.raises(ValueError, match="listed twice"):
        AutoBonus(arms=("count", "count"))
    with pytest.raises(ValueError, match="non-empty tuple"):
        AutoBonus(arms="count")
    key = jax.random.PRNGKey(0)
    # the checks run at trace time: jax.eval_shape traces without computing
    with pytest.raises(ValueError, match="knows 1 action"):  # discrete actions, no action count
        jax.eval_shape(lambda k: ICM().apply(ICM().init(k, LayerSpec(2, 3)), transition(A, B)), key)
    with pytest.raises(ValueError, match="discrete"):
        jax.eval_shape(lambda k: Empowerment().init(k, LayerSpec(2, 3)), key)
    with pytest.raises(ValueError, match="discrete"):
        continuous = transition(A, B, actions=np.zeros(2, np.float32))
        jax.eval_shape(lambda k: Empowerment().apply(Empowerment().init(k, SPEC), continuous), key)


@pytest.mark.slow  # one compiled PPO program that steps every new layer (LayerChoice computes all candidates)
def test_every_new_layer_runs_inside_multi_agent_ppo_by_name():
    env, params = motivegym.make_jax("KeyDoorGift-v0")
    names = ("icm", "disagreement", "e3b", "re3", "empowerment", "auto")
    config = PPOConfig(total_steps=128, num_envs=2, num_steps=32, update_epochs=1, num_minibatches=2, hidden_sizes=(16,))
    algo = MultiAgentPPO(env, params, tuple(f"private+0.01*{name}" for name in names), config)
    runner, metrics = jax.jit(algo.make_train())(jax.random.PRNGKey(0), 1)
    steps_per_env = config.num_updates * config.num_steps
    for index, name in enumerate(names):
        state = runner["layer_states"]["states"][index][1]  # LayerChoice → WeightedSum (private, bonus)
        np.testing.assert_array_equal(state["step"], np.full(config.num_envs, steps_per_env), err_msg=name)
        assert np.isfinite(np.asarray(state["totals"]["bonus"])).all(), name
    assert np.isfinite(np.asarray(metrics["episode_reward"])).all()


@pytest.mark.parametrize("name", ["icm", "e3b", "empowerment"])
def test_action_reading_layers_work_through_gymnasium_and_evaluation_by_name(name):
    """Every door builds the layer's spec from the env (LayerSpec.of), so a discrete env's action count reaches it."""
    import gymnasium

    from motivegym.experiments.evaluation import evaluate

    env = gymnasium.make("motivegym/KeyDoorGift-v0", reward=f"private+0.1*{name}", max_steps=5)
    env.reset(seed=0)
    _, reward, *_ = env.step(env.action_space.sample())
    assert np.all(np.isfinite(reward))
    assert np.isfinite(evaluate("KeyDoorGift-v0", "random", reward=f"private+0.1*{name}", episodes=2, compare_to_oracle=False, max_steps=5).welfare)
