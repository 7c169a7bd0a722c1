"""ONI-style online feedback against a real loopback OpenAI-compatible server that answers slowly.

The server is the one of ``tests/reward_layers/llm/conftest.py`` (loaded from its file: test folders are
not packages); it prefers the caption with the larger ``mean_trust``.
"""

from __future__ import annotations

import importlib.util
import multiprocessing
import os
import re
import threading
from http.server import ThreadingHTTPServer
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import motivegym
from motivegym.baselines.ppo import PPOConfig
from motivegym.core.env import Transition
from motivegym.experiments.oni import FeedbackWorker, ONIConfig, ONIWorkerError, train_oni
from motivegym.reward_layers.base import LayerSpec
from motivegym.reward_layers.llm import LLMClient, LLMResponseError, LLMTimeoutError, LLMUnavailableError
from motivegym.reward_layers.llm.motif import SwappableLearnedReward, distill, swap_reward_model

_spec = importlib.util.spec_from_file_location("llm_fake_server", Path(__file__).parents[1] / "reward_layers" / "llm" / "conftest.py")
fake_server = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fake_server)

TRUST = re.compile(r"mean_trust=([-0-9.e]+)")
TINY_PPO = PPOConfig(total_steps=4 * 16 * 24, num_envs=4, num_steps=16, num_minibatches=2, update_epochs=1, hidden_sizes=(16,))
TINY_ONI = ONIConfig(min_labels=8, distill_every=8, distill_steps=50, hidden_sizes=(8,), first_model_by_update=8, first_model_timeout_s=120.0)


def prefer_trust(first: str, second: str) -> str:
    a, b = (float(TRUST.search(text).group(1)) for text in (first, second))
    return "1" if a > b else "2" if b > a else "tie"


@pytest.fixture
def slow_server():
    """The loopback server, answering every request after 0.2 s."""
    fake = fake_server.FakeLLM()
    fake.sleep = 0.2
    fake.prefer = prefer_trust
    server = ThreadingHTTPServer(("127.0.0.1", 0), fake_server.make_handler(fake))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    fake.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    yield fake
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def trust_env():
    return motivegym.make_jax("TrustDilemma-v0", max_steps=20)


def oni_processes() -> list:
    """Feedback worker processes still running (their annotator and distiller threads live there)."""
    return [p for p in multiprocessing.active_children() if p.name == "oni-feedback"]


def test_training_labels_distills_and_swaps_without_recompiling(slow_server, trust_env, tmp_path):
    env, params = trust_env
    client = LLMClient(slow_server.base_url, "toy", timeout=30, max_workers=4, cache_path=tmp_path / "cache.jsonl")
    result = train_oni(env, params, client, TINY_PPO, TINY_ONI, "private", out_dir=tmp_path)
    assert result.metrics["episodes"].shape == (TINY_PPO.num_updates,)  # training ran to the end
    assert result.stats.labels >= TINY_ONI.min_labels and slow_server.num_requests >= TINY_ONI.min_labels
    assert result.stats.distills >= 1 and result.swaps and result.swaps[0] <= TINY_ONI.first_model_by_update
    assert result.compiles == 1  # the model is part of the update's carry: swapping never recompiled
    learned = next(v for k, v in result.metrics["components"].items() if k.endswith("online_learned.learned"))
    first = result.swaps[0]
    assert np.all(learned[:first] == 0.0)  # zero model before the first swap
    assert np.any(learned[first:] != 0.0)  # the swapped-in model rewards the agents
    states = result.runner["layer_states"]["states"][0][1]
    assert int(states["version"][0]) == len(result.swaps) and np.all(np.asarray(states["version"]) == len(result.swaps))
    # the server saw the Motif preference prompt; the labels and the last model are on disk
    assert all("Situation 1:" in r["messages"][-1]["content"] for r in slow_server.requests)
    assert (tmp_path / "labels.jsonl").exists() and (tmp_path / "summary.json").exists() and (tmp_path / "reward_model.npz").exists()
    assert not oni_processes()  # the worker process and its threads stopped


def test_server_error_stops_training_with_the_cause(slow_server, trust_env):
    env, params = trust_env
    slow_server.fail_next, slow_server.fail_status = 10**6, 400  # not retryable
    client = LLMClient(slow_server.base_url, "toy", timeout=30, max_retries=0)
    with pytest.raises(ONIWorkerError, match="HTTP 400|400") as caught:
        train_oni(env, params, client, TINY_PPO, TINY_ONI, "private")
    assert isinstance(caught.value.__cause__, LLMResponseError)
    assert not oni_processes()


