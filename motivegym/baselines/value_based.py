"""Value-based multi-agent baselines in JAX: IQL, VDN and QMIX, PureJaxRL style.

* **IQL** (independent Q-learning, Tan 1993): agent ``i`` learns ``Q_i(o_i, a_i)`` from its own
  reward ``r_i``: ``y_i = r_i + γ(1 − d) max_a' Q̄_i(o'_i, a')``.
* **VDN** (Sunehag et al. 2018): ``Q_tot = Σ_i Q_i(o_i, a_i)`` learnt from the team reward,
  ``y = r_team + γ(1 − d) Σ_i max_a' Q̄_i(o'_i, a')``.
* **QMIX** (Rashid et al. 2018): ``Q_tot = f_s(Q_1, …, Q_n)``, a mixing network whose weights are
  produced by hypernetworks of the (normalised) global state and made non-negative with ``|·|``,
  so ``∂Q_tot/∂Q_i ≥ 0`` (Eq. 5); ``y = r_team + γ(1 − d) f̄_{s'}(max Q̄_1, …, max Q̄_n)``.

``r_i`` is the env's reward-layer output (applied inside the scan, as in ``ppo.py``; divided by the
running std of the discounted return with ``normalize_rewards``) and ``r_team`` its mean over
agents (``team_reward="mean"``, default) or sum (``"sum"``). ``d`` is
**termination** only: the replay buffer stores the true final observation, so time limits
bootstrap. ``double_q`` selects ``a'`` with the online network and evaluates it with the target.

The whole run — ε-greedy acting in vmapped envs with same-step auto-reset, a fixed-size ring
replay buffer in the carry, one gradient step every ``train_interval`` vectorised steps (optax
Adam), target updates (hard copy every ``target_update_interval`` gradient steps, or Polyak with
``tau < 1``) — is one ``lax.scan`` inside one ``jax.jit``; ``make_train`` returns
``train(key, reward_index)`` which vmaps over seeds (and reward layers, as in ``ppo.py``).
Needs discrete actions: wrap continuous envs in ``motivegym.envs.wrappers.DiscretizedActions``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import optax

from motivegym.baselines.episodes import (
    accumulate_episodes,
    episode_accumulators,
    finished_episode_metrics,
    learner_batch_step,
    staged_scan,
)
from motivegym.baselines.networks import agent_conditioned_mlp, mlp_apply, mlp_init
from motivegym.baselines.normalization import RunningStats, normalize, running_stats, update_stats
from motivegym.core.env import FunctionalEnv, Transition
from motivegym.core.errors import check_names
from motivegym.core.pytree import pytree_dataclass
from motivegym.reward_layers import LayerChoice, LayerSpec, RewardLayer, reward_layer
from motivegym.reward_layers.base import refuse_rollout_fitting

Array = jax.Array

ALGORITHMS = ("iql", "vdn", "qmix")
LOSSES = ("huber", "mse")
TEAM_REWARDS = ("mean", "sum")


@dataclasses.dataclass(frozen=True)
class ValueConfig:
    """Hyper-parameters (static). Step counts are env steps summed over the parallel envs unless named otherwise.

    One logged *update* (a row of the learning curve) is ``num_envs × num_steps`` env steps.
    """

    algorithm: str = "iql"
    total_steps: int = 100_000
    num_envs: int = 16
    num_steps: int = 128
    buffer_size: int = 20_000  # transitions of one env each
    batch_size: int = 128
    learning_starts: int = 1_000
    train_interval: int = 1  # vectorised env steps between gradient steps
    learning_rate: float = 5e-4
    gamma: float = 0.99
    epsilon_start: float = 1.0
    epsilon_end: float = 0.05
    exploration_fraction: float = 0.5  # of total_steps spent decaying ε linearly
    target_update_interval: int = 100  # gradient steps between hard copies (tau = 1)
    tau: float = 1.0  # 1: hard copy; < 1: Polyak θ̄ ← τθ + (1 − τ)θ̄ after every gradient step
    double_q: bool = True
    loss: str = "huber"
    max_grad_norm: float = 10.0
    hidden_sizes: tuple[int, ...] = (64, 64)
    share_parameters: bool = True
    mixing_embed: int = 32
    team_reward: str = "mean"
    normalize_observations: bool = True
    normalize_rewards: bool = True

    def __post_init__(self):
        check_names("algorithm", [self.algorithm], ALGORITHMS, "ValueConfig")
        check_names("loss", [self.loss], LOSSES, "ValueConfig")
        check_names("team reward", [self.team_reward], TEAM_REWARDS, "ValueConfig")
        if self.buffer_size < self.num_envs:
            raise ValueError(f"buffer_size ({self.buffer_size}) must be >= num_envs ({self.num_envs})")
        if not 0.0 < self.tau <= 1.0:
            raise ValueError(f"tau must be in (0, 1], got {self.tau}")
        for name in ("num_envs", "num_steps", "batch_size", "train_interval", "target_update_interval"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")

    @property
    def num_updates(self) -> int:
        """Logged updates (learning-curve rows) of ``num_envs × num_steps`` env steps each."""
        return max(1, self.total_steps // (self.num_envs * self.num_steps))

    @property
    def exploration_steps(self) -> float:
        return self.exploration_fraction * self.num_updates * self.num_envs * self.num_steps


# ----- exploration -----
def epsilon_schedule(env_steps: Array, start: float, end: float, duration: float) -> Array:
    """``ε(t) = start + (end − start)·min(t / duration, 1)``: linear decay, then constant."""
    fraction = jnp.clip(jnp.asarray(env_steps, jnp.float32) / max(duration, 1.0), 0.0, 1.0)
    return start + (end - start) * fraction


def epsilon_greedy(key: Array, q_values: Array, epsilon: Array) -> Array:
    """Per row of ``q_values [..., A]``: a uniform action with probability ε, else the argmax."""
    explore_key, action_key = jax.random.split(key)
    batch_shape = q_values.shape[:-1]
    uniform = jax.random.randint(action_key, batch_shape, 0, q_values.shape[-1])
    explore = jax.random.uniform(explore_key, batch_shape) < epsilon
    return jnp.where(explore, uniform, jnp.argmax(q_values, axis=-1))


# ----- TD targets (pure, batch-first) -----
def taken_action_values(q_values: Array, actions: Array) -> Array:
    """``Q(o, a_taken)``: ``q_values [..., A]`` gathered at int ``actions [...]``."""
    return jnp.take_along_axis(q_values, actions[..., None].astype(jnp.int32), axis=-1)[..., 0]


def next_action_values(next_q_online: Array, next_q_target: Array, double_q: bool) -> Array:
    """``max_a' Q̄(o', a')``, or with double-Q ``Q̄(o', argmax_a' Q(o', a'))`` (van Hasselt et al. 2016)."""
    if double_q:
        return taken_action_values(next_q_target, jnp.argmax(next_q_online, axis=-1))
    return jnp.max(next_q_target, axis=-1)


