"""Panama Joe's tracker: :class:`CustomMontezuma`, and the pyramid of rooms he explores.

What 0.1 did by reading pixels (Joe's face) and by counting room changes against the
pyramid map, the tracker reads from the console's RAM, which the emulator state already
holds (see :mod:`plangym.videogames.montezuma`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import gymnasium as gym
import numpy as np
from gymnasium.spaces import Box

if TYPE_CHECKING:
    from ale_py.env import AtariEnv

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
        # gymnasium types unwrapped as a plain Env, which has no ale.
        self._ale = cast("AtariEnv", env.unwrapped).ale
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
