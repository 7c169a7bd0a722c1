import jax
import numpy as np
import pytest

import motivegym
from motivegym.core.batching import random_actions
from motivegym.core.captions import caption, format_value, generic_caption, transition_caption


@pytest.mark.parametrize("env_id", motivegym.list_envs())
def test_every_registered_env_has_a_caption_and_a_transition_caption(env_id):
    env, params = motivegym.make_jax(env_id)
    state, _ = env.reset(jax.random.PRNGKey(0), params)
    text = caption(env, state, params)
    assert isinstance(text, str) and text.strip()
    assert caption(env, state, params) == text  # deterministic
    actions = np.asarray(random_actions(env, params, jax.random.PRNGKey(1)))
    payoffs = np.arange(env.n_agents(params), dtype=np.float32)
    full = transition_caption(env, state, actions, payoffs, state, params)
    names = env.agent_names(params)
    assert full.startswith("Before: ") and " | After: " in full
    assert all(f"{name}=" in full for name in names)
    assert "Payoffs: " + ", ".join(f"{name}={k}" for k, name in enumerate(names)) in full


def test_generic_caption_lists_describe_entries_with_agent_names():
    env, params = motivegym.make_jax("TrustDilemma-v0")
    state, _ = env.reset(jax.random.PRNGKey(0), params)
    text = generic_caption(env, state, params)
    assert text.startswith("TrustDilemma: step=0; actions: agent_0=40, agent_1=40; mean_trust=0.5;")


def test_format_value_rules():
    names = ("A", "B")
    assert format_value("x", np.float32(1.23456), names) == "x=1.235"
    assert format_value("flag", np.bool_(True), names) == "flag=yes"
    assert format_value("n", np.int32(7), names) == "n=7"
    assert format_value("v", np.array([1.0, 2.5]), names) == "v: A=1, B=2.5"
    assert format_value("m", np.eye(2), names) == "m=[[1.0, 0.0], [0.0, 1.0]]"
    assert format_value("big", np.arange(20.0), names) == "big: shape [20], mean=9.5, min=0, max=19"


def test_an_env_caption_method_wins():
    env, params = motivegym.make_jax("TrustDilemma-v0")

    class Captioned(type(env)):
        def caption(self, state, params):
            return f"trust game at step {int(state.t)}"

    state, _ = env.reset(jax.random.PRNGKey(0), params)
    assert caption(Captioned(), state, params) == "trust game at step 0"
