"""Parameters are validated in one place (``motivegym.core.params``) for every env and every door."""

from __future__ import annotations

import inspect
import math
from typing import Any

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import motivegym
from motivegym.core.params import (
    INT32_MAX,
    ParamSpec,
    check_params,
    check_value,
    flat_fields,
    integer,
    real,
    real_array,
    requirement_text,
    specs_of,
    summary,
)

ENV_IDS = motivegym.list_envs()
#: one env per family (and per params layout) for the slower doors
SAMPLE_IDS = (
    "TrustDilemma-v0",
    "LoyaltyTeam-v0",
    "PrisonersDilemma-v0",
    "DonorGame-v0",
    "CrafterTeam-v0",
    "Cleanup-v0",
    "CoinGame-v0",
)
#: the SB3 adapter takes continuous-action envs only
SB3_SAMPLE_IDS = ("TrustDilemma-v0", "LoyaltyTeam-v0")


def env_and_specs(env_id: str):
    env, params = motivegym.make_jax(env_id)
    specs = specs_of(type(env))
    assert specs is not None, f"{env_id} has no parameter specs"
    return env, params, specs


# ----- every parameter has a spec, and the specs agree with the defaults -----
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_every_parameter_has_a_spec_and_no_spec_is_stale(env_id):
    env, params, specs = env_and_specs(env_id)
    fields = set(flat_fields(params))
    keywords = set(env.parameter_names())
    assert fields - set(specs.fields) == set(), "fields without a spec"
    assert {k for k in keywords if specs.keyword(k) is None} == set(), "keywords without a spec"
    assert set(specs.fields) - fields - keywords == set(), "specs of no field or keyword"
    assert set(specs.keywords) - keywords == set(), "keyword specs of no keyword"
    for rule in specs.rules:
        assert set(rule.names) <= fields | {"n_agents"}


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_defaults_satisfy_the_specs(env_id):
    """The default params, constructor defaults and documented keyword defaults are all valid (so no spec is wrong about a default)."""
    env, params, specs = env_and_specs(env_id)
    check_params(env_id, specs, params, env.n_agents(params))  # fields and rules
    structural = getattr(env, "structural_arguments", lambda: ())()
    defaults = inspect.signature(env.make_params).parameters if structural else {}
    for name in structural:
        check_value(env_id, name, defaults[name].default, specs.keyword(name))
    for name, spec in specs.keywords.items():
        if spec.default and spec.kind == "real":
            check_value(env_id, name, float(spec.default), spec)


# ----- the generated bad inputs -----
def outside(spec: ParamSpec) -> list[tuple[str, float]]:
    """Values just outside ``[low, high]`` (the bound itself where the end is open)."""
    values = []
    if spec.low is not None:
        values.append(("below", spec.low if spec.low_open else spec.low - (1 if spec.kind == "int" else 0.5)))
    if spec.high is not None:
        values.append(("above", spec.high if spec.high_open else spec.high + (1 if spec.kind == "int" else 0.5)))
    return values


def bad_inputs(spec: ParamSpec, default: Any) -> list[tuple[str, Any]]:
    """``(label, value)`` pairs that must all be rejected for a parameter of ``spec`` (``default``: its default value)."""
    common = [("None", None), ("string", "abc"), ("complex", 1 + 2j)]
    if spec.kind == "real":
        extra = [("nan", math.nan), ("inf", math.inf), ("-inf", -math.inf), ("bool", True), ("array", [0.5, 0.5])]
        if spec.high is None:
            extra.append(("float32 overflow", 1e39))
        return common + extra + outside(spec)
    if spec.kind == "int":
        return common + [("float", 2.5), ("nan", math.nan), ("bool", True), ("array", [1, 2])] + outside(spec)
    if spec.kind == "bool":
        return common + [("int", 1), ("nan", math.nan), ("array", [True])]
    if spec.kind == "choice":
        return common + [("unknown", "bogus"), ("int", 1), ("list", list(spec.choices[:1]))]
    if spec.kind == "layout":
        return [("None", None), ("int", 5), ("ragged", ("###", "##")), ("empty", ""), ("numbers", [1, 2])]
    array = np.asarray(default, np.float64)

    def with_entry(value: float) -> np.ndarray:
        changed = array.copy()
        changed.flat[0] = value
        return changed

    cases = [
        ("None", None),
        ("string", "abc"),
        ("strings", np.full(array.shape, "a").tolist()),
        ("complex", array + 1j),
        ("scalar", 0.5),
        ("wrong shape", np.concatenate([array.ravel(), array.ravel()[:1]])),
        ("extra dimension", array[None]),
        ("nan entry", with_entry(math.nan)),
        ("inf entry", with_entry(math.inf)),
        ("float32 overflow", with_entry(1e39)),
    ]
    cases += [(f"{label} entry", with_entry(value)) for label, value in outside(spec)]
    if spec.check is not None:  # in range, but not a zero diagonal
        cases.append(("predicate", with_entry(0.5)))
    return cases


