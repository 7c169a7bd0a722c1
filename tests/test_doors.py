"""One game through every door (DESIGN, issue 23): the same seed and actions give the same payoffs, rewards,
observations and termination through ``make_jax``, ``gymnasium.make``, ``make_vec``, ``parallel_env``,
``aec_env``, the SB3 adapter and the learners' batched step (to float32 rounding: 1e-6 relative).

Sequences: random actions, and constant actions sitting exactly on the documented thresholds (fractions 0.2,
0.4, 0.5, 0.6, 0.8 of each agent's bound, and the env's baselines); discrete envs play every constant action.
Short horizons (params overrides) keep it fast; the default run covers five envs (see ``DEFAULT_ENVS``), the
``slow`` variant every other registered env.
"""

from __future__ import annotations

import dataclasses
import warnings

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import motivegym
from motivegym.adapters.host import episode_key, reset_keys, step_keys
from motivegym.baselines.episodes import learner_batch_step
from motivegym.core.env import Transition
from motivegym.reward_layers import LayerSpec, reward_layer

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

SEED = 3
FRACTIONS = (0.2, 0.4, 0.5, 0.6, 0.8)
RTOL = 1e-6
#: the default run: the shirking (0.2) and free-rider (0.3) rates of issue 23's TeamProduction case, the loyalty
#: history (a mean of eight 0.6s), agreement distance, and a stochastic and a discrete env; the ``slow`` run covers
#: every other env (ApacheProject, ReputationMarket tiers, TrustDilemma collapse, SynergySearch, ...)
DEFAULT_ENVS = ("TeamProduction-v0", "LoyaltyTeam-v0", "CooperativeNegotiation-v0", "PrisonersDilemma-v0", "PublicGoodsPunishment-v0")
#: steps per sequence: enough for the loyalty history to hold 8 rates (a mean of eight 0.6s rounds below 0.6)
HORIZON = 9


@dataclasses.dataclass
class Record:
    """What one door reports for one step (``None``: the door does not show it)."""

    payoffs: np.ndarray
    rewards: np.ndarray | None
    agent_obs: np.ndarray | None
    global_obs: np.ndarray | None
    terminated: bool
    truncated: bool


def horizon_kwargs(env) -> dict:
    """Every env's horizon is ``max_steps`` (env steps)."""
    return {"max_steps": HORIZON}


def the_jax_seed(seed: int) -> int:
    """The JAX seed every adapter draws from ``seed`` (``default_rng(seed).integers(0, 2**31 - 1)``)."""
    return int(np.random.default_rng(seed).integers(0, 2**31 - 1))


class Functional:
    """``make_jax`` with the adapters' documented keys; rewards from the same layer, applied by hand."""

    def __init__(self, env_id: str, kwargs: dict, layer_name: str):
        self.env, self.params = motivegym.make_jax(env_id, **kwargs)
        self.layer = reward_layer(layer_name)
        self.spec = LayerSpec(self.env.n_agents(self.params), self.env.observation_size(self.params))
        self._reset, self._step = jax.jit(self.env.reset), jax.jit(self.env.step)
        self._global = jax.jit(self.env.global_state)
        self._observe = jax.jit(self.env.observe)
        self._apply = jax.jit(self.layer.apply)

    def reset(self, seed: int) -> None:
        self.carry, reset_key, layer_key = reset_keys(episode_key(the_jax_seed(seed)))
        self.state, _ = self._reset(reset_key, self.params)
        self.layer_state = self.layer.init(layer_key, self.spec)

    def step(self, actions: np.ndarray) -> Record:
        self.carry, env_key = step_keys(self.carry)
        step_key, _ = jax.random.split(env_key)
        obs = self._observe(self.state, self.params)
        self.state, next_obs, payoffs, _, info = self._step(step_key, self.state, jnp.asarray(actions), self.params)
        transition = Transition(obs, jnp.asarray(actions), payoffs, next_obs, info["terminated"], info["truncated"], info)
        self.layer_state, rewards, _ = self._apply(self.layer_state, transition)
        global_obs = self._global(self.state, self.params)
        return Record(np.asarray(payoffs), np.asarray(rewards), np.asarray(next_obs), np.asarray(global_obs),
                      bool(info["terminated"]), bool(info["truncated"]))  # fmt: skip


