import json

import pytest

from motivegym.cli import main


def test_list_and_run(capsys):
    assert main(["list"]) == 0
    assert "TrustDilemma-v0" in capsys.readouterr().out
    assert main(["run", "SLCD-v0", "--reward", "private", "--policy", "constant:0.3", "--steps", "3"]) == 0
    out = capsys.readouterr().out
    assert "reward=private" in out and "total payoffs" in out and out.count("\n") >= 6


def test_run_rejects_unknown_parameters(capsys):
    assert main(["run", "TrustDilemma-v0", "--param", "gama=0.3"]) == 2
    assert "did you mean 'gamma'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["run", "TrustDilemma-v0", "--policy", "greedy"])


def test_bench_runs_a_tiny_measurement(capsys, tmp_path):
    out = tmp_path / "bench.json"
    assert main(["bench", "--envs", "TrustDilemma-v0", "--seconds", "0.05", "--batch-sizes", "1,8", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "| TrustDilemma-v0 | 2 |" in text and out.exists()
    assert "Gymnasium, XLA defaults off" in text and "Gymnasium, 1 core pinned" in text
    row = json.loads(out.read_text())[0]
    assert set(row["compared_gymnasium_steps_per_s"]) == {"XLA defaults off", "1 core pinned"}
    assert all(rate > 0 for rate in row["compared_gymnasium_steps_per_s"].values())


def test_bench_refuses_an_unknown_comparison(capsys):
    assert main(["bench", "--envs", "TrustDilemma-v0", "--seconds", "0.05", "--batch-sizes", "1", "--compare", "pined"]) == 2
    assert "unknown comparison(s) ['pined']" in capsys.readouterr().err
