"""Stable-Baselines3 runners on motivegym envs (optional extra ``motivegym[sb3]``).

* :func:`train_shared`: one SB3 model for all agents (parameter sharing; each agent is a sub-env of
  :func:`motivegym.adapters.sb3.vec_env`, the agent one-hot in its observation).
* :func:`train_independent`: one SB3 model per agent. Learners take turns: while agent i learns for
  a chunk of steps, the other agents act with their current (stochastic) policies; every agent sees
  only its own observation and its own reward-layer reward.
* :func:`evaluate`: mean per-agent payoff return of deterministic policies.
* :func:`save_sb3_checkpoint` / :func:`load_sb3_checkpoint`: checkpoints through SB3's own ``model.save``
  (``BASE.zip`` for a shared model, ``BASE.agent<i>.zip`` per agent) plus a sidecar ``BASE.motivegym.json``
  with the same metadata fields as the JAX baselines' checkpoints (``motivegym.baselines.checkpoint``:
  env id and keywords, params digest, agents, observation size, action space, reward, algorithm, seed, steps,
  versions); loading for an env checks it is the training env (``check_compatible``). SB3 checkpoints are
  evaluated with :func:`evaluate` (``checkpoint:PATH`` policies of ``motivegym eval``/``run`` are the JAX ones).

Continuous and discrete envs both work (the adapter's ``Box(-1, 1)`` or ``Discrete(k)`` action space);
``sac``/``td3`` need a continuous env and ``dqn`` a discrete one (SB3 refuses the other kind).
"""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any

import numpy as np

from motivegym.adapters.sb3 import AgentsVecEnv

ALGORITHMS = ("ppo", "a2c", "sac", "td3", "dqn")


def algorithm_class(name: str):
    import stable_baselines3

    from motivegym.core.errors import check_names

    check_names("algorithm", [name], ALGORITHMS, "sb3 runner")
    return getattr(stable_baselines3, name.upper())


def train_shared(algo: str, env_id: str, reward: str = "integrated", steps: int = 10_000, seed: int = 0, num_envs: int = 4,
                 checkpoint: str | Path | None = None, **algo_kwargs: Any):
    """Train one parameter-shared SB3 model; returns ``(model, vec_env)``. With ``checkpoint`` (a base path) the
    trained model is saved there (:func:`save_sb3_checkpoint`)."""
    env = AgentsVecEnv(env_id, num_envs=num_envs, reward=reward)
    env.seed(seed)
    model = algorithm_class(algo)("MlpPolicy", env, seed=seed, device="cpu", verbose=0, **algo_kwargs)
    model.learn(total_timesteps=int(steps))
    if checkpoint is not None:
        save_sb3_checkpoint(model, checkpoint, env_id=env_id, reward=reward, algo=algo, seed=seed)
    return model, env


class SingleAgentVecEnv(AgentsVecEnv):
    """The view of agent ``agent`` on batched games; the other agents act with ``partners`` policies."""

    def __init__(self, env_id: str, agent: int, num_envs: int, reward, **env_kwargs):
        super().__init__(env_id, num_envs=num_envs, reward=reward, **env_kwargs)
        self.agent = agent
        self.num_envs = self.num_games  # one sub-env per game: this agent's seat
        self.partners: list = [None] * self.n_agents
        self._all_obs: np.ndarray | None = None
        self._own_rows = np.arange(self.num_games) * self.n_agents + agent

    def reset(self) -> np.ndarray:
        self._all_obs = super().reset()
        return self._all_obs[self._own_rows]

    def step_async(self, actions: np.ndarray) -> None:
        joint = np.zeros((self.num_games, self.n_agents), np.int64 if self.discrete else np.float32)
        per_agent = self._all_obs.reshape(self.num_games, self.n_agents, -1)
        for j in range(self.n_agents):
            if j == self.agent:
                joint[:, j] = np.asarray(actions).reshape(-1)
            elif self.partners[j] is not None:
                joint[:, j] = self.partners[j].predict(per_agent[:, j], deterministic=False)[0].reshape(-1)
            else:
                joint[:, j] = self._random_actions()
        super().step_async(joint)

    def _random_actions(self) -> np.ndarray:
        """Uniform actions of a partner without a policy yet, one per game."""
        if self.discrete:
            return self._rng.integers(0, self.action_space.n, self.num_games)
        return self._rng.uniform(-1, 1, self.num_games)

    def step_wait(self):
        obs, rewards, dones, infos = super().step_wait()
        self._all_obs = obs
        rows = self._own_rows
        return obs[rows], rewards[rows], dones[rows], [infos[k] for k in rows]


