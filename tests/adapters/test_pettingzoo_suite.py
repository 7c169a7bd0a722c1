"""PettingZoo's own test suite on every registered env (issue 24, part 2).

The default run covers a few representative envs (a 2-player matrix game, the two-steps-per-round public goods
game, a grid world with ``rgb_array`` and a continuous coopetition env); every other env carries the ``slow``
mark. ``api_test``/``parallel_api_test``/the seed tests with the default (nested) infos live in
``test_pettingzoo.py``; here: ``render_test``, ``max_cycles_test``, ``state_test``, ``performance_benchmark``
and the API and seed tests again with ``info="flat"``.
"""

import re
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pettingzoo.test import (
    api_test,
    max_cycles_test,
    parallel_api_test,
    parallel_seed_test,
    performance_benchmark,
    render_test,
    seed_test,
    state_test,
)

import motivegym
from motivegym.adapters.pettingzoo_env import env_factory, env_module

DOCS = Path(__file__).resolve().parents[2] / "docs" / "pettingzoo.md"
ALL_ENVS = motivegym.list_envs()
#: the default run's envs: discrete matrix game, two steps per round, grid world with rgb_array, continuous
DEFAULT_ENVS = ("PrisonersDilemma-v0", "PublicGoodsPunishment-v0", "CoinGame-v0", "TrustDilemma-v0")
CASES = [pytest.param(e, marks=() if e in DEFAULT_ENVS else pytest.mark.slow) for e in ALL_ENVS]
#: performance_benchmark steps for a fixed 5 s; one env in the default run
BENCHMARK_CASES = [pytest.param(e, marks=() if e == "PrisonersDilemma-v0" else pytest.mark.slow) for e in ALL_ENVS]

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


@pytest.mark.parametrize("env_id", CASES)
def test_render_test(env_id, capsys):
    render_test(env_factory(env_id, "aec"))
    printed = capsys.readouterr().out
    assert env_id.removesuffix("-v0") in printed  # human mode printed the text view (and returned None)


def seeded(factory: Callable[..., Any], seed: int = 0) -> Callable[..., Any]:
    """``factory`` whose envs sample actions from seeded spaces (``max_cycles_test`` samples ``action_space(a).sample()``)."""

    def make(**kwargs: Any) -> Any:
        env = factory(**kwargs)
        for i, agent in enumerate(env.possible_agents):
            env.action_space(agent).seed(seed + i)
        return env

    return make


@pytest.mark.parametrize("env_id", CASES)
def test_max_cycles_test(env_id):
    """Seeded actions: with unseeded ones PartnerHoldUp's supplier exits (terminates) within 4 steps in about 1 of 10
    episodes (3 of 30 measured), which PettingZoo's test, written for envs that run to ``max_cycles``, reads as a
    horizon error. The dynamics are deterministic given the actions, so the seeded test is too."""
    module = env_module(env_id)
    max_cycles_test(types.SimpleNamespace(env=seeded(module.env), parallel_env=seeded(module.parallel_env)))


@pytest.mark.parametrize("env_id", CASES)
def test_state_test(env_id):
    state_test(motivegym.aec_env(env_id), motivegym.parallel_env(env_id))


@pytest.mark.parametrize("env_id", CASES)
def test_api_and_seed_tests_with_flat_infos(env_id):
    parallel_api_test(motivegym.parallel_env(env_id, info="flat"), num_cycles=20)
    api_test(motivegym.aec_env(env_id, info="flat"), num_cycles=5)
    parallel_seed_test(env_factory(env_id, info="flat"))
    seed_test(env_factory(env_id, "aec", info="flat"))


@pytest.mark.parametrize("env_id", BENCHMARK_CASES)
def test_performance_benchmark(env_id, capsys):
    performance_benchmark(motivegym.aec_env(env_id))
    assert "turns per second" in capsys.readouterr().out


@pytest.mark.parametrize("env_id", CASES)
def test_flat_infos_are_numeric_and_the_same_at_reset_and_step(env_id):
    flat = motivegym.parallel_env(env_id, info="flat")
    nested = motivegym.parallel_env(env_id)
    _, reset_infos = flat.reset(seed=1)
    nested.reset(seed=1)
    layout = {key: (value.shape, value.dtype) for key, value in reset_infos["agent_0"].items()}
    assert {"payoff", "reward", "env/step", "env/truncated"} <= set(layout)
    for _ in range(3):
        actions = {a: flat.action_space(a).sample() for a in flat.agents}
        *_, infos = flat.step(actions)
        *_, nested_infos = nested.step(actions)
        for agent, info in infos.items():
            assert all(isinstance(v, np.ndarray | np.generic) and v.dtype.kind in "biuf" for v in info.values())
            assert {key: (value.shape, value.dtype) for key, value in info.items()} == layout
            assert info["payoff"] == np.float32(nested_infos[agent]["payoff"])
            assert info["reward"] == np.float32(nested_infos[agent]["reward"])
            components = nested_infos[agent]["reward_components"]
            assert {k: v for k, v in info.items() if k.startswith("reward_components/")} == {
                f"reward_components/{name}": np.float32(value) for name, value in components.items()
            }
            np.testing.assert_array_equal(info["env/step"], nested_infos[agent]["env"]["step"])


