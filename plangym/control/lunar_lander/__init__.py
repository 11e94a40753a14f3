"""``FastLunarLander-v0``: a lunar lander simulated by plangym itself (no Box2D needed).

* :mod:`plangym.control.lunar_lander.env`: :class:`LunarLander`, the environment, and
  :class:`LanderSim`, the gymnasium env it wraps;
* :mod:`plangym.control.lunar_lander.fast_gym`: :class:`FastGymLunarLander`, plangym 0.1's
  gymnasium env, on the same physics;
* :mod:`plangym.control.lunar_lander.physics`: the lander's rigid-body physics and terrain.

plangym 0.1's names are here too, with 0.1's values: gymnasium's constants (in pixels,
as gymnasium and 0.1 define them; :mod:`~plangym.control.lunar_lander.physics` works in
metres, so its ``LEG_DOWN``, ``SIDE_ENGINE_AWAY`` and ``SIDE_ENGINE_HEIGHT`` are these
divided by :data:`SCALE`), ``GymLunarLander`` (gymnasium's Box2D ``LunarLander`` class) and
``import_error`` (the error importing Box2D, or None). The last two are looked up on first
access, so importing this package does not import Box2D.
"""

from __future__ import annotations

import warnings
from typing import Any

from plangym.control.lunar_lander.env import (
    MAX_EPISODE_STEPS,
    STATE_FIELDS,
    LanderSim,
    LunarLander,
    check_gravity,
    shaping,
)
from plangym.control.lunar_lander.fast_gym import FastGymLunarLander
from plangym.control.lunar_lander.physics import (
    FPS,
    INITIAL_RANDOM,
    LANDER_POLY,
    MAIN_ENGINE_POWER,
    SCALE,
    SIDE_ENGINE_POWER,
    VIEWPORT_H,
    VIEWPORT_W,
)

# plangym 0.1's (gymnasium's) constants in pixels that plangym's physics has no use for,
# or holds in metres under the same name (``physics.LEG_DOWN == LEG_DOWN / SCALE``).
LEG_AWAY = 20
LEG_DOWN = 18
LEG_W, LEG_H = 2, 8
LEG_SPRING_TORQUE = 40
SIDE_ENGINE_HEIGHT = 14.0
SIDE_ENGINE_AWAY = 12.0

# Resolved by __getattr__ on first access: importing gymnasium's lander imports Box2D.
_LAZY = ("GymLunarLander", "import_error")

__all__ = [
    "FPS",
    "INITIAL_RANDOM",
    "LANDER_POLY",
    "LEG_AWAY",
    "LEG_DOWN",
    "LEG_H",
    "LEG_SPRING_TORQUE",
    "LEG_W",
    "MAIN_ENGINE_POWER",
    "MAX_EPISODE_STEPS",
    "SCALE",
    "SIDE_ENGINE_AWAY",
    "SIDE_ENGINE_HEIGHT",
    "SIDE_ENGINE_POWER",
    "STATE_FIELDS",
    "VIEWPORT_H",
    "VIEWPORT_W",
    "FastGymLunarLander",
    "LanderSim",
    "LunarLander",
    "check_gravity",
    "shaping",
]


def _import_gym_lunar_lander() -> tuple[type | None, ImportError | None]:
    """Return (gymnasium's Box2D ``LunarLander``, None), or (None, the import's error)."""
    from gymnasium.error import DependencyNotInstalled

    try:
        with warnings.catch_warnings():
            # The box2d wheel's SWIG types have no __module__, which importing them warns
            # about; nothing the user can act on.
            warnings.filterwarnings("ignore", "builtin type [Ss]wig", DeprecationWarning)
            import Box2D  # noqa: F401
            from gymnasium.envs.box2d.lunar_lander import LunarLander as GymnasiumLunarLander
    except ImportError as error:
        return None, error
    except DependencyNotInstalled as error:  # gymnasium's own error, not an ImportError
        wrapped = ImportError(str(error))
        wrapped.__cause__ = error
        return None, wrapped
    return GymnasiumLunarLander, None


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if "import_error" not in globals():
        cls, error = _import_gym_lunar_lander()
        globals()["import_error"] = error
        if cls is not None:
            globals()["GymLunarLander"] = cls
    if name == "import_error":
        return globals()["import_error"]
    error = globals()["import_error"]
    if error is not None:
        raise ImportError(
            "GymLunarLander is gymnasium's Box2D LunarLander, which needs the 'box2d' extra: "
            f"pip install 'plangym[box2d]' ({error})"
        ) from error
    return globals()["GymLunarLander"]


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
