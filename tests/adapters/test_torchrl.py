"""TorchRL's ``PettingZooWrapper`` on motivegym's PettingZoo envs with ``info="flat"`` (issue 24, part 4).

Runs TorchRL's own code unchanged: ``check_env_specs`` and a rollout. Skipped when torchrl is not importable
(it is the ``torchrl`` extra; ``torchrl==0.14.1`` installs next to ``torch==2.13.0`` without changing it).
"""

import re
from pathlib import Path

import numpy as np
import pytest

import motivegym

torchrl_envs = pytest.importorskip("torchrl.envs", reason="torchrl is not installed (pip install -e '.[torchrl]')")
from torchrl.envs.utils import check_env_specs  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

DOCS = Path(__file__).resolve().parents[2] / "docs" / "pettingzoo.md"

#: a discrete matrix game, 4 agents with two steps a round, a grid world, a continuous env, 40 continuous agents
DEFAULT_ENVS = ("PrisonersDilemma-v0", "PublicGoodsPunishment-v0", "CoinGame-v0", "TrustDilemma-v0")
CASES = [pytest.param(e, marks=() if e in DEFAULT_ENVS else pytest.mark.slow) for e in (*DEFAULT_ENVS, "ApacheProject-v0")]


@pytest.mark.parametrize("env_id", CASES)
def test_parallel_wrapper_rollout(env_id):
    par = motivegym.parallel_env(env_id, reward="private", info="flat", max_steps=6)
    env = torchrl_envs.PettingZooWrapper(par, seed=0)
    check_env_specs(env)
    rollout = env.rollout(6)
    n = len(par.possible_agents)
    assert rollout["next", "agent", "reward"].shape == (rollout.batch_size[0], n, 1)
    payoffs = rollout["next", "agent", "info", "payoff"]
    rewards = rollout["next", "agent", "info", "reward"]
    np.testing.assert_allclose(rewards.numpy(), rollout["next", "agent", "reward"][..., 0].numpy(), rtol=1e-6)
    np.testing.assert_allclose(payoffs.numpy(), rewards.numpy(), rtol=1e-6)  # the private layer
    steps = rollout["next", "agent", "info", "env/step"][:, 0]
    np.testing.assert_array_equal(steps.numpy(), np.arange(1, rollout.batch_size[0] + 1))


def test_rollout_payoffs_are_what_the_env_pays():
    """TorchRL's rollout replayed through the PettingZoo env gives the same payoffs."""
    env = torchrl_envs.PettingZooWrapper(motivegym.parallel_env("PrisonersDilemma-v0", info="flat", max_steps=5), seed=3)
    rollout = env.rollout(5)
    actions = rollout["agent", "action"].argmax(-1) if rollout["agent", "action"].ndim == 3 else rollout["agent", "action"]
    replay = motivegym.parallel_env("PrisonersDilemma-v0", max_steps=5)
    replay.reset(seed=3)
    for t, joint in enumerate(actions.numpy()):
        *_, infos = replay.step({f"agent_{i}": int(a) for i, a in enumerate(joint)})
        np.testing.assert_allclose(rollout["next", "agent", "info", "payoff"][t].numpy(), [infos[a]["payoff"] for a in infos])


def test_aec_wrapper_rollout():
    env = torchrl_envs.PettingZooWrapper(motivegym.aec_env("PublicGoodsPunishment-v0", info="flat", max_steps=4), seed=0, use_mask=True)
    check_env_specs(env)
    rollout = env.rollout(8)  # AEC agents are one group each
    assert [rollout["next", f"agent_{i}", "reward"].shape[1:] for i in range(4)] == [(1, 1)] * 4
    assert rollout["next", "agent_3", "info", "payoff"].shape == (rollout.batch_size[0], 1)


@pytest.mark.parametrize("block", [b for b in re.findall(r"```python\n(.*?)```", DOCS.read_text(), re.S) if "torchrl" in b])
def test_docs_torchrl_example_runs(block):
    exec(compile(block, str(DOCS), "exec"), {})
