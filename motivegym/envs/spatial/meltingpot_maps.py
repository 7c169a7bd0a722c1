"""Melting Pot's maps, parameters and colours (``preset="meltingpot"`` and its Harvest variants).

Source: google-deepmind/meltingpot (commit 81ee2e7), ``meltingpot/configs/substrates/commons_harvest__open.py``,
``commons_harvest__closed.py``, ``commons_harvest__partnership.py``, ``clean_up.py`` and
``meltingpot/utils/substrates/colors.py``. The ``ASCII_MAP`` of each substrate is kept below in Melting Pot's own
characters and translated to this package's legend (:data:`motivegym.envs.spatial.grid.LEGEND`) by :func:`to_legend`.
Purely decorative characters (Clean Up's shadows and grass edges) become floor.
"""

from __future__ import annotations

import numpy as np

from motivegym.envs.spatial.grid import APPLE, APPLE_SPAWN_EMPTY, FLOOR, INSIDE_SPAWN, RIVER, SPAWN, STREAM, WALL, WASTE

#: ``commons_harvest__open.ASCII_MAP`` verbatim (18×24: 64 apples, 60 spawn points ``P``, 2 inside spawn points ``Q``)
MP_HARVEST_OPEN_MAP = (
    "WWWWWWWWWWWWWWWWWWWWWWWW",
    "WAAA    A      A    AAAW",
    "WAA    AAA    AAA    AAW",
    "WA    AAAAA  AAAAA    AW",
    "W      AAA    AAA      W",
    "W       A      A       W",
    "W  A                A  W",
    "W AAA  Q        Q  AAA W",
    "WAAAAA            AAAAAW",
    "W AAA              AAA W",
    "W  A                A  W",
    "W                      W",
    "W                      W",
    "W                      W",
    "W  PPPPPPPPPPPPPPPPPP  W",
    "W PPPPPPPPPPPPPPPPPPPP W",
    "WPPPPPPPPPPPPPPPPPPPPPPW",
    "WWWWWWWWWWWWWWWWWWWWWWWW",
)

#: ``commons_harvest__closed.ASCII_MAP`` verbatim: the same apples walled into two rooms with one-cell doors
MP_HARVEST_CLOSED_MAP = (
    "WWWWWWWWWWWWWWWWWWWWWWWW",
    "WAAA    A  WW  A    AAAW",
    "WAA    AAA WW AAA    AAW",
    "WA    AAAAAWWAAAAA    AW",
    "W      AAA WW AAA      W",
    "W       A  WW  A       W",
    "W  A       WW       A  W",
    "W AAA  Q   WW   Q  AAA W",
    "WAAAAA     WW     AAAAAW",
    "W AAA  WWWWWWWWWW  AAA W",
    "W  A       WW       A  W",
    "WWWWWWWWWW WW WWWWWWWWWW",
    "W          WW          W",
    "W  WWWWWWWWWWWWWWWWWW  W",
    "W  PPPPPPPPPPPPPPPPPP  W",
    "W PPPPPPPPPPPPPPPPPPPP W",
    "WPPPPPPPPPPPPPPPPPPPPPPW",
    "WWWWWWWWWWWWWWWWWWWWWWWW",
)

#: ``commons_harvest__partnership.ASCII_MAP`` verbatim: the closed map with the middle wall opened into ``I``
#: tiles (floor with a role-based punishment that only the ``putative_cooperator`` role of its scenarios feels),
#: so each room has two entrances
MP_HARVEST_PARTNERSHIP_MAP = (
    "WWWWWWWWWWWWWWWWWWWWWWWW",
    "WAAA    A  II  A    AAAW",
    "WAA    AAA II AAA    AAW",
    "WA    AAAAAIIAAAAA    AW",
    "W      AAA II AAA      W",
    "W       A  II  A       W",
    "W  A       II       A  W",
    "W AAA  Q   WW   Q  AAA W",
    "WAAAAA     II     AAAAAW",
    "W AAA  WWWWWWWWWW  AAA W",
    "W  A       WW       A  W",
    "WWWWWWWWWW WW WWWWWWWWWW",
    "W          WW          W",
    "W  WWWWWWWWWWWWWWWWWW  W",
    "W  PPPPPPPPPPPPPPPPPP  W",
    "W PPPPPPPPPPPPPPPPPPPP W",
    "WPPPPPPPPPPPPPPPPPPPPPPW",
    "WWWWWWWWWWWWWWWWWWWWWWWW",
)

