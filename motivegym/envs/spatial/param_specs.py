"""Types and valid ranges of the grid-dilemma parameters (checked by ``motivegym.core.params``).

Horizons and timeouts are ``>= 1``; rewards, costs and penalties are non-negative (a cost is subtracted);
probabilities and pollution fractions lie in ``[0, 1]``; beams have a length ``>= 1`` and an odd width (centred
on the agent); view extents are ``>= 0``. The layout itself (legend, spawn points per agent, Cleanup's river)
is checked by the env. Keys are env class names.
"""

from __future__ import annotations

from motivegym.core.params import ParamRule, ParamSpec, choice, flag, integer, layout, real, real_array

#: the largest Coin Game grid (arrays are g²)
MAX_GRID = 1024


def odd(value: int) -> bool:
    return value % 2 == 1


BEAM_WIDTH = integer(1, check=odd, requirement="an odd width, centred on the agent")

PARAM_SPECS: dict[str, dict[str, ParamSpec]] = {
    "GridDilemma": {
        "max_steps": integer(1),
        "tag_timeout": integer(1),
        "apple_reward": real(0.0),
        "tag_cost": real(0.0),
        "tag_penalty": real(0.0),
        "layout": layout(),
        "n_agents": integer(1, note="at most the layout's spawn points 'P'"),
        "view_ahead": integer(0),
        "view_behind": integer(0),
        "view_side": integer(0),
        "tag_beam_length": integer(1),
        "tag_beam_width": BEAM_WIDTH,
        "rules": choice(
            "motivegym", "ssd", "meltingpot",
            note="'ssd': the Sequential Social Dilemma games' rules (set by preset='ssd'); 'meltingpot': Melting Pot's (preset='meltingpot')",
        ),
        "view_encoding": choice("onehot", "rgb", note="'rgb' (SSD's / Melting Pot's colours, values 0..255) needs rules='ssd' or 'meltingpot'"),
    },
    "Harvest": {
        "regrowth_probs": real_array((4,), 0.0, 1.0),
        "regrowth_radius": integer(1),
        "zap_cooldown": integer(0, note="steps between zaps under rules='meltingpot' (unused otherwise)"),
    },
    "Cleanup": {
        "waste_spawn_prob": real(0.0, 1.0),
        "apple_respawn_prob": real(0.0, 1.0),
        "threshold_depletion": real(0.0, 1.0, low_open=True),
        "threshold_restoration": real(0.0, 1.0, high_open=True),
        "clean_cost": real(0.0),
        "clean_beam_length": integer(1),
        "clean_beam_width": BEAM_WIDTH,
        "zap_cooldown": integer(0, note="steps between zaps under rules='meltingpot' (unused otherwise)"),
        "clean_cooldown": integer(0, note="steps between clean beams under rules='meltingpot' (unused otherwise)"),
        "waste_spawn_delay": integer(0, note="steps before dirt spawns under rules='meltingpot' (unused otherwise)"),
    },
    "CoinGame": {
        "max_steps": integer(1),
        "coin_reward": real(0.0),
        "stolen_penalty": real(0.0),
        "grid_size": integer(2, MAX_GRID),
        "observation": choice("full", "egocentric"),
    },
    "CoinGameJaxMARL": {
        "num_inner_steps": integer(1),
        "num_outer_steps": integer(1),
        "max_steps": integer(1, note="default num_inner_steps × num_outer_steps; at most that"),
        "payoff_matrix": real_array((2, 3), note="row i: player i's own coin, other's coin, penalty when its coin is taken"),
        "egocentric": flag(),
    },
    "InTheMatrix": {
        "max_steps": integer(1),
        "row_matrix": real_array((2, 2), note="row player's (the firer's) payoffs [own strategy, partner's strategy]"),
        "col_matrix": real_array((2, 2), note="column player's (the target's) payoffs [row strategy, column strategy]"),
        "initial_inventory": real(0.0, note="of each resource class, at reset and after every interaction"),
        "respawn_delay": integer(1),
        "freeze_steps": integer(0),
        "cooldown_steps": integer(0),
        "regrowth_rate": real(0.0, 1.0),
        "regrowth_delay": integer(0),
        "resource_health": integer(1),
        "layout": layout(note="legend: '#' wall, 'P' spawn, '1'/'2' resources, 'a' class drawn at reset"),
        "n_agents": integer(1, note="at most the layout's spawn points 'P'"),
        "view_ahead": integer(0),
        "view_behind": integer(0),
        "view_side": integer(0),
        "beam_length": integer(1),
        "beam_width": BEAM_WIDTH,
        "require_ready": flag(),
        "refill_when_all_removed": flag(),
    },
    "GiftRefinement": {
        "max_steps": integer(1),
        "gift_cooldown": integer(1),
        "gift_multiplier": integer(1),
        "capacity": integer(1),
        "token_values": real_array(("levels",), 0.0, note="payoff per consumed token of each refinement level"),
        "regrow_prob": real(0.0, 1.0),
        "initial_token_prob": real(0.0, 1.0),
        "layout": layout(requirement="'T' marks token cells"),
        "n_agents": integer(1, note="at most the layout's spawn points 'P'"),
        "levels": integer(1, 16),
        "gift_beam_length": integer(1),
        "view_ahead": integer(0),
        "view_behind": integer(0),
        "view_side": integer(0),
    },
    "Territory": {
        "max_steps": integer(1),
        "resource_reward": real(0.0),
        "reward_rate": real(0.0, 1.0),
        "reward_delay": integer(0),
        "resource_health": integer(1),
        "repair_delay": integer(0),
        "repair_prob": real(0.0, 1.0),
        "zap_cooldown": integer(1),
        "freeze_steps": integer(0),
        "mark_steps": integer(0),
        "layout": layout(requirement="'R' marks claimable resources"),
        "n_agents": integer(1, note="at most the layout's spawn points 'P'"),
        "claim_beam_length": integer(1),
        "zap_beam_length": integer(1),
        "zap_beam_width": BEAM_WIDTH,
        "view_ahead": integer(0),
        "view_behind": integer(0),
        "view_side": integer(0),
    },
}

