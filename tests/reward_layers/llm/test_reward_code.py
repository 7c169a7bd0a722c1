import json

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import motivegym
from motivegym.reward_layers import reward_layer
from motivegym.reward_layers.llm.client import LLMClient
from motivegym.reward_layers.llm.reward_code import (
    CodeReward,
    InvalidRewardCodeError,
    UnsafeRewardCodeError,
    check_reward_code,
    evolve,
    extract_code,
    ippo_trainer,
    sample_transitions,
    validate_reward_code,
)

HEADER = "def reward(obs, actions, payoffs, next_obs, info):\n"
VALID = HEADER + '    """Payoff plus a trust bonus."""\n    bonus = 10.0 * info["mean_trust"]\n    return payoffs * 0.5 + next_obs[:, 0] - bonus\n'


@pytest.fixture(scope="module")
def trust():
    return motivegym.make_jax("TrustDilemma-v0", max_steps=10)


@pytest.mark.parametrize(
    "source, message",
    [
        ("import os\n" + HEADER + "    return payoffs\n", "import"),
        (HEADER + "    import os\n    return payoffs\n", "import"),
        (HEADER + "    return obs.__class__\n", r"attribute access \.__class__"),
        (HEADER + "    x = obs.T\n    return payoffs\n", r"attribute access \.T"),
        (HEADER + "    f = open('/etc/passwd')\n    return payoffs\n", "calling 'open'"),
        (HEADER + "    open('/etc/passwd')\n    return payoffs\n", "calling 'open'"),
        (HEADER + "    x = exec('1')\n    return payoffs\n", "calling 'exec'"),
        (HEADER + "    return eval('payoffs')\n", "calling 'eval'"),
        (HEADER + "    return jnp.linalg.norm(obs)\n", "calling 'jnp.linalg.norm'"),
        (HEADER + "    return jnp.load('x')\n", "jnp.load"),
        (HEADER + "    return __builtins__\n", "the name '__builtins__'"),
        (HEADER + "    return payoffs + 10 ** 10 ** 10\n", "arithmetic on two constants"),
        (HEADER + "    for i in range(3):\n        pass\n    return payoffs\n", "For statement"),
        (HEADER + "    while True:\n        pass\n    return payoffs\n", "While statement"),
        (HEADER + "    if payoffs[0] > 0:\n        return payoffs\n    return payoffs\n", "If statement"),
        (HEADER + "    f = lambda x: x\n    return payoffs\n", "Lambda"),
        (HEADER + "    return jnp.stack([p for p in payoffs])\n", "jnp.stack|ListComp"),
        (HEADER + "    x = 'text'\n    return payoffs\n", "constant 'text'"),
        (HEADER + "    return info[payoffs]\n", "string constant"),
        (HEADER + "    obs[0] = 1\n    return payoffs\n", "assignment to anything but plain names"),
        ("x = 1\n" + HEADER + "    return payoffs\n", "exactly one"),
        ("@jax.jit\n" + HEADER + "    return payoffs\n", "decorator"),
    ],
)
def test_unsafe_code_is_rejected(source, message):
    with pytest.raises(UnsafeRewardCodeError, match=message):
        check_reward_code(source)


def test_broadcasting_into_a_huge_array_is_rejected(trust):
    env, params = trust  # the huge array is only traced (abstract shapes), never allocated
    source = HEADER + (
        "    a = obs[:, :, None, None] * obs[None, None, :, :]\n"
        "    b = a[:, :, :, :, None, None, None, None] * a[None, None, None, None, :, :, :, :]\n"
        "    c = b[:, :, :, :, :, :, :, :, None, None] * obs[None, None, None, None, None, None, None, None, :, :]\n"
        "    return payoffs + jnp.sum(c)\n"
    )
    with pytest.raises(UnsafeRewardCodeError, match="builds an array of"):
        validate_reward_code(source, env, params)


@pytest.mark.parametrize(
    "source, message",
    [
        ("def reward(obs:\n", "does not parse"),
        ("def reward(obs, actions):\n    return obs\n", "signature"),
        ("def score(obs, actions, payoffs, next_obs, info):\n    return payoffs\n", "called 'reward'"),
        (HEADER + "    x = payoffs\n", "must end with `return"),
        (HEADER + "    return jnp.sum(payoffs)\n", r"shape \(2,\)"),
        (HEADER + "    return jnp.log(payoffs * 0.0 - 1.0)\n", "NaN/inf"),
        (HEADER + "    return payoffs + info['nope']\n", "info\\['nope'\\]"),
        (HEADER + "    return payoffs + undefined_name_is_unsafe_not_invalid\n", None),
    ],
)
def test_invalid_code_is_rejected(trust, source, message):
    env, params = trust
    if message is None:  # unknown names are refused by the whitelist
        with pytest.raises(UnsafeRewardCodeError):
            validate_reward_code(source, env, params)
        return
    with pytest.raises(InvalidRewardCodeError, match=message):
        validate_reward_code(source, env, params)


