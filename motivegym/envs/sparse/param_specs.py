"""Types and valid ranges of the sparse-reward env parameters (checked by ``motivegym.core.params``).

Horizons are ``>= 1``; payoffs paid for success are non-negative; probabilities lie in ``[0, 1]``. CrafterTeam's
vitals counters rise from 0 towards the hunger/thirst/fatigue/recover thresholds (positive) and fall towards
the rest/degeneration thresholds (non-positive), as in Crafter. Agent counts are the envs' own caps; grid sizes
are capped at ``MAX_GRID`` (arrays are size²). Keys are env class names.
"""

from __future__ import annotations

from motivegym.core.params import ParamSpec, flag, integer, real

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
        "n_agents": integer(2, 6),
        "world_size": integer(12, MAX_GRID),
        "n_cows": integer(0, 16),
        "view_height": integer(1, check=odd, requirement="odd"),
        "view_width": integer(1, check=odd, requirement="odd"),
        "nearby_distance": integer(1),
        "lava": flag(),
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