def bad_cases(env_ids=ENV_IDS) -> list[tuple[str, str, str, Any]]:
    """Every ``(env id, parameter, label, bad value)`` for every parameter of ``env_ids``."""
    cases = []
    for env_id in env_ids:
        env, params, specs = env_and_specs(env_id)
        defaults = flat_fields(params)
        for name in env.parameter_names():
            spec = specs.keyword(name)
            cases += [(env_id, name, label, value) for label, value in bad_inputs(spec, defaults.get(name))]
    return cases


ALL_CASES = bad_cases()
#: a few inputs per parameter for the doors that cost milliseconds each (a wrong type, NaN or an unknown choice, the range)
QUICK_LABELS = {"None", "nan", "nan entry", "unknown", "ragged", "below", "above"}
QUICK_CASES = [case for case in ALL_CASES if case[2] in QUICK_LABELS]


def raises_naming(door, env_id: str, name: str, label: str, value: Any) -> str | None:
    """``None`` when ``door`` raises a ``ValueError`` naming the env and the parameter, else what went wrong."""
    try:
        door(env_id, {name: value})
    except ValueError as error:
        message = str(error)
        if name in message and env_id.removesuffix("-v0") in message:
            return None
        return f"{env_id} {name}={value!r} ({label}): message does not name them: {message}"
    except Exception as error:  # noqa: BLE001 - the point is to catch non-ValueErrors
        return f"{env_id} {name}={value!r} ({label}): {type(error).__name__}: {error}"
    return f"{env_id} {name}={value!r} ({label}): accepted"


def sb3_vec_env(env_id: str, kwargs: dict) -> Any:
    from motivegym.adapters.sb3 import vec_env

    return vec_env(env_id, num_envs=1, **kwargs)


DOORS = {
    "make_jax": lambda env_id, kwargs: motivegym.make_jax(env_id, **kwargs),
    "default_params": lambda env_id, kwargs: motivegym.get_spec(env_id).make_env().default_params(**kwargs),
    "gymnasium.make": lambda env_id, kwargs: gymnasium.make(f"motivegym/{env_id}", **kwargs),
    "make_vec": lambda env_id, kwargs: gymnasium.make_vec(
        f"motivegym/{env_id}", num_envs=2, vectorization_mode="vector_entry_point", **kwargs
    ),
    "parallel_env": lambda env_id, kwargs: motivegym.parallel_env(env_id, **kwargs),
    "aec_env": lambda env_id, kwargs: motivegym.aec_env(env_id, **kwargs),
    "sb3": sb3_vec_env,
}


def failures(door_names, cases) -> list[str]:
    found = []
    for door_name in door_names:
        found += [f"[{door_name}] {problem}" for case in cases if (problem := raises_naming(DOORS[door_name], *case))]
    return found


def test_bad_values_raise_through_make_jax_for_every_env_and_parameter():
    """7,371 bad inputs (NaN, ±inf, None, strings, complex, bools, wrong shapes, non-integers, float32
    overflow, just outside the range, a non-zero diagonal) of every parameter of all 38 envs, through
    ``make_jax`` and ``env.default_params``: each raises ``ValueError`` naming the env and the parameter."""
    assert len(ALL_CASES) == 7371, "the bad-input generator changed: update the count in this docstring"
    problems = failures(("make_jax", "default_params"), ALL_CASES)
    assert not problems, f"{len(problems)} of {len(ALL_CASES)}:\n" + "\n".join(problems[:40])


