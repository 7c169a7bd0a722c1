"""This package's Melting Pot-style substrates side by side with SocialJax's, batched, in one process.

    python benchmarks/socialjax_side_by_side.py --socialjax-src /tmp/socialjax_src --site /tmp/socialjax_site \
        [--pairs pd_arena,...] [--num-envs 1024] [--steps 50] [--seconds 5] [--json out.json]

SocialJax (github cooperativex/SocialJax) is not on PyPI. Its environments run from source: ``--socialjax-src`` is a
``git archive`` of the repository (the folder holding the ``socialjax`` package), ``--site`` a ``pip install --target``
folder with the four packages its environment code imports that this environment lacks (``flax chex toolz rich``,
installed with ``--no-deps`` so nothing here changes version). Both folders go on ``sys.path`` of this process only::

    git -C <mirror> archive HEAD socialjax | tar -x -C /tmp/socialjax_src
    pip install --target /tmp/socialjax_site --no-deps flax chex toolz rich

Measure (one device, compile excluded, both sides the same shape): ``num_envs`` vmapped envs stepped ``steps`` times in
one jitted ``lax.scan`` with uniformly random actions and auto-reset, the payoffs/rewards *and observations* summed
into the scan's carry so XLA cannot drop them (as :func:`motivegym.core.batching.random_rollout`). Repeated for at
least ``seconds``; env-steps/s = envs × steps × calls / wall time. One run per pair, same process; the ratio is ours /
SocialJax's (> 1: ours faster).

``PAIRS`` maps a name to (our env id + kwargs, SocialJax env name + kwargs): the same number of agents and the same map
size. Every issue-26 substrate and Harvest/Cleanup (under ``preset="meltingpot"``) has a row.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from collections.abc import Callable

import jax
import jax.numpy as jnp


@dataclasses.dataclass(frozen=True)
class Pair:
    ours: str  # env id
    ours_kwargs: dict
    socialjax: str  # socialjax.make name
    socialjax_kwargs: dict
    note: str = ""


#: name -> the two sides (same agents, same map size; notes say where the games differ)
PAIRS: dict[str, Pair] = {
    "pd_arena": Pair(
        "PrisonersDilemmaInTheMatrix-v0",
        {},
        "pd_arena",
        {"num_agents": 8, "grid_size": (24, 25), "num_inner_steps": 1000},
        note="24x25 Melting Pot arena, 8 agents; SocialJax's default map has 12 fixed resources and no 'a' cells",
    ),
    "coop_mining": Pair(
        "CoopMining-v0", {}, "coop_mining", {"num_agents": 6, "num_inner_steps": 1000, "num_outer_steps": 1, "cnn": True},
        note="27x27 Melting Pot map, 6 agents; SocialJax pays gold only to the finishing miner, no mine cooldown",
    ),
    "mushrooms": Pair(
        "Mushrooms-v0", {}, "mushrooms", {"num_agents": 5, "num_inner_steps": 1000, "num_outer_steps": 1, "cnn": True},
        note="5 agents; maps differ: ours Melting Pot's dense 14x23 map, SocialJax a 12x23 open grid",
    ),
    "gift": Pair(
        "GiftRefinement-v0", {}, "gift", {"num_agents": 6, "num_inner_steps": 1000, "shared_rewards": False},
        note="6 agents; ours Melting Pot's 27x27 map with its wall, SocialJax's 25x27 without it; SocialJax multiplies by 3",
    ),
    "territory": Pair(
        "Territory-v0", {}, "territory_open", {"num_agents": 9, "num_inner_steps": 1000, "shared_rewards": False},
        note="9 agents, Melting Pot's territory__open map",
    ),
    "harvest": Pair(
        "Harvest-v0", {"preset": "meltingpot"}, "harvest_common_open", {"num_agents": 7},
        note="7 agents; ours Melting Pot's commons_harvest__open map with its border (18x24), SocialJax's grid_size (16, 22)",
    ),
    "cleanup": Pair(
        "Cleanup-v0", {"preset": "meltingpot"}, "clean_up", {"num_agents": 7},
        note="7 agents; ours Melting Pot's clean_up map (21x30), SocialJax's own clean_up map",
    ),
}


def timed(run: Callable[[jax.Array], jax.Array], env_steps_per_call: int, seconds: float) -> float:
    """Env-steps/s of ``run`` (compiled and warmed up first)."""
    run(jax.random.PRNGKey(0)).block_until_ready()
    calls, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds or calls == 0:
        run(jax.random.PRNGKey(calls + 1)).block_until_ready()
        calls += 1
    return env_steps_per_call * calls / (time.perf_counter() - start)


def ours_run(env_id: str, kwargs: dict, num_envs: int, steps: int) -> tuple[Callable, int, tuple]:
    """``motivegym``'s batched random rollout (auto-reset; payoffs and observations summed)."""
    import motivegym
    from motivegym.core.batching import random_rollout

    env, params = motivegym.make_jax(env_id, **kwargs)
    layout = env.layout(params)
    return jax.jit(random_rollout(env, params, num_envs, steps)), env.n_agents(params), tuple(layout.shape)


