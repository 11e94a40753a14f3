"""Console games through stable-retro (Genesis, SNES, NES, Game Boy, ...), exactly restorable.

Needs the ``retro`` extra (see ``docs/retro.md``).

* :mod:`~plangym.videogames.retro.env`: :class:`RetroEnv`, and which games it accepts.
* :mod:`~plangym.videogames.retro.actions`: :class:`ActionDiscretizer`, small action sets.
* :mod:`~plangym.videogames.retro.state`: the emulator's save as a compact vector.
* :mod:`~plangym.videogames.retro.slot`: stable-retro's one emulator per process.
"""

from plangym.videogames.retro.actions import GENESIS_BUTTONS, SONIC_ACTIONS, ActionDiscretizer
from plangym.videogames.retro.env import RetroEnv, check_not_scripted, resolve_game

__all__ = [
    "GENESIS_BUTTONS",
    "SONIC_ACTIONS",
    "ActionDiscretizer",
    "RetroEnv",
    "check_not_scripted",
    "resolve_game",
]
