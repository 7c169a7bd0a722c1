"""Multi-agent PPO in JAX: IPPO (local critics) and MAPPO (centralised critic), PureJaxRL style.

Every agent acts on **its own observation row** and learns from **its own reward-layer output**
(unlike the reference suite, whose "independent" learners were one model choosing the joint action
on the summed reward). The whole training run — rollouts with same-step auto-reset, reward layer,
per-agent observation and reward normalisation, GAE, clipped PPO epochs — is one ``lax.scan``
inside one ``jax.jit``; ``make_train`` returns ``train(key, reward_index)`` which can be vmapped
over seeds **and** over reward layers (``rewards=(private(), integrated(), …)``, chosen by index).

* continuous actions: Beta policy on (0, 1) mapped affinely to ``[low_i, high_i]``;
  discrete actions: categorical policy.
* ``share_parameters=True``: one network, agent one-hot appended to its input;
  ``False``: separate parameters per agent (vmapped).
* MAPPO: the critic sees ``env.global_state`` (plus the agent one-hot) and predicts each agent's value.
* Truncated episodes bootstrap ``γ V(s_final)`` into the last reward (time limits are not terminal).
"""

from __future__ import annotations

import dataclasses
import functools
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
from motivegym.baselines.networks import (
    agent_conditioned_mlp,
    beta_entropy,
    beta_log_prob,
    beta_parameters,
    categorical_entropy,
    categorical_log_prob,
    mlp_apply,
    mlp_init,
)
from motivegym.baselines.normalization import normalize, running_stats, update_stats
from motivegym.core.env import FunctionalEnv, Transition
from motivegym.reward_layers import LayerChoice, LayerSpec, RewardLayer, reward_layer

Array = jax.Array