def test_bad_values_raise_through_gymnasium_make_for_every_env_and_parameter():
    """2,567 of the inputs (None, NaN, an unknown choice or ragged map, just below/above the range)
    of every parameter of all 38 envs through ``gymnasium.make``."""
    assert len(QUICK_CASES) == 2567
    problems = failures(("gymnasium.make",), QUICK_CASES)
    assert not problems, "\n".join(problems[:40])


def test_bad_values_raise_through_every_door_for_a_sample_of_envs():
    """The quick inputs of every parameter of one env per params layout through ``make_vec``, ``parallel_env``,
    ``aec_env`` and the SB3 adapter (construction only)."""
    pytest.importorskip("stable_baselines3")
    sample = [case for case in QUICK_CASES if case[0] in SAMPLE_IDS]
    assert len({case[0] for case in sample}) == len(SAMPLE_IDS)
    problems = failures(("make_vec", "parallel_env", "aec_env"), sample)
    problems += failures(("sb3",), [case for case in sample if case[0] in SB3_SAMPLE_IDS])
    assert not problems, "\n".join(problems[:40])


@pytest.mark.slow
def test_bad_values_raise_through_every_door_for_every_env_exhaustively():
    """All 7,371 inputs through all seven doors (51,597 constructions; SB3 rejects discrete envs after the params check)."""
    pytest.importorskip("stable_baselines3")
    problems = failures(tuple(DOORS), ALL_CASES)
    assert not problems, "\n".join(problems[:40])


# ----- messages, rules and what stays valid -----
@pytest.mark.parametrize(
    ("env_id", "overrides", "expected"),
    [
        (
            "TrustDilemma-v0",
            {"gamma": 2.0},
            "TrustDilemma-v0: gamma=2.0 is invalid: gamma must be in [0, 1] (a finite real number)",
        ),
        ("TrustDilemma-v0", {"beta": 1.5}, "TrustDilemma-v0: beta=1.5 is invalid: beta must be in (0, 1] (a finite real number)"),
        ("TrustDilemma-v0", {"theta": -1}, "TrustDilemma-v0: theta=-1 is invalid: theta must be > 0 (a finite real number)"),
        (
            "TrustDilemma-v0",
            {"max_steps": None},
            "TrustDilemma-v0: max_steps=None is invalid: max_steps must be >= 1 (an integer < 2**31); got NoneType",
        ),
        (
            "TrustDilemma-v0",
            {"max_steps": 2.5},
            "max_steps=2.5 is invalid: max_steps must be >= 1 (an integer < 2**31); got a non-integer",
        ),
        ("TrustDilemma-v0", {"gamma": math.nan}, "gamma=nan is invalid: gamma must be in [0, 1] (a finite real number); got NaN"),
        ("TrustDilemma-v0", {"lambda_plus": 0.0}, "lambda_plus=0.0 is invalid: lambda_plus must be in (0, 1]"),
        (
            "TrustDilemma-v0",
            {"endowments": [0, 0]},
            "endowments=[0, 0] is invalid: endowments must be an array of finite real numbers of shape [n] (n: one per agent), each > 0",
        ),
        ("TrustDilemma-v0", {"interdependence": np.eye(2)}, "with a zero diagonal"),
        (
            "TrustDilemma-v0",
            {"value_form": "exp"},
            "value_form='exp' is invalid: unknown value_form; value_form must be one of 'log', 'power'",
        ),
        (
            "TrustDilemma-v0",
            {"alpha": [0.7, 0.7]},
            "TrustDilemma-v0: alpha=[0.7, 0.7] is invalid: the shares alpha must sum to 1 (within 1e-3)",
        ),
        ("TrustDilemma-v0", {"baselines": [120.0, 10.0]}, "each baseline must be at most its endowment"),
        (
            "TrustDilemma-v0",
            {"theta": 1e39},
            "theta=1e+39 is invalid: theta must be > 0 (a finite real number); too large for float32",
        ),
        (
            "SynergySearch-v0",
            {"gamma_low": 0.9, "gamma_high": 0.2},
            "SynergySearch-v0: gamma_low=0.9, gamma_high=0.2 is invalid: gamma_low must be at most gamma_high",
        ),
        ("RecoveryRace-v0", {"recovery_target": 0.2}, "recovery_target must exceed initial_trust"),
        ("Cleanup-v0", {"threshold_restoration": 0.5}, "Cleanup: need 0 <= threshold_restoration < threshold_depletion"),
        ("CoalitionFormation-v0", {"min_coalition_size": 7}, "CoalitionFormation-v0: need 1 <= min_coalition_size <= n_agents"),
        ("TeamProduction-v0", {"beta": 1.2}, "TeamProduction-v0: beta=1.2 is invalid: beta must be in (0, 1]"),
        ("DonorGame-v0", {"partner_weight": math.inf}, "DonorGame-v0: partner_weight=inf is invalid"),
        ("CrafterTeam-v0", {"view_width": 8}, "view_width=8 is invalid: view_width must be >= 1 and odd"),
        ("Harvest-v0", {"layout": ("###", "##")}, "layout=('###', '##') is invalid"),
        ("Harvest-v0", {"n_agents": 17}, "Harvest: the layout has 16 spawn points"),
    ],
)
def test_messages_name_env_parameter_value_and_range(env_id, overrides, expected):
    with pytest.raises(ValueError) as error:
        motivegym.make_jax(env_id, **overrides)
    assert expected in str(error.value)


