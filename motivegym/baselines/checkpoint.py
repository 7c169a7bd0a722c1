"""Checkpoints of the JAX baselines (IPPO, MAPPO, IQL, VDN, QMIX): one ``.safetensors`` file per trained run.

Format (``docs/checkpoints.md``), version :data:`FORMAT_VERSION`:

* **tensors**: the leaves of the run's policy pytree ``{"networks": …, "obs_stats": …}`` (one run, no batch
  axis), each under its ``/``-joined key path (``networks/actor/0/w``, ``obs_stats/mean``), written with
  ``safetensors.numpy.save``: plain arrays, no pickle anywhere;
* **metadata**: the safetensors header's ``__metadata__`` holds one JSON string under the key ``"motivegym"``
  (:func:`checkpoint_metadata`): format version, env id and the keywords given to ``make_jax``, a digest of
  the resolved env params (:func:`params_digest`), reward layer, algorithm, parameter sharing, the algorithm
  config (``dataclasses.asdict`` of ``PPOConfig``/``ValueConfig``), ``bins`` (value-based learners on a
  continuous env), seed, training env steps, agents, observation size, action space, versions, timestamp.

Loading rebuilds the learner from the metadata (``make_jax(env_id, **env_kwargs)``, the config, a
``DiscretizedActions`` wrapper when ``bins`` is set), takes the structure of the policy pytree from the
learner's own initialisers (``jax.eval_shape``: nothing runs) and fills its leaves by path; a missing,
extra or misshapen tensor is an error. :class:`CheckpointPolicy` (policy spec ``checkpoint:PATH``) plays the
greedy policy in the **raw** env's action space: a value-based learner's bin index ``k`` is mapped back to
the continuous action by ``DiscretizedActions.continuous_actions``. Evaluating on an env that differs from
the training env (id, agents, observation size, action space or params) raises a ``ValueError`` naming both
(:func:`check_compatible`).
"""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
import json
import os
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from motivegym.baselines.policies import LearnedPolicy, Policy, PolicyState
from motivegym.core.env import FunctionalEnv

Array = jax.Array

#: version of the checkpoint layout; a reader refuses files written by a newer layout
FORMAT_VERSION = 1
#: key of the motivegym JSON in the safetensors ``__metadata__``
METADATA_KEY = "motivegym"
#: policy-spec prefix accepted wherever a policy name is (``motivegym eval ENV checkpoint:PATH``)
POLICY_PREFIX = "checkpoint:"
PPO_ALGORITHMS = ("ippo", "mappo")
VALUE_ALGORITHMS = ("iql", "vdn", "qmix")


# ----- env identity -----
def params_digest(params: Any) -> str:
    """SHA-256 (first 16 hex digits) of every field of an env's params, static ones included.

    Numbers are compared by value, not by type: integer, boolean and float leaves are hashed as float64
    after float32 rounding (JAX's default precision), so ``endowment=2`` and ``endowment=2.0`` agree.
    """
    digest = hashlib.sha256()

    def visit(path: str, value: Any) -> None:
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            for field in dataclasses.fields(value):
                visit(f"{path}.{field.name}", getattr(value, field.name))
        elif isinstance(value, dict):
            for key in sorted(value, key=str):
                visit(f"{path}[{key!r}]", value[key])
        elif isinstance(value, list | tuple) and not all(isinstance(v, int | float | bool) for v in value):
            for index, item in enumerate(value):
                visit(f"{path}[{index}]", item)
        elif isinstance(value, str) or value is None:
            digest.update(f"{path}={value!r};".encode())
        else:
            array = np.asarray(value)
            if array.dtype.kind in "biuf":
                array = array.astype(np.float32).astype(np.float64) if array.dtype.kind == "f" else array.astype(np.float64)
                digest.update(f"{path}:{array.shape}=".encode() + np.ascontiguousarray(array).tobytes() + b";")
            else:
                digest.update(f"{path}={value!r};".encode())

    visit("params", params)
    return digest.hexdigest()[:16]


