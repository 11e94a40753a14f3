"""NES games through nes-py, and Super Mario Bros through gym-super-mario-bros.

Needs the ``nes`` extra: the forks ``fragile-nes-py`` and ``fragile-gym-super-mario-bros``
(upstream nes-py and gym-super-mario-bros crash on numpy 2). See ``docs/nes.md``.

A state is a uint8 vector: a header naming the game (and the stage that a
``SuperMarioBrosRandomStages`` env is playing), the Python-side bookkeeping of the Mario env
that decides its rewards and its end (``done``, the last clock and x position), and the
emulator's own dump (CPU, PPU, RAM and mapper, about 250 KB). Restoring it makes replay
bit-exact; ``==`` compares games.

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

import warnings
from collections.abc import Callable, Iterable
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium.spaces import Box, Discrete

from plangym.core import wrap_callable
from plangym.extras import require
from plangym.rng import N_WORDS, generator_words, restore_generator
from plangym.utils import to_grayscale
from plangym.validation import describe
from plangym.videogames.env import LIFE_KEY, VideogameEnv
from plangym.videogames.nes_joypad import (  # plangym 0.1 imported them from here
    COMPLEX_MOVEMENT,
    RIGHT_ONLY,
    SIMPLE_MOVEMENT,
    JoypadSpace,
)

__all__ = [
    "COMPLEX_MOVEMENT",
    "RIGHT_ONLY",
    "SIMPLE_MOVEMENT",
    "JoypadSpace",
    "MarioEnv",
    "NesEnv",
]

# The header in front of the emulator dump. "game" names the env; "stage" is the stage a
# random-stages env is playing (NO_STAGE otherwise) and "stage_rng" the generator that
# draws the next game's stage (an autoreset inside a replay draws from it); the rest is
# Python-side state of the gym env that the emulator dump does not hold.
_HEADER = np.dtype(
    [
        ("magic", "S8"),
        ("game", "S48"),
        ("emulator_size", "<u4"),
        ("stage", "u1"),
        ("done", "u1"),
        ("time_last", "<i4"),
        ("x_position_last", "<i4"),
        ("stage_rng", "<u8", (N_WORDS,)),
    ]
)
HEADER_SIZE = _HEADER.itemsize
_MAGIC = b"PGNES1"
NO_STAGE = 255
_SCREEN_SHAPE = (240, 256, 3)
_RAM_SIZE = 0x800
# Mario's RAM: lives left minus one (0xFF once the game is over), the page and the pixel
# of his horizontal position (the fork's x_pos drops the page, so it wraps at 256).
_LIVES, _X_PAGE, _X_PIXEL, _SCREEN_LEFT = 0x075A, 0x006D, 0x0086, 0x071C
# Observation of obs_type="coords": these info entries, in this order.
COORDS_KEYS = ("x_pos", "y_pos", "world", "stage", "life", "flag_get", "coins")


def _import(module: str) -> Any:
    """Import a module of the ``nes`` extra quietly.

    The fork's ``gym`` warns about a deprecated importlib interface while registering ids.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return require(module, extra="nes", family="NES")


def _nes_py() -> Any:
    return _import("nes_py.nes_env")


def _game_tag(name: str) -> bytes:
    """Return the bytes a state stores to name its game (the end of long names: ROM paths)."""
    return name.encode("utf-8")[-_HEADER["game"].itemsize :]


