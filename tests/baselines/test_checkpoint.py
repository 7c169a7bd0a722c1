"""Checkpoints of the baselines: round trips (same greedy actions, same evaluation welfare) and clear refusals."""

import json
import re

import jax
import numpy as np
import pytest

from motivegym.baselines.checkpoint import (
    CheckpointPolicy,
    check_compatible,
    flatten_policy_state,
    load_checkpoint,
    params_digest,
    read_metadata,
    save_checkpoint,
    write_checkpoint,
)
from motivegym.baselines.policies import LearnedPolicy
from motivegym.baselines.train import build_learner
from motivegym.cli import main
from motivegym.experiments.evaluation import episode_keys, evaluate, make_policy, rollout_batch
from motivegym.reward_layers import reward_layer

#: (algo, env, sharing): IPPO on a continuous coopetition env, MAPPO with one network per agent,
#: IQL on a continuous env (discretised into bins), VDN and QMIX on a discrete env
CASES = [
    ("ippo", "TrustDilemma-v0", "shared"),
    ("mappo", "TrustDilemma-v0", "separate"),
    ("iql", "TrustDilemma-v0", "shared"),
    ("vdn", "PrisonersDilemma-v0", "shared"),
    ("qmix", "PrisonersDilemma-v0", "separate"),
]
BINS = 5


def policy_of(algo: str, env_id: str, sharing: str, train: bool, seed: int = 0):
    """``(learner, policy_state)``: trained for 512 env steps (4 envs × 32 steps × 4 updates), or (to keep the
    suite's compile time down: a round trip does not depend on training) fresh networks with random
    observation statistics, so that normalisation is not the identity."""
    from motivegym.baselines.normalization import RunningStats

    learner, _, _ = build_learner(algo, env_id, "private", 512, 4, 32, BINS, share_parameters=sharing == "shared")
    if train:
        runner, _ = jax.jit(learner.make_train())(jax.random.PRNGKey(seed), 0)
        return learner, {"networks": runner["networks"], "obs_stats": runner["obs_stats"]}
    mean_key, var_key, net_key = jax.random.split(jax.random.PRNGKey(seed), 3)
    shape = (learner.n_agents, learner.obs_size)
    stats = RunningStats(jax.random.normal(mean_key, shape), jax.random.uniform(var_key, shape, minval=0.5, maxval=2.0), np.float32(640.0))
    return learner, {"networks": jax.jit(learner.init_networks)(net_key), "obs_stats": stats}


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """``{algo: (learner, policy_state, path)}``: each case built once (IPPO trained) and saved."""
    directory = tmp_path_factory.mktemp("checkpoints")
    out = {}
    for algo, env_id, sharing in CASES:
        learner, state = policy_of(algo, env_id, sharing, train=algo == "ippo")
        path = save_checkpoint(directory / f"{algo}.safetensors", learner, state, env_id=env_id, reward="private", algo=algo,
                               sharing=sharing, seed=0, steps=512)  # fmt: skip
        out[algo] = (learner, state, path)
    return out


