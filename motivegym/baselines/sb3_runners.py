"""Stable-Baselines3 runners on motivegym envs (optional extra ``motivegym[sb3]``).

* :func:`train_shared`: one SB3 model for all agents (parameter sharing; each agent is a sub-env of
  :func:`motivegym.adapters.sb3.vec_env`, the agent one-hot in its observation).
* :func:`train_independent`: one SB3 model per agent. Learners take turns: while agent i learns for
  a chunk of steps, the other agents act with their current (stochastic) policies; every agent sees
  only its own observation and its own reward-layer reward.
* :func:`evaluate`: mean per-agent payoff return of deterministic policies.

Continuous and discrete envs both work (the adapter's ``Box(-1, 1)`` or ``Discrete(k)`` action space);
``sac``/``td3`` need a continuous env and ``dqn`` a discrete one (SB3 refuses the other kind).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from motivegym.adapters.sb3 import AgentsVecEnv

ALGORITHMS = ("ppo", "a2c", "sac", "td3", "dqn")


def algorithm_class(name: str):
    import stable_baselines3

    from motivegym.core.errors import check_names

    check_names("algorithm", [name], ALGORITHMS, "sb3 runner")
    return getattr(stable_baselines3, name.upper())


def train_shared(algo: str, env_id: str, reward: str = "integrated", steps: int = 10_000, seed: int = 0, num_envs: int = 4, **algo_kwargs: Any):
    """Train one parameter-shared SB3 model; returns ``(model, vec_env)``."""
    env = AgentsVecEnv(env_id, num_envs=num_envs, reward=reward)
    env.seed(seed)
    model = algorithm_class(algo)("MlpPolicy", env, seed=seed, device="cpu", verbose=0, **algo_kwargs)
    model.learn(total_timesteps=int(steps))
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
                      num_envs: int = 4, rounds: int = 4, **algo_kwargs: Any) -> list:
    """One SB3 model per agent, trained in ``rounds`` turns of ``steps / rounds`` each."""
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
    return models


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
