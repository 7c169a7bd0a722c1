import time

import gymnasium
import jax
import numpy as np
import pytest

import motivegym
import motivegym.reward_layers.llm.reward_code as reward_code
from motivegym.reward_layers import reward_layer
from motivegym.reward_layers.llm.reward_code import (
    CodeReward,
    InvalidRewardCodeError,
    UnsafeRewardCodeError,
    check_reward_code,
    extract_code,
    sample_transitions,
    sandboxed_check,
    signature,
    validate_reward_code,
)
from motivegym.reward_layers.llm.sandbox import Bounds, SandboxStartError, bounds_from_environment

HEADER = "def reward(obs, actions, payoffs, next_obs, info):\n"
VALID = HEADER + '    """Payoff plus a trust bonus."""\n    bonus = 10.0 * info["mean_trust"]\n    return payoffs * 0.5 + next_obs[:, 0] - bonus\n'


@pytest.fixture(scope="module")
def trust():
    return motivegym.make_jax("TrustDilemma-v0", max_steps=10)


@pytest.mark.parametrize(
    "source, message",
    [
        ("import os\n" + HEADER + "    return payoffs\n", "import"),
        (HEADER + "    import os\n    return payoffs\n", "import"),
        (HEADER + "    return obs.__class__\n", r"attribute access \.__class__"),
        (HEADER + "    x = obs.T\n    return payoffs\n", r"attribute access \.T"),
        (HEADER + "    f = open('/etc/passwd')\n    return payoffs\n", "calling 'open'"),
        (HEADER + "    open('/etc/passwd')\n    return payoffs\n", "calling 'open'"),
        (HEADER + "    x = exec('1')\n    return payoffs\n", "calling 'exec'"),
        (HEADER + "    return eval('payoffs')\n", "calling 'eval'"),
        (HEADER + "    return jnp.linalg.norm(obs)\n", "calling 'jnp.linalg.norm'"),
        (HEADER + "    return jnp.load('x')\n", "jnp.load"),
        (HEADER + "    return __builtins__\n", "the name '__builtins__'"),
        (HEADER + "    return payoffs + 10 ** 10 ** 10\n", "arithmetic on two constants"),
        (HEADER + "    for i in range(3):\n        pass\n    return payoffs\n", "For statement"),
        (HEADER + "    while True:\n        pass\n    return payoffs\n", "While statement"),
        (HEADER + "    if payoffs[0] > 0:\n        return payoffs\n    return payoffs\n", "If statement"),
        (HEADER + "    f = lambda x: x\n    return payoffs\n", "Lambda"),
        (HEADER + "    return jnp.stack([p for p in payoffs])\n", "jnp.stack|ListComp"),
        (HEADER + "    x = 'text'\n    return payoffs\n", "constant 'text'"),
        (HEADER + "    return info[payoffs]\n", "string constant"),
        (HEADER + "    obs[0] = 1\n    return payoffs\n", "assignment to anything but plain names"),
        ("x = 1\n" + HEADER + "    return payoffs\n", "exactly one"),
        ("@jax.jit\n" + HEADER + "    return payoffs\n", "decorator"),
    ],
)
def test_unsafe_code_is_rejected(source, message):
    with pytest.raises(UnsafeRewardCodeError, match=message):
        check_reward_code(source)


def test_broadcasting_into_a_huge_array_is_rejected(trust):
    env, params = trust  # the huge array is only traced (abstract shapes), never allocated
    source = HEADER + (
        "    a = obs[:, :, None, None] * obs[None, None, :, :]\n"
        "    b = a[:, :, :, :, None, None, None, None] * a[None, None, None, None, :, :, :, :]\n"
        "    c = b[:, :, :, :, :, :, :, :, None, None] * obs[None, None, None, None, None, None, None, None, :, :]\n"
        "    return payoffs + jnp.sum(c)\n"
    )
    with pytest.raises(UnsafeRewardCodeError, match="builds an array of"):
        validate_reward_code(source, env, params)


@pytest.mark.parametrize(
    "source, message",
    [
        ("def reward(obs:\n", "does not parse"),
        ("def reward(obs, actions):\n    return obs\n", "signature"),
        ("def score(obs, actions, payoffs, next_obs, info):\n    return payoffs\n", "called 'reward'"),
        (HEADER + "    x = payoffs\n", "must end with `return"),
        (HEADER + "    return jnp.sum(payoffs)\n", r"shape \(2,\)"),
        (HEADER + "    return jnp.log(payoffs * 0.0 - 1.0)\n", "NaN/inf"),
        (HEADER + "    return payoffs + info['nope']\n", "info\\['nope'\\]"),
        (HEADER + "    return payoffs + undefined_name_is_unsafe_not_invalid\n", None),
    ],
)
def test_invalid_code_is_rejected(trust, source, message):
    env, params = trust
    if message is None:  # unknown names are refused by the whitelist
        with pytest.raises(UnsafeRewardCodeError):
            validate_reward_code(source, env, params)
        return
    with pytest.raises(InvalidRewardCodeError, match=message):
        validate_reward_code(source, env, params)


