"""ONI-style online LLM feedback (Zheng et al. 2024, "Online Intrinsic Rewards for Decision Making Agents
from LLM Feedback"): PPO trains while an asynchronous worker labels captions of its experience with an
LLM and distills the labels into a reward model that is swapped into the running loop.

Three parties, never waiting for each other (ONI §3: policy learner, LLM annotator, reward-model learner):

* **the learner** (the calling thread): IPPO/MAPPO (:mod:`motivegym.baselines.ppo`), one jitted update
  per call. The reward is ``base + coef · f_θ(next_obs_i)`` where ``f_θ`` is a
  :class:`~motivegym.reward_layers.llm.motif.SwappableLearnedReward`: its parameters ``θ`` are part of
  the layer state, i.e. of the update's carry, so installing a new model between two updates
  (:func:`~motivegym.reward_layers.llm.motif.swap_reward_model`) does not recompile. After each update
  it hands ``states_per_update`` env states (and their observations, picked by one jitted call) to the
  worker: a ``put_nowait`` on a bounded inter-process queue; when it is full the snapshot is dropped and counted.
  A snapshot still being computed is handed over after a later update (no new one is taken until then), so the
  learner never waits for the device.
* **the annotator** (a thread of the worker process): captions the states (:mod:`motivegym.core.captions`), pairs each with a
  recent state of another caption and asks the LLM which is closer to the objective
  (:func:`~motivegym.reward_layers.llm.motif.annotate_pairs`, the Motif prompt). Every call is bounded
  by the client's deadline (``LLMClient(timeout=…)``).
* **the reward-model learner** (a thread of the worker process): once ``min_labels`` labels exist, and again after every
  ``distill_every`` new ones, fits the Bradley-Terry model (the first fit from scratch for
  ``distill_steps``, each later one continued from the previous model for ``warm_distill_steps``, as
  ONI's reward model trains continuously on the growing label set) with
  :func:`~motivegym.reward_layers.llm.motif.distill` (on the CPU device, so an accelerator stays with
  the learner) and publishes it; the learner swaps it in before its next update (it reads the worker's
  reports without waiting). This is ONI's
  ranking variant (pairwise preferences); its classification variant is not implemented.

The worker is a child process (``spawn``; JAX on the CPU there; niceness ``worker_nice``, default 19), as ONI
runs its annotator and reward learner apart from the learner: as threads of the learner's process their Python
work (captions, HTTP, tracing the fits) held the GIL the learner needs to dispatch each update, which cost
TrustDilemma's fast learner 20–45 % of its throughput (``benchmarks/README.md``); at low priority the
process takes the CPU the learner leaves.

An error in a worker thread (an unreachable server, an error status after the retries, a timeout) is
re-raised in the learner at its next update as :class:`ONIWorkerError` naming the cause (and so is a worker
process that died); the threads are stopped and joined (each within ``join_timeout_s``) and the process
ends whether training ends or fails.

``first_model_by_update=k`` makes the learner hand over what it collected and wait (at most
``first_model_timeout_s``) at update ``k`` until the first model is in; by default it never waits. It
needs ``k · states_per_update − 1 ≥ min_labels`` (each state is paired at most once), else ``ValueError``.
"""

from __future__ import annotations

import dataclasses
import json
import os
import queue
import threading
import time
import warnings
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from motivegym.core.captions import caption
from motivegym.reward_layers import RewardLayer, reward_layer
from motivegym.reward_layers.llm.client import LLMClient
from motivegym.reward_layers.llm.motif import (
    DEFAULT_OBJECTIVE,
    RewardModel,
    SwappableLearnedReward,
    annotate_pairs,
    distill,
    swap_reward_model,
)


class ONIWorkerError(RuntimeError):
    """The feedback worker failed (its cause is chained) or did not stop."""