def snapshot(env, params, count: int, seed: int = 0):
    """``count`` env states after random steps, as host arrays, and their observations ``[count, n, d]``."""
    from motivegym.reward_layers.llm.motif import visited_states

    states = visited_states(env, params, jax.random.PRNGKey(seed), count, 3)
    last = jax.tree.map(lambda x: x[-count:], states)
    observations = np.stack([np.asarray(env.observe(jax.tree.map(lambda x, k=k: x[k], last), params)) for k in range(count)])
    return last, observations


def test_worker_surfaces_a_timeout(slow_server, trust_env):
    env, params = trust_env
    slow_server.sleep = 5.0
    client = LLMClient(slow_server.base_url, "toy", timeout=0.5, max_retries=0)
    config = ONIConfig(min_labels=2, first_model_timeout_s=60.0, join_timeout_s=10.0)
    with FeedbackWorker(env, params, client, config) as worker:
        worker.submit(*snapshot(env, params, 4, seed=0))  # four states: pairs among themselves
        with pytest.raises(ONIWorkerError, match="LLMTimeoutError") as caught:
            worker.wait_for_model(60.0)
    assert isinstance(caught.value.__cause__, LLMTimeoutError)
    assert not oni_processes()


def test_worker_surfaces_an_unreachable_server(trust_env):
    env, params = trust_env
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    client = LLMClient(url, "toy", timeout=5, max_retries=0)
    with FeedbackWorker(env, params, client, ONIConfig(min_labels=2)) as worker:
        worker.submit(*snapshot(env, params, 4, seed=0))
        with pytest.raises(ONIWorkerError, match=re.escape(url.split("/v1")[0])) as caught:
            worker.wait_for_model(60.0)
        with pytest.raises(ONIWorkerError):  # the learner's next submit raises too
            worker.submit(*snapshot(env, params, 4, seed=2))
    assert isinstance(caught.value.__cause__, LLMUnavailableError)


def test_full_queue_drops_snapshots_instead_of_blocking(slow_server, trust_env):
    env, params = trust_env
    slow_server.sleep = 2.0
    client = LLMClient(slow_server.base_url, "toy", timeout=30)
    states, observations = snapshot(env, params, 2)
    with FeedbackWorker(env, params, client, ONIConfig(queue_size=1, join_timeout_s=30.0)) as worker:
        accepted = [worker.submit(states, observations) for _ in range(6)]
    assert accepted.count(False) == worker.stats.dropped >= 3
    assert not oni_processes()


def test_the_worker_is_a_low_priority_process_that_ends_with_training(slow_server, trust_env):
    env, params = trust_env
    client = LLMClient(slow_server.base_url, "toy", timeout=30)
    learner_nice = os.getpriority(os.PRIO_PROCESS, 0)
    with FeedbackWorker(env, params, client, ONIConfig(min_labels=2, worker_nice=7)) as worker:
        worker.submit(*snapshot(env, params, 4, seed=0))
        worker.wait_for_model(120.0)  # the child reniced itself before it labelled anything
        (child,) = oni_processes()
        assert os.getpriority(os.PRIO_PROCESS, child.pid) == min(learner_nice + 7, 19)
    assert os.getpriority(os.PRIO_PROCESS, 0) == learner_nice  # the learner keeps its priority
    assert not oni_processes()
    assert worker.stats.labels >= 2 and worker.stats.distills >= 1
    assert client.requests_sent == slow_server.num_requests  # the child's counts are mirrored into the caller's client
    with pytest.raises(ValueError, match="worker_nice must be an int in"):
        ONIConfig(worker_nice=20)