#: ``clean_up.ASCII_MAP`` verbatim (21×30): ``H`` clean and ``F`` dirty potential-dirt river cells, ``~``/``S`` water
#: that is never polluted, ``B``/``T`` potential apples (empty at reset), ``P`` spawn points; the rest is decoration
MP_CLEAN_UP_MAP = (
    "WWWWWWWWWWWWWWWWWWWWWWWWWWWWWW",
    "WHFFFHFFHFHFHFHFHFHFHHFHFFFHFW",
    "WHFHFHFFHFHFHFHFHFHFHHFHFFFHFW",
    "WHFFHFFHHFHFHFHFHFHFHHFHFFFHFW",
    "WHFHFHFFHFHFHFHFHFHFHHFHFFFHFW",
    "WHFFFFFFHFHFHFHFHFHFHHFHFFFHFW",
    "W==============+~FHHHHHHf====W",
    "W   P    P      ===+~SSf     W",
    "W     P     P   P  <~Sf  P   W",
    "W             P   P<~S>      W",
    "W   P    P         <~S>   P  W",
    "W               P  <~S>P     W",
    "W     P           P<~S>      W",
    "W           P      <~S> P    W",
    "W  P             P <~S>      W",
    "W^T^T^T^T^T^T^T^T^T;~S,^T^T^TW",
    "WBBBBBBBBBBBBBBBBBBBssBBBBBBBW",
    "WBBBBBBBBBBBBBBBBBBBBBBBBBBBBW",
    "WBBBBBBBBBBBBBBBBBBBBBBBBBBBBW",
    "WBBBBBBBBBBBBBBBBBBBBBBBBBBBBW",
    "WWWWWWWWWWWWWWWWWWWWWWWWWWWWWW",
)

#: Melting Pot map character -> this package's legend character
MP_LEGEND = {
    "W": WALL, " ": FLOOR, "P": SPAWN, "Q": INSIDE_SPAWN, "A": APPLE, "I": FLOOR,  # commons_harvest
    "B": APPLE_SPAWN_EMPTY, "T": APPLE_SPAWN_EMPTY, "H": RIVER, "F": WASTE, "~": STREAM, "S": STREAM,  # clean_up
    "s": FLOOR, "+": FLOOR, "f": FLOOR, ";": FLOOR, ",": FLOOR, "^": FLOOR, "=": FLOOR, ">": FLOOR, "<": FLOOR,
}  # fmt: skip


def to_legend(rows: tuple[str, ...]) -> tuple[str, ...]:
    """A Melting Pot ASCII map in this package's legend; unknown characters raise ``ValueError``."""
    unknown = sorted({c for row in rows for c in row} - set(MP_LEGEND))
    if unknown:
        raise ValueError(f"Melting Pot map has characters {unknown} outside {sorted(MP_LEGEND)}")
    return tuple("".join(MP_LEGEND[c] for c in row) for row in rows)


HARVEST_MP_OPEN_LAYOUT = to_legend(MP_HARVEST_OPEN_MAP)
HARVEST_MP_CLOSED_LAYOUT = to_legend(MP_HARVEST_CLOSED_MAP)
HARVEST_MP_PARTNERSHIP_LAYOUT = to_legend(MP_HARVEST_PARTNERSHIP_MAP)
CLEANUP_MP_LAYOUT = to_legend(MP_CLEAN_UP_MAP)