def td_targets(rewards: Array, terminated: Array, next_values: Array, gamma: float) -> Array:
    """``y = r + γ(1 − d)·v'`` (``terminated`` broadcast against ``rewards``)."""
    return rewards + gamma * (1.0 - terminated.astype(jnp.float32)) * next_values


def iql_targets(rewards: Array, terminated: Array, next_q_online: Array, next_q_target: Array, gamma: float, double_q: bool) -> Array:
    """Per-agent targets ``[B, n]`` from rewards ``[B, n]``, ``terminated [B]``, next Q-values ``[B, n, A]``."""
    return td_targets(rewards, terminated[:, None], next_action_values(next_q_online, next_q_target, double_q), gamma)


def vdn_targets(team_rewards: Array, terminated: Array, next_q_online: Array, next_q_target: Array, gamma: float, double_q: bool) -> Array:
    """Team targets ``[B]``: ``r_team + γ(1 − d) Σ_i v'_i`` (Sunehag et al. 2018, Eq. 1)."""
    next_values = next_action_values(next_q_online, next_q_target, double_q)
    return td_targets(team_rewards, terminated, jnp.sum(next_values, axis=-1), gamma)


def qmix_targets(
    team_rewards: Array,
    terminated: Array,
    next_q_online: Array,
    next_q_target: Array,
    target_mixer: dict,
    next_states: Array,
    gamma: float,
    double_q: bool,
) -> Array:
    """Team targets ``[B]``: ``r_team + γ(1 − d) f̄_{s'}(v'_1, …, v'_n)`` through the target mixer."""
    next_values = next_action_values(next_q_online, next_q_target, double_q)
    return td_targets(team_rewards, terminated, qmix_mix(target_mixer, next_values, next_states), gamma)


