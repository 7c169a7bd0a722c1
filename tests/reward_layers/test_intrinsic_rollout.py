"""Layers that learn a model, trained on whole rollouts (``train_on="rollout"``, ``"<layer>@rollout"``): one model per
run fitted by the learner after each rollout, never inside the env step; every door that cannot fit refuses them."""

import dataclasses

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

import motivegym
from motivegym.baselines.ppo import MultiAgentPPO, PPOConfig
from motivegym.core.env import Transition
from motivegym.experiments.intrinsic import parse_layers
from motivegym.reward_layers import TRAINED_LAYERS, LayerSpec, reward_layer
from motivegym.reward_layers.intrinsic import row_mean
from motivegym.reward_layers.intrinsic_models import AutoBonus

SPEC = LayerSpec(n_agents=2, obs_size=5, action_size=4)
STEPS, ENVS = 8, 3


def rollout(seed: int = 0, steps: int = STEPS) -> Transition:
    """Random transitions with leading ``[steps, ENVS]``."""
    k1, k2, k3 = jax.random.split(jax.random.PRNGKey(seed), 3)
    shape = (steps, ENVS, SPEC.n_agents)
    return Transition(
        obs=jax.random.normal(k1, shape + (SPEC.obs_size,)),
        actions=jax.random.randint(k3, shape, 0, SPEC.action_size),
        payoffs=jnp.zeros(shape),
        next_obs=jax.random.normal(k2, shape + (SPEC.obs_size,)),
        terminated=jnp.zeros(shape[:2], bool),
        truncated=jnp.zeros(shape[:2], bool),
        info={},
    )


def env_states(layer, key=jax.random.PRNGKey(1)):
    """``ENVS`` copies of the layer state from one key (as MultiAgentPPO builds them for a rollout-fitted layer),
    after the rollout's steps were applied in every env (so observation moments are filled)."""
    states = jax.vmap(lambda k: layer.init(k, SPEC))(jnp.stack([key] * ENVS))
    batch = rollout()

    def env_steps(state, env_batch):
        return jax.lax.scan(lambda s, t: (layer.apply(s, t)[0], None), state, env_batch)[0]

    return jax.vmap(env_steps, in_axes=(0, 1))(states, batch), batch


def at(tree, *index):
    """Every leaf indexed by ``index`` (one env's state, one step of one env's rollout)."""
    return jax.tree.map(lambda x: x[index], tree)


def mean_rollout_loss(layer, states, batch) -> float:
    """``mean_{t,e} Σ_rows mean_{i∈row} L_i`` with every env's own core and its own copy of the model."""
    total = []
    for e in range(ENVS):
        core = at(states["core"], e)
        params = layer.trained_model(core)[0]
        for t in range(batch.next_obs.shape[0]):
            step = at(batch, t, e)
            total.append(float(jnp.sum(row_mean(layer.model_losses(core, params, step), layer.shared))))
    return float(np.mean(total))


def rollout_layer(name: str, **options):
    return dataclasses.replace(reward_layer(name), train_on="rollout", **options)


@pytest.mark.parametrize("name", TRAINED_LAYERS)
def test_fitting_lowers_the_rollout_loss_and_leaves_one_model_in_every_env(name):
    layer = rollout_layer(name, fit_epochs=30, fit_minibatches=2)
    states, batch = env_states(layer)
    before = mean_rollout_loss(layer, states, batch)
    fitted = jax.jit(layer.fit_rollout)(states, dataclasses.replace(batch, info={}), jax.random.PRNGKey(2))
    after = mean_rollout_loss(layer, fitted, batch)
    assert after < 0.9 * before, (name, before, after)
    params, opt_state = layer.trained_model(fitted["core"])
    for leaf in jax.tree.leaves((params, opt_state)):
        np.testing.assert_array_equal(np.asarray(leaf), np.broadcast_to(np.asarray(leaf)[:1], leaf.shape), err_msg=name)
    changed = jax.tree.leaves(jax.tree.map(lambda a, b: bool(jnp.any(a != b)), layer.trained_model(states["core"])[0], params))
    assert any(changed), name
    # everything else in the state (targets, projections, moments, memories) is the env's own, untouched
    untouched = layer.with_trained_model(fitted["core"], *layer.trained_model(states["core"]))
    jax.tree.map(np.testing.assert_array_equal, untouched, states["core"])


