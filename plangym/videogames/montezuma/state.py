"""The state of :class:`~plangym.videogames.montezuma.MontezumaEnv`: a tracker header, then Atari's.

What the RAM does not hold, the tracker keeps and the state carries in a header before the
Atari state (:mod:`plangym.videogames.atari.state`): the episode's score and frame count,
the most lives seen (0.1's death rule) and the rooms visited (a bit per room).

>>> header = pack_header(score=100.0, steps=7, lives_seen=5, visited=0b10)
>>> len(header) == HEADER_SIZE, unpack_header(np.frombuffer(header, dtype=np.uint8))
(True, (100.0, 7, 5, 2))
"""

from __future__ import annotations

import struct
from typing import Any

import numpy as np

from plangym.videogames.env import check_uint8_vector

# The tracker's bookkeeping, stored before the Atari state. The tag tells our states from a
# plain Atari Montezuma state, whose bytes start with the ALE's own serialization.
STATE_TAG = b"PLANMZ01"
# tag, the episode's score, frames played, most lives seen, visited rooms (a bit per room).
_HEADER = struct.Struct("<8sdqqQ")
HEADER_SIZE = _HEADER.size


def pack_header(score: float, steps: int, lives_seen: int, visited: int) -> bytes:
    """Return the tracker's bookkeeping as the bytes that start a state."""
    return _HEADER.pack(STATE_TAG, score, steps, lives_seen, visited)


def unpack_header(state: np.ndarray) -> tuple[float, int, int, int]:
    """Return ``(score, steps, lives_seen, visited)`` from a checked state."""
    _, score, steps, lives_seen, visited = _HEADER.unpack_from(state[:HEADER_SIZE].tobytes())
    return score, steps, lives_seen, visited


def check_header(state: Any, name: str, game: str) -> None:
    """Raise unless ``state`` starts with a tracker header (not a plain Atari state)."""
    check_uint8_vector(state, name, game)
    if len(state) <= HEADER_SIZE or state[: len(STATE_TAG)].tobytes() != STATE_TAG:
        raise ValueError(
            f"{name}: expected a {game} state (starting with {STATE_TAG!r}), "
            "received another game's state, a plain Atari Montezuma state or corrupt bytes"
        )
