import re
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

import motivegym
from motivegym.core.thresholds import TOLERANCE, above, at_least, at_most, below, exactly_at_least, exactly_below, ratio

ENVS = Path(motivegym.__file__).parent / "envs"


def test_values_on_a_threshold_count_as_reaching_it_within_the_tolerance():
    rates = jnp.asarray([0.59999996, 0.6, 0.6000001, 0.6 - 2 * TOLERANCE, 0.6 + 2 * TOLERANCE], jnp.float32)
    np.testing.assert_array_equal(at_least(rates, 0.6), [True, True, True, False, True])
    np.testing.assert_array_equal(below(rates, 0.6), [False, False, False, True, False])
    np.testing.assert_array_equal(at_most(rates, 0.6), [True, True, True, True, False])
    np.testing.assert_array_equal(above(rates, 0.6), [False, False, False, False, True])
    # the tolerance is relative above 1: a deviation of 10.00005 is "at most 10"
    assert bool(at_most(jnp.float32(10.00005), 10.0)) and not bool(at_most(jnp.float32(10.0002), 10.0))


def test_a_rate_divided_by_a_baked_constant_decides_like_a_traced_one():
    """XLA turns ``a / e`` into ``a * (1/e)`` when e is a compile-time constant: 30/50 becomes 0.59999996."""
    endowments = jnp.full(4, 50.0, jnp.float32)
    actions = jnp.full(4, 30.0, jnp.float32)
    baked = jax.jit(lambda a: a / endowments)(actions)
    traced = jax.jit(lambda a, e: a / e)(actions, endowments)
    assert bool(jnp.all(at_least(baked, 0.6))) and bool(jnp.all(at_least(traced, 0.6)))
    assert not bool(jnp.any(below(baked, 0.6)))
    exact = jax.jit(lambda a: ratio(a, endowments))(actions)  # the root cause, removed: a true division
    np.testing.assert_array_equal(exact, np.float32(0.6))
    np.testing.assert_array_equal(jax.jit(lambda a: ratio(a, endowments))(actions / 3), np.float32(0.2))


def test_exact_comparisons_keep_the_reference_rounding():
    """CoalitionFormation's θ after 14 free-riding steps is 0.14999992: below 0.15 exactly, not with the tolerance."""
    theta = jnp.float32(0.14999992)
    assert bool(exactly_below(theta, 0.15)) and not bool(below(theta, 0.15))
    assert bool(exactly_at_least(jnp.float32(0.4), 0.4)) and not bool(exactly_at_least(jnp.float32(0.39999998), 0.4))


def test_a_history_of_rates_on_the_loyalty_threshold_keeps_the_bonus():
    """A mean of eight 0.6s is 0.59999996 in float32: the loyalty bonus must not switch off after step 7 (issue 23)."""
    env, params = motivegym.make_jax("LoyaltyTeam-v0", max_steps=12)
    state, _ = env.reset(jax.random.PRNGKey(0), params)
    step = jax.jit(lambda s: env.step(jax.random.PRNGKey(0), s, params.endowments * 0.6, params))
    for _ in range(12):
        state, _, _, _, info = step(state)
        np.testing.assert_allclose(info["collective_multiplier"], 1.2 * (1 + 0.15 * 0.6), rtol=1e-6)


def test_team_production_at_the_shirking_threshold_is_not_penalised():
    """Issue 23: efforts 10/50 paid 65.40 (x0.9) with params baked in, 72.67 through make_jax."""
    env, params = motivegym.make_jax("TeamProduction-v0")
    state, _ = env.reset(jax.random.PRNGKey(0), params)
    step = jax.jit(lambda s, a: env.step(jax.random.PRNGKey(0), s, a, params))  # params baked in
    _, _, payoffs, _, info = step(state, jnp.full(4, 10.0, jnp.float32))
    np.testing.assert_array_equal(info["collective_multiplier"], 1.0)
    np.testing.assert_allclose(payoffs, 72.665, rtol=1e-4)


#: a rate, fraction, score, trust or reputation compared with a threshold by a plain operator
PLAIN_THRESHOLD = re.compile(r"(>=|<=|(?<![-=])>(?!=)|<(?!=))\s*(params\.\w*(threshold|target)\w*|self\.\w*threshold\w*|bounds\b)")


def test_envs_decide_every_threshold_rule_with_the_shared_helper():
    offenders = []
    for path in sorted(ENVS.rglob("*.py")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split("#", 1)[0]
            if PLAIN_THRESHOLD.search(code) and not code.strip().startswith(("*", "``", '"', "raise", "if ")):
                offenders.append(f"{path.relative_to(ENVS)}:{number}: {line.strip()}")
    assert not offenders, "use motivegym.core.thresholds (at_least/below/at_most/above):\n" + "\n".join(offenders)
