"""The shared host machinery of the adapters: the compiled-core cache, option checks, the AEC retry, writable results."""

import gc
import weakref

import gymnasium
import jax
import numpy as np
import pytest

import motivegym
from motivegym.adapters import host
from motivegym.adapters.sb3 import vec_env

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def test_compiled_core_cache_is_a_bounded_lru_keyed_by_params(monkeypatch):
    """Issue 23: the cache was never emptied (about 7 MiB per distinct kwargs; 300 configurations held 2.4 GiB)."""
    monkeypatch.setattr(host, "_COMPILED", type(host._COMPILED)())
    monkeypatch.setattr(host, "COMPILED_CACHE_SIZE", 2)
    first = gymnasium.make("motivegym/TrustDilemma-v0", gamma=0.5).unwrapped
    again = gymnasium.make("motivegym/TrustDilemma-v0", gamma=0.5).unwrapped
    assert first._stepper.core is again._stepper.core  # one compilation for equal params
    rounds = motivegym.parallel_env("PrisonersDilemma-v0", rounds=5)
    max_steps = motivegym.parallel_env("PrisonersDilemma-v0", max_steps=5)
    assert rounds._stepper.core is max_steps._stepper.core  # keyed by the params' values, not the keywords
    core = weakref.ref(first._stepper.core)
    del first, again
    for gamma in (0.6, 0.7):  # two newer entries push the gamma=0.5 core out
        gymnasium.make("motivegym/TrustDilemma-v0", gamma=gamma)
    assert len(host._COMPILED) == 2
    gc.collect()
    assert core() is None  # nothing else holds it


@pytest.mark.parametrize("bad", [2.5, 2.0, True, "2", 0, -1, None])
def test_num_envs_is_validated_not_coerced(bad):
    with pytest.raises(ValueError, match="num_envs"):
        gymnasium.make_vec("motivegym/TrustDilemma-v0", num_envs=bad, vectorization_mode="vector_entry_point")
    with pytest.raises(ValueError, match="num_envs"):
        vec_env("TrustDilemma-v0", num_envs=bad)


def test_other_adapter_options_are_validated():
    with pytest.raises(ValueError, match="render_mode"):
        gymnasium.make("motivegym/TrustDilemma-v0", render_mode="rgb")
    with pytest.raises(ValueError, match="render_mode"):
        motivegym.parallel_env("TrustDilemma-v0", render_mode=1)
    with pytest.raises(ValueError, match="render_mode"):
        gymnasium.make_vec("motivegym/TrustDilemma-v0", num_envs=2, vectorization_mode="vector_entry_point", render_mode="ansi")
    with pytest.raises(ValueError, match="scalarize"):
        gymnasium.make("motivegym/TrustDilemma-v0", scalarize=True)
    with pytest.raises(ValueError, match="reward"):
        gymnasium.make("motivegym/TrustDilemma-v0", reward=3)
    with pytest.raises(ValueError, match="agent_id"):
        vec_env("TrustDilemma-v0", num_envs=2, agent_id=1)
    with pytest.raises(ValueError, match="api"):
        motivegym.adapters.pettingzoo_env.env_factory("TrustDilemma-v0", api="aecc")
    gym = gymnasium.make("motivegym/TrustDilemma-v0").unwrapped
    vec = gymnasium.make_vec("motivegym/TrustDilemma-v0", num_envs=2, vectorization_mode="vector_entry_point")
    par = motivegym.parallel_env("TrustDilemma-v0")
    for reset in (gym.reset, vec.reset, par.reset):
        for seed in (1.5, -1, True, "0"):
            with pytest.raises(ValueError, match="seed"):
                reset(seed=seed)
        with pytest.raises(ValueError, match="options"):
            reset(seed=0, options="fast")


def test_a_refused_aec_action_is_not_kept():
    """Issue 23: after an error the AEC env kept the bad action and every retry failed until reset()."""
    aec = motivegym.aec_env("TrustDilemma-v0", reward="private")
    aec.reset(seed=0)
    with pytest.raises(ValueError, match="agent_0"):
        aec.step(np.array([np.nan], np.float32))
    assert aec.agent_selection == "agent_0"
    aec.step(np.array([80.0], np.float32))
    with pytest.raises(ValueError, match="agent_1"):
        aec.step(np.array([1.0, 2.0], np.float32))
    aec.step(np.array([20.0], np.float32))
    assert aec.rewards["agent_0"] == pytest.approx(121.889, abs=2e-3)  # the same as a clean first step
    with pytest.raises(ValueError, match="agent_0"):
        aec.step(np.array([1 + 1j]))
    aec.step(np.array([80.0], np.float32))  # the next round proceeds normally


def test_returned_arrays_are_writable():
    gym = gymnasium.make("motivegym/TrustDilemma-v0", scalarize=None)
    obs, info = gym.reset(seed=0)
    arrays = [obs, info["actions"]]
    obs, reward, *_, info = gym.step(np.array([50.0, 50.0], np.float32))
    arrays += [obs, reward, info["payoffs"], info["rewards"], info["interdependence_weights"]]
    vec = gymnasium.make_vec("motivegym/TrustDilemma-v0", num_envs=2, vectorization_mode="vector_entry_point", autoreset_mode="same-step")
    arrays.append(vec.reset(seed=0)[0])
    obs, rewards, terminated, _, info = vec.step(np.full((2, 2), 50.0, np.float32))
    arrays += [obs, rewards, terminated, info["payoffs"], info["final_obs"]]
    par = motivegym.parallel_env("TrustDilemma-v0")
    arrays += list(par.reset(seed=0)[0].values())
    arrays += list(par.step({"agent_0": 50.0, "agent_1": 50.0})[0].values())
    sb3 = vec_env("TrustDilemma-v0", num_envs=2)
    arrays.append(sb3.reset())
    arrays.append(sb3.step(np.zeros((4, 1), np.float32))[0])
    for array in arrays:
        assert array.flags.writeable
        array[...] = 0  # and writing does not touch the env: the next step still works
    gym.step(np.array([50.0, 50.0], np.float32))


def test_checked_functional_api_gives_our_errors_and_the_raw_step_does_not_check():
    env, params = motivegym.make_jax("PrisonersDilemma-v0")
    state, _ = env.reset(jax.random.PRNGKey(0), params)
    raw = env.step(jax.random.PRNGKey(0), state, np.array([0, 1, 1]), params)  # silently plays (0, 1): documented unchecked
    checked = motivegym.checked(env)
    assert motivegym.checked(checked) is checked and checked.n_agents(params) == 2
    with pytest.raises(ValueError, match=r"shape \(2,\)"):
        checked.step(jax.random.PRNGKey(0), state, np.array([0, 1, 1]), params)
    with pytest.raises(ValueError, match="agent_0"):
        checked.step(jax.random.PRNGKey(0), state, [np.nan, 0], params)
    np.testing.assert_array_equal(checked.step(jax.random.PRNGKey(0), state, [0, 1], params)[2], raw[2])
    with pytest.raises(TypeError, match="cannot be traced"):
        jax.jit(lambda a: checked.step(jax.random.PRNGKey(0), state, a, params))(np.array([0, 1]))
    trust, trust_params = motivegym.make_jax("TrustDilemma-v0")
    trust_state, _ = trust.reset(jax.random.PRNGKey(0), trust_params)
    with pytest.raises(ValueError, match=r"actions must have shape \(2,\)"):  # the raw step fails with a reshape error
        motivegym.checked(trust).step(jax.random.PRNGKey(0), trust_state, np.ones(3), trust_params)