#: keywords the grid envs consume themselves (not fields)
KEYWORD_SPECS: dict[str, dict[str, ParamSpec]] = {
    "GridDilemma": {
        "preset": choice(
            "default", "ssd", "meltingpot", "meltingpot_closed", "meltingpot_partnership", default="'default'",
            note="'ssd': SSD's maps and rules; 'meltingpot': Melting Pot's; 'meltingpot_closed'/'meltingpot_partnership': Harvest only (docs/spatial_presets.md)",
        )
    },
    "InTheMatrix": {"preset": choice("default", "repeated", default="'default'", note="'repeated': Melting Pot's two-player __repeated substrate")},
    "Territory": {"preset": choice("open", "rooms", default="'open'", note="Melting Pot's territory__open or territory__rooms map")},
}

PARAM_RULES: dict[str, tuple[ParamRule, ...]] = {
    "Cleanup": (
        ParamRule(
            ("threshold_restoration", "threshold_depletion"),
            lambda p: float(p["threshold_restoration"]) < float(p["threshold_depletion"]),
            "threshold_restoration must be below threshold_depletion (apples grow fully at or below restoration, not at all from depletion)",
        ),
    ),
}

PARAM_SPECS["CoopMining"] = {
    "max_steps": integer(1),
    "iron_reward": real(0.0),
    "gold_reward": real(0.0),
    "iron_regrowth_prob": real(0.0, 1.0),
    "gold_regrowth_prob": real(0.0, 1.0),
    "gold_miners": integer(1, note="at most n_agents"),
    "gold_window": integer(1),
    "mine_cooldown": integer(1),
    "mine_beam_length": integer(1),
    "layout": layout(),
    "n_agents": integer(1, note="at most the layout's spawn points 'P'"),
    "view_ahead": integer(0),
    "view_behind": integer(0),
    "view_side": integer(0),
}

PARAM_SPECS["Mushrooms"] = {
    "max_steps": integer(1),
    "mushroom_rewards": real_array((4,), note="total payoff of eating red, green, blue, orange (routing fixed per kind)"),
    "digestion_steps": real_array((4,), 0.0, note="whole steps the eater cannot move or turn, per kind"),
    "spores": real_array((4,), 0.0, 3.0, note="regrowth draws per eaten mushroom, per kind"),
    "regrowth_probs": real_array((4, 4), 0.0, 1.0, note="row: kind eaten; column: kind a spore grows"),
    "perish_steps": real_array((4,), 1.0, note="steps an uneaten mushroom lasts, per kind"),
    "orange_destroys_red": real(0.0, 1.0),
    "zap_freeze_steps": integer(0),
    "zap_timeout": integer(1),
    "sanction_recovery": integer(1),
    "zap_cooldown": integer(1),
    "zap_beam_length": integer(1),
    "zap_beam_width": BEAM_WIDTH,
    "layout": layout(),
    "n_agents": integer(2, note="at most the layout's floor cells"),
    "view_ahead": integer(0),
    "view_behind": integer(0),
    "view_side": integer(0),
}