def train_independent(algo: str, env_id: str, reward: str = "integrated", steps: int = 10_000, seed: int = 0,
                      num_envs: int = 4, rounds: int = 4, checkpoint: str | Path | None = None, **algo_kwargs: Any) -> list:
    """One SB3 model per agent, trained in ``rounds`` turns of ``steps / rounds`` each (saved to the base path
    ``checkpoint`` if given: :func:`save_sb3_checkpoint`)."""
    cls = algorithm_class(algo)
    probe = AgentsVecEnv(env_id, num_envs=1, reward=reward)
    views = [SingleAgentVecEnv(env_id, i, num_envs, reward) for i in range(probe.n_agents)]
    models = []
    for i, view in enumerate(views):
        view.seed(seed + i)
        models.append(cls("MlpPolicy", view, seed=seed + i, device="cpu", verbose=0, **algo_kwargs))
    for view in views:
        view.partners = models
    chunk = max(1, int(steps) // max(1, rounds))
    for _ in range(rounds):
        for model in models:
            model.learn(total_timesteps=chunk, reset_num_timesteps=False)
    if checkpoint is not None:
        save_sb3_checkpoint(models, checkpoint, env_id=env_id, reward=reward, algo=algo, seed=seed)
    return models


# ----- checkpoints -----
SIDECAR_SUFFIX = ".motivegym.json"


def checkpoint_base(path: str | Path) -> Path:
    """``BASE`` of ``BASE``, ``BASE.zip``, ``BASE.agent<i>.zip`` or ``BASE.motivegym.json``."""
    text = str(path)
    for suffix in (SIDECAR_SUFFIX, ".zip"):
        if text.endswith(suffix):
            text = text[: -len(suffix)]
            break
    head, dot, tail = text.rpartition(".agent")
    return Path(head if dot and tail.isdigit() else text)


def save_sb3_checkpoint(
    models, path: str | Path, *, env_id: str, reward: str, algo: str, seed: int, env_kwargs: dict | None = None, steps: int | None = None
) -> Path:
    """Save one shared SB3 model (``BASE.zip``) or a list with one per agent (``BASE.agent<i>.zip``) with SB3's
    ``model.save``, and the sidecar ``BASE.motivegym.json``; returns the sidecar's path.

    ``steps``: training steps to record (default: SB3's ``num_timesteps`` summed over the models; a shared
    model counts one step per agent and game).
    """
    import stable_baselines3

    import motivegym
    from motivegym.baselines.checkpoint import FORMAT_VERSION, env_signature, json_safe, versions
    from motivegym.core.errors import check_names

    check_names("algorithm", [algo], ALGORITHMS, "save_sb3_checkpoint")
    base = checkpoint_base(path)
    base.parent.mkdir(parents=True, exist_ok=True)
    shared = not isinstance(models, list | tuple)
    files = [f"{base.name}.zip"] if shared else [f"{base.name}.agent{i}.zip" for i in range(len(models))]
    for model, name in zip([models] if shared else models, files):
        model.save(base.parent / name)
    spec = motivegym.get_spec(env_id)
    env, params = motivegym.make_jax(spec.id, **(env_kwargs or {}))
    timesteps = [int(m.num_timesteps) for m in ([models] if shared else models)]
    metadata = {
        "format_version": FORMAT_VERSION,
        "kind": "stable-baselines3",
        "env_id": spec.id,
        "env_kwargs": json_safe(dict(env_kwargs or {})),
        **env_signature(env, params),
        "reward": str(reward),
        "algo": algo,
        "sharing": "shared" if shared else "separate",
        "files": files,
        "seed": int(seed),
        "steps": int(sum(timesteps) if steps is None else steps),
        "sb3_num_timesteps": timesteps,
        "versions": {**versions(), "stable_baselines3": stable_baselines3.__version__},
        "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
    }
    sidecar = base.with_name(base.name + SIDECAR_SUFFIX)
    tmp = sidecar.with_name(f".{sidecar.name}.tmp")
    tmp.write_text(json.dumps(metadata, indent=1, sort_keys=True))
    tmp.replace(sidecar)
    return sidecar


def load_sb3_checkpoint(path: str | Path, env_id: str | None = None, **env_kwargs: Any) -> tuple[Any, dict]:
    """``(models, metadata)`` of a checkpoint written by :func:`save_sb3_checkpoint` (one model, or a list with
    one per agent). With ``env_id`` it must be the env (and ``env_kwargs`` the params) it was trained on, else
    ``ValueError`` naming both sides."""
    import motivegym
    from motivegym.baselines.checkpoint import FORMAT_VERSION, check_compatible

    base = checkpoint_base(path)
    sidecar = base.with_name(base.name + SIDECAR_SUFFIX)
    if not sidecar.is_file():
        raise ValueError(f"no SB3 checkpoint metadata at {sidecar} (save_sb3_checkpoint writes it next to the model zips)")
    try:
        metadata = json.loads(sidecar.read_text())
        files, algo, version = metadata["files"], metadata["algo"], int(metadata["format_version"])
    except (ValueError, KeyError, TypeError) as error:
        raise ValueError(f"{sidecar}: damaged SB3 checkpoint metadata ({type(error).__name__}: {error})") from None
    if version > FORMAT_VERSION:
        raise ValueError(f"{sidecar} has checkpoint format {version}; this motivegym reads formats up to {FORMAT_VERSION}")
    if env_id is not None:
        check_compatible(metadata, env_id, motivegym.make_jax(env_id, **env_kwargs)[1], source=f"SB3 checkpoint {base}")
    missing = [name for name in files if not (base.parent / name).is_file()]
    if missing:
        raise ValueError(f"SB3 checkpoint {base}: model file(s) {missing} are missing")
    cls = algorithm_class(algo)
    models = [cls.load(base.parent / name, device="cpu") for name in files]
    return (models[0] if metadata["sharing"] == "shared" else models), metadata


def evaluate(models, env_id: str, reward: str = "integrated", episodes: int = 8, seed: int = 123) -> np.ndarray:
    """Mean per-agent payoff return over ``episodes`` of deterministic play.

    ``models`` is one parameter-shared model or a list with one model per agent.
    """
    env = AgentsVecEnv(env_id, num_envs=episodes, reward=reward)
    env.seed(seed)
    obs = env.reset()
    n = env.n_agents
    totals = np.zeros((episodes, n))
    alive = np.ones(episodes, bool)
    while alive.any():
        if isinstance(models, list):
            per_agent = obs.reshape(episodes, n, -1)
            actions = np.stack([models[i].predict(per_agent[:, i], deterministic=True)[0].reshape(-1) for i in range(n)], axis=1)
        else:
            actions = models.predict(obs, deterministic=True)[0]
        obs, _, dones, infos = env.step(np.asarray(actions).reshape(-1, 1))
        payoffs = np.array([info["payoff"] for info in infos]).reshape(episodes, n)
        totals += payoffs * alive[:, None]
        alive &= ~dones.reshape(episodes, n)[:, 0]
    return totals.mean(axis=0)
