"""Common base of emulated video games: the frame loop, lives, episodic life, RAM observations.

Every game steps its frames with :func:`plangym.core.frame_loop.repeat_frames`. At setup
the env chooses, once, how a frame advances: straight on the emulator (the family's
:meth:`VideogameEnv.direct_frame`, with the observation and the info read once after the
last frame), or through ``gym_env.step`` when user wrappers must see every frame, or when
the env's class does not declare ``FAST_PATHS`` (its overrides must run).
"""

from __future__ import annotations

import inspect
from abc import ABC
from collections.abc import Iterable
from typing import Any

import numpy as np

from plangym.constructor import parent_arguments
from plangym.core.frame_loop import FrameRun, repeat_frames
from plangym.core.plangym_env import PlangymEnv
from plangym.core.wrappers import wrap_callable
from plangym.validation import describe
from plangym.validation.values import with_article

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
        return_image: Add ``info["rgb"]`` to every step.
        kwargs: Passed on to :class:`~plangym.core.PlangymEnv`.
    """

    AVAILABLE_OBS_TYPES = frozenset({"rgb", "grayscale", "ram"})
    DEFAULT_OBS_TYPE = "rgb"
    SCREEN_FROM_RENDERER = False  # the emulator draws its screen in any render mode
    _direct = False  # whether frames go straight to the emulator: chosen at setup

    def __init__(
        self,
        name: str,
        frameskip: int = 5,
        episodic_life: bool = False,
        autoreset: bool = True,
        delay_setup: bool = False,
        remove_time_limit: bool = True,
        obs_type: str = "rgb",
        render_mode: str | None = "rgb_array",
        wrappers: Iterable[wrap_callable] | None = None,
        return_image: bool = False,
        **kwargs: Any,
    ):
        super().__init__(**parent_arguments(VideogameEnv, locals()))

    @property
    def n_actions(self) -> int:
        """Number of discrete actions."""
        space: Any = self.action_space  # Discrete (or stable-retro's MultiBinary): has n
        return int(space.n)

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

    def setup(self) -> None:
        """Build the emulator; choose how frames advance (see the module docstring)."""
        super().setup()
        self._direct = self.sends_frames_directly()

    def init_spaces(self) -> None:
        """Read the spaces; the emulator env already emits observations of ``obs_type``."""
        gym_env = self._gym_env
        assert gym_env is not None, "setup() builds the emulator before reading its spaces"
        self._action_space = gym_env.action_space
        self._obs_space = gym_env.observation_space

    def step_hooks_are_identity(self) -> bool:
        """Say whether hooks are identities: the emulator already produces :attr:`obs_type`."""
        return self.has_fast_paths()

    def process_obs(self, obs, **kwargs):
        """Return ``obs`` as is: the emulator already produced one of :attr:`obs_type`."""
        return obs

    # The family's frame primitives ----------------------------------------------------------
    def sends_frames_directly(self) -> bool:
        """Whether frames go straight to the emulator, not through ``gym_env.step``."""
        return self.has_fast_paths() and not self._wrappers

    def direct_frame(self, action: Any) -> tuple:
        """Advance one frame straight on the emulator: the family's primitive.

        Returns ``(None, reward, terminal, truncated, None)``: the observation and the info
        are read once, after the last frame (:meth:`observe`, :meth:`frame_info`).
        """
        raise NotImplementedError

    def observe(self, out: np.ndarray | None = None) -> np.ndarray:
        """Read the observation of :attr:`obs_type` from the emulator (into ``out``)."""
        raise NotImplementedError

    def frame_info(self) -> dict[str, Any]:
        """Return the info of the last frame, read from the emulator."""
        return {}

    # Stepping ---------------------------------------------------------------------------------
    def play(self, action: Any, dt: int) -> FrameRun:
        """Play ``action`` for ``dt * frameskip`` frames (fewer when the game ends first)."""
        if self._gym_env is None:  # closed, or setup delayed: build as gym_env does
            self.gym_env  # noqa: B018 - builds the emulator and chooses the primitive
        # Looked up per step, never stored: a bound method kept on the env would keep the env
        # (and its emulator) alive after its last reference goes.
        advance = self.direct_frame if self._direct else self._underlying_step
        n_frames = dt * self.frameskip
        return repeat_frames(advance, action, n_frames, self.lives, self.episodic_life)

    def step_info(self, run: FrameRun, dt: int) -> dict[str, Any]:
        """Return the ``info`` of an agent step made of ``run``'s frames.

        ``info["lost_life"]`` tells whether a life was lost during the step.
        """
        info = dict(run.info) if run.info is not None else self.frame_info()
        lives = self.lives()
        info.update(
            {"lives": lives, LIFE_KEY: lives, "lost_life": run.lost_life, "n_step": run.n_step}
        )
        info["dt"] = dt
        return info

    def step_with_dt(self, action: Any, dt: int = 1) -> tuple:
        """Apply ``action`` for ``dt * frameskip`` frames, stopping when the game ends.

        The episode also ends, with ``episodic_life``, at the first frame that loses a life.
        """
        run = self.play(action, dt)
        obs = run.obs if run.obs is not None else self.observe()
        return obs, run.reward, run.terminal, run.truncated, self.step_info(run, dt)


def render_mode_of(args: tuple, kwargs: dict[str, Any]) -> Any:
    """Return the ``render_mode`` a :class:`VideogameEnv` constructor call asks for.

    >>> render_mode_of(("Airstriker-Genesis-v0",), {"render_mode": "human"})
    'human'
    """
    try:
        bound = inspect.signature(VideogameEnv.__init__).bind_partial(None, *args, **kwargs)
    except TypeError:  # a bad call: the constructor says what is wrong with it
        return None
    return bound.arguments.get("render_mode")


def check_uint8_vector(state: Any, name: str, game: str) -> None:
    """Raise TypeError unless ``state`` is a uint8 vector, as every game state is."""
    if not (isinstance(state, np.ndarray) and state.dtype == np.uint8 and state.ndim == 1):
        raise TypeError(
            f"{name}: expected {with_article(game)} state (a uint8 vector from get_state()), "
            f"received {describe(state)}"
        )