@dataclasses.dataclass(frozen=True)
class ONIConfig:
    """Settings of the feedback worker (the PPO settings are a :class:`~motivegym.baselines.ppo.PPOConfig`)."""

    objective: str = DEFAULT_OBJECTIVE
    coef: float = 0.1
    states_per_update: int = 4
    queue_size: int = 16
    pool_size: int = 256
    min_labels: int = 32
    distill_every: int = 32
    max_labels: int = 4096
    distill_steps: int = 300
    warm_distill_steps: int = 60
    hidden_sizes: tuple[int, ...] = (64, 64)
    heldout_fraction: float = 0.2
    first_model_by_update: int | None = None
    first_model_timeout_s: float = 300.0
    join_timeout_s: float = 30.0
    worker_nice: int = 19
    seed: int = 0

    def __post_init__(self):
        for name in ("states_per_update", "queue_size", "pool_size", "min_labels", "distill_every", "max_labels", "distill_steps", "warm_distill_steps"):
            value = getattr(self, name)
            if not (isinstance(value, int) and value >= 1):
                raise ValueError(f"ONIConfig.{name} must be a positive int, got {value!r}")
        if self.min_labels < 2:
            raise ValueError(f"ONIConfig.min_labels must be >= 2 (distill needs two labels), got {self.min_labels}")
        if self.first_model_by_update is not None and self.first_model_by_update < 0:
            raise ValueError(f"ONIConfig.first_model_by_update must be >= 0 or None, got {self.first_model_by_update}")
        if not (isinstance(self.worker_nice, int) and 0 <= self.worker_nice <= 19):
            raise ValueError(f"ONIConfig.worker_nice must be an int in [0, 19], got {self.worker_nice!r}")
        for name in ("first_model_timeout_s", "join_timeout_s"):
            if not getattr(self, name) > 0:
                raise ValueError(f"ONIConfig.{name} must be positive, got {getattr(self, name)}")


@dataclasses.dataclass
class WorkerStats:
    """What the worker did so far (read by the learner for its progress bar and the summary)."""

    snapshots: int = 0
    dropped: int = 0
    pairs_sent: int = 0
    labels: int = 0
    unparsed: int = 0
    distills: int = 0
    last_train_agreement: float = float("nan")
    last_heldout_agreement: float = float("nan")