def test_valid_code_compiles_and_runs_inside_jit_with_exact_values(trust):
    env, params = trust
    layer = validate_reward_code(VALID, env, params)
    transitions = sample_transitions(env, params, 4, seed=3)
    _, rewards, parts = jax.jit(jax.vmap(lambda t: layer.apply((), t)))(transitions)
    expected = np.asarray(transitions.payoffs) * 0.5 + np.asarray(transitions.next_obs)[:, :, 0] - 10.0 * np.asarray(transitions.info["mean_trust"])[:, None]
    np.testing.assert_allclose(np.asarray(rewards), expected, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(parts["code"]), expected, rtol=1e-5)


def test_code_layer_from_a_file_through_gymnasium(tmp_path):
    path = tmp_path / "reward.py"
    path.write_text(HEADER + "    return 2.0 * payoffs\n")
    assert isinstance(reward_layer(f"code:{path}"), CodeReward)
    env = gymnasium.make("motivegym/TrustDilemma-v0", reward=f"code:{path}", disable_env_checker=True)
    env.reset(seed=0)
    _, reward, *_, info = env.step(np.array([50.0, 20.0], np.float32))
    np.testing.assert_allclose(reward, 2.0 * info["payoffs"], rtol=1e-6)


def test_code_layer_is_hashable_and_rejects_bad_code_at_construction():
    assert hash(CodeReward(VALID)) == hash(CodeReward(VALID))
    with pytest.raises(UnsafeRewardCodeError):
        CodeReward(HEADER + "    return obs.__dict__\n")


def test_extract_code_finds_the_reward_block():
    answer = "Try this:\n```python\nx = 1\n```\nand\n```python\n" + VALID + "```\nDone."
    assert extract_code(answer) == VALID


def mean_reward_trainer(env, params, layer):
    """A real (cheap) trainer for the loop: the mean candidate reward on sample transitions."""
    transitions = sample_transitions(env, params)
    _, rewards, _ = jax.vmap(lambda t: layer.apply((), t))(transitions)
    return {"score": float(jnp.mean(rewards)), "reward_std": float(jnp.std(rewards))}


def test_evolve_keeps_every_candidate_and_feeds_statistics_back(llm_server, trust, tmp_path):
    env, params = trust
    llm_server.reward_codes = [
        HEADER + "    return payoffs\n",
        HEADER + "    return obs.__class__\n",
        HEADER + "    return jnp.sum(payoffs)\n",
        HEADER + "    return payoffs + 1000.0\n",
    ]
    client = LLMClient(base_url=llm_server.base_url, model="m", backoff=0.0, cache_path=tmp_path / "cache.jsonl")
    out = tmp_path / "evolve.json"
    result = evolve(env, params, client, "maximise joint payoff", num_candidates=4, iterations=2, train_fn=mean_reward_trainer, out_path=out)
    saved = json.loads(out.read_text())
    assert saved == json.loads(json.dumps(result))
    candidates = saved["candidates"]
    assert len(candidates) == 8
    assert [c["status"] for c in candidates[:4]] == ["ok", "unsafe", "invalid", "ok"]
    assert candidates[0]["score"] < candidates[3]["score"]
    assert saved["best"]["code"] == llm_server.reward_codes[3]
    seeds = [r["seed"] for r in llm_server.requests]
    assert sorted(seeds) == list(range(8))
    second_prompt = [r for r in llm_server.requests if r["seed"] == 4][0]["messages"][-1]["content"]
    assert "payoffs + 1000.0" in second_prompt and "reward_std=" in second_prompt and "rejected:" in second_prompt
    first_prompt = [r for r in llm_server.requests if r["seed"] == 0][0]["messages"][-1]["content"]
    assert "Earlier candidates" not in first_prompt and "mean_trust []" in first_prompt
    # a rerun is answered from the cache
    evolve(env, params, client, "maximise joint payoff", num_candidates=4, iterations=2, train_fn=mean_reward_trainer)
    assert llm_server.num_requests == 8


@pytest.mark.slow
def test_evolve_with_a_tiny_ippo_budget(llm_server):
    env, params = motivegym.make_jax("TrustDilemma-v0", max_steps=4)
    llm_server.reward_codes = [HEADER + "    return payoffs / 100.0\n"]
    client = LLMClient(base_url=llm_server.base_url, model="m", backoff=0.0)
    trainer = ippo_trainer(total_steps=64, num_envs=4, num_steps=8, eval_episodes=2)
    result = evolve(env, params, client, "maximise joint payoff", num_candidates=1, iterations=1, train_fn=trainer)
    best = result["best"]
    assert best["status"] == "ok" and np.isfinite(best["score"])
    assert len(best["stats"]["episode_payoffs"]) == 2
    assert best["score"] == pytest.approx(sum(best["stats"]["episode_payoffs"]), rel=1e-5)