def env_signature(env: FunctionalEnv, params: Any) -> dict[str, Any]:
    """What a policy's input and output depend on: agents, observation size, action space, params digest."""
    signature = {
        "env_class": type(env).__name__,
        "n_agents": int(env.n_agents(params)),
        "observation_size": int(env.observation_size(params)),
        "action_kind": env.action_kind,
        "params_digest": params_digest(params),
    }
    if env.action_kind == "discrete":
        signature["num_actions"] = int(env.num_actions(params))
    else:
        low, high = env.action_bounds(params)
        signature["action_low"] = np.asarray(low, np.float64).round(6).tolist()
        signature["action_high"] = np.asarray(high, np.float64).round(6).tolist()
    return signature


def raw_env(env: FunctionalEnv) -> FunctionalEnv:
    """The env under a ``DiscretizedActions`` wrapper (the env itself otherwise)."""
    from motivegym.envs.wrappers import DiscretizedActions

    return env.env if isinstance(env, DiscretizedActions) else env


# ----- metadata -----
def json_safe(value: Any) -> Any:
    """Tuples → lists, numpy scalars → Python numbers (for ``dataclasses.asdict`` of a config)."""
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


def versions() -> dict[str, str]:
    import safetensors

    import motivegym

    return {"motivegym": motivegym.__version__, "jax": jax.__version__, "numpy": np.__version__, "safetensors": safetensors.__version__}


