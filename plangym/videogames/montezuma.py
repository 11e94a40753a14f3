"""Montezuma's Revenge with Panama Joe's room, level, position and objects, exactly restorable.

``PlanMontezuma-v0`` is plangym 0.1's Montezuma environment for Go-Explore-style search: an
Atari game (ale-py's "ALE/MontezumaRevenge-v5", one emulator frame per underlying step) plus
a tracker, :class:`CustomMontezuma`, that follows Panama Joe. ``obs_type="coords"`` gives the
observation ``[x, y, room, objects]`` and every step's ``info`` carries ``x``, ``y``,
``room``, ``level``, ``objects`` and ``rooms_visited``.

What 0.1 did by reading pixels (Joe's face) and by counting room changes against the
pyramid map, this module reads from the console's RAM, which the emulator state already
holds, so positions never go missing and rooms never drift:

* ``x = RAM[42] + 2`` and ``y = 264 - RAM[43]``: 0.1's frame (screen pixels below row 50, y
  growing downwards). 0.1's face centroid is one frame late and wobbles with the sprite's
  animation; these values are within 2 pixels of it.
* ``room = RAM[3]``, numbered as on 0.1's :data:`PYRAMID`; ``level = RAM[57]``.
* ``objects``: with ``score_objects=True`` the inventory byte ``RAM[65]`` (masked with
  :data:`KEY_BITS` when ``only_keys``), else the score of the episode, as in 0.1.

What the RAM does not hold, the tracker keeps and the state carries in a header before the
Atari state: the episode's score and frame count, the most lives seen (0.1's death rule)
and the rooms visited. Sticky actions are the Atari family's: exact.

>>> env = MontezumaEnv(obs_type="coords", frameskip=4)
>>> state, obs, info = env.reset()
>>> obs.tolist(), info["room"], info["level"]
([79.0, 29.0, 1.0, 0.0], 1, 0)
>>> _, obs, *_ , info = env.step(3, state=state, dt=3)  # RIGHT for 12 frames
>>> obs[0] > 79, info["rooms_visited"]
(np.True_, (1,))
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.spaces import Box

from plangym.core import wrap_callable
from plangym.validation import describe
from plangym.videogames.atari import AtariEnv

GAME_ID = "ALE/MontezumaRevenge-v5"

# The rooms of a level as 0.1 laid them out: row = floor of the pyramid (top first),
# column = position left to right, -1 = no room. Room numbers are the game's (RAM[3]).
PYRAMID = (
    (-1, -1, -1, 0, 1, 2, -1, -1, -1),
    (-1, -1, 3, 4, 5, 6, 7, -1, -1),
    (-1, 8, 9, 10, 11, 12, 13, 14, -1),
    (15, 16, 17, 18, 19, 20, 21, 22, 23),
)
N_ROOMS = 24
# Inventory bits (RAM[65]) of the three keys, as in 0.1.
KEY_BITS = 0x8 | 0x4 | 0x2

# RAM addresses (bytes of the 128-byte RAM).
RAM_ROOM, RAM_X, RAM_Y, RAM_DEATH, RAM_LEVEL, RAM_LIVES, RAM_OBJECTS = 3, 42, 43, 55, 57, 58, 65
# RAM coordinates to 0.1's screen frame (measured against Joe's face pixels).
X_OFFSET, Y_ORIGIN = 2, 264
# Frames of NOOP 0.1 played after every reset, before handing out the first observation.
RESET_NOOPS = 3

# The tracker's bookkeeping, stored before the Atari state. The tag tells our states from a
# plain Atari Montezuma state, whose bytes start with the ALE's own serialization.
STATE_TAG = b"PLANMZ01"
# tag, the episode's score, frames played, most lives seen, visited rooms (a bit per room).
_HEADER = struct.Struct("<8sdqqQ")
HEADER_SIZE = _HEADER.size


def room_xy(room: int) -> tuple[int, int] | None:
    """Return ``(column, row)`` of ``room`` on :data:`PYRAMID`, None for an unknown room.

    >>> room_xy(1), room_xy(15), room_xy(42)
    ((4, 0), (0, 3), None)
    """
    for row, rooms in enumerate(PYRAMID):
        if room in rooms and room >= 0:
            return rooms.index(room), row
    return None


class MontezumaPosLevel:
    """Where Panama Joe is: level, objects (0.1 called them ``score``), room, x and y.

    Hashable and comparable by value, so it can key a Go-Explore archive.

    >>> pos = MontezumaPosLevel(level=0, score=0, room=1, x=79, y=29)
    >>> pos, pos == MontezumaPosLevel(0, 0, 1, 79, 29)
    (Level=0 Room=1 Objects=0 x=79 y=29, True)
    """

    __slots__ = ("level", "room", "score", "tuple", "x", "y")

    def __init__(self, level: int, score: float, room: int, x: float, y: float):
        self.level = level
        self.score = score
        self.room = room
        self.x = x
        self.y = y
        self.tuple = (level, score, room, x, y)

    def set_tuple(self) -> None:
        """Refresh :attr:`tuple` after changing an attribute."""
        self.tuple = (self.level, self.score, self.room, self.x, self.y)

    def __hash__(self) -> int:
        return hash(self.tuple)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MontezumaPosLevel) and self.tuple == other.tuple

    def __getstate__(self) -> tuple:
        return self.tuple

    def __setstate__(self, values: tuple) -> None:
        self.level, self.score, self.room, self.x, self.y = values
        self.tuple = tuple(values)

    def __repr__(self) -> str:
        return f"Level={self.level} Room={self.room} Objects={self.score} x={self.x} y={self.y}"


class CustomMontezuma(gym.Wrapper):
    """The Montezuma gymnasium env plus what 0.1 tracked about Panama Joe.

    Usable on its own as a gymnasium env (one frame per ``step``); :class:`MontezumaEnv`
    builds one as its ``gym_env`` and feeds it every frame it plays.

    Args:
        check_death: End the episode when Joe dies (RAM[55] set, or fewer lives than seen).
        obs_type: "coords" makes ``step``/``reset`` return ``[x, y, room, objects]``;
            anything else returns the wrapped env's observation.
        score_objects: ``objects`` is the inventory byte instead of the episode's score.
        objects_from_pixels: 0.1 read objects from the screen; only False is supported
            (the inventory byte says the same, exactly).
        objects_remember_rooms: Goes with ``objects_from_pixels``; only False is supported.
        only_keys: Keep only the key bits of the inventory.
        death_room_8: End the episode when Joe enters room 8 (as 0.1 did).
        render_mode: Render mode of the env built when ``env`` is None.
        x_repeat: Scale of ``x`` (0.1's horizontally stretched screens).
        env: The ALE Montezuma env to wrap; None builds one without sticky actions.

    >>> tracker = CustomMontezuma(obs_type="coords")
    >>> obs, info = tracker.reset()
    >>> tracker.pos, tracker.get_room_xy(tracker.pos.room)
    (Level=0 Room=1 Objects=0.0 x=79 y=29, (4, 0))
    """

    def __init__(
        self,
        check_death: bool = True,
        obs_type: str = "rgb",
        score_objects: bool = False,
        objects_from_pixels: bool = False,
        objects_remember_rooms: bool = False,
        only_keys: bool = False,
        death_room_8: bool = True,
        render_mode: str | None = "rgb_array",
        x_repeat: int = 1,
        env: gym.Env | None = None,
    ):
        if objects_from_pixels or objects_remember_rooms:
            raise ValueError(
                "objects_from_pixels, objects_remember_rooms: expected False (objects are "
                "read exactly from the inventory byte RAM[65] with score_objects=True), "
                f"received {objects_from_pixels!r}, {objects_remember_rooms!r}"
            )
        if env is None:
            env = gym.make(
                GAME_ID, frameskip=1, repeat_action_probability=0.0, render_mode=render_mode
            )
        super().__init__(env)
        self.check_death = check_death
        self.coords_obs = obs_type == "coords"
        self.score_objects = score_objects
        self.objects_from_pixels = objects_from_pixels
        self.objects_remember_rooms = objects_remember_rooms
        self.only_keys = only_keys
        self.death_room_8 = death_room_8
        self.x_repeat = x_repeat
        self._ale = env.unwrapped.ale
        self.cur_score = 0.0
        self.cur_steps = 0
        self.cur_lives = 0
        self.visited = 0  # bit r: room r was entered this episode (any level)
        if self.coords_obs:
            self.observation_space = Box(-np.inf, np.inf, shape=(4,), dtype=np.float32)

    # 0.1's API ----------------------------------------------------------------------------
    @staticmethod
    def get_room_xy(room: int) -> tuple[int, int] | None:
        """``(column, row)`` of ``room`` on :data:`PYRAMID`."""
        return room_xy(room)

    @property
    def ram(self) -> np.ndarray:
        """The console's RAM now."""
        return self._ale.getRAM()

    def get_ram(self) -> np.ndarray:
        """Return the console's RAM."""
        return self._ale.getRAM()

    @property
    def pos(self) -> MontezumaPosLevel:
        """Where Joe is now."""
        ram = self._ale.getRAM()
        x, y = self._xy(ram)
        return MontezumaPosLevel(int(ram[RAM_LEVEL]), self._objects(ram), int(ram[RAM_ROOM]), x, y)

    @property
    def rooms(self) -> tuple[int, ...]:
        """Rooms entered this episode, on any level."""
        return tuple(room for room in range(N_ROOMS) if self.visited >> room & 1)

    def get_coords(self) -> np.ndarray:
        """``[x, y, room, objects]`` as float32."""
        return self.coords_from_ram(self._ale.getRAM())

    def get_restore(self) -> tuple[float, int, int, int]:
        """Return what the RAM does not hold: score, steps, most lives seen, rooms visited."""
        return self.cur_score, self.cur_steps, self.cur_lives, self.visited

    def restore(self, data: tuple[float, int, int, int]) -> None:
        """Restore what :meth:`get_restore` returned (the emulator is restored apart)."""
        self.cur_score, self.cur_steps, self.cur_lives, self.visited = data

    # Tracking -----------------------------------------------------------------------------
    def _xy(self, ram: np.ndarray) -> tuple[int, int]:
        return (int(ram[RAM_X]) + X_OFFSET) * self.x_repeat, Y_ORIGIN - int(ram[RAM_Y])

    def _objects(self, ram: np.ndarray) -> float:
        if not self.score_objects:
            return self.cur_score
        inventory = int(ram[RAM_OBJECTS])
        return inventory & KEY_BITS if self.only_keys else inventory

    def coords_from_ram(self, ram: np.ndarray) -> np.ndarray:
        """``[x, y, room, objects]`` for ``ram`` and the current bookkeeping."""
        x, y = self._xy(ram)
        return np.array([x, y, ram[RAM_ROOM], self._objects(ram)], dtype=np.float32)

    def info(self, ram: np.ndarray) -> dict[str, Any]:
        """Return the step ``info`` entries about Joe."""
        x, y = self._xy(ram)
        return {
            "x": x,
            "y": y,
            "room": int(ram[RAM_ROOM]),
            "level": int(ram[RAM_LEVEL]),
            "objects": self._objects(ram),
            "rooms_visited": self.rooms,
        }

    def start_episode(self) -> None:
        """Forget the last episode and note where Joe starts."""
        ram = self._ale.getRAM()
        self.cur_score = 0.0
        self.cur_steps = 0
        self.cur_lives = int(ram[RAM_LIVES])
        self.visited = 1 << int(ram[RAM_ROOM])

    def track(self, reward: float) -> bool:
        """Account for one frame just played; return whether it ends the episode (0.1's rules)."""
        ram = self._ale.getRAM()
        self.cur_score += reward
        self.cur_steps += 1
        room = int(ram[RAM_ROOM])
        if room < N_ROOMS:
            self.visited |= 1 << room
        lives = int(ram[RAM_LIVES])
        self.cur_lives = max(self.cur_lives, lives)
        died = ram[RAM_DEATH] != 0 or lives < self.cur_lives
        return (self.check_death and died) or (self.death_room_8 and room == 8)

    # gymnasium API ------------------------------------------------------------------------
    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        """Reset the game and play 0.1's three NOOP frames."""
        obs, info = self.env.reset(**kwargs)
        for _ in range(RESET_NOOPS):
            obs, _, _, _, info = self.env.step(0)
        self.start_episode()
        ram = self._ale.getRAM()
        info = {**info, **self.info(ram)}
        return (self.coords_from_ram(ram) if self.coords_obs else obs), info

    def step(self, action: Any) -> tuple:
        """Play one frame and track Joe."""
        obs, reward, terminal, truncated, info = self.env.step(action)
        terminal = self.track(float(reward)) or terminal
        ram = self._ale.getRAM()
        info = {**info, **self.info(ram)}
        return (
            (self.coords_from_ram(ram) if self.coords_obs else obs),
            reward,
            terminal,
            (truncated),
            info,
        )


class MontezumaEnv(AtariEnv):
    """Montezuma's Revenge for planning: Joe's room, level, position and objects, exact states.

    The parameters are :class:`~plangym.videogames.atari.AtariEnv`'s (with 0.1's defaults:
    one frame per step, mode and difficulty 0) and :class:`CustomMontezuma`'s. A state is
    the tracker's bookkeeping (:data:`HEADER_SIZE` bytes, tagged :data:`STATE_TAG`) followed
    by an Atari state of the game; plain Atari Montezuma states are refused, and the Atari
    env refuses these.

    >>> env = MontezumaEnv(obs_type="ram")
    >>> state, obs, info = env.reset()
    >>> bytes(state[:8]), obs.shape, env.pos.room
    (b'PLANMZ01', (128,), 1)
    """

    AVAILABLE_OBS_TYPES = frozenset({"coords", "rgb", "grayscale", "ram"})

    def __init__(
        self,
        name: str = "PlanMontezuma-v0",
        frameskip: int = 1,
        episodic_life: bool = False,
        autoreset: bool = True,
        delay_setup: bool = False,
        remove_time_limit: bool = True,
        obs_type: str = "rgb",
        mode: int | None = 0,
        difficulty: int | None = 0,
        repeat_action_probability: float = 0.0,
        full_action_space: bool = False,
        render_mode: str | None = "rgb_array",
        possible_to_win: bool = True,
        wrappers: Iterable[wrap_callable] | None = None,
        array_state: bool = True,
        clone_seeds: bool = True,
        return_image: bool = False,
        check_death: bool = True,
        score_objects: bool = False,
        objects_from_pixels: bool = False,
        objects_remember_rooms: bool = False,
        only_keys: bool = False,
        death_room_8: bool = True,
        x_repeat: int = 1,
        **kwargs: Any,
    ):
        self._tracker_kwargs = {
            "check_death": check_death,
            "score_objects": score_objects,
            "objects_from_pixels": objects_from_pixels,
            "objects_remember_rooms": objects_remember_rooms,
            "only_keys": only_keys,
            "death_room_8": death_room_8,
            "x_repeat": x_repeat,
        }
        self._tracker: CustomMontezuma | None = None
        super().__init__(
            name=name,
            frameskip=frameskip,
            episodic_life=episodic_life,
            autoreset=autoreset,
            delay_setup=delay_setup,
            remove_time_limit=remove_time_limit,
            obs_type=obs_type,
            mode=mode,
            difficulty=difficulty,
            repeat_action_probability=repeat_action_probability,
            full_action_space=full_action_space,
            render_mode=render_mode,
            possible_to_win=possible_to_win,
            wrappers=wrappers,
            array_state=array_state,
            clone_seeds=clone_seeds,
            return_image=return_image,
            **kwargs,
        )

    # Joe ------------------------------------------------------------------------------------
    @property
    def tracker(self) -> CustomMontezuma:
        """The :class:`CustomMontezuma` following Joe (under any user wrappers)."""
        self.gym_env  # noqa: B018 - builds the emulator when setup was delayed
        return self._tracker

    @property
    def pos(self) -> MontezumaPosLevel:
        """Where Joe is now."""
        return self.tracker.pos

    @property
    def rooms(self) -> tuple[int, ...]:
        """Rooms entered this episode, on any level."""
        return self.tracker.rooms

    def get_coords(self) -> np.ndarray:
        """``[x, y, room, objects]`` now (the ``obs_type="coords"`` observation)."""
        return self.tracker.get_coords()

    @staticmethod
    def get_room_xy(room: int) -> tuple[int, int] | None:
        """``(column, row)`` of ``room`` on :data:`PYRAMID`."""
        return room_xy(room)

    # Setup ----------------------------------------------------------------------------------
    @property
    def game_id(self) -> str:
        """The ale-py game played: Montezuma's Revenge v5 (sticky actions applied by plangym)."""
        return GAME_ID

    def ale_obs_type(self) -> str:
        """Coords are read from RAM: the ALE's own observation is then the cheapest one."""
        return "ram" if self.obs_type == "coords" else self.obs_type

    def init_gym_env(self) -> gym.Env:
        """Build the ALE game (one frame per step, no ALE sticky actions) and its tracker."""
        tracker = CustomMontezuma(
            obs_type=self.obs_type, env=super().init_gym_env(), **self._tracker_kwargs
        )
        self._tracker = tracker
        tracker.reset()
        return tracker

    # Observations and frames ----------------------------------------------------------------
    def _observe(self, out: np.ndarray | None = None) -> np.ndarray:
        """Read the observation; coords come from the RAM and the tracker."""
        if self.obs_type != "coords":
            return super()._observe(out)
        coords = self._tracker.coords_from_ram(self.ale.getRAM())
        if out is None:
            return coords
        out[:] = coords
        return out

    def _after_frame(self, reward: float) -> bool:
        """Track Joe after each frame; 0.1's rules may end the episode (death, room 8)."""
        return self._tracker.track(reward)

    def _add_frame_info(self, info: dict[str, Any]) -> None:
        """Joe's room, level, position, objects and rooms visited."""
        info.update(self._tracker.info(self.ale.getRAM()))

    # States ---------------------------------------------------------------------------------
    def _state_prefix(self) -> bytes:
        """Return the tracker's bookkeeping (not in the RAM), put before the Atari state."""
        tracker = self.tracker
        return _HEADER.pack(
            STATE_TAG, tracker.cur_score, tracker.cur_steps, tracker.cur_lives, tracker.visited
        )

    def set_state(self, state: np.ndarray) -> None:
        """Restore a state from :meth:`get_state`: no reset, only the emulator and bookkeeping."""
        self.check_state(state)
        _, score, steps, lives_seen, visited = _HEADER.unpack_from(state[:HEADER_SIZE].tobytes())
        self._restore_checked(state[HEADER_SIZE:])
        self._tracker.restore((score, steps, lives_seen, visited))

    def check_state(self, state: Any, name: str = "state") -> None:
        """Raise unless ``state`` is a PlanMontezuma state (not a plain Atari one)."""
        if not (isinstance(state, np.ndarray) and state.dtype == np.uint8 and state.ndim == 1):
            raise TypeError(
                f"{name}: expected a {self.name} state (a uint8 vector from get_state()), "
                f"received {describe(state)}"
            )
        if len(state) <= HEADER_SIZE or state[: len(STATE_TAG)].tobytes() != STATE_TAG:
            raise ValueError(
                f"{name}: expected a {self.name} state (starting with {STATE_TAG!r}), "
                "received another game's state, a plain Atari Montezuma state or corrupt bytes"
            )
        super().check_state(state[HEADER_SIZE:], name)
