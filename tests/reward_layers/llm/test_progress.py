"""LLM progress functions + count bonus over discretised progress (Sarukkai et al. 2024), end to end against the
loopback server of ``conftest.py`` with canned answers."""

from __future__ import annotations

import dataclasses

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import motivegym
from motivegym.core.env import Transition
from motivegym.reward_layers import reward_layer
from motivegym.reward_layers.base import LayerSpec
from motivegym.reward_layers.llm import InvalidRewardCodeError, LLMClient, UnsafeRewardCodeError
from motivegym.reward_layers.llm.progress import ProgressCountBonus, progress_reward_from_file, propose_progress_function

#: a real progress function for KeyDoorGift-v0 (observation: [7, 7, 8] channels flattened, then holding, own door open, t)
KEY_DOOR_PROGRESS = """def progress(obs, info):
    key_cells = obs[:, 4:-3:8]
    own_cells = obs[:, 5:-3:8]
    on_key = jnp.sum(key_cells * own_cells, axis=1)
    holding = obs[:, -3]
    own_door_open = obs[:, -2]
    return jnp.clip(0.25 * on_key + 0.5 * holding + own_door_open, 0.0, 1.0)
"""


def canned(server, code: str) -> None:
    """The server answers every prompt that asks for a progress function with ``code`` in a python block."""
    answer = server.answer

    def progress_answer(payload: dict) -> str:
        prompt = payload["messages"][-1]["content"]
        return f"Here it is.\n```python\n{code}```\n" if "def progress(obs, info)" in prompt else answer(payload)

    server.answer = progress_answer


@pytest.fixture(scope="module")
def key_door():
    return motivegym.make_jax("KeyDoorGift-v0")


def test_llm_progress_function_end_to_end(llm_server, key_door):
    env, params = key_door
    canned(llm_server, KEY_DOOR_PROGRESS)
    client = LLMClient(llm_server.base_url, "toy", timeout=30)
    layer = propose_progress_function(env, params, client, "open every door", num_bins=4)
    prompt = llm_server.requests[-1]["messages"][-1]["content"]
    assert "KeyDoorGift" in prompt and "float32 [2, 395]" in prompt and "doors_open" in prompt
    assert layer.source.strip() == KEY_DOOR_PROGRESS.strip()

    # progress by the rule: 0 at the start, 0.5 for the key holder, 1 once its door is open
    state, obs = env.reset(jax.random.PRNGKey(0), params)
    spec = LayerSpec(n_agents=2, obs_size=obs.shape[-1])
    holding = env.observe(dataclasses.replace(state, holder=jnp.int32(0)), params)
    opened = env.observe(dataclasses.replace(state, doors_open=jnp.array([False, True])), params)
    info = {k: v for k, v in env.describe(state, params).items()} | {"terminated": jnp.bool_(False), "truncated": jnp.bool_(False)}

    def step_of(next_obs):
        return Transition(obs, jnp.zeros(2, jnp.int32), jnp.zeros(2), next_obs, jnp.bool_(False), jnp.bool_(False), info)

    apply = jax.jit(layer.apply)
    layer_state = layer.init(jax.random.PRNGKey(1), spec)
    rewards_seen, progress_seen = [], []
    for next_obs in (obs, obs, holding, opened, obs):
        layer_state, rewards, parts = apply(layer_state, step_of(next_obs))
        rewards_seen.append(np.asarray(rewards))
        progress_seen.append(np.asarray(parts["progress"]))
    np.testing.assert_allclose(progress_seen[2], [0.5, 0.0])
    np.testing.assert_allclose(progress_seen[3], [0.0, 1.0])
    # agent 0 visits bins 0, 0, 2, 0, 0: bonus 1/√N of the bin it lands in
    np.testing.assert_allclose([r[0] for r in rewards_seen], [1, 1 / np.sqrt(2), 1, 1 / np.sqrt(3), 1 / 2], rtol=1e-6)
    # agent 1 visits 0, 0, 0, 3 (door open: the top bin), 0
    np.testing.assert_allclose([r[1] for r in rewards_seen], [1, 1 / np.sqrt(2), 1 / np.sqrt(3), 1, 1 / 2], rtol=1e-6)
    assert np.asarray(layer_state["counts"]).tolist() == [[4, 0, 1, 0], [4, 0, 0, 1]]


@pytest.mark.slow
def test_progress_layer_by_name_through_gymnasium(tmp_path):
    """By name, through gymnasium: the bonus and the progress are reward components."""
    path = tmp_path / "progress.py"
    path.write_text(KEY_DOOR_PROGRESS, encoding="utf-8")
    gym_env = gymnasium.make("motivegym/KeyDoorGift-v0", reward=f"private+0.1*progress:{path}")
    gym_env.reset(seed=0)
    _, reward, *_, step_info = gym_env.step(np.zeros(2, np.int64))
    components = step_info["reward_components"]
    assert any(k.endswith("progress.bonus") for k in components) and any(k.endswith("progress.progress") for k in components)


def test_shared_counts_pool_the_agents():
    layer = ProgressCountBonus("def progress(obs, info):\n    return obs[:, 0]\n", num_bins=2, shared=True, sandbox=False)
    obs = jnp.asarray([[0.1], [0.2]])  # both agents in bin 0
    transition = Transition(obs, jnp.zeros(2), jnp.zeros(2), obs, jnp.bool_(False), jnp.bool_(False), {})
    state, rewards, _ = layer.apply(layer.init(jax.random.PRNGKey(0), LayerSpec(2, 1)), transition)
    assert np.asarray(state["counts"]).tolist() == [[2, 0]]
    np.testing.assert_allclose(np.asarray(rewards), [1 / np.sqrt(2)] * 2, rtol=1e-6)