def checkpoint_metadata(
    learner: Any,
    *,
    env_id: str,
    env_kwargs: dict[str, Any] | None,
    reward: str,
    algo: str,
    sharing: str | None,
    seed: int,
    steps: int,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The JSON metadata of a checkpoint of ``learner`` (a ``MultiAgentPPO`` or ``MultiAgentQLearning``).

    ``env_kwargs``: the keywords given to ``make_jax`` (``{}`` for the defaults); ``reward``: the reward
    layer's name; ``steps``: training env steps; ``extra``: any JSON-safe facts to keep (e.g. a sweep run name).
    """
    from motivegym.core.registry import get_spec

    if algo not in (*PPO_ALGORITHMS, *VALUE_ALGORITHMS):
        raise ValueError(f"algo must be one of {(*PPO_ALGORITHMS, *VALUE_ALGORITHMS)}, got {algo!r}")
    config = dataclasses.asdict(learner.config)
    share = bool(config["share_parameters"])
    sharing = sharing or ("shared" if share else "separate")
    if sharing != ("shared" if share else "separate"):
        raise ValueError(f"sharing={sharing!r} contradicts the config's share_parameters={share}")
    bins = getattr(learner.env, "bins", None)
    metadata = {
        "format_version": FORMAT_VERSION,
        "env_id": get_spec(env_id).id,
        "env_kwargs": json_safe(dict(env_kwargs or {})),
        **env_signature(raw_env(learner.env), learner.env_params),
        "reward": str(reward),
        "algo": algo,
        "sharing": sharing,
        "config": json_safe(config),
        "bins": int(bins) if bins else None,
        "seed": int(seed),
        "steps": int(steps),
        "versions": versions(),
        "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
    }
    if extra:
        metadata["extra"] = json_safe(extra)
    json.dumps(metadata)  # fails here, not in the writer, if a keyword is not JSON-safe
    return metadata


# ----- tensors -----
def _key_name(key: Any) -> str:
    for attribute in ("key", "idx", "name"):
        if hasattr(key, attribute):
            return str(getattr(key, attribute))
    raise ValueError(f"unsupported pytree key {key!r}")


def flatten_policy_state(policy_state: Any) -> dict[str, np.ndarray]:
    """``{"networks/actor/0/w": array, …}``: every leaf of the policy pytree under its ``/``-joined key path."""
    leaves, _ = jax.tree_util.tree_flatten_with_path(policy_state)
    return {"/".join(_key_name(k) for k in path): np.asarray(leaf).copy(order="C") for path, leaf in leaves}


def policy_template(learner: Any) -> Any:
    """Shapes and dtypes of one run's ``{"networks", "obs_stats"}`` (``jax.eval_shape``: nothing is computed)."""
    from motivegym.baselines.normalization import running_stats

    return jax.eval_shape(
        lambda key: {"networks": learner.init_networks(key), "obs_stats": running_stats((learner.n_agents, learner.obs_size))},
        jax.random.PRNGKey(0),
    )


def fill_template(template: Any, tensors: dict[str, np.ndarray], source: str) -> Any:
    """The pytree of ``template`` with each leaf taken from ``tensors`` by path (shapes and dtypes checked)."""
    leaves, treedef = jax.tree_util.tree_flatten_with_path(template)
    names = ["/".join(_key_name(k) for k in path) for path, _ in leaves]
    missing, extra = sorted(set(names) - set(tensors)), sorted(set(tensors) - set(names))
    if missing or extra:
        raise ValueError(
            f"{source}: its tensors do not match the network its metadata describes (missing {missing[:5]}, unexpected {extra[:5]})"
        )
    filled = []
    for name, (_, shape) in zip(names, leaves):
        array = tensors[name]
        if array.shape != shape.shape or array.dtype != shape.dtype:
            raise ValueError(
                f"{source}: tensor {name!r} is {array.dtype}{list(array.shape)}, the network needs {shape.dtype}{list(shape.shape)}"
            )
        filled.append(jnp.asarray(array))
    return jax.tree_util.tree_unflatten(treedef, filled)


# ----- writing -----
def write_checkpoint(path: str | Path, tensors: dict[str, np.ndarray], metadata: dict[str, Any]) -> Path:
    """Write a checkpoint file atomically (a temporary file, then ``os.replace``): a crash never leaves half a file."""
    from safetensors.numpy import save

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(save(tensors, metadata={METADATA_KEY: json.dumps(metadata, sort_keys=True)}))  # file mode from the umask
    os.replace(tmp, path)
    return path


def save_checkpoint(
    path: str | Path,
    learner: Any,
    policy_state: dict,
    *,
    env_id: str,
    env_kwargs: dict[str, Any] | None = None,
    reward: str,
    algo: str,
    sharing: str | None = None,
    seed: int,
    steps: int,
    extra: dict[str, Any] | None = None,
) -> Path:
    """Save one run's trained policy ``{"networks", "obs_stats"}`` (no batch axis) of ``learner`` to ``path``.

    ``learner`` must be built on ``make_jax(env_id, **env_kwargs)`` (wrapped in ``DiscretizedActions`` for a
    value-based learner on a continuous env); ``sharing`` defaults to the config's ``share_parameters``.
    """
    metadata = checkpoint_metadata(
        learner, env_id=env_id, env_kwargs=env_kwargs, reward=reward, algo=algo, sharing=sharing, seed=seed, steps=steps, extra=extra
    )
    state = {"networks": policy_state["networks"], "obs_stats": policy_state["obs_stats"]}
    tensors = flatten_policy_state(state)
    fill_template(policy_template(learner), tensors, f"save_checkpoint({path})")  # a batched state fails here, not at load
    return write_checkpoint(path, tensors, metadata)


# ----- reading -----
def read_metadata(path: str | Path) -> dict[str, Any]:
    """The motivegym metadata of a checkpoint (tensors are not read); ``ValueError`` naming the file otherwise."""
    from safetensors import safe_open

    path = Path(path)
    if not path.is_file():
        raise ValueError(f"no checkpoint file at {path}")
    try:
        with safe_open(str(path), framework="numpy") as handle:
            header = handle.metadata() or {}
    except Exception as error:  # safetensors raises its own SafetensorError (and OSError) on a damaged file
        raise ValueError(f"{path} is not a readable safetensors checkpoint ({type(error).__name__}: {error})") from None
    if METADATA_KEY not in header:
        raise ValueError(f"{path} is a safetensors file but not a motivegym checkpoint (no {METADATA_KEY!r} metadata)")
    try:
        metadata = json.loads(header[METADATA_KEY])
        version = int(metadata["format_version"])
    except (ValueError, KeyError, TypeError) as error:
        raise ValueError(f"{path}: its motivegym metadata is damaged ({type(error).__name__}: {error})") from None
    if version > FORMAT_VERSION:
        raise ValueError(f"{path} has checkpoint format {version}; this motivegym reads formats up to {FORMAT_VERSION}: upgrade motivegym")
    missing = [k for k in ("env_id", "env_kwargs", "algo", "config", "params_digest") if k not in metadata]
    if missing:
        raise ValueError(f"{path}: its motivegym metadata lacks {missing}")
    return metadata


def learner_from_metadata(metadata: dict[str, Any]) -> Any:
    """Rebuild the learner a checkpoint was trained with (for acting: its reward layer is ``private``;
    reward layers only change training)."""
    import motivegym

    algo, env_id = metadata["algo"], metadata["env_id"]
    env, params = motivegym.make_jax(env_id, **metadata["env_kwargs"])
    if algo in PPO_ALGORITHMS:
        from motivegym.baselines.ppo import MultiAgentPPO, PPOConfig

        return MultiAgentPPO(env, params, "private", _config(PPOConfig, metadata["config"]))
    if algo in VALUE_ALGORITHMS:
        from motivegym.baselines.value_based import MultiAgentQLearning, ValueConfig
        from motivegym.envs.wrappers import DiscretizedActions

        if metadata.get("bins"):
            env = DiscretizedActions(env, int(metadata["bins"]))
        return MultiAgentQLearning(env, params, "private", _config(ValueConfig, metadata["config"]))
    raise ValueError(f"checkpoint algorithm {algo!r} is not one of {(*PPO_ALGORITHMS, *VALUE_ALGORITHMS)}")


def _config(cls: type, values: dict[str, Any]) -> Any:
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(values) - set(fields))
    if unknown:
        raise ValueError(f"the checkpoint's {cls.__name__} has fields this motivegym does not know: {unknown}")
    return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in values.items()})