def test_valid_code_compiles_and_runs_inside_jit_with_exact_values(trust):
    env, params = trust
    layer = validate_reward_code(VALID, env, params)
    transitions = sample_transitions(env, params, 4, seed=3)
    _, rewards, parts = jax.jit(jax.vmap(lambda t: layer.apply((), t)))(transitions)
    expected = np.asarray(transitions.payoffs) * 0.5 + np.asarray(transitions.next_obs)[:, :, 0] - 10.0 * np.asarray(transitions.info["mean_trust"])[:, None]
    np.testing.assert_allclose(np.asarray(rewards), expected, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(parts["code"]), expected, rtol=1e-5)


def test_code_layer_from_a_file_through_gymnasium(tmp_path):
    path = tmp_path / "reward.py"
    path.write_text(HEADER + "    return 2.0 * payoffs\n")
    assert isinstance(reward_layer(f"code:{path}"), CodeReward)
    env = gymnasium.make("motivegym/TrustDilemma-v0", reward=f"code:{path}", scalarize=None, disable_env_checker=True)
    env.reset(seed=0)
    _, reward, *_, info = env.step(np.array([50.0, 20.0], np.float32))
    np.testing.assert_allclose(reward, 2.0 * info["payoffs"], rtol=1e-6)


def test_code_layer_is_hashable_and_rejects_bad_code_at_construction():
    assert hash(CodeReward(VALID)) == hash(CodeReward(VALID))
    with pytest.raises(UnsafeRewardCodeError):
        CodeReward(HEADER + "    return obs.__dict__\n")


def test_extract_code_finds_the_reward_block():
    answer = "Try this:\n```python\nx = 1\n```\nand\n```python\n" + VALID + "```\nDone."
    assert extract_code(answer) == VALID


# ----- regression payloads of issue 23, each refused with a clear error within seconds -----
ISSUE_PAYLOADS = [
    # Python integers have no size limit: this hung the host (and `llm evolve`) with no timeout
    (HEADER + "    a = 1000000000\n    b = a ** a\n    return payoffs\n", "line 3: arithmetic on two constants"),
    # tuple repetition allocated 1.8 GB and was accepted (the 2**20 cap looks only at JAX arrays)
    (HEADER + "    t = (1,)\n    u = t * 200000000\n    return payoffs\n", "line 2: a tuple here"),
    # rebinding the names the sandbox relies on passed the whitelist model
    (HEADER + "    jnp = obs\n    return jnp.sum(payoffs)\n", "rebinding 'jnp'"),
    (HEADER + "    info = obs\n    return payoffs\n", "rebinding 'info'"),
]
VARIANTS = [
    (HEADER + "    a = 3\n    b = -a\n    c = b ** b\n    return payoffs\n", "arithmetic on two constants"),
    (HEADER + "    a = 1000000000\n    a **= a\n    return payoffs\n", "arithmetic on two constants"),
    (HEADER + "    a, b = 1000000000, 7\n    c = a ** b\n    return payoffs\n", "arithmetic on two constants"),
    (HEADER + "    c = 1 < 2\n    d = c + c\n    return payoffs\n", "arithmetic on two constants"),
    (HEADER + "    a = (1000000000, 2)[0]\n    return payoffs\n", "a tuple here"),
    (HEADER + "    t = payoffs, payoffs\n    return payoffs\n", "a tuple here"),
    (HEADER + "    a, t = payoffs, (1,)\n    return payoffs\n", "a tuple here"),
    (HEADER + "    x = payoffs + (1, 2)\n    return x\n", "a tuple here"),
    (HEADER + "    info += 1\n    return payoffs\n", "rebinding 'info'"),
    (HEADER + "    a, jnp = payoffs, obs\n    return payoffs\n", "rebinding 'jnp'"),
]


@pytest.mark.parametrize("source, message", ISSUE_PAYLOADS + VARIANTS)
def test_issue_payloads_are_refused_by_the_whitelist(source, message):
    start = time.monotonic()
    with pytest.raises(UnsafeRewardCodeError, match=message):
        check_reward_code(source)
    assert time.monotonic() - start < 30


@pytest.mark.parametrize("source, message", ISSUE_PAYLOADS)
def test_issue_payloads_are_refused_through_validation_and_the_code_reward_string(trust, tmp_path, source, message):
    env, params = trust
    start = time.monotonic()
    with pytest.raises(UnsafeRewardCodeError, match=message):
        validate_reward_code(source, env, params)
    path = tmp_path / "reward.py"
    path.write_text(source)
    with pytest.raises(UnsafeRewardCodeError, match=f"reward code file {path}: .*{message}"):
        reward_layer(f"code:{path}")
    assert time.monotonic() - start < 30


