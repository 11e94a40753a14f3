"""Panama Joe's tracker: :class:`CustomMontezuma`, with 0.1's API, reading the RAM or the screen.

By default the tracker reads Joe from the console's RAM, which the emulator state already
holds (see :mod:`plangym.videogames.montezuma`). With ``objects_from_pixels=True`` it
reads him from the screen after every frame as 0.1 did (:mod:`.pixels`).
"""

from __future__ import annotations

import contextlib
import functools
from typing import TYPE_CHECKING, Any, cast

import ale_py
import gymnasium as gym
import numpy as np
from gymnasium.spaces import Box

from plangym.validation import check_flag, check_positive_int, describe
from plangym.videogames.atari.state import cartridge_tag
from plangym.videogames.montezuma import pixels
from plangym.videogames.montezuma.pixels import KEY_BITS
from plangym.videogames.montezuma.rooms import (  # the pyramid: importable here as before
    KNOWN_XY,  # noqa: F401
    N_ROOMS,
    PYRAMID,  # noqa: F401
    MontezumaPosLevel,
    room_xy,
)

if TYPE_CHECKING:
    from ale_py.env import AtariEnv

GAME_ID = "ALE/MontezumaRevenge-v5"
# RAM addresses (bytes of the 128-byte RAM).
RAM_ROOM, RAM_X, RAM_Y, RAM_DEATH, RAM_LEVEL, RAM_LIVES, RAM_OBJECTS = 3, 42, 43, 55, 57, 58, 65
# RAM coordinates to 0.1's screen frame (measured against Joe's face pixels).
X_OFFSET, Y_ORIGIN = 2, 264
# Frames of NOOP 0.1 played after every reset, before handing out the first observation.
RESET_NOOPS = 3
_FLAGS = (
    *("check_death", "score_objects", "objects_from_pixels"),
    *("objects_remember_rooms", "only_keys", "death_room_8"),
)


def check_tracker_options(**options: Any) -> None:
    """Raise unless the tracker's flags are True/False and ``x_repeat`` an integer >= 1.

    >>> check_tracker_options(objects_from_pixels="yes")
    Traceback (most recent call last):
    ...
    TypeError: objects_from_pixels: expected True or False, received 'yes' (str)
    """
    for name in _FLAGS:
        if name in options:
            check_flag(name, options[name])
    if "x_repeat" in options:
        check_positive_int("x_repeat", options["x_repeat"])


