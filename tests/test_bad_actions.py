"""Every bad action is refused with our ``ValueError`` on every door, or clipped identically (issue 23).

Generated: every registered env × every door (``gymnasium.make``, ``make_vec``, ``parallel_env``, ``aec_env``,
``motivegym.checked`` on the functional API, and the SB3 adapter for continuous envs) × NaN, ±inf, complex,
bool, string, None, wrong shapes, non-integer and out-of-range values. Each input must raise a ``ValueError``
naming the agent it concerns (or the argument, for a wrong type or shape); none may be played silently. The
finite out-of-range values of continuous envs are the documented exception: they are clipped to the agent's
bounds by the env, identically on every door (checked in :func:`test_out_of_bound_actions_are_clipped_identically`).

The check runs on the host before the state is touched, so the batched doors and ``gymnasium.make``'s env are
tried without a reset (nothing is compiled); PettingZoo needs ``reset()`` to know its live agents.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import gymnasium
import jax
import numpy as np
import pytest

import motivegym
from motivegym.adapters.sb3 import vec_env

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

ENVS = motivegym.list_envs()


def bad_values(discrete: bool, k: int) -> dict[str, Any]:
    """Bad values for one agent's action, by name."""
    values = {
        "nan": np.nan, "inf": np.inf, "-inf": -np.inf, "complex": 1 + 1j, "complex, zero imaginary part": np.complex64(1),
        "bool": True, "string": "1", "None": None,
    }  # fmt: skip
    if discrete:
        values.update({"fraction 0.7": 0.7, "fraction 0.5": np.float32(0.5), "-1": -1, "k": k, "2**32 + 1": 2**32 + 1,
                       "int64 max": np.int64(2**63 - 1), "2**70": 2**70, "1e30": 1e30})  # fmt: skip
    return values


#: values refused because of their type or form: the error names the argument, not an agent
TYPE_ERRORS = ("complex", "complex, zero imaginary part", "bool", "string", "None")


def joint_inputs(n: int, valid: Any, discrete: bool, k: int) -> dict[str, tuple[Any, str]]:
    """Joint actions ``[n]`` with one bad value at the last agent, and wrongly shaped ones: name → (input, expected text)."""
    inputs = {}
    for name, value in bad_values(discrete, k).items():
        text = "actions" if name in TYPE_ERRORS else f"agent_{n - 1}"
        if name == "bool":  # numpy turns True next to numbers into 1: a bool action is a whole bool array
            inputs[name] = (np.ones(n, bool), text)
            continue
        joint = [valid] * (n - 1) + [value]
        inputs[name] = (np.array(joint, dtype=object if value is None or isinstance(value, str) else None), text)
        inputs[name + " (list)"] = (joint, text)
    inputs["one action too many"] = ([valid] * (n + 1), "shape")
    inputs["one action too few"] = ([valid] * (n - 1), "shape")
    inputs["2-D"] = ([[valid] * n], "shape")
    inputs["scalar"] = (valid, "shape")
    inputs["ragged"] = ([[valid], [valid, valid]] + [valid] * (n - 2), "actions")
    return inputs


def batch_of(joint: Any, valid: Any, n: int, text: str) -> Any:
    """``make_vec``'s input: sub-env 0 valid, sub-env 1 ``joint`` (both ``joint`` for a wrong shape)."""
    if text == "shape":
        return [joint, joint]
    if isinstance(joint, np.ndarray):
        return np.stack([np.full(n, valid).astype(joint.dtype), joint])
    return [[valid] * n, list(joint)]


def per_agent_inputs(valid: Any, discrete: bool, k: int) -> dict[str, Any]:
    """One agent's bad actions for PettingZoo (Parallel dict value, AEC step)."""
    return dict(bad_values(discrete, k), **{"shape (2,)": np.array([valid, valid]), "empty": np.array([])})


