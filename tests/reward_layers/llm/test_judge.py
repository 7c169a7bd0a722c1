import re

import numpy as np
import pytest

import motivegym
from motivegym.reward_layers.llm.client import LLMClient
from motivegym.reward_layers.llm.judge import episode_caption, judge_episodes, parse_judgement, record_episode


@pytest.mark.parametrize(
    "answer, mode, value",
    [
        ("Good.\nScore: 7", "score", 0.7),
        ("score = 10/10", "score", 1.0),
        ("Score: 3.5 ... final Score: 0", "score", 0.0),
        ("Score: 11", "score", None),
        ("Score: -1", "score", None),
        ("great episode", "score", None),
        ("Answer: yes", "yes_no", 1.0),
        ("reasons\nanswer: No.", "yes_no", 0.0),
        ("Yes", "yes_no", 1.0),
        ("perhaps", "yes_no", None),
    ],
)
def test_parse_judgement(answer, mode, value):
    assert parse_judgement(answer, mode) == (pytest.approx(value) if value is not None else None)


def test_unknown_mode_raises():
    with pytest.raises(ValueError, match="judge mode"):
        parse_judgement("Score: 1", "stars")


def test_judge_episodes_scores_captions_and_caches(llm_server, tmp_path):
    env, params = motivegym.make_jax("TrustDilemma-v0", max_steps=6)
    records = [record_episode(env, params, seed=0, policy=f"constant:{level}") for level in (0.0, 1.0)]
    captions = [episode_caption(env, params, record) for record in records]
    assert all(text.count("\nStep ") == len(r.actions) and "Total payoffs: agent_0=" in text for text, r in zip(captions, records))
    assert len(records[1].actions) == 6  # full cooperation does not end the episode early

    def judge(episode):  # the server scores the final mean trust
        found = re.findall(r"mean_trust=([\d.]+)", episode)
        return f"Score: {10 * float(found[-1]):.1f}" if found else "I cannot tell."

    llm_server.judge = judge
    client = LLMClient(base_url=llm_server.base_url, model="m", backoff=0.0, cache_path=tmp_path / "cache.jsonl")
    result = judge_episodes(client, captions + ["unscorable"], "build trust")
    assert result.rewards[1] > result.rewards[0] and np.isnan(result.rewards[2]) and result.num_unparsed == 1
    expected = [float(re.findall(r"mean_trust=([\d.]+)", text)[-1]) for text in captions]
    np.testing.assert_allclose(result.rewards[:2], np.round(np.array(expected) * 10, 1) / 10)
    again = judge_episodes(LLMClient(base_url=llm_server.base_url, model="m", cache_path=tmp_path / "cache.jsonl"), captions, "build trust")
    assert llm_server.num_requests == 3
    np.testing.assert_array_equal(again.rewards, result.rewards[:2])


def test_record_episode_lengths_and_bad_policy():
    env, params = motivegym.make_jax("TrustDilemma-v0", max_steps=3)
    record = record_episode(env, params, policy="random")
    assert record.actions.shape == (3, 2) and record.payoffs.shape == (3, 2) and len(record.states) == 4
    with pytest.raises(ValueError, match="unknown policy"):
        record_episode(env, params, policy="greedy")
