"""Atari 2600 games through ale-py: :class:`AtariEnv`, exact states and frame accounting.

* :mod:`~plangym.videogames.atari.env`: :class:`AtariEnv`.
* :mod:`~plangym.videogames.atari.emulator`: the ale-py env under it (one frame per step).
* :mod:`~plangym.videogames.atari.state`: the ALE's serialized state plus plangym's
  sticky-action bookkeeping, as a uint8 vector.
* :mod:`~plangym.videogames.atari.sticky`: sticky actions applied by plangym, exactly.
"""

import ale_py

from plangym.videogames.atari.env import AtariEnv, AtariPyEnvironment, ale_to_ram
from plangym.videogames.atari.state import TRAILER_SIZE

# The ALE writes its banner ("A.L.E: Arcade Learning Environment ... [Powered by Stella]") to
# stderr at Info level for every emulator it builds, workers' included: keep its warnings
# and errors, not the banner.
ale_py.ALEInterface.setLoggerMode(ale_py.LoggerMode.Warning)

__all__ = ["TRAILER_SIZE", "AtariEnv", "AtariPyEnvironment", "ale_to_ram"]
