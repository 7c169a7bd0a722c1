"""The Sequential Social Dilemma games' maps, actions and colours (``preset="ssd"``).

Source: eugenevinitsky/sequential_social_dilemma_games (SSD), ``social_dilemmas/maps.py``,
``envs/agent.py``, ``envs/map_env.py``, ``envs/cleanup.py``. The maps below are SSD's ``HARVEST_MAP``
(16×38: 155 apple cells, 20 spawn points) and ``CLEANUP_MAP`` (25×18: 56 waste + 63 river = 119 potential
waste cells, 12 stream cells, 103 apple spawn cells, 10 spawn points) in SSD's own characters, translated
to this package's legend (:data:`motivegym.envs.spatial.grid.LEGEND`) by :func:`to_legend`.
"""

from __future__ import annotations

import numpy as np

from motivegym.envs.spatial.grid import APPLE, APPLE_SPAWN_EMPTY, FLOOR, RIVER, SPAWN, STREAM, WALL, WASTE

#: SSD ``HARVEST_MAP`` verbatim ('@' wall, 'P' spawn point, 'A' apple)
SSD_HARVEST_MAP = (
    "@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@",
    "@ P   P      A    P AAAAA    P  A P  @",
    "@  P     A P AA    P    AAA    A  A  @",
    "@     A AAA  AAA    A    A AA AAAA   @",
    "@ A  AAA A    A  A AAA  A  A   A A   @",
    "@AAA  A A    A  AAA A  AAA        A P@",
    "@ A A  AAA  AAA  A A    A AA   AA AA @",
    "@  A A  AAA    A A  AAA    AAA  A    @",
    "@   AAA  A      AAA  A    AAAA       @",
    "@ P  A       A  A AAA    A  A      P @",
    "@A  AAA  A  A  AAA A    AAAA     P   @",
    "@    A A   AAA  A A      A AA   A  P @",
    "@     AAA   A A  AAA      AA   AAA P @",
    "@ A    A     AAA  A  P          A    @",
    "@       P     A         P  P P     P @",
    "@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@",
)

#: SSD ``CLEANUP_MAP`` verbatim ('R' river, 'H' waste at reset, 'S' stream, 'B' apple spawn point, empty at reset)
SSD_CLEANUP_MAP = (
    "@@@@@@@@@@@@@@@@@@",
    "@RRRRRR     BBBBB@",
    "@HHHHHH      BBBB@",
    "@RRRRRR     BBBBB@",
    "@RRRRR  P    BBBB@",
    "@RRRRR    P BBBBB@",
    "@HHHHH       BBBB@",
    "@RRRRR      BBBBB@",
    "@HHHHHHSSSSSSBBBB@",
    "@HHHHHHSSSSSSBBBB@",
    "@RRRRR   P P BBBB@",
    "@HHHHH   P  BBBBB@",
    "@RRRRRR    P BBBB@",
    "@HHHHHH P   BBBBB@",
    "@RRRRR       BBBB@",
    "@HHHH    P  BBBBB@",
    "@RRRRR       BBBB@",
    "@HHHHH  P P BBBBB@",
    "@RRRRR       BBBB@",
    "@HHHH       BBBBB@",
    "@RRRRR       BBBB@",
    "@HHHHH      BBBBB@",
    "@RRRRR       BBBB@",
    "@HHHH       BBBBB@",
    "@@@@@@@@@@@@@@@@@@",
)

#: SSD map character -> this package's legend character
SSD_LEGEND = {"@": WALL, " ": FLOOR, "P": SPAWN, "A": APPLE, "B": APPLE_SPAWN_EMPTY, "R": RIVER, "H": WASTE, "S": STREAM}


def to_legend(rows: tuple[str, ...]) -> tuple[str, ...]:
    """An SSD ASCII map in this package's legend; unknown SSD characters raise ``ValueError``."""
    unknown = sorted({c for row in rows for c in row} - set(SSD_LEGEND))
    if unknown:
        raise ValueError(f"SSD map has characters {unknown} outside {sorted(SSD_LEGEND)}")
    return tuple("".join(SSD_LEGEND[c] for c in row) for row in rows)


HARVEST_SSD_LAYOUT = to_legend(SSD_HARVEST_MAP)
CLEANUP_SSD_LAYOUT = to_legend(SSD_CLEANUP_MAP)

#: what ``preset="ssd"`` sets alike in both games (``map_env.py``/``agent.py``): 5 agents, horizon 1000, FIRE costs 1
#: and each hit 50 with nobody removed, a 5 × 3 beam, a 15×15 RGB view (``view_len = 7``), SSD's rules
SSD_COMMON_PARAMS = dict(
    max_steps=1000, tag_timeout=1, apple_reward=1.0, tag_cost=1.0, tag_penalty=50.0, n_agents=5,
    view_ahead=7, view_behind=7, view_side=7, tag_beam_length=5, tag_beam_width=3, rules="ssd", view_encoding="rgb",
)  # fmt: skip

#: SSD action indices (``agent.py`` BASE_ACTIONS, HARVEST_ACTIONS, CLEANUP_ACTIONS); moves are egocentric
MOVE_LEFT, MOVE_RIGHT, MOVE_UP, MOVE_DOWN, STAY, TURN_CLOCKWISE, TURN_COUNTERCLOCKWISE, FIRE, CLEAN = range(9)
SSD_ACTION_NAMES = (
    "MOVE_LEFT", "MOVE_RIGHT", "MOVE_UP", "MOVE_DOWN", "STAY", "TURN_CLOCKWISE", "TURN_COUNTERCLOCKWISE", "FIRE", "CLEAN",
)  # fmt: skip
#: quarter turns (0 forward, 1 right, 2 back, 3 left) of the move actions relative to the facing
SSD_MOVE_TURNS = {MOVE_UP: 0, MOVE_RIGHT: 1, MOVE_DOWN: 2, MOVE_LEFT: 3}

#: SSD colours (``map_env.DEFAULT_COLOURS``, ``cleanup.CLEANUP_COLORS``): empty and off-map cells are black
SSD_COLOURS = {
    "floor": (0, 0, 0),
    "wall": (180, 180, 180),
    "apple": (0, 255, 0),
    "river": (113, 75, 24),
    "stream": (113, 75, 24),
    "waste": (99, 156, 194),
}
#: agent ``i`` is drawn with SSD's colour of character ``str(i + 1)`` (SSD has colours for nine agents)
SSD_AGENT_COLOURS = np.array(
    [[0, 0, 255], [2, 81, 154], [204, 0, 204], [216, 30, 54], [254, 151, 0], [100, 255, 255], [99, 99, 255], [250, 204, 255], [238, 223, 16]],
    np.int32,
)
MAX_SSD_AGENTS = len(SSD_AGENT_COLOURS)
