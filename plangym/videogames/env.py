"""Common base of emulated video games: RAM observations, lives and episodic life."""

from __future__ import annotations

from abc import ABC
from collections.abc import Iterable
from typing import Any

import numpy as np

from plangym.core import IDENTITY_OBS_HOOKS, PlangymEnv, wrap_callable

LIFE_KEY = "lifes"  # the info key plangym 0.1 used; "lives" is set too


class VideogameEnv(PlangymEnv, ABC):
    """A game run by an emulator, whose observations are its screen or its RAM.

    Args:
        name: gymnasium id of the game.
        frameskip: Emulator frames per agent step.
        episodic_life: End the episode (``terminal=True``) as soon as a life is lost.
        autoreset: Reset after an episode ends.
        delay_setup: Build the emulator later, in :meth:`setup`.
        remove_time_limit: Drop the registered episode time limit.
        obs_type: "rgb", "grayscale" or "ram".
        render_mode: None, "human" or "rgb_array".
        wrappers: gymnasium wrappers applied to the env.
        kwargs: Passed on to :class:`~plangym.core.PlangymEnv`.
    """

    AVAILABLE_OBS_TYPES = frozenset({"rgb", "grayscale", "ram"})
    DEFAULT_OBS_TYPE = "rgb"
    SCREEN_FROM_RENDERER = False  # the emulator draws its screen in any render mode

    def __init__(
        self,
        name: str,
        frameskip: int = 5,
        episodic_life: bool = False,
        autoreset: bool = True,
        delay_setup: bool = False,
        remove_time_limit: bool = True,
        obs_type: str = "rgb",
        render_mode: str | None = None,
        wrappers: Iterable[wrap_callable] | None = None,
        **kwargs: Any,
    ):
        super().__init__(
            name=name,
            frameskip=frameskip,
            autoreset=autoreset,
            wrappers=wrappers,
            delay_setup=delay_setup,
            remove_time_limit=remove_time_limit,
            render_mode=render_mode,
            episodic_life=episodic_life,
            obs_type=obs_type,
            **kwargs,
        )

    @property
    def n_actions(self) -> int:
        """Number of discrete actions."""
        return int(self.action_space.n)

    @staticmethod
    def get_lifes_from_info(info: dict[str, Any]) -> int:
        """Lives left according to a step's ``info`` (-1 when unknown)."""
        return int(info.get("lives", info.get(LIFE_KEY, -1)))

    def lives(self) -> int:
        """Lives left in the current game (-1 when the game has no lives)."""
        raise NotImplementedError

    def get_ram(self) -> np.ndarray:
        """Return the emulator's RAM as a uint8 vector."""
        raise NotImplementedError

    def init_spaces(self) -> None:
        """Read the spaces; the emulator env already emits observations of ``obs_type``."""
        self._action_space = self._gym_env.action_space
        self._obs_space = self._gym_env.observation_space

    def process_obs(self, obs, **kwargs):
        """Return ``obs`` as is: the emulator already produced one of :attr:`obs_type`."""
        return obs

    def step_with_dt(self, action: Any, dt: int = 1) -> tuple:
        """Apply ``action`` for ``dt * frameskip`` frames through the gymnasium env.

        Stops at the end of the game, at a truncation, or (with ``episodic_life``) at the
        first frame where a life is lost. ``info["lost_life"]`` tells whether one was.
        """
        lives_before = self.lives()
        reward = 0.0
        n_step = 0
        lost_life = False
        for _ in range(dt * self.frameskip):
            obs, step_reward, terminal, truncated, info = self.process_apply_action(
                *self.apply_action(action)
            )
            reward += step_reward
            n_step += 1
            lost_life = self.lives() < lives_before
            terminal = terminal or (self.episodic_life and lost_life)
            if terminal or truncated:
                break
        info = dict(info)
        info.update({LIFE_KEY: self.lives(), "lost_life": lost_life, "n_step": n_step, "dt": dt})
        return obs, reward, terminal, truncated, info


IDENTITY_OBS_HOOKS.add(VideogameEnv.process_obs)