@dataclasses.dataclass(frozen=True)
class Checkpoint:
    """A loaded checkpoint: its metadata, the policy pytree ``{"networks", "obs_stats"}`` and the rebuilt learner."""

    path: Path
    metadata: dict[str, Any]
    policy_state: dict
    learner: Any

    def greedy_actions(self, obs: Array) -> Array:
        """The greedy joint action for observations ``[..., n_agents, obs_size]``, in the raw env's action space."""
        return env_actions(self.learner, self.learner.greedy_actions(self.policy_state, obs))


def load_checkpoint(path: str | Path) -> Checkpoint:
    """Read a checkpoint written by :func:`save_checkpoint`; ``ValueError`` naming the file and the cause otherwise."""
    from safetensors.numpy import load_file

    path = Path(path)
    metadata = read_metadata(path)
    source = f"checkpoint {path}"
    try:
        learner = learner_from_metadata(metadata)
    except (ValueError, TypeError, KeyError) as error:
        raise ValueError(f"{source}: cannot rebuild its learner ({type(error).__name__}: {error})") from None
    signature = env_signature(raw_env(learner.env), learner.env_params)
    if signature["params_digest"] != metadata["params_digest"]:
        raise ValueError(
            f"{source} was trained on {metadata['env_id']} with params digest {metadata['params_digest']}, but "
            f"make_jax({metadata['env_id']!r}, **{metadata['env_kwargs']}) now gives {signature['params_digest']} "
            "(the env's defaults changed since it was written)"
        )
    try:
        tensors = load_file(str(path))
    except Exception as error:
        raise ValueError(f"{path} is not a readable safetensors checkpoint ({type(error).__name__}: {error})") from None
    return Checkpoint(path, metadata, fill_template(policy_template(learner), tensors, source), learner)


_CACHE: dict[tuple[str, int, int], Checkpoint] = {}


def cached_checkpoint(path: str | Path) -> Checkpoint:
    """:func:`load_checkpoint`, cached per (absolute path, modification time, size)."""
    key = _file_key(path)
    if key not in _CACHE:
        _CACHE[key] = load_checkpoint(path)
    return _CACHE[key]


