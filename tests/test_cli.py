import json

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
    assert main(["run", "TrustDilemma-v0", "--policy", "greedy"]) == 2
    assert "unknown policy 'greedy'" in capsys.readouterr().err


def test_run_plays_random_actions_on_discrete_envs(capsys):
    assert main(["run", "KeyDoorGift-v0", "--reward", "private", "--steps", "3", "--seed", "1"]) == 0
    first = capsys.readouterr().out
    assert "total payoffs" in first
    assert main(["run", "KeyDoorGift-v0", "--reward", "private", "--steps", "3", "--seed", "1"]) == 0
    assert capsys.readouterr().out == first  # seeded
    assert main(["run", "KeyDoorGift-v0", "--policy", "constant:0.5"]) == 2
    assert "needs continuous actions" in capsys.readouterr().err


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