class FeedbackWorker:
    """The feedback worker as seen by the learner (module docstring): a child process (``spawn``, niceness
    ``worker_nice``, JAX on the CPU) runs the annotator and reward-model learner threads, so their Python work
    (captions, HTTP, tracing the fits) never holds the learner's GIL. The learner's calls never block: ``submit``
    puts a snapshot on a bounded queue (dropped and counted when full), ``latest_model`` and ``stats`` read what the
    child has reported so far. Use as a context manager."""

    def __init__(self, env, params, client: LLMClient, config: ONIConfig, out_dir: str | Path | None = None):
        import multiprocessing

        self.client, self.config = client, config
        self.stats = WorkerStats()
        context = multiprocessing.get_context("spawn")
        self._snapshots = context.Queue(maxsize=config.queue_size)
        self._results = context.Queue()
        self._stop = context.Event()
        self._process = context.Process(
            target=run_feedback_process, name="oni-feedback", daemon=True,
            args=(env, params, client, config, out_dir, self._snapshots, self._results, self._stop),
        )  # fmt: skip
        self._model: tuple[int, RewardModel | None] = (0, None)
        self._error: BaseException | None = None
        self._finished = False  # the child reported its last message

    # ----- the learner's side (never blocks) -----
    def start(self) -> FeedbackWorker:
        previous = os.environ.get("JAX_PLATFORMS")
        os.environ["JAX_PLATFORMS"] = "cpu"  # the child's fits stay off the learner's accelerator
        try:
            self._process.start()
        finally:
            if previous is None:
                os.environ.pop("JAX_PLATFORMS")
            else:
                os.environ["JAX_PLATFORMS"] = previous
        return self

    def submit(self, states: Any, observations: np.ndarray) -> bool:
        """Queue a snapshot (host arrays: a batch of env states and their ``[k, n, d]`` observations); ``False`` if dropped."""
        self.check()
        try:
            self._snapshots.put_nowait((states, observations))
        except queue.Full:
            self.stats.dropped += 1
            return False
        self.stats.snapshots += 1
        return True

    def latest_model(self) -> tuple[int, RewardModel | None]:
        """``(version, model)`` of the newest distilled model the child reported (``(0, None)`` before the first)."""
        self._receive()
        return self._model

    def check(self) -> None:
        """Raise :class:`ONIWorkerError` if a worker thread failed or the child process died."""
        self._receive()
        if self._error is not None:
            raise ONIWorkerError(f"the ONI feedback worker failed: {type(self._error).__name__}: {self._error}") from self._error
        if self._process.exitcode is not None and not self._finished and not self._stop.is_set():
            raise ONIWorkerError(f"the ONI feedback process exited with code {self._process.exitcode} before it was stopped")

    def wait_for_model(self, timeout_s: float) -> None:
        """Block until a first model exists (or a thread fails, or ``timeout_s`` passes: :class:`ONIWorkerError`)."""
        deadline = time.monotonic() + timeout_s
        while self.latest_model()[1] is None:
            self.check()
            if time.monotonic() > deadline:
                raise ONIWorkerError(f"no reward model within {timeout_s:g} s ({self.stats.labels} labels so far; min_labels={self.config.min_labels})")
            time.sleep(0.02)
        self.check()

    def close(self) -> None:
        """Stop the child (its threads join within ``join_timeout_s``), reading its last reports; a child still running
        after twice that is terminated with a warning."""
        self._stop.set()
        if self._process.ident is not None:
            deadline = time.monotonic() + 2 * self.config.join_timeout_s
            while self._process.is_alive() and time.monotonic() < deadline:
                self._receive()  # the child cannot exit while its reports fill the pipe
                self._process.join(0.05)
            if self._process.is_alive():
                warnings.warn(f"the ONI feedback process did not stop within {2 * self.config.join_timeout_s:g} s; terminated", stacklevel=2)
                self._process.terminate()
                self._process.join(5)
            self._receive()
        self._snapshots.cancel_join_thread()  # snapshots nobody will read must not block the learner's exit
        self._snapshots.close()

    def __enter__(self) -> FeedbackWorker:
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.close()

    def _receive(self) -> None:
        """Apply the child's reports: ``("model", version, model)``, ``("stats", fields, requests, cache hits)``,
        ``("error", exception)``, ``("finished",)``."""
        while True:
            try:
                report = self._results.get_nowait()
            except queue.Empty:
                return
            kind = report[0]
            if kind == "model":
                self._model = (report[1], report[2])
            elif kind == "stats":
                own = {"snapshots": self.stats.snapshots, "dropped": self.stats.dropped}  # counted on the learner's side
                self.stats = dataclasses.replace(WorkerStats(**report[1]), **own)
                self.client.requests_sent, self.client.cache_hits = report[2], report[3]  # mirrors of the child's copy
            elif kind == "error":
                self._error = report[1]
            elif kind == "finished":
                self._finished = True


def run_feedback_process(env, params, client: LLMClient, config: ONIConfig, out_dir, snapshots, results, stop) -> None:
    """The child process of :class:`FeedbackWorker`: lower its priority, run :class:`FeedbackThreads` on the
    learner's snapshot queue and report new models, stats and a failure until ``stop`` is set."""
    if config.worker_nice:
        if hasattr(os, "nice"):
            os.nice(config.worker_nice)
        else:
            warnings.warn(f"ONIConfig.worker_nice={config.worker_nice}: this platform has no os.nice; the feedback process keeps normal priority", RuntimeWarning, stacklevel=1)
    threads = FeedbackThreads(env, params, client, config, out_dir, snapshots)
    sent_version, sent_stats = 0, None

    def report() -> None:
        nonlocal sent_version, sent_stats
        version, model = threads.latest_model()
        if version > sent_version:
            results.put(("model", version, model))
            sent_version = version
        stats = (dataclasses.asdict(threads.stats), client.requests_sent, client.cache_hits)
        if stats != sent_stats:
            results.put(("stats", *stats))
            sent_stats = stats

    threads.start()
    try:
        while not stop.wait(0.05) and threads.error is None:
            report()
    finally:
        threads.close()
        report()
        if threads.error is not None:
            results.put(("error", picklable_error(threads.error)))
        results.put(("finished",))


