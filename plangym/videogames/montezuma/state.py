"""The state of :class:`~plangym.videogames.montezuma.MontezumaEnv`: a tracker header, then Atari's.

What the RAM does not hold, the tracker keeps and the state carries in a header before the
Atari state (:mod:`plangym.videogames.atari.state`): the episode's score and frame count,
the most lives seen (0.1's death rule) and the rooms visited (a bit per room). In pixel
mode (``objects_from_pixels=True``) the header also holds Joe as last seen on the screen
(:func:`pack_seen`) and how the tracker reads him (:class:`PixelReading`: the kind of his
objects value and the scale of his x depend on it), and starts with another tag: a state of
one mode is refused by the other, and a pixel-mode state by an env that reads Joe otherwise.

>>> header = pack_header(score=100.0, steps=7, lives_seen=5, visited=0b10)
>>> len(header) == HEADER_SIZE, unpack_header(np.frombuffer(header, dtype=np.uint8))
(True, (100.0, 7, 5, 2))
>>> seen = (MontezumaPosLevel(0, ((40, 1),), 1, 79.5, 29.0), 2)
>>> reading = PixelReading(True, True, False, 1)
>>> header = np.frombuffer(pack_header(0.0, 1, 5, 0b10, seen, reading), dtype=np.uint8)
>>> len(header) == PIXEL_HEADER_SIZE, unpack_seen(header)
(True, (Level=0 Room=1 Objects=((40, 1),) x=79.5 y=29.0, 2))
"""

from __future__ import annotations

import struct
from typing import Any, NamedTuple

import numpy as np

from plangym.videogames.env import check_uint8_vector
from plangym.videogames.montezuma.rooms import MontezumaPosLevel

# The tracker's bookkeeping, stored before the Atari state. The tag tells our states from a
# plain Atari Montezuma state, whose bytes start with the ALE's own serialization.
STATE_TAG = b"PLANMZ01"
PIXEL_STATE_TAG = b"PLANMZP2"  # pixel mode: the header goes on with Joe as last seen
# tag, the episode's score, frames played, most lives seen, visited rooms (a bit per room).
_HEADER = struct.Struct("<8sdqqQ")
HEADER_SIZE = _HEADER.size
# Joe as last seen: level, room, x, y, what his objects value is (a _KIND), the value as a
# float, as an int, the objects mask, then up to 7 remembered objects (count, sizes, rooms).
_SEEN = struct.Struct("<qqddBdqqB7B7b")
# Pixel mode: how the tracker reads Joe (score_objects, objects_remember_rooms and
# only_keys as bits, then x_repeat), before Joe as last seen.
_READING = struct.Struct("<Bq")
PIXEL_HEADER_SIZE = HEADER_SIZE + _READING.size + _SEEN.size
_FLOAT, _INT, _REMEMBERED = 0, 1, 2
_MAX_OBJECTS = 7

Seen = tuple[MontezumaPosLevel, int]  # Joe as last seen, and his objects as a mask


class PixelReading(NamedTuple):
    """How a pixel-mode tracker reads Joe: what his last seen values in a state mean."""

    score_objects: bool
    objects_remember_rooms: bool
    only_keys: bool
    x_repeat: int

    def pack(self) -> bytes:
        """Return the reading as the bytes a pixel-mode header holds."""
        flags = self.score_objects | self.objects_remember_rooms << 1 | self.only_keys << 2
        return _READING.pack(flags, self.x_repeat)

    @classmethod
    def unpack(cls, state: np.ndarray) -> PixelReading:
        """Return the reading a pixel-mode state was made with."""
        flags, x_repeat = _READING.unpack_from(state[HEADER_SIZE:].tobytes(), 0)
        return cls(bool(flags & 1), bool(flags & 2), bool(flags & 4), x_repeat)

    def __str__(self) -> str:
        return ", ".join(f"{name}={value}" for name, value in self._asdict().items())


