"""Intrinsic-motivation reward layers: exploration bonuses that keep (and train) their own state.

Each layer mirrors RLeXplore's watch / compute / update split as three pure functions that
:meth:`IntrinsicLayer.apply` composes, so the whole layer fuses into a jitted training scan:

* ``observe(core, transition) -> core``: record what was seen (counts, observation statistics);
* ``compute(core, transition) -> b [n]``: the raw bonus of the transition's next observation ``s'``;
* ``update(core, transition) -> core``: write and reset episodic memory, advance bandits.

A layer that learns a model (``rnd``, ``learning_progress``, ``icm``, ``disagreement``, ``e3b``,
``empowerment``) also names it (``trained_model`` / ``with_trained_model``) and its per-agent loss
(``model_losses``), and ``train_on`` says when the driver takes its Adam steps:

* ``"step"`` (the default; works everywhere, Gymnasium and PettingZoo included): one Adam step per apply on
  the transition just seen, inside the env step;
* ``"rollout"`` (RLeXplore's way, Burda et al. 2019): the env step only reads the model; a learner that
  collects rollouts (``MultiAgentPPO``) calls :meth:`~motivegym.reward_layers.base.RewardLayer.fit_rollout`
  after each rollout, which takes ``fit_epochs`` (4) passes of ``fit_minibatches`` (4) Adam steps over the whole
  ``[steps, envs]`` batch (16 steps per update, as Burda et al. train RND's predictor with PPO's epochs and
  minibatches) on **one model per run**, written back to every env's copy. The copies start equal
  (the learner initialises every env's layer from one key), so during a rollout ``MultiAgentPPO`` carries every
  leaf the env step only reads once for all envs (:class:`~motivegym.baselines.ppo.SharedAcrossEnvs`).
  Learners without rollouts refuse such a layer.

The reward is ``r_t = c_t · b_t / σ_t`` where

* ``c_t = coef · decay^t`` (``decay ≤ 1``) or ``coef · max(0, 1 − t / linear_decay_steps)``, with ``t`` the
  number of times this layer state has been applied (in ``MultiAgentPPO`` every env has its own copy);
* ``σ_t`` is the running standard deviation of the discounted intrinsic return ``R_t = γ R_{t−1} + b_t``
  when ``normalize=True`` (RLeXplore's "rms" scaling; the return is never reset, the bonus is non-episodic),
  else ``1``.

**Per-agent or shared.** With ``shared=False`` (the default) every statistic (counts, memories, predictors,
normalisers) has one row per agent index and agent ``i``'s bonus depends only on agent ``i``'s own
observations. With ``shared=True`` one row is pooled over all agents: a state one agent has visited is no
longer novel for its partners. Fixed random functions (projections, RND targets) are the same for all agents.

Layers: :class:`CountBonus` (SimHash, Tang et al. 2017), :class:`RND` (Burda et al. 2019),
:class:`EpisodicNovelty` (NGU, Badia et al. 2020), :class:`ImpactBonus` (RIDE, Raileanu & Rocktäschel 2020),
:class:`LearningProgress`. Components: ``{"bonus": b_t}`` (the raw bonus before ``c_t`` and ``σ_t``).
Each layer state also keeps running sums ``state["totals"] = {"bonus": Σ_t b_t, "reward": Σ_t r_t}``
per agent, so a training loop that discards components can still read them from its layer states.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, ClassVar

import jax
import jax.numpy as jnp
import optax

from motivegym.core.env import Transition
from motivegym.core.params import check_arguments, choice, flag, integer, real
from motivegym.core.pytree import pytree_dataclass
from motivegym.reward_layers.base import LayerSpec, RewardLayer

Array = jax.Array

FIBONACCI_HASH = 0x9E3779B1  # 2^32 / golden ratio: multiplicative hashing of codes wider than the table


# ----- running moments (Welford / Chan et al. parallel update), one row per agent or one shared row -----
@pytree_dataclass
class Moments:
    """Running ``count``, ``mean`` and ``m2 = Σ (x − mean)²`` of each row (exact: starts at zero samples)."""

    count: Array  # scalar: every row receives the same number of samples
    mean: Array  # [rows, ...]
    m2: Array  # [rows, ...]

    @property
    def var(self) -> Array:
        """Population variance ``m2 / count`` (``0`` before any sample)."""
        return self.m2 / jnp.maximum(self.count, 1.0)


def empty_moments(shape: tuple[int, ...]) -> Moments:
    return Moments(jnp.float32(0.0), jnp.zeros(shape, jnp.float32), jnp.zeros(shape, jnp.float32))


def merge_moments(moments: Moments, samples: Array) -> Moments:
    """Merge ``samples [rows, batch, ...]`` (Chan, Golub & LeVeque 1979):
    ``δ = x̄_B − x̄``, ``x̄ ← x̄ + δ n_B/n``, ``m2 ← m2 + m2_B + δ² n_A n_B / n`` with ``n = n_A + n_B``."""
    batch = samples.shape[1]
    batch_mean = jnp.mean(samples, axis=1)
    batch_m2 = jnp.sum((samples - batch_mean[:, None]) ** 2, axis=1)
    total = moments.count + batch
    delta = batch_mean - moments.mean
    mean = moments.mean + delta * batch / total
    m2 = moments.m2 + batch_m2 + delta**2 * moments.count * batch / total
    return Moments(total, mean, m2)


def pooled(values: Array, shared: bool) -> Array:
    """``[n, ...]`` per-agent values as ``[rows, batch, ...]`` samples: ``[1, n, ...]`` shared, ``[n, 1, ...]`` not."""
    return values[None] if shared else values[:, None]


def agent_rows(n_agents: int, shared: bool) -> Array:
    """The statistics row of each agent: all ``0`` when shared, else ``0 … n−1``."""
    return jnp.zeros(n_agents, jnp.int32) if shared else jnp.arange(n_agents, dtype=jnp.int32)


def row_mean(values: Array, shared: bool) -> Array:
    """Per-row mean of per-agent ``values [n]``: ``[1]`` when shared, ``[n]`` otherwise."""
    return jnp.mean(values, keepdims=True) if shared else values


# ----- fixed random functions of the observation -----
def random_projection(key: Array, obs_size: int, size: int) -> Array:
    """``A ∈ R^{d×k}`` with i.i.d. ``N(0, 1/d)`` entries (SimHash, Johnson–Lindenstrauss embedding)."""
    return jax.random.normal(key, (obs_size, size), jnp.float32) / math.sqrt(obs_size)


def simhash_buckets(projection: Array, obs: Array, table_bits: int) -> Array:
    """Table index of ``φ(s) = sgn(A s) ∈ {0,1}^k`` (Tang et al. 2017, Eq. 2): the ``k`` bits packed into an
    integer, used directly when ``k ≤ m`` and reduced to ``m`` bits by Fibonacci hashing otherwise."""
    bits = (obs @ projection > 0).astype(jnp.uint32)
    k = projection.shape[-1]
    code = jnp.sum(bits << jnp.arange(k, dtype=jnp.uint32), axis=-1, dtype=jnp.uint32)
    if k > table_bits:
        code = (code * jnp.uint32(FIBONACCI_HASH)) >> jnp.uint32(32 - table_bits)
    return code.astype(jnp.int32)


def mlp_init(key: Array, sizes: tuple[int, ...], bias_scale: float = 0.0) -> list[dict]:
    """He-normal dense layers ``sizes[0] → … → sizes[-1]``; ``bias_scale`` gives random biases (RND targets,
    so that the target of a whitened all-zero observation is not zero)."""
    layers = []
    for k, fan_in, fan_out in zip(jax.random.split(key, len(sizes) - 1), sizes[:-1], sizes[1:]):
        weight_key, bias_key = jax.random.split(k)
        weight = jax.random.normal(weight_key, (fan_in, fan_out), jnp.float32) * math.sqrt(2.0 / fan_in)
        layers.append({"w": weight, "b": bias_scale * jax.random.normal(bias_key, (fan_out,), jnp.float32)})
    return layers


def mlp_apply(layers: list[dict], x: Array) -> Array:
    """Leaky-ReLU hidden layers, linear output (RND's architecture, Burda et al. 2019 App. A.4)."""
    for layer in layers[:-1]:
        x = jax.nn.leaky_relu(x @ layer["w"] + layer["b"])
    return x @ layers[-1]["w"] + layers[-1]["b"]


def stacked(tree: Any, rows: int) -> Any:
    """``rows`` copies of a pytree along a new leading axis."""
    return jax.tree.map(lambda x: jnp.broadcast_to(x, (rows,) + x.shape), tree)


# ----- the shared driver -----
DECAY_KINDS = ("exponential", "linear")


@dataclasses.dataclass(frozen=True, kw_only=True)
class IntrinsicLayer(RewardLayer):
    """Base of the intrinsic layers: schedule, normalisation and the observe/compute/update driver.

    Subclasses implement ``init_core``, ``observe``, ``compute`` and ``update`` on their own ``core`` state.
    """

    coef: float = 1.0
    decay: float = 1.0
    linear_decay_steps: int = 0
    normalize: bool = False
    gamma: float = 0.99
    shared: bool = False
    train_on: str = "step"
    fit_epochs: int = 4  # with fit_minibatches: PPO's 4 × 4 passes, as Burda et al. train RND's predictor
    fit_minibatches: int = 4

    def __post_init__(self):
        own = {name: spec for cls in reversed(type(self).__mro__) for name, spec in LAYER_ARGUMENTS.get(cls.__name__, {}).items()}
        check_arguments(self.name, vars(self), SCHEDULE_ARGUMENTS | own)
        if self.decay < 1.0 and self.linear_decay_steps:
            raise ValueError(f"{self.name}: choose one schedule, exponential decay or linear_decay_steps, not both")
        self.check_train_on()

    def check_train_on(self) -> None:
        if self.train_on == "rollout" and not self.trains_a_model():
            raise ValueError(f"{self.name}: train_on='rollout' is for layers that learn a model ({', '.join(TRAINED_LAYERS)}); this one has none")

    # --- subclass interface ---
    def init_core(self, key: Array, spec: LayerSpec) -> Any:  # pragma: no cover - interface
        raise NotImplementedError

    def observe(self, core: Any, transition: Transition) -> Any:
        return core

    def compute(self, core: Any, transition: Transition) -> Array:  # pragma: no cover - interface
        raise NotImplementedError

    def update(self, core: Any, transition: Transition) -> Any:
        return core

    # --- the learned model, for layers that have one ---
    #: where a layer that learns a model keeps it in ``core``: the path of the dict that holds the parameters under
    #: ``MODEL_KEY`` and their Adam state under ``"opt_state"`` (no key: no learned model)
    MODEL_PATH: ClassVar[tuple[str, ...]] = ()
    MODEL_KEY: ClassVar[str] = ""

    def trains_a_model(self) -> bool:
        return bool(self.MODEL_KEY)

    def trained_model(self, core: Any) -> tuple[Any, Any]:
        """``(parameters, Adam state)`` of the learned model in ``core``."""
        for key in self.MODEL_PATH:
            core = core[key]
        return core[self.MODEL_KEY], core["opt_state"]

    def with_trained_model(self, core: Any, params: Any, opt_state: Any, path: tuple[str, ...] | None = None) -> Any:
        """``core`` with the learned model's parameters and Adam state replaced."""
        path = self.MODEL_PATH if path is None else path
        if not path:
            return {**core, self.MODEL_KEY: params, "opt_state": opt_state}
        return {**core, path[0]: self.with_trained_model(core[path[0]], params, opt_state, path[1:])}

    def model_losses(self, core: Any, params: Any, transition: Transition) -> Array:  # pragma: no cover - interface
        """Per-agent losses ``[n]`` of one transition under ``params`` (each agent under its row's model)."""
        raise NotImplementedError

    def fits_on_rollouts(self) -> bool:
        return self.train_on == "rollout"

    def fit_rollout(self, states: dict, transitions: Transition, key: Array) -> dict:
        """Adam steps on ``mean_{t,e} Σ_rows mean_{i∈row} L_i`` over a rollout: ``states`` have a leading env axis
        ``[E]``, ``transitions`` leading ``[T, E]``; env ``e``'s samples are scored with env ``e``'s core (its
        observation moments), the parameters and Adam state of env 0 are trained and copied to every env.
        ``fit_epochs`` passes, each over ``fit_minibatches`` random groups of the ``T`` steps (``T`` must divide)."""
        if not self.fits_on_rollouts():
            return states
        steps = transitions.next_obs.shape[0]
        if steps % self.fit_minibatches:
            raise ValueError(f"{self.name}: fit_minibatches={self.fit_minibatches} must divide the rollout length {steps}")
        transitions = as_float_observations(transitions)
        cores = states["core"]
        params, opt_state = jax.tree.map(lambda x: x[0], self.trained_model(cores))
        optimizer = optax.adam(self.learning_rate)  # type: ignore[attr-defined]

        def loss(p, batch):
            def one_env(core, env_steps):
                agent_losses = jax.vmap(lambda tr: self.model_losses(core, p, tr))(env_steps)  # [t, n]
                return jax.vmap(lambda losses: jnp.sum(row_mean(losses, self.shared)))(agent_losses)

            return jnp.mean(jax.vmap(one_env, in_axes=(0, 1))(cores, batch))

        def minibatch(carry, batch):
            p, o = carry
            updates, o = optimizer.update(jax.grad(loss)(p, batch), o, p)
            return (optax.apply_updates(p, updates), o), None

        def epoch(carry, epoch_key):
            order = jax.random.permutation(epoch_key, steps).reshape(self.fit_minibatches, -1)
            batches = jax.tree.map(lambda x: x[order], transitions)
            return jax.lax.scan(minibatch, carry, batches)[0], None

        (params, opt_state), _ = jax.lax.scan(epoch, (params, opt_state), jax.random.split(key, self.fit_epochs))
        envs = jax.tree.leaves(cores)[0].shape[0]
        copies = jax.tree.map(lambda x: jnp.broadcast_to(x, (envs,) + x.shape), (params, opt_state))
        return {**states, "core": jax.vmap(self.with_trained_model)(cores, *copies)}

    def step_model(self, core: Any, transition: Transition) -> Any:
        """One Adam step (:func:`row_adam_step`) on this transition's per-agent model losses."""
        params, opt_state = self.trained_model(core)
        params, opt_state = row_adam_step(
            params, opt_state, lambda p: self.model_losses(core, p, transition), self.shared, self.learning_rate  # type: ignore[attr-defined]
        )
        return self.with_trained_model(core, params, opt_state)

    # --- driver ---
    def rows(self, n_agents: int) -> int:
        return 1 if self.shared else n_agents

    def init(self, key: Array, spec: LayerSpec) -> dict:
        if spec.n_agents < 1 or spec.obs_size < 1:
            raise ValueError(f"{self.name}: needs n_agents >= 1 and obs_size >= 1, got {spec}")
        n = spec.n_agents
        return {
            "core": self.init_core(key, spec),
            "step": jnp.int32(0),
            "intrinsic_return": jnp.zeros(n, jnp.float32),
            "return_moments": empty_moments((self.rows(n),)),
            "totals": {"bonus": jnp.zeros(n, jnp.float32), "reward": jnp.zeros(n, jnp.float32)},
        }

    def coefficient(self, step: Array) -> Array:
        """``c_t = coef · decay^t`` or ``coef · max(0, 1 − t/linear_decay_steps)``."""
        t = step.astype(jnp.float32)
        if self.linear_decay_steps:
            return self.coef * jnp.maximum(0.0, 1.0 - t / self.linear_decay_steps)
        return self.coef * jnp.float32(self.decay) ** t

    def apply(self, state, transition):
        n = transition.payoffs.shape[-1]
        check_observations(self.name, transition, n)
        transition = as_float_observations(transition)
        core = self.observe(state["core"], transition)
        bonus = self.compute(core, transition)
        core = self.update(core, transition)
        if self.trains_a_model() and self.train_on == "step":
            core = self.step_model(core, transition)
        intrinsic_return = self.gamma * state["intrinsic_return"] + bonus
        return_moments = merge_moments(state["return_moments"], pooled(intrinsic_return, self.shared))
        if self.normalize:
            var = return_moments.var[agent_rows(n, self.shared)]
            bonus_scale = jnp.where(var > 0.0, jax.lax.rsqrt(jnp.maximum(var, 1e-12)), 1.0)
        else:
            bonus_scale = 1.0
        rewards = self.coefficient(state["step"]) * bonus * bonus_scale
        totals = {"bonus": state["totals"]["bonus"] + bonus, "reward": state["totals"]["reward"] + rewards}
        new_state = {
            "core": core,
            "step": state["step"] + 1,
            "intrinsic_return": intrinsic_return,
            "return_moments": return_moments,
            "totals": totals,
        }
        return new_state, rewards, {"bonus": bonus}


def check_observations(layer: str, transition: Transition, n_agents: int) -> None:
    """Intrinsic layers read ``obs`` / ``next_obs`` of shape ``[n_agents, obs_size]``."""
    for name in ("obs", "next_obs"):
        shape = getattr(transition, name).shape
        if len(shape) != 2 or shape[0] != n_agents:
            raise ValueError(f"the {layer!r} reward layer needs transition.{name} of shape [n_agents={n_agents}, obs_size], got {shape}")


def as_float_observations(transition: Transition) -> Transition:
    return dataclasses.replace(
        transition, obs=transition.obs.astype(jnp.float32), next_obs=transition.next_obs.astype(jnp.float32)
    )


def episode_ended(transition: Transition) -> Array:
    return jnp.asarray(transition.terminated | transition.truncated, bool)


# ----- 1. counts -----
@dataclasses.dataclass(frozen=True, kw_only=True)
class CountBonus(IntrinsicLayer):
    """SimHash pseudo-count bonus ``b = 1/√n(φ(s'))`` (Tang et al. 2017, Eq. 1).

    ``φ(s) = sgn(A s)`` with a fixed ``A ∈ R^{d×bits}`` drawn from the init key; counts live in a table of
    ``2^table_bits`` entries per agent (or one shared table), incremented before the bonus is read, so
    ``b ≤ 1``. SimHash is scale-invariant: ``s`` and ``2s`` share a bucket.
    """

    bits: int = 16
    table_bits: int = 14
    name: str = "count"

    def init_core(self, key, spec):
        return {
            "projection": random_projection(key, spec.obs_size, self.bits),
            "counts": jnp.zeros((self.rows(spec.n_agents), 2**self.table_bits), jnp.int32),
        }

    def _buckets(self, core, transition):
        return simhash_buckets(core["projection"], transition.next_obs, self.table_bits)

    def observe(self, core, transition):
        rows = agent_rows(transition.next_obs.shape[0], self.shared)
        return {**core, "counts": core["counts"].at[rows, self._buckets(core, transition)].add(1)}

    def compute(self, core, transition):
        rows = agent_rows(transition.next_obs.shape[0], self.shared)
        counts = core["counts"][rows, self._buckets(core, transition)]
        return jax.lax.rsqrt(jnp.maximum(counts, 1).astype(jnp.float32))


# ----- 2. random network distillation -----
def init_rnd(key: Array, spec: LayerSpec, hidden: int, features: int, learning_rate: float, rows: int) -> dict:
    """Fixed target ``f``, trainable predictor ``f̂`` (one per row), its Adam state and observation moments."""
    target_key, predictor_key = jax.random.split(key)
    sizes = (spec.obs_size, hidden, hidden, features)
    predictor = jax.vmap(lambda k: mlp_init(k, sizes))(jax.random.split(predictor_key, rows))
    return {
        "target": mlp_init(target_key, sizes, bias_scale=0.5),
        "predictor": predictor,
        "opt_state": optax.adam(learning_rate).init(predictor),
        "obs_moments": empty_moments((rows, spec.obs_size)),
    }


def whiten(obs: Array, moments: Moments, rows: Array, clip: float) -> Array:
    """``clip((s − μ)/√(σ² + 1e−8), −clip, clip)`` with the agent's running moments (RND obs normalisation)."""
    return jnp.clip((obs - moments.mean[rows]) / jnp.sqrt(moments.var[rows] + 1e-8), -clip, clip)


def rnd_errors(predictor: Any, target: Any, inputs: Array, rows: Array) -> Array:
    """``‖f(x_i) − f̂_{row(i)}(x_i)‖²`` per agent ``i``."""
    agent_predictors = jax.tree.map(lambda p: p[rows], predictor)
    predicted = jax.vmap(mlp_apply)(agent_predictors, inputs)
    return jnp.sum((predicted - mlp_apply(target, inputs)) ** 2, axis=-1)


def row_adam_step(params: Any, opt_state: Any, agent_losses: Any, shared: bool, learning_rate: float) -> tuple[Any, Any]:
    """One Adam step on ``Σ_rows mean_{i ∈ row} L_i(θ_row)`` with ``agent_losses(params) -> [n]`` (the losses of
    the agents under their row's parameters). Adam is elementwise, so stacked per-agent models train exactly as
    separate ones; a shared row averages its agents' losses."""
    grads = jax.grad(lambda p: jnp.sum(row_mean(agent_losses(p), shared)))(params)
    updates, opt_state = optax.adam(learning_rate).update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state


@dataclasses.dataclass(frozen=True, kw_only=True)
class RND(IntrinsicLayer):
    """Random network distillation ``b = ‖f(x') − f̂(x')‖²`` (Burda et al. 2019, §2.2).

    ``f`` is a fixed random MLP, ``f̂`` a predictor MLP trained by one Adam step per apply on the agents'
    next observations; ``x' = clip((s' − μ)/σ, ±obs_clip)`` with Welford running moments of ``s'``
    (updated before the bonus is computed). ``normalize=True`` by default (the paper's reward normalisation).
    Per agent: one predictor and one set of moments per agent; shared: one of each, trained on all agents.
    """

    hidden: int = 64
    features: int = 32
    learning_rate: float = 1e-3
    obs_clip: float = 5.0
    normalize: bool = True
    name: str = "rnd"
    MODEL_KEY: ClassVar[str] = "predictor"

    def init_core(self, key, spec):
        return init_rnd(key, spec, self.hidden, self.features, self.learning_rate, self.rows(spec.n_agents))

    def _inputs(self, core, transition):
        rows = agent_rows(transition.next_obs.shape[0], self.shared)
        return whiten(transition.next_obs, core["obs_moments"], rows, self.obs_clip), rows

    def observe(self, core, transition):
        return {**core, "obs_moments": merge_moments(core["obs_moments"], pooled(transition.next_obs, self.shared))}

    def compute(self, core, transition):
        return self.model_losses(core, core["predictor"], transition)

    def model_losses(self, core, params, transition):
        inputs, rows = self._inputs(core, transition)
        return rnd_errors(params, jax.lax.stop_gradient(core["target"]), inputs, rows)


# ----- 3. episodic novelty (NGU) -----
EMBEDDINGS = ("projection", "rnd_target")


@dataclasses.dataclass(frozen=True, kw_only=True)
class EpisodicNovelty(IntrinsicLayer):
    """NGU episodic novelty ``b = 1 / (√(1 + Σ_{k∈N_k} K(x, x_k)) + c)`` (Badia et al. 2020, Alg. 1).

    ``x = g(s')`` is a fixed random embedding (``embedding="projection"``: ``A s'``; ``"rnd_target"``: an RND
    target MLP). ``N_k`` are the ``neighbours`` nearest embeddings in the episodic memory (a ring buffer of
    ``memory_size`` per agent, or one shared buffer that all agents write to), emptied when the episode ends
    (``terminated | truncated``). ``K(x, y) = ε / (max(d²(x, y)/d̄² − ξ, 0) + ε)`` with ``d̄²`` the running mean
    of the squared k-NN distances. The current embedding counts as its own neighbour (``K = 1``, the ``1 +``),
    so ``b ≤ 1/(1 + c)`` even with an empty memory; the memory is written after the bonus is computed.
    """

    memory_size: int = 128
    neighbours: int = 10
    embed_size: int = 16
    embedding: str = "projection"
    kernel_epsilon: float = 1e-3
    cluster_distance: float = 8e-3
    pseudo_count: float = 1e-3
    name: str = "novelty"

    def __post_init__(self):
        super().__post_init__()
        if not 1 <= self.neighbours <= self.memory_size:
            raise ValueError(f"{self.name}: need 1 <= neighbours <= memory_size, got {self.neighbours}, {self.memory_size}")

    def init_core(self, key, spec):
        if self.shared and spec.n_agents > self.memory_size:
            raise ValueError(f"{self.name}: a shared memory needs memory_size >= n_agents ({spec.n_agents})")
        rows = self.rows(spec.n_agents)
        if self.embedding == "projection":
            embedder = {"projection": random_projection(key, spec.obs_size, self.embed_size)}
        else:
            embedder = {"target": mlp_init(key, (spec.obs_size, 64, 64, self.embed_size), bias_scale=0.5)}
        return {
            "embedder": embedder,
            "memory": jnp.zeros((rows, self.memory_size, self.embed_size), jnp.float32),
            "filled": jnp.zeros(rows, jnp.int32),
            "write": jnp.zeros(rows, jnp.int32),
            "distance_sum": jnp.zeros(rows, jnp.float32),
            "distance_count": jnp.zeros(rows, jnp.float32),
        }

    def embed(self, core, obs: Array) -> Array:
        embedder = core["embedder"]
        return obs @ embedder["projection"] if "projection" in embedder else mlp_apply(embedder["target"], obs)

    def _neighbours(self, core, transition):
        """Squared distances to the ``neighbours`` nearest stored embeddings ``[n, k]`` and their validity."""
        n = transition.next_obs.shape[0]
        rows = agent_rows(n, self.shared)
        x = self.embed(core, transition.next_obs)
        d2 = jnp.sum((core["memory"][rows] - x[:, None]) ** 2, axis=-1)  # [n, M]
        stored = jnp.arange(self.memory_size)[None] < core["filled"][rows][:, None]
        negative, _ = jax.lax.top_k(jnp.where(stored, -d2, -jnp.inf), self.neighbours)
        return -negative, jnp.isfinite(negative), rows

    def observe(self, core, transition):
        d2, valid, _ = self._neighbours(core, transition)
        per_agent_sum = jnp.sum(jnp.where(valid, d2, 0.0), axis=-1)
        per_agent_count = jnp.sum(valid, axis=-1).astype(jnp.float32)
        return {
            **core,
            "distance_sum": core["distance_sum"] + row_sum(per_agent_sum, self.shared),
            "distance_count": core["distance_count"] + row_sum(per_agent_count, self.shared),
        }

    def compute(self, core, transition):
        d2, valid, rows = self._neighbours(core, transition)
        count = core["distance_count"][rows]
        mean_d2 = jnp.where(count > 0, core["distance_sum"][rows] / jnp.maximum(count, 1.0), 1.0)
        normalised = jnp.maximum(d2 / jnp.maximum(mean_d2, 1e-12)[:, None] - self.cluster_distance, 0.0)
        kernel = jnp.where(valid, self.kernel_epsilon / (normalised + self.kernel_epsilon), 0.0)
        return 1.0 / (jnp.sqrt(1.0 + jnp.sum(kernel, axis=-1)) + self.pseudo_count)

    def update(self, core, transition):
        memory, write, filled = ring_write(core, self.embed(core, transition.next_obs), self.shared)
        ended = episode_ended(transition)
        return {**core, "memory": memory, "write": jnp.where(ended, 0, write), "filled": jnp.where(ended, 0, filled)}


def ring_write(core: dict, values: Array, shared: bool) -> tuple[Array, Array, Array]:
    """Write each agent's ``values [n, e]`` into its row of the ring buffer ``core["memory"] [rows, M, e]``
    (a shared row takes all ``n`` in agent order) → ``(memory, write, filled)`` (write position, entries held)."""
    n, size = values.shape[0], core["memory"].shape[1]
    rows = agent_rows(n, shared)
    per_row = n if shared else 1
    rank = jnp.arange(n) if shared else jnp.zeros(n, jnp.int32)
    slots = (core["write"][rows] + rank) % size
    memory = core["memory"].at[rows, slots].set(values)
    return memory, (core["write"] + per_row) % size, jnp.minimum(core["filled"] + per_row, size)


def row_sum(values: Array, shared: bool) -> Array:
    return jnp.sum(values, keepdims=True) if shared else values


# ----- 4. impact (RIDE) -----
@dataclasses.dataclass(frozen=True, kw_only=True)
class ImpactBonus(IntrinsicLayer):
    """RIDE impact ``b = ‖φ(s') − φ(s)‖₂ / √N_ep(s')`` (Raileanu & Rocktäschel 2020, Eq. 3).

    ``φ(s) = A s`` is a fixed random projection (RIDE learns ``φ`` with forward/inverse models; a fixed one
    keeps the layer model-free). ``N_ep`` is an episodic SimHash count (``bits`` sign bits into ``2^table_bits``
    entries per agent, or one shared table) incremented before it is read and emptied at episode end.
    """

    embed_size: int = 16
    bits: int = 16
    table_bits: int = 10
    name: str = "impact"

    def init_core(self, key, spec):
        embed_key, hash_key = jax.random.split(key)
        return {
            "embedding": random_projection(embed_key, spec.obs_size, self.embed_size),
            "hash": random_projection(hash_key, spec.obs_size, self.bits),
            "counts": jnp.zeros((self.rows(spec.n_agents), 2**self.table_bits), jnp.int32),
        }

    def _count_index(self, core, transition):
        rows = agent_rows(transition.next_obs.shape[0], self.shared)
        return rows, simhash_buckets(core["hash"], transition.next_obs, self.table_bits)

    def observe(self, core, transition):
        rows, buckets = self._count_index(core, transition)
        return {**core, "counts": core["counts"].at[rows, buckets].add(1)}

    def compute(self, core, transition):
        rows, buckets = self._count_index(core, transition)
        change = (transition.next_obs - transition.obs) @ core["embedding"]
        counts = jnp.maximum(core["counts"][rows, buckets], 1).astype(jnp.float32)
        return jnp.linalg.norm(change, axis=-1) * jax.lax.rsqrt(counts)

    def update(self, core, transition):
        return {**core, "counts": jnp.where(episode_ended(transition), 0, core["counts"])}


# ----- 5. learning progress -----
@dataclasses.dataclass(frozen=True, kw_only=True)
class LearningProgress(IntrinsicLayer):
    """Learning progress ``b = |ē_fast − ē_slow|``: the absolute change of the RND prediction error ``e``
    (``‖f(x') − f̂(x')‖²``, see :class:`RND`), measured as the gap between a fast and a slow bias-corrected
    EMA (rates ``fast_rate`` > ``slow_rate``) of each agent's error (shared: of the agents' mean error).

    ``ē_t = EMA_t / (1 − (1 − α)^t)`` (Adam-style bias correction), so ``b = 0`` on the first step; the bonus
    rises while the predictor is improving (or failing) on what the agent sees and fades once its error is
    stationary.
    """

    fast_rate: float = 0.1
    slow_rate: float = 0.01
    hidden: int = 64
    features: int = 32
    learning_rate: float = 1e-3
    obs_clip: float = 5.0
    name: str = "learning_progress"
    MODEL_PATH: ClassVar[tuple[str, ...]] = ("rnd",)
    MODEL_KEY: ClassVar[str] = "predictor"

    def __post_init__(self):
        super().__post_init__()
        if not 0.0 < self.slow_rate < self.fast_rate <= 1.0:
            raise ValueError(f"{self.name}: need 0 < slow_rate < fast_rate <= 1, got {self.slow_rate}, {self.fast_rate}")

    def init_core(self, key, spec):
        rows = self.rows(spec.n_agents)
        return {
            "rnd": init_rnd(key, spec, self.hidden, self.features, self.learning_rate, rows),
            "fast": jnp.zeros(rows, jnp.float32),
            "slow": jnp.zeros(rows, jnp.float32),
            "ema_steps": jnp.float32(0.0),
        }

    def _inputs(self, core, transition):
        rows = agent_rows(transition.next_obs.shape[0], self.shared)
        return whiten(transition.next_obs, core["rnd"]["obs_moments"], rows, self.obs_clip), rows

    def observe(self, core, transition):
        moments = merge_moments(core["rnd"]["obs_moments"], pooled(transition.next_obs, self.shared))
        core = {**core, "rnd": {**core["rnd"], "obs_moments": moments}}
        inputs, rows = self._inputs(core, transition)
        error = row_mean(rnd_errors(core["rnd"]["predictor"], core["rnd"]["target"], inputs, rows), self.shared)
        return {
            **core,
            "fast": core["fast"] + self.fast_rate * (error - core["fast"]),
            "slow": core["slow"] + self.slow_rate * (error - core["slow"]),
            "ema_steps": core["ema_steps"] + 1.0,
        }

    def compute(self, core, transition):
        rows = agent_rows(transition.next_obs.shape[0], self.shared)
        t = core["ema_steps"]
        fast = core["fast"] / (1.0 - (1.0 - self.fast_rate) ** t)
        slow = core["slow"] / (1.0 - (1.0 - self.slow_rate) ** t)
        return jnp.abs(fast - slow)[rows]

    def model_losses(self, core, params, transition):
        inputs, rows = self._inputs(core, transition)
        return rnd_errors(params, jax.lax.stop_gradient(core["rnd"]["target"]), inputs, rows)


# ----- argument ranges (checked by IntrinsicLayer.__post_init__) -----
#: the schedule ``c_t`` and the normaliser of every intrinsic layer
SCHEDULE_ARGUMENTS = {
    "coef": real(),
    "decay": real(0.0, 1.0, low_open=True),
    "linear_decay_steps": integer(0),
    "normalize": flag(),
    "gamma": real(0.0, 1.0, high_open=True),
    "shared": flag(),
    "train_on": choice("step", "rollout"),
    "fit_epochs": integer(1),
    "fit_minibatches": integer(1),
}
#: the layers that learn a model (``train_on`` chooses when it trains)
TRAINED_LAYERS = ("rnd", "learning_progress", "icm", "disagreement", "e3b", "empowerment")
HASH_ARGUMENTS = {"bits": integer(1, 32), "table_bits": integer(1, 24, note="a table of 2^table_bits counts")}
NETWORK_ARGUMENTS = {
    "hidden": integer(1),
    "features": integer(1),
    "learning_rate": real(0.0, low_open=True),
    "obs_clip": real(0.0, low_open=True),
}
#: layer class → its own arguments
LAYER_ARGUMENTS = {
    "CountBonus": HASH_ARGUMENTS,
    "RND": NETWORK_ARGUMENTS,
    "EpisodicNovelty": {
        "memory_size": integer(1),
        "neighbours": integer(1),
        "embed_size": integer(1),
        "embedding": choice(*EMBEDDINGS),
        "kernel_epsilon": real(0.0, low_open=True),
        "cluster_distance": real(0.0),
        "pseudo_count": real(0.0),
    },
    "ImpactBonus": {"embed_size": integer(1), **HASH_ARGUMENTS},
    "LearningProgress": {"fast_rate": real(0.0, 1.0, low_open=True), "slow_rate": real(0.0, 1.0, low_open=True)} | NETWORK_ARGUMENTS,
}


# ----- constructors -----
def count(coef: float = 1.0, **options: Any) -> CountBonus:
    return CountBonus(coef=float(coef), **options)


def rnd(coef: float = 1.0, **options: Any) -> RND:
    return RND(coef=float(coef), **options)


def novelty(coef: float = 1.0, **options: Any) -> EpisodicNovelty:
    return EpisodicNovelty(coef=float(coef), **options)


def impact(coef: float = 1.0, **options: Any) -> ImpactBonus:
    return ImpactBonus(coef=float(coef), **options)


def learning_progress(coef: float = 1.0, **options: Any) -> LearningProgress:
    return LearningProgress(coef=float(coef), **options)


def intrinsic_totals(state: dict) -> dict[str, Array]:
    """``{"bonus": Σ b, "reward": Σ r, "steps": t}`` of one intrinsic layer state (any leading batch dims)."""
    return {**state["totals"], "steps": state["step"]}
