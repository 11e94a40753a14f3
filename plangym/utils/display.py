"""Drawing on a headless machine: a virtual X display (0.1's ``get_display``), or none at all."""

from __future__ import annotations

import os
from typing import Any


def get_display(visible: bool = False, size: tuple[int, int] = (400, 400), **kwargs: Any) -> Any:
    """Start a virtual X display with pyvirtualdisplay and return it.

    Rendering needs an X server on a headless machine; this starts one (Xvfb unless
    ``visible`` or a ``backend`` says otherwise). pyvirtualdisplay is not a dependency of
    plangym, and it runs the Xvfb program, which comes from the system's packages. Unless
    the variable is already set, ``PYVIRTUALDISPLAY_DISPLAYFD`` is set to "0" in
    ``os.environ`` so that pyvirtualdisplay picks the display number itself rather than
    waiting for Xvfb to report one.

    Args:
        visible: Show the display in a window (pyvirtualdisplay's Xephyr backend).
        size: (width, height) of the screen in pixels.
        **kwargs: Passed on to ``pyvirtualdisplay.Display``.

    Returns:
        The started ``pyvirtualdisplay.Display``; call its ``stop()`` when done.

    Raises:
        ImportError: pyvirtualdisplay is not installed.
    """
    try:
        from pyvirtualdisplay import Display
    except ImportError as error:
        raise ImportError(
            "get_display needs pyvirtualdisplay: pip install pyvirtualdisplay; it also needs "
            "the Xvfb program (e.g. apt-get install xvfb)"
        ) from error
    os.environ.setdefault("PYVIRTUALDISPLAY_DISPLAYFD", "0")
    display = Display(visible=visible, size=size, **kwargs)
    display.start()
    return display


def has_display() -> bool:
    """Whether this process can open windows: an X (``DISPLAY``) or Wayland display is set."""
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def refuse_window_without_display(render_mode: Any) -> None:
    """Raise ValueError for ``render_mode="human"`` where no display exists.

    Raised when the env is built, in words that say the way out: the window libraries fail
    later and deeper (pyglet at the first frame drawn, GLFW by aborting the interpreter).
    """
    if render_mode == "human" and not has_display():
        raise ValueError(
            "render_mode: 'human' opens a window, which needs a display (DISPLAY and "
            "WAYLAND_DISPLAY are not set); received 'human'. Use render_mode='rgb_array' "
            "(pictures drawn off screen) or start a virtual display first "
            "(plangym.utils.display.get_display())"
        )


def draw_off_screen_when_headless() -> bool:
    """Let pygame draw pictures off screen where no display exists; return whether it was set.

    Pictures in "rgb_array" mode need no display, but pygame initializes one of SDL's video
    drivers, and without a display (no ``DISPLAY`` or ``WAYLAND_DISPLAY``) the probing prints
    ``error: XDG_RUNTIME_DIR is invalid or not set`` on stderr (in notebook outputs too).
    There SDL's "dummy" driver is chosen, as ``SDL_VIDEODRIVER=dummy`` would; a driver the
    user set, or a machine with a display, is left alone.

    >>> import os
    >>> from unittest import mock
    >>> with mock.patch.dict(os.environ, {"SDL_VIDEODRIVER": "x11"}):  # the user's choice
    ...     draw_off_screen_when_headless(), os.environ["SDL_VIDEODRIVER"]
    (False, 'x11')
    """
    if os.environ.get("SDL_VIDEODRIVER") or os.environ.get("DISPLAY"):
        return False
    if os.environ.get("WAYLAND_DISPLAY"):
        return False
    os.environ["SDL_VIDEODRIVER"] = "dummy"
    return True
