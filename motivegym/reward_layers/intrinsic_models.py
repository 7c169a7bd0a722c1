"""Model-based and selection intrinsic layers (RLeXplore's breadth), on the driver of :mod:`.intrinsic`.

Every layer here is an :class:`~motivegym.reward_layers.intrinsic.IntrinsicLayer`: the same schedule ``c_t``,
optional return normalisation, ``shared`` rows and ``totals`` (see that module's docstring); models are small
MLPs, one per statistics row, trained online by one Adam step per apply (:func:`.intrinsic.row_adam_step`), or
with ``train_on="rollout"`` on whole rollouts by the learner (:meth:`.intrinsic.IntrinsicLayer.fit_rollout`).

Layers: :class:`ICM` (Pathak et al. 2017), :class:`Disagreement` (Pathak et al. 2019), :class:`E3B` (Henaff et al.
2022), :class:`RE3` (Seo et al. 2021), :class:`Empowerment` (one-step, Mohamed & Rezende 2015 / Klyubin et al.
2005) and :class:`AutoBonus` (AIRS-style bandit selection, Yuan et al. 2023).

**Actions.** Layers that read ``transition.actions`` encode them as ``u(a)``: an integer action of a discrete env
is one-hot over ``num_actions`` (the layer option, else ``LayerSpec.action_size``, which ``MultiAgentPPO`` sets to
the env's number of actions); a float action of a continuous env is its value, ``[n]`` or ``[n, d]`` with
``d = num_actions or LayerSpec.action_size`` (``1`` for the one-scalar actions of the motivegym envs). A discrete
action with fewer than 2 known actions raises ``ValueError`` at trace time.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, ClassVar

import jax
import jax.numpy as jnp
import optax

from motivegym.core.params import choice, integer, real
from motivegym.reward_layers.base import LayerSpec, fit_each
from motivegym.reward_layers.intrinsic import (
    LAYER_ARGUMENTS,
    RND,
    CountBonus,
    EpisodicNovelty,
    ImpactBonus,
    IntrinsicLayer,
    LearningProgress,
    agent_rows,
    empty_moments,
    episode_ended,
    merge_moments,
    mlp_apply,
    mlp_init,
    random_projection,
    ring_write,
    row_mean,
)

Array = jax.Array


# ----- shared pieces: action encoding, per-row models -----
def action_features(layer: str, actions: Array, n_agents: int, width: int) -> tuple[Array, bool]:
    """``(u(a) [n, width], discrete)``: one-hot of integer actions, the float actions themselves otherwise."""
    if jnp.issubdtype(actions.dtype, jnp.integer) or actions.dtype == jnp.bool_:
        if width < 2:
            raise ValueError(
                f"the {layer!r} reward layer got discrete actions but knows {width} action(s): pass num_actions=K "
                "or build it with LayerSpec(action_size=K)"
            )
        return jax.nn.one_hot(actions.reshape(n_agents), width, dtype=jnp.float32), True
    features = actions.reshape(n_agents, -1).astype(jnp.float32)
    if features.shape[1] != width:
        raise ValueError(f"the {layer!r} reward layer expects continuous actions of size {width}, got shape {actions.shape}")
    return features, False


def action_width(layer: IntrinsicLayer, spec: LayerSpec) -> int:
    return layer.num_actions or spec.action_size  # type: ignore[attr-defined]


def row_models(key: Array, rows: int, init_one: Any) -> Any:
    """``rows`` independently initialised models ``init_one(key)`` stacked along a leading axis."""
    return jax.vmap(init_one)(jax.random.split(key, rows))


def gather_rows(params: Any, rows: Array) -> Any:
    """The row of stacked parameters each agent uses: ``[n, ...]`` leaves."""
    return jax.tree.map(lambda p: p[rows], params)


def inverse_dynamics_loss(model: dict, phi: Array, phi_next: Array, action: Array, discrete: bool) -> Array:
    """``L_I``: cross-entropy of ``a`` under ``softmax(g(φ(s), φ(s')))`` (discrete) or ``½‖g(·) − a‖²`` (continuous)."""
    output = mlp_apply(model["inverse"], jnp.concatenate([phi, phi_next]))
    if discrete:
        return -jnp.sum(action * jax.nn.log_softmax(output))
    return 0.5 * jnp.sum((output - action) ** 2)


def inverse_dynamics_model(key: Array, obs_size: int, hidden: int, embed_size: int, width: int) -> dict:
    """Embedding ``φ: s ↦ R^e`` and inverse head ``g: (φ(s), φ(s')) ↦`` action logits / action."""
    embed_key, inverse_key = jax.random.split(key)
    return {
        "embed": mlp_init(embed_key, (obs_size, hidden, embed_size)),
        "inverse": mlp_init(inverse_key, (2 * embed_size, hidden, width)),
    }


def sherman_morrison(inverse: Array, phi: Array) -> Array:
    """``(C + φφᵀ)⁻¹ = C⁻¹ − C⁻¹φφᵀC⁻¹ / (1 + φᵀC⁻¹φ)`` (``C`` symmetric)."""
    u = inverse @ phi
    return inverse - jnp.outer(u, u) / (1.0 + phi @ u)


# ----- 6. ICM -----
@dataclasses.dataclass(frozen=True, kw_only=True)
class ICM(IntrinsicLayer):
    """Intrinsic curiosity ``b = ½‖f(φ(s), u(a)) − φ(s')‖²`` (Pathak et al. 2017, Eq. 5–7).

    ``φ`` (an MLP ``obs → hidden → embed_size``) is learned by inverse dynamics: ``g(φ(s), φ(s'))`` predicts the
    action (loss ``L_I``, see :func:`inverse_dynamics_loss`); the forward model ``f`` (``embed_size + |u| →
    hidden → embed_size``) predicts ``φ(s')``, loss ``L_F = b``. One Adam step per apply on
    ``(1 − β) L_I + β L_F`` with ``β = forward_weight`` (the paper's 0.2). ``L_F`` does not train ``φ``
    (stop-gradient on both embeddings in ``L_F``), so ``φ`` only encodes what the agent's actions control and
    cannot collapse to make ``b`` vanish. The bonus is read before the step. Per agent: one ``(φ, g, f)`` per
    agent; shared: one, trained on the agents' mean loss.
    """

    hidden: int = 64
    embed_size: int = 16
    forward_weight: float = 0.2
    learning_rate: float = 1e-3
    num_actions: int = 0
    name: str = "icm"
    MODEL_KEY: ClassVar[str] = "model"

    def init_core(self, key, spec):
        width = action_width(self, spec)

        def one(k):
            id_key, forward_key = jax.random.split(k)
            model = inverse_dynamics_model(id_key, spec.obs_size, self.hidden, self.embed_size, width)
            return {**model, "forward": mlp_init(forward_key, (self.embed_size + width, self.hidden, self.embed_size))}

        model = row_models(key, self.rows(spec.n_agents), one)
        return {"model": model, "opt_state": optax.adam(self.learning_rate).init(model)}

    def _losses(self, model, transition, rows):
        """``(L_I, L_F)`` per agent, each under its row's model."""
        n = transition.next_obs.shape[0]
        width = model["forward"][0]["w"].shape[-2] - self.embed_size
        action, discrete = action_features(self.name, transition.actions, n, width)

        def agent(m, obs, next_obs, u):
            phi, phi_next = mlp_apply(m["embed"], obs), mlp_apply(m["embed"], next_obs)
            inverse = inverse_dynamics_loss(m, phi, phi_next, u, discrete)
            predicted = mlp_apply(m["forward"], jnp.concatenate([jax.lax.stop_gradient(phi), u]))
            return inverse, 0.5 * jnp.sum((predicted - jax.lax.stop_gradient(phi_next)) ** 2)

        return jax.vmap(agent)(gather_rows(model, rows), transition.obs, transition.next_obs, action)

    def compute(self, core, transition):
        rows = agent_rows(transition.next_obs.shape[0], self.shared)
        return self._losses(core["model"], transition, rows)[1]

    def model_losses(self, core, params, transition):
        """``(1 − β) L_I + β L_F`` per agent."""
        inverse, forward = self._losses(params, transition, agent_rows(transition.next_obs.shape[0], self.shared))
        return (1.0 - self.forward_weight) * inverse + self.forward_weight * forward


# ----- 7. disagreement -----
@dataclasses.dataclass(frozen=True, kw_only=True)
class Disagreement(IntrinsicLayer):
    """Ensemble disagreement ``b = Σ_d Var_k[f_k(φ(s), u(a))]_d`` (Pathak et al. 2019, Eq. 1–2).

    ``K = ensemble`` forward MLPs ``f_k`` (``embed_size + |u| → hidden → embed_size``, independent inits) each
    predict ``φ(s') = A s'`` with ``A`` a fixed random projection (the paper's random-feature variant); the bonus is
    the variance over the ensemble of the predictions, summed over feature dimensions (population variance,
    ``1/K``), read before one Adam step on ``mean_k ½‖f_k − φ(s')‖²``. Every member trains on the same
    transitions (the paper bootstraps minibatches; here the members differ only by initialisation). Per agent: one
    ensemble per agent; shared: one.
    """

    ensemble: int = 5
    hidden: int = 64
    embed_size: int = 16
    learning_rate: float = 1e-3
    num_actions: int = 0
    name: str = "disagreement"
    MODEL_KEY: ClassVar[str] = "models"

    def init_core(self, key, spec):
        width = action_width(self, spec)
        projection_key, model_key = jax.random.split(key)
        sizes = (self.embed_size + width, self.hidden, self.embed_size)
        models = row_models(model_key, self.rows(spec.n_agents), lambda k: row_models(k, self.ensemble, lambda m: mlp_init(m, sizes)))
        return {
            "projection": random_projection(projection_key, spec.obs_size, self.embed_size),
            "models": models,
            "opt_state": optax.adam(self.learning_rate).init(models),
        }

    def _predictions(self, models, core, transition, rows):
        """Ensemble predictions ``[n, K, e]`` and targets ``φ(s') [n, e]``."""
        n = transition.next_obs.shape[0]
        width = models[0]["w"].shape[-2] - self.embed_size
        action, _ = action_features(self.name, transition.actions, n, width)
        inputs = jnp.concatenate([transition.obs @ core["projection"], action], axis=-1)
        members = jax.vmap(jax.vmap(mlp_apply, in_axes=(0, None)))(gather_rows(models, rows), inputs)
        return members, transition.next_obs @ core["projection"]

    def compute(self, core, transition):
        rows = agent_rows(transition.next_obs.shape[0], self.shared)
        members, _ = self._predictions(core["models"], core, transition, rows)
        return jnp.sum(jnp.var(members, axis=1), axis=-1)

    def model_losses(self, core, params, transition):
        """``mean_k ½‖f_k − φ(s')‖²`` per agent."""
        members, target = self._predictions(params, core, transition, agent_rows(transition.next_obs.shape[0], self.shared))
        return jnp.mean(0.5 * jnp.sum((members - target[:, None]) ** 2, axis=-1), axis=-1)


# ----- 8. E3B -----
E3B_EMBEDDINGS = ("inverse_dynamics", "projection")


@dataclasses.dataclass(frozen=True, kw_only=True)
class E3B(IntrinsicLayer):
    """Elliptical episodic bonus ``b = φ(s')ᵀ C⁻¹ φ(s')`` (Henaff et al. 2022, Alg. 1).

    ``C = λI + Σ φ(s_k)φ(s_k)ᵀ`` over the episode's earlier next-observations (``λ = ridge``): ``C⁻¹`` starts at
    ``I/λ``, gets one Sherman–Morrison rank-1 update per agent after the bonus is read (a shared row takes its
    agents' embeddings one after another, in agent order), and is reset to ``I/λ`` when the episode ends. A
    repeated embedding's bonus falls as ``b ← b/(1 + b)``. ``embedding="inverse_dynamics"`` (the paper's) learns
    ``φ`` (an MLP ``obs → hidden → embed_size``) by one Adam step per apply on the inverse-dynamics loss
    ``L_I`` (see :class:`ICM`); ``"projection"`` uses a fixed random projection ``φ(s) = A s`` (no training).
    """

    ridge: float = 0.1
    embedding: str = "inverse_dynamics"
    hidden: int = 64
    embed_size: int = 16
    learning_rate: float = 1e-3
    num_actions: int = 0
    name: str = "e3b"
    MODEL_KEY: ClassVar[str] = "model"

    def init_core(self, key, spec):
        rows = self.rows(spec.n_agents)
        core: dict[str, Any] = {"inverse_covariance": jnp.broadcast_to(self._initial_inverse(), (rows, self.embed_size, self.embed_size))}
        if self.embedding == "projection":
            return {**core, "projection": random_projection(key, spec.obs_size, self.embed_size)}
        width = action_width(self, spec)
        model = row_models(key, rows, lambda k: inverse_dynamics_model(k, spec.obs_size, self.hidden, self.embed_size, width))
        return {**core, "model": model, "opt_state": optax.adam(self.learning_rate).init(model)}

    def _initial_inverse(self) -> Array:
        return jnp.eye(self.embed_size, dtype=jnp.float32) / self.ridge

    def embed(self, core: dict, obs: Array, rows: Array, model: Any = None) -> Array:
        if "projection" in core:
            return obs @ core["projection"]
        model = core["model"] if model is None else model
        return jax.vmap(mlp_apply)(gather_rows(model["embed"], rows), obs)

    def compute(self, core, transition):
        rows = agent_rows(transition.next_obs.shape[0], self.shared)
        phi = self.embed(core, transition.next_obs, rows)
        return jnp.einsum("nd,nde,ne->n", phi, core["inverse_covariance"][rows], phi)

    def update(self, core, transition):
        n = transition.next_obs.shape[0]
        rows = agent_rows(n, self.shared)
        phi = self.embed(core, transition.next_obs, rows)

        def add(inverse, row_phi):
            row, p = row_phi
            return inverse.at[row].set(sherman_morrison(inverse[row], p)), None

        inverse, _ = jax.lax.scan(add, core["inverse_covariance"], (rows, phi))
        inverse = jnp.where(episode_ended(transition), self._initial_inverse(), inverse)
        return {**core, "inverse_covariance": inverse}

    def trains_a_model(self):
        return self.embedding == "inverse_dynamics"

    def model_losses(self, core, params, transition):
        """The inverse-dynamics loss ``L_I`` per agent."""
        n = transition.next_obs.shape[0]
        action, discrete = action_features(self.name, transition.actions, n, params["inverse"][-1]["w"].shape[-1])

        def agent(m, obs, next_obs, u):
            return inverse_dynamics_loss(m, mlp_apply(m["embed"], obs), mlp_apply(m["embed"], next_obs), u, discrete)

        return jax.vmap(agent)(gather_rows(params, agent_rows(n, self.shared)), transition.obs, transition.next_obs, action)


# ----- 9. RE3 -----
@dataclasses.dataclass(frozen=True, kw_only=True)
class RE3(IntrinsicLayer):
    """Random-encoder state entropy ``b = log(1 + ‖y − y^{k-NN}‖₂)`` (Seo et al. 2021, Eq. 4).

    ``y = e(s')`` with ``e`` a fixed random MLP (``obs → hidden → embed_size``, never trained: the paper's random
    encoder); ``y^{k-NN}`` is the ``neighbours``-th nearest of the embeddings in a ring buffer of the last
    ``memory_size`` next-observations (per agent, or one shared buffer that all agents write to; not reset at
    episode end: RE3 estimates the entropy of the state-visitation distribution, not of one episode). While the
    buffer holds ``m < k`` entries the ``m``-th nearest is used, and the bonus is ``0`` on an empty buffer. The
    buffer is written after the bonus is read.
    """

    memory_size: int = 128
    neighbours: int = 3
    hidden: int = 64
    embed_size: int = 16
    name: str = "re3"

    def __post_init__(self):
        super().__post_init__()
        if not 1 <= self.neighbours <= self.memory_size:
            raise ValueError(f"{self.name}: need 1 <= neighbours <= memory_size, got {self.neighbours}, {self.memory_size}")

    def init_core(self, key, spec):
        if self.shared and spec.n_agents > self.memory_size:
            raise ValueError(f"{self.name}: a shared memory needs memory_size >= n_agents ({spec.n_agents})")
        rows = self.rows(spec.n_agents)
        return {
            "encoder": mlp_init(key, (spec.obs_size, self.hidden, self.embed_size), bias_scale=0.5),
            "memory": jnp.zeros((rows, self.memory_size, self.embed_size), jnp.float32),
            "filled": jnp.zeros(rows, jnp.int32),
            "write": jnp.zeros(rows, jnp.int32),
        }

    def compute(self, core, transition):
        rows = agent_rows(transition.next_obs.shape[0], self.shared)
        y = mlp_apply(core["encoder"], transition.next_obs)
        distance = jnp.linalg.norm(core["memory"][rows] - y[:, None], axis=-1)  # [n, M]
        filled = core["filled"][rows]
        stored = jnp.arange(self.memory_size)[None] < filled[:, None]
        nearest = -jax.lax.top_k(jnp.where(stored, -distance, -jnp.inf), self.neighbours)[0]  # ascending
        kth = jnp.take_along_axis(nearest, (jnp.clip(filled, 1, self.neighbours) - 1)[:, None], axis=-1)[:, 0]
        return jnp.where(filled > 0, jnp.log1p(jnp.where(filled > 0, kth, 0.0)), 0.0)

    def update(self, core, transition):
        memory, write, filled = ring_write(core, mlp_apply(core["encoder"], transition.next_obs), self.shared)
        return {**core, "memory": memory, "write": write, "filled": filled}


# ----- 10. empowerment -----
@dataclasses.dataclass(frozen=True, kw_only=True)
class Empowerment(IntrinsicLayer):
    """One-step empowerment estimate of ``s'`` under a learned Gaussian forward model, discrete actions only.

    Empowerment is the channel capacity ``max_{p(a)} I(A; S_{+1} | s)`` (Klyubin et al. 2005; Mohamed & Rezende
    2015). What this layer estimates, exactly: the Kolchinsky & Tracey (2017, Eq. 10) Bhattacharyya lower bound
    on ``I(A; Y | s')`` with ``A`` uniform over the ``K`` actions and the model channel
    ``Y | a ~ N(μ_a, σ² I)``, ``μ_a = f(φ(s'), e_a)``, ``φ(s) = P s`` a fixed random projection and
    ``σ² = noise_variance``:

    ``b = log K − (1/K) Σ_a log Σ_b exp(−‖μ_a − μ_b‖² / (8σ²))``,

    so ``0 ≤ b ≤ log K`` (``0`` where every action is predicted to lead to the same next embedding, ``→ log K``
    where they all lead far apart) and ``b ≤ I(uniform) ≤`` empowerment. The forward model ``f`` (an MLP
    ``embed_size + K → hidden → embed_size``) is trained by one Adam step per apply on ``½‖f(φ(s), e_a) − φ(s')‖²``
    after the bonus is read. Per agent: one model per agent; shared: one.
    """

    noise_variance: float = 0.1
    hidden: int = 64
    embed_size: int = 16
    learning_rate: float = 1e-3
    num_actions: int = 0
    name: str = "empowerment"
    MODEL_KEY: ClassVar[str] = "model"

    def init_core(self, key, spec):
        width = action_width(self, spec)
        if width < 2:
            raise ValueError(f"{self.name}: needs discrete actions with num_actions >= 2 (or LayerSpec.action_size), got {width}")
        projection_key, model_key = jax.random.split(key)
        sizes = (self.embed_size + width, self.hidden, self.embed_size)
        model = row_models(model_key, self.rows(spec.n_agents), lambda k: mlp_init(k, sizes))
        return {
            "projection": random_projection(projection_key, spec.obs_size, self.embed_size),
            "model": model,
            "opt_state": optax.adam(self.learning_rate).init(model),
        }

    def _width(self, core):
        return core["model"][0]["w"].shape[-2] - self.embed_size

    def compute(self, core, transition):
        n = transition.next_obs.shape[0]
        rows = agent_rows(n, self.shared)
        width = self._width(core)
        if not jnp.issubdtype(transition.actions.dtype, jnp.integer):
            raise ValueError(f"{self.name}: one-step empowerment is estimated for discrete (integer) actions only")
        phi = transition.next_obs @ core["projection"]
        eye = jnp.eye(width, dtype=jnp.float32)

        def agent(m, p):
            means = jax.vmap(lambda e: mlp_apply(m, jnp.concatenate([p, e])))(eye)  # [K, e]
            distance = jnp.sum((means[:, None] - means[None]) ** 2, axis=-1)
            return math.log(width) - jnp.mean(jax.nn.logsumexp(-distance / (8.0 * self.noise_variance), axis=-1))

        return jax.vmap(agent)(gather_rows(core["model"], rows), phi)

    def model_losses(self, core, params, transition):
        """``½‖f(φ(s), e_a) − φ(s')‖²`` per agent."""
        n = transition.next_obs.shape[0]
        action, _ = action_features(self.name, transition.actions, n, self._width(core))
        inputs = jnp.concatenate([transition.obs @ core["projection"], action], axis=-1)
        predicted = jax.vmap(mlp_apply)(gather_rows(params, agent_rows(n, self.shared)), inputs)
        return 0.5 * jnp.sum((predicted - transition.next_obs @ core["projection"]) ** 2, axis=-1)


# ----- 11. automatic selection (AIRS-style) -----
#: every intrinsic layer by name (what ``AutoBonus.arms`` may list)
INTRINSIC_LAYER_CLASSES: dict[str, type[IntrinsicLayer]] = {
    "count": CountBonus,
    "rnd": RND,
    "novelty": EpisodicNovelty,
    "impact": ImpactBonus,
    "learning_progress": LearningProgress,
    "icm": ICM,
    "disagreement": Disagreement,
    "e3b": E3B,
    "re3": RE3,
    "empowerment": Empowerment,
}
#: the default arms of ``auto``: every layer that works with both discrete and continuous actions
DEFAULT_ARMS = ("count", "rnd", "novelty", "impact", "learning_progress", "icm", "disagreement", "e3b", "re3")


@dataclasses.dataclass(frozen=True, kw_only=True)
class AutoBonus(IntrinsicLayer):
    """Automatic intrinsic-reward selection by a UCB1 bandit over ``arms``, one arm per PPO update (AIRS, Yuan et
    al. 2023).

    Every arm (an intrinsic layer with default options and this layer's ``shared``) is applied at every step, so
    all arms keep learning; the bonus is the reward ``r^{(a_k)}`` (the arm's own schedule and normalisation
    included) of the arm ``a_k`` that is active during rollout ``k``. The learner's update after rollout ``k``
    trains on that arm's rewards, and its effect shows in rollout ``k+1``, so after rollout ``k+1``
    (:meth:`fit_rollout`) the arm gets the **credit** ``R_{k+1} − R_k``: the change in the row's mean extrinsic
    payoff per step (mean over the rollout's steps and envs, and over the row's agents when shared). Per row the
    bandit keeps pulls ``n_a`` and mean credits ``Q_a`` and picks the next rollout's arm
    ``argmax_a Q_a + ucb_scale · σ · √(2 ln Σ_b n_b / n_a)`` (untried arms first, lowest index first; the arm
    whose credit is still to come counts as pulled), ``σ`` the standard deviation of the credits seen so far (so
    ``ucb_scale`` does not depend on the payoff's scale). The
    selection is global: every env copy uses the same arm, as one policy learns from all of them.

    A per-episode choice cannot be credited: an episode's behaviour does not depend on which bonus is active
    during it (the policy does not see the arm), so only the update trained on an arm's rewards can show its
    effect. The bandit therefore needs a learner that calls :meth:`fit_rollout` after each rollout
    (``MultiAgentPPO``); doors that apply layers step by step refuse ``auto``. ``train_on`` applies to the arms
    that learn a model. ``state["core"]["pulls"]`` and ``["values"]`` show what the bandit learnt; ``["active"]``
    the arm in use.
    """

    arms: tuple[str, ...] = DEFAULT_ARMS
    ucb_scale: float = 1.0
    name: str = "auto"

    def __post_init__(self):
        arms = self.arms
        if isinstance(arms, str) or not isinstance(arms, tuple) or not arms:
            raise ValueError(f"{self.name}: arms must be a non-empty tuple of intrinsic layer names, got {arms!r}")
        unknown = [a for a in arms if a not in INTRINSIC_LAYER_CLASSES]
        if unknown:
            raise ValueError(f"{self.name}: unknown arm(s) {unknown}; choose from {sorted(INTRINSIC_LAYER_CLASSES)}")
        if len(set(arms)) != len(arms):
            raise ValueError(f"{self.name}: an arm is listed twice in {arms!r}")
        super().__post_init__()  # after the arms are known: it checks train_on against them

    def check_train_on(self) -> None:
        if self.train_on == "rollout" and not any(arm.trains_a_model() for arm in self.arm_layers):
            raise ValueError(f"{self.name}: train_on='rollout' needs an arm that learns a model; {'/'.join(self.arms)} have none")

    def fits_on_rollouts(self) -> bool:
        return True  # the bandit steps once per rollout, whatever train_on says of the arms

    @property
    def arm_layers(self) -> tuple[IntrinsicLayer, ...]:
        """The arms with default options, this layer's ``shared``, and its ``train_on`` where the arm learns a model."""
        arms = tuple(INTRINSIC_LAYER_CLASSES[a](shared=self.shared) for a in self.arms)
        if self.train_on == "step":
            return arms
        fit = {"train_on": self.train_on, "fit_epochs": self.fit_epochs, "fit_minibatches": self.fit_minibatches}
        return tuple(dataclasses.replace(arm, **fit) if arm.trains_a_model() else arm for arm in arms)

    def init_core(self, key, spec):
        rows, k = self.rows(spec.n_agents), len(self.arms)
        keys = jax.random.split(key, k)
        return {
            "arms": tuple(layer.init(kk, spec) for kk, layer in zip(keys, self.arm_layers)),
            "arm_rewards": jnp.zeros((k, spec.n_agents), jnp.float32),
            "active": jnp.zeros(rows, jnp.int32),
            "pulls": jnp.zeros((rows, k), jnp.float32),
            "values": jnp.zeros((rows, k), jnp.float32),
            "credited_arm": jnp.full(rows, -1, jnp.int32),  # the arm whose update the next rollout shows
            "last_return": jnp.zeros(rows, jnp.float32),
            "credit_moments": empty_moments((rows,)),
        }

    def observe(self, core, transition):
        results = [layer.apply(s, transition) for layer, s in zip(self.arm_layers, core["arms"])]
        return {**core, "arms": tuple(s for s, _, _ in results), "arm_rewards": jnp.stack([r for _, r, _ in results])}

    def compute(self, core, transition):
        n = transition.next_obs.shape[0]
        return core["arm_rewards"][core["active"][agent_rows(n, self.shared)], jnp.arange(n)]

    def fit_rollout(self, states, transitions, key):
        """Every arm that trains on rollouts fits its model (:meth:`IntrinsicLayer.fit_rollout`); then the bandit
        credits the arm of the previous rollout and picks the next one (:meth:`bandit_step`), the same for every env."""
        arms = fit_each(self.arm_layers, states["core"]["arms"], transitions, key)
        payoffs = transitions.payoffs
        payoffs = payoffs.reshape(payoffs.shape[:3] + (-1,)).sum(-1).astype(jnp.float32)  # [T, E, n]
        rollout_return = row_mean(payoffs.mean(axis=(0, 1)), self.shared)  # row_mean is linear: mean first
        bandit = self.bandit_step(jax.tree.map(lambda x: x[0], states["core"]), rollout_return)
        envs = payoffs.shape[1]
        bandit = jax.tree.map(lambda x: jnp.broadcast_to(x, (envs,) + x.shape), bandit)
        return {**states, "core": {**states["core"], **bandit, "arms": arms}}

    def bandit_step(self, core: dict, rollout_return: Array) -> dict:
        """Credit ``R_k − R_{k−1}`` to the arm of rollout ``k−1`` (none before two rollouts), then UCB picks the arm
        of rollout ``k+1``; ``rollout_return [rows]`` is ``R_k``."""
        has_credit = core["credited_arm"] >= 0
        credit = rollout_return - core["last_return"]
        chosen = jax.nn.one_hot(core["credited_arm"], len(self.arms), dtype=jnp.float32) * has_credit[:, None]
        pulls = core["pulls"] + chosen
        values = core["values"] + chosen * (credit[:, None] - core["values"]) / jnp.maximum(pulls, 1.0)
        merged = merge_moments(core["credit_moments"], credit[:, None])
        moments = jax.tree.map(lambda new, old: jnp.where(has_credit[0], new, old), merged, core["credit_moments"])  # rows agree
        in_flight = pulls + jax.nn.one_hot(core["active"], len(self.arms), dtype=jnp.float32)  # its credit comes next
        total = jnp.sum(in_flight, axis=-1, keepdims=True)
        scale = jnp.sqrt(moments.var)[:, None]
        bonus = self.ucb_scale * scale * jnp.sqrt(2.0 * jnp.log(total) / in_flight.clip(1.0))
        score = jnp.where(in_flight > 0, values + bonus, jnp.inf)
        return {
            "active": jnp.argmax(score, axis=-1).astype(jnp.int32),
            "credited_arm": core["active"],
            "pulls": pulls,
            "values": values,
            "last_return": rollout_return,
            "credit_moments": moments,
        }


# ----- argument ranges (checked by IntrinsicLayer.__post_init__) -----
_MODEL_ARGUMENTS = {
    "hidden": integer(1),
    "embed_size": integer(1),
    "learning_rate": real(0.0, low_open=True),
    "num_actions": integer(0, note="0: LayerSpec.action_size"),
}
LAYER_ARGUMENTS.update(
    {
        "ICM": _MODEL_ARGUMENTS | {"forward_weight": real(0.0, 1.0)},
        "Disagreement": _MODEL_ARGUMENTS | {"ensemble": integer(2)},
        "E3B": _MODEL_ARGUMENTS | {"ridge": real(0.0, low_open=True), "embedding": choice(*E3B_EMBEDDINGS)},
        "RE3": {"memory_size": integer(1), "neighbours": integer(1), "hidden": integer(1), "embed_size": integer(1)},
        "Empowerment": _MODEL_ARGUMENTS | {"noise_variance": real(0.0, low_open=True)},
        "AutoBonus": {"ucb_scale": real(0.0)},
    }
)


# ----- constructors -----
def icm(coef: float = 1.0, **options: Any) -> ICM:
    return ICM(coef=float(coef), **options)


def disagreement(coef: float = 1.0, **options: Any) -> Disagreement:
    return Disagreement(coef=float(coef), **options)


def e3b(coef: float = 1.0, **options: Any) -> E3B:
    return E3B(coef=float(coef), **options)


def re3(coef: float = 1.0, **options: Any) -> RE3:
    return RE3(coef=float(coef), **options)


def empowerment(coef: float = 1.0, **options: Any) -> Empowerment:
    return Empowerment(coef=float(coef), **options)


def auto(coef: float = 1.0, **options: Any) -> AutoBonus:
    return AutoBonus(coef=float(coef), **options)


