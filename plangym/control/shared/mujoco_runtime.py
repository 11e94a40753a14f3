"""Import mujoco the way plangym's MuJoCo-based families need it: :func:`load_mujoco`.

* **Rendering off screen.** MuJoCo (and dm_control) read ``MUJOCO_GL`` once, at import
  time, and default to GLFW, which needs a display. On a headless machine plangym chooses
  for the user before the import: OSMesa (software rendering, on any machine with
  ``libOSMesa``; Debian: ``apt-get install libosmesa6``) when it is there, else EGL (GPU
  drivers). A value the user set is always kept.
* **Warnings.** MuJoCo's default warning handler appends to ``MUJOCO_LOG.TXT`` in the
  working directory (gymnasium's HalfCheetah model triggers a deprecation warning on
  every load). Unless the user installed a handler, plangym turns MuJoCo warnings into
  Python ``RuntimeWarning``s, which the usual warning filters control.

>>> import os
>>> mujoco = load_mujoco(family="MuJoCo")
>>> choose_gl_backend() == os.environ.get("MUJOCO_GL")
True
"""

from __future__ import annotations

import ctypes.util
import os
import warnings
from types import ModuleType

from plangym.extras import require


def choose_gl_backend() -> str | None:
    """Set ``MUJOCO_GL`` (and PyOpenGL's platform) for this process; return the choice."""
    if "MUJOCO_GL" in os.environ:
        return os.environ["MUJOCO_GL"]
    if os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"):
        return None  # GLFW, MuJoCo's default, works with a display
    backend = "osmesa" if ctypes.util.find_library("OSMesa") else "egl"
    os.environ["MUJOCO_GL"] = backend
    os.environ.setdefault("PYOPENGL_PLATFORM", backend)
    return backend


def _warn(message: str) -> None:
    warnings.warn(f"MuJoCo: {message}", RuntimeWarning, stacklevel=2)


# What else each extra brings that its envs import: gymnasium's MuJoCo renderer imports
# imageio and packaging (another extra, dm-control, brings mujoco without them).
COMPANIONS = {"mujoco": ("imageio", "packaging")}


def load_mujoco(family: str, extra: str = "mujoco") -> ModuleType:
    """Choose the GL backend, import mujoco (or name the extra to install), route warnings."""
    choose_gl_backend()
    mujoco = require("mujoco", extra=extra, family=family)
    for module in COMPANIONS.get(extra, ()):
        require(module, extra=extra, family=family)
    if mujoco.get_mju_user_warning() is None:
        mujoco.set_mju_user_warning(_warn)
    return mujoco