def pack_header(
    score: float,
    steps: int,
    lives_seen: int,
    visited: int,
    seen: Seen | None = None,
    reading: PixelReading | None = None,
) -> bytes:
    """Return the tracker's bookkeeping as the bytes that start a state.

    In pixel mode, ``seen`` (Joe as last seen) and ``reading`` (how the tracker reads him).
    """
    if seen is None:
        return _HEADER.pack(STATE_TAG, score, steps, lives_seen, visited)
    assert reading is not None, "a pixel-mode header says how Joe was read"
    head = _HEADER.pack(PIXEL_STATE_TAG, score, steps, lives_seen, visited)
    return head + reading.pack() + pack_seen(*seen)


def unpack_header(state: np.ndarray) -> tuple[float, int, int, int]:
    """Return ``(score, steps, lives_seen, visited)`` from a checked state."""
    _, score, steps, lives_seen, visited = _HEADER.unpack_from(state[:HEADER_SIZE].tobytes())
    return score, steps, lives_seen, visited


def pack_seen(pos: MontezumaPosLevel, mask: int) -> bytes:
    """Return Joe as last seen (objects a float, an int or remembered objects) as bytes."""
    objects = pos.score
    pairs: list[tuple[int, int]] = []
    if isinstance(objects, tuple):
        kind, as_float, as_int, pairs = _REMEMBERED, 0.0, 0, list(objects)
    elif isinstance(objects, int | np.integer):
        kind, as_float, as_int = _INT, 0.0, int(objects)
    else:
        kind, as_float, as_int = _FLOAT, float(objects), 0
    padding = [(0, 0)] * (_MAX_OBJECTS - len(pairs))
    sizes, rooms = zip(*(pairs + padding), strict=True)
    return _SEEN.pack(
        pos.level, pos.room, pos.x, pos.y, kind, as_float, as_int, mask, len(pairs), *sizes, *rooms
    )


def unpack_seen(state: np.ndarray) -> Seen:
    """Return ``(pos, mask)`` from a checked pixel-mode state."""
    values = _SEEN.unpack_from(state[HEADER_SIZE + _READING.size : PIXEL_HEADER_SIZE].tobytes())
    level, room, x, y, kind, as_float, as_int, mask, count = values[:9]
    sizes, rooms = values[9 : 9 + _MAX_OBJECTS], values[9 + _MAX_OBJECTS :]
    objects: float | tuple = (as_float, as_int, tuple(zip(sizes, rooms, strict=True))[:count])[kind]
    return MontezumaPosLevel(level, objects, room, x, y), mask


def check_header(state: Any, name: str, game: str, reading: PixelReading | None = None) -> None:
    """Raise unless ``state`` starts with the header of the tracker's mode and reading.

    ``reading``: the pixel mode's (None: RAM mode).
    """
    check_uint8_vector(state, name, game)
    pixels = reading is not None
    tag, other = (PIXEL_STATE_TAG, STATE_TAG) if pixels else (STATE_TAG, PIXEL_STATE_TAG)
    size = PIXEL_HEADER_SIZE if pixels else HEADER_SIZE
    found = state[: len(tag)].tobytes()
    if len(state) > size and found == tag:
        if reading is not None and PixelReading.unpack(state) != reading:
            raise ValueError(
                f"{name}: expected a pixel-mode {game} state of an env reading Joe with "
                f"{reading}, received one of an env reading him with "
                f"{PixelReading.unpack(state)} (what it saw of him means something else)"
            )
        return
    mode = "pixel-mode (objects_from_pixels=True)" if pixels else "RAM-mode"
    received = (
        f"a state of the other mode (starting with {other!r})"
        if found == other
        else "another game's state, a plain Atari Montezuma state or corrupt bytes"
    )
    raise ValueError(
        f"{name}: expected a {mode} {game} state (starting with {tag!r}), received {received}"
    )