def sb3_inputs(n: int) -> dict[str, tuple[Any, str]]:
    """SB3 ``(n, 1)`` actions (one game) with a bad value at the last agent, and wrong shapes."""
    inputs = {}
    for name, value in bad_values(False, 0).items():
        text = "actions" if name in TYPE_ERRORS else f"agent_{n - 1}"
        column = np.ones((n, 1), bool) if name == "bool" else np.array([[0.0]] * (n - 1) + [[value]], dtype=object if value is None or isinstance(value, str) else None)
        inputs[name] = (column, text)
    inputs["too many"] = (np.zeros((n + 1, 1)), "shape")
    inputs["2 columns"] = (np.zeros((n, 2)), "shape")
    return inputs


def expected_count(env_id: str) -> int:
    """How many inputs :func:`check_env` tries on ``env_id``."""
    env = motivegym.get_spec(env_id).make_env()
    params = env.default_params()
    n, discrete = env.n_agents(params), env.action_kind == "discrete"
    k = env.num_actions(params) if discrete else 0
    joint = len(joint_inputs(n, 0, discrete, k)) * 3  # gymnasium.make, make_vec, checked
    per_agent = len(per_agent_inputs(0, discrete, k)) * 2 + 3  # parallel, aec; missing/unknown agent, not a dict
    return joint + per_agent + (0 if discrete else len(sb3_inputs(n)))


def valid_action(env, params) -> Any:
    return 0 if env.action_kind == "discrete" else float(np.asarray(env.action_bounds(params)[1])[0]) / 2


def refused(text: str, where: str, call: Callable, *args: Any) -> None:
    """``call(*args)`` raises a ``ValueError`` whose message contains ``text`` (the agent or the argument)."""
    with pytest.raises(ValueError) as caught:
        call(*args)
    assert text in str(caught.value), f"{where}: {caught.value!r} does not name {text!r}"


def check_env(env_id: str) -> int:
    """Try every bad input on every door of ``env_id``; returns the number of inputs tried."""
    env, params = motivegym.make_jax(env_id)
    n, discrete = env.n_agents(params), env.action_kind == "discrete"
    k = env.num_actions(params) if discrete else 0
    valid = valid_action(env, params)
    kwargs = {"max_steps": 4} if "max_steps" in env.parameter_names() else {}
    tried = 0

    # joint doors: gymnasium.make, make_vec (bad value in sub-env 1), motivegym.checked
    gym = gymnasium.make(f"motivegym/{env_id}", disable_env_checker=True, **kwargs).unwrapped
    vec = gymnasium.make_vec(f"motivegym/{env_id}", num_envs=2, vectorization_mode="vector_entry_point", **kwargs)
    checked = motivegym.checked(env)
    for name, (joint, text) in joint_inputs(n, valid, discrete, k).items():
        refused(text, f"{env_id} gymnasium {name}", gym.step, joint)
        refused(text, f"{env_id} checked {name}", checked.step, jax.random.PRNGKey(0), None, joint, params)
        in_sub_env = text.replace(f"agent_{n - 1}", f"sub-env 1, agent_{n - 1}")
        refused(in_sub_env, f"{env_id} make_vec {name}", vec.step, batch_of(joint, valid, n, text))
        tried += 3

    # per-agent doors: parallel (a dict) and AEC (one action at a time; the refused action is not kept)
    par = motivegym.parallel_env(env_id, **kwargs)
    par.reset(seed=0)
    aec = motivegym.aec_env(env_id, **kwargs)
    aec.reset(seed=0)
    last = f"agent_{n - 1}"
    for name, value in per_agent_inputs(valid, discrete, k).items():
        actions = {a: valid for a in par.possible_agents} | {last: value}
        refused(last, f"{env_id} parallel {name}", par.step, actions)
        for agent in aec.possible_agents[:-1]:
            if aec.agent_selection == agent:
                aec.step(valid if discrete else np.array([valid], np.float32))
        assert aec.agent_selection == last
        refused(last, f"{env_id} aec {name}", aec.step, value)
        tried += 2
    refused("missing", f"{env_id} parallel missing agent", par.step, {a: valid for a in par.possible_agents[:-1]})
    refused("unknown", f"{env_id} parallel unknown agent", par.step, {a: valid for a in par.possible_agents} | {"agent_99": valid})
    refused("dict", f"{env_id} parallel list", par.step, [valid] * n)
    tried += 3

    if not discrete:  # the SB3 adapter: one sub-env per (env, agent), actions (num_envs, 1) in [-1, 1]
        sb3 = vec_env(env_id, num_envs=1, **kwargs)
        for name, (column, text) in sb3_inputs(n).items():
            refused(text, f"{env_id} sb3 {name}", sb3.step, column)
            tried += 1
    return tried


