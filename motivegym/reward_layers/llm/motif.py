"""Motif (Klissarov et al. 2023): LLM preferences over captions, distilled into a JAX reward model.

1. :func:`collect_pairs`: random rollouts; pairs of visited states with their captions
   (:mod:`motivegym.core.captions`) and per-agent observations ``[n, d]``.
2. :func:`annotate_pairs`: the LLM says which caption is closer to an objective (label ``0``: the
   first, ``1``: the second, ``2``: tie, ``None``: unparseable); resumable from a labels file.
3. :func:`distill`: a small MLP ``f`` fitted with the Bradley-Terry loss (Motif Eq. 1)
   ``L = −E[y log σ(s_B − s_A) + (1 − y) log σ(s_A − s_B)]``, ``y ∈ {0, ½, 1}``.
4. :class:`LearnedReward`: ``r_i = c · (f(next_obs_i) − μ_f) / σ_f`` inside the jitted loop.

**Feature choice.** The LLM judges captions, but a reward layer only sees arrays. ``distill`` therefore
fits ``f`` on either feature kind: ``"obs"`` (the per-agent observation rows of each state; the state
score is ``s = mean_i f(o_i)``), which runs inside ``jax.jit`` and is what :class:`LearnedReward` uses,
or ``"text"`` (hashed n-gram encodings of the captions, :mod:`.text`), scored on the host with
:func:`score_captions` (a diagnostic of how learnable the labels are from the text alone). Inputs are
standardised with the training mean/std, and ``(μ_f, σ_f)`` are ``f``'s mean/std over the training
rows (Motif normalises its reward the same way).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import re
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax

from motivegym.core.batching import auto_reset_batch_step, batched_reset, random_actions
from motivegym.core.captions import caption
from motivegym.core.env import Transition
from motivegym.reward_layers.base import RewardLayer
from motivegym.reward_layers.llm.client import LLMClient, append_json_lines, read_json_lines
from motivegym.reward_layers.llm.text import DEFAULT_DIM, encode_texts

Array = jax.Array

PREFER_FIRST, PREFER_SECOND, TIE = 0, 1, 2
#: label → target probability that the SECOND item is preferred (Bradley-Terry target y)
LABEL_TARGET = {PREFER_FIRST: 0.0, PREFER_SECOND: 1.0, TIE: 0.5}
FEATURE_KINDS = ("obs", "text")

DEFAULT_OBJECTIVE = "The agents should build trust and cooperate so that everyone's long-run payoff is high."
PREFERENCE_SYSTEM = "You judge progress in a multi-agent environment. You are honest and concise."
PREFERENCE_TEMPLATE = (
    "Objective: {objective}\n\n"
    "Two situations of the environment follow.\n\n"
    "Situation 1:\n{first}\n\n"
    "Situation 2:\n{second}\n\n"
    "Which situation is closer to the objective? Reason in at most two sentences, then end with one line: "
    '"Answer: 1", "Answer: 2" or "Answer: tie".'
)
ANSWER_PATTERN = re.compile(r"answer\s*[:=]\s*\(?\s*(1|2|tie)\b", re.IGNORECASE)


# ----- 1. data -----
@dataclasses.dataclass(frozen=True)
class PairDataset:
    """``P`` pairs of states: captions and per-agent observations ``[P, n, d]``."""

    captions_a: tuple[str, ...]
    captions_b: tuple[str, ...]
    obs_a: np.ndarray
    obs_b: np.ndarray

    def __len__(self) -> int:
        return len(self.captions_a)

    @property
    def caption_pairs(self) -> list[tuple[str, str]]:
        return list(zip(self.captions_a, self.captions_b))

    def save(self, path: str | Path) -> None:
        np.savez(path, obs_a=self.obs_a, obs_b=self.obs_b, captions_a=np.array(self.captions_a), captions_b=np.array(self.captions_b))

    @staticmethod
    def load(path: str | Path) -> PairDataset:
        with np.load(path) as data:
            return PairDataset(tuple(map(str, data["captions_a"])), tuple(map(str, data["captions_b"])), data["obs_a"], data["obs_b"])


def visited_states(env, params, key: Array, num_envs: int, num_steps: int):
    """States visited by ``num_envs`` uniformly random rollouts of ``num_steps`` (auto-reset), stacked ``[num_steps·num_envs]``."""
    step = auto_reset_batch_step(env)

    def run(key):
        key, reset_key = jax.random.split(key)
        states, _ = batched_reset(env, params, reset_key, num_envs)

        def body(carry, _):
            states, key = carry
            key, action_key, step_key = jax.random.split(key, 3)
            actions = random_actions(env, params, action_key, (num_envs,))
            states, *_ = step(jax.random.split(step_key, num_envs), states, actions, params)
            return (states, key), states

        _, trajectory = jax.lax.scan(body, (states, key), None, length=num_steps)
        return trajectory

    trajectory = jax.jit(run)(key)
    return jax.tree.map(lambda x: np.asarray(x).reshape((-1,) + x.shape[2:]), trajectory)


def collect_pairs(env, params, num_pairs: int, seed: int = 0, num_envs: int = 8, num_steps: int | None = None) -> PairDataset:
    """``num_pairs`` random pairs of distinct states from random rollouts, captioned on the host."""
    if num_pairs < 1:
        raise ValueError(f"num_pairs must be >= 1, got {num_pairs}")
    num_steps = int(num_steps or max(int(params.max_steps), 2 * num_pairs // num_envs + 1))
    states = visited_states(env, params, jax.random.PRNGKey(seed), num_envs, num_steps)
    count = jax.tree.leaves(states)[0].shape[0]
    rng = np.random.default_rng(seed)
    first = rng.integers(0, count, num_pairs)
    second = (first + rng.integers(1, count, num_pairs)) % count  # never the same state
    state_at = lambda i: jax.tree.map(lambda x: x[i], states)  # noqa: E731
    used = np.unique(np.concatenate([first, second]))
    captions = {int(i): caption(env, state_at(i), params) for i in used}
    observations = {int(i): np.asarray(env.observe(state_at(i), params)) for i in used}
    return PairDataset(
        tuple(captions[int(i)] for i in first),
        tuple(captions[int(i)] for i in second),
        np.stack([observations[int(i)] for i in first]),
        np.stack([observations[int(i)] for i in second]),
    )


# ----- 2. annotation -----
def preference_messages(first: str, second: str, objective: str = DEFAULT_OBJECTIVE) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": PREFERENCE_SYSTEM},
        {"role": "user", "content": PREFERENCE_TEMPLATE.format(objective=objective, first=first, second=second)},
    ]


def parse_preference(answer: str) -> int | None:
    """``0`` / ``1`` / ``2`` (tie) from the last ``Answer: 1|2|tie`` line; ``None`` if there is none."""
    matches = ANSWER_PATTERN.findall(answer)
    if not matches:
        stripped = answer.strip().strip(".()").lower()
        matches = [stripped] if stripped in ("1", "2", "tie") else []
    if not matches:
        return None
    return {"1": PREFER_FIRST, "2": PREFER_SECOND, "tie": TIE}[matches[-1].lower()]


def pair_key(first: str, second: str, objective: str) -> str:
    return hashlib.sha256(json.dumps([first, second, objective]).encode("utf-8")).hexdigest()


def read_labels(path: str | Path) -> dict[str, dict[str, Any]]:
    """Rows of a labels JSON-lines file by pair key (a line torn by a kill mid-append is skipped with a warning)."""
    rows = {}
    for number, row in read_json_lines(path, "labels file"):
        if not (isinstance(row, dict) and isinstance(row.get("key"), str) and "label" in row):
            raise ValueError(f"labels file {path} line {number} is not a label row (needs 'key' and 'label')")
        rows[row["key"]] = row
    return rows


def annotate_pairs(
    caption_pairs: Sequence[tuple[str, str]],
    client: LLMClient,
    labels_path: str | Path | None = None,
    objective: str = DEFAULT_OBJECTIVE,
    chunk_size: int = 64,
    **chat_params: Any,
) -> list[int | None]:
    """One preference label per pair (``0`` first, ``1`` second, ``2`` tie, ``None`` unparseable).

    With ``labels_path`` (JSON lines, one row per pair, appended chunk by chunk) pairs already
    labelled there are not sent again, so an interrupted run resumes where it stopped.
    """
    chat_params.setdefault("temperature", 0.0)
    path = Path(labels_path) if labels_path is not None else None
    done = read_labels(path) if path is not None and path.exists() else {}
    keys = [pair_key(a, b, objective) for a, b in caption_pairs]
    todo = [i for i, key in enumerate(keys) if key not in done]
    for start in range(0, len(todo), chunk_size):
        chunk = todo[start : start + chunk_size]
        answers = client.chat_many([preference_messages(*caption_pairs[i], objective) for i in chunk], **chat_params)
        rows = [
            {"key": keys[i], "index": i, "first": caption_pairs[i][0], "second": caption_pairs[i][1], "label": parse_preference(answer), "answer": answer}
            for i, answer in zip(chunk, answers)
        ]
        done.update((row["key"], row) for row in rows)
        if path is not None:
            append_json_lines(path, rows)
    return [done[key]["label"] for key in keys]


# ----- 3. distillation -----
class FrozenArrays:
    """An immutable tuple of float32 numpy arrays, hashable by content (so layers can be static jit args)."""

    def __init__(self, arrays: Sequence[Any]):
        copies = []
        for array in arrays:
            copy = np.array(array, np.float32, copy=True)
            copy.setflags(write=False)
            copies.append(copy)
        self.arrays = tuple(copies)
        digest = hashlib.sha256()
        for array in self.arrays:
            digest.update(str(array.shape).encode())
            digest.update(array.tobytes())
        self.digest = digest.hexdigest()

    def __hash__(self) -> int:
        return hash(self.digest)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FrozenArrays) and other.digest == self.digest

    def __iter__(self):
        return iter(self.arrays)

    def __len__(self) -> int:
        return len(self.arrays)

    def __getitem__(self, index: int) -> np.ndarray:
        return self.arrays[index]

    def __repr__(self) -> str:
        return f"FrozenArrays({[a.shape for a in self.arrays]}, sha256={self.digest[:12]})"


@dataclasses.dataclass(frozen=True)
class RewardModel:
    """``f(x) = MLP((x − input_mean) / input_std)`` (tanh hidden layers, linear scalar output).

    ``layers`` is ``(W_0, b_0, W_1, b_1, …)``; ``output_mean``/``output_std`` normalise ``f`` over the training rows.
    """

    layers: FrozenArrays
    input_mean: FrozenArrays  # one array
    input_std: FrozenArrays  # one array
    output_mean: float
    output_std: float
    feature_kind: str = "obs"
    text_dim: int = DEFAULT_DIM

    @property
    def input_size(self) -> int:
        return int(self.layers[0].shape[0])

    def raw_score(self, features: Array) -> Array:
        """``f`` over the last axis: ``[..., d] → [...]`` (pure jnp, jit-safe)."""
        return mlp_score([jnp.asarray(a) for a in self.layers], (features - jnp.asarray(self.input_mean[0])) / jnp.asarray(self.input_std[0]))

    def normalized_score(self, features: Array) -> Array:
        return (self.raw_score(features) - self.output_mean) / self.output_std

    def save(self, path: str | Path) -> None:
        arrays = {f"layer_{k}": a for k, a in enumerate(self.layers)}
        np.savez(
            path,
            input_mean=self.input_mean[0],
            input_std=self.input_std[0],
            output=np.array([self.output_mean, self.output_std], np.float32),
            feature_kind=np.array(self.feature_kind),
            text_dim=np.array(self.text_dim),
            **arrays,
        )

    @staticmethod
    def load(path: str | Path) -> RewardModel:
        """The model saved at ``path``; a missing, unreadable or foreign file is a ``ValueError`` naming it and what is wrong."""
        path = Path(path)
        if not path.exists():
            raise ValueError(f"reward model file {path} does not exist (write one with `motivegym llm distill`)")
        if not path.is_file():
            raise ValueError(f"reward model file {path} is {'a directory' if path.is_dir() else 'not a regular file'}, not a .npz model")
        try:
            data = np.load(path, allow_pickle=False)
        except (ValueError, OSError, EOFError, zipfile.BadZipFile) as error:
            raise ValueError(f"reward model file {path} is not a .npz archive written by `motivegym llm distill` ({type(error).__name__})") from None
        if not isinstance(data, np.lib.npyio.NpzFile):
            raise ValueError(f"reward model file {path} holds a single array, not a .npz model written by `motivegym llm distill`")
        with data:
            missing = sorted({"input_mean", "input_std", "output", "feature_kind", "text_dim", "layer_0"} - set(data.files))
            if missing:
                raise ValueError(f"reward model file {path} lacks {', '.join(missing)}: not a model written by `motivegym llm distill`")
            try:
                count = len([k for k in data.files if k.startswith("layer_")])
                layers = [data[f"layer_{k}"] for k in range(count)]
                output_mean, output_std = (float(v) for v in data["output"])
                return RewardModel(
                    FrozenArrays(layers),
                    FrozenArrays([data["input_mean"]]),
                    FrozenArrays([data["input_std"]]),
                    output_mean,
                    output_std,
                    str(data["feature_kind"]),
                    int(data["text_dim"]),
                )
            except (KeyError, ValueError, TypeError, OSError, zipfile.BadZipFile) as error:
                raise ValueError(f"reward model file {path} is damaged or not a model written by `motivegym llm distill`: {error}") from None


def mlp_init(key: Array, sizes: Sequence[int]) -> list[Array]:
    """``[W_0, b_0, …]``: scaled-normal weights (variance ``1/fan_in``), zero biases."""
    params = []
    for k, fan_in, fan_out in zip(jax.random.split(key, len(sizes) - 1), sizes[:-1], sizes[1:]):
        params += [jax.random.normal(k, (fan_in, fan_out), jnp.float32) / jnp.sqrt(fan_in), jnp.zeros(fan_out, jnp.float32)]
    return params


def mlp_score(params: Sequence[Array], x: Array) -> Array:
    """tanh hidden layers, linear scalar output: ``[..., d] → [...]``."""
    weights, biases = params[0::2], params[1::2]
    for w, b in zip(weights[:-1], biases[:-1]):
        x = jnp.tanh(x @ w + b)
    return (x @ weights[-1] + biases[-1])[..., 0]


_jitted_mlp_score = jax.jit(lambda params, x: mlp_score(params, x))


def bradley_terry_loss(score_a: Array, score_b: Array, target: Array, weights: Array | None = None) -> Array:
    """``−mean[y log σ(s_B − s_A) + (1 − y) log σ(s_A − s_B)]`` (Motif Eq. 1); with ``weights`` the weighted mean
    (``0`` for padding rows)."""
    margin = score_b - score_a
    terms = target * jax.nn.log_sigmoid(margin) + (1.0 - target) * jax.nn.log_sigmoid(-margin)
    if weights is None:
        return -jnp.mean(terms)
    return -jnp.sum(weights * terms) / jnp.maximum(jnp.sum(weights), 1.0)


@functools.partial(jax.jit, static_argnames=("steps", "learning_rate", "weight_decay"))
def fit_bradley_terry(params, train_a: Array, train_b: Array, targets: Array, weights: Array | None, steps: int, learning_rate: float, weight_decay: float):
    """Full-batch AdamW on :func:`bradley_terry_loss` of state scores ``mean_rows f(x)``; ``(params, last loss)``.

    Module-level and jitted: a caller that keeps the shapes (e.g. pads to a bucket) compiles it once."""
    optimizer = optax.adamw(learning_rate, weight_decay=weight_decay)

    def state_score(params, rows):
        return jnp.mean(mlp_score(params, rows), axis=-1)

    def loss_fn(params):
        return bradley_terry_loss(state_score(params, train_a), state_score(params, train_b), targets, weights)

    def update(carry, _):
        params, opt_state = carry
        loss, grads = jax.value_and_grad(loss_fn)(params)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return (optax.apply_updates(params, updates), opt_state), loss

    (params, _), losses = jax.lax.scan(update, (params, optimizer.init(params)), None, length=steps)
    return params, losses[-1]


def agreement(score_a: np.ndarray, score_b: np.ndarray, labels: np.ndarray) -> float:
    """Fraction of non-tie pairs whose preferred item scores higher (NaN without such pairs)."""
    strict = labels != TIE
    if not strict.any():
        return float("nan")
    predicted = np.where(score_b > score_a, PREFER_SECOND, PREFER_FIRST)
    return float(np.mean(predicted[strict] == labels[strict]))


@dataclasses.dataclass(frozen=True)
class DistillResult:
    model: RewardModel
    train_agreement: float
    heldout_agreement: float
    final_loss: float
    num_train: int
    num_heldout: int
    num_dropped: int  # unparseable (None) labels left out


def as_rows(features: np.ndarray) -> np.ndarray:
    """``[P, d]`` (one row per item) or ``[P, n, d]`` (per-agent rows) → ``[P, rows, d]`` float32."""
    features = np.asarray(features, np.float32)
    if features.ndim == 2:
        return features[:, None, :]
    if features.ndim == 3:
        return features
    raise ValueError(f"features must have shape [P, d] or [P, n, d], got {features.shape}")


def distill(
    features_a: np.ndarray,
    features_b: np.ndarray,
    labels: Sequence[int | None],
    feature_kind: str = "obs",
    hidden_sizes: tuple[int, ...] = (64, 64),
    steps: int = 1000,
    learning_rate: float = 3e-3,
    weight_decay: float = 1e-4,
    heldout_fraction: float = 0.2,
    seed: int = 0,
    text_dim: int = DEFAULT_DIM,
    pad_to_bucket: bool = False,
    init_layers: Sequence[np.ndarray] | None = None,
) -> DistillResult:
    """Fit a :class:`RewardModel` to preference ``labels`` with the Bradley-Terry loss (full-batch AdamW).

    A state's score is the mean of ``f`` over its rows (agents). ``heldout_fraction`` of the labelled
    pairs (shuffled by ``seed``) are kept out of training and scored for ``heldout_agreement``.
    ``pad_to_bucket``: pad the training pairs with zero-weight rows to the next power of two, so repeated
    calls with growing label sets (ONI) reuse a few compiled fits instead of compiling one per call.
    ``init_layers``: start from these MLP layers (e.g. the previous fit's ``model.layers``: ONI trains its
    reward model continuously) instead of a fresh initialisation; their shapes must match ``hidden_sizes``.
    """
    if feature_kind not in FEATURE_KINDS:
        raise ValueError(f"feature_kind must be one of {FEATURE_KINDS}, got {feature_kind!r}")
    rows_a, rows_b = as_rows(features_a), as_rows(features_b)
    if rows_a.shape != rows_b.shape or rows_a.shape[0] != len(labels):
        raise ValueError(f"features_a {rows_a.shape}, features_b {rows_b.shape} and {len(labels)} labels do not match")
    bad = [label for label in labels if label not in (None, *LABEL_TARGET)]
    if bad:
        raise ValueError(f"labels must be 0, 1, 2 (tie) or None, got {sorted(set(map(str, bad)))}")
    if not 0.0 <= heldout_fraction < 1.0:
        raise ValueError(f"heldout_fraction must be in [0, 1), got {heldout_fraction}")
    keep = np.array([label is not None for label in labels])
    labels_array = np.array([label for label in labels if label is not None], np.int64)
    rows_a, rows_b = rows_a[keep], rows_b[keep]
    if len(labels_array) < 2:
        raise ValueError(f"need at least 2 parseable labels to distill, got {len(labels_array)}")
    order = np.random.default_rng(seed).permutation(len(labels_array))
    num_heldout = int(round(heldout_fraction * len(order)))
    heldout, train = order[:num_heldout], order[num_heldout:]
    train_rows = np.concatenate([rows_a[train], rows_b[train]]).reshape(-1, rows_a.shape[-1])
    input_mean = train_rows.mean(axis=0)
    input_std = np.maximum(train_rows.std(axis=0), 1e-6)
    targets = np.asarray([LABEL_TARGET[int(label)] for label in labels_array[train]], np.float32)
    normalize = lambda x: (x - input_mean) / input_std  # noqa: E731
    train_a, train_b = normalize(rows_a[train]).astype(np.float32), normalize(rows_b[train]).astype(np.float32)
    weights = None
    if pad_to_bucket:
        size = 1 << max(len(train) - 1, 0).bit_length()
        pad = lambda x: np.concatenate([x, np.zeros((size - len(x),) + x.shape[1:], x.dtype)])  # noqa: E731
        weights = jnp.asarray(pad(np.ones(len(train), np.float32)))
        train_a, train_b, targets = pad(train_a), pad(train_b), pad(targets)
    sizes = (rows_a.shape[-1], *hidden_sizes, 1)
    if init_layers is None:
        params = mlp_init(jax.random.PRNGKey(seed), sizes)
    else:
        wanted = [shape for fan_in, fan_out in zip(sizes[:-1], sizes[1:]) for shape in ((fan_in, fan_out), (fan_out,))]
        given = [tuple(np.shape(p)) for p in init_layers]
        if wanted != given:
            raise ValueError(f"init_layers have shapes {given}, but features of size {rows_a.shape[-1]} and hidden_sizes {hidden_sizes} need {wanted}")
        params = [jnp.asarray(p, jnp.float32) for p in init_layers]
    params, final_loss = fit_bradley_terry(
        params, jnp.asarray(train_a), jnp.asarray(train_b), jnp.asarray(targets), weights, steps=steps, learning_rate=learning_rate, weight_decay=weight_decay
    )

    def scores(normalized: np.ndarray) -> np.ndarray:
        """``f`` of normalised rows; with ``pad_to_bucket`` jitted on rows padded to a power of two (no new compilation per size)."""
        if not pad_to_bucket:
            return np.asarray(mlp_score(params, jnp.asarray(normalized)))
        size = 1 << max(len(normalized) - 1, 0).bit_length()
        padded = np.concatenate([normalized, np.zeros((size - len(normalized),) + normalized.shape[1:], np.float32)])
        return np.asarray(_jitted_mlp_score(params, jnp.asarray(padded, jnp.float32)))[: len(normalized)]

    raw = scores(normalize(train_rows))
    model = RewardModel(
        FrozenArrays([np.asarray(p) for p in params]),
        FrozenArrays([input_mean]),
        FrozenArrays([input_std]),
        float(raw.mean()),
        float(max(raw.std(), 1e-6)),
        feature_kind,
        text_dim,
    )

    def split_agreement(index):
        if len(index) == 0:
            return float("nan")
        if pad_to_bucket:
            a, b = scores(normalize(rows_a[index])).mean(-1), scores(normalize(rows_b[index])).mean(-1)
        else:
            a = np.asarray(model.raw_score(jnp.asarray(rows_a[index]))).mean(-1)
            b = np.asarray(model.raw_score(jnp.asarray(rows_b[index]))).mean(-1)
        return agreement(a, b, labels_array[index])

    return DistillResult(model, split_agreement(train), split_agreement(heldout), float(final_loss), len(train), len(heldout), int((~keep).sum()))


def distill_dataset(dataset: PairDataset, labels: Sequence[int | None], feature_kind: str = "obs", text_dim: int = DEFAULT_DIM, **kwargs: Any) -> DistillResult:
    """:func:`distill` on a :class:`PairDataset`: observation rows or hashed n-gram caption features."""
    if feature_kind == "text":
        return distill(encode_texts(list(dataset.captions_a), text_dim), encode_texts(list(dataset.captions_b), text_dim), labels, "text", text_dim=text_dim, **kwargs)
    return distill(dataset.obs_a, dataset.obs_b, labels, feature_kind, **kwargs)


def score_captions(model: RewardModel, captions: Sequence[str]) -> np.ndarray:
    """Host-side normalised scores of captions under a ``"text"`` model."""
    if model.feature_kind != "text":
        raise ValueError(f"score_captions needs a text model, this one was fitted on {model.feature_kind!r} features")
    return np.asarray(model.normalized_score(jnp.asarray(encode_texts(list(captions), model.text_dim))))


# ----- 4. the reward layer -----
@dataclasses.dataclass(frozen=True)
class LearnedReward(RewardLayer):
    """``r_i = coef · (f(next_obs_i) − μ_f) / σ_f``: a distilled Motif reward model on each agent's next observation."""

    model: RewardModel
    coef: float = 1.0
    name: str = "learned"

    def __post_init__(self):
        if self.model.feature_kind != "obs":
            raise ValueError("LearnedReward needs a model fitted on observation features (feature_kind='obs'); text models run on the host (score_captions)")

    def apply(self, state, transition: Transition):
        next_obs = transition.next_obs.astype(jnp.float32)
        if next_obs.shape[-1] != self.model.input_size:
            raise ValueError(f"the reward model expects observations of size {self.model.input_size}, the env gives {next_obs.shape[-1]}")
        rewards = self.coef * self.model.normalized_score(next_obs)
        return state, rewards, {"learned": rewards}


