"""plangym 0.1's :class:`FastGymLunarLander`: a lean lunar lander as a plain gymnasium env.

plangym 0.1 subclassed gymnasium's Box2D ``LunarLander``, without the engine particles and
with a ``deterministic`` switch. This one keeps 0.1's constructor and behaviour on plangym's
own physics (:class:`~plangym.control.lunar_lander.env.LanderSim`), so it needs no Box2D:
the same observations, actions, rewards and episode ends, no time limit, pictures by
default, and ``deterministic=True`` making every episode the same.

>>> env = FastGymLunarLander(deterministic=True)
>>> obs, info = env.reset()
>>> obs.shape, info, env.FPS
((8,), {}, 50)
>>> obs, reward, terminated, truncated, info = env.step(2)
>>> env.prev_reward == reward, truncated, env.render().shape
(True, False, (400, 600, 3))
"""

from __future__ import annotations

from typing import Any

from plangym.control.lunar_lander.env import LanderSim
from plangym.control.lunar_lander.physics import FPS

__all__ = ["FastGymLunarLander"]


class FastGymLunarLander(LanderSim):
    """A lunar lander without bells and whistles, with plangym 0.1's constructor.

    Args:
        deterministic: Flat ground, no initial push, no engine dispersion.
        continuous: Two throttles in [-1, 1] (main; sideways) instead of 4 actions.
        render_mode: "rgb_array" (the default, as in plangym 0.1) or None.
    """

    FPS = FPS

    def __init__(
        self,
        deterministic: bool = False,
        continuous: bool = False,
        render_mode: str | None = "rgb_array",
    ):
        super().__init__(
            continuous=continuous, deterministic=deterministic, render_mode=render_mode
        )
        self.prev_reward: float | None = None  # the last step's reward, as plangym 0.1 kept it

    def step(self, action: Any) -> tuple:
        """Fire the engines ``action`` asks for and advance one frame (1/50 s)."""
        result = super().step(action)
        self.prev_reward = result[1]
        return result
