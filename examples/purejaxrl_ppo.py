"""IPPO in the PureJaxRL style on motivegym's JaxMARL adapter: one file, the whole training loop one jitted program.

    python examples/purejaxrl_ppo.py                     # PrisonersDilemma-v0, reward="cooperative" (~1 min on a CPU)
    python examples/purejaxrl_ppo.py --env TrustDilemma-v0 --reward integrated --total-timesteps 300000

Independent PPO with one parameter-shared actor-critic MLP: every agent of every env is an actor that sees
its own observation (categorical policy for ``Discrete`` actions, Gaussian for ``Box`` ones). The env is
``motivegym.adapters.jaxmarl.make_jaxmarl`` (dict observations/actions/rewards keyed by agent, JaxMARL's
auto-reset); ``train(key)`` is ``jax.jit``-compiled as a whole: ``lax.scan`` over updates, each a
``lax.scan`` over ``num_steps`` vmapped env steps, GAE, then epochs of shuffled minibatch updates.

Prints per update the mean episode return of the training reward and the mean payoff per agent-step (what
the world paid: the score that compares reward types). With the cooperative reward on the prisoner's dilemma,
the payoff per step rises from about 2.25 (random play) towards 3 (mutual cooperation).
"""

from __future__ import annotations

import argparse
import time
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax

from motivegym.adapters.jaxmarl import JaxMARLEnv, make_jaxmarl

Array = jax.Array