def learned_reward(path: str | Path, coef: float = 1.0) -> LearnedReward:
    """A :class:`LearnedReward` from a model ``.npz`` written by :meth:`RewardModel.save`."""
    return LearnedReward(RewardModel.load(path), coef)


# ----- 5. a reward model carried in the layer state (ONI: swapped between updates without recompiling) -----
def model_params(model: RewardModel) -> dict[str, Any]:
    """The arrays of ``model`` as a pytree (``layers``, ``input_mean``, ``input_std``, ``output_mean``, ``output_std``)."""
    return {
        "layers": [jnp.asarray(a) for a in model.layers],
        "input_mean": jnp.asarray(model.input_mean[0]),
        "input_std": jnp.asarray(model.input_std[0]),
        "output_mean": jnp.float32(model.output_mean),
        "output_std": jnp.float32(model.output_std),
    }


def empty_model_params(input_size: int, hidden_sizes: tuple[int, ...]) -> dict[str, Any]:
    """Parameters of the shape :func:`distill` returns for ``hidden_sizes``, all weights zero: every score is ``0``."""
    sizes = (input_size, *hidden_sizes, 1)
    layers = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        layers += [jnp.zeros((fan_in, fan_out), jnp.float32), jnp.zeros(fan_out, jnp.float32)]
    return {
        "layers": layers,
        "input_mean": jnp.zeros(input_size, jnp.float32),
        "input_std": jnp.ones(input_size, jnp.float32),
        "output_mean": jnp.float32(0.0),
        "output_std": jnp.float32(1.0),
    }


