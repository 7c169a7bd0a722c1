import csv

import numpy as np
import pytest

from motivegym.cli import main


def test_train_command_writes_curve_plot_and_checkpoint(tmp_path, capsys):
    out = tmp_path / "run"
    code = main(["train", "ippo", "TrustDilemma-v0", "--reward", "private", "--seeds", "2", "--steps", "2048",
                 "--num-envs", "4", "--num-steps", "64", "--out", str(out)])
    assert code == 0
    rows = list(csv.DictReader(open(out / "learning_curve.csv")))
    assert len(rows) == 2 * 8 and {r["seed"] for r in rows} == {"0", "1"}
    assert (out / "learning_curve.png").stat().st_size > 1000
    checkpoint = np.load(out / "checkpoint.npz")
    assert any(k.startswith("seed1/actor") for k in checkpoint.files) and "seed0/obs_mean" in checkpoint.files
    assert "greedy evaluation welfare" in capsys.readouterr().out


def test_train_rejects_unknown_algorithm():
    assert main(["train", "qmixx", "TrustDilemma-v0", "--steps", "10"]) == 2
    with pytest.raises(ValueError, match="did you mean 'ippo'"):
        from motivegym.baselines.train import train_cli

        train_cli("ipo", "TrustDilemma-v0", "private", 1, 10, "/tmp/unused")
