"""Montezuma's Revenge with Panama Joe's room, level, position and objects, exactly restorable.

``PlanMontezuma-v0`` is plangym 0.1's Montezuma environment for Go-Explore-style search: an
Atari game (ale-py's "ALE/MontezumaRevenge-v5", one emulator frame per underlying step) plus
a tracker, :class:`CustomMontezuma`, that follows Panama Joe. ``obs_type="coords"`` gives the
observation ``[x, y, room, objects]`` and every step's ``info`` carries ``x``, ``y``,
``room``, ``level``, ``objects`` and ``rooms_visited``.

What 0.1 did by reading pixels (Joe's face) and by counting room changes against the
pyramid map, this module reads by default from the console's RAM, which the emulator state
already holds, so positions never go missing and rooms never drift:

* ``x = RAM[42] + 2`` and ``y = 264 - RAM[43]``: 0.1's frame (screen pixels below row 50, y
  growing downwards). 0.1's face centroid is one frame late and wobbles with the sprite's
  animation; these values are within 2 pixels of it.
* ``room = RAM[3]``, numbered as on 0.1's :data:`PYRAMID`; ``level = RAM[57]``.
* ``objects``: with ``score_objects=True`` the inventory byte ``RAM[65]`` (masked with
  :data:`KEY_BITS` when ``only_keys``), else the score of the episode, as in 0.1.

Pixel mode, ``objects_from_pixels=True``, reads Joe from the screen after every frame as
0.1 did (:mod:`~plangym.videogames.montezuma.pixels`): ``x``, ``y`` are the mean of his
face pixels, ``objects`` (with ``score_objects``) the objects seen in the inventory bar, a
mask (bit i: ``OBJECT_PIXELS[i]``), or with ``objects_remember_rooms`` 0.1's
``((blob size, room first seen in), ...)`` (coords then get the mask); a vanished or
broken face outside a room transition is a death too. Without his face on the screen
Joe stays where he was last seen. Room and level still come from the RAM.

What the RAM does not hold, the tracker keeps and the state carries in a header before the
Atari state: the episode's score and frame count, the most lives seen (0.1's death rule),
the rooms visited and, in pixel mode, Joe as last seen. Sticky actions are the Atari
family's: exact.

>>> env = MontezumaEnv(obs_type="coords", frameskip=4)
>>> state, obs, info = env.reset()
>>> obs.tolist(), info["room"], info["level"]
([79.0, 29.0, 1.0, 0.0], 1, 0)
>>> _, obs, *_ , info = env.step(3, state=state, dt=3)  # RIGHT for 12 frames
>>> obs[0] > 79, info["rooms_visited"]
(np.True_, (1,))
>>> seeing = MontezumaEnv(obs_type="coords", objects_from_pixels=True, score_objects=True)
>>> state, obs, info = seeing.reset()
>>> obs.tolist(), (info["x"], info["y"], info["objects"])  # Joe's face: x=79.7, y=29.0
([79.69999694824219, 29.0, 1.0, 0.0], (79.7, 29.0, 0))
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import gymnasium as gym
import numpy as np

from plangym.constructor import parent_arguments
from plangym.core.wrappers import wrap_callable
from plangym.videogames.atari.env import AtariEnv
from plangym.videogames.atari.state import wrong_length
from plangym.videogames.montezuma.state import (
    HEADER_SIZE,
    PIXEL_HEADER_SIZE,
    PixelReading,
    check_header,
    pack_header,
    unpack_header,
    unpack_seen,
)
from plangym.videogames.montezuma.tracker import (
    GAME_ID,
    RESET_NOOPS,
    CustomMontezuma,
    MontezumaPosLevel,
    check_tracker_options,
    room_xy,
)


class MontezumaEnv(AtariEnv):
    """Montezuma's Revenge for planning: Joe's room, level, position and objects, exact states.

    The parameters are :class:`~plangym.videogames.atari.AtariEnv`'s (with 0.1's defaults:
    one frame per step, mode and difficulty 0, ``clone_seeds=True``, which only makes
    states bigger and slower: pass False) and :class:`CustomMontezuma`'s. A state is
    the tracker's bookkeeping (:data:`HEADER_SIZE` bytes, tagged ``PLANMZ01``; in pixel
    mode :data:`PIXEL_HEADER_SIZE` bytes tagged ``PLANMZP2``, with Joe as last seen and
    how the tracker reads him) followed by an Atari state of the game; plain Atari
    Montezuma states, states of the other mode and pixel-mode states of an env reading
    Joe otherwise are refused, and the Atari env refuses these.

    >>> env = MontezumaEnv(obs_type="ram")
    >>> state, obs, info = env.reset()
    >>> bytes(state[:8]), obs.shape, env.pos.room
    (b'PLANMZ01', (128,), 1)
    >>> pixel = MontezumaEnv(obs_type="ram", objects_from_pixels=True)
    >>> bytes(pixel.reset()[0][:8]), pixel.pos
    (b'PLANMZP2', Level=0 Room=1 Objects=0.0 x=79.7 y=29.0)
    """

    FAST_PATHS = True
    AVAILABLE_OBS_TYPES = frozenset({"coords", "rgb", "grayscale", "ram"})
    RESET_FRAMES = RESET_NOOPS  # 0.1's NOOPs after each reset

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
        self._tracker_kwargs: dict[str, Any] = {
            "check_death": check_death,
            "score_objects": score_objects,
            "objects_from_pixels": objects_from_pixels,
            "objects_remember_rooms": objects_remember_rooms,
            "only_keys": only_keys,
            "death_room_8": death_room_8,
            "x_repeat": x_repeat,
        }
        check_tracker_options(**self._tracker_kwargs)  # now, even when setup is delayed
        self._tracker: CustomMontezuma | None = None
        super().__init__(**parent_arguments(MontezumaEnv, locals()))

    # Joe ------------------------------------------------------------------------------------
    @property
    def tracker(self) -> CustomMontezuma:
        """The :class:`CustomMontezuma` following Joe (under any user wrappers)."""
        self.gym_env  # noqa: B018 - builds the emulator when setup was delayed
        assert self._tracker is not None, "init_gym_env builds the tracker"
        return self._tracker

    @property
    def pos(self) -> MontezumaPosLevel:
        """Where Joe is now."""
        return self.tracker.pos

    @property
    def rooms(self) -> dict[int, np.ndarray]:
        """The tracker's :attr:`~CustomMontezuma.rooms`: room -> its screen when first seen.

        0.1's pictures of the rooms, kept across episodes and not in states; the rooms
        entered this episode are ``info["rooms_visited"]``.
        """
        return self.tracker.rooms

    @contextmanager
    def state_kept(self) -> Iterator[None]:
        """Leave the env in its state, and :attr:`rooms` as they are, whatever the block does.

        The rooms are outside states: a batch a ``ParallelEnv`` runs here keeps them, as
        one its workers run does.
        """
        rooms = dict(self.tracker.rooms)
        try:
            with super().state_kept():
                yield
        finally:
            self.tracker.rooms.clear()
            self.tracker.rooms.update(rooms)

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
    def observe(self, out: np.ndarray | None = None) -> np.ndarray:
        """Read the observation; coords come from the RAM and the tracker."""
        if self.obs_type != "coords":
            return super().observe(out)
        coords = self.tracker.coords_from_ram(self.ale.getRAM())
        if out is None:
            return coords
        out[:] = coords
        return out

    def _after_frame(self, reward: float) -> bool:
        """Track Joe after each frame; 0.1's rules may end the episode (death, room 8)."""
        tracker = self._tracker  # read directly: called on every frame
        assert tracker is not None, "frames are played once init_gym_env built the tracker"
        return tracker.track(reward)

    def frame_info(self) -> dict[str, Any]:
        """Return the ALE's frame counters and Joe's room, level, position, objects, rooms."""
        info = super().frame_info()
        info.update(self.tracker.info(self.ale.getRAM()))
        return info

    # States ---------------------------------------------------------------------------------
    def _state_prefix(self) -> bytes:
        """Return the tracker's bookkeeping (not in the RAM), put before the Atari state."""
        tracker = self.tracker
        data = tracker.bookkeeping()  # in pixel mode it ends with Joe as seen and his mask
        seen = (data[4], data[5]) if self.objects_from_pixels else None
        return pack_header(
            tracker.cur_score,
            tracker.cur_steps,
            tracker.cur_lives,
            tracker.visited,
            seen=seen,
            reading=self._pixel_reading(),
        )

    def _pixel_reading(self) -> PixelReading | None:
        """How the tracker reads Joe in pixel mode (None in RAM mode): see the state module."""
        if not self.objects_from_pixels:
            return None
        options = self._tracker_kwargs
        return PixelReading(
            bool(options["score_objects"]),
            bool(options["objects_remember_rooms"]),
            bool(options["only_keys"]),
            int(options["x_repeat"]),
        )

    @property
    def objects_from_pixels(self) -> bool:
        """Pixel mode: Joe's position and objects are read from the screen, as 0.1 did."""
        return bool(self._tracker_kwargs["objects_from_pixels"])

    @property
    def header_size(self) -> int:
        """Bytes of tracker bookkeeping before the Atari state (more in pixel mode)."""
        return PIXEL_HEADER_SIZE if self.objects_from_pixels else HEADER_SIZE

    def _set_checked_state(self, state: np.ndarray) -> None:
        """Restore a checked state: no reset, only the emulator and the bookkeeping."""
        super()._set_checked_state(state[self.header_size :])
        data = unpack_header(state)
        self.tracker.restore_bookkeeping(
            (*data, *unpack_seen(state)) if self.objects_from_pixels else data
        )

    def check_state(self, state: Any, name: str = "state") -> None:
        """Raise unless ``state`` is a PlanMontezuma state of this env's mode (RAM or pixels)."""
        check_header(state, name, self.name, reading=self._pixel_reading())
        self.gym_env  # noqa: B018 - builds the emulator (and the state format) when delayed
        size = self.header_size + self._codec.size
        if len(state) != size:  # said here: the Atari check sees the state without its header
            raise wrong_length(name, self.name, size, len(state))
        super().check_state(state[self.header_size :], name)