def _file_key(path: str | Path) -> tuple[str, int, int]:
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"no checkpoint file at {path}")
    stat = path.stat()
    return (str(path.resolve()), stat.st_mtime_ns, stat.st_size)


# ----- compatibility -----
def check_compatible(metadata: dict[str, Any], env: str | FunctionalEnv, params: Any, source: str = "checkpoint") -> None:
    """``ValueError`` naming both sides unless ``env`` (an id or a functional env) with ``params`` is the env the
    checkpoint was trained on: same id (or env class), agents, observation size, action space and params digest."""
    from motivegym.core.registry import get_spec

    if isinstance(env, str):
        env_id = get_spec(env).id
        env_object = get_spec(env_id).make_env()
        if env_id != metadata["env_id"]:
            raise ValueError(f"{source} was trained on {metadata['env_id']}; you are evaluating it on {env_id}")
    else:
        env_object = env  # a DiscretizedActions env is refused: the policy acts in the raw env's action space
    current = env_signature(env_object, params)
    differences = [k for k in current if metadata.get(k) != current[k]]
    if not differences:
        return
    trained = ", ".join(f"{k}={metadata.get(k)}" for k in differences)
    now = ", ".join(f"{k}={current[k]}" for k in differences)
    raise ValueError(
        f"{source} was trained on {metadata['env_id']} (make_jax keywords {metadata['env_kwargs']}) with {trained}; "
        f"you are evaluating it on {current['env_class']} with {now}"
    )


# ----- the policy -----
def env_actions(learner: Any, actions: Array) -> Array:
    """The learner's actions in the raw env's action space: bin indices of a ``DiscretizedActions`` env mapped
    to continuous actions (``DiscretizedActions.continuous_actions``), other actions unchanged."""
    from motivegym.envs.wrappers import DiscretizedActions

    if isinstance(learner.env, DiscretizedActions):
        index = actions.reshape(-1, actions.shape[-1])
        mapped = jax.vmap(lambda a: learner.env.continuous_actions(a, learner.env_params))(index)
        return mapped.reshape(actions.shape)
    return actions


@dataclasses.dataclass(frozen=True)
class CheckpointPolicy(Policy):
    """The greedy policy of a checkpoint file (policy spec ``checkpoint:PATH``), acting in the raw env's action space.

    Hashable by ``(path, file stamp)`` so jitted rollouts cache on it; ``init(env, params)`` checks that the
    env is the one the checkpoint was trained on and returns the loaded ``{"networks", "obs_stats"}``.
    """

    path: str
    stamp: tuple[str, int, int] = dataclasses.field(default=("", 0, 0), repr=False)

    def __post_init__(self):
        if not self.stamp[0]:
            object.__setattr__(self, "stamp", _file_key(self.path))
        cached_checkpoint(self.path)  # a bad file fails when the policy is made

    @classmethod
    def from_spec(cls, spec: str) -> CheckpointPolicy:
        """``CheckpointPolicy`` of ``"checkpoint:PATH"``."""
        if not spec.startswith(POLICY_PREFIX) or not spec[len(POLICY_PREFIX):]:
            raise ValueError(f"a checkpoint policy is 'checkpoint:PATH', got {spec!r}")
        return cls(spec[len(POLICY_PREFIX):])

    @property
    def checkpoint(self) -> Checkpoint:
        return cached_checkpoint(self.path)

    @property
    def metadata(self) -> dict[str, Any]:
        return self.checkpoint.metadata

    @property
    def name(self) -> str:
        return f"{POLICY_PREFIX}{self.path}"

    def init(self, env: FunctionalEnv, params: Any) -> PolicyState:
        checkpoint = self.checkpoint
        check_compatible(checkpoint.metadata, env, params, source=f"checkpoint {self.path}")
        return dict(checkpoint.policy_state)

    def __call__(self, key: Array, obs: Array, state: PolicyState) -> tuple[Array, PolicyState]:
        learner = self.checkpoint.learner
        actions, state = LearnedPolicy(learner)(key, obs, state)
        return env_actions(learner, actions), state