#: what every Melting Pot preset sets alike: 7 players (``default_player_roles``), the 11×11 window 9 ahead /
#: 1 behind / 5 to each side (``Avatar.view``), a zap beam 3 wide (``beamRadius = 1``), no zap penalty or reward,
#: horizon 1000 (the minimum of its stochastic episode ending), one-hot cells (``view_encoding="rgb"`` for colours)
MP_COMMON_PARAMS = dict(
    max_steps=1000, apple_reward=1.0, tag_cost=0.0, tag_penalty=0.0, n_agents=7, view_ahead=9, view_behind=1, view_side=5,
    tag_beam_width=3, rules="meltingpot", view_encoding="onehot",
)  # fmt: skip

#: ``commons_harvest__open``: ``REGROWTH_PROBABILITIES``, ``APPLE_RESPAWN_RADIUS``, ``Zapper`` kwargs.
#: ``tag_timeout = framesTillRespawn + 1``: the step after the zap plus ``framesTillRespawn`` frames of dmlab2d's
#: ``startFrame`` count (see :func:`motivegym.envs.spatial.meltingpot_rules.zap_beams`)
MP_HARVEST_OPEN = dict(regrowth_probs=[0.0, 0.0025, 0.005, 0.025], regrowth_radius=2, zap_cooldown=2, tag_beam_length=3, tag_timeout=5)
#: ``commons_harvest__closed`` / ``__partnership``: rarer regrowth at one neighbour, a longer beam, a long removal
MP_HARVEST_ROOMS = dict(regrowth_probs=[0.0, 0.001, 0.005, 0.025], regrowth_radius=2, zap_cooldown=1, tag_beam_length=4, tag_timeout=101)
#: ``clean_up``: ``AppleGrow``, ``DirtSpawner``, ``Zapper`` (cooldown 10, respawn after 50 frames), ``Cleaner``
MP_CLEAN_UP = dict(
    apple_respawn_prob=0.05, threshold_depletion=0.4, threshold_restoration=0.0, waste_spawn_prob=0.5, waste_spawn_delay=50,
    zap_cooldown=10, tag_beam_length=3, tag_timeout=51, clean_cooldown=2, clean_beam_length=3, clean_beam_width=3, clean_cost=0.0,
)  # fmt: skip

#: one colour per object for ``view_encoding="rgb"`` (the dominant colour of each Melting Pot sprite); cells off the
#: map are black as dmlab2d's out-of-bounds sprite
MP_COLOURS = {
    "outside": (0, 0, 0),
    "floor": (220, 205, 185),  # commons_harvest FLOOR / dessicated grass
    "grass": (158, 194, 101),  # commons_harvest GRASS (an apple cell with live apples within the radius)
    "apple": (214, 88, 88),  # commons_harvest apple
    "wall": (95, 95, 95),
    "self": (50, 100, 200),  # commons_harvest TARGET_SPRITE_SELF
    "sand": (219, 218, 186),  # clean_up SAND
    "cleanup_grass": (164, 189, 75),  # clean_up GRASS under the potential apples
    "cleanup_apple": (212, 80, 57),
    "water": (35, 133, 168),
    "dirt": (27, 149, 143),  # clean_up dirt (2, 245, 80) at alpha 50/255 over the water
    "cleanup_self": (45, 110, 220),  # clean_up self colour: human_readable[0]
}
#: ``colors.human_readable``: avatar ``i`` is drawn in colour ``i`` (commons_harvest) or ``i + 1`` (clean_up)
MP_AVATAR_COLOURS = np.array(
    [
        [45, 110, 220], [125, 50, 200], [205, 5, 165], [245, 65, 65], [245, 130, 0], [195, 180, 0], [125, 185, 65], [35, 185, 175],
        [160, 15, 200], [230, 50, 95], [230, 90, 55], [220, 140, 15], [180, 195, 0], [25, 210, 140], [25, 170, 200], [85, 80, 210],
    ],
    np.int32,
)  # fmt: skip
MAX_MP_RGB_AGENTS = len(MP_AVATAR_COLOURS) - 1
