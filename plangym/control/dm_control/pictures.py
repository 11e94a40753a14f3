"""Pictures of a dm_control task: ``get_image``, plangym 0.1's ``render(mode)`` and ``show_game``.

``render(mode="human")`` keeps each picture in ``env.viewer``, and ``show_game`` plays them
in a window. plangym 0.1 showed them with gym's ``SimpleImageViewer`` (pyglet) and
silently showed nothing when that could not be imported; here the window is pygame's, and
what happens is said. Without pygame: an ImportError naming it. Without a display, SDL
falls back to its "offscreen" driver: the pictures play into nowhere, with a
RuntimeWarning saying so (none when ``SDL_VIDEODRIVER`` was chosen, e.g. "dummy" in the
tests); :func:`plangym.utils.get_display` starts a virtual display to show them on. When
SDL cannot open even that, a RuntimeError names the ways out.

>>> import os
>>> os.environ.setdefault("SDL_VIDEODRIVER", "dummy")  # no display where doctests run
'dummy'
>>> window = FrameWindow("demo")
>>> window.play([np.zeros((4, 6, 3), np.uint8)] * 2, sleep=0.0)
>>> window.size
(6, 4)
>>> window.close()
"""

from __future__ import annotations

import os
import time
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from plangym.utils.fork_safety import note_fork_unsafe
from plangym.validation import describe


class DMControlPictures:
    """The picture methods of :class:`~plangym.control.dm_control.DMControlEnv`."""

    IMAGE_SHAPE = (240, 320)  # (height, width) of get_image(), as in plangym 0.1
    viewer: list[np.ndarray]  # what render("human") collects for show_game
    _window: FrameWindow | None

    @property
    def metadata(self) -> dict[str, Any]:
        """Render modes and frames per second of one agent step."""
        env: Any = self
        fps = 1.0 / (env.gym_env.control_timestep() * env.frameskip)
        return {"render_modes": ["rgb_array"], "render_fps": fps}

    def get_image(self) -> np.ndarray:
        """Return an RGB picture (240, 320, 3) from camera 0 (the free camera if none).

        Drawn in any render mode, as in plangym 0.1: the physics draws itself.
        """
        return self._draw()

    def render(self, mode: str | None = None) -> np.ndarray | bool | None:
        """Draw a picture from camera 0, as plangym 0.1 did with ``mode``.

        Args:
            mode: None: the env's ``render_mode`` decides (gymnasium's rule: the picture
                for "rgb_array"). "rgb_array": return the picture. "human": keep it in
                :attr:`viewer` for :meth:`show_game` and return True. An explicit mode
                draws whatever ``render_mode`` is, as in plangym 0.1.

        >>> from plangym.control.dm_control import DMControlEnv
        >>> env = DMControlEnv("cartpole-balance", seed=0)
        >>> env.render("rgb_array").shape, env.render(mode="human"), len(env.viewer)
        ((240, 320, 3), True, 1)
        """
        if mode is None:  # render_mode=None draws nothing, as in every family
            env: Any = self  # a DMControlEnv: render_mode is PlangymEnv's
            return None if env.render_mode is None else self.get_image()
        if mode not in ("rgb_array", "human"):
            raise ValueError(f"mode: expected None, 'rgb_array' or 'human', received {mode!r}")
        image = self._draw()
        if mode == "rgb_array":
            return image
        self.viewer.append(image)
        return True

    def show_game(self, sleep: float = 0.05) -> None:
        """Play the pictures ``render(mode="human")`` kept, ``sleep`` seconds each, in a window.

        The window is pygame's (an ImportError names pygame when it is missing); without a
        display the pictures play into nowhere, with a RuntimeWarning (see
        :mod:`~plangym.control.dm_control.pictures`). It stays open, showing the last
        picture, until the next call or ``close()``. Nothing kept: nothing to show.
        """
        if not self.viewer:
            return
        if self._window is None:
            self._window = FrameWindow(f"plangym {getattr(self, 'name', 'dm_control')}")
        self._window.play(self.viewer, sleep=float(sleep))

    def close_window(self) -> None:
        """Close the :meth:`show_game` window, if one is open."""
        window, self._window = getattr(self, "_window", None), None
        if window is not None:
            window.close()

    def _draw(self) -> np.ndarray:
        env: Any = self
        physics = env.gym_env.physics
        height, width = self.IMAGE_SHAPE
        camera = 0 if physics.model.ncam > 0 else -1
        note_fork_unsafe("an OpenGL context (dm_control pictures)")
        return physics.render(height=height, width=width, camera_id=camera)


def _import_pygame() -> Any:
    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")  # no greeting on import
    try:
        import pygame
    except ImportError as error:
        raise ImportError(
            "show_game: needs pygame to open a window: pip install pygame (or take the "
            "pictures from env.viewer and show them yourself)"
        ) from error
    return pygame


class FrameWindow:
    """A pygame window showing RGB pictures, sized by the first one.

    Args:
        title: The window's caption.
    """

    def __init__(self, title: str):
        self.title = title
        self.size: tuple[int, int] | None = None  # (width, height) once opened
        self._screen: Any = None

    def play(self, frames: Sequence[np.ndarray], sleep: float) -> None:
        """Show ``frames`` one after the other, ``sleep`` seconds each."""
        for i, frame in enumerate(frames):
            self.show(frame, name=f"frames[{i}]")
            if sleep > 0:
                time.sleep(sleep)

    def show(self, frame: np.ndarray, name: str = "frame") -> None:
        """Draw one (height, width, 3) uint8 picture."""
        if not (
            isinstance(frame, np.ndarray)
            and frame.dtype == np.uint8
            and frame.ndim == 3
            and frame.shape[2] == 3
        ):
            raise ValueError(
                f"{name}: expected an RGB picture (a (height, width, 3) uint8 array), "
                f"received {describe(frame)}"
            )
        pygame = _import_pygame()
        size = (frame.shape[1], frame.shape[0])
        if self._screen is None or size != self.size:
            self._open(pygame, size)
        # pygame's surfaces are indexed (x, y): the picture's transpose.
        pygame.surfarray.blit_array(self._screen, frame.swapaxes(0, 1))
        pygame.display.flip()
        pygame.event.pump()  # keeps the window responsive between pictures

    def _open(self, pygame: Any, size: tuple[int, int]) -> None:
        try:
            pygame.display.init()
            self._screen = pygame.display.set_mode(size)
        except pygame.error as error:
            raise RuntimeError(
                f"show_game: no display to open a window on ({error}); set DISPLAY, start a "
                "virtual one with plangym.utils.get_display(), set SDL_VIDEODRIVER=dummy to "
                "play the pictures into nowhere, or take them from env.viewer"
            ) from error
        pygame.display.set_caption(self.title)
        self.size = size
        driver = pygame.display.get_driver()
        if driver in ("offscreen", "dummy") and not os.environ.get("SDL_VIDEODRIVER"):
            warnings.warn(
                f"show_game: no display, SDL's {driver!r} driver shows the pictures nowhere; "
                "start a virtual display with plangym.utils.get_display() to see them",
                RuntimeWarning,
                stacklevel=5,  # the caller of show_game
            )

    def close(self) -> None:
        """Close the window (pygame's display, which a process has one of)."""
        if self._screen is not None:
            self._screen = None
            self.size = None
            _import_pygame().display.quit()
