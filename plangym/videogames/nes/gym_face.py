"""The gymnasium face of a plangym NES env, so gymnasium wrappers can go around it.

Frames reach the emulator through :meth:`NesEnv.advance_frame
<plangym.videogames.nes.NesEnv.advance_frame>` either way: straight from the frame loop
without wrappers, through this env's ``step`` with them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import gymnasium as gym
import numpy as np
from gymnasium.spaces import Box, Discrete

if TYPE_CHECKING:
    from plangym.videogames.nes.env import NesEnv


class NesGymnasiumEnv(gym.Env):
    """A gymnasium face for a nes-py env, so gymnasium wrappers can go around it.

    ``observe`` and ``describe`` give the observation and the info of the plangym env
    that owns it; actions are controller bytes.
    """

    # Not a ClassVar: gymnasium's Env declares metadata as an instance attribute.
    metadata: dict[str, Any] = {"render_modes": ["rgb_array", "human"], "render_fps": 60}  # noqa: RUF012

    def __init__(
        self,
        owner: NesEnv,
        observation_space: Box,
        observe: Callable[[], np.ndarray],
        describe_step: Callable[[], dict[str, Any]],
    ):
        self.owner = owner
        self.observation_space = observation_space
        self.action_space = Discrete(256)
        self._observe = observe
        self._describe = describe_step
        self.render_mode = owner.render_mode

    def step(self, action: Any) -> tuple:
        """Emulate one frame with controller byte ``action``."""
        reward, done = self.owner.advance_frame(int(action))
        return self._observe(), reward, done, False, self._describe()

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple:
        """Start a new game."""
        super().reset(seed=seed)
        self.owner.reset_emulator()
        return self._observe(), self._describe()

    def render(self) -> np.ndarray | None:
        """Return the screen, or show it in a window for render_mode="human"."""
        if self.render_mode == "human":
            self.owner.nes_env.render(mode="human")
            return None
        return self.owner.nes_env.screen.copy()

    def close(self) -> None:
        """Close the emulator(s)."""
        self.owner.close_emulators()