class NesGymnasiumEnv(gym.Env):
    """A gymnasium face for a nes-py env, so gymnasium wrappers can go around it.

    ``observe`` and ``describe`` give the observation and the info of the plangym env
    that owns it; actions are controller bytes.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["rgb_array", "human"], "render_fps": 60}

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

    AVAILABLE_RENDER_MODES = frozenset({"human", "rgb_array", None})

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
        self._emulators: dict[int, Any] = {}
        self._stage = NO_STAGE
        self._stage_rng = np.random.default_rng()  # draws random-stage games' stages
        super().__init__(
            name=name,
            frameskip=frameskip,
            episodic_life=episodic_life,
            autoreset=autoreset,
            delay_setup=delay_setup,
            remove_time_limit=remove_time_limit,
            obs_type=obs_type,
            render_mode=render_mode,
            wrappers=wrappers,
            return_image=return_image,
            **kwargs,
        )

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
        """Info entries read from the emulator after a step or a reset."""
        lives = self.lives()
        return {"lives": lives, LIFE_KEY: lives}

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
        self._emulator_size = int(self._lib.StateSize(emulator._env))
        self._action_bytes = self.action_bytes()
        base = NesGymnasiumEnv(self, self._observation_box(), self._observe, self.describe_step)
        return self.wrap_actions(base)

    def wrap_actions(self, base: gym.Env) -> gym.Env:
        """Return the gymnasium env whose discrete actions the agent chooses."""
        return base

    def setup(self) -> None:
        """Build the emulator and the header that its states carry."""
        super().setup()
        header = np.zeros((), dtype=_HEADER)
        header["magic"] = _MAGIC
        header["game"] = _game_tag(self.name)
        header["emulator_size"] = self._emulator_size
        self._header = header

    def _observation_box(self) -> Box:
        if self.obs_type == "ram":
            return Box(0, 255, shape=(_RAM_SIZE,), dtype=np.uint8)
        if self.obs_type == "grayscale":
            return Box(0, 255, shape=_SCREEN_SHAPE[:2], dtype=np.uint8)
        if self.obs_type == "coords":
            return Box(-np.inf, np.inf, shape=(len(COORDS_KEYS),), dtype=np.int64)
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
        """Return the screen as an RGB array (240, 256, 3); render_mode=None refuses."""
        self.check_can_draw()
        return self.nes_env.screen.copy()

    def render(self) -> np.ndarray | None:
        """Return the screen as an RGB array, or show it in a pyglet window ("human")."""
        return self.gym_env.render()

    def _observe(self) -> np.ndarray:
        """Return the observation of :attr:`obs_type`, a fresh array."""
        emulator = self._emulators[self._stage]
        if self.obs_type == "rgb":
            return emulator.screen.copy()
        if self.obs_type == "grayscale":
            return to_grayscale(emulator.screen)
        if self.obs_type == "ram":
            return emulator.ram.copy()
        return self.coords()

    # States -------------------------------------------------------------------------------------
    def get_state(self) -> np.ndarray:
        """Return header, Python-side bookkeeping and emulator dump as one uint8 vector."""
        emulator = self.nes_env
        state = np.empty(HEADER_SIZE + self._emulator_size, dtype=np.uint8)
        header = state[:HEADER_SIZE].view(_HEADER)
        header[0] = self._header
        header["stage"] = self._stage
        header["done"] = emulator.done
        header["time_last"] = getattr(emulator, "_time_last", 0)
        header["x_position_last"] = getattr(emulator, "_x_position_last", 0)
        header["stage_rng"] = generator_words(self._stage_rng)
        # The emulator writes its dump straight behind the header: no second copy.
        self._lib.DumpState(emulator._env, state.ctypes.data + HEADER_SIZE)
        return state

    def set_state(self, state: np.ndarray) -> None:
        """Restore a state returned by :meth:`get_state`."""
        self.check_state(state)
        state = np.ascontiguousarray(state)
        header = state[:HEADER_SIZE].view(_HEADER)[0]
        self._stage = int(header["stage"])
        restore_generator(self._stage_rng, header["stage_rng"])
        emulator = self._emulator(self._stage)
        self._lib.LoadState(emulator._env, state.ctypes.data + HEADER_SIZE)
        emulator.done = bool(header["done"])
        if hasattr(emulator, "_time_last"):
            emulator._time_last = int(header["time_last"])
            # The Mario env keeps it as the uint8 its x_pos property returns.
            emulator._x_position_last = np.uint8(header["x_position_last"])

    def check_state(self, state: Any, name: str = "state") -> None:
        """Raise unless ``state`` is a state of this game (checked before anything runs)."""
        if not (isinstance(state, np.ndarray) and state.dtype == np.uint8 and state.ndim == 1):
            raise TypeError(
                f"{name}: expected a {self.name} state (a uint8 vector from get_state()), "
                f"received {describe(state)}"
            )
        self.gym_env  # noqa: B018 - builds the emulator when setup was delayed
        expected = HEADER_SIZE + self._emulator_size
        if len(state) != expected:
            raise ValueError(
                f"{name}: expected a {self.name} state of {expected} bytes, "
                f"received {len(state)} bytes"
            )
        header = state[:HEADER_SIZE].view(_HEADER)[0]
        if header["magic"] != _MAGIC:
            raise ValueError(
                f"{name}: expected a {self.name} state from get_state(), "
                "received bytes without plangym's NES header"
            )
        game = bytes(header["game"])
        if game != _game_tag(self.name):
            raise ValueError(
                f"{name}: expected a state of {self.name}, "
                f"received a state of {game.decode('utf-8', 'replace')}"
            )
        stage = int(header["stage"])
        if (stage == NO_STAGE) == self.random_stages or (stage != NO_STAGE and stage >= 32):
            raise ValueError(f"{name}: expected a {self.name} state, received stage {stage}")

    # Stepping ---------------------------------------------------------------------------------
    def reset_emulator(self) -> None:
        """Start a new game on the emulator of the stage :meth:`first_stage` picks."""
        self._stage = self.first_stage()
        self._emulator(self._stage).reset()

    def apply_reset(self, **kwargs: Any) -> tuple:
        """Start a new game: ``(obs, info)``."""
        if not self._wrappers:
            self.reset_emulator()
            return self._observe(), self.describe_step()
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

    def step_with_dt(self, action: Any, dt: int = 1) -> tuple:
        """Apply ``action`` for ``dt * frameskip`` frames, stopping when the game ends.

        Without wrappers the frames go straight to the emulator and the observation is
        read once at the end; with them every frame goes through ``gym_env.step``. A
        state whose game already ended steps no frame: it reports ``terminal`` again.
        """
        emulator = self.nes_env
        lives_before = self.lives()
        reward = 0.0
        n_step = 0
        obs = None
        truncated = False
        terminal = lost_life = bool(emulator.done)
        if not terminal:
            byte = self._action_bytes[int(action)]
            for _ in range(dt * self.frameskip):
                if not self._wrappers:
                    frame_reward, terminal = self.advance_frame(byte)
                else:
                    obs, frame_reward, terminal, truncated, _ = self.process_apply_action(
                        *self.apply_action(action)
                    )
                reward += frame_reward
                n_step += 1
                lost_life = self.lives() < lives_before
                terminal = terminal or (self.episodic_life and lost_life)
                if terminal or truncated:
                    break
        info = self.describe_step()
        info.update({"lost_life": bool(lost_life), "n_step": n_step, "dt": dt})
        if obs is None:
            obs = self._observe()
        return obs, self.step_reward(reward, info), terminal, truncated, info

    def step_reward(self, reward: float, info: dict[str, Any]) -> float:
        """Return the reward of an agent step from the frames' summed reward and the info."""
        return reward