@pytest.mark.parametrize("algo, env_id, sharing", CASES)
def test_round_trip_gives_the_same_greedy_actions_and_evaluation(trained, algo, env_id, sharing):
    learner, state, path = trained[algo]
    checkpoint = load_checkpoint(path)
    metadata = checkpoint.metadata
    assert (metadata["env_id"], metadata["algo"], metadata["sharing"], metadata["reward"]) == (env_id, algo, sharing, "private")
    assert metadata["steps"] == 512 and metadata["seed"] == 0 and metadata["n_agents"] == learner.n_agents
    assert metadata["observation_size"] == learner.obs_size and metadata["config"]["total_steps"] == 512
    assert metadata["bins"] == (BINS if algo == "iql" else None)
    assert set(metadata["versions"]) == {"motivegym", "jax", "numpy", "safetensors"}
    # every tensor comes back bit for bit
    saved, loaded = flatten_policy_state(state), flatten_policy_state(checkpoint.policy_state)
    assert saved.keys() == loaded.keys() and all(np.array_equal(saved[k], loaded[k]) for k in saved)
    obs = 3.0 * jax.random.normal(jax.random.PRNGKey(1), (16, learner.n_agents, learner.obs_size))
    original = np.asarray(learner.greedy_actions(state, obs))
    np.testing.assert_array_equal(np.asarray(checkpoint.learner.greedy_actions(checkpoint.policy_state, obs)), original)
    if algo == "iql":  # the policy acts in the raw env: bin k of agent i is low_i + k/(bins − 1)·(high_i − low_i)
        high = np.asarray(learner.env.env.action_bounds(learner.env_params)[1])
        np.testing.assert_allclose(np.asarray(checkpoint.greedy_actions(obs)), original / (BINS - 1) * high, rtol=1e-6)
    # evaluating the checkpoint on the raw env = rolling the in-memory learner out on the same episode keys
    episodes, seed = 3, 5
    result = evaluate(env_id, f"checkpoint:{path}", "private", episodes, seed=seed, compare_to_oracle=False)
    horizon = learner.env.max_episode_steps(learner.env_params)
    layer = reward_layer("private")
    stats = rollout_batch(learner.env, learner.env_params, (layer,), LearnedPolicy(learner), horizon, state, episode_keys(seed, episodes))
    assert result.policy == f"checkpoint:{path}"
    assert result.welfare == pytest.approx(float(np.asarray(stats.payoff_returns).sum(-1).mean()), rel=1e-6)


def test_a_checkpoint_of_non_default_params_round_trips_and_needs_them(tmp_path):
    import motivegym
    from motivegym.baselines.normalization import running_stats
    from motivegym.baselines.ppo import MultiAgentPPO, PPOConfig

    env, params = motivegym.make_jax("PrisonersDilemma-v0", max_steps=20)
    learner = MultiAgentPPO(env, params, "private", PPOConfig(total_steps=128, num_envs=2, num_steps=16))
    state = {"networks": learner.init_networks(jax.random.PRNGKey(0)), "obs_stats": running_stats((2, learner.obs_size))}
    path = save_checkpoint(tmp_path / "pd20.safetensors", learner, state, env_id="PrisonersDilemma-v0", env_kwargs={"max_steps": 20},
                           reward="private", algo="ippo", seed=0, steps=0)  # fmt: skip
    assert read_metadata(path)["env_kwargs"] == {"max_steps": 20}
    assert load_checkpoint(path).learner.env_params.max_steps == 20
    assert set(CheckpointPolicy(str(path)).init(env, params)) == {"networks", "obs_stats"}  # the env it was trained on
    with pytest.raises(ValueError, match=re.escape("make_jax keywords {'max_steps': 20}") + ".*params_digest"):
        evaluate("PrisonersDilemma-v0", f"checkpoint:{path}", "private", 1, compare_to_oracle=False)


def test_motivegym_eval_of_a_checkpoint_alone_uses_its_env_and_keywords(tmp_path, capsys):
    import motivegym
    from motivegym.baselines.normalization import running_stats
    from motivegym.baselines.ppo import MultiAgentPPO, PPOConfig

    env, params = motivegym.make_jax("PrisonersDilemma-v0", max_steps=20)
    learner = MultiAgentPPO(env, params, "private", PPOConfig(total_steps=128, num_envs=2, num_steps=16))
    state = {"networks": learner.init_networks(jax.random.PRNGKey(0)), "obs_stats": running_stats((2, learner.obs_size))}
    path = save_checkpoint(tmp_path / "pd20.safetensors", learner, state, env_id="PrisonersDilemma-v0", env_kwargs={"max_steps": 20},
                           reward="private", algo="ippo", seed=0, steps=0)  # fmt: skip
    assert main(["eval", f"checkpoint:{path}", "--episodes", "2"]) == 0
    printed = capsys.readouterr().out
    assert "PrisonersDilemma-v0" in printed and "policy checkpoint:" in printed
    expected = evaluate("PrisonersDilemma-v0", f"checkpoint:{path}", "integrated", 2, max_steps=20).welfare
    assert f"{expected:.2f}" in printed  # the 20-step game, not the default horizon
    assert main(["eval", "PrisonersDilemma-v0"]) == 2  # a policy is needed unless the env argument is a checkpoint
    assert "missing POLICY" in capsys.readouterr().err
    assert main(["eval", f"checkpoint:{tmp_path / 'absent.safetensors'}"]) == 2
    assert "no checkpoint file" in capsys.readouterr().err


