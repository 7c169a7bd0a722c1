"""Crafter's full rules for :class:`~motivegym.envs.sparse.crafter.CrafterTeam` (``rules="crafter"``): constants,
the daylight curve and the ``preset="crafter"`` parameter values.

Sources read (rules learnt, code our own): Crafter (Hafner 2021; ``danijar/crafter`` at e04542a: ``data.yaml``,
``objects.py``, ``env.py``, ``worldgen.py``) and Craftax-Classic (Matthews et al. 2024; ``MichaelTMatthews/Craftax``
v1.6.1: ``craftax_classic/game_logic.py``, ``constants.py``, ``world_gen.py``, ``envs/craftax_state.py``). Where the
two differ, the preset follows Craftax-Classic, the JAX reference; ``docs/crafter.md`` lists every difference.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

Array = jax.Array

# ----- vitals and entities -----
HEALTH, FOOD, DRINK, ENERGY = range(4)
HUNGER, THIRST, FATIGUE, RECOVER = range(4)  # columns of CrafterState.counters
MAX_ITEM = 9

COW_HEALTH = 3
ZOMBIE_HEALTH = 5
SKELETON_HEALTH = 3
COW_FOOD = 6  # food from killing a cow
PLANT_FOOD = 4  # food from eating a ripe plant
SAPLING_PROB = 0.1  # `do` on grass gives a sapling with this probability (Crafter data.yaml `collect.grass`)

ZOMBIE_DAMAGE = 2  # to an awake agent
ZOMBIE_SLEEP_DAMAGE = 7  # to a sleeping agent
ZOMBIE_COOLDOWN = 5  # steps between two zombie attacks
ZOMBIE_CHASE_DISTANCE = 10  # a zombie closer than this (Manhattan) to its target walks towards it ...
ZOMBIE_CHASE_PROB = 0.75  # ... with this probability, else at random
ARROW_DAMAGE = 2
SKELETON_RELOAD = 4  # steps between two arrows
SKELETON_FAR = 10  # at or beyond this distance a skeleton approaches its target
SKELETON_NEAR = 3  # at or within this distance it retreats (and shoots when it cannot)
SKELETON_SHOOT = (4, 5)  # it shoots at distances in this closed range
SKELETON_INTENT_PROB = 0.15  # probability that a skeleton follows its intent instead of a random move

COW_SPAWN_MIN_DISTANCE = 3  # cows spawn farther than this from every agent
HOSTILE_SPAWN_MIN_DISTANCE = 9  # zombies and skeletons spawn farther than this from every agent


def light_level(t: Array, day_length: Array) -> Array:
    """Daylight in ``[0, 1]`` after ``t`` steps: ``1 − |cos(π·((t / day_length) mod 1 + 0.3))|³`` (Crafter
    ``env._update_time``, Craftax-Classic ``calculate_light_level``); ``1`` (always day) when ``day_length`` is 0.

    The night (daylight < 0.5) is the stretch around ``t ≡ 0.7·day_length`` (mod ``day_length``); an episode
    starts in the morning at daylight ``1 − cos(0.3π)³ ≈ 0.80``.
    """
    length = jnp.maximum(jnp.asarray(day_length, jnp.float32), 1e-6)
    progress = jnp.mod(jnp.asarray(t, jnp.float32) / length, 1.0) + 0.3
    light = 1.0 - jnp.abs(jnp.cos(jnp.pi * progress)) ** 3
    return jnp.where(jnp.asarray(day_length) > 0, light, 1.0).astype(jnp.float32)


def zombie_spawn_chance(light: Array, base: Array, night: Array) -> Array:
    """Per-step zombie spawn probability ``base + night · (1 − light)²`` (Craftax-Classic ``spawn_mobs``)."""
    return base + night * (1.0 - light) ** 2


#: ``CrafterTeam-v0`` with ``preset="crafter"``: Crafter's world and all 22 achievements on Craftax-Classic's
#: rules (``EnvParams`` / ``StaticEnvParams`` defaults: 64×64 map, 3 cows, 3 zombies, 2 skeletons, 3 arrows, 10 plants).
CRAFTER_PRESET: dict[str, object] = {
    "rules": "crafter",
    "world_size": 64,
    "n_cows": 3,
    "max_zombies": 3,
    "max_skeletons": 2,
    "max_arrows": 3,
    "max_plants": 10,
    "day_length": 300.0,
    "table_wood": 2,
    "furnace_stone": 1,
    "cow_spawn_prob": 0.1,
    "zombie_spawn_base": 0.02,
    "zombie_spawn_night": 0.1,
    "skeleton_spawn_prob": 0.05,
    "mob_despawn_distance": 14,
    "plant_ripe_age": 600,
}

PRESETS: dict[str, dict[str, object]] = {"team": {}, "crafter": CRAFTER_PRESET}
