import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import motivegym
from motivegym.reward_layers import mutuality

ALL_ENVS = motivegym.list_envs()
#: checked in the default run; the others carry the ``slow`` mark (run by .ci/run after the default run)
DEFAULT_API_ENVS = {"TrustDilemma-v0", "PartnerHoldUp-v0", "PlatformEcosystem-v0", "SynergySearch-v0", "ApacheProject-v0",
                    "AppleAppStore-v0", "PrisonersDilemma-v0", "PublicGoodsPunishment-v0", "DonorGame-v0", "CoinGame-v0",
                    "KeyDoorGift-v0"}  # fmt: skip
API_CASES = [pytest.param(e, marks=() if e in DEFAULT_API_ENVS else pytest.mark.slow) for e in ALL_ENVS]
# the one warning Gymnasium's checker may give a motivegym env: Box actions are per-agent endowments, not [-1, 1]
BOX_ADVICE = "symmetric and normalized"


@pytest.mark.parametrize("env_id", API_CASES)
def test_check_env_passes_without_warnings(env_id):
    """Default arguments: Gymnasium's ``check_env`` and the passive checker of ``gymnasium.make`` stay silent."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        env = gymnasium.make(f"motivegym/{env_id}")
        env.reset(seed=0)
        env.step(env.action_space.sample())
        check_env(env.unwrapped, skip_render_check=True)
    assert [str(w.message) for w in caught if BOX_ADVICE not in str(w.message)] == []


def test_reward_selection_payoffs_and_components_in_info():
    env = gymnasium.make("motivegym/TrustDilemma-v0", reward="private", scalarize=None)
    env.reset(seed=0)
    _, reward, _, _, info = env.step(np.array([80.0, 20.0], np.float32))
    np.testing.assert_allclose(reward, [121.889, 154.890], atol=2e-3)
    np.testing.assert_allclose(info["payoffs"], reward)
    np.testing.assert_allclose(info["rewards"], reward)
    env = gymnasium.make("motivegym/TrustDilemma-v0", scalarize=None)  # default layer: integrated
    env.reset(seed=0)
    _, reward, _, _, info = env.step(np.array([80.0, 20.0], np.float32))
    np.testing.assert_allclose(reward, [139.918, 196.942], atol=2e-3)
    np.testing.assert_allclose(info["reward_components"]["payoff"] + info["reward_components"]["partner"], reward, rtol=1e-6)
    assert info["interdependence_weights"].shape == (2, 2)
    env = gymnasium.make("motivegym/TrustDilemma-v0", reward=mutuality(0.5), scalarize=None)
    env.reset(seed=0)
    _, reward, _, _, info = env.step(np.array([80.0, 20.0], np.float32))
    np.testing.assert_allclose(reward, 0.5 * info["payoffs"] + 0.5 * info["payoffs"].mean(), rtol=1e-6)


def test_scalarize_options():
    for mode, reduce in [(None, np.sum), ("sum", np.sum), ("mean", np.mean)]:
        kwargs = {} if mode is None else {"scalarize": mode}  # None here: the default argument
        env = gymnasium.make("motivegym/PlatformEcosystem-v0", **kwargs)
        env.reset(seed=0)
        _, reward, _, _, info = env.step(env.action_space.sample())
        assert type(reward) is float and reward == pytest.approx(float(reduce(info["rewards"])), rel=1e-6)
    env = gymnasium.make("motivegym/PlatformEcosystem-v0", scalarize=None, disable_env_checker=True)  # per-agent rewards
    env.reset(seed=0)
    _, reward, _, _, info = env.step(env.action_space.sample())
    assert reward.shape == (env.unwrapped.n_agents,) and reward.dtype == np.float32
    np.testing.assert_array_equal(reward, info["rewards"])
    with pytest.raises(ValueError, match="scalarize"):
        gymnasium.make("motivegym/TrustDilemma-v0", scalarize="max")


def test_unknown_keyword_arguments_raise_with_valid_names():
    with pytest.raises(ValueError, match=r"'rewrd' \(did you mean 'reward'\?\).*Valid keyword arguments: .*gamma"):
        gymnasium.make("motivegym/TrustDilemma-v0", rewrd="private")
    with pytest.raises(TypeError, match="unexpected keyword argument 'frameskip'") as raised:  # what TorchRL's GymEnv probes
        gymnasium.make("motivegym/TrustDilemma-v0", frameskip=4)
    assert isinstance(raised.value, ValueError)
    with pytest.raises(TypeError, match="unexpected keyword argument 'horizon'"):
        gymnasium.make_vec("motivegym/TrustDilemma-v0", num_envs=2, vectorization_mode="vector_entry_point", horizon=3)
    with pytest.raises(ValueError, match="did you mean 'integrated'") as raised:
        gymnasium.make("motivegym/TrustDilemma-v0", reward="integrate")
    assert not isinstance(raised.value, TypeError)  # a bad value, not a bad keyword
    env = gymnasium.make("motivegym/TrustDilemma-v0", gamma=0.9, max_steps=3)
    assert float(env.unwrapped.params.gamma) == pytest.approx(0.9)


def test_bad_actions_raise_and_bounds_clip():
    env = gymnasium.make("motivegym/PartnerHoldUp-v0")
    env.reset(seed=0)
    with pytest.raises(ValueError, match="agent_1"):
        env.step(np.array([10.0, np.nan], np.float32))
    obs_after_rejected_step, *_ = env.step(np.array([10.0, 10.0], np.float32))
    fresh = gymnasium.make("motivegym/PartnerHoldUp-v0")
    fresh.reset(seed=0)
    obs_fresh, *_ = fresh.step(np.array([10.0, 10.0], np.float32))
    np.testing.assert_array_equal(obs_after_rejected_step, obs_fresh)  # a rejected step leaves no trace
    with pytest.raises(ValueError, match="shape"):
        env.step(np.array([10.0, 10.0, 10.0], np.float32))
    with pytest.raises(ValueError, match="real numbers"):
        env.step(["a", "b"])
    np.testing.assert_allclose(env.action_space.high, [120, 80])
    _, _, _, _, info = env.step(np.array([-5.0, 500.0], np.float32))
    np.testing.assert_allclose(info["actions"], [0.0, 80.0])


def trajectory(env, seed, steps=30):
    obs, _ = env.reset(seed=seed)
    env.action_space.seed(seed)
    out = [obs]
    for _ in range(steps):
        obs, reward, terminated, truncated, _ = env.step(env.action_space.sample())
        out += [obs, np.asarray(reward)]
        if terminated or truncated:
            out.append(env.reset()[0])
    return out


@pytest.mark.parametrize("env_id", ["SynergySearch-v0", "ReputationMarket-v0"])
def test_same_seed_gives_identical_trajectories(env_id):
    kwargs = {"reputation_visibility": 0.3} if env_id == "ReputationMarket-v0" else {}
    a = trajectory(gymnasium.make(f"motivegym/{env_id}", **kwargs), 7)
    b = trajectory(gymnasium.make(f"motivegym/{env_id}", **kwargs), 7)
    c = trajectory(gymnasium.make(f"motivegym/{env_id}", **kwargs), 8)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not all(np.array_equal(x, y) for x, y in zip(a, c))


def test_render_ansi_and_episode_end():
    env = gymnasium.make("motivegym/SLCD-v0", render_mode="ansi", max_steps=2)
    env.reset(seed=0)
    env.step(np.array([30.0, 30.0], np.float32))
    text = env.render()
    assert "Samsung" in text and "trust matrix" in text and "step 1/2" in text
    *_, truncated, info = env.step(np.array([30.0, 30.0], np.float32))
    assert truncated and int(info["step"]) == 2


def test_make_vec_same_step_autoreset_on_request():
    vec = gymnasium.make_vec("motivegym/TrustDilemma-v0", num_envs=16, vectorization_mode="vector_entry_point", max_steps=3,
                             autoreset_mode="same-step", scalarize=None)  # fmt: skip
    assert vec.metadata["autoreset_mode"] == gymnasium.vector.AutoresetMode.SAME_STEP
    obs, info = vec.reset(seed=0)
    assert obs.shape == (16, 15)
    for _t in range(3):
        obs, rewards, terminated, truncated, info = vec.step(np.full((16, 2), 50.0, np.float32))
    assert rewards.shape == (16, 2) and truncated.all() and info["_final_obs"].all()
    np.testing.assert_array_equal(obs[:, -1], 0.0)  # already reset: t = 0
    np.testing.assert_array_equal(info["final_obs"][:, -1], 3.0)
    single = gymnasium.make("motivegym/TrustDilemma-v0", max_steps=3, scalarize=None)
    single.reset(seed=0)
    for _ in range(3):
        _, reward, *_ = single.step(np.full(2, 50.0, np.float32))
    np.testing.assert_allclose(rewards[0], reward, rtol=1e-6)
    with pytest.raises(ValueError, match="shape"):
        vec.step(np.zeros((3, 2), np.float32))
    bad = np.full((16, 2), 1.0, np.float32)
    bad[4, 1] = np.inf
    with pytest.raises(ValueError, match="sub-env 4, agent_1"):
        vec.step(bad)
    with pytest.raises(ValueError, match="autoreset_mode"):
        gymnasium.make_vec("motivegym/TrustDilemma-v0", num_envs=2, vectorization_mode="vector_entry_point", autoreset_mode="disabled")
