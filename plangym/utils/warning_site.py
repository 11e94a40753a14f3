"""Where a plangym warning points: the first line outside plangym that led to it.

A fixed ``stacklevel`` names the right line for one call path only; the same warning reached
through a user's subclass, ``clone()`` or ``plangym.make`` would name a line of plangym.

>>> import warnings
>>> def plangym_function():  # a doctest's frame counts as outside plangym
...     warnings.warn("careful", UserWarning, stacklevel=stacklevel_outside_plangym())
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     plangym_function()
>>> caught[0].filename.endswith("plangym")
False
"""

from __future__ import annotations

import os
import sys

PACKAGE_FOLDER = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def stacklevel_outside_plangym() -> int:
    """Return the ``stacklevel`` for ``warnings.warn`` in the caller that names user code.

    Counts the caller's frame and each one above it that runs plangym's own code.
    """
    frame = sys._getframe(1)
    level = 1
    while frame.f_back is not None and frame.f_code.co_filename.startswith(PACKAGE_FOLDER):
        frame, level = frame.f_back, level + 1
    return level