def test_flat_reset_info_is_zero_where_no_step_happened():
    par = motivegym.parallel_env("PrisonersDilemma-v0", info="flat")
    _, infos = par.reset(seed=0)
    info = infos["agent_1"]
    assert info["payoff"] == 0 and info["reward"] == 0 and not info["env/truncated"]
    np.testing.assert_array_equal(info["env/interdependence_weights"], np.zeros((2, 2)))  # a step-only entry
    np.testing.assert_array_equal(info["env/last_actions"], [-1, -1])  # a reset entry keeps its value
    assert not any(key.startswith("env/action_names") for key in info)  # strings are left out
    _, _, _, _, infos = par.step({"agent_0": 0, "agent_1": 1})
    assert infos["agent_1"]["payoff"] == 5.0 and infos["agent_0"]["payoff"] == 0.0
    np.testing.assert_allclose(infos["agent_0"]["env/interdependence_weights"], [[0, 0.5], [0.5, 0]])


def test_info_mode_is_checked():
    with pytest.raises(ValueError, match="info must be one of"):
        motivegym.parallel_env("PrisonersDilemma-v0", info="flattened")


@pytest.mark.parametrize(("env_id", "kwargs"), [("PrisonersDilemma-v0", {}), ("PublicGoodsPunishment-v0", {}),
                                                ("PublicGoodsPunishment-v0", {"punishment": False}), ("CoinGame-v0", {})])  # fmt: skip
def test_max_cycles_is_max_steps_in_env_steps(env_id, kwargs):
    par = motivegym.parallel_env(env_id, max_cycles=3, **kwargs)
    assert int(par.params.max_steps) == 3
    par.reset(seed=0)
    steps = 0
    while par.agents:
        par.step({a: par.action_space(a).sample() for a in par.agents})
        steps += 1
    assert steps == 3


def test_max_cycles_conflicts_loudly():
    with pytest.raises(ValueError, match="max_cycles=4 conflicts with max_steps=5"):
        motivegym.parallel_env("PrisonersDilemma-v0", max_cycles=4, max_steps=5)
    with pytest.raises(ValueError, match="conflicts with max_steps"):
        motivegym.aec_env("PublicGoodsPunishment-v0", max_cycles=4, rounds=3)  # rounds=3 is 6 steps
    assert int(motivegym.parallel_env("PublicGoodsPunishment-v0", max_cycles=4, rounds=2).params.max_steps) == 4
    assert int(motivegym.parallel_env("DonorGame-v0", max_cycles=4, max_steps=4).params.max_steps) == 4
    with pytest.raises(TypeError, match="did you mean 'max_cycles'"):  # also a ValueError; names the PettingZoo keywords
        motivegym.parallel_env("PrisonersDilemma-v0", max_cycle=4)


def test_human_render_prints_at_reset_step_and_render(capsys):
    par = motivegym.parallel_env("PrisonersDilemma-v0", render_mode="human")
    par.reset(seed=0)
    par.step({"agent_0": 0, "agent_1": 1})
    assert par.render() is None
    lines = capsys.readouterr().out.splitlines()
    assert lines == ["PrisonersDilemma round 0/50  last ['-', '-']  totals [0.0, 0.0]"] + [
        "PrisonersDilemma round 1/50  last ['cooperate', 'defect']  totals [0.0, 5.0]"
    ] * 2
    ansi = motivegym.parallel_env("PrisonersDilemma-v0", render_mode="ansi")
    ansi.reset(seed=0)
    assert ansi.render() == lines[0] and capsys.readouterr().out == ""


def test_rgb_array_render_is_an_image():
    par = motivegym.parallel_env("CoinGame-v0", render_mode="rgb_array")
    par.reset(seed=0)
    image = par.render()
    assert image.dtype == np.uint8 and image.ndim == 3 and image.shape[2] == 3 and image.max() > 0


def test_observation_and_state_spaces_carry_the_env_bounds():
    for env_id in ("PrisonersDilemma-v0", "CoinGame-v0", "TrustDilemma-v0"):
        par = motivegym.parallel_env(env_id)
        low, high = par.core_env.observation_bounds(par.params)
        assert np.isfinite(low) and np.isfinite(high)  # these envs declare bounds
        assert np.all(par.observation_space("agent_1").low == low) and np.all(par.observation_space("agent_1").high == high)
        assert np.all(par.state_space.low == low) and np.all(par.state_space.high == high)
        observations, _ = par.reset(seed=0)
        assert all(par.observation_space(a).contains(o) for a, o in observations.items())
        assert par.state_space.contains(par.state())


@pytest.mark.parametrize("block", [b for b in re.findall(r"```python\n(.*?)```", DOCS.read_text(), re.S) if "torchrl" not in b])
def test_docs_examples_run(block, capsys):
    exec(compile(block, str(DOCS), "exec"), {})