class Learner(Functional):
    """``learner_batch_step`` over 2 envs with params closed over (compile-time constants, as in the learners)."""

    def __init__(self, env_id: str, kwargs: dict, layer_name: str):
        super().__init__(env_id, kwargs, layer_name)
        env, params = self.env, self.params
        self._batch_step = jax.jit(lambda keys, states, actions: learner_batch_step(env, params, keys, states, actions))

    def reset(self, seed: int) -> None:
        super().reset(seed)
        self.states = jax.tree.map(lambda x: jnp.stack([x, x]), self.state)

    def step(self, actions: np.ndarray) -> Record:
        self.carry, env_key = step_keys(self.carry)
        obs = self._observe(self.state, self.params)
        keys = jnp.stack([env_key, jax.random.PRNGKey(7)])
        self.states, _, _, payoffs, final_obs, final_global, info = self._batch_step(keys, self.states, jnp.stack([actions, actions]))
        self.state = jax.tree.map(lambda x: x[0], self.states)
        transition = Transition(obs, jnp.asarray(actions), payoffs[0], final_obs[0], info["terminated"][0], info["truncated"][0],
                                jax.tree.map(lambda x: x[0], info))  # fmt: skip
        self.layer_state, rewards, _ = self._apply(self.layer_state, transition)
        return Record(np.asarray(payoffs[0]), np.asarray(rewards), np.asarray(final_obs[0]), np.asarray(final_global[0]),
                      bool(info["terminated"][0]), bool(info["truncated"][0]))  # fmt: skip


class Gym:
    def __init__(self, env_id: str, kwargs: dict, layer_name: str):
        self.env = gymnasium.make(f"motivegym/{env_id}", reward=layer_name, scalarize=None, **kwargs)

    def reset(self, seed: int) -> None:
        self.env.reset(seed=seed)

    def step(self, actions: np.ndarray) -> Record:
        obs, reward, terminated, truncated, info = self.env.step(actions)
        return Record(info["payoffs"], reward, None, obs, terminated, truncated)


class Vector:
    """``make_vec`` with 2 sub-envs (per-agent rewards, next-step autoreset: a terminal step returns its own
    observation); sub-env 0 plays the door's actions (seeded like ``gymnasium.make``, it shares its keys)."""

    def __init__(self, env_id: str, kwargs: dict, layer_name: str):
        self.env = gymnasium.make_vec(f"motivegym/{env_id}", num_envs=2, vectorization_mode="vector_entry_point", reward=layer_name, scalarize=None, **kwargs)

    def reset(self, seed: int) -> None:
        self.env.reset(seed=seed)

    def step(self, actions: np.ndarray) -> Record:
        obs, rewards, terminated, truncated, info = self.env.step(np.stack([actions, actions]))
        return Record(info["payoffs"][0], rewards[0], None, obs[0], terminated[0], truncated[0])


class Parallel:
    def __init__(self, env_id: str, kwargs: dict, layer_name: str):
        self.env = motivegym.parallel_env(env_id, reward=layer_name, **kwargs)

    def reset(self, seed: int) -> None:
        self.env.reset(seed=seed)

    def step(self, actions: np.ndarray) -> Record:
        agents = self.env.possible_agents
        obs, rewards, terminations, truncations, infos = self.env.step({a: actions[i] for i, a in enumerate(agents)})
        return Record(np.array([infos[a]["payoff"] for a in agents]), np.array([rewards[a] for a in agents]),
                      np.stack([obs[a] for a in agents]), None, terminations[agents[0]], truncations[agents[0]])  # fmt: skip


class AEC:
    def __init__(self, env_id: str, kwargs: dict, layer_name: str):
        self.env = motivegym.aec_env(env_id, reward=layer_name, **kwargs)

    def reset(self, seed: int) -> None:
        self.env.reset(seed=seed)

    def step(self, actions: np.ndarray) -> Record:
        agents, aec = self.env.possible_agents, self.env
        for i, agent in enumerate(agents):
            assert aec.agent_selection == agent
            aec.step(actions[i] if aec.unwrapped._discrete else np.array([actions[i]], np.float32))
        return Record(np.array([aec.infos[a]["payoff"] for a in agents]), np.array([aec.rewards[a] for a in agents]),
                      np.stack([aec.observe(a) for a in agents]), None, aec.terminations[agents[0]], aec.truncations[agents[0]])  # fmt: skip