def socialjax_num_actions(env) -> int:
    """The agents' action count from SocialJax's action space (8, Melting Pot's count, where the env leaves it unset:
    ``pd_arena`` has 8 actions but fills no ``action_spaces``)."""
    try:
        return int(env.action_space(env.agents[0]).n)
    except (KeyError, AttributeError, IndexError):
        return 8


def accept_legacy_clip_keywords() -> None:
    """SocialJax's coop_mining calls ``jnp.clip(x, a_min=…, a_max=…)``, keywords the installed JAX no longer takes:
    ``jnp.clip`` is wrapped (in this process only) to read them as ``min``/``max``; nothing else changes."""
    original = jnp.clip
    if getattr(original, "accepts_legacy_keywords", False):
        return

    def clip(x, min=None, max=None, *, a_min=None, a_max=None, **kwargs):  # noqa: A002 (jnp.clip's own names)
        return original(x, min if a_min is None else a_min, max if a_max is None else a_max, **kwargs)

    clip.accepts_legacy_keywords = True
    jnp.clip = clip


def socialjax_run(name: str, kwargs: dict, num_envs: int, steps: int) -> tuple[Callable, int, tuple]:
    """SocialJax's ``env.step`` (auto-reset inside) vmapped and scanned the same way."""
    import socialjax

    accept_legacy_clip_keywords()

    env = socialjax.make(name, **kwargs)
    n, actions_n = env.num_agents, socialjax_num_actions(env)

    def run(key):
        key, reset_key = jax.random.split(key)
        _, states = jax.vmap(env.reset)(jax.random.split(reset_key, num_envs))

        def body(carry, _):
            states, key, total = carry
            key, action_key, step_key = jax.random.split(key, 3)
            actions = jax.random.randint(action_key, (num_envs, n), 0, actions_n)
            obs, states, rewards, _, _ = jax.vmap(env.step)(jax.random.split(step_key, num_envs), states, actions)
            leaves = jax.tree.leaves(obs) + jax.tree.leaves(rewards)
            return (states, key, total + sum(jnp.sum(x.astype(jnp.float32)) for x in leaves)), None

        (_, _, total), _ = jax.lax.scan(body, (states, key, jnp.float32(0)), None, length=steps)
        return total

    shape = (getattr(env, "GRID_SIZE_ROW", None), getattr(env, "GRID_SIZE_COL", None))
    return jax.jit(run), n, shape


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--socialjax-src", required=True, help="folder holding SocialJax's 'socialjax' package")
    parser.add_argument("--site", required=True, help="pip --target folder with flax, chex, toolz, rich")
    parser.add_argument("--pairs", default="pd_arena", help=f"comma-separated names of PAIRS ({', '.join(PAIRS)})")
    parser.add_argument("--num-envs", type=int, default=1024)
    parser.add_argument("--steps", type=int, default=50, help="env steps per jitted call")
    parser.add_argument("--seconds", type=float, default=5.0, help="minimum timed seconds per side")
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    sys.path[:0] = [args.site, args.socialjax_src]

    import motivegym

    rows = []
    print(
        f"device: {jax.devices()[0].device_kind}; {args.num_envs} envs x {args.steps} steps per call, >= {args.seconds} s per side"
    )
    for name in args.pairs.split(","):
        pair = PAIRS[name]
        if pair.ours not in motivegym.list_envs():
            print(f"{name}: skipped: {pair.ours} is not registered here ({pair.note})")
            continue
        per_call = args.num_envs * args.steps
        try:
            ours, n_ours, shape_ours = ours_run(pair.ours, pair.ours_kwargs, args.num_envs, args.steps)
            ours_rate = timed(ours, per_call, args.seconds)
            theirs, n_theirs, shape_theirs = socialjax_run(pair.socialjax, pair.socialjax_kwargs, args.num_envs, args.steps)
            theirs_rate = timed(theirs, per_call, args.seconds)
        except Exception as error:  # one pair failing (a SocialJax kwarg, a missing map) must not lose the others' rows
            print(f"{name}: failed: {type(error).__name__}: {error}")
            continue
        row = {
            "pair": name, "ours": pair.ours, "socialjax": pair.socialjax, "agents": [n_ours, n_theirs],
            "map": [list(shape_ours), list(shape_theirs)], "num_envs": args.num_envs,
            "ours_env_steps_per_s": ours_rate, "socialjax_env_steps_per_s": theirs_rate, "ratio": ours_rate / theirs_rate,
            "note": pair.note,
        }  # fmt: skip
        rows.append(row)
        print(
            f"{name}: ours {pair.ours} {ours_rate:,.0f} env-steps/s | SocialJax {pair.socialjax} {theirs_rate:,.0f} env-steps/s | "
            f"ratio {row['ratio']:.2f}x | agents {n_ours}/{n_theirs}, map {shape_ours}/{shape_theirs}"
        )
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"device": jax.devices()[0].device_kind, "rows": rows}, handle, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
