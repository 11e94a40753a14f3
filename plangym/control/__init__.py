"""Control environments: classic control, MuJoCo, dm_control, Box2D (and 0.1's Balloon name).

Only :class:`ClassicControl` is imported eagerly; the other classes load their simulator
on first access, so ``from plangym.control import MujocoEnv`` raises an ImportError that
names the extra to install only when that extra is missing.
"""

from __future__ import annotations

import importlib
from typing import Any

from plangym.control.classic_control import ClassicControl

_LAZY = {
    "MujocoEnv": "plangym.control.mujoco",
    "DMControlEnv": "plangym.control.dm_control",
    "Box2DEnv": "plangym.control.box_2d",
    "LunarLander": "plangym.control.lunar_lander",
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
