import jax.numpy as jnp
import numpy as np
import pytest

import motivegym
from motivegym.core.registry import canonical_id


def test_ids_are_registered_in_reference_order():
    assert motivegym.list_envs("coopetition")[:3] == ["TrustDilemma-v0", "PartnerHoldUp-v0", "PlatformEcosystem-v0"]
    assert canonical_id("motivegym/SLCD-v0") == canonical_id("motivegym:motivegym/SLCD-v0") == "SLCD-v0"


def test_unknown_id_suggests_the_closest():
    with pytest.raises(ValueError, match="did you mean 'TrustDilemma-v0'"):
        motivegym.make_jax("TrustDilema-v0")


def test_param_overrides_and_errors():
    env, params = motivegym.make_jax("TrustDilemma-v0", gamma=0.9, lambda_plus=0.2, max_steps=5, baselines=[10, 20])
    assert float(params.gamma) == pytest.approx(0.9) and float(params.trust.lambda_plus) == pytest.approx(0.2)
    assert int(params.max_steps) == 5 and params.baselines.dtype == jnp.float32
    np.testing.assert_allclose(np.asarray(params.baselines), [10, 20])
    with pytest.raises(ValueError, match=r"unknown keyword argument 'gama' \(did you mean 'gamma'\?\).*Valid"):
        motivegym.make_jax("TrustDilemma-v0", gama=0.3)
    with pytest.raises(ValueError, match="shape"):
        motivegym.make_jax("TrustDilemma-v0", baselines=[1, 2, 3])
    with pytest.raises(ValueError, match="lambda_minus"):
        motivegym.make_jax("TrustDilemma-v0", lambda_minus=2.0)
    with pytest.raises(ValueError, match="observation"):
        motivegym.make_jax("TrustDilemma-v0", observation="everything")
    with pytest.raises(ValueError, match="max_steps"):
        motivegym.make_jax("TrustDilemma-v0", max_steps=0)


def test_every_env_documents_the_required_sections():
    for env_id in motivegym.list_envs():
        doc = motivegym.get_spec(env_id).env_class.__doc__
        for section in ("Mechanism", "Agents", "Actions", "Observation", "Payoff", "Termination", "Defaults"):
            assert f"**{section}" in doc, f"{env_id} docstring lacks {section}"