def normalized_score_of(params: dict[str, Any], features: Array) -> Array:
    """:meth:`RewardModel.normalized_score` with the arrays given as a pytree (traced, not static)."""
    raw = mlp_score(params["layers"], (features - params["input_mean"]) / params["input_std"])
    return (raw - params["output_mean"]) / params["output_std"]


#: the key under which :class:`SwappableLearnedReward` keeps its model in its layer state
MODEL_KEY = "reward_model"


@dataclasses.dataclass(frozen=True)
class SwappableLearnedReward(RewardLayer):
    """``r_i = coef · (f_θ(next_obs_i) − μ_f) / σ_f`` like :class:`LearnedReward`, but ``θ`` (and ``μ_f, σ_f``,
    the input statistics) live in the **layer state**, not in the layer.

    A training loop can therefore replace the model between jitted updates (:func:`swap_reward_model`)
    without recompiling: the state is an argument of the update. ``θ`` starts at zero (``r = 0``) until the
    first model is swapped in; ``state["version"]`` counts the swaps. Used by ONI-style online feedback
    (:mod:`motivegym.experiments.oni`); the layer itself never trains.
    """

    input_size: int
    hidden_sizes: tuple[int, ...] = (64, 64)
    coef: float = 1.0
    name: str = "online_learned"

    def __post_init__(self):
        if not (isinstance(self.input_size, int) and self.input_size >= 1):
            raise ValueError(f"{self.name}: input_size must be a positive int, got {self.input_size!r}")
        if not all(isinstance(h, int) and h >= 1 for h in self.hidden_sizes):
            raise ValueError(f"{self.name}: hidden_sizes must be positive ints, got {self.hidden_sizes!r}")

    def init(self, key: Array, spec) -> dict[str, Any]:
        if spec.obs_size != self.input_size:
            raise ValueError(f"{self.name}: the reward model reads observations of size {self.input_size}, the env gives {spec.obs_size}")
        return {MODEL_KEY: empty_model_params(self.input_size, self.hidden_sizes), "version": jnp.int32(0)}

    def apply(self, state, transition: Transition):
        next_obs = transition.next_obs.astype(jnp.float32)
        if next_obs.shape[-1] != self.input_size:
            raise ValueError(f"{self.name}: the reward model expects observations of size {self.input_size}, the env gives {next_obs.shape[-1]}")
        rewards = self.coef * normalized_score_of(state[MODEL_KEY], next_obs)
        return state, rewards, {"learned": rewards}