class Config(NamedTuple):
    env: str = "PrisonersDilemma-v0"
    reward: str = "cooperative"
    total_timesteps: int = 400_000  # env steps (all envs together)
    num_envs: int = 16
    num_steps: int = 128  # steps per env per update
    update_epochs: int = 4
    num_minibatches: int = 4
    lr: float = 2.5e-3
    gamma: float = 0.99
    gae_lambda: float = 0.95
    clip_eps: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    hidden: int = 64
    seed: int = 0

    @property
    def num_updates(self) -> int:
        return max(1, self.total_timesteps // (self.num_envs * self.num_steps))


class Transition(NamedTuple):
    obs: Array  # [actors, d]
    action: Array  # [actors] (discrete) or [actors, 1]
    log_prob: Array
    value: Array
    reward: Array
    done: Array
    payoff: Array


# ----- the network: an MLP actor and an MLP critic on each agent's own observation -----
def init_mlp(key: Array, sizes: list[int], last_scale: float) -> list[tuple[Array, Array]]:
    """Orthogonal weights (scale √2 for hidden layers, ``last_scale`` for the output), zero biases."""
    keys = jax.random.split(key, len(sizes) - 1)
    scales = [np.sqrt(2.0)] * (len(sizes) - 2) + [last_scale]
    return [
        (jax.nn.initializers.orthogonal(scale)(k, (m, n)), jnp.zeros(n))
        for k, m, n, scale in zip(keys, sizes[:-1], sizes[1:], scales)
    ]


def mlp(layers: list[tuple[Array, Array]], x: Array) -> Array:
    """``tanh`` hidden layers, linear output."""
    for w, b in layers[:-1]:
        x = jnp.tanh(x @ w + b)
    w, b = layers[-1]
    return x @ w + b


def init_network(key: Array, obs_size: int, out_size: int, hidden: int) -> dict:
    actor_key, critic_key = jax.random.split(key)
    return {
        "actor": init_mlp(actor_key, [obs_size, hidden, hidden, out_size], 0.01),
        "critic": init_mlp(critic_key, [obs_size, hidden, hidden, 1], 1.0),
        "log_std": jnp.zeros(out_size),  # used by the Gaussian policy only
    }


def value_of(network: dict, obs: Array) -> Array:
    return mlp(network["critic"], obs)[..., 0]


# ----- the policy: categorical (Discrete) or Gaussian (Box) -----
def log_prob_and_entropy(network: dict, obs: Array, action: Array, discrete: bool) -> tuple[Array, Array]:
    """``log π(a|o)`` and the policy's entropy ``H``, per actor."""
    out = mlp(network["actor"], obs)
    if discrete:
        logits = jax.nn.log_softmax(out)
        probs = jnp.exp(logits)
        return jnp.take_along_axis(logits, action[..., None], -1)[..., 0], -jnp.sum(probs * logits, -1)
    log_std = network["log_std"]
    z = (action - out) / jnp.exp(log_std)
    log_prob = jnp.sum(-0.5 * z**2 - log_std - 0.5 * jnp.log(2 * jnp.pi), -1)
    return log_prob, jnp.sum(log_std + 0.5 * jnp.log(2 * jnp.pi * jnp.e)) * jnp.ones(obs.shape[:-1])


def sample_action(network: dict, obs: Array, key: Array, discrete: bool) -> Array:
    out = mlp(network["actor"], obs)
    if discrete:
        return jax.random.categorical(key, out)
    return out + jnp.exp(network["log_std"]) * jax.random.normal(key, out.shape)


# ----- dicts keyed by agent <-> actor arrays [num_agents * num_envs, ...] (agent-major) -----
def batchify(values: dict, agents: list[str]) -> Array:
    stacked = jnp.stack([values[a] for a in agents])  # [agents, envs, ...]
    return stacked.reshape((-1,) + stacked.shape[2:])


def unbatchify(values: Array, agents: list[str], num_envs: int) -> dict:
    values = values.reshape((len(agents), num_envs) + values.shape[1:])
    return {a: values[i] for i, a in enumerate(agents)}


def env_actions(env: JaxMARLEnv, actions: dict) -> dict:
    """Gaussian samples clipped into each agent's ``Box`` (the env clips too; this keeps the log-prob honest
    about what was sampled, PureJaxRL's ``ClipAction`` convention)."""
    space = env.action_space(env.agents[0])
    if hasattr(space, "n"):
        return actions
    return {a: jnp.clip(x, env.action_space(a).low, env.action_space(a).high) for a, x in actions.items()}


# ----- PPO -----
def gae(batch: Transition, last_value: Array, gamma: float, lam: float) -> tuple[Array, Array]:
    """``A_t = δ_t + γλ(1−d_t) A_{t+1}``, ``δ_t = r_t + γ(1−d_t) V_{t+1} − V_t``; targets ``A + V``."""

    def back(carry, t: Transition):
        advantage, next_value = carry
        not_done = 1.0 - t.done
        delta = t.reward + gamma * next_value * not_done - t.value
        advantage = delta + gamma * lam * not_done * advantage
        return (advantage, t.value), advantage

    _, advantages = jax.lax.scan(back, (jnp.zeros_like(last_value), last_value), batch, reverse=True)
    return advantages, advantages + batch.value


def ppo_loss(network: dict, batch: Transition, advantages: Array, targets: Array, config: Config, discrete: bool):
    """Clipped surrogate ``−min(ρA, clip(ρ, 1±ε)A)`` + ``c_v`` · clipped value loss − ``c_e`` · entropy."""
    log_prob, entropy = log_prob_and_entropy(network, batch.obs, batch.action, discrete)
    value = value_of(network, batch.obs)
    value_clipped = batch.value + jnp.clip(value - batch.value, -config.clip_eps, config.clip_eps)
    value_loss = 0.5 * jnp.maximum((value - targets) ** 2, (value_clipped - targets) ** 2).mean()
    ratio = jnp.exp(log_prob - batch.log_prob)
    adv = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
    policy_loss = -jnp.minimum(ratio * adv, jnp.clip(ratio, 1 - config.clip_eps, 1 + config.clip_eps) * adv).mean()
    return policy_loss + config.vf_coef * value_loss - config.ent_coef * entropy.mean()


def make_train(config: Config):
    """``(env, train)``: ``train(key) -> metrics`` (each ``[num_updates]``), meant to be ``jax.jit``-ed whole."""
    env = make_jaxmarl(config.env, reward=config.reward)
    agents, num_envs = env.agents, config.num_envs
    space = env.action_space(agents[0])
    discrete = hasattr(space, "n")
    obs_size = env.observation_space(agents[0]).shape[0]
    out_size = space.n if discrete else space.shape[0]
    num_actors = env.num_agents * num_envs
    optimiser = optax.chain(optax.clip_by_global_norm(config.max_grad_norm), optax.adam(config.lr, eps=1e-5))
    minibatch = num_actors * config.num_steps // config.num_minibatches

    def env_step(runner, _):
        network, env_state, obs, episode_return, key = runner
        key, action_key, step_key = jax.random.split(key, 3)
        obs_batch = batchify(obs, agents)
        action = sample_action(network, obs_batch, action_key, discrete)
        log_prob, _ = log_prob_and_entropy(network, obs_batch, action, discrete)
        value = value_of(network, obs_batch)
        actions = env_actions(env, unbatchify(action, agents, num_envs))
        obs, env_state, reward, done, info = jax.vmap(env.step)(jax.random.split(step_key, num_envs), env_state, actions)
        reward, done_batch = batchify(reward, agents), batchify(done, agents).astype(jnp.float32)
        payoff = info["payoffs"].T.reshape(-1)  # [envs, agents] -> agent-major actors
        episode_return = episode_return + reward
        finished = (done_batch, episode_return)  # the return of each episode that ends here
        transition = Transition(obs_batch, action, log_prob, value, reward, done_batch, payoff)
        return (network, env_state, obs, episode_return * (1 - done_batch), key), (transition, finished)

    def update(carry, _):
        network, opt_state, env_state, obs, episode_return, key = carry
        runner = (network, env_state, obs, episode_return, key)
        (network, env_state, obs, episode_return, key), (batch, (ended, returns)) = jax.lax.scan(
            env_step, runner, None, config.num_steps
        )
        advantages, targets = gae(batch, value_of(network, batchify(obs, agents)), config.gamma, config.gae_lambda)

        def epoch(carry, _):
            network, opt_state, key = carry
            key, perm_key = jax.random.split(key)
            flat = jax.tree.map(lambda x: x.reshape((-1,) + x.shape[2:]), (batch, advantages, targets))
            order = jax.random.permutation(perm_key, num_actors * config.num_steps)
            shuffled = jax.tree.map(lambda x: x[order].reshape((config.num_minibatches, minibatch) + x.shape[1:]), flat)

            def minibatch_step(carry, mb):
                network, opt_state = carry
                grads = jax.grad(ppo_loss)(network, *mb, config, discrete)
                updates, opt_state = optimiser.update(grads, opt_state, network)
                return (optax.apply_updates(network, updates), opt_state), None

            (network, opt_state), _ = jax.lax.scan(minibatch_step, (network, opt_state), shuffled)
            return (network, opt_state, key), None

        (network, opt_state, key), _ = jax.lax.scan(epoch, (network, opt_state, key), None, config.update_epochs)
        metrics = {
            "episode_return": jnp.sum(returns * ended) / jnp.maximum(jnp.sum(ended), 1),
            "episodes": jnp.sum(ended) / env.num_agents,
            "reward_per_step": batch.reward.mean(),
            "payoff_per_step": batch.payoff.mean(),
        }
        return (network, opt_state, env_state, obs, episode_return, key), metrics

    def train(key: Array) -> dict:
        key, net_key, reset_key = jax.random.split(key, 3)
        network = init_network(net_key, obs_size, out_size, config.hidden)
        obs, env_state = jax.vmap(env.reset)(jax.random.split(reset_key, num_envs))
        carry = (network, optimiser.init(network), env_state, obs, jnp.zeros(num_actors), key)
        _, metrics = jax.lax.scan(update, carry, None, config.num_updates)
        return metrics

    return env, train


def parse(argv: list[str] | None) -> Config:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for field, default in Config._field_defaults.items():
        parser.add_argument(f"--{field.replace('_', '-')}", type=type(default), default=default)
    return Config(**vars(parser.parse_args(argv)))


def main(argv: list[str] | None = None) -> dict[str, np.ndarray]:
    """Train, print one line per update, return the metrics (numpy, ``[num_updates]`` each)."""
    config = parse(argv)
    _, train = make_train(config)
    start = time.perf_counter()
    metrics = jax.tree.map(np.asarray, jax.block_until_ready(jax.jit(train)(jax.random.PRNGKey(config.seed))))
    seconds = time.perf_counter() - start
    steps = config.num_updates * config.num_envs * config.num_steps
    print(f"{config.env} reward={config.reward}: {config.num_updates} updates, {steps} env steps in {seconds:.1f} s (compile included)")
    for i in range(config.num_updates):
        print(
            f"update {i + 1:4d}  episode return {metrics['episode_return'][i]:9.2f}  "
            f"reward/step {metrics['reward_per_step'][i]:7.3f}  payoff/step {metrics['payoff_per_step'][i]:7.3f}"
        )
    return metrics


if __name__ == "__main__":
    main()