class CustomMontezuma(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """The Montezuma gymnasium env plus what 0.1 tracked about Panama Joe.

    Usable on its own as a gymnasium env (one frame per ``step``); :class:`MontezumaEnv`
    builds one as its ``gym_env`` and feeds it every frame it plays.

    Args:
        check_death: End the episode when Joe dies (RAM[55] set, or fewer lives than seen;
            in pixel mode also 0.1's death on the screen, :meth:`is_pixel_death`).
        obs_type: "coords" makes ``step``/``reset`` return ``[x, y, room, objects]``;
            anything else returns the wrapped env's observation.
        score_objects: ``objects`` is the objects held instead of the episode's score.
        objects_from_pixels: Pixel mode, 0.1's: after every frame, read Joe's position
            (his face) and, with ``score_objects``, his objects (the inventory bar) from
            the screen; when his face is not on the screen he stays where last seen.
            False (default): read them exactly from the RAM.
        objects_remember_rooms: In pixel mode with ``score_objects``, the objects are
            ``((blob size, room first seen in), ...)`` as in 0.1; no effect otherwise (0.1).
        only_keys: Keep only the keys among the objects.
        death_room_8: End the episode when Joe enters room 8 (as 0.1 did).
        render_mode: Render mode of the env built when ``env`` is None.
        x_repeat: Scale of ``x`` and of the pictures in :attr:`rooms` (0.1's horizontally
            stretched screens).
        env: The ALE Montezuma env to wrap; None builds one without sticky actions.

    Attributes:
        rooms: 0.1's pictures of the rooms: room number -> the room's screen when first
            seen, rows 50 on (below the score and inventory) repeated ``x_repeat`` times
            along x, uint8 RGB. Kept across episodes, not in states (a restored state does
            not change it). The rooms entered this episode are :attr:`rooms_visited`.

    >>> tracker = CustomMontezuma(obs_type="coords")
    >>> obs, info = tracker.reset()
    >>> tracker.pos, tracker.get_room_xy(tracker.pos.room)
    (Level=0 Room=1 Objects=0.0 x=79 y=29, (4, 0))
    >>> tracker.rooms[1].shape, tracker.rooms_visited
    ((160, 160, 3), (1,))
    >>> seeing = CustomMontezuma(objects_from_pixels=True, score_objects=True)
    >>> obs, info = seeing.reset()
    >>> seeing.pos, seeing.get_face_pixels(obs) == pixels.face_pixels(obs)
    (Level=0 Room=1 Objects=0 x=79.7 y=29.0, True)
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
        options = {
            name: value
            for name, value in locals().items()
            if name not in {"self", "env", "__class__"}
        }
        check_tracker_options(**options)
        # Recorded for its spec: gymnasium's make rebuilds a wrapper as wrapper(env=env, ...).
        gym.utils.RecordConstructorArgs.__init__(self, **options)
        if env is None:
            env = gym.make(
                GAME_ID, frameskip=1, repeat_action_probability=0.0, render_mode=render_mode
            )
        super().__init__(env)
        self.check_death = bool(check_death)
        self.coords_obs = obs_type == "coords"
        self.score_objects = bool(score_objects)
        self.objects_from_pixels = bool(objects_from_pixels)
        self.objects_remember_rooms = bool(objects_remember_rooms)
        self.only_keys = bool(only_keys)
        self.death_room_8 = bool(death_room_8)
        self.x_repeat = int(x_repeat)
        # gymnasium types unwrapped as a plain Env, which has no ale.
        self._ale = cast("AtariEnv", env.unwrapped).ale
        self._screen = np.zeros((210, 160, 3), dtype=np.uint8)  # reused by every frame
        self.cur_score = 0.0
        self.cur_steps = 0
        self.cur_lives = 0
        self.visited = 0  # bit r: room r was entered this episode (any level)
        self.rooms: dict[int, np.ndarray] = {}  # 0.1's: never cleared, not in states
        # (room, frame) of the last frame played in a room not pictured yet, if any.
        self._entering: tuple[int, int] | None = None
        # Pixel mode: Joe as last seen on the screen, and his objects as a mask (coords).
        self._seen = MontezumaPosLevel(0, 0, 0, 0.0, 0.0)
        self._seen_mask = 0
        if self.coords_obs:
            self.observation_space = Box(-np.inf, np.inf, shape=(4,), dtype=np.float32)

    def __getattr__(self, name: str) -> Any:
        # 0.1's wrapper (gym's) handed other names to the game: gym_env.ale,
        # gym_env.get_action_meanings(); gymnasium 1's wrappers no longer do.
        if not name.startswith("_") and name != "env":
            with contextlib.suppress(AttributeError):
                return getattr(self.env.unwrapped, name)
        raise AttributeError(
            f"{type(self).__name__!r} object (nor its game) has no attribute {name!r}"
        )

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
        """Where Joe is now (pixel mode: where he was last seen on the screen)."""
        if self.objects_from_pixels:
            return self._seen
        ram = self._ale.getRAM()
        x, y = self._xy(ram)
        return MontezumaPosLevel(int(ram[RAM_LEVEL]), self._objects(ram), int(ram[RAM_ROOM]), x, y)

    @property
    def _x_repeat(self) -> int:
        """Return :attr:`x_repeat` under plangym 0.1's name, which code written for it reads."""
        return self.x_repeat

    @property
    def rooms_visited(self) -> tuple[int, ...]:
        """Rooms entered this episode, on any level (``info["rooms_visited"]``)."""
        return tuple(room for room in range(N_ROOMS) if self.visited >> room & 1)

    def get_coords(self) -> np.ndarray:
        """``[x, y, room, objects]`` as float32."""
        return self.coords_from_ram(self._ale.getRAM())

    def bookkeeping(self) -> tuple:
        """Return what the RAM does not hold: score, steps, most lives seen, rooms visited.

        In pixel mode also Joe as last seen and his objects mask.
        """
        data = (self.cur_score, self.cur_steps, self.cur_lives, self.visited)
        return (*data, self._seen, self._seen_mask) if self.objects_from_pixels else data

    def restore_bookkeeping(self, data: tuple) -> None:
        """Restore what :meth:`bookkeeping` returned (the emulator is restored apart).

        :attr:`rooms` is kept: it is not part of the state.
        """
        self.cur_score, self.cur_steps, self.cur_lives, self.visited = data[:4]
        self._entering = None  # the next frame is not the one after the last frame played
        if self.objects_from_pixels:
            self._seen, self._seen_mask = data[4:]

    def get_restore(self) -> tuple:
        """Return 0.1's snapshot ``(state, cur_score, cur_steps, pos, score_objects, cur_lives)``.

        ``state`` is :meth:`state_to_numpy`'s ``[ALEState, None]`` with the
        :meth:`bookkeeping` in place of None, so that :meth:`restore` puts the game back
        exactly (0.1's snapshot lost the rooms visited and, in pixel mode, Joe as seen).
        """
        state = self.state_to_numpy()
        state[1] = self.bookkeeping()
        return (state, self.cur_score, self.cur_steps, self.pos, self.score_objects, self.cur_lives)

    def restore(self, data: tuple) -> None:
        """Put back the game a :meth:`get_restore` snapshot holds (0.1's API).

        The emulator goes back to the snapshot's ALE state, generator included. 0.1 reset
        the env first, which restoring the whole state makes needless. What a
        ``PlanMontezuma`` keeps outside its tracker (its sticky-action generator and last
        action) is not in the snapshot: its ``get_state``/``set_state`` hold everything.
        """
        problem = self._snapshot_problem(data)
        if problem is not None:
            raise ValueError(f"data: expected a snapshot from get_restore(), received {problem}")
        state, score, steps, _pos, _score_objects, lives = data
        self._ale.restoreState(state[0])
        kept = state[1]
        if kept is None:  # a snapshot of 0.1's shape: what it held
            kept = (score, steps, lives, self.visited, *self.bookkeeping()[4:])
        self.restore_bookkeeping(kept)

    def _snapshot_problem(self, data: Any) -> str | None:
        """Say what is wrong with ``data`` as a snapshot of this tracker (None: nothing)."""
        if not isinstance(data, tuple | list):
            return f"{describe(data)}, not 0.1's 6 values"
        if len(data) != 6:
            return f"{type(data).__name__} of {len(data)} values, not 0.1's 6"
        state = data[0]
        if not (isinstance(state, np.ndarray) and state.shape == (2,)):
            return f"a first value {type(state).__name__}, not state_to_numpy()'s 2 objects"
        if not isinstance(state[0], ale_py.ALEState):
            return f"{type(state[0]).__name__} where the ALE state goes"
        # ale-py raises an untranslated SystemError for another cartridge's state.
        try:
            theirs = cartridge_tag(state[0].serialize(), "the snapshot")[1]
        except RuntimeError:
            theirs = None
        if theirs != self._cartridge_md5:
            return "an ALE state of another game"
        kept, expected = state[1], (6 if self.objects_from_pixels else 4)
        if kept is not None and not (isinstance(kept, tuple) and len(kept) == expected):
            mode = "pixel" if self.objects_from_pixels else "RAM"
            held = f"{len(kept)} values" if isinstance(kept, tuple) else repr(kept)
            return f"bookkeeping of {held}, not {mode} mode's {expected} values"
        # Score, steps, lives (and rooms visited, Joe as seen, his objects' mask) of a kind
        # the tracker computes with: junk here broke the next step.
        counts = (data[1], data[2], data[5]) if kept is None else (*kept[:4], *kept[5:])
        if not all(isinstance(value, int | float | np.number) for value in counts):
            return f"bookkeeping values {', '.join(map(describe, counts))}, not numbers"
        if kept is not None and self.objects_from_pixels and type(kept[4]) is not type(self._seen):
            return f"{describe(kept[4])} where Joe as last seen goes"
        return None

    @functools.cached_property
    def _cartridge_md5(self) -> bytes:
        return cartridge_tag(self._ale.cloneState().serialize(), "MontezumaRevenge")[1]

    def state_to_numpy(self) -> np.ndarray:
        """Return ``[ALEState, None]`` (object array) as 0.1 did; the ALE state has its RNG."""
        state = np.empty(2, dtype=object)
        state[0] = self._ale.cloneState(include_rng=True)
        return state

    def is_ram_death(self) -> bool:
        """Whether Joe is dying (RAM[55]) or has fewer lives than the most seen (noted)."""
        ram = self._ale.getRAM()
        self.cur_lives = max(self.cur_lives, int(ram[RAM_LIVES]))
        return bool(ram[RAM_DEATH] != 0 or ram[RAM_LIVES] < self.cur_lives)

    # 0.1's pixel helpers (``obs``: an RGB screen) -------------------------------------------
    def get_face_pixels(self, obs: np.ndarray) -> set[tuple[int, int]]:
        """Return the ``(y, x)`` pixels of Joe's face, from the top of the room."""
        return pixels.face_pixels(obs)

    def is_transition_screen(self, obs: np.ndarray) -> bool:
        """Whether ``obs`` is a screen between two rooms or levels (no face expected)."""
        return pixels.is_transition_screen(obs)

    def is_pixel_death(self, obs: np.ndarray, face_pixels: set[tuple[int, int]]) -> bool:
        """0.1's death on the screen: no face outside a transition, or a broken face."""
        return pixels.is_pixel_death(obs, face_pixels)

    def get_objects_from_pixels(
        self, obs: np.ndarray, room: int, old_objects: tuple
    ) -> int | tuple[tuple[int, int], ...]:
        """Read the objects in ``obs``'s inventory bar: a mask, or with rooms remembered pairs.

        ``old_objects``: the pairs held before (their rooms are kept), ``room``: Joe's room.
        """
        areas = pixels.inventory_areas(obs)
        if self.objects_remember_rooms:
            return pixels.objects_with_rooms(areas, room, old_objects, self.only_keys)
        return pixels.objects_mask(areas, self.only_keys)

    def pos_from_obs(self, face_pixels: set[tuple[int, int]], obs: np.ndarray) -> MontezumaPosLevel:
        """Joe from the screen as 0.1 read him: the mean of his face pixels (x, y).

        Without face pixels, :attr:`pos` as it is. Level and room are the RAM's (0.1
        inferred the room from jumps of the face); objects as configured.
        """
        centre = pixels.face_centre(face_pixels, self.x_repeat)
        if centre is None:
            return self.pos
        ram = self._ale.getRAM()
        room = int(ram[RAM_ROOM])
        objects: float | tuple = self.cur_score
        if self.score_objects and self.objects_from_pixels:
            objects = self.get_objects_from_pixels(obs, room, pixels.remembered(self._seen))
        elif self.score_objects:
            objects = self._objects(ram)
        return MontezumaPosLevel(int(ram[RAM_LEVEL]), objects, room, *centre)

    def render(self, mode: str | None = "human", **kwargs: Any) -> Any:
        """Return the wrapped env's rendering (its ``render_mode``'s); ``mode`` is 0.1's, unused."""
        return self.env.render()

    # Tracking -----------------------------------------------------------------------------
    def _xy(self, ram: np.ndarray) -> tuple[int, int]:
        return (int(ram[RAM_X]) + X_OFFSET) * self.x_repeat, Y_ORIGIN - int(ram[RAM_Y])

    def _objects(self, ram: np.ndarray) -> float:
        if not self.score_objects:
            return self.cur_score
        inventory = int(ram[RAM_OBJECTS])
        return inventory & KEY_BITS if self.only_keys else inventory

    def _see(self, screen: np.ndarray) -> set[tuple[int, int]]:
        """Pixel mode: note Joe if his face is on ``screen``; return the face pixels."""
        face = pixels.face_pixels(screen)
        if face:
            self._seen = self.pos_from_obs(face, screen)
            objects = self._seen.score
            if isinstance(objects, tuple):  # rooms remembered: coords get the plain mask
                areas = pixels.inventory_areas(screen)
                self._seen_mask = pixels.objects_mask(areas, self.only_keys)
            else:
                self._seen_mask = int(objects) if self.score_objects else 0
        return face

    def coords_from_ram(self, ram: np.ndarray) -> np.ndarray:
        """``[x, y, room, objects]`` for ``ram`` and the bookkeeping (pixel mode: as last seen)."""
        if self.objects_from_pixels:
            seen = self._seen
            objects = self._seen_mask if self.score_objects else seen.score
            return np.array([seen.x, seen.y, seen.room, objects], dtype=np.float32)
        x, y = self._xy(ram)
        return np.array([x, y, ram[RAM_ROOM], self._objects(ram)], dtype=np.float32)

    def info(self, ram: np.ndarray) -> dict[str, Any]:
        """Return the step ``info`` entries about Joe (pixel mode: as last seen)."""
        if self.objects_from_pixels:
            seen = self._seen
            x, y, room, level, objects = seen.x, seen.y, seen.room, seen.level, seen.score
        else:
            x, y = self._xy(ram)
            room, level, objects = int(ram[RAM_ROOM]), int(ram[RAM_LEVEL]), self._objects(ram)
        return {
            "x": x,
            "y": y,
            "room": room,
            "level": level,
            "objects": objects,
            "rooms_visited": self.rooms_visited,
        }

    def _picture_room(self, room: int, drawn: bool = False) -> None:
        """Put ``room``'s screen in :attr:`rooms` once the screen shows it (0.1's picture).

        The screen is drawn before the frame moves Joe: on the frame he enters a room it
        still shows the one he left, and screens between rooms may follow. The picture is
        the first screen after that frame that is not one of those, the frame 0.1 saw his
        face in the new room. A frame counts only when the one before it was played in
        ``room`` too (not across a restore). ``drawn``: the screen shows ``room`` already
        (after the reset's NOOPs). Called only for rooms without a picture, so the screen
        is read on a few frames per new room.
        """
        entering, self._entering = self._entering, (room, self.cur_steps)
        if not drawn and entering != (room, self.cur_steps - 1):
            return
        screen = self._ale.getScreenRGB()
        if not pixels.is_transition_screen(screen):
            self.rooms[room] = screen[pixels.SCREEN_TOP :].repeat(self.x_repeat, axis=1)

    def start_episode(self) -> None:
        """Forget the last episode (not :attr:`rooms`) and note where Joe starts."""
        ram = self._ale.getRAM()
        self.cur_score = 0.0
        self.cur_steps = 0
        self.cur_lives = int(ram[RAM_LIVES])
        start = int(ram[RAM_ROOM])
        self.visited = 1 << start
        self._entering = None
        if start not in self.rooms:
            self._picture_room(start, drawn=True)
        if self.objects_from_pixels:
            # Until his face shows (it does after the reset's NOOPs), Joe is where the RAM says.
            x, y = self._xy(ram)
            objects: float | tuple = self.cur_score
            if self.score_objects:
                objects = () if self.objects_remember_rooms else 0
            level, room = int(ram[RAM_LEVEL]), int(ram[RAM_ROOM])
            self._seen = MontezumaPosLevel(level, objects, room, float(x), float(y))
            self._seen_mask = 0
            self._ale.getScreenRGB(self._screen)
            self._see(self._screen)

    def track(self, reward: float) -> bool:
        """Account for one frame just played; return whether it ends the episode (0.1's rules)."""
        ram = self._ale.getRAM()
        self.cur_score += reward
        self.cur_steps += 1
        room = int(ram[RAM_ROOM])
        if room < N_ROOMS:
            self.visited |= 1 << room
        if room not in self.rooms:
            self._picture_room(room)
        died = self.is_ram_death()
        if self.objects_from_pixels:
            self._ale.getScreenRGB(self._screen)
            face = self._see(self._screen)
            died = died or (self.check_death and pixels.is_pixel_death(self._screen, face))
        return (self.check_death and died) or (self.death_room_8 and room == 8)

    # gymnasium API ------------------------------------------------------------------------
    def reset(
        self, seed: int | None = None, return_info: bool = False, options: dict | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Reset the game and play 0.1's three NOOP frames; return ``(obs, info)``.

        ``return_info`` is accepted for 0.1 and ignored: the info is always returned.
        """
        obs, info = self.env.reset(seed=seed, options=options)
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
        obs = self.coords_from_ram(ram) if self.coords_obs else obs
        return obs, reward, terminal, truncated, {**info, **self.info(ram)}