def test_one_minibatch_one_epoch_is_one_adam_step_on_the_mean_rollout_loss():
    layer = rollout_layer("rnd", fit_epochs=1, fit_minibatches=1)
    states, batch = env_states(layer)
    fitted = layer.fit_rollout(states, batch, jax.random.PRNGKey(3))
    params, opt_state = jax.tree.map(lambda x: x[0], layer.trained_model(states["core"]))

    def loss(p):  # the docstring's objective, written out: env e's samples under env e's whitening moments
        per_sample = []
        for e in range(ENVS):
            core = at(states["core"], e)
            for t in range(STEPS):
                per_sample.append(jnp.sum(layer.model_losses(core, p, at(batch, t, e))))
        return jnp.mean(jnp.stack(per_sample))

    updates, _ = optax.adam(layer.learning_rate).update(jax.grad(loss)(params), opt_state, params)
    expected = optax.apply_updates(params, updates)
    got = jax.tree.map(lambda x: x[1], layer.trained_model(fitted["core"])[0])
    jax.tree.map(lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6), got, expected)


@pytest.mark.parametrize("name", TRAINED_LAYERS)
def test_the_env_step_reads_a_rollout_model_but_trains_a_step_model(name):
    transition = jax.tree.map(lambda x: x[0, 0], rollout())
    for train_on, trains in (("step", True), ("rollout", False)):
        layer = dataclasses.replace(reward_layer(name), train_on=train_on)
        state = layer.init(jax.random.PRNGKey(0), SPEC)
        after, _, _ = layer.apply(state, transition)
        moved = any(jax.tree.leaves(jax.tree.map(lambda a, b: bool(jnp.any(a != b)), layer.trained_model(state["core"])[0], layer.trained_model(after["core"])[0])))
        assert moved == trains, (name, train_on)


def test_auto_fits_the_arms_that_learn_a_model_and_leaves_the_others():
    layer = reward_layer("auto:count/rnd/re3@rollout")
    count, rnd, re3 = layer.arm_layers
    assert (count.train_on, rnd.train_on, re3.train_on) == ("step", "rollout", "step")
    states, batch = env_states(layer)
    fitted = layer.fit_rollout(states, batch, jax.random.PRNGKey(4))
    arms_before, arms_after = states["core"]["arms"], fitted["core"]["arms"]
    jax.tree.map(np.testing.assert_array_equal, arms_after[0], arms_before[0])
    jax.tree.map(np.testing.assert_array_equal, arms_after[2], arms_before[2])
    assert mean_rollout_loss(rnd, arms_after[1], batch) < mean_rollout_loss(rnd, arms_before[1], batch)


def test_auto_bandit_moves_to_the_arm_whose_updates_raise_the_return():
    """After a rollout with arm 1 active the next rollout's payoff is 0.1 higher per step, after arm 0 it is 0.1
    lower: arm 1's credit (the change in return that the update on its rewards brings) is larger, so UCB pulls it
    most and ends on it, the same in every env copy."""
    layer = reward_layer("auto(ucb_scale=0.5):count/re3")
    states, batch = env_states(layer)
    fit = jax.jit(layer.fit_rollout)
    level, rollouts = 0.0, 40
    for k in range(rollouts):
        active = np.asarray(states["core"]["active"])
        assert np.all(active == active[0, 0])  # one arm for every env and row
        states = fit(states, dataclasses.replace(batch, payoffs=jnp.full(batch.payoffs.shape, level)), jax.random.PRNGKey(k))
        level += 0.1 if active[0, 0] == 1 else -0.1
    pulls, values = np.asarray(states["core"]["pulls"]), np.asarray(states["core"]["values"])
    assert np.all(pulls.sum(axis=-1) == rollouts - 1) and np.all(pulls[..., 1] > 2 * pulls[..., 0]), pulls  # no credit before rollout 2
    np.testing.assert_allclose(values[..., 0], -0.1, rtol=1e-5)
    np.testing.assert_allclose(values[..., 1], 0.1, rtol=1e-5)
    assert np.all(np.asarray(states["core"]["active"]) == 1)


