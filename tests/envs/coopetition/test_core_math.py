import jax.numpy as jnp
import numpy as np
import pytest

from motivegym.envs.coopetition.interdependence import hub_spoke_interdependence, symmetric_interdependence
from motivegym.envs.coopetition.trust import effective_trust, initial_trust_state, off_diagonal_mean, trust_params, trust_update
from motivegym.envs.coopetition.value import individual_value, private_payoff, synergy, total_value


def test_value_functions_match_spec_worked_example():
    a = jnp.array([50.0, 50.0])
    assert float(individual_value(a, 20.0, 0.75)[0]) == pytest.approx(78.6364, abs=1e-3)
    assert float(synergy(a)) == pytest.approx(50.0, rel=1e-6)
    assert float(total_value(a, 20.0, 0.75, 0.65)) == pytest.approx(189.773, abs=1e-3)
    assert float(individual_value(jnp.array([0.0]), 20.0, 0.75)[0]) == 0.0
    assert float(individual_value(jnp.array([0.0]), 20.0, 0.75, "power")[0]) == pytest.approx(1e-10**0.75, rel=1e-3)


def test_one_non_contributor_wipes_out_synergy():
    assert float(synergy(jnp.array([80.0, 0.0, 40.0]))) == 0.0
    assert float(synergy(jnp.array([8.0, 2.0]))) == pytest.approx(4.0, rel=1e-6)


def test_private_payoff_formula():
    a = jnp.array([80.0, 20.0])
    pi = private_payoff(a, jnp.array([100.0, 100.0]), jnp.array([0.5, 0.5]), 20.0, 0.75, 0.7)
    g = np.sqrt(80 * 20)
    expected = [20 + 20 * np.log(81) + 0.35 * g, 80 + 20 * np.log(21) + 0.35 * g]
    np.testing.assert_allclose(np.asarray(pi), expected, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(pi), [121.889, 154.890], atol=1e-3)


def test_trust_update_after_defection_matches_reference():
    params = trust_params(0.15, 0.45, 0.50, 0.02, 0.60, 1.5, 0.50, 0.0)
    trust, reputation = initial_trust_state(2, params)
    new_trust, new_reputation = trust_update(
        trust, reputation, jnp.array([80.0, 20.0]), jnp.array([40.0, 40.0]), jnp.asarray(symmetric_interdependence(2, 0.6)), params
    )
    assert float(new_trust[0, 1]) == pytest.approx(0.194, abs=1e-3)  # agent 1 defected
    assert float(new_reputation[0, 1]) == pytest.approx(0.5, abs=1e-4)
    assert float(new_trust[1, 0]) == pytest.approx(0.575, abs=1e-4)
    assert float(new_reputation[1, 0]) == 0.0
    np.testing.assert_array_equal(np.diag(np.asarray(new_trust)), [1.0, 1.0])


def test_meeting_baseline_exactly_keeps_trust_and_decays_damage():
    params = trust_params(initial_trust=0.4, initial_reputation=0.5)
    trust, reputation = initial_trust_state(2, params)
    b = jnp.array([30.0, 30.0])
    new_trust, new_reputation = trust_update(trust, reputation, b, b, jnp.zeros((2, 2)), params)
    assert float(new_trust[0, 1]) == pytest.approx(0.4)
    assert float(new_reputation[0, 1]) == pytest.approx(0.5 * (1 - 0.03))


def test_effective_trust_and_means():
    trust = jnp.array([[1.0, 0.8], [0.3, 1.0]])
    reputation = jnp.array([[0.0, 0.5], [0.1, 0.0]])
    np.testing.assert_allclose(np.asarray(effective_trust(trust, reputation))[0, 1], 0.5)
    assert float(off_diagonal_mean(trust, 1.0)) == pytest.approx(0.55)


def test_trust_parameter_validation_and_matrices():
    with pytest.raises(ValueError, match="lambda_plus"):
        trust_params(lambda_plus=1.5)
    hub = hub_spoke_interdependence(3, 0.25, 0.75)
    assert hub.shape == (4, 4) and hub[0, 1] == pytest.approx(0.25) and hub[1, 0] == pytest.approx(0.75) and hub[1, 2] == 0
    caller = np.ones((2, 2))
    symmetric_interdependence(2, 0.5)
    from motivegym.envs.coopetition.interdependence import _zero_diagonal

    _zero_diagonal(caller)
    assert caller[0, 0] == 1.0  # the caller's array is never modified (spec §7.44)
