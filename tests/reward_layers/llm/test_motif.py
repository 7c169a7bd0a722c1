import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import motivegym
from motivegym.core.env import Transition
from motivegym.reward_layers import LayerSpec, reward_layer
from motivegym.reward_layers.llm.client import LLMClient
from motivegym.reward_layers.llm.motif import (
    PREFER_FIRST,
    PREFER_SECOND,
    TIE,
    LearnedReward,
    PairDataset,
    RewardModel,
    annotate_pairs,
    collect_pairs,
    distill,
    distill_dataset,
    parse_preference,
    score_captions,
)


def client_for(server, **kwargs):
    return LLMClient(base_url=server.base_url, model="m", backoff=0.0, **kwargs)


@pytest.mark.parametrize(
    "answer, label",
    [("Answer: 1", PREFER_FIRST), ("blah\nanswer: (2)", PREFER_SECOND), ("Answer: TIE.", TIE), ("2", PREFER_SECOND), ("Answer: 1 ... Answer: 2", PREFER_SECOND), ("no idea", None)],
)
def test_parse_preference(answer, label):
    assert parse_preference(answer) == label


def test_annotate_labels_follow_the_server_and_resume_from_the_labels_file(llm_server, tmp_path):
    pairs = [("cooperate cooperate", "defect"), ("defect", "cooperate"), ("cooperate", "cooperate"), ("x", "y")]
    labels_path = tmp_path / "labels.jsonl"
    assert annotate_pairs(pairs, client_for(llm_server), labels_path, chunk_size=2) == [PREFER_FIRST, PREFER_SECOND, TIE, TIE]
    assert llm_server.num_requests == 4
    more = pairs + [("cooperate", "nothing")]
    # a fresh client without a response cache: only the new pair is sent
    assert annotate_pairs(more, client_for(llm_server), labels_path) == [PREFER_FIRST, PREFER_SECOND, TIE, TIE, PREFER_FIRST]
    assert llm_server.num_requests == 5
    assert len(labels_path.read_text().splitlines()) == 5


def test_unparseable_answers_give_none_and_are_dropped_by_distill(llm_server):
    llm_server.prefer = lambda a, b: "maybe"
    labels = annotate_pairs([("a", "b"), ("c", "d")], client_for(llm_server))
    assert labels == [None, None]
    with pytest.raises(ValueError, match="at least 2 parseable labels"):
        distill(np.zeros((2, 3)), np.ones((2, 3)), labels)


def synthetic_preferences(num_pairs, n_agents=2, dim=6, seed=0):
    """Per-agent observation rows; the true state score is mean_i w·o_i; labels by Bradley-Terry sign."""
    rng = np.random.default_rng(seed)
    w = rng.normal(size=dim)
    a = rng.normal(size=(num_pairs, n_agents, dim)).astype(np.float32)
    b = rng.normal(size=(num_pairs, n_agents, dim)).astype(np.float32)
    score = lambda x: (x @ w).mean(-1)  # noqa: E731
    labels = [PREFER_SECOND if sb > sa else PREFER_FIRST for sa, sb in zip(score(a), score(b))]
    return a, b, labels, w


def test_distill_reaches_high_heldout_agreement_on_synthetic_preferences():
    a, b, labels, _ = synthetic_preferences(600)
    result = distill(a, b, labels, hidden_sizes=(32,), steps=400, learning_rate=1e-2)
    assert result.num_train == 480 and result.num_heldout == 120 and result.num_dropped == 0
    assert result.heldout_agreement > 0.9, result
    assert result.train_agreement > 0.9


def test_distill_rejects_bad_input():
    a, b, labels, _ = synthetic_preferences(10)
    with pytest.raises(ValueError, match="labels must be"):
        distill(a, b, labels[:-1] + [7])
    with pytest.raises(ValueError, match="do not match"):
        distill(a, b[:5], labels)
    with pytest.raises(ValueError, match="feature_kind"):
        distill(a, b, labels, feature_kind="pixels")


def fitted_model(steps=200):
    a, b, labels, w = synthetic_preferences(300, dim=4)
    return distill(a, b, labels, hidden_sizes=(16,), steps=steps, learning_rate=1e-2).model, w


def test_learned_reward_runs_inside_jit_with_normalisation_and_coefficient():
    model, w = fitted_model()
    layer = LearnedReward(model, coef=2.0)
    next_obs = jnp.asarray(np.random.default_rng(1).normal(size=(2, 4)), jnp.float32)
    transition = Transition(next_obs, jnp.zeros(2), jnp.zeros(2), next_obs, jnp.bool_(False), jnp.bool_(False), {})
    state = layer.init(jax.random.PRNGKey(0), LayerSpec(2, 4))
    _, rewards, parts = jax.jit(layer.apply)(state, transition)
    expected = 2.0 * (np.asarray(model.raw_score(next_obs)) - model.output_mean) / model.output_std
    np.testing.assert_allclose(np.asarray(rewards), expected, rtol=1e-5, atol=1e-6)
    assert rewards.shape == (2,) and set(parts) == {"learned"}
    # the learned reward orders observation rows like the true score
    rows = jnp.asarray(np.random.default_rng(2).normal(size=(200, 4)), jnp.float32)
    corr = np.corrcoef(np.asarray(model.raw_score(rows)), np.asarray(rows) @ w)[0, 1]
    assert corr > 0.9


