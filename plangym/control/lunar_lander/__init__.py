"""``FastLunarLander-v0``: a lunar lander simulated by plangym itself (no Box2D needed).

* :mod:`plangym.control.lunar_lander.env`: :class:`LunarLander`, the environment, and
  :class:`LanderSim`, the gymnasium env it wraps;
* :mod:`plangym.control.lunar_lander.physics`: the lander's rigid-body physics and terrain.
"""

from __future__ import annotations

from plangym.control.lunar_lander.env import (
    MAX_EPISODE_STEPS,
    STATE_FIELDS,
    LanderSim,
    LunarLander,
    check_gravity,
    shaping,
)

__all__ = [
    "MAX_EPISODE_STEPS",
    "STATE_FIELDS",
    "LanderSim",
    "LunarLander",
    "check_gravity",
    "shaping",
]
