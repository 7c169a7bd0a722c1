import pytest


def tiny_sweep_settings() -> dict:
    """A sweep small enough for the default suite: PD, private vs cooperative, 2 seeds, 8 IPPO updates."""
    return dict(envs=("PrisonersDilemma-v0",), rewards=("private", "cooperative"), algos=("ippo",), seeds=2, steps=2048,
                num_envs=4, num_steps=64, eval_episodes=4)  # fmt: skip


@pytest.fixture(scope="session")
def tiny_sweep(tmp_path_factory):
    """``(out directory, results.csv)`` of the tiny sweep, run once per test session (per xdist worker)."""
    from motivegym.experiments.sweep import SweepSpec, run_sweep

    out = tmp_path_factory.mktemp("sweep")
    return out, run_sweep(SweepSpec(**tiny_sweep_settings()), out, progress=False)


@pytest.fixture
def tiny_settings() -> dict:
    return tiny_sweep_settings()
