"""An Atari env's ALE as gymnasium's Atari wrappers read it: the screen the env shows.

Right after a reset the emulator's screen is not the reset's picture: the env emulates one
frame and restores the state before it (:meth:`AtariEnv._settle_after_reset`), which leaves
that frame on the screen. After a step from a game that was over the env shows a black
screen. A wrapper above a ``make_vec`` sub-env (``AtariPreprocessing(noop_max=0)``) reads the
screen from ``env.unwrapped.ale``: through this view it reads what the env shows.

>>> import plangym
>>> env = plangym.make("ALE/MsPacman-v5")
>>> _, obs, _ = env.reset(seed=3)
>>> bool((ShownALE(env).getScreenRGB() == obs).all())
True
"""

from __future__ import annotations

from typing import Any

import numpy as np


class ShownALE:
    """The ALE of ``env`` (an :class:`~plangym.videogames.atari.env.AtariEnv`), as it shows.

    Its screen readers give the screen the env shows; every other member is the ALE's own.
    """

    def __init__(self, env: Any):
        self._env = env

    def __getattr__(self, name: str) -> Any:
        return getattr(self._env.ale, name)

    def getScreenRGB(self, screen_data: np.ndarray | None = None) -> np.ndarray | None:  # noqa: N802
        """ale-py's reader: a new array, or None once ``screen_data`` is filled."""
        return self._read(screen_data, grayscale=False)

    def getScreenGrayscale(self, screen_data: np.ndarray | None = None) -> np.ndarray | None:  # noqa: N802
        """ale-py's reader: a new array, or None once ``screen_data`` is filled."""
        return self._read(screen_data, grayscale=True)

    def _read(self, out: np.ndarray | None, grayscale: bool) -> np.ndarray | None:
        shown = self._env.shown_screen(grayscale)
        if shown is None:  # the emulator's screen is the env's
            ale = self._env.ale
            read = ale.getScreenGrayscale if grayscale else ale.getScreenRGB
            return read() if out is None else read(out)
        if out is None:
            return shown.copy()
        np.copyto(out, shown.reshape(out.shape))
        return None
