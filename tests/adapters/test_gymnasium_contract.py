"""Gymnasium by its own contract (issue 24): the real third-party code — Gymnasium's wrappers and vector modes,
SB3's ``check_env``, TorchRL's ``GymEnv`` — on motivegym envs with default arguments, and observation bounds
that hold on random rollouts. Gymnasium's own ``check_env`` is in ``test_gymnasium.py``.

The default run uses a few envs that compile quickly; the all-env sweeps carry the ``slow`` mark.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import warnings

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from gymnasium.wrappers import NormalizeReward, RecordEpisodeStatistics
from gymnasium.wrappers.vector import RecordEpisodeStatistics as VectorRecordEpisodeStatistics

import motivegym

ALL_ENVS = motivegym.list_envs()
#: every env with known observation bounds, cheap to roll out (the others are in the slow sweep)
QUICK_BOUNDS = {"TrustDilemma-v0", "PrisonersDilemma-v0", "DonorGame-v0", "PublicGoodsPunishment-v0", "CoinGame-v0",
                "KeyDoorGift-v0", "CooperativeNavigation-v0"}  # fmt: skip
QUICK_WRAPPERS = {"TrustDilemma-v0", "PrisonersDilemma-v0"}


def cases(quick: set[str]) -> list:
    return [pytest.param(e, marks=() if e in quick else pytest.mark.slow) for e in ALL_ENVS]


# ----- observation bounds -----
def random_action_sampler(env, params):
    """A jittable ``key -> actions`` drawing uniformly from the action space."""
    n = env.n_agents(params)
    if env.action_kind == "discrete":
        k = env.num_actions(params)
        return lambda key: jax.random.randint(key, (n,), 0, k)
    low, high = (jnp.asarray(b, jnp.float32) for b in env.action_bounds(params))
    return lambda key: jax.random.uniform(key, (n,), minval=low, maxval=high)


def random_rollout(env_id: str, seed: int, max_horizon: int = 300) -> tuple[np.ndarray, np.ndarray]:
    """``(agent observations, global states)`` of one random episode (up to ``max_horizon`` steps, reset included)."""
    env, params = motivegym.make_jax(env_id)
    sample = random_action_sampler(env, params)
    horizon = min(env.max_episode_steps(params), max_horizon)

    def body(carry, key):
        state, over = carry
        action_key, step_key = jax.random.split(key)
        state, obs, _, done, _ = env.step(step_key, state, sample(action_key), params)
        return (state, over | done), (obs, env.global_state(state, params), over)

    def rollout(key):
        state, obs = env.reset(key, params)
        _, (obs_seq, global_seq, after_end) = jax.lax.scan(body, (state, jnp.bool_(False)), jax.random.split(key, horizon))
        keep = ~after_end  # steps of a finished episode are not part of the game
        return obs, env.global_state(state, params), obs_seq, global_seq, keep

    obs0, global0, obs_seq, global_seq, keep = jax.device_get(jax.jit(rollout)(jax.random.PRNGKey(seed)))
    return np.concatenate([obs0[None], obs_seq[keep]]), np.concatenate([global0[None], global_seq[keep]])


@pytest.mark.parametrize("env_id", cases(QUICK_BOUNDS))
def test_observations_of_random_rollouts_lie_in_the_declared_bounds(env_id):
    env = gymnasium.make(f"motivegym/{env_id}", disable_env_checker=True).unwrapped
    space = env.observation_space
    low, high = env.core_env.observation_bounds(env.params)
    for seed in (0, 1):
        agent_obs, global_obs = random_rollout(env_id, seed)
        assert np.isfinite(agent_obs).all() and np.isfinite(global_obs).all()
        assert (agent_obs >= low).all() and (agent_obs <= high).all(), f"{env_id}: observe() outside [{low}, {high}]"
        assert all(space.contains(g.astype(np.float32)) for g in global_obs), f"{env_id}: global state outside {space}"


def test_known_bounds_are_declared():
    grid = gymnasium.make("motivegym/KeyDoorGift-v0", disable_env_checker=True)
    assert grid.observation_space.bounded_below.all() and grid.observation_space.bounded_above.all()
    assert (grid.observation_space.low == 0).all() and (grid.observation_space.high == 1).all()
    trust = gymnasium.make("motivegym/TrustDilemma-v0", max_steps=500, disable_env_checker=True)
    assert trust.observation_space.high.max() == 500  # the legacy layout's raw step counter bounds it
    for env_id in ALL_ENVS:  # finite everywhere: Gymnasium's checker warns about infinite bounds
        env, params = motivegym.make_jax(env_id)
        assert np.isfinite(env.observation_bounds(params)).all(), env_id


# ----- wrappers and SB3 -----
def play_episode(env, seed: int) -> tuple[list[float], dict]:
    """Random actions until the episode ends; returns the rewards and the last info."""
    env.reset(seed=seed)
    env.action_space.seed(seed)
    rewards, done = [], False
    while not done:
        _, reward, terminated, truncated, info = env.step(env.action_space.sample())
        rewards.append(reward)
        done = terminated or truncated
    return rewards, info


@pytest.mark.parametrize("env_id", cases(QUICK_WRAPPERS))
def test_single_env_wrappers_and_sb3_check_env(env_id):
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    kwargs = {"max_steps": 5} if "max_steps" in motivegym.get_spec(env_id).make_env().parameter_names() else {}
    rewards, info = play_episode(RecordEpisodeStatistics(gymnasium.make(f"motivegym/{env_id}", **kwargs)), 0)
    assert all(type(r) is float for r in rewards)
    assert info["episode"]["r"] == pytest.approx(sum(rewards), rel=1e-6) and info["episode"]["l"] == len(rewards)
    normalized, _ = play_episode(NormalizeReward(gymnasium.make(f"motivegym/{env_id}", **kwargs)), 0)
    assert len(normalized) == len(rewards) and np.isfinite(normalized).all()
    assert np.array_equal(np.sign(normalized), np.sign(rewards))  # scaled by a positive factor (sparse: all 0)
    if np.any(rewards):
        assert not np.allclose(normalized, rewards)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SB3 advises on unbounded / unnormalised Boxes; errors are what fail
        sb3_check_env(gymnasium.make(f"motivegym/{env_id}", **kwargs), warn=True)


# ----- make_vec: three modes, one game -----
def rollout_vector(vec, seed, steps: int, rng_seed: int = 0) -> list[tuple]:
    """``steps`` random joint steps from ``reset(seed=seed)``: each step's (obs, rewards, terminated, truncated)."""
    obs, _ = vec.reset(seed=seed)
    rng = np.random.default_rng(rng_seed)
    low, high = vec.single_action_space.low, vec.single_action_space.high
    records = [(obs,)]
    for _ in range(steps):
        actions = rng.uniform(low, high, (vec.num_envs, low.shape[0])).astype(np.float32)
        obs, rewards, terminated, truncated, _ = vec.step(actions)
        records.append((obs, rewards, terminated, truncated))
    return records