def test_swap_replaces_every_env_copy_and_keeps_shapes():
    layer = SwappableLearnedReward(input_size=3, hidden_sizes=(4,), coef=2.0)
    states = jax.vmap(lambda k: layer.init(k, LayerSpec(n_agents=2, obs_size=3)))(jax.random.split(jax.random.PRNGKey(0), 5))
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(40, 2, 3)), rng.normal(size=(40, 2, 3))
    labels = [int(x) for x in (b[:, :, 0].mean(1) > a[:, :, 0].mean(1))]  # prefer larger first feature
    model = distill(a, b, labels, hidden_sizes=(4,), steps=200, heldout_fraction=0.0).model
    swapped = swap_reward_model(states, model, 3)
    assert jax.tree.map(lambda x: (x.shape, x.dtype), swapped) == jax.tree.map(lambda x: (x.shape, x.dtype), states)
    obs = jnp.asarray([[2.0, 0.0, 0.0], [-2.0, 0.0, 0.0]])
    transition = Transition(obs, jnp.zeros(2), jnp.zeros(2), obs, jnp.bool_(False), jnp.bool_(False), {})
    before = jax.vmap(lambda s: layer.apply(s, transition)[1])(states)
    after = jax.vmap(lambda s: layer.apply(s, transition)[1])(swapped)
    assert np.all(np.asarray(before) == 0.0)
    np.testing.assert_allclose(np.asarray(after), np.broadcast_to(2.0 * np.asarray(model.normalized_score(obs)), (5, 2)), rtol=1e-5)
    assert float(after[0, 0]) > float(after[0, 1])  # the learned preference
    assert np.all(np.asarray(swapped["version"]) == 3)
    other = distill(a, b, labels, hidden_sizes=(6,), steps=5, heldout_fraction=0.0).model
    with pytest.raises(ValueError, match="does not fit"):
        swap_reward_model(states, other, 4)
    with pytest.raises(ValueError, match="no SwappableLearnedReward state"):
        swap_reward_model({"other": jnp.zeros(3)}, model, 1)


@pytest.mark.slow
def test_cli_oni_runs_and_reports(slow_server, tmp_path, capsys):
    from motivegym.cli import main

    code = main(["oni", "TrustDilemma-v0", "--server", slow_server.base_url, "--model", "toy", "--steps", "1536", "--num-envs", "4",
                 "--num-steps", "16", "--min-labels", "4", "--distill-every", "4", "--distill-steps", "20", "--hidden", "8",
                 "--first-model-by", "4", "--param", "max_steps=20", "--out", str(tmp_path)])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0, out
    assert "swapped in" in out and (tmp_path / "reward_model.npz").exists()
    slow_server.fail_next, slow_server.fail_status = 10**6, 404
    code = main(["oni", "TrustDilemma-v0", "--server", slow_server.base_url, "--model", "toy", "--steps", "1536", "--num-envs", "4",
                 "--num-steps", "16", "--min-labels", "4", "--first-model-by", "4", "--max-retries", "0", "--param", "max_steps=20", "--out", str(tmp_path / "b")])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and "ONI feedback worker failed: LLMResponseError" in err and "404" in err, err
    slow_server.fail_next, slow_server.sleep = 0, 3.0  # a model too slow for this short run: no label arrives
    code = main(["oni", "TrustDilemma-v0", "--server", slow_server.base_url, "--model", "toy", "--steps", "1536", "--num-envs", "4",
                 "--num-steps", "16", "--worker-nice", "0", "--param", "max_steps=20", "--out", str(tmp_path / "c")])  # fmt: skip
    captured = capsys.readouterr()
    assert code == 0 and " 0 labels" in captured.out
    assert "the feedback worker labelled nothing in this run (its process runs at niceness 0" in captured.err


def test_a_wait_that_can_never_be_satisfied_is_refused(trust_env):
    env, params = trust_env
    client = LLMClient("http://127.0.0.1:9/v1", "toy")
    with pytest.raises(ValueError, match="at most 7 pairs"):
        train_oni(env, params, client, TINY_PPO, ONIConfig(min_labels=32, first_model_by_update=2), "private")
    with pytest.raises(ValueError, match="needs an LLMClient"):
        train_oni(env, params, None, TINY_PPO, TINY_ONI, "private")


def test_padded_distill_fits_the_same_model():
    """ONI pads the labels to a power of two (few compiled fits); the zero-weight rows change nothing."""
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=(45, 2, 3)), rng.normal(size=(45, 2, 3))
    labels = [int(x) for x in (b[:, :, 1].mean(1) > a[:, :, 1].mean(1))]
    plain = distill(a, b, labels, hidden_sizes=(4,), steps=40)
    padded = distill(a, b, labels, hidden_sizes=(4,), steps=40, pad_to_bucket=True)
    np.testing.assert_allclose(padded.final_loss, plain.final_loss, rtol=1e-4)
    for x, y in zip(padded.model.layers, plain.model.layers):
        np.testing.assert_allclose(x, y, rtol=1e-3, atol=1e-5)
    assert padded.heldout_agreement == plain.heldout_agreement
