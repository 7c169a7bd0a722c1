import jax
import jax.numpy as jnp
import numpy as np
import pytest

from motivegym.core.social_metrics import (
    add_step,
    empty_totals,
    equality,
    outcomes_from_totals,
    peace,
    social_outcomes,
    sustainability,
    utilitarian_efficiency,
)

# 4 steps, 2 agents: returns R = (3, 1)
PAYOFFS = jnp.array([[1.0, 0.0], [1.0, 1.0], [0.0, 0.0], [1.0, 0.0]])


def test_utilitarian_efficiency_is_total_return_per_step():
    assert float(utilitarian_efficiency(PAYOFFS)) == pytest.approx(4 / 4)


def test_equality_is_one_minus_gini():
    # Σ_i Σ_j |R_i − R_j| = 2·|3 − 1| = 4; E = 1 − 4 / (2·2·4) = 0.75
    assert float(equality(PAYOFFS)) == pytest.approx(0.75)
    assert float(equality(jnp.ones((3, 4)))) == pytest.approx(1.0)
    assert float(equality(jnp.array([[0.0, 0.0, 0.0, 5.0]]))) == pytest.approx(0.25)  # one agent takes all: 1/n
    assert float(equality(jnp.zeros((3, 2)))) == 1.0
    assert np.isnan(float(equality(jnp.array([[1.0, -1.0]]))))


def test_sustainability_is_the_mean_time_of_positive_payoffs():
    # agent 0 rewarded at t = 1, 2, 4 -> 7/3; agent 1 at t = 2 -> 2; S = (7/3 + 2) / 2
    assert float(sustainability(PAYOFFS)) == pytest.approx((7 / 3 + 2) / 2)
    # an agent never rewarded is left out
    assert float(sustainability(jnp.array([[0.0, 0.0], [0.0, 2.0], [0.0, -1.0]]))) == pytest.approx(2.0)
    assert np.isnan(float(sustainability(jnp.zeros((3, 2)))))


def test_peace_counts_agents_not_removed_per_step():
    removed = jnp.array([[False, False], [True, False], [True, True], [False, False]])
    assert float(peace(removed)) == pytest.approx((2 * 4 - 3) / 4)


def test_social_outcomes_jit_and_vmap_over_episodes():
    removed = jnp.zeros((4, 2), bool).at[1, 0].set(True)
    batch = jax.jit(jax.vmap(social_outcomes))(jnp.stack([PAYOFFS, PAYOFFS * 2]), jnp.stack([removed, removed]))
    np.testing.assert_allclose(batch["efficiency"], [1.0, 2.0])
    np.testing.assert_allclose(batch["equality"], [0.75, 0.75])
    np.testing.assert_allclose(batch["peace"], [1.75, 1.75])
    assert float(social_outcomes(PAYOFFS)["peace"]) == 2.0


def test_bad_shapes_raise():
    with pytest.raises(ValueError, match=r"\[T, n\]"):
        utilitarian_efficiency(jnp.ones(3))
    with pytest.raises(ValueError, match="shape of payoffs"):
        social_outcomes(PAYOFFS, jnp.zeros((3, 2), bool))


def test_streaming_totals_match_the_trajectory_form_and_ignore_steps_after_the_end():
    payoffs = jax.random.normal(jax.random.PRNGKey(0), (9, 3))
    removed = jax.random.bernoulli(jax.random.PRNGKey(1), 0.3, (9, 3))
    totals = empty_totals(3)
    for t in range(12):  # three steps after the episode's end, masked out
        row = min(t, 8)
        totals = add_step(totals, payoffs[row] + 5.0 * (t > 8), removed[row], float(t < 9))
    streamed = outcomes_from_totals(totals)
    expected = social_outcomes(payoffs, removed)
    for name in expected:
        np.testing.assert_allclose(streamed[name], expected[name], rtol=1e-5)
