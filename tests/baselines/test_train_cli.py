import csv

import pytest

from motivegym.baselines.checkpoint import load_checkpoint
from motivegym.cli import main


@pytest.mark.slow  # a long end-to-end run: .ci/run runs it with -m slow
def test_train_command_writes_curve_plot_and_checkpoint(tmp_path, capsys):
    out = tmp_path / "run"
    code = main(["train", "ippo", "TrustDilemma-v0", "--reward", "private", "--seeds", "2", "--steps", "2048",
                 "--num-envs", "4", "--num-steps", "64", "--out", str(out)])
    assert code == 0
    rows = list(csv.DictReader(open(out / "learning_curve.csv")))
    assert len(rows) == 2 * 8 and {r["seed"] for r in rows} == {"0", "1"}
    assert (out / "learning_curve.png").stat().st_size > 1000
    assert sorted(p.name for p in (out / "checkpoints").iterdir()) == ["seed0.safetensors", "seed1.safetensors"]
    checkpoint = load_checkpoint(out / "checkpoints" / "seed1.safetensors")
    assert checkpoint.metadata["env_id"] == "TrustDilemma-v0" and checkpoint.metadata["algo"] == "ippo"
    assert checkpoint.metadata["seed"] == 1 and checkpoint.metadata["steps"] == 2048 and checkpoint.metadata["reward"] == "private"
    assert "greedy evaluation welfare" in capsys.readouterr().out
    # the checkpoint is a policy of `motivegym eval`
    assert main(["eval", "TrustDilemma-v0", f"checkpoint:{out / 'checkpoints' / 'seed0.safetensors'}", "--episodes", "2"]) == 0
    assert "policy checkpoint:" in capsys.readouterr().out


def test_train_rejects_unknown_algorithm():
    assert main(["train", "qmixx", "TrustDilemma-v0", "--steps", "10"]) == 2
    with pytest.raises(ValueError, match="did you mean 'ippo'"):
        from motivegym.baselines.train import train_cli

        train_cli("ipo", "TrustDilemma-v0", "private", 1, 10, "/tmp/unused")