def test_another_env_or_other_params_are_refused_naming_both_sides(trained):
    import motivegym

    _, _, path = trained["ippo"]
    with pytest.raises(ValueError, match=r"trained on TrustDilemma-v0 .*evaluating it on PrisonersDilemma"):
        evaluate("PrisonersDilemma-v0", f"checkpoint:{path}", "private", 1, compare_to_oracle=False)
    # same env, a different endowment: the action bounds and the params digest differ
    with pytest.raises(ValueError, match=r"action_high=\[100.0, 100.0\].*params_digest=.*action_high=\[100.0, 50.0\]"):
        evaluate("TrustDilemma-v0", f"checkpoint:{path}", "private", 1, compare_to_oracle=False, endowments=(100.0, 50.0))
    metadata = read_metadata(path)
    _, pd_params = motivegym.make_jax("PrisonersDilemma-v0")
    with pytest.raises(ValueError, match="trained on TrustDilemma-v0; you are evaluating it on PrisonersDilemma-v0"):
        check_compatible(metadata, "PrisonersDilemma-v0", pd_params)
    _, params = motivegym.make_jax("TrustDilemma-v0", max_steps=50)
    with pytest.raises(ValueError, match=f"params_digest={metadata['params_digest']}.*params_digest={params_digest(params)}"):
        check_compatible(metadata, "TrustDilemma-v0", params)
    check_compatible(metadata, "TrustDilemma-v0", motivegym.make_jax("TrustDilemma-v0")[1])  # the training env passes


def test_params_digest_compares_values_not_types():
    import dataclasses

    import motivegym

    _, default = motivegym.make_jax("PrisonersDilemma-v0")
    as_float = dataclasses.replace(default, max_steps=np.float32(default.max_steps))
    assert params_digest(as_float) == params_digest(default)
    assert params_digest(motivegym.make_jax("PrisonersDilemma-v0", max_steps=int(default.max_steps) + 1)[1]) != params_digest(default)


def test_bad_files_are_refused_with_the_cause(trained, tmp_path):
    from safetensors.numpy import save_file

    _, _, path = trained["vdn"]
    with pytest.raises(ValueError, match="no checkpoint file at"):
        load_checkpoint(tmp_path / "missing.safetensors")
    with pytest.raises(ValueError, match="no checkpoint file at"):
        make_policy(f"checkpoint:{tmp_path / 'missing.safetensors'}")
    with pytest.raises(ValueError, match="needs a file"):
        make_policy("checkpoint:")
    garbage = tmp_path / "garbage.safetensors"
    garbage.write_bytes(b"\x00\x01 not a checkpoint" * 10)
    with pytest.raises(ValueError, match="not a readable safetensors checkpoint"):
        load_checkpoint(garbage)
    cut = tmp_path / "cut.safetensors"
    cut.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    with pytest.raises(ValueError, match="not a readable safetensors checkpoint"):
        load_checkpoint(cut)
    foreign = tmp_path / "foreign.safetensors"
    save_file({"weight": np.zeros((2, 3), np.float32)}, str(foreign), metadata={"format": "pt"})
    with pytest.raises(ValueError, match="not a motivegym checkpoint"):
        load_checkpoint(foreign)
    # metadata of one learner, tensors of another
    mixed = write_checkpoint(tmp_path / "mixed.safetensors", flatten_policy_state(trained["qmix"][1]), read_metadata(path))
    with pytest.raises(ValueError, match="do not match the network its metadata describes"):
        load_checkpoint(mixed)
    newer = write_checkpoint(tmp_path / "newer.safetensors", flatten_policy_state(trained["vdn"][1]),
                             {**read_metadata(path), "format_version": 99})  # fmt: skip
    with pytest.raises(ValueError, match="format 99.*upgrade motivegym"):
        load_checkpoint(newer)


def test_a_batched_policy_state_is_refused_when_saving(trained, tmp_path):
    learner, state, _ = trained["vdn"]
    batched = jax.tree.map(lambda x: np.stack([x, x]), state)
    with pytest.raises(ValueError, match="needs float32"):
        save_checkpoint(tmp_path / "b.safetensors", learner, batched, env_id="PrisonersDilemma-v0", reward="private", algo="vdn", seed=0, steps=0)
    assert not (tmp_path / "b.safetensors").exists()


