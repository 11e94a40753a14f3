"""gymnasium's Box2D games with exact states, restored by replay; needs the ``box2d`` extra.

* :mod:`plangym.control.box_2d.env`: :class:`Box2DEnv`, the environment, and the live
  simulators it replays in;
* :mod:`plangym.control.box_2d.state`: :class:`ReplayState`, the immutable state object;
* :mod:`plangym.control.box_2d.replay_state`: the replay's bytes (the generator an
  episode started from and its actions since);
* :mod:`plangym.control.box_2d.world`: a fresh ``b2World`` per reset, quiet replays.
"""

from __future__ import annotations

from plangym.control.box_2d.env import (
    DEFAULT_LIVE_ENVS,
    Box2DEnv,
    LiveEnv,
    episode_generator,
    fresh_world,
)
from plangym.control.box_2d.state import ReplayState

__all__ = [
    "DEFAULT_LIVE_ENVS",
    "Box2DEnv",
    "LiveEnv",
    "ReplayState",
    "episode_generator",
    "fresh_world",
]
