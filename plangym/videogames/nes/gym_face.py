"""The gymnasium face of a plangym NES env, so gymnasium wrappers can go around it.

Frames reach the emulator through :meth:`NesEnv.advance_frame
<plangym.videogames.nes.NesEnv.advance_frame>` either way: straight from the frame loop
without wrappers, through this env's ``step`` with them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, cast

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
        return self.owner.screen()

    def close(self) -> None:
        """Close the emulator(s)."""
        self.owner.close_emulators()

    def get_keys_to_action(self) -> dict[tuple[int, ...], int]:
        """Return nes-py's keyboard keys (sorted character codes) of each controller byte."""
        return cast("dict[tuple[int, ...], int]", self.owner.nes_env.get_keys_to_action())


# plangym 0.1's names -----------------------------------------------------------------------
ObsType = TypeVar("ObsType")
ActType = TypeVar("ActType")
RenderFrame = TypeVar("RenderFrame")


class GymToGymnasiumWrapper(gym.Env):
    """plangym 0.1's adapter: an old ``gym`` env (4-tuple steps) seen as a gymnasium env.

    Steps gain ``truncated=False``; ``reset`` returns ``(obs, info)`` (an empty info when
    the old env returns the observation alone) and, as in 0.1, does not pass ``seed`` or
    ``options`` on. Other attributes are the wrapped env's.

    Args:
        env: The old ``gym`` env (gym-super-mario-bros's, for instance).
    """

    def __init__(self, env: Any):
        self._env = env
        self.action_space = env.action_space
        self.observation_space = getattr(env, "observation_space", None)  # type: ignore[assignment]
        self.metadata = getattr(env, "metadata", {})
        self.render_mode = getattr(env, "render_mode", None)
        self.spec = getattr(env, "spec", None)

    def step(self, action: Any) -> tuple:
        """Step the old env; a 4-tuple becomes gymnasium's 5-tuple."""
        result = tuple(self._env.step(action))
        if len(result) == 4:  # old gym: (obs, reward, done, info)
            obs, reward, done, info = result
            return obs, reward, done, False, info
        return result

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple:
        """Reset the old env (without seed or options): ``(obs, info)``."""
        result = self._env.reset()
        if isinstance(result, tuple) and len(result) == 2:
            return result
        return result, {}

    def render(self) -> Any:
        """Render the old env."""
        return self._env.render()

    def close(self) -> None:
        """Close the old env."""
        self._env.close()

    def __getattr__(self, name: str) -> Any:
        """Attributes not found here are the wrapped env's."""
        if name == "_env":  # not set yet (unpickling): no recursion
            raise AttributeError(name)
        return getattr(self._env, name)

    @property
    def unwrapped(self) -> Any:
        """The innermost env (the wrapped env's own ``unwrapped`` when it has one)."""
        return getattr(self._env, "unwrapped", self._env)


class NESWrapper(gym.ObservationWrapper):
    """plangym 0.1's outer wrapper: observations unchanged, attributes forwarded inward.

    ``reset`` accepts envs returning ``(obs, info)`` or the observation alone.

    Args:
        wrapped: The gymnasium env to wrap.
    """

    def __init__(self, wrapped: gym.Env):
        super().__init__(wrapped)

    def __getattr__(self, name: str) -> Any:
        """Attributes not found here are the wrapped env's."""
        if name == "env":  # not set yet (unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.env, name)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple:
        """Reset the wrapped env: ``(observation(obs), info)``."""
        result = self.env.reset(seed=seed, options=options)
        if isinstance(result, tuple) and len(result) == 2:
            obs, info = result
        else:
            obs, info = result, {}
        return self.observation(obs), info

    def observation(self, observation: Any) -> Any:
        """Return ``observation`` unchanged."""
        return observation
