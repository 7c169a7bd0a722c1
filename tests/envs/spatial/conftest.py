"""Shared checks of the grid substrates' test files (fixtures: pytest does not collect tests from a conftest)."""

import gymnasium
import jax
import numpy as np
import pytest

import motivegym


def _assert_doors_agree(
    env_id: str,
    kwargs: dict,
    actions: np.ndarray,
    seed: int,
    reward: str | None = None,
    vec_envs: int | None = None,
    frame_shape: tuple[int, int, int] | None = None,
) -> None:
    """The Gymnasium door (``scalarize=None``) and the PettingZoo parallel door play the same game: after the same
    seed and the same joint ``actions`` (one row a step, ``len(actions) == max_steps``) every step's payoffs are
    equal and both truncate at the end. With ``vec_envs``, ``make_vec`` resets that many envs; with ``frame_shape``,
    the default env's ``rgb_array`` frame has that shape and dtype uint8."""
    door_kwargs = {**kwargs, **({} if reward is None else {"reward": reward})}
    gym_env = gymnasium.make(f"motivegym/{env_id}", scalarize=None, **door_kwargs)
    par = motivegym.parallel_env(env_id, **door_kwargs)
    gym_env.reset(seed=seed)
    par.reset(seed=seed)
    for step_actions in actions:
        _, _, _, truncated, info = gym_env.step(step_actions)
        _, _, _, truncations, infos = par.step({a: int(step_actions[i]) for i, a in enumerate(par.possible_agents)})
        np.testing.assert_array_equal(info["payoffs"], [infos[a]["payoff"] for a in par.possible_agents])
    assert truncated and all(truncations.values())
    if vec_envs is not None:
        vec = gymnasium.make_vec(f"motivegym/{env_id}", num_envs=vec_envs, **kwargs)
        obs, _ = vec.reset(seed=1)
        assert obs.shape[0] == vec_envs
        vec.close()
    if frame_shape is not None:
        frame = gymnasium.make(f"motivegym/{env_id}", render_mode="rgb_array")
        frame.reset(seed=0)
        image = frame.render()
        assert image.shape == frame_shape and image.dtype == np.uint8


@pytest.fixture
def assert_doors_agree():
    return _assert_doors_agree


def _seeded_rollouts_repeat(env, params, n_envs: int, steps: int, seed: int, other_seed: int):
    """A jitted rollout of ``n_envs`` vmapped envs for ``steps`` steps of uniformly random actions, all drawn from one
    key: the same key gives the same observations and payoffs, ``other_seed`` other observations. Returns the first
    rollout's ``(obs [steps, n_envs, n, d], payoffs [steps, n_envs, n], done [steps, n_envs])`` for further checks."""
    n, k = env.n_agents(params), env.num_actions(params)

    @jax.jit
    def rollout(key):
        states, _ = jax.vmap(env.reset, in_axes=(0, None))(jax.random.split(key, n_envs), params)

        def body(states, step_key):
            action_key, env_key = jax.random.split(step_key)
            actions = jax.random.randint(action_key, (n_envs, n), 0, k)
            states, obs, payoffs, done, _ = jax.vmap(env.step, in_axes=(0, 0, 0, None))(
                jax.random.split(env_key, n_envs), states, actions, params
            )
            return states, (obs, payoffs, done)

        return jax.lax.scan(body, states, jax.random.split(key, steps))

    _, (obs, payoffs, done) = rollout(jax.random.PRNGKey(seed))
    _, (obs2, payoffs2, _) = rollout(jax.random.PRNGKey(seed))
    _, (obs3, _, _) = rollout(jax.random.PRNGKey(other_seed))
    np.testing.assert_array_equal(obs, obs2)
    np.testing.assert_array_equal(payoffs, payoffs2)
    assert not np.array_equal(obs, obs3)
    return obs, payoffs, done


@pytest.fixture
def seeded_rollouts_repeat():
    return _seeded_rollouts_repeat
