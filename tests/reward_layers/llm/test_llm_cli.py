import importlib.util
from pathlib import Path

import numpy as np

from motivegym.cli import main

ROOT = Path(__file__).resolve().parents[3]


def load_example_server():
    spec = importlib.util.spec_from_file_location("llm_server", ROOT / "examples" / "llm_server.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_documented_demo_runs_end_to_end_against_the_example_server(tmp_path, capsys):
    assert load_example_server().demo(tmp_path, pairs=60) == 0
    out = capsys.readouterr().out
    assert "held-out agreement" in out and "mean proxy reward" in out and "reward=learned" in out
    assert (tmp_path / "motif" / "reward_model.npz").exists()
    assert len((tmp_path / "motif" / "labels.jsonl").read_text().splitlines()) == 60


def test_example_server_rules():
    server = load_example_server()
    prompt = "Situation 1:\nmean_trust=0.4; x=1\n\nSituation 2:\nmean_trust=0.7\n\nWhich situation"
    assert server.answer({"messages": [{"role": "user", "content": prompt}]}, "mean_trust").endswith("Answer: 2")
    assert server.answer({"messages": [{"role": "user", "content": "Episode:\nmean_trust=0.25"}]}, "mean_trust").endswith("Score: 2.5")
    assert server.value_of("mean_trust", "a mean_trust=1e-3 b") == 1e-3


def test_annotate_reports_an_unreachable_server(unused_url, tmp_path, capsys):
    code = main(["llm", "annotate", "TrustDilemma-v0", "--pairs", "2", "--out", str(tmp_path), "--base-url", unused_url, "--model", "m", "--max-retries", "0", "--param", "max_steps=3"])
    assert code == 2
    assert f"cannot reach the LLM server at {unused_url}" in capsys.readouterr().err


def test_distill_needs_labels_for_the_objective(llm_server, tmp_path, capsys):
    args = ["--base-url", llm_server.base_url, "--model", "m", "--param", "max_steps=5"]
    assert main(["llm", "annotate", "TrustDilemma-v0", "--pairs", "4", "--out", str(tmp_path), "--objective", "cooperate", *args]) == 0
    assert main(["llm", "distill", str(tmp_path), "--objective", "something else"]) == 2
    assert "have no label for this objective" in capsys.readouterr().err
    assert main(["llm", "distill", str(tmp_path), "--objective", "cooperate", "--steps", "5", "--hidden", "4"]) == 0
    with np.load(tmp_path / "reward_model.npz") as model:
        assert model["layer_0"].shape[1] == 4


def test_evolve_writes_candidates_and_the_best_code(llm_server, tmp_path, capsys, monkeypatch):
    import motivegym.reward_layers.llm.reward_code as reward_code

    def constant_trainer(**_):
        return lambda env, params, layer: {"score": 1.0}

    monkeypatch.setattr(reward_code, "ippo_trainer", constant_trainer)  # the IPPO run itself is tested in test_reward_code
    out = tmp_path / "evolve.json"
    argv = ["llm", "evolve", "TrustDilemma-v0", "--candidates", "2", "--iterations", "1", "--out", str(out), "--base-url", llm_server.base_url, "--model", "m", "--param", "max_steps=5"]
    assert main(argv) == 0
    assert out.exists() and out.with_suffix(".best.py").read_text() == llm_server.reward_codes[0]
    assert "2 candidates: 2 trained" in capsys.readouterr().out
