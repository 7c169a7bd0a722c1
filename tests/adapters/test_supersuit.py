"""The SuperSuit route to SB3 (``docs/sb3.md``): ``pettingzoo_env_to_vec_env_v1`` + ``concat_vec_envs_v1`` on
``motivegym.parallel_env``, with the documented normalised actions and seeding.

SuperSuit copies the env with cloudpickle, so the first test (no SuperSuit needed) checks that a pickled or
deep-copied motivegym env plays its own actions.
"""

from __future__ import annotations

import copy
import importlib.util
import re
import warnings
from pathlib import Path

import cloudpickle
import gymnasium
import numpy as np
import pytest

import motivegym

HAS_SUPERSUIT = importlib.util.find_spec("supersuit") is not None and importlib.util.find_spec("stable_baselines3") is not None
needs_supersuit = pytest.mark.skipif(not HAS_SUPERSUIT, reason="supersuit or stable_baselines3 is not installed (pip install supersuit==3.11.0)")


def pickled(env):
    """The copy SuperSuit makes (cloudpickle: the env holds jitted closures that plain pickle refuses)."""
    return cloudpickle.loads(cloudpickle.dumps(env))


@pytest.mark.parametrize("make_copy", [copy.deepcopy, pickled], ids=["deepcopy", "cloudpickle"])
@pytest.mark.parametrize("reset_first", [False, True], ids=["fresh", "after-reset"])
def test_copies_of_an_env_play_their_own_actions(make_copy, reset_first):
    original = motivegym.parallel_env("PartnerHoldUp-v0", reward="private")
    if reset_first:
        original.reset(seed=1)
        original.step({"agent_0": np.array([5.0], np.float32), "agent_1": np.array([5.0], np.float32)})
    twin = make_copy(original)
    reference = motivegym.parallel_env("PartnerHoldUp-v0", reward="private")
    for env in (twin, reference):
        env.reset(seed=0)
    for a0, a1 in ((90.0, 60.0), (0.0, 80.0), (120.0, 0.0)):
        actions = {"agent_0": np.array([a0], np.float32), "agent_1": np.array([a1], np.float32)}
        assert twin.step(actions)[1] == reference.step(actions)[1]


def test_a_copied_gymnasium_env_plays_its_own_actions():
    env = gymnasium.make("motivegym/TrustDilemma-v0", disable_env_checker=True)
    twin, reference = copy.deepcopy(env), gymnasium.make("motivegym/TrustDilemma-v0", disable_env_checker=True)
    for e in (twin, reference):
        e.reset(seed=0)
    for action in ([90.0, 10.0], [0.0, 100.0]):
        np.testing.assert_array_equal(twin.step(np.array(action, np.float32))[1], reference.step(np.array(action, np.float32))[1])


# ----- the documented SuperSuit recipe (docs/sb3.md) -----
def to_bounds(action: np.ndarray, space: gymnasium.spaces.Box) -> np.ndarray:
    """SuperSuit ``action_lambda_v1``: a ``[-1, 1]`` action mapped to the agent's own ``[low, high]``."""
    return space.low + (np.clip(action, -1.0, 1.0) + 1.0) / 2.0 * (space.high - space.low)


def unit_box(space: gymnasium.spaces.Box) -> gymnasium.spaces.Box:
    return gymnasium.spaces.Box(-1.0, 1.0, space.shape, np.float32)


def supersuit_vec_env(env_id: str, copies: int, normalize: bool = True, **kwargs):
    """``motivegym.parallel_env`` → (normalised actions) → SuperSuit's SB3 vec env of ``copies`` copies."""
    import supersuit as ss

    env = motivegym.parallel_env(env_id, **kwargs)
    if normalize:
        env = ss.action_lambda_v1(env, to_bounds, unit_box)
    return ss.concat_vec_envs_v1(ss.pettingzoo_env_to_vec_env_v1(env), copies, num_cpus=0, base_class="stable_baselines3")


@needs_supersuit
def test_agents_with_different_bounds_need_normalised_actions():
    with pytest.raises(AssertionError, match="action spaces not consistent"):
        supersuit_vec_env("PartnerHoldUp-v0", 1, normalize=False)
    vec = supersuit_vec_env("PartnerHoldUp-v0", 1, reward="private")
    assert vec.action_space == unit_box(gymnasium.spaces.Box(0, 1, (1,)))