def swap_reward_model(layer_states: Any, model: RewardModel, version: int) -> Any:
    """``layer_states`` with the model of every :class:`SwappableLearnedReward` state in it replaced by ``model``
    (broadcast over leading batch axes, e.g. one copy per env) and its ``version`` set.

    Shapes and dtypes stay the same, so a jitted update taking ``layer_states`` does not recompile; a model of
    another shape (other hidden sizes or input size) is a ``ValueError``, and so is a tree without such a state."""
    new = model_params(model)
    found = []

    def is_layer_state(node: Any) -> bool:
        return isinstance(node, dict) and MODEL_KEY in node and "version" in node

    def replace(node: Any) -> Any:
        if not is_layer_state(node):
            return node
        old_leaves, old_tree = jax.tree.flatten(node[MODEL_KEY])
        new_leaves, new_tree = jax.tree.flatten(new)
        if old_tree != new_tree:
            raise ValueError(f"the new reward model has another structure ({len(new['layers']) // 2} layers) than the layer's ({len(node[MODEL_KEY]['layers']) // 2})")
        batch = jnp.shape(node["version"])
        leaves = []
        for old, value in zip(old_leaves, new_leaves):
            if tuple(old.shape) != tuple(batch) + tuple(jnp.shape(value)):
                raise ValueError(f"the new reward model's array of shape {jnp.shape(value)} does not fit the layer's {tuple(old.shape[len(batch):])}")
            leaves.append(jnp.broadcast_to(jnp.asarray(value, old.dtype), old.shape))
        found.append(True)
        return {**node, MODEL_KEY: jax.tree.unflatten(old_tree, leaves), "version": jnp.full(batch, version, jnp.int32)}

    swapped = jax.tree.map(replace, layer_states, is_leaf=is_layer_state)
    if not found:
        raise ValueError("no SwappableLearnedReward state found in the layer states (is the layer part of the reward?)")
    return swapped