COUNTS = {env_id: expected_count(env_id) for env_id in ENVS}


@pytest.mark.parametrize("env_id", [pytest.param(e, id=f"{e}-{COUNTS[e]}-inputs") for e in ENVS])
def test_bad_actions_are_refused_on_every_door(env_id):
    """Every bad input of the module docstring on every door of ``env_id`` (the count is in the test id)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert check_env(env_id) == COUNTS[env_id]


def doors(env_id: str) -> dict[str, Callable[[np.ndarray], np.ndarray]]:
    """``door name → play(actions) -> payoffs of one step from the seed-0 reset`` (each door built once)."""
    gym = gymnasium.make(f"motivegym/{env_id}", disable_env_checker=True)
    vec = gymnasium.make_vec(f"motivegym/{env_id}", num_envs=2, vectorization_mode="vector_entry_point")
    par = motivegym.parallel_env(env_id)
    aec = motivegym.aec_env(env_id)
    env, params = motivegym.make_jax(env_id)
    checked, jitted = motivegym.checked(env), jax.jit(env.step)

    def via_gym(actions):
        gym.reset(seed=0)
        return gym.step(actions)[-1]["payoffs"]

    def via_vec(actions):
        vec.reset(seed=0)
        return vec.step(np.stack([actions, actions]))[-1]["payoffs"][0]

    def via_parallel(actions):
        par.reset(seed=0)
        return np.array([info["payoff"] for info in par.step(dict(zip(par.possible_agents, actions)))[-1].values()])

    def via_aec(actions):
        aec.reset(seed=0)
        for value in actions:
            aec.step(value)
        return np.array([aec.infos[a]["payoff"] for a in aec.possible_agents])

    def via_checked(actions):  # motivegym.checked(env).step is check_actions then env.step (jitted here for speed)
        state, _ = env.reset(jax.random.PRNGKey(0), params)
        return np.asarray(jitted(jax.random.PRNGKey(0), state, checked.check_actions(actions, params), params)[2])

    return {"gymnasium": via_gym, "make_vec": via_vec, "parallel": via_parallel, "aec": via_aec, "checked": via_checked}


@pytest.mark.parametrize("env_id", ["TeamProduction-v0", pytest.param("TrustDilemma-v0", marks=pytest.mark.slow)])
def test_out_of_bound_actions_are_clipped_identically(env_id):
    """Finite values outside ``[0, e_i]`` (−5, e_i + 100, 1e300 as float64) play exactly the clipped action on every door.

    Every continuous env clips in the shared coopetition step, so one env runs by default.
    """
    _, params = motivegym.make_jax(env_id)
    high = np.asarray(params.endowments, np.float64)
    outside = np.where(np.arange(len(high)) % 2 == 0, -5.0, high + 100.0)
    outside[-1] = 1e300
    clipped = np.clip(outside, 0.0, high).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = {name: (play(outside), play(clipped)) for name, play in doors(env_id).items()}
    for name, (got, expected) in results.items():
        np.testing.assert_array_equal(got, expected, err_msg=name)
        np.testing.assert_allclose(got, results["checked"][1], rtol=1e-6, err_msg=name)