def team_reward(rewards: Array, kind: str) -> Array:
    """The shared reward of VDN/QMIX from per-agent rewards ``[..., n]``: their mean or sum."""
    return jnp.mean(rewards, axis=-1) if kind == "mean" else jnp.sum(rewards, axis=-1)


def td_loss(prediction: Array, target: Array, kind: str) -> Array:
    """Mean Huber loss (δ = 1) or mean squared error of the TD errors."""
    if kind == "huber":
        return jnp.mean(optax.huber_loss(prediction, target, delta=1.0))
    return jnp.mean((prediction - target) ** 2)


# ----- QMIX mixing network -----
def mixer_init(key: Array, n_agents: int, state_size: int, embed: int, hidden: int = 64) -> dict:
    """Hypernetworks of the QMIX mixer: 2-layer tanh MLPs of the state for ``W1, b1, W2`` and ``V``.

    (The paper's single linear hypernetworks are unbounded in the state; the bounded hidden layer
    keeps ``|W|`` moderate under normalised states. Output scale ``1/√embed`` starts ``Q_tot`` near
    a small positive combination of the ``Q_i``.)
    """
    w1_key, b1_key, w2_key, v_key = jax.random.split(key, 4)
    scale = 1.0 / float(embed) ** 0.5
    return {
        "w1": mlp_init(w1_key, (state_size, hidden, n_agents * embed), scale),
        "b1": mlp_init(b1_key, (state_size, hidden, embed), scale),
        "w2": mlp_init(w2_key, (state_size, hidden, embed), scale),
        "v": mlp_init(v_key, (state_size, hidden, 1), 1.0),
    }