def assert_same_records(a: list[tuple], b: list[tuple]) -> None:
    for t, (x, y) in enumerate(zip(a, b, strict=True)):
        for u, v in zip(x, y, strict=True):
            assert u.dtype == v.dtype and u.shape == v.shape, f"step {t}: {u.dtype}{u.shape} vs {v.dtype}{v.shape}"
            np.testing.assert_allclose(u, v, rtol=1e-6, err_msg=f"step {t}")


def test_sync_and_vector_entry_point_play_the_same_game_across_autoresets():
    """A stochastic env (hidden synergy drawn at reset), 3-step episodes: 8 steps span two autoresets."""
    make = lambda mode: gymnasium.make_vec("motivegym/SynergySearch-v0", num_envs=3, vectorization_mode=mode, max_steps=3)  # noqa: E731
    native, sync = make("vector_entry_point"), make("sync")
    assert native.metadata["autoreset_mode"] == sync.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    for seed in (4, [9, 2, 7]):
        ours, theirs = rollout_vector(native, seed, 8), rollout_vector(sync, seed, 8)
        assert_same_records(ours, theirs)
    assert not np.allclose(ours[1][1], rollout_vector(native, 5, 1)[1][1])  # other seeds, another game
    assert ours[4][1].tolist() == [0.0, 0.0, 0.0] and not ours[4][2].any()  # the reset step after the horizon
    single = gymnasium.make("motivegym/SynergySearch-v0", max_steps=3)
    np.testing.assert_array_equal(single.reset(seed=2)[0], ours[0][0][1])  # sub-env 1 seeded with 2 = gymnasium.make
    with pytest.raises(ValueError, match="2 seeds for 3"):
        native.reset(seed=[1, 2])


def test_reset_with_none_seeds_continues_each_sub_envs_generator():
    native = gymnasium.make_vec("motivegym/SynergySearch-v0", num_envs=2, vectorization_mode="vector_entry_point")
    sync = gymnasium.make_vec("motivegym/SynergySearch-v0", num_envs=2, vectorization_mode="sync")
    actions = np.full((2, 2), 40.0, np.float32)
    for vec in (native, sync):
        vec.reset(seed=3)
    for seed in ([None, 8], None):
        np.testing.assert_array_equal(native.reset(seed=seed)[0], sync.reset(seed=seed)[0])
        np.testing.assert_allclose(native.step(actions)[1], sync.step(actions)[1], rtol=1e-6)


