import ast
import subprocess
import sys
from pathlib import Path

import numpy as np

from motivegym.cli import main

ROOT = Path(__file__).resolve().parents[3]



def test_documented_demo_runs_end_to_end_against_the_example_server(tmp_path, capsys, example):
    assert example("llm_server").demo(tmp_path, pairs=60) == 0
    out = capsys.readouterr().out
    assert "held-out agreement" in out and "mean proxy reward" in out and "reward=learned" in out
    assert (tmp_path / "motif" / "reward_model.npz").exists()
    assert len((tmp_path / "motif" / "labels.jsonl").read_text().splitlines()) == 60


def test_example_server_rules(example):
    server = example("llm_server")
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
    import motivegym.experiments.eureka as eureka

    def constant_trainer(**_):
        return lambda env, params, layer: {"score": 1.0}

    monkeypatch.setattr(eureka, "ippo_trainer", constant_trainer)  # the IPPO run itself is tested in test_eureka
    out = tmp_path / "evolve.json"
    argv = ["llm", "evolve", "TrustDilemma-v0", "--candidates", "2", "--iterations", "1", "--out", str(out), "--base-url", llm_server.base_url, "--model", "m", "--param", "max_steps=5"]
    assert main(argv) == 0
    assert out.exists() and out.with_suffix(".best.py").read_text() == llm_server.reward_codes[0]
    assert "2 candidates: 2 trained" in capsys.readouterr().out


def imported_modules(path: Path) -> list[str]:
    """Every module ``path`` imports, lazy imports inside functions included."""
    names = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            names += [node.module or ""] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names += [a.name for a in node.names]
    return names


def test_cli_and_llm_cli_do_not_import_each_other_in_a_circle():
    # llm_cli gets the --param parser from cli.build_parser instead of importing motivegym.cli
    assert "motivegym.cli" not in imported_modules(ROOT / "motivegym" / "llm_cli.py")
    code = "import motivegym.llm_cli, sys; assert 'motivegym.cli' not in sys.modules"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).returncode == 0


def test_reward_layers_never_import_baselines_or_experiments():
    # DESIGN "Layering": the Eureka loop that trains PPO lives in motivegym.experiments.eureka
    for path in (ROOT / "motivegym" / "reward_layers").rglob("*.py"):
        assert not [n for n in imported_modules(path) if n.startswith(("motivegym.baselines", "motivegym.experiments"))], path
    code = (
        "import sys, motivegym.reward_layers, motivegym.reward_layers.llm, motivegym.reward_layers.llm.reward_code; "
        "bad = [m for m in sys.modules if m.startswith(('motivegym.baselines', 'motivegym.experiments'))]; "
        "assert not bad, bad"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-2000:]