@needs_supersuit
@pytest.mark.parametrize("env_id", ["PartnerHoldUp-v0", "PublicGoods-v0"])
def test_supersuit_route_plays_the_sb3_adapters_game(env_id):
    """Copy 0 seeded with ``s`` and the SB3 adapter seeded with ``s``: same rewards, payoffs and observations
    for the same ``[-1, 1]`` actions (the agents' different bounds included)."""
    from motivegym.adapters.sb3 import vec_env

    kwargs = {"reward": "private", "max_steps": 4}
    vec = supersuit_vec_env(env_id, 2, **kwargs)
    adapter = vec_env(env_id, num_envs=1, agent_id=False, **kwargs)
    n = adapter.n_agents
    obs, _ = vec.venv.reset(seed=5)
    adapter.seed(5)
    np.testing.assert_array_equal(obs[:n], adapter.reset())
    rng = np.random.default_rng(0)
    for _ in range(6):  # across the truncation at step 4 and the auto-reset
        unit = rng.uniform(-1.2, 1.2, (2 * n, 1)).astype(np.float32)
        obs, rewards, dones, infos = vec.step(unit)
        a_obs, a_rewards, a_dones, a_infos = adapter.step(unit[:n])
        np.testing.assert_allclose(rewards[:n], a_rewards, rtol=1e-5)
        np.testing.assert_allclose([i["payoff"] for i in infos[:n]], [i["payoff"] for i in a_infos], rtol=1e-5)
        np.testing.assert_array_equal(dones[:n], a_dones)
        if not a_dones[0]:
            np.testing.assert_allclose(obs[:n], a_obs, rtol=1e-5, atol=1e-6)


def first_observations(vec, resets: int) -> list[np.ndarray]:
    return [vec.reset() for _ in range(resets)]


@needs_supersuit
def test_unseeded_copies_repeat_one_game_and_seeded_copies_do_not():
    """SuperSuit pickles one env into every copy, random generator included: unless the copies are seeded
    (``vec.venv.reset(seed=s)`` gives copy i the seed s + i) they all play the same game."""
    vec = supersuit_vec_env("CoinGame-v0", 3)
    for obs in first_observations(vec, 3):
        assert all(np.array_equal(obs[:2], obs[2 * i : 2 * i + 2]) for i in (1, 2))
    vec = supersuit_vec_env("CoinGame-v0", 3)
    vec.venv.reset(seed=0)
    for obs in first_observations(vec, 3):  # SB3's own reset() calls continue each copy's generator
        assert not np.array_equal(obs[:2], obs[2:4]) or not np.array_equal(obs[:2], obs[4:6])


@needs_supersuit
def test_ppo_with_an_int_seed_fails_in_supersuit_and_the_documented_seeding_is_reproducible():
    """SuperSuit 3.11's SB3 wrapper has no ``seed()`` (SB3 forwards it to SuperSuit's gymnasium VectorEnv), so
    ``PPO(seed=0)`` raises; seeding the copies and torch as docs/sb3.md says makes runs repeat exactly."""
    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.utils import set_random_seed

    with pytest.raises(AttributeError, match="seed"):
        PPO("MlpPolicy", supersuit_vec_env("TrustDilemma-v0", 2), seed=0, device="cpu")

    def trained(seed: int) -> torch.Tensor:
        vec = supersuit_vec_env("TrustDilemma-v0", 2, max_steps=8)
        vec.venv.reset(seed=seed)
        set_random_seed(seed)
        model = PPO("MlpPolicy", vec, n_steps=16, batch_size=32, n_epochs=2, device="cpu")
        model.learn(64)
        return torch.nn.utils.parameters_to_vector(model.policy.parameters()).detach()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        first, again, other = trained(0), trained(0), trained(1)
    assert torch.equal(first, again) and not torch.equal(first, other)


DOCS = Path(__file__).resolve().parents[2] / "docs" / "sb3.md"


BLOCKS = re.findall(r"```python\n(.*?)```", DOCS.read_text(), re.S)


@pytest.mark.parametrize("block", BLOCKS, ids=[f"block-{i}" for i in range(len(BLOCKS))])
def test_docs_examples_run(block):
    pytest.importorskip("stable_baselines3")
    if "supersuit" in block and not HAS_SUPERSUIT:
        pytest.skip("supersuit is not installed (pip install supersuit==3.11.0)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(block, str(DOCS), "exec"), {})
