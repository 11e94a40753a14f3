"""NES games through nes-py, and Super Mario Bros through gym-super-mario-bros.

Needs the ``nes`` extra: the forks ``fragile-nes-py`` and ``fragile-gym-super-mario-bros``
(upstream nes-py and gym-super-mario-bros crash on numpy 2). See ``docs/nes.md``.

A state is a uint8 vector (:mod:`plangym.videogames.nes.state`): a header naming the game,
the Mario env's own bookkeeping and the emulator's dump. Restoring it makes replay
bit-exact; ``==`` compares games.

>>> from plangym.videogames.nes import MarioEnv
>>> env = MarioEnv("SuperMarioBros-1-1-v0", movement_type="right", frameskip=4)
>>> state, obs, info = env.reset()
>>> obs.shape, env.n_actions, state.dtype
((240, 256, 3), 5, dtype('uint8'))
>>> first = env.step(1, state=state, dt=3)
>>> again = env.step(1, state=state, dt=3)
>>> bool((first[0] == again[0]).all()), first[-1]["n_step"], first[-1]["x_pos"] > info["x_pos"]
(True, 12, True)
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import warnings
from collections.abc import Iterator
from typing import Any, cast

import gymnasium as gym
import numpy as np
from gymnasium.spaces import Box

from plangym.constructor import takes_parameters_of
from plangym.core.frame_loop import FrameRun
from plangym.extras import require
from plangym.utils import to_grayscale
from plangym.utils.display import refuse_window_without_display
from plangym.validation import describe
from plangym.videogames.env import VideogameEnv, check_uint8_vector, render_mode_of
from plangym.videogames.nes.gym_face import NesGymnasiumEnv
from plangym.videogames.nes.state import (
    HEADER_SIZE,
    NO_STAGE,
    EmulatorDumps,
    dump_state,
    load_state,
    new_header,
    state_problem,
)

_SCREEN_SHAPE = (240, 256, 3)
_BLACK_SCREEN = np.zeros(_SCREEN_SHAPE, dtype=np.uint8)
_BLACK_SCREEN.flags.writeable = False
_RAM_SIZE = 0x800


class _FollowRenderMode(str):
    """The default ``mode`` of :meth:`NesEnv.render`: plangym 0.1's "rgb_array", told apart.

    ``render()`` without a mode does what the env's ``render_mode`` says (gymnasium's rule);
    ``render(mode=...)`` does what plangym 0.1 did with that mode.
    """

    __slots__ = ()


_FOLLOW_RENDER_MODE = _FollowRenderMode("rgb_array")


def nes_import(module: str) -> Any:
    """Import a module of the ``nes`` extra quietly, on every Python plangym supports.

    The fork's ``gym`` warns about a deprecated importlib interface while registering ids
    (and needs it: see :func:`entry_points_by_group`).
    """
    with warnings.catch_warnings(), entry_points_by_group():
        warnings.simplefilter("ignore", DeprecationWarning)
        return require(module, extra="nes", family="NES")


@contextlib.contextmanager
def entry_points_by_group() -> Iterator[None]:
    """Serve ``importlib.metadata.entry_points().get(group, default)`` on Python 3.12+ too.

    nes-py imports the fork's ``gym`` (0.21), whose registration reads its plugins with
    ``entry_points().get("gym.envs", [])``: a dict of groups up to Python 3.11, an
    ``EntryPoints`` without ``get`` from 3.12, where importing nes-py raised
    AttributeError. While the block runs, ``EntryPoints.get`` selects a group.

    >>> with entry_points_by_group():
    ...     importlib.metadata.EntryPoints([]).get("gym.envs", [])
    []
    >>> hasattr(importlib.metadata.EntryPoints, "get")
    False
    """
    entry_points: Any = importlib.metadata.EntryPoints
    if hasattr(entry_points, "get"):
        yield
        return
    entry_points.get = lambda self, group, default=None: self.select(group=group) or default
    try:
        yield
    finally:
        del entry_points.get


def _nes_py() -> Any:
    return nes_import("nes_py.nes_env")


class NesEnv(VideogameEnv):
    """An NES game run by nes-py, plannable and exactly restorable.

    Args:
        name: Path of an iNES ROM (mappers 0-3); subclasses take game names.
        frameskip: Emulator frames per agent step.
        episodic_life: End the episode as soon as a life is lost.
        autoreset: Reset after an episode ends.
        delay_setup: Build the emulator later, in :meth:`setup`.
        remove_time_limit: Accepted for compatibility; NES games have no time limit here.
        obs_type: "rgb" (240, 256, 3), "grayscale" (240, 256) or "ram" (2048,).
        render_mode: None, "human" (a pyglet window) or "rgb_array".
        wrappers: gymnasium wrappers. With wrappers every frame goes through
            ``gym_env.step``; without them frames go straight to the emulator (faster).
        return_image: Add ``info["rgb"]`` to every step.
        kwargs: Passed to the nes-py env.
    """

    FAST_PATHS = True
    AVAILABLE_RENDER_MODES = frozenset({"human", "rgb_array", None})
    COORDS_KEYS: tuple[str, ...] = ()  # info entries of an obs_type="coords" observation
    # States hold the emulator alone: no room for a TimeLimit wrapper's count, and the
    # games have no episode limit of their own to use instead.
    TIME_LIMIT_IN_STATE = False
    TIME_LIMIT_ADVICE = "count the steps in your own loop instead"
    # After a step from an ended game (no frame played), see step_with_dt.
    _screen_is_black = False

    @takes_parameters_of(VideogameEnv.__init__)
    def __init__(self, *args: Any, **kwargs: Any):
        refuse_window_without_display(render_mode_of(args, kwargs))  # pyglet's, at first draw
        self._emulators: dict[int, Any] = {}
        self._stage = NO_STAGE
        self._stage_rng = np.random.default_rng()  # draws random-stage games' stages
        super().__init__(*args, **kwargs)

    # Emulator construction (subclasses choose the game) ------------------------------------
    def build_emulator(self, stage: int) -> Any:
        """Build the nes-py env playing ``stage`` (NO_STAGE: the game has no stage choice)."""
        return _nes_py().NESEnv(self.name, **self._gym_env_kwargs)

    @property
    def random_stages(self) -> bool:
        """Whether each game plays a stage drawn at random (then states say which)."""
        return False

    def first_stage(self) -> int:
        """Return the stage a new game plays (NO_STAGE unless the game draws one)."""
        return NO_STAGE

    def action_bytes(self) -> list[int]:
        """Return the controller byte of each action (all 256 for a bare NES game)."""
        return list(range(256))

    def coords(self) -> np.ndarray:
        """Observation of obs_type="coords" (only games that define it offer it)."""
        raise NotImplementedError

    def describe_step(self) -> dict[str, Any]:
        """Info entries read from the emulator after a step or a reset.

        gymnasium's ``lives`` only: a step's info adds 0.1's ``lifes`` (as every family's).
        """
        return {"lives": self.lives()}

    # Setup ------------------------------------------------------------------------------------
    @property
    def nes_env(self) -> Any:
        """The nes-py env that is playing (the one of the current stage)."""
        self.gym_env  # noqa: B018 - builds the emulator when setup was delayed
        return self._emulator(self._stage)

    def _emulator(self, stage: int) -> Any:
        emulator = self._emulators.get(stage)
        if emulator is None:
            emulator = self._emulators[stage] = self.build_emulator(stage)
        return emulator

    def init_gym_env(self) -> gym.Env:
        """Build the emulator and a gymnasium env around it (wrappers go around that)."""
        self._lib = _nes_py()._LIB
        self._stage = self.first_stage()
        emulator = self._emulator(self._stage)
        self._dumps = EmulatorDumps(self._lib, emulator)
        self._action_bytes = self.action_bytes()
        base = NesGymnasiumEnv(self, self._observation_box(), self.observe, self.describe_step)
        return self.wrap_actions(base)

    def wrap_actions(self, base: gym.Env) -> gym.Env:
        """Return the gymnasium env whose discrete actions the agent chooses."""
        return base

    def setup(self) -> None:
        """Build the emulator and the header that its states carry."""
        super().setup()
        self._header = new_header(self.name, self._dumps.area_size)

    def _observation_box(self) -> Box:
        if self.obs_type == "ram":
            return Box(0, 255, shape=(_RAM_SIZE,), dtype=np.uint8)
        if self.obs_type == "grayscale":
            return Box(0, 255, shape=_SCREEN_SHAPE[:2], dtype=np.uint8)
        if self.obs_type == "coords":
            return Box(-np.inf, np.inf, shape=(len(self.COORDS_KEYS),), dtype=np.int64)
        return Box(0, 255, shape=_SCREEN_SHAPE, dtype=np.uint8)

    def close(self) -> None:
        """Close the emulator(s); a later use builds them again."""
        super().close()
        self.close_emulators()

    def close_emulators(self) -> None:
        """Release every emulator this env built."""
        emulators, self._emulators = self._emulators, {}
        for emulator in emulators.values():
            if emulator._env is not None:
                emulator.close()

    # Emulator access --------------------------------------------------------------------------
    def lives(self) -> int:
        """Lives left (-1: a bare NES game does not say)."""
        return -1

    def get_ram(self) -> np.ndarray:
        """Return a copy of the console's 2 KB of RAM."""
        return self.nes_env.ram.copy()

    def get_image(self) -> np.ndarray:
        """Return the screen as an RGB array (240, 256, 3), in any render mode, as in 0.1."""
        return self.screen()

    def screen(self) -> np.ndarray:
        """Return a copy of the screen (240, 256, 3): black after a step from an ended game."""
        return self._shown_screen().copy()

    def _shown_screen(self) -> np.ndarray:
        """Return the screen shown now, uncopied: the emulator's buffer, or black."""
        if self._screen_is_black:
            return _BLACK_SCREEN
        return cast("np.ndarray", self._emulators[self._stage].screen)

    def render(self, mode: str = _FOLLOW_RENDER_MODE) -> np.ndarray | None:
        """Return the screen as an RGB array, or show it in a pyglet window ("human").

        Args:
            mode: plangym 0.1's parameter. Left out, the env's ``render_mode`` decides
                (gymnasium's rule). "rgb_array" returns the screen whatever ``render_mode``
                is (as 0.1 did); "human" shows it in a window and returns None.
        """
        if mode is _FOLLOW_RENDER_MODE:
            # gymnasium types render() for every mode: one RGB frame, or None for a window.
            return cast("np.ndarray | None", self.gym_env.render())
        if mode == "rgb_array":
            self.nes_env  # noqa: B018 - builds the emulator when setup was delayed
            return self.screen()
        if mode == "human":
            self.nes_env.render(mode="human")
            return None
        raise ValueError(f"mode: expected 'rgb_array' or 'human', received {mode!r}")

    def observe(self, out: np.ndarray | None = None) -> np.ndarray:
        """Return the observation of :attr:`obs_type`, a fresh array (``out`` unused)."""
        if self.obs_type == "rgb":
            return self.screen()
        if self.obs_type == "grayscale":
            return to_grayscale(self._shown_screen())
        if self.obs_type == "ram":
            return self._emulators[self._stage].ram.copy()
        return self.coords()

    # States -------------------------------------------------------------------------------------
    @property
    def state_size(self) -> int:
        """Length of the uint8 vectors :meth:`get_state` returns."""
        self.gym_env  # noqa: B018 - builds the emulator when setup was delayed
        return HEADER_SIZE + self._dumps.area_size

    def get_state(self, state: np.ndarray | None = None) -> np.ndarray:
        """Return header, Python-side bookkeeping and emulator dump as one uint8 vector.

        Args:
            state: plangym 0.1's parameter: an array to write the state into, which is
                then returned. It must be a writable, C-contiguous uint8 vector of
                :attr:`state_size` bytes (0.1's int8 arrays had another layout).
        """
        emulator = self.nes_env
        if state is not None:
            self._check_state_buffer(state)
        return dump_state(
            self._header, self._stage, emulator, self._stage_rng, self._dumps, out=state
        )

    def _check_state_buffer(self, state: Any) -> None:
        size = self.state_size
        if not (
            isinstance(state, np.ndarray)
            and state.dtype == np.uint8
            and state.shape == (size,)
            and state.flags.c_contiguous
            and state.flags.writeable
        ):
            raise ValueError(
                f"state: expected a writable C-contiguous uint8 vector of {size} bytes "
                f"(env.state_size) to write the state into, received {describe(state)}"
            )

    def set_state(self, state: np.ndarray) -> None:
        """Restore a state returned by :meth:`get_state`."""
        state = self.thawed_state(state)
        self.check_state(state)
        self._stage = load_state(state, self._emulator, self._stage_rng, self._dumps)
        self._screen_is_black = False  # the emulator shows the last frame it drew

    def check_state(self, state: Any, name: str = "state") -> None:
        """Raise unless ``state`` is a state of this game (checked before anything runs)."""
        check_uint8_vector(state, name, self.name)
        self.gym_env  # noqa: B018 - builds the emulator when setup was delayed
        problem = state_problem(state, self.name, self._dumps.area_size, self.random_stages)
        if problem:
            raise ValueError(f"{name}: expected a state of {self.name}, received {problem}")

    # Stepping ---------------------------------------------------------------------------------
    def reset_emulator(self) -> None:
        """Start a new game on the emulator of the stage :meth:`first_stage` picks."""
        self._stage = self.first_stage()
        self._screen_is_black = False
        self._emulator(self._stage).reset()

    def apply_reset(self, **kwargs: Any) -> tuple:
        """Start a new game: ``(obs, info)``."""
        if not self._wrappers:
            self.reset_emulator()
            return self.observe(), self.describe_step()
        return super().apply_reset(**kwargs)

    def advance_frame(self, byte: int) -> tuple[float, bool]:
        """Emulate one frame pressing ``byte``: ``(reward, done)``.

        What nes-py's ``step`` does, without building its info dict every frame (the
        info of the last frame is read once, by :meth:`describe_step`).
        """
        emulator = self._emulators[self._stage]
        emulator.controllers[0][:] = byte
        self._lib.Step(emulator._env)
        reward = emulator._get_reward()
        done = bool(emulator._get_done())
        emulator.done = done
        emulator._did_step(done)
        low, high = emulator.reward_range
        return float(min(max(reward, low), high)), done

    def direct_frame(self, action: Any) -> tuple:
        """Play one frame straight on the emulator."""
        reward, done = self.advance_frame(self._action_bytes[int(action)])
        return None, reward, done, False, None

    def frame_info(self) -> dict[str, Any]:
        """Info entries read from the emulator after the last frame."""
        return self.describe_step()

    def step_with_dt(self, action: Any, dt: int = 1) -> tuple:
        """Apply ``action`` for ``dt * frameskip`` frames, stopping when the game ends.

        A state whose game already ended steps no frame: it reports ``terminal`` again,
        and no lost life (its lives do not change). Its screen would be the last one the
        emulator drew, which states do not hold (another history's after a restore), so
        such a step shows a black screen, as Atari's do. The reward is
        :meth:`step_reward` of the frames' summed reward.
        """
        ended = self._screen_is_black = bool(self.nes_env.done)
        if ended:
            run = FrameRun(None, 0.0, True, False, None, n_step=0, lost_life=False)
        else:
            run = self.play(action, dt)
        info = self.step_info(run, dt)
        obs = run.obs if run.obs is not None else self.observe()
        return obs, self.step_reward(run.reward, info), run.terminal, run.truncated, info

    def step_reward(self, reward: float, info: dict[str, Any]) -> float:
        """Return the reward of an agent step from the frames' summed reward and the info."""
        return reward
