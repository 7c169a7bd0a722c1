"""Scripted bots: every dilemma env has its roles, and each role plays what its name says."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import motivegym
from motivegym.baselines.bots import ROLES, bot_roles, make_bot
from motivegym.experiments.evaluation import episode_keys, rollout_batch, summarize
from motivegym.experiments.sweep import expand_envs
from motivegym.reward_layers import reward_layer

DILEMMAS = expand_envs(["dilemmas"])


def welfare(env_id: str, role: str, episodes: int = 4) -> float:
    env, params = motivegym.make_jax(env_id)
    policy = make_bot(env_id, role, env, params)
    stats = rollout_batch(env, params, (reward_layer("private"),), policy, env.max_episode_steps(params), policy.init(env, params), episode_keys(0, episodes))
    return summarize(stats)["welfare"]


#: the Melting Pot substrates: 1000-step episodes of 5-9 agents (minutes of compilation); their Schelling diagrams
#: (docs/schelling.md) compare the same two populations
SUBSTRATES = ("CoopMining-v0", "Mushrooms-v0", "PrisonersDilemmaInTheMatrix-v0", "StagHuntInTheMatrix-v0", "GiftRefinement-v0", "Territory-v0")


@pytest.mark.parametrize(
    "env_id",
    [pytest.param(e, marks=pytest.mark.slow) if e in SUBSTRATES else e for e in DILEMMAS if e not in ("ApacheProject-v0", "Harvest-v0", "Cleanup-v0")],
)
def test_cooperators_beat_defectors_in_welfare(env_id):
    """Among themselves, cooperator bots reach more welfare than defector bots (the dilemma's two poles)."""
    assert set(bot_roles(env_id)) >= {"cooperator", "defector"}
    assert welfare(env_id, "cooperator") > welfare(env_id, "defector")


def test_matrix_titfortat_copies_the_partner():
    env, params = motivegym.make_jax("PrisonersDilemma-v0")
    tft = make_bot("PrisonersDilemma-v0", "reciprocator", env, params)
    state = tft.init(env, params)
    key = jax.random.PRNGKey(0)
    env_state, obs = env.reset(key, params)
    assert np.asarray(tft(key, obs, state)[0]).tolist() == [0, 0]
    env_state, obs, *_ = env.step(key, env_state, jnp.array([0, 1]), params)
    assert np.asarray(tft(key, obs, state)[0]).tolist() == [1, 0]


def test_discriminator_gives_to_good_images_only():
    env, params = motivegym.make_jax("DonorGame-v0")
    bot = make_bot("DonorGame-v0", "reciprocator", env, params)
    obs = jnp.zeros((6, 5)).at[:, 0].set(jnp.array([-0.2, 0.0, 0.4, -1.0, 0.2, -0.6]))
    assert np.asarray(bot(None, obs, bot.init(env, params))[0]).tolist() == [0, 1, 1, 0, 1, 0]


def test_conditional_cooperator_matches_partners_and_punishes():
    env, params = motivegym.make_jax("PublicGoodsPunishment-v0")
    bot = make_bot("PublicGoodsPunishment-v0", "reciprocator", env, params)
    state = bot.init(env, params)
    key = jax.random.PRNGKey(0)
    env_state, obs = env.reset(key, params)
    assert np.asarray(bot(key, obs, state)[0]).tolist() == [4, 4, 4, 4]  # full contribution in round 1
    env_state, obs, *_ = env.step(key, env_state, jnp.array([4, 0, 0, 4]), params)
    assert np.asarray(bot(key, obs, state)[0]).tolist() == [1, 1, 1, 1]  # punishment step: punish free riders
    env_state, obs, *_ = env.step(key, env_state, jnp.zeros(4, jnp.int32), params)
    # partners' mean last round: agent 0 sees (0 + 0 + 1)/3 -> level round(4/3) = 1; agent 1 sees 2/3 -> level 3
    assert np.asarray(bot(key, obs, state)[0]).tolist() == [1, 3, 3, 1]


def test_coopetition_roles_are_constants_and_titfortat():
    assert make_bot("TeamProduction-v0", "cooperator").name == "constant:1.00"
    assert make_bot("TeamProduction-v0", "defector").name == "constant:0.00"
    assert make_bot("TeamProduction-v0", "reciprocator").name == "titfortat:relative"


def test_unknown_role_and_env_without_bots_are_refused():
    with pytest.raises(ValueError, match="roles on this env: cooperator, defector"):
        make_bot("CoinGame-v0", "reciprocator")
    with pytest.raises(ValueError, match="has no scripted bots"):
        make_bot("CrafterTeam-v0", "cooperator")
    assert ROLES == ("cooperator", "reciprocator", "defector")