def test_auto_bonus_is_the_active_arms_reward():
    layer = reward_layer("auto:count/re3")
    states, batch = env_states(layer)
    states = {**states, "core": {**states["core"], "active": jnp.ones_like(states["core"]["active"])}}
    after, rewards, parts = jax.vmap(layer.apply)(states, at(batch, 0))
    np.testing.assert_allclose(parts["bonus"], np.asarray(after["core"]["arm_rewards"])[:, 1])


def test_names_grammar_and_refusals():
    assert reward_layer("private+0.05*rnd:0.5@rollout").terms[1][1].train_on == "rollout"
    assert reward_layer("icm@step").train_on == "step"
    assert parse_layers("none,rnd@rollout,curious=icm@rollout") == ["none", "rnd@rollout", "curious=icm@rollout"]
    with pytest.raises(ValueError, match="learn a model"):
        reward_layer("count@rollout")
    with pytest.raises(ValueError, match="only intrinsic layers"):
        reward_layer("integrated@rollout")
    with pytest.raises(ValueError, match="needs an arm that learns a model"):
        reward_layer("auto:count/novelty@rollout")
    with pytest.raises(ValueError, match="train_on"):
        reward_layer("rnd").__class__(train_on="episode")
    layer = rollout_layer("rnd", fit_minibatches=3)
    states, batch = env_states(layer)
    with pytest.raises(ValueError, match="must divide the rollout length 8"):
        layer.fit_rollout(states, batch, jax.random.PRNGKey(0))


def test_doors_that_never_fit_refuse_a_rollout_layer():
    with pytest.raises(ValueError, match="never fits a layer on rollouts"):
        gymnasium.make("motivegym/KeyDoorGift-v0", reward="private+0.1*rnd@rollout")
    with pytest.raises(ValueError, match="'auto' has no per-step form"):  # the bandit picks an arm per PPO update
        gymnasium.make("motivegym/KeyDoorGift-v0", reward="private+0.1*auto:count/re3")
    with pytest.raises(ValueError, match="never fits"):
        motivegym.make_rewarded("KeyDoorGift-v0", reward="private+0.1*icm@rollout")
    from motivegym.baselines.value_based import MultiAgentQLearning, ValueConfig

    env, params = motivegym.make_jax("KeyDoorGift-v0")
    with pytest.raises(ValueError, match=r"IQL .*never fits.*'1\*private \+ 0.1\*e3b' does"):
        MultiAgentQLearning(env, params, "private+0.1*e3b@rollout", ValueConfig(algorithm="iql"))


def test_ppo_fits_a_rollout_model_once_per_update_with_one_model_per_run():
    env, params = motivegym.make_jax("KeyDoorGift-v0", max_steps=16)
    config = PPOConfig(total_steps=96, num_envs=3, num_steps=16, update_epochs=1, num_minibatches=2, hidden_sizes=(16,))
    layer = rollout_layer("rnd", fit_epochs=2, fit_minibatches=4)
    algo = MultiAgentPPO(env, params, motivegym.reward_layers.WeightedSum(((1.0, reward_layer("private")), (0.01, layer))), config)
    init, update = jax.jit(algo.make_stages()[1]), algo.make_stages()[2]
    start = init(jax.random.PRNGKey(0), 0)
    runner, _ = jax.jit(update, static_argnums=1)(start, config.num_updates)
    state = lambda r: r["layer_states"]["states"][0][1]  # noqa: E731  LayerChoice → WeightedSum (private, rnd)
    params_before, _ = layer.trained_model(state(start)["core"])
    params_after, opt_state = layer.trained_model(state(runner)["core"])
    for before, after in zip(jax.tree.leaves(params_before), jax.tree.leaves(params_after)):
        np.testing.assert_array_equal(before, np.broadcast_to(before[:1], before.shape))  # copies start equal
        np.testing.assert_array_equal(after, np.broadcast_to(after[:1], after.shape))  # and stay equal
    assert any(bool(jnp.any(a != b)) for a, b in zip(jax.tree.leaves(params_before), jax.tree.leaves(params_after)))
    adam_counts = np.asarray(opt_state[0].count)
    np.testing.assert_array_equal(adam_counts, np.full(config.num_envs, config.num_updates * 2 * 4))
    np.testing.assert_array_equal(state(runner)["step"], np.full(config.num_envs, config.num_updates * config.num_steps))