class MarioEnv(NesEnv):
    """Super Mario Bros (and the Lost Levels) from gym-super-mario-bros.

    Args:
        name: A gym-super-mario-bros id: "SuperMarioBros-v0", "SuperMarioBros-1-1-v0",
            "SuperMarioBros2-v0", "SuperMarioBrosRandomStages-v0", ...
        movement_type: "right" (5 actions), "simple" (7) or "complex" (12). plangym 0.1
            used the 12 complex ones whatever this said.
        original_reward: Use gym-super-mario-bros's reward (x progress, clock, death).
            False: plangym 0.1's score ``25000 * world + 5000 * stage + x_pos
            + 10 * in_pipe + 100 * flag_get``, with the true x position.
        obs_type: "rgb", "grayscale", "ram" or "coords" (``COORDS_KEYS`` of the info).
        kwargs: Passed to :class:`NesEnv` (frameskip, episodic_life, ...).

    ``info["x_pos"]`` is Mario's true position in the level (the fork wraps it at 256).
    The game ends when the env's id says it does: at a death or the flag for a single
    stage, at game over for the whole game (``episodic_life=True``: at any lost life).
    """

    AVAILABLE_OBS_TYPES = frozenset({"coords", "rgb", "grayscale", "ram"})
    MOVEMENTS: ClassVar[dict[str, list[list[str]]]] = {
        "complex": COMPLEX_MOVEMENT,
        "simple": SIMPLE_MOVEMENT,
        "right": RIGHT_ONLY,
    }

    def __init__(
        self,
        name: str,
        movement_type: str = "simple",
        original_reward: bool = False,
        **kwargs: Any,
    ):
        if movement_type not in self.MOVEMENTS:
            raise ValueError(
                f"movement_type: expected one of {sorted(self.MOVEMENTS)}, "
                f"received {movement_type!r}"
            )
        self._movement_type = movement_type
        self._original_reward = bool(original_reward)
        super().__init__(name=name, **kwargs)

    @property
    def movement_type(self) -> str:
        """Which button combinations the actions are: "right", "simple" or "complex"."""
        return self._movement_type

    @property
    def original_reward(self) -> bool:
        """Whether rewards are gym-super-mario-bros's own."""
        return self._original_reward

    @property
    def random_stages(self) -> bool:
        """Whether each game plays a random stage."""
        return "RandomStages" in self.name

    def build_emulator(self, stage: int) -> Any:
        """Build the Mario env of this id (of ``stage`` for random-stage ids)."""
        smb = _import("gym_super_mario_bros")
        from gym.envs.registration import spec  # the fork's gym, where smb registers ids

        try:
            kwargs = dict(spec(self.name)._kwargs)
        except Exception as error:
            raise ValueError(
                f"name: expected a gym-super-mario-bros id such as 'SuperMarioBros-1-1-v0', "
                f"received {self.name!r}"
            ) from error
        kwargs.update(self._gym_env_kwargs)
        if stage != NO_STAGE:
            kwargs.pop("stages", None)
            kwargs["target"] = (stage // 4 + 1, stage % 4 + 1)
        return smb.SuperMarioBrosEnv(**kwargs)

    def first_stage(self) -> int:
        """Return the stage of a new game, drawn by plangym for random-stage ids."""
        if not self.random_stages:
            return NO_STAGE
        return int(self._stage_rng.integers(32))

    def seed(self, seed: int | None = None) -> None:
        """Seed the stage draw and the action space, and start a new game."""
        self._stage_rng = np.random.default_rng(seed)
        super().seed(seed)

    def action_bytes(self) -> list[int]:
        """Return the controller byte of each action of :attr:`movement_type`."""
        return [JoypadSpace.byte(buttons) for buttons in self.MOVEMENTS[self.movement_type]]

    def wrap_actions(self, base: gym.Env) -> gym.Env:
        """Discrete actions over the button combinations of :attr:`movement_type`."""
        return JoypadSpace(base, self.MOVEMENTS[self.movement_type])

    def get_action_meanings(self) -> list[str]:
        """Return the buttons each action presses."""
        return [" ".join(buttons) for buttons in self.MOVEMENTS[self.movement_type]]

    def lives(self) -> int:
        """Lives left: 0 once the game is over."""
        return (int(self.nes_env.ram[_LIVES]) + 1) & 0xFF

    def x_position(self) -> int:
        """Mario's true horizontal position in the level (page * 256 + pixel)."""
        ram = self.nes_env.ram
        return int(ram[_X_PAGE]) * 256 + int(ram[_X_PIXEL])

    def left_x_position(self) -> int:
        """Mario's distance in pixels from the left edge of the screen."""
        ram = self.nes_env.ram
        # Python ints: the fork's uint64 arithmetic warns when the difference wraps.
        return (int(ram[_X_PIXEL]) - int(ram[_SCREEN_LEFT])) % 256

    def describe_step(self) -> dict[str, Any]:
        """gym-super-mario-bros's info with the true x_pos, plus plangym 0.1's entries."""
        mario = self.nes_env
        info = mario._get_info()
        info["x_pos"] = self.x_position()
        player_state = int(mario._player_state)
        info.update(
            {
                "life": int(info["life"]),
                "world": int(info["world"]),
                "stage": int(info["stage"]),
                "y_pos": int(info["y_pos"]),
                "player_state": player_state,
                "area": int(mario._area),
                "left_x_position": self.left_x_position(),
                "is_stage_over": bool(mario._is_stage_over),
                "is_dying": bool(mario._is_dying),
                "is_dead": bool(mario._is_dead),
                "y_pixel": int(mario._y_pixel),
                "y_viewport": int(mario._y_viewport),
                "x_position_last": int(mario._x_position_last),
                "in_pipe": player_state in (0x02, 0x03),
            }
        )
        info.update(super().describe_step())
        return info

    def coords(self) -> np.ndarray:
        """Mario's x, y, world, stage, life, flag and coins (``COORDS_KEYS``)."""
        info = self.describe_step()
        return np.array([int(info[key]) for key in COORDS_KEYS], dtype=np.int64)

    def step_reward(self, reward: float, info: dict[str, Any]) -> float:
        """Return the frames' summed reward, or plangym 0.1's position score."""
        if self._original_reward:
            return reward
        return float(
            25000 * info["world"]
            + 5000 * info["stage"]
            + info["x_pos"]
            + 10 * int(info["in_pipe"])
            + 100 * int(info["flag_get"])
        )