def picklable_error(error: BaseException) -> BaseException:
    """``error`` if it survives pickling (its class and message reach the learner), else a ``RuntimeError`` naming it."""
    import pickle

    try:
        pickle.loads(pickle.dumps(error))
        return error
    except Exception:  # noqa: BLE001 - any pickling failure
        return RuntimeError(f"{type(error).__name__}: {error}")


class FeedbackThreads:
    """The annotator and reward-model learner threads (module docstring), in :class:`FeedbackWorker`'s child process;
    they read the learner's snapshots from ``snapshots``."""

    def __init__(self, env, params, client: LLMClient, config: ONIConfig, out_dir: str | Path | None, snapshots):
        self.env, self.params, self.client, self.config = env, params, client, config
        self.labels_path = Path(out_dir) / "labels.jsonl" if out_dir is not None else None
        self.stats = WorkerStats()
        self._snapshots = snapshots
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._new_labels = threading.Condition(self._lock)
        self._rows: list[tuple[np.ndarray, np.ndarray, int | None]] = []  # (obs_a, obs_b, label)
        self._since_distill = 0
        self._model: tuple[int, RewardModel | None] = (0, None)
        self.error: BaseException | None = None
        self._rng = np.random.default_rng(config.seed)
        self._threads = [
            threading.Thread(target=self._guard, args=(self._annotate_loop,), name="oni-annotator", daemon=True),
            threading.Thread(target=self._guard, args=(self._distill_loop,), name="oni-distiller", daemon=True),
        ]

    def start(self) -> FeedbackThreads:
        for thread in self._threads:
            thread.start()
        return self

    def latest_model(self) -> tuple[int, RewardModel | None]:
        with self._lock:
            return self._model

    def close(self) -> None:
        """Stop both threads and join them (each within ``join_timeout_s``; a thread still running is warned about)."""
        self._stop.set()
        with self._lock:
            self._new_labels.notify_all()
        for thread in self._threads:
            if thread.is_alive() or thread.ident is not None:
                thread.join(self.config.join_timeout_s)
                if thread.is_alive():
                    warnings.warn(f"ONI worker thread {thread.name} did not stop within {self.config.join_timeout_s:g} s (it is a daemon thread)", stacklevel=2)

    # ----- threads -----
    def _guard(self, loop) -> None:
        try:
            loop()
        except BaseException as error:  # noqa: BLE001 - handed to the learner, which re-raises it
            self.error = error
            self._stop.set()
            with self._lock:
                self._new_labels.notify_all()

    def _annotate_loop(self) -> None:
        pool: list[tuple[str, np.ndarray]] = []
        while not self._stop.is_set():
            try:
                states, observations = self._snapshots.get(timeout=0.05)
            except queue.Empty:
                continue
            items = []
            for k in range(observations.shape[0]):
                state = jax.tree.map(lambda x, k=k: x[k], states)
                items.append((caption(self.env, state, self.params), observations[k]))
            pairs = []
            for item in items:  # partner: a recent state (earlier ones of this snapshot included) with another caption
                partners = [other for other in pool if other[0] != item[0]]
                if partners:
                    partner = partners[int(self._rng.integers(len(partners)))]
                    pairs.append((partner, item) if self._rng.random() < 0.5 else (item, partner))
                pool = (pool + [item])[-self.config.pool_size :]
            if not pairs or self._stop.is_set():
                continue
            labels = annotate_pairs([(a[0], b[0]) for a, b in pairs], self.client, self.labels_path, self.config.objective)
            with self._lock:
                self.stats.pairs_sent += len(pairs)
                self.stats.labels += sum(label is not None for label in labels)
                self.stats.unparsed += sum(label is None for label in labels)
                self._rows = (self._rows + [(a[1], b[1], label) for (a, b), label in zip(pairs, labels)])[-self.config.max_labels :]
                self._since_distill += len(pairs)
                self._new_labels.notify_all()

    def _ready_to_distill(self) -> bool:
        parsed = sum(label is not None for _, _, label in self._rows)
        return parsed >= self.config.min_labels and (self._model[1] is None or self._since_distill >= self.config.distill_every)

    def _distill_loop(self) -> None:
        cpu = jax.devices("cpu")[0]
        while not self._stop.is_set():
            with self._lock:
                if not self._ready_to_distill():
                    self._new_labels.wait(timeout=0.1)
                    continue
                rows, self._since_distill = list(self._rows), 0
            obs_a = np.stack([a for a, _, _ in rows])
            obs_b = np.stack([b for _, b, _ in rows])
            previous = self._model[1]
            with jax.default_device(cpu):
                result = distill(
                    obs_a, obs_b, [label for _, _, label in rows], hidden_sizes=self.config.hidden_sizes,
                    steps=self.config.distill_steps if previous is None else self.config.warm_distill_steps,
                    heldout_fraction=self.config.heldout_fraction, seed=self.config.seed, pad_to_bucket=True,
                    init_layers=None if previous is None else list(previous.layers),
                )  # fmt: skip
            with self._lock:
                self._model = (self._model[0] + 1, result.model)
                self.stats.distills += 1
                self.stats.last_train_agreement = result.train_agreement
                self.stats.last_heldout_agreement = result.heldout_agreement


