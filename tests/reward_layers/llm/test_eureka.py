"""The Eureka loop (motivegym.experiments.eureka) against the loopback fake LLM server."""

import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import motivegym
from motivegym.experiments.eureka import evolve, ippo_trainer
from motivegym.reward_layers.llm.client import LLMClient
from motivegym.reward_layers.llm.reward_code import sample_transitions

HEADER = "def reward(obs, actions, payoffs, next_obs, info):\n"


@pytest.fixture(scope="module")
def trust():
    return motivegym.make_jax("TrustDilemma-v0", max_steps=10)


def mean_reward_trainer(env, params, layer):
    """A real (cheap) trainer for the loop: the mean candidate reward on sample transitions."""
    transitions = sample_transitions(env, params)
    _, rewards, _ = jax.vmap(lambda t: layer.apply((), t))(transitions)
    return {"score": float(jnp.mean(rewards)), "reward_std": float(jnp.std(rewards))}


@pytest.mark.slow  # a long end-to-end run: .ci/run runs it with -m slow
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
