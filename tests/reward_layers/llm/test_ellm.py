import time

import gymnasium
import numpy as np
import pytest

import motivegym  # noqa: F401
from motivegym.reward_layers.llm.client import LLMClient
from motivegym.reward_layers.llm.ellm import ELLMRewardWrapper, goal_bonus, parse_goals
from motivegym.reward_layers.llm.text import cosine_similarity, encode_text, encode_texts


def test_parse_goals_reads_bullets_and_numbers():
    answer = "Some goals:\n- build trust\n* Build trust\n2) share more\nnot a goal\n3. invest"
    assert parse_goals(answer, 5) == ("build trust", "share more", "invest")
    assert parse_goals(answer, 2) == ("build trust", "share more")


def test_text_encoder_is_deterministic_and_unit_norm():
    a, b = encode_text("mean trust rises"), encode_text("mean trust rises")
    np.testing.assert_array_equal(a, b)
    assert np.linalg.norm(a) == pytest.approx(1.0)
    assert cosine_similarity(a, encode_text("mean trust rises quickly")) > cosine_similarity(a, encode_text("xylophone zebra"))
    assert np.all(encode_text("") == 0)


def test_goal_bonus_picks_the_closest_available_goal():
    goals = ["mean trust rises", "payoffs collapse"]
    embeddings = encode_texts(goals)
    bonus, goal = goal_bonus("the mean trust rises", embeddings, np.array([True, True]), threshold=0.5)
    assert goal == 0 and bonus == pytest.approx(float(embeddings[0] @ encode_text("the mean trust rises")))
    assert goal_bonus("the mean trust rises", embeddings, np.array([False, True]), threshold=0.5) == (0.0, -1)
    assert goal_bonus("the mean trust rises", embeddings[:0], np.zeros(0, bool), threshold=0.5) == (0.0, -1)


def test_wrapper_adds_the_bonus_once_per_goal_and_episode(llm_server):
    # a goal that matches every transition caption of this env exactly in vocabulary
    llm_server.goals = ["Before: TrustDilemma: step mean_trust After: TrustDilemma: cooperation_rate", "zebra xylophone"]
    client = LLMClient(base_url=llm_server.base_url, model="m", backoff=0.0)
    base = gymnasium.make("motivegym/TrustDilemma-v0", reward="private", scalarize=None, disable_env_checker=True)
    env = ELLMRewardWrapper(base, client, "build trust", coef=2.0, threshold=0.3)
    _, info = env.reset(seed=0)
    assert info["ellm_goals"] == tuple(llm_server.goals)
    action = np.array([50.0, 50.0], np.float32)
    _, reward, _, _, info = env.step(action)
    assert info["ellm_goal"] == llm_server.goals[0] and info["ellm_bonus"] >= 0.3
    np.testing.assert_allclose(reward, info["payoffs"] + 2.0 * info["ellm_bonus"], rtol=1e-6)
    _, reward, _, _, info = env.step(action)
    assert info["ellm_bonus"] == 0.0 and info["ellm_goal"] == ""
    np.testing.assert_allclose(reward, info["payoffs"], rtol=1e-6)
    env.reset(seed=1)  # a new episode: the goal pays again
    assert env.step(action)[-1]["ellm_bonus"] >= 0.3
    assert llm_server.num_requests == 1  # both episodes start in the same state: the second proposal is a cache hit


def test_wrapper_needs_a_motivegym_env(llm_server):
    client = LLMClient(base_url=llm_server.base_url, model="m")
    with pytest.raises(ValueError, match="motivegym Gymnasium env"):
        ELLMRewardWrapper(gymnasium.make("CartPole-v1"), client, "balance")


def test_goal_lines_are_parsed_like_before():
    answer = "1.5 liters\n- \n-x\n--- heading\n  •  spaced   \n12) twelve\n1x not a goal\n* "
    assert parse_goals(answer, 10) == ("5 liters", "x", "-- heading", "spaced", "twelve")


@pytest.mark.parametrize(
    "answer",
    [
        "- a" + " " * 2**20 + "b",  # before: a 78 KiB answer of this shape took 16 s (quadratic regex)
        "\n".join(f"- goal {k}" for k in range(2**17)),  # before: quadratic duplicate check over every line
        "1" * 2**20,
    ],
)
def test_goal_parsing_is_linear_in_the_answer(answer):
    start = time.monotonic()
    parse_goals(answer, 5)
    assert time.monotonic() - start < 30
