"""Montezuma's Revenge for Go-Explore-style search: ``PlanMontezuma-v0``.

* :mod:`~plangym.videogames.montezuma.env`: :class:`MontezumaEnv`, the plannable game.
* :mod:`~plangym.videogames.montezuma.tracker`: :class:`CustomMontezuma`, which follows
  Panama Joe from the RAM, and the pyramid of rooms.
* :mod:`~plangym.videogames.montezuma.state`: the tracker's header in front of an Atari state.
"""

from plangym.videogames.montezuma.env import MontezumaEnv
from plangym.videogames.montezuma.state import HEADER_SIZE, STATE_TAG
from plangym.videogames.montezuma.tracker import (
    GAME_ID,
    KEY_BITS,
    N_ROOMS,
    PYRAMID,
    RESET_NOOPS,
    CustomMontezuma,
    MontezumaPosLevel,
    room_xy,
)

__all__ = [
    "GAME_ID",
    "HEADER_SIZE",
    "KEY_BITS",
    "N_ROOMS",
    "PYRAMID",
    "RESET_NOOPS",
    "STATE_TAG",
    "CustomMontezuma",
    "MontezumaEnv",
    "MontezumaPosLevel",
    "room_xy",
]