def qmix_mix(mixer: dict, agent_values: Array, states: Array) -> Array:
    """``Q_tot = elu(Q·|W1(s)| + b1(s))·|W2(s)| + V(s)`` for ``agent_values [..., n]``, ``states [..., S]``.

    ``|·|`` makes every mixing weight non-negative, so ``∂Q_tot/∂Q_i ≥ 0`` (Rashid et al. 2018, Eq. 5).
    """
    n = agent_values.shape[-1]
    w1 = jnp.abs(mlp_apply(mixer["w1"], states))
    w1 = w1.reshape(states.shape[:-1] + (n, w1.shape[-1] // n))
    hidden = jax.nn.elu(jnp.einsum("...n,...ne->...e", agent_values, w1) + mlp_apply(mixer["b1"], states))
    w2 = jnp.abs(mlp_apply(mixer["w2"], states))
    return jnp.sum(hidden * w2, axis=-1) + mlp_apply(mixer["v"], states)[..., 0]


# ----- replay buffer -----
@pytree_dataclass
class ReplayBuffer:
    """A ring buffer: ``data`` leaves have a leading ``capacity`` axis; ``position`` is the next slot."""

    data: dict
    position: Array
    size: Array


def replay_init(example: dict, capacity: int) -> ReplayBuffer:
    """An empty buffer for transitions shaped like ``example`` (one transition, no batch axis)."""
    data = jax.tree.map(lambda x: jnp.zeros((capacity,) + jnp.shape(x), jnp.asarray(x).dtype), example)
    return ReplayBuffer(data, jnp.int32(0), jnp.int32(0))


def replay_add(buffer: ReplayBuffer, batch: dict) -> ReplayBuffer:
    """Write a batch (leading axis ``k ≤ capacity``) at ``position, position + 1, …`` modulo the capacity."""
    capacity = jax.tree.leaves(buffer.data)[0].shape[0]
    count = jax.tree.leaves(batch)[0].shape[0]
    slots = (buffer.position + jnp.arange(count)) % capacity
    data = jax.tree.map(lambda stored, new: stored.at[slots].set(new), buffer.data, batch)
    return ReplayBuffer(data, (buffer.position + count) % capacity, jnp.minimum(buffer.size + count, capacity))


def replay_sample(buffer: ReplayBuffer, key: Array, batch_size: int) -> dict:
    """``batch_size`` transitions drawn uniformly (with replacement) from the filled part."""
    index = jax.random.randint(key, (batch_size,), 0, jnp.maximum(buffer.size, 1))
    return jax.tree.map(lambda stored: stored[index], buffer.data)


def update_target(online: Any, target: Any, gradient_steps: Array, tau: float, interval: int) -> Any:
    """Hard copy when ``gradient_steps % interval == 0`` (``tau = 1``), else Polyak ``τθ + (1 − τ)θ̄``."""
    if tau >= 1.0:
        return optax.periodic_update(online, target, gradient_steps, interval)
    return optax.incremental_update(online, target, tau)


class MultiAgentQLearning:
    """Q-networks, mixer and the jitted training program of IQL / VDN / QMIX for one discrete env."""

    def __init__(self, env: FunctionalEnv, env_params: Any, rewards: RewardLayer | str | tuple, config: ValueConfig):
        if env.action_kind != "discrete":
            raise ValueError(
                f"{config.algorithm.upper()} needs discrete actions, {env.name} has action_kind={env.action_kind!r}; "
                "wrap it in motivegym.envs.wrappers.DiscretizedActions"
            )
        self.env, self.env_params, self.config = env, env_params, config
        layers = rewards if isinstance(rewards, tuple) else (rewards,)
        self.layer = LayerChoice(tuple(reward_layer(layer) for layer in layers))
        for candidate in self.layer.layers:
            refuse_rollout_fitting(candidate, config.algorithm.upper())
        self.n_agents = env.n_agents(env_params)
        self.obs_size = env.observation_size(env_params)
        self.state_size = env.global_state_size(env_params)
        self.num_actions = env.num_actions(env_params)

    # ----- networks -----
    def init_networks(self, key: Array) -> dict:
        cfg = self.config
        q_key, mixer_key = jax.random.split(key)
        extra = self.n_agents if cfg.share_parameters else 0
        sizes = (self.obs_size + extra, *cfg.hidden_sizes, self.num_actions)
        if cfg.share_parameters:
            q = mlp_init(q_key, sizes, 1.0)
        else:
            q = jax.vmap(lambda k: mlp_init(k, sizes, 1.0))(jax.random.split(q_key, self.n_agents))
        networks = {"q": q}
        if cfg.algorithm == "qmix":
            networks["mixer"] = mixer_init(mixer_key, self.n_agents, self.state_size, cfg.mixing_embed)
        return networks

    def q_values(self, networks: dict, obs: Array) -> Array:
        """``[..., n, A]`` from (normalised) observations ``[..., n, d]``: shared net with agent one-hot, or one net per agent."""
        if self.config.share_parameters:
            return agent_conditioned_mlp(networks["q"], obs)
        per_agent = jax.vmap(mlp_apply)(networks["q"], jnp.moveaxis(obs, -2, 0))
        return jnp.moveaxis(per_agent, 0, -2)

    def observation_input(self, obs_stats: RunningStats, obs: Array) -> Array:
        return normalize(obs_stats, obs) if self.config.normalize_observations else obs

    def greedy_actions(self, policy_state: dict, obs: Array) -> Array:
        """Each agent's argmax-Q action from ``{"networks", "obs_stats"}`` of a runner."""
        return jnp.argmax(self.q_values(policy_state["networks"], self.observation_input(policy_state["obs_stats"], obs)), axis=-1)

    def state_input(self, state_stats: RunningStats, states: Array) -> Array:
        return normalize(state_stats, states) if self.config.normalize_observations else states

    def loss(self, networks: dict, target_networks: dict, batch: dict, runner: dict) -> Array:
        """TD loss of one replay batch (rewards scaled by the running return std when enabled)."""
        cfg = self.config
        obs = self.observation_input(runner["obs_stats"], batch["obs"])
        next_obs = self.observation_input(runner["obs_stats"], batch["next_obs"])
        taken = taken_action_values(self.q_values(networks, obs), batch["actions"])
        next_online = jax.lax.stop_gradient(self.q_values(networks, next_obs))
        next_target = self.q_values(target_networks, next_obs)
        rewards = batch["rewards"] / reward_scale(runner["return_stats"], cfg.normalize_rewards)
        if cfg.algorithm == "iql":
            prediction = taken
            target = iql_targets(rewards, batch["terminated"], next_online, next_target, cfg.gamma, cfg.double_q)
        elif cfg.algorithm == "vdn":
            prediction = jnp.sum(taken, axis=-1)
            target = vdn_targets(team_reward(rewards, cfg.team_reward), batch["terminated"], next_online, next_target, cfg.gamma, cfg.double_q)
        else:
            states = self.state_input(runner["state_stats"], batch["state"])
            next_states = self.state_input(runner["state_stats"], batch["next_state"])
            prediction = qmix_mix(networks["mixer"], taken, states)
            target = qmix_targets(
                team_reward(rewards, cfg.team_reward), batch["terminated"], next_online, next_target,
                target_networks["mixer"], next_states, cfg.gamma, cfg.double_q,
            )
        return td_loss(prediction, jax.lax.stop_gradient(target), cfg.loss)

    # ----- env step with same-step auto-reset (the stored next observation is the final one) -----
    def env_step(self, keys, states, actions):
        return learner_batch_step(self.env, self.env_params, keys, states, actions)

    # ----- training program -----
    def make_stages(self):
        """``(train, init, run)`` as in ``ppo.py``: ``train(key, reward_index) = run(init(key, reward_index), num_updates)``."""
        cfg, env, params = self.config, self.env, self.env_params
        n, num_envs = self.n_agents, cfg.num_envs
        optimizer = optax.chain(optax.clip_by_global_norm(cfg.max_grad_norm), optax.adam(cfg.learning_rate))
        layer_spec = LayerSpec(n_agents=n, obs_size=self.obs_size, action_size=self.num_actions)
        batched_reset = jax.vmap(env.reset, in_axes=(0, None))
        batched_step = self.env_step
        batched_layer = jax.vmap(self.layer.apply)
        min_fill = max(cfg.learning_starts, cfg.batch_size)

        def init(key: Array, reward_index: Array) -> dict:
            key, net_key, env_key, layer_key = jax.random.split(key, 4)
            networks = self.init_networks(net_key)
            env_states, obs = batched_reset(jax.random.split(env_key, num_envs), params)
            global_states = jax.vmap(env.global_state, in_axes=(0, None))(env_states, params)
            layer_states = jax.vmap(lambda k: LayerChoice.with_index(self.layer.init(k, layer_spec), reward_index))(
                jax.random.split(layer_key, num_envs)
            )
            example = {
                "obs": obs[0],
                "actions": jnp.zeros(n, jnp.int32),
                "rewards": jnp.zeros(n, jnp.float32),
                "next_obs": obs[0],
                "terminated": jnp.bool_(False),
                "state": global_states[0],
                "next_state": global_states[0],
            }
            return {
                "networks": networks,
                "target_networks": networks,
                "opt_state": optimizer.init(networks),
                "buffer": replay_init(example, cfg.buffer_size),
                "env_states": env_states,
                "obs": obs,
                "global_states": global_states,
                "layer_states": layer_states,
                "obs_stats": update_stats(running_stats((n, self.obs_size)), obs),
                "state_stats": update_stats(running_stats((self.state_size,)), global_states),
                "return_stats": running_stats((n,)),
                **episode_accumulators(num_envs, n),
                "vector_steps": jnp.int32(0),
                "gradient_steps": jnp.int32(0),
                "key": key,
            }

        def learn(runner: dict, key: Array) -> tuple[dict, Array]:
            batch = replay_sample(runner["buffer"], key, cfg.batch_size)
            loss, grads = jax.value_and_grad(self.loss)(runner["networks"], runner["target_networks"], batch, runner)
            updates, opt_state = optimizer.update(grads, runner["opt_state"], runner["networks"])
            networks = optax.apply_updates(runner["networks"], updates)
            gradient_steps = runner["gradient_steps"] + 1
            target = update_target(networks, runner["target_networks"], gradient_steps, cfg.tau, cfg.target_update_interval)
            return {**runner, "networks": networks, "target_networks": target, "opt_state": opt_state, "gradient_steps": gradient_steps}, loss

        def skip(runner: dict, key: Array) -> tuple[dict, Array]:
            return runner, jnp.float32(jnp.nan)

        def vector_step(runner, _):
            key, explore_key, step_key, learn_key = jax.random.split(runner["key"], 4)
            epsilon = epsilon_schedule(runner["vector_steps"] * num_envs, cfg.epsilon_start, cfg.epsilon_end, cfg.exploration_steps)
            obs = runner["obs"]
            q = self.q_values(runner["networks"], self.observation_input(runner["obs_stats"], obs))
            actions = epsilon_greedy(explore_key, q, epsilon)
            env_states, next_obs, next_global, payoffs, final_obs, final_global, info = batched_step(
                jax.random.split(step_key, num_envs), runner["env_states"], actions
            )
            transition = Transition(obs, actions, payoffs, final_obs, info["terminated"], info["truncated"], info)
            layer_states, rewards, _ = batched_layer(runner["layer_states"], transition)
            done = info["terminated"] | info["truncated"]
            buffer = replay_add(runner["buffer"], {
                "obs": obs, "actions": actions, "rewards": rewards, "next_obs": final_obs,
                "terminated": info["terminated"], "state": runner["global_states"], "next_state": final_global,
            })
            accumulators, finished, discounted = accumulate_episodes(runner, payoffs, rewards, done, cfg.gamma)
            runner = {
                **runner,
                "buffer": buffer,
                "env_states": env_states,
                "obs": next_obs,
                "global_states": next_global,
                "layer_states": layer_states,
                "obs_stats": update_stats(runner["obs_stats"], next_obs),
                "state_stats": update_stats(runner["state_stats"], next_global),
                "return_stats": update_stats(runner["return_stats"], discounted),
                **accumulators,
                "vector_steps": runner["vector_steps"] + 1,
                "key": key,
            }
            ready = (buffer.size >= min_fill) & (runner["vector_steps"] % cfg.train_interval == 0)
            runner, loss = jax.lax.cond(ready, learn, skip, runner, learn_key)
            record = {
                "done": done,
                **finished,
                "loss": loss,
                "q_taken": jnp.mean(taken_action_values(q, actions)),
                "epsilon": epsilon,
            }
            return runner, record

        def update(runner, _):
            runner, records = jax.lax.scan(vector_step, runner, None, length=cfg.num_steps)
            learned = jnp.isfinite(records["loss"])
            metrics = {
                **finished_episode_metrics(records),
                "loss": jnp.sum(jnp.where(learned, records["loss"], 0.0)) / jnp.maximum(jnp.sum(learned), 1),
                "q_taken": jnp.mean(records["q_taken"]),
                "epsilon": records["epsilon"][-1],
                "gradient_steps": runner["gradient_steps"],
            }
            return runner, metrics

        return staged_scan(init, update, cfg.num_updates)

    def make_train(self):
        """``train(key, reward_index) -> (runner, metrics)``: the whole run as one jittable function."""
        return self.make_stages()[0]


def reward_scale(return_stats: RunningStats, enabled: bool) -> Array:
    """Per-agent divisor of the rewards: the running std of the discounted return (1 when disabled)."""
    return jnp.sqrt(return_stats.var + 1e-8) if enabled else jnp.ones_like(return_stats.var)


def episode_payoffs(algo: MultiAgentQLearning, runner: dict | None, key: Array, episodes: int, policy: str = "greedy") -> Array:
    """Payoff returns ``[episodes, n_agents]`` of one episode each (no auto-reset).

    ``policy``: ``"greedy"`` (argmax of each agent's Q-values) or ``"random"`` (uniform actions;
    ``runner`` unused). ``runner`` is the first output of ``train`` (or of ``init``, untrained).
    """
    check_names("policy", [policy], ("greedy", "random"), "episode_payoffs")
    env, params = algo.env, algo.env_params
    horizon = int(params.max_steps)

    def one_episode(episode_key):
        reset_key, run_key = jax.random.split(episode_key)
        state, obs = env.reset(reset_key, params)

        def body(carry, step_key):
            state, obs, total, alive = carry
            action_key, env_key = jax.random.split(step_key)
            if policy == "random":
                actions = jax.random.randint(action_key, (algo.n_agents,), 0, algo.num_actions)
            else:
                actions = algo.greedy_actions(runner, obs)
            state, obs, payoffs, done, _ = env.step(env_key, state, actions, params)
            return (state, obs, total + jnp.where(alive, payoffs, 0.0), alive & ~done), None

        init = (state, obs, jnp.zeros(algo.n_agents), jnp.bool_(True))
        (_, _, total, _), _ = jax.lax.scan(body, init, jax.random.split(run_key, horizon))
        return total

    return jax.vmap(one_episode)(jax.random.split(key, episodes))