@dataclasses.dataclass(frozen=True)
class PPOConfig:
    """Hyper-parameters (static). ``total_steps`` counts env steps summed over parallel envs."""

    total_steps: int = 200_000
    num_envs: int = 16
    num_steps: int = 128
    update_epochs: int = 4
    num_minibatches: int = 4
    learning_rate: float = 3e-4
    anneal_lr: bool = True
    gamma: float = 0.99
    gae_lambda: float = 0.95
    clip_eps: float = 0.2
    ent_coef: float = 0.0
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    hidden_sizes: tuple[int, ...] = (64, 64)
    share_parameters: bool = True
    centralized_critic: bool = False
    normalize_observations: bool = True
    normalize_rewards: bool = True

    @property
    def num_updates(self) -> int:
        return max(1, self.total_steps // (self.num_envs * self.num_steps))

    def __post_init__(self):
        if (self.num_envs * self.num_steps) % self.num_minibatches:
            raise ValueError("num_envs * num_steps must be divisible by num_minibatches")


class MultiAgentPPO:
    """Policy/critic definitions and the jitted training program for one env."""

    def __init__(self, env: FunctionalEnv, env_params: Any, rewards: RewardLayer | tuple, config: PPOConfig):
        self.env, self.env_params, self.config = env, env_params, config
        layers = rewards if isinstance(rewards, tuple) else (rewards,)
        self.layer = LayerChoice(tuple(reward_layer(layer) for layer in layers))
        self.n_agents = env.n_agents(env_params)
        self.obs_size = env.observation_size(env_params)
        self.state_size = env.global_state_size(env_params)
        self.discrete = env.action_kind == "discrete"
        if self.discrete:
            self.num_actions = env.num_actions(env_params)
        else:
            low, high = env.action_bounds(env_params)
            self.action_low, self.action_span = jnp.asarray(low), jnp.asarray(high) - jnp.asarray(low)

    # ----- networks -----
    def init_networks(self, key: Array) -> dict:
        cfg = self.config
        extra = self.n_agents if cfg.share_parameters else 0
        actor_out = self.num_actions if self.discrete else 2
        critic_in = (self.state_size if cfg.centralized_critic else self.obs_size) + (self.n_agents if cfg.share_parameters or cfg.centralized_critic else 0)
        actor_sizes = (self.obs_size + extra, *cfg.hidden_sizes, actor_out)
        critic_sizes = (critic_in, *cfg.hidden_sizes, 1)
        actor_key, critic_key = jax.random.split(key)
        if cfg.share_parameters:
            return {"actor": mlp_init(actor_key, actor_sizes), "critic": mlp_init(critic_key, critic_sizes, 1.0)}
        actor_keys = jax.random.split(actor_key, self.n_agents)
        critic_keys = jax.random.split(critic_key, self.n_agents)
        return {
            "actor": jax.vmap(lambda k: mlp_init(k, actor_sizes))(actor_keys),
            "critic": jax.vmap(lambda k: mlp_init(k, critic_sizes, 1.0))(critic_keys),
        }

    def _per_agent(self, layers, x: Array) -> Array:
        """Apply a network to ``[..., n, d]`` inputs: shared (with the agent one-hot) or one set of parameters per agent."""
        if self.config.share_parameters:
            return agent_conditioned_mlp(layers, x)
        moved = jnp.moveaxis(x, -2, 0)  # [n, ..., d]
        return jnp.moveaxis(jax.vmap(mlp_apply)(layers, moved), 0, -2)

    def policy_output(self, networks: dict, obs: Array) -> Array:
        return self._per_agent(networks["actor"], obs)

    def value(self, networks: dict, obs: Array, global_state: Array) -> Array:
        if self.config.centralized_critic:
            return self._centralized_value(networks["critic"], global_state)
        return self._per_agent(networks["critic"], obs)[..., 0]

    def _centralized_value(self, layers: list[dict], global_state: Array) -> Array:
        """MAPPO critic ``V_i = MLP_i([s, onehot_i])`` for every agent, ``[..., n]`` from ``s [..., S]``.

        The first dense layer is split as ``s @ W_s + W_id[i] + b``: the same numbers as the layer on
        the concatenation, without materialising n copies of the global state (ApacheProject: 40 agents
        × 4,921 state floats per sample), and one wide matrix product instead of n narrow ones.
        """
        if self.config.share_parameters:  # layers[0]["w"]: [S + n, H]
            return agent_conditioned_mlp(layers, global_state[..., None, :])[..., 0]
        first, rest = layers[0], layers[1:]  # first["w"]: [n, S + n, H], one critic per agent
        size, agent = self.state_size, jnp.arange(self.n_agents)
        hidden = jnp.einsum("...s,nsh->...nh", global_state, first["w"][:, :size]) + first["w"][agent, size + agent] + first["b"]
        return (hidden if not rest else self._per_agent(rest, jnp.tanh(hidden)))[..., 0]

    def sample(self, key: Array, output: Array) -> tuple[Array, Array]:
        """``(raw action, log-prob)``; raw is in (0, 1) (continuous) or an index (discrete)."""
        if self.discrete:
            action = jax.random.categorical(key, output)
            return action, categorical_log_prob(output, action)
        alpha, beta = beta_parameters(output)
        action = jnp.clip(jax.random.beta(key, alpha, beta), 1e-6, 1.0 - 1e-6)
        return action, beta_log_prob(alpha, beta, action)

    def log_prob(self, output: Array, action: Array) -> Array:
        if self.discrete:
            return categorical_log_prob(output, action)
        return beta_log_prob(*beta_parameters(output), action)

    def entropy(self, output: Array) -> Array:
        return categorical_entropy(output) if self.discrete else beta_entropy(*beta_parameters(output))

    def greedy(self, output: Array) -> Array:
        if self.discrete:
            return jnp.argmax(output, axis=-1)
        alpha, beta = beta_parameters(output)
        return alpha / (alpha + beta)

    def env_action(self, raw: Array) -> Array:
        return raw if self.discrete else self.action_low + raw * self.action_span

    def greedy_actions(self, policy_state: dict, obs: Array) -> Array:
        """Env actions of the greedy policy (Beta mean / argmax) from ``{"networks", "obs_stats"}`` of a runner."""
        norm_obs = normalize(policy_state["obs_stats"], obs) if self.config.normalize_observations else obs
        return self.env_action(self.greedy(self.policy_output(policy_state["networks"], norm_obs)))

    # ----- env step with same-step auto-reset -----
    def env_step(self, keys, states, actions):
        return learner_batch_step(self.env, self.env_params, keys, states, actions)

    # ----- training program -----
    def make_stages(self):
        """``(train, init, run)``: ``train(key, reward_index) -> (runner, metrics)`` is
        ``run(init(key, reward_index), num_updates)``; ``run`` lets a host loop train in chunks
        (progress bars) with the same result as one call."""
        cfg, env, params = self.config, self.env, self.env_params
        n, num_envs = self.n_agents, cfg.num_envs
        batch_size = num_envs * cfg.num_steps
        minibatch_size = batch_size // cfg.num_minibatches
        schedule = (
            optax.linear_schedule(cfg.learning_rate, 0.0, cfg.num_updates * cfg.update_epochs * cfg.num_minibatches)
            if cfg.anneal_lr
            else cfg.learning_rate
        )
        optimizer = optax.chain(optax.clip_by_global_norm(cfg.max_grad_norm), optax.adam(schedule, eps=1e-5))
        layer_spec = LayerSpec(n_agents=n, obs_size=self.obs_size, action_size=self.num_actions if self.discrete else 1)
        batched_reset = jax.vmap(env.reset, in_axes=(0, None))
        batched_step = self.env_step
        batched_layer = jax.vmap(self.layer.apply)
        fits_layer = self.layer.fits_on_rollouts()  # a layer model trained on whole rollouts (train_on="rollout")

        def init(key: Array, reward_index: Array) -> dict:
            key, net_key, env_key, layer_key = jax.random.split(key, 4)
            networks = self.init_networks(net_key)
            opt_state = optimizer.init(networks)
            env_states, obs = batched_reset(jax.random.split(env_key, num_envs), params)
            global_states = jax.vmap(env.global_state, in_axes=(0, None))(env_states, params)
            # a model fitted on rollouts is one per run: every env's copy starts from the same key
            layer_keys = jnp.stack([layer_key] * num_envs) if fits_layer else jax.random.split(layer_key, num_envs)
            layer_states = jax.vmap(lambda k: LayerChoice.with_index(self.layer.init(k, layer_spec), reward_index))(layer_keys)
            runner = {
                "networks": networks,
                "opt_state": opt_state,
                "env_states": env_states,
                "obs": obs,
                "global_states": global_states,
                "layer_states": layer_states,
                "obs_stats": running_stats((n, self.obs_size)),
                "return_stats": running_stats((n,)),
                **episode_accumulators(num_envs, n),
                "key": key,
            }
            return runner

        def act_and_step(runner):
            """One step of every env under the current policy: ``(transition, what the rollout records of it, the
            runner's next env fields, the final global states)``."""
            key, action_key, step_key = jax.random.split(runner["key"], 3)
            obs = runner["obs"]
            norm_obs = normalize(runner["obs_stats"], obs) if cfg.normalize_observations else obs
            output = self.policy_output(runner["networks"], norm_obs)
            raw, log_prob = self.sample(action_key, output)
            value = self.value(runner["networks"], norm_obs, runner["global_states"])
            actions = self.env_action(raw)
            env_states, next_obs, next_global, payoffs, final_obs, final_global, info = batched_step(
                jax.random.split(step_key, num_envs), runner["env_states"], actions
            )
            transition = Transition(obs, actions, payoffs, final_obs, info["terminated"], info["truncated"], info)
            record = {"obs": obs, "norm_obs": norm_obs, "global_state": runner["global_states"], "raw": raw, "log_prob": log_prob, "value": value}
            moved = {"env_states": env_states, "obs": next_obs, "global_states": next_global, "key": key}
            return transition, record, moved, final_global

        def rollout_step(apply_layer, runner, _):
            transition, record, moved, final_global = act_and_step(runner)
            info = transition.info
            layer_states, rewards, components = apply_layer(runner["layer_states"], transition)
            done = info["terminated"] | info["truncated"]
            accumulators, finished, discounted = accumulate_episodes(runner, transition.payoffs, rewards, done, cfg.gamma)
            return_stats = update_stats(runner["return_stats"], discounted) if cfg.normalize_rewards else runner["return_stats"]
            scale = jnp.sqrt(return_stats.var + 1e-8) if cfg.normalize_rewards else 1.0
            scaled = rewards / scale
            # time limits are not terminal: bootstrap the value of the final state
            final_obs = transition.next_obs
            final_norm = normalize(runner["obs_stats"], final_obs) if cfg.normalize_observations else final_obs
            final_value = self.value(runner["networks"], final_norm, final_global)
            bootstrap = (info["truncated"] & ~info["terminated"])[:, None]
            scaled = scaled + jnp.where(bootstrap, cfg.gamma * final_value, 0.0)
            record = {**record, "reward": scaled, "done": done, "components": components, **finished}
            if fits_layer:
                record["layer_transition"] = dataclasses.replace(transition, info={})
            runner = {**runner, **moved, "layer_states": layer_states, "return_stats": return_stats, **accumulators}
            return runner, record

        def gae(records, last_value):
            def backward(carry, step):
                advantage, next_value = carry
                not_done = 1.0 - step["done"][:, None]
                delta = step["reward"] + cfg.gamma * next_value * not_done - step["value"]
                advantage = delta + cfg.gamma * cfg.gae_lambda * not_done * advantage
                return (advantage, step["value"]), advantage

            _, advantages = jax.lax.scan(
                backward, (jnp.zeros_like(last_value), last_value), records, reverse=True
            )
            return advantages, advantages + records["value"]

        def loss_fn(networks, batch):
            output = self.policy_output(networks, batch["norm_obs"])
            log_prob = self.log_prob(output, batch["raw"])
            # with ent_coef = 0 the entropy is only reported: no backward pass through its digammas
            entropy = self.entropy(output if cfg.ent_coef else jax.lax.stop_gradient(output))
            ratio = jnp.exp(log_prob - batch["log_prob"])
            advantage = batch["advantage"]
            advantage = (advantage - advantage.mean(axis=0)) / (advantage.std(axis=0) + 1e-8)
            policy_loss = -jnp.mean(jnp.minimum(ratio * advantage, jnp.clip(ratio, 1 - cfg.clip_eps, 1 + cfg.clip_eps) * advantage))
            value = self.value(networks, batch["norm_obs"], batch["global_state"])
            clipped = batch["value"] + jnp.clip(value - batch["value"], -cfg.clip_eps, cfg.clip_eps)
            value_loss = 0.5 * jnp.mean(jnp.maximum((value - batch["target"]) ** 2, (clipped - batch["target"]) ** 2))
            total = policy_loss + cfg.vf_coef * value_loss - cfg.ent_coef * jnp.mean(entropy)
            return total, {"policy_loss": policy_loss, "value_loss": value_loss, "entropy": jnp.mean(entropy)}

        def update(runner, _):
            if fits_layer:  # one model per run: the layer's read-only leaves are carried once, not per env copy
                shared = SharedAcrossEnvs(self.layer, runner["layer_states"], jax.eval_shape(act_and_step, runner)[0])
                runner = {**runner, "layer_states": shared.own(runner["layer_states"])}
                runner, records = jax.lax.scan(functools.partial(rollout_step, shared.batched_apply), runner, None, length=cfg.num_steps)
                runner = {**runner, "layer_states": shared.joined(runner["layer_states"], num_envs)}
            else:
                runner, records = jax.lax.scan(functools.partial(rollout_step, batched_layer), runner, None, length=cfg.num_steps)
            last_norm = normalize(runner["obs_stats"], runner["obs"]) if cfg.normalize_observations else runner["obs"]
            last_value = self.value(runner["networks"], last_norm, runner["global_states"])
            advantages, targets = gae(records, last_value)
            flat = lambda x: x.reshape((batch_size,) + x.shape[2:])  # noqa: E731
            data = {
                "norm_obs": flat(records["norm_obs"]),
                "global_state": flat(records["global_state"]),
                "raw": flat(records["raw"]),
                "log_prob": flat(records["log_prob"]),
                "value": flat(records["value"]),
                "advantage": flat(advantages),
                "target": flat(targets),
            }

            def epoch(carry, epoch_key):
                networks, opt_state = carry
                order = jax.random.permutation(epoch_key, batch_size)
                shuffled = jax.tree.map(lambda x: x[order].reshape((cfg.num_minibatches, minibatch_size) + x.shape[1:]), data)

                def minibatch(carry, batch):
                    networks, opt_state = carry
                    (_, stats), grads = jax.value_and_grad(loss_fn, has_aux=True)(networks, batch)
                    updates, opt_state = optimizer.update(grads, opt_state, networks)
                    return (optax.apply_updates(networks, updates), opt_state), stats

                return jax.lax.scan(minibatch, (networks, opt_state), shuffled)

            if fits_layer:
                key, fit_key = jax.random.split(runner["key"])
                fitted = self.layer.fit_rollout(runner["layer_states"], records["layer_transition"], fit_key)
                runner = {**runner, "layer_states": fitted, "key": key}
            key, epochs_key = jax.random.split(runner["key"])
            (networks, opt_state), losses = jax.lax.scan(
                epoch, (runner["networks"], runner["opt_state"]), jax.random.split(epochs_key, cfg.update_epochs)
            )
            obs_stats = runner["obs_stats"]
            if cfg.normalize_observations:
                obs_stats = update_stats(obs_stats, records["obs"].reshape((-1,) + records["obs"].shape[2:]))
            metrics = {
                **finished_episode_metrics(records),
                # per-agent mean of every reward component over the rollout (intrinsic bonuses, partner terms …)
                "components": jax.tree.map(lambda c: jnp.mean(c, axis=(0, 1)), records["components"]),
                **jax.tree.map(jnp.mean, losses),
            }
            runner = {**runner, "networks": networks, "opt_state": opt_state, "obs_stats": obs_stats, "key": key}
            return runner, metrics

        return staged_scan(init, update, cfg.num_updates)

    def make_train(self):
        """``train(key, reward_index) -> (runner, metrics)``: the whole run as one jittable function."""
        return self.make_stages()[0]


class SharedAcrossEnvs:
    """A layer fitted on rollouts, applied to every env with its read-only leaves carried once instead of per env.

    The learner initialises every env's copy of such a layer from one key and ``fit_rollout`` writes the same model
    to every copy, so a leaf that the env step only reads (``apply`` returns it as it came: a model's parameters and
    Adam state, a fixed random network or projection, ``auto``'s bandit) holds the same value in every copy. Taken
    out of the vmap over envs, each forward pass is one matrix product over the envs instead of one matrix–vector
    product per env. Which leaves are read-only is read from the jaxpr of one env's ``apply``.
    """

    def __init__(self, layer: RewardLayer, states: Any, transitions: Any):
        """``states``: the layer states of every env ``[E, …]``; ``transitions``: one step of every env (shapes suffice)."""
        one_env = lambda tree: jax.tree.map(lambda x: jax.ShapeDtypeStruct(x.shape[1:], x.dtype), tree)  # noqa: E731
        jaxpr = jax.make_jaxpr(layer.apply)(one_env(states), one_env(transitions)).jaxpr
        leaves, self.treedef = jax.tree.flatten(states)
        count = len(leaves)
        self.layer = layer
        self.read_only = tuple(out is inp for inp, out in zip(jaxpr.invars[:count], jaxpr.outvars[:count]))
        self.shared = [x[0] for x, read_only in zip(leaves, self.read_only) if read_only]

    def own(self, states: Any) -> list:
        """The leaves of ``states`` that ``apply`` writes (one env's, or every env's)."""
        return [x for x, read_only in zip(jax.tree.leaves(states), self.read_only) if not read_only]

    def joined(self, own: list, envs: int | None = None) -> Any:
        """Layer states from the written leaves ``own`` and the read-only ones (copied to ``envs`` envs if given)."""
        shared = iter(self.shared if envs is None else [jnp.broadcast_to(x, (envs,) + x.shape) for x in self.shared])
        own_leaves = iter(own)
        return jax.tree.unflatten(self.treedef, [next(shared) if r else next(own_leaves) for r in self.read_only])

    def batched_apply(self, own: list, transitions: Transition) -> tuple[list, Array, dict]:
        """``layer.apply`` vmapped over envs, on the written leaves ``own [E, …]``."""

        def one_env(own, transition):
            state, rewards, components = self.layer.apply(self.joined(own), transition)
            return self.own(state), rewards, components

        return jax.vmap(one_env)(own, transitions)


def episode_payoffs(algo: MultiAgentPPO, runner: dict | None, key: Array, episodes: int, policy: str = "greedy") -> Array:
    """Payoff returns ``[episodes, n_agents]`` of one episode each (no auto-reset).

    ``policy``: ``"greedy"`` (Beta mean / argmax), ``"sample"`` (stochastic), or ``"random"``
    (uniform actions; ``runner`` unused). ``runner`` is the first output of ``train``.
    """
    env, params, cfg = algo.env, algo.env_params, algo.config
    horizon = env.max_episode_steps(params)

    def one_episode(episode_key):
        reset_key, run_key = jax.random.split(episode_key)
        state, obs = env.reset(reset_key, params)

        def body(carry, step_key):
            state, obs, total, alive = carry
            action_key, env_key = jax.random.split(step_key)
            if policy == "random":
                from motivegym.core.batching import random_actions

                actions = random_actions(env, params, action_key)
            elif policy == "greedy":
                actions = algo.greedy_actions(runner, obs)
            else:
                norm_obs = normalize(runner["obs_stats"], obs) if cfg.normalize_observations else obs
                actions = algo.env_action(algo.sample(action_key, algo.policy_output(runner["networks"], norm_obs))[0])
            state, obs, payoffs, done, _ = env.step(env_key, state, actions, params)
            return (state, obs, total + jnp.where(alive, payoffs, 0.0), alive & ~done), None

        init = (state, obs, jnp.zeros(algo.n_agents), jnp.bool_(True))
        (_, _, total, _), _ = jax.lax.scan(body, init, jax.random.split(run_key, horizon))
        return total

    return jax.vmap(one_episode)(jax.random.split(key, episodes))
