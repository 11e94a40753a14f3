"""``FastLunarLander-v0``: a lunar lander simulated by plangym itself (no Box2D needed).

* :mod:`plangym.control.lunar_lander.env`: :class:`LunarLander`, the environment, and
  :class:`LanderSim`, the gymnasium env it wraps;
* :mod:`plangym.control.lunar_lander.fast_gym`: :class:`FastGymLunarLander`, plangym 0.1's
  gymnasium env, on the same physics;
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
from plangym.control.lunar_lander.fast_gym import FastGymLunarLander

__all__ = [
    "MAX_EPISODE_STEPS",
    "STATE_FIELDS",
    "FastGymLunarLander",
    "LanderSim",
    "LunarLander",
    "check_gravity",
    "shaping",
]
