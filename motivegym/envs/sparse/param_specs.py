"""Types and valid ranges of the sparse-reward env parameters (checked by ``motivegym.core.params``).

Horizons are ``>= 1``; payoffs paid for success are non-negative; probabilities lie in ``[0, 1]``. CrafterTeam's
vitals counters rise from 0 towards the hunger/thirst/fatigue/recover thresholds (positive) and fall towards
the rest/degeneration thresholds (non-positive), as in Crafter. Agent counts are the envs' own caps; grid sizes
are capped at ``MAX_GRID`` (arrays are size²). Keys are env class names.
"""

from __future__ import annotations

from motivegym.core.params import ParamSpec, choice, flag, integer, real

MAX_GRID = 1024


def odd(value: int) -> bool:
    return value % 2 == 1


PARAM_SPECS: dict[str, dict[str, ParamSpec]] = {
    "CrafterTeam": {
        "max_steps": integer(1),
        "health_reward_scale": real(0.0),
        "hunger_threshold": real(0.0, low_open=True),
        "thirst_threshold": real(0.0, low_open=True),
        "fatigue_threshold": real(0.0, low_open=True),
        "rest_threshold": real(None, 0.0),
        "recover_threshold": real(0.0, low_open=True),
        "degen_threshold": real(None, 0.0),
        "cow_move_prob": real(0.0, 1.0),
        "agent_attack_damage": integer(0),
        "table_wood": integer(0, 9),
        "furnace_stone": integer(0, 9),
        "day_length": real(0.0),
        "cow_spawn_prob": real(0.0, 1.0),
        "zombie_spawn_base": real(0.0, 1.0),
        "zombie_spawn_night": real(0.0, 1.0),
        "skeleton_spawn_prob": real(0.0, 1.0),
        "mob_despawn_distance": integer(1),
        "plant_ripe_age": integer(1),
        "n_agents": integer(1, 6, note="2-6; 1 needs rules='crafter'"),
        "world_size": integer(12, MAX_GRID),
        "n_cows": integer(0, 16),
        "view_height": integer(1, check=odd, requirement="odd"),
        "view_width": integer(1, check=odd, requirement="odd"),
        "nearby_distance": integer(1),
        "lava": flag(),
        "rules": choice("team", "crafter"),
        "max_zombies": integer(0, 64, note="needs rules='crafter'"),
        "max_skeletons": integer(0, 64, note="needs rules='crafter'"),
        "max_arrows": integer(0, 64, note="needs rules='crafter'"),
        "max_plants": integer(0, 64, note="needs rules='crafter'"),
        "mob_target": choice("nearest", "first"),
        "shared_achievements": flag(),
    },
    "KeyDoorGift": {
        "max_steps": integer(1),
        "door_payoff": real(0.0),
        "collective_payoff": real(0.0),
        "n_agents": integer(2, 8, note="also room for agents, key and doors"),
        "size": integer(4, MAX_GRID),
    },
    "CooperativeNavigation": {
        "max_steps": integer(1),
        "success_payoff": real(0.0),
        "n_agents": integer(2, 8, note="at most size²/2"),
        "size": integer(2, MAX_GRID),
    },
}

#: keywords CrafterTeam consumes itself: ``preset="crafter"`` sets :data:`crafter_rules.CRAFTER_PRESET` (overridable)
KEYWORD_SPECS: dict[str, dict[str, ParamSpec]] = {
    "CrafterTeam": {"preset": choice("team", "crafter", default="team")},
}