@pytest.mark.parametrize("autoreset_mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
def test_vector_record_episode_statistics_in_both_autoreset_modes(autoreset_mode):
    vec = gymnasium.make_vec("motivegym/TrustDilemma-v0", num_envs=2, vectorization_mode="vector_entry_point", max_steps=3,
                             autoreset_mode=autoreset_mode)  # fmt: skip
    assert vec.metadata["autoreset_mode"] == autoreset_mode
    vec = VectorRecordEpisodeStatistics(vec)
    vec.reset(seed=0)
    returns = np.zeros(2)
    for _ in range(3):
        _, rewards, _, truncated, info = vec.step(np.full((2, 2), 30.0, np.float32))
        assert rewards.dtype == np.float64 and rewards.shape == (2,)
        returns += rewards
    assert truncated.all()
    np.testing.assert_allclose(info["episode"]["r"], returns, rtol=1e-6)
    np.testing.assert_array_equal(info["episode"]["l"], [3, 3])


def test_per_agent_rewards_through_the_native_vector_env():
    vec = gymnasium.make_vec("motivegym/TrustDilemma-v0", num_envs=2, vectorization_mode="vector_entry_point", scalarize=None)
    vec.reset(seed=0)
    _, rewards, _, _, info = vec.step(np.full((2, 2), 30.0, np.float32))
    assert rewards.shape == (2, 2) and rewards.dtype == np.float64
    np.testing.assert_allclose(rewards, info["rewards"], rtol=1e-6)


ASYNC_SCRIPT = """
import gymnasium, numpy as np, motivegym
kwargs = dict(num_envs=2, max_steps=3)
records = []
for mode in ("async", "sync"):  # async first: its parent starts JAX (the dummy env) before forking; sync is in-process
    vec = gymnasium.make_vec("motivegym/SynergySearch-v0", vectorization_mode=mode, **kwargs)
    obs, _ = vec.reset(seed=[5, 6])
    steps = [(obs,)] + [out[:4] for out in (vec.step(np.full((2, 2), 25.0 + t, np.float32)) for t in range(5))]
    records.append(steps)
    vec.close()
same = all(np.allclose(x, y) and x.dtype == y.dtype for a, b in zip(*records) for x, y in zip(a, b))
print("same" if same else "different")
"""


def test_async_with_the_default_fork_start_method_does_not_hang():
    """Gymnasium's async mode forks its workers (Linux default); workers that used the parent's JAX deadlocked."""
    try:
        done = subprocess.run([sys.executable, "-c", textwrap.dedent(ASYNC_SCRIPT)], capture_output=True, text=True, timeout=400)
    except subprocess.TimeoutExpired:
        pytest.fail("make_vec(..., vectorization_mode='async') hung (no result in 400 s)")
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == "same", done.stdout


def test_torchrl_gym_env_recovers_from_the_frameskip_probe():
    """TorchRL's ``GymEnv`` first tries ``make(id, frameskip=...)`` and recovers only from that ``TypeError``."""
    envs = pytest.importorskip("torchrl.envs", reason="torchrl is not installed (pip install torchrl==0.14.1)")
    env = envs.GymEnv("motivegym/TrustDilemma-v0", max_steps=4)
    rollout = env.rollout(6)
    assert rollout["next", "reward"].shape == (4, 1)  # a scalar reward per step; the episode ends after 4 steps
    assert bool(rollout["next", "truncated"][-1])


def test_a_fork_after_jax_is_noticed_and_gets_the_subprocess_env():
    from motivegym.adapters.gymnasium_env import SubprocessEnv, forked_after_jax, make_env

    assert not forked_after_jax() and type(make_env(env_id="TrustDilemma-v0")).__name__ == "GymnasiumEnv"
    jax.numpy.zeros(1).block_until_ready()  # JAX is running in this process
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # JAX's generic os.fork() warning
        pid = os.fork()
    if pid == 0:  # the child touches no JAX: it only reports what the at-fork hook saw
        os._exit(0 if forked_after_jax() else 1)
    assert os.waitpid(pid, 0)[1] == 0
    remote = SubprocessEnv({"env_id": "TrustDilemma-v0", "max_steps": 3})
    local = make_env(env_id="TrustDilemma-v0", max_steps=3)
    try:
        assert remote.observation_space == local.observation_space and remote.action_space == local.action_space
        np.testing.assert_array_equal(remote.reset(seed=1)[0], local.reset(seed=1)[0])
        action = np.array([60.0, 30.0], np.float32)
        for got, expected in zip(remote.step(action)[:4], local.step(action)[:4]):
            np.testing.assert_allclose(got, expected, rtol=1e-6)
        assert remote.n_agents == 2  # other attributes are fetched from the env process
        with pytest.raises(ValueError, match="agent_1"):  # errors cross the pipe with their type
            remote.step(np.array([1.0, np.nan], np.float32))
    finally:
        remote.close()
    assert remote._process.returncode == 0


def test_unknown_keywords_are_type_errors_through_every_params_path():
    for env_id in ("TrustDilemma-v0", "ApacheProject-v0", "PrisonersDilemma-v0", "Harvest-v0"):
        with pytest.raises(TypeError, match="unexpected keyword argument 'frameskip'") as raised:
            motivegym.make_jax(env_id, frameskip=4)
        assert isinstance(raised.value, ValueError) and "Valid keyword arguments" in str(raised.value)