SHARED_LAYERS = (*TRAINED_LAYERS, "auto")


def rollout_or_auto(name: str):
    return reward_layer("auto@rollout") if name == "auto" else rollout_layer(name)


def models_of(layer, tree) -> list:
    """The leaves of ``tree`` (a layer state, or a mask of the same structure) that hold a learned model."""
    if isinstance(layer, AutoBonus):
        arms = zip(layer.arm_layers, tree["core"]["arms"])
        return [leaf for arm, arm_tree in arms if arm.trains_a_model() for leaf in models_of(arm, arm_tree)]
    return jax.tree.leaves(layer.trained_model(tree["core"]))


@pytest.mark.parametrize("name", SHARED_LAYERS)
def test_ppo_applies_a_rollout_layer_with_its_model_once_for_every_env_and_gets_each_copys_result(name):
    from motivegym.baselines.ppo import SharedAcrossEnvs

    layer = rollout_or_auto(name)
    states, batch = env_states(layer)
    step = at(batch, 0)
    shared = SharedAcrossEnvs(layer, states, step)
    read_only = jax.tree.unflatten(shared.treedef, shared.read_only)
    assert all(models_of(layer, read_only)) and not read_only["step"]  # the model is carried once, counters per env
    expected_states, expected_rewards, expected_parts = jax.vmap(layer.apply)(states, step)
    own, rewards, parts = shared.batched_apply(shared.own(states), step)
    np.testing.assert_allclose(rewards, expected_rewards, rtol=1e-5, atol=1e-6)
    jax.tree.map(lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6), parts, expected_parts)
    joined = shared.joined(own, ENVS)
    jax.tree.map(lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6), joined, expected_states)


@pytest.mark.parametrize("name", SHARED_LAYERS)
def test_fitting_keeps_every_leaf_the_env_step_only_reads_equal_in_every_env_copy(name):
    """What lets ``MultiAgentPPO`` carry those leaves once (:class:`~motivegym.baselines.ppo.SharedAcrossEnvs`)."""
    from motivegym.baselines.ppo import SharedAcrossEnvs

    layer = rollout_or_auto(name)
    states, batch = env_states(layer)
    shared = SharedAcrossEnvs(layer, states, at(batch, 0))
    fitted = layer.fit_rollout(states, batch, jax.random.PRNGKey(3))
    for leaf, read_only in zip(jax.tree.leaves(fitted), shared.read_only):
        if read_only:
            np.testing.assert_array_equal(leaf, np.broadcast_to(leaf[:1], leaf.shape))
    assert any(bool(jnp.any(a != b)) for a, b in zip(models_of(layer, states), models_of(layer, fitted)))


def test_wrapping_layers_report_and_fit_the_rollout_model_inside():
    from motivegym.reward_layers import Loyalty, WeightedSum

    inner = rollout_layer("rnd", fit_epochs=5, fit_minibatches=2)
    assert not WeightedSum.of(reward_layer("private")).fits_on_rollouts()
    for wrapper in (Loyalty(base=inner), WeightedSum(((1.0, reward_layer("private")), (0.1, inner)))):
        assert wrapper.fits_on_rollouts()
    states, batch = env_states(inner)
    fitted = Loyalty(base=inner).fit_rollout(states, batch, jax.random.PRNGKey(5))
    assert mean_rollout_loss(inner, fitted, batch) < mean_rollout_loss(inner, states, batch)
