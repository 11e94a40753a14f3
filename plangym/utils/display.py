"""A virtual X display for rendering on a headless machine (plangym 0.1's ``get_display``)."""

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
