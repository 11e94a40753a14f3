"""Montezuma's Revenge for Go-Explore-style search: ``PlanMontezuma-v0``.

* :mod:`~plangym.videogames.montezuma.env`: :class:`MontezumaEnv`, the plannable game.
* :mod:`~plangym.videogames.montezuma.tracker`: :class:`CustomMontezuma`, which follows
  Panama Joe from the RAM (default) or, as 0.1 did, from the screen (pixel mode).
* :mod:`~plangym.videogames.montezuma.pixels`: what 0.1 read from the screen.
* :mod:`~plangym.videogames.montezuma.rooms`: the pyramid of rooms, :class:`MontezumaPosLevel`.
* :mod:`~plangym.videogames.montezuma.state`: the tracker's header in front of an Atari state.
"""

from plangym.videogames.montezuma.env import MontezumaEnv
from plangym.videogames.montezuma.pixels import KEY_BITS, OBJECT_PIXELS
from plangym.videogames.montezuma.rooms import (
    KNOWN_XY,
    N_ROOMS,
    PYRAMID,
    MontezumaPosLevel,
    room_xy,
)
from plangym.videogames.montezuma.state import HEADER_SIZE, PIXEL_HEADER_SIZE, STATE_TAG
from plangym.videogames.montezuma.tracker import (
    GAME_ID,
    RESET_NOOPS,
    CustomMontezuma,
)

__all__ = [
    "GAME_ID",
    "HEADER_SIZE",
    "KEY_BITS",
    "KNOWN_XY",
    "N_ROOMS",
    "OBJECT_PIXELS",
    "PIXEL_HEADER_SIZE",
    "PYRAMID",
    "RESET_NOOPS",
    "STATE_TAG",
    "CustomMontezuma",
    "MontezumaEnv",
    "MontezumaPosLevel",
    "room_xy",
]