def test_learned_reward_is_hashable_and_round_trips_through_npz(tmp_path):
    model, _ = fitted_model(steps=50)
    path = tmp_path / "model.npz"
    model.save(path)
    loaded = RewardModel.load(path)
    assert loaded == model and hash(LearnedReward(loaded)) == hash(LearnedReward(model))
    layer = reward_layer(f"learned:{path}")
    assert isinstance(layer, LearnedReward) and layer.model == model


def test_learned_reward_rejects_a_wrong_observation_size():
    model, _ = fitted_model(steps=10)
    obs = jnp.zeros((2, 5))
    transition = Transition(obs, jnp.zeros(2), jnp.zeros(2), obs, jnp.bool_(False), jnp.bool_(False), {})
    with pytest.raises(ValueError, match="observations of size 4"):
        LearnedReward(model).apply((), transition)


def mean_trust_of(text):
    return float(re.search(r"mean_trust=([-\d.e]+)", text).group(1))


@pytest.mark.slow  # a long end-to-end run: .ci/run runs it with -m slow
def test_end_to_end_trust_preferences_distilled_into_an_observation_reward(llm_server, tmp_path):
    env, params = motivegym.make_jax("TrustDilemma-v0", max_steps=20)
    dataset = collect_pairs(env, params, num_pairs=300, seed=0)
    assert dataset.obs_a.shape == (300, 2, env.observation_size(params))
    llm_server.prefer = lambda a, b: "1" if mean_trust_of(a) > mean_trust_of(b) else "2" if mean_trust_of(b) > mean_trust_of(a) else "tie"
    labels = annotate_pairs(dataset.caption_pairs, client_for(llm_server, max_workers=8))
    dataset.save(tmp_path / "pairs.npz")
    loaded = PairDataset.load(tmp_path / "pairs.npz")
    assert loaded.captions_a == dataset.captions_a
    result = distill_dataset(loaded, labels, hidden_sizes=(32,), steps=400, learning_rate=1e-2)
    assert result.heldout_agreement > 0.85, result
    # the text model on hashed n-grams learns the same preference from the captions alone
    text = distill_dataset(loaded, labels, feature_kind="text", text_dim=256, hidden_sizes=(32,), steps=300, learning_rate=1e-2)
    assert text.train_agreement > 0.9
    scores = score_captions(text.model, list(loaded.captions_a[:3]))
    assert scores.shape == (3,)
    with pytest.raises(ValueError, match="observation features"):
        LearnedReward(text.model)


def test_bad_learned_files_name_the_file_and_the_problem(tmp_path):
    pickled = tmp_path / "pickled.npz"
    pickled.write_bytes(b"\x80\x04\x95 not a zip")  # before: numpy's "allow_pickle=False" message
    array = tmp_path / "array.npz"
    with open(array, "wb") as handle:
        np.save(handle, np.zeros(3))
    foreign = tmp_path / "foreign.npz"
    np.savez(foreign, weights=np.zeros(3))
    empty = tmp_path / "empty.npz"
    empty.write_bytes(b"")
    cases = [
        (tmp_path, "is a directory"),  # before: IsADirectoryError
        (tmp_path / "missing.npz", "does not exist"),
        (pickled, "is not a .npz archive"),
        (empty, "is not a .npz archive"),
        (array, "holds a single array"),
        (foreign, "lacks feature_kind, input_mean, input_std, layer_0, output, text_dim"),
    ]
    for path, problem in cases:
        with pytest.raises(ValueError, match=f"reward model file {re.escape(str(path))} {problem}"):
            reward_layer(f"learned:{path}")


def test_labels_file_torn_by_a_kill_still_resumes(llm_server, tmp_path):
    pairs = [("cooperate", "defect"), ("defect", "cooperate"), ("x", "y")]
    labels_path = tmp_path / "labels.jsonl"
    annotate_pairs(pairs[:2], client_for(llm_server), labels_path)
    data = labels_path.read_bytes()
    labels_path.write_bytes(data[: len(data) - 7])  # the last row torn mid-write
    with pytest.warns(UserWarning, match="skipped 1 torn line"):
        labels = annotate_pairs(pairs, client_for(llm_server), labels_path)
    assert labels == [PREFER_FIRST, PREFER_SECOND, TIE] and llm_server.num_requests == 4  # the torn pair is asked again


def test_distill_continues_from_init_layers():
    """A warm start (ONI's continuous reward-model training) reaches in 40 steps what a fresh fit needs 400 for;
    mismatched layer shapes are refused."""
    a, b, labels, _ = synthetic_preferences(600)
    first = distill(a[:300], b[:300], labels[:300], hidden_sizes=(32,), steps=400, learning_rate=1e-2)
    fresh_short = distill(a, b, labels, hidden_sizes=(32,), steps=40, learning_rate=1e-2)
    warm_short = distill(a, b, labels, hidden_sizes=(32,), steps=40, learning_rate=1e-2, init_layers=list(first.model.layers))
    assert warm_short.final_loss < fresh_short.final_loss
    assert warm_short.heldout_agreement > 0.9
    one_step = distill(a, b, labels, hidden_sizes=(32,), steps=1, learning_rate=1e-4, init_layers=list(first.model.layers))
    for x, y in zip(one_step.model.layers, first.model.layers):
        np.testing.assert_allclose(x, y, atol=2e-3)
    with pytest.raises(ValueError, match="init_layers have shapes"):
        distill(a, b, labels, hidden_sizes=(16,), steps=1, init_layers=list(first.model.layers))