def test_common_idioms_stay_allowed(trust):
    env, params = trust
    source = HEADER + (
        "    scale = 0.01\n"
        "    a, b = payoffs[0], payoffs[1]\n"
        "    x = payoffs * scale * 2 * jnp.pi\n"
        "    x = x + jnp.sum(obs, axis=(0, 1)) * 0.0 + obs[:, (0, 1)][:, 0] * 0.0\n"
        "    payoffs = payoffs + a - b\n"
        "    return x + payoffs * 0.0\n"
    )
    validate_reward_code(source, env, params)


# ----- the sandbox bounds the first trace even where the whitelist has a gap (whitelist=False) -----
@pytest.fixture(scope="module")
def trust_signature(trust):
    env, params = trust
    return signature(jax.tree.map(lambda x: x[0], sample_transitions(env, params, 1)))


def test_sandbox_time_bound_ends_a_hanging_trace(trust_signature):
    start = time.monotonic()
    with pytest.raises(UnsafeRewardCodeError, match="first trace did not finish within 2 s"):
        sandboxed_check(ISSUE_PAYLOADS[0][0], trust_signature, Bounds(seconds=2), whitelist=False)
    assert time.monotonic() - start < 30


def test_sandbox_memory_bound_ends_a_huge_python_allocation(trust_signature):
    start = time.monotonic()
    with pytest.raises(UnsafeRewardCodeError, match="first trace needed more than the sandbox's memory bound of 256 MiB"):
        sandboxed_check(ISSUE_PAYLOADS[1][0], trust_signature, Bounds(seconds=20, memory_mb=256), whitelist=False)
    assert time.monotonic() - start < 30


def test_sandbox_reports_a_child_that_cannot_start_in_time(trust_signature):
    with pytest.raises(SandboxStartError, match="did not start within"):
        sandboxed_check(VALID, trust_signature, Bounds(startup_seconds=0.001))


def test_sandbox_bounds_from_the_environment(monkeypatch):
    monkeypatch.setenv("MOTIVEGYM_SANDBOX_SECONDS", "2.5")
    monkeypatch.setenv("MOTIVEGYM_SANDBOX_MEMORY_MB", "300")
    assert bounds_from_environment() == Bounds(seconds=2.5, memory_mb=300)
    monkeypatch.setenv("MOTIVEGYM_SANDBOX_SECONDS", "soon")
    with pytest.raises(ValueError, match="MOTIVEGYM_SANDBOX_SECONDS must be a number"):
        bounds_from_environment()
    with pytest.raises(ValueError, match="positive"):
        Bounds(seconds=float("nan"))


# ----- non-finite rewards: refused at validation and at run time -----
NAN_CODE = HEADER + "    return jnp.log(payoffs - 1000000.0)\n"


def test_code_layer_refuses_nan_rewards_at_run_time_through_the_reward_string(tmp_path):
    path = tmp_path / "reward.py"
    path.write_text(NAN_CODE)
    env = gymnasium.make("motivegym/TrustDilemma-v0", reward=f"code:{path}", disable_env_checker=True)
    env.reset(seed=0)
    with pytest.raises(Exception, match="returned NaN/inf rewards at run time"):
        env.step(np.array([50.0, 20.0], np.float32))


def test_run_time_check_calls_the_host_only_on_failure(trust, monkeypatch):
    env, params = trust
    calls = []
    monkeypatch.setattr(reward_code, "_raise_non_finite", lambda finite: calls.append(bool(finite)))
    transitions = sample_transitions(env, params, 16)
    layer = CodeReward(VALID)
    jax.block_until_ready(jax.jit(jax.vmap(lambda t: layer.apply((), t)))(transitions))
    assert calls == []  # a vmapped lax.cond would call back once per transition
    jax.block_until_ready(jax.jit(jax.vmap(lambda t: CodeReward(NAN_CODE).apply((), t)))(transitions))
    assert calls == [False]  # one check for the whole batch


# ----- bad code: files -----
def test_bad_code_files_name_the_file_and_the_problem(tmp_path):
    binary = tmp_path / "binary.py"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe")
    prose = tmp_path / "prose.py"
    prose.write_text("This is my reward: pay everyone.\n")
    cases = [
        (tmp_path, "is a directory"),
        (tmp_path / "missing.py", "does not exist"),
        (binary, "is not Python source"),
        (prose, "does not parse"),
    ]
    for path, problem in cases:
        with pytest.raises(ValueError, match=f"reward code file {path}.*{problem}"):
            reward_layer(f"code:{path}")


def test_extract_code_is_linear_in_the_answer():
    start = time.monotonic()
    assert extract_code("```" + "\n" * 2**20) == "```\n"  # before: a 78 KiB answer of this shape took 2 minutes
    assert extract_code("```python\n" * 2**16).startswith("```python")
    assert time.monotonic() - start < 30
    assert extract_code("```js\nx\n```\ntext\n```py\n" + VALID + "```") == VALID