@dataclasses.dataclass
class ONIResult:
    runner: dict
    metrics: dict[str, np.ndarray]  # per update
    stats: WorkerStats | None
    swaps: list[int]  # the update before which each new model was installed
    model: RewardModel | None
    wall_s: float  # all updates, the first one's compilation included
    first_update_s: float  # the first update (compilation included)
    steady_cpu_s: float  # CPU time of the whole process (all threads) after the first update
    env_steps: int
    compiles: int  # compiled versions of the jitted update (1: swapping never recompiled)

    @property
    def steady_steps_per_s(self) -> float:
        """Env steps per second after the first update (no compilation); NaN with a single update."""
        updates = len(self.metrics["episodes"])
        seconds = self.wall_s - self.first_update_s
        return self.env_steps * (updates - 1) / updates / seconds if updates > 1 and seconds > 0 else float("nan")


def oni_reward(base: str | RewardLayer | None, obs_size: int, config: ONIConfig) -> tuple[RewardLayer, SwappableLearnedReward]:
    """``(base + coef · online model, online model layer)``; ``base=None``: the online model alone."""
    online = SwappableLearnedReward(obs_size, tuple(config.hidden_sizes), config.coef)
    if base is None:
        return online, online
    return reward_layer(base) + online, online


def train_oni(
    env,
    params,
    client: LLMClient | None,
    ppo_config,
    config: ONIConfig = ONIConfig(),
    base_reward: str | RewardLayer | None = "private",
    seed: int = 0,
    out_dir: str | Path | None = None,
    progress: bool = False,
    feedback: bool = True,
) -> ONIResult:
    """Train IPPO/MAPPO (``ppo_config``) on ``base_reward + coef · f_θ`` while the feedback worker labels and
    distills (module docstring). ``feedback=False`` trains the same program with the worker off (``f_θ ≡ 0``):
    the baseline of ``benchmarks/oni_overhead.py``. ``client`` may be ``None`` only then."""
    from tqdm import tqdm

    from motivegym.baselines.ppo import MultiAgentPPO

    if feedback and client is None:
        raise ValueError("train_oni needs an LLMClient when feedback=True")
    if feedback and config.first_model_by_update is not None:
        states = config.first_model_by_update * min(config.states_per_update, ppo_config.num_envs)
        if states - 1 < config.min_labels:
            raise ValueError(
                f"first_model_by_update={config.first_model_by_update} would wait for {config.min_labels} labels (min_labels) but at most "
                f"{max(states - 1, 0)} pairs can be formed from the {states} states collected by then (states_per_update × updates)"
            )
    if feedback and config.first_model_by_update is not None and config.first_model_by_update >= ppo_config.num_updates:
        raise ValueError(f"first_model_by_update={config.first_model_by_update} is not below the number of updates ({ppo_config.num_updates})")
    obs_size = env.observation_size(params)
    reward, _ = oni_reward(base_reward, obs_size, config)
    algo = MultiAgentPPO(env, params, reward, ppo_config)
    _, init, run = algo.make_stages()
    init_jit = jax.jit(init)
    update_jit = jax.jit(lambda runner: run(runner, 1))
    num_envs, k = ppo_config.num_envs, min(config.states_per_update, ppo_config.num_envs)

    @jax.jit
    def take_snapshot(runner, update):
        """``k`` env states and their observations, cycling through the envs: one dispatch, not one per leaf."""
        index = (update * k + jnp.arange(k)) % num_envs
        return jax.tree.map(lambda x: x[index], runner["env_states"]), runner["obs"][index]

    worker = FeedbackWorker(env, params, client, config, out_dir) if feedback else None
    if out_dir is not None:
        Path(out_dir).mkdir(parents=True, exist_ok=True)
    bar = tqdm(total=ppo_config.num_updates, desc=f"oni {env.name}", unit="update", disable=not progress)
    try:
        if worker is not None:
            worker.start()  # its start-up (a new interpreter importing JAX) overlaps the learner's compilation
        runner = init_jit(jax.random.PRNGKey(seed), 0)
        jax.block_until_ready(runner)
        pieces, swaps, version, first_update_s, first_update_cpu = [], [], 0, 0.0, time.process_time()
        start = time.perf_counter()
        pending = None  # the last snapshot taken, handed over once computed (the learner never waits for it)
        for update in range(ppo_config.num_updates):
            if worker is not None:
                if config.first_model_by_update is not None and update == config.first_model_by_update and version == 0:
                    if pending is not None:  # everything collected so far goes to the annotator before waiting
                        worker.submit(*jax.device_get(pending))
                        pending = None
                    worker.wait_for_model(config.first_model_timeout_s)
                worker.check()
                latest, model = worker.latest_model()
                if latest > version:
                    runner = {**runner, "layer_states": swap_reward_model(runner["layer_states"], model, latest)}
                    version = latest
                    swaps.append(update)
            runner, metrics = update_jit(runner)
            pieces.append(metrics)
            if update == 0:  # the first call compiles: time it apart (steady throughput excludes it)
                jax.block_until_ready(runner)
                first_update_s, first_update_cpu = time.perf_counter() - start, time.process_time()
            if worker is not None:
                if pending is not None and all(leaf.is_ready() for leaf in jax.tree.leaves(pending)):
                    worker.submit(*jax.device_get(pending))
                    pending = None
                if pending is None:  # else the last snapshot is still being computed: never wait for it
                    pending = take_snapshot(runner, update)
                s = worker.stats
                bar.set_postfix_str(f"labels {s.labels}, models {s.distills}, swaps {len(swaps)}, dropped {s.dropped}", refresh=False)
            bar.update(1)
        jax.block_until_ready(runner)
        if worker is not None:
            worker.check()
    finally:
        bar.close()
        if worker is not None:
            worker.close()
    wall = time.perf_counter() - start
    steady_cpu_s = time.process_time() - first_update_cpu
    stacked = jax.tree.map(lambda *parts: np.concatenate([np.asarray(p) for p in parts], axis=0), *pieces)
    model = worker.latest_model()[1] if worker is not None else None
    result = ONIResult(
        runner, stacked, worker.stats if worker is not None else None, swaps, model, wall, first_update_s, steady_cpu_s,
        ppo_config.num_updates * num_envs * ppo_config.num_steps, update_jit._cache_size(),
    )  # fmt: skip
    if out_dir is not None:
        write_summary(result, Path(out_dir))
    return result


def write_summary(result: ONIResult, out_dir: Path) -> None:
    """``summary.json`` (worker statistics, swaps, throughput) and ``reward_model.npz`` (the last model, if any)."""
    summary = {
        "env_steps": result.env_steps,
        "wall_s": result.wall_s,
        "env_steps_per_s": result.env_steps / result.wall_s if result.wall_s > 0 else None,
        "steady_env_steps_per_s": result.steady_steps_per_s,
        "swaps_before_update": result.swaps,
        "compiles": result.compiles,
        "worker": dataclasses.asdict(result.stats) if result.stats is not None else None,
        "welfare_per_update": np.nan_to_num(np.asarray(result.metrics["episode_payoff"]).sum(-1), nan=0.0).tolist(),
    }
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
    if result.model is not None:
        result.model.save(out_dir / "reward_model.npz")