def test_checkpoint_policies_are_hashable_and_equal_per_file(trained):
    _, _, path = trained["ippo"]
    assert CheckpointPolicy(str(path)) == CheckpointPolicy(str(path)) and len({CheckpointPolicy(str(path)), CheckpointPolicy(str(path))}) == 1


def test_motivegym_run_plays_the_checkpoint_on_its_own_env(trained, capsys):
    """Prisoner's Dilemma is deterministic under a greedy policy: the host rollout's welfare is the evaluation's."""
    _, _, path = trained["vdn"]
    assert main(["run", "--policy", f"checkpoint:{path}", "--steps", "50"]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("PrisonersDilemma-v0") and "episode ended at t=50" in printed
    welfare = float(re.search(r"welfare (-?[\d.]+)", printed).group(1))
    assert welfare == pytest.approx(evaluate("PrisonersDilemma-v0", f"checkpoint:{path}", "private", 1, compare_to_oracle=False).welfare, abs=0.01)
    assert main(["run", "TrustDilemma-v0", "--policy", f"checkpoint:{path}"]) == 2
    assert "trained on PrisonersDilemma-v0" in capsys.readouterr().err


def test_sb3_checkpoints_round_trip_through_model_save(tmp_path):
    pytest.importorskip("stable_baselines3")
    from motivegym.baselines import sb3_runners

    model, _ = sb3_runners.train_shared("ppo", "PrisonersDilemma-v0", "private", steps=256, num_envs=2, n_steps=64, batch_size=64,
                                        n_epochs=1, checkpoint=tmp_path / "shared")  # fmt: skip
    assert (tmp_path / "shared.zip").is_file()
    loaded, metadata = sb3_runners.load_sb3_checkpoint(tmp_path / "shared.zip", env_id="PrisonersDilemma-v0")
    assert metadata["algo"] == "ppo" and metadata["sharing"] == "shared" and metadata["steps"] == model.num_timesteps
    assert json.loads((tmp_path / "shared.motivegym.json").read_text())["env_id"] == "PrisonersDilemma-v0"
    np.testing.assert_array_equal(sb3_runners.evaluate(loaded, "PrisonersDilemma-v0", "private", 2),
                                  sb3_runners.evaluate(model, "PrisonersDilemma-v0", "private", 2))  # fmt: skip
    with pytest.raises(ValueError, match="trained on PrisonersDilemma-v0; you are evaluating it on TrustDilemma-v0"):
        sb3_runners.load_sb3_checkpoint(tmp_path / "shared", env_id="TrustDilemma-v0")
    with pytest.raises(ValueError, match="params_digest"):
        sb3_runners.load_sb3_checkpoint(tmp_path / "shared", env_id="PrisonersDilemma-v0", max_steps=10)


@pytest.mark.slow  # default suite time: the shared-model round trip above covers the format
def test_sb3_checkpoints_of_one_model_per_agent(tmp_path):
    pytest.importorskip("stable_baselines3")
    from motivegym.baselines import sb3_runners

    models = sb3_runners.train_independent("ppo", "PrisonersDilemma-v0", "private", steps=128, num_envs=2, rounds=1, n_steps=32,
                                           batch_size=32, n_epochs=1, checkpoint=tmp_path / "each")  # fmt: skip
    loaded, metadata = sb3_runners.load_sb3_checkpoint(tmp_path / "each.motivegym.json")
    assert metadata["files"] == ["each.agent0.zip", "each.agent1.zip"] and len(loaded) == 2
    np.testing.assert_array_equal(sb3_runners.evaluate(loaded, "PrisonersDilemma-v0", "private", 2),
                                  sb3_runners.evaluate(models, "PrisonersDilemma-v0", "private", 2))  # fmt: skip
    with pytest.raises(ValueError, match="no SB3 checkpoint metadata"):
        sb3_runners.load_sb3_checkpoint(tmp_path / "nothing")


def test_a_discretised_env_is_refused_because_the_policy_acts_in_the_raw_action_space(trained):
    learner, _, path = trained["iql"]
    with pytest.raises(ValueError, match="action_kind=continuous.*action_kind=discrete"):
        CheckpointPolicy(str(path)).init(learner.env, learner.env_params)
