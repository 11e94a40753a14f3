"""Control environments: classic control, MuJoCo, dm_control, Box2D (and 0.1's Balloon name).

One subpackage per family (``classic_control``, ``mujoco``, ``dm_control``, ``box_2d``,
``lunar_lander``), each with its environment in ``env`` and its state code next to it;
``shared`` holds the pieces several families use, and ``balloon`` the 0.1 name.

Only :class:`ClassicControl` is imported eagerly; the other classes load their simulator
on first access, so ``from plangym.control import MujocoEnv`` raises an ImportError that
names the extra to install only when that extra is missing.
"""

from __future__ import annotations

import importlib
from typing import Any

from plangym.control.classic_control.env import ClassicControl

_LAZY = {
    "MujocoEnv": "plangym.control.mujoco.env",
    "DMControlEnv": "plangym.control.dm_control.env",
    "Box2DEnv": "plangym.control.box_2d.env",
    "LunarLander": "plangym.control.lunar_lander.env",
    "BalloonEnv": "plangym.control.balloon",
}

__all__ = [
    "BalloonEnv",
    "Box2DEnv",
    "ClassicControl",
    "DMControlEnv",
    "LunarLander",
    "MujocoEnv",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