BAD_ANSWERS = {
    "calls open": ("def progress(obs, info):\n    f = open('x')\n    return obs[:, 0]\n", UnsafeRewardCodeError, "calling 'open'"),
    "wrong signature": ("def progress(obs):\n    return obs[:, 0]\n", InvalidRewardCodeError, r"def progress\(obs, info\)"),
    "unknown info key": ("def progress(obs, info):\n    return info['score'] + obs[:, 0]\n", InvalidRewardCodeError, "info\\['score'\\]"),
    "one value, not one per agent": ("def progress(obs, info):\n    return jnp.mean(obs)\n", InvalidRewardCodeError, r"shape \(2,\)"),
    "huge intermediate (sandbox)": (
        "def progress(obs, info):\n    x = obs[:, :, None, None] * obs[:, None, :, None] * obs[:, None, None, :]\n    return jnp.sum(x, axis=(1, 2, 3))\n",
        UnsafeRewardCodeError, "elements",
    ),
    "NaN on samples": ("def progress(obs, info):\n    return jnp.log(obs[:, 0] - 1.0)\n", InvalidRewardCodeError, "NaN/inf"),
    "no code": ("I cannot help with that.", InvalidRewardCodeError, "does not parse|def progress"),
}


#: each of these spawns one more sandbox child (seconds on a busy machine): run with the slow tests
SLOW_CASES = {"unknown info key", "one value, not one per agent"}


@pytest.mark.parametrize("case", [pytest.param(case, marks=pytest.mark.slow) if case in SLOW_CASES else case for case in BAD_ANSWERS])
def test_bad_llm_answer_is_a_clear_error(llm_server, key_door, case):
    env, params = key_door
    code, error, message = BAD_ANSWERS[case]
    canned(llm_server, code)
    client = LLMClient(llm_server.base_url, "toy", timeout=30)
    with pytest.raises(error, match=message) as caught:
        propose_progress_function(env, params, client, "open every door")
    assert "the LLM's progress function" in str(caught.value)


def test_progress_by_name_errors(tmp_path):
    with pytest.raises(ValueError, match="needs a file path, e.g. 'progress:progress.py'"):
        reward_layer("progress")
    with pytest.raises(ValueError, match="does not exist"):
        reward_layer(f"progress:{tmp_path / 'missing.py'}")
    bad = tmp_path / "bad.py"
    bad.write_text("def progress(obs, info):\n    import os\n    return obs[:, 0]\n", encoding="utf-8")
    with pytest.raises(UnsafeRewardCodeError, match="bad.py.*import"):
        progress_reward_from_file(bad)
    good = tmp_path / "good.py"
    good.write_text(KEY_DOOR_PROGRESS, encoding="utf-8")
    layer = reward_layer(f"progress:{good}")
    assert isinstance(layer, ProgressCountBonus) and layer.num_bins == 20
    with pytest.raises(ValueError, match="high must be > low"):
        ProgressCountBonus(KEY_DOOR_PROGRESS, low=1.0, high=1.0)


def test_nan_progress_at_run_time_raises():
    layer = ProgressCountBonus("def progress(obs, info):\n    return jnp.log(obs[:, 0])\n", sandbox=False)
    obs = jnp.asarray([[-1.0], [1.0]])
    transition = Transition(obs, jnp.zeros(2), jnp.zeros(2), obs, jnp.bool_(False), jnp.bool_(False), {})
    with pytest.raises(Exception, match="NaN/inf"):
        jax.block_until_ready(jax.jit(layer.apply)(layer.init(jax.random.PRNGKey(0), LayerSpec(2, 1)), transition))


def test_cli_llm_progress_writes_checked_code_or_fails_clearly(llm_server, tmp_path, capsys):
    from motivegym.cli import main

    canned(llm_server, KEY_DOOR_PROGRESS)
    out = tmp_path / "progress.py"
    assert main(["llm", "progress", "KeyDoorGift-v0", "--base-url", llm_server.base_url, "--model", "toy", "--out", str(out), "--cache", str(tmp_path / "c.jsonl")]) == 0
    assert out.read_text(encoding="utf-8").strip() == KEY_DOOR_PROGRESS.strip() and "progress:" in capsys.readouterr().out
    canned(llm_server, BAD_ANSWERS["calls open"][0])
    assert main(["llm", "progress", "KeyDoorGift-v0", "--base-url", llm_server.base_url, "--model", "toy", "--out", str(tmp_path / "bad.py"), "--cache", str(tmp_path / "c2.jsonl")]) == 2
    assert "the LLM's progress function" in capsys.readouterr().err and not (tmp_path / "bad.py").exists()


@pytest.mark.slow
def test_the_toy_server_progress_answers_pass_every_check(example):
    """examples/llm_server.py wrote docs/intrinsic/llm/*_progress.py: its answers pass the whitelist, the sandbox and
    the env's sample transitions, and CrafterTeam's measures the fraction of achievements unlocked."""
    server = example("llm_server").serve(port=0)
    try:
        client = LLMClient(base_url=f"http://127.0.0.1:{server.server_address[1]}/v1", model="toy", backoff=0.0)
        crafter, crafter_params = motivegym.make_jax("CrafterTeam-v0", preset="crafter")
        layer = propose_progress_function(crafter, crafter_params, client, "unlock achievements")
        achievements = jnp.array([[True] * 11 + [False] * 11, [False] * 22])
        obs = jnp.zeros((2, crafter.observation_size(crafter_params)), jnp.float32)
        np.testing.assert_allclose(layer.progress(obs, {"achievements": achievements}), [0.5, 0.0])
        key_door, key_door_params = motivegym.make_jax("KeyDoorGift-v0")
        assert "holding" in propose_progress_function(key_door, key_door_params, client, "open every door").source
    finally:
        server.shutdown()