class SB3:
    """The SB3 adapter: discrete actions pass as indices; continuous ones are mapped to ``[-1, 1]`` and back (float64 map)."""

    def __init__(self, env_id: str, kwargs: dict, layer_name: str):
        from motivegym.adapters.sb3 import vec_env

        self.env = vec_env(env_id, num_envs=1, reward=layer_name, **kwargs)
        self.low, self.span = self.env._low, self.env._span

    def reset(self, seed: int) -> None:
        self.env.seed(seed)
        self.env.reset()

    def step(self, actions: np.ndarray) -> Record:
        if self.env.discrete:
            obs, rewards, dones, infos = self.env.step(actions.astype(np.int64))
        else:
            unit = (2.0 * (actions.astype(np.float64) - self.low) / self.span - 1.0).astype(np.float32)
            obs, rewards, dones, infos = self.env.step(unit[:, None])
        n = self.env.n_agents
        if dones[0]:
            obs = np.stack([info["terminal_observation"] for info in infos])
        truncated = bool(dones[0]) and infos[0]["TimeLimit.truncated"]
        return Record(np.array([info["payoff"] for info in infos]), rewards, obs[:, :-n], None, bool(dones[0]) and not truncated, truncated)


DOORS = {"make_jax": Functional, "learner": Learner, "gymnasium": Gym, "make_vec": Vector, "parallel": Parallel, "aec": AEC, "sb3": SB3}


def sequences(env, params, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Named ``[HORIZON, n]`` action sequences: random, and constant ones on the thresholds."""
    n = env.n_agents(params)
    if env.action_kind == "discrete":
        k = env.num_actions(params)
        named = {"random": rng.integers(0, k, (HORIZON, n)).astype(np.int32)}
        named.update({f"constant {a}": np.full((HORIZON, n), a, np.int32) for a in range(k)})
        return named
    low, high = (np.asarray(b, np.float32) for b in env.action_bounds(params))
    named = {"random": rng.uniform(low, high, (HORIZON, n)).astype(np.float32)}
    named.update({f"fraction {f}": np.tile(np.float32(f) * high, (HORIZON, 1)).astype(np.float32) for f in FRACTIONS})
    if hasattr(params, "baselines"):
        named["baselines"] = np.tile(np.asarray(params.baselines, np.float32), (HORIZON, 1))
    return named


def assert_same(name: str, value, reference, where: str) -> None:
    value, reference = np.asarray(value, np.float64), np.asarray(reference, np.float64)
    scale = max(1.0, float(np.max(np.abs(reference))) if reference.size else 1.0)
    np.testing.assert_allclose(value, reference, rtol=RTOL, atol=RTOL * scale, err_msg=f"{where}: {name}")


def check_env_through_every_door(env_id: str) -> int:
    """Play every sequence through every door; returns the number of (door, sequence, step) records compared."""
    spec = motivegym.get_spec(env_id)
    probe = spec.make_env()
    kwargs = horizon_kwargs(probe)
    layer_name = spec.default_reward
    reference = Functional(env_id, kwargs, layer_name)
    doors = {name: door(env_id, kwargs, layer_name) for name, door in DOORS.items()
             if name != "make_jax"}  # fmt: skip
    compared = 0
    for label, actions in sequences(reference.env, reference.params, np.random.default_rng(0)).items():
        reference.reset(SEED)
        for door in doors.values():
            door.reset(SEED)
        for t, step_actions in enumerate(actions):
            expected = reference.step(step_actions)
            for name, door in doors.items():
                got = door.step(step_actions)
                where = f"{env_id} {label} step {t + 1} via {name}"
                assert (got.terminated, got.truncated) == (expected.terminated, expected.truncated), where
                assert_same("payoffs", got.payoffs, expected.payoffs, where)
                assert_same("rewards", got.rewards, expected.rewards, where)
                if got.agent_obs is not None:
                    assert_same("observations", got.agent_obs, expected.agent_obs, where)
                if got.global_obs is not None:
                    assert_same("global state", got.global_obs, expected.global_obs, where)
                compared += 1
            if expected.terminated or expected.truncated:  # the batched doors reset here; the others would step a finished game
                break
    return compared


@pytest.mark.parametrize("env_id", DEFAULT_ENVS)
def test_every_door_plays_the_same_game(env_id):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert check_env_through_every_door(env_id) > 0


@pytest.mark.slow
@pytest.mark.parametrize("env_id", [e for e in motivegym.list_envs() if e not in DEFAULT_ENVS])
def test_every_door_plays_the_same_game_for_every_env(env_id):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert check_env_through_every_door(env_id) > 0
