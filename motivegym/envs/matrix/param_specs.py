"""Types and valid ranges of the matrix-game parameters (checked by ``motivegym.core.params``).

The integrated layer's weights ``W`` are dependencies in ``[0, 1]`` with a zero diagonal (as TR-1's ``D``);
``partner_weight`` is the partners' total weight ``w`` of ``W = w(1 − I)/(n − 1)``, at most the own payoff's.
Payoff tables are any finite numbers; benefits, costs and fines are non-negative. Keys are env class names.
``max_steps`` (env steps) is every env's horizon; ``rounds`` is its alias (a conflicting pair raises ``ValueError``).
"""

from __future__ import annotations

import numpy as np

from motivegym.core.params import ParamSpec, flag, integer, real, real_array

#: the most agents ``n_agents`` accepts (observations and W grow with n)
MAX_AGENTS = 1024


def zero_diagonal(matrix: np.ndarray) -> bool:
    return bool(np.all(np.diagonal(matrix) == 0))


def weights(shape: tuple[int | str, ...]) -> ParamSpec:
    return real_array(shape, 0.0, 1.0, check=zero_diagonal, requirement="a zero diagonal", note="W of the integrated layer")


PARTNER_WEIGHT = real(0.0, 1.0, default="0.5", note="W = w(1 − I)/(n − 1)")
ROUNDS = integer(1, default="max_steps", note="sets max_steps")
#: PublicGoodsPunishment's rounds: 2 env steps each with punishment, 1 without
PUNISHMENT_ROUNDS = integer(1, default="10", note="alias: max_steps = rounds × steps per round")

PARAM_SPECS: dict[str, dict[str, ParamSpec]] = {
    "MatrixGame": {
        "payoff_table": real_array((2, 2, 2), note="P[a_0, a_1] = (π_0, π_1)"),
        "interdependence": weights((2, 2)),
        "max_steps": integer(1),
    },
    "PublicGoodsPunishment": {
        "endowment": real(0.0, low_open=True),
        "multiplier": real(0.0, low_open=True),
        "punish_cost": real(0.0),
        "punish_fine": real(0.0),
        "interdependence": weights(("n", "n")),
        "max_steps": integer(1),
        "n_agents": integer(2, MAX_AGENTS),
        "contribution_levels": integer(2),
        "punishment": flag(),
    },
    "DonorGame": {
        "benefit": real(0.0),
        "cost": real(0.0),
        "max_image": integer(1),
        "interdependence": weights(("n", "n")),
        "max_steps": integer(1),
        "n_agents": integer(2, MAX_AGENTS),
    },
}

#: keywords the envs consume themselves (not fields)
KEYWORD_SPECS: dict[str, dict[str, ParamSpec]] = {
    "MatrixGame": {"rounds": ROUNDS, "partner_weight": PARTNER_WEIGHT},
    "PublicGoodsPunishment": {"rounds": PUNISHMENT_ROUNDS, "partner_weight": PARTNER_WEIGHT},
    "DonorGame": {"rounds": ROUNDS, "partner_weight": PARTNER_WEIGHT},
}
