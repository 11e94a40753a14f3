"""NES games through nes-py, and Super Mario Bros through gym-super-mario-bros.

Needs the ``nes`` extra (see ``docs/nes.md``).

* :mod:`~plangym.videogames.nes.env`: :class:`NesEnv`, any iNES ROM.
* :mod:`~plangym.videogames.nes.mario`: :class:`MarioEnv`, Super Mario Bros.
* :mod:`~plangym.videogames.nes.state`: header, the gym env's bookkeeping, emulator dump.
* :mod:`~plangym.videogames.nes.joypad`: controller buttons and :class:`JoypadSpace`.
* :mod:`~plangym.videogames.nes.gym_face`: the gymnasium env that wrappers go around, and
  plangym 0.1's adapters (:class:`GymToGymnasiumWrapper`, :class:`NESWrapper`).
"""

from plangym.videogames.nes.env import NesEnv
from plangym.videogames.nes.gym_face import (
    ActType,
    GymToGymnasiumWrapper,
    NESWrapper,
    ObsType,
    RenderFrame,
)
from plangym.videogames.nes.joypad import COMPLEX_MOVEMENT, RIGHT_ONLY, SIMPLE_MOVEMENT, JoypadSpace
from plangym.videogames.nes.mario import COORDS_KEYS, MarioEnv

__all__ = [
    "COMPLEX_MOVEMENT",
    "COORDS_KEYS",
    "RIGHT_ONLY",
    "SIMPLE_MOVEMENT",
    "ActType",
    "GymToGymnasiumWrapper",
    "JoypadSpace",
    "MarioEnv",
    "NESWrapper",
    "NesEnv",
    "ObsType",
    "RenderFrame",
]