def test_valid_values_of_every_python_and_array_type_are_accepted():
    _, params = motivegym.make_jax(
        "TrustDilemma-v0", max_steps=np.int64(7), gamma=np.float32(0.5), theta=jnp.float32(3.0), kappa=2
    )
    assert int(params.max_steps) == 7 and float(params.gamma) == 0.5 and float(params.theta) == 3.0
    _, params = motivegym.make_jax(
        "TrustDilemma-v0", endowments=jnp.array([50, 60]), baselines=(10, 20), interdependence=[[0, 1], [0.5, 0]]
    )
    assert params.endowments.dtype == jnp.float32 and float(params.interdependence[0, 1]) == 1.0
    _, params = motivegym.make_jax("DonorGame-v0", n_agents=np.int32(4), rounds=jnp.int32(3))
    assert params.n_agents == 4 and type(params.n_agents) is int and int(params.max_steps) == 3  # static ints become Python ints
    _, params = motivegym.make_jax("ApacheProject-v0", phase="Growth")  # the env's case-insensitive phase
    assert params.phase == "growth"
    _, params = motivegym.make_jax("SLCD-v0", trust_enabled=np.bool_(False), gamma=0, interdependence=np.zeros((2, 2)))
    assert params.trust_enabled is False


def test_check_value_descriptions_and_traced_values():
    assert requirement_text(integer(2, 6)) == "in [2, 6] (an integer)"
    assert requirement_text(real()) == "a finite real number"
    assert (
        summary(real_array(("n", "n"), 0.0, 1.0, requirement="a zero diagonal"))
        == "real [n, n] each in [0, 1], with a zero diagonal"
    )
    assert summary(integer(1)) == "int >= 1" and integer(1).high == INT32_MAX
    with pytest.raises(ValueError, match="unknown parameter kind"):
        ParamSpec("complex")
    seen = []
    jax.jit(lambda x: seen.append(check_value("env", "gamma", x, real(0.0, 1.0))) or x)(5.0)  # cannot be checked on the host
    assert len(seen) == 1


def test_every_error_of_the_envs_own_checks_names_the_env():
    with pytest.raises(ValueError, match=r"^KeyDoorGift-v0: |^KeyDoorGift: "):
        motivegym.make_jax("KeyDoorGift-v0", size=4, n_agents=8)


def test_docs_show_every_parameter_with_its_range():
    from motivegym.envdocs import environment_section

    section = environment_section("TrustDilemma-v0")
    assert "| parameter | default | valid |" in section and "| `gamma` | `0.7` | real in [0, 1] |" in section
    assert "* the shares alpha must sum to 1 (within 1e-3)" in section
    for env_id in ("DonorGame-v0", "LoyaltyTeam-v0"):
        rows = [line for line in environment_section(env_id).splitlines() if line.startswith("| `")]
        assert all(not line.endswith("|  |") for line in rows), "a parameter without a valid range in the docs"
    assert "| `rounds (keyword)` | `max_steps` | int >= 1 (sets max_steps) |" in environment_section("DonorGame-v0")


def test_params_pytrees_of_the_defaults_hold_no_nan():
    for env_id in ENV_IDS:
        _, params = motivegym.make_jax(env_id)
        leaves = jax.tree_util.tree_leaves(params)
        assert all(np.all(np.isfinite(np.asarray(leaf, np.float64))) for leaf in leaves), env_id
