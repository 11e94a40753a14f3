"""The state codec of Atari games: the ALE's serialized state plus plangym's own bookkeeping.

A state is a uint8 vector: what a subclass keeps before it (Montezuma's tracker), the
ALE's serialized state (random generator included), then a trailer of
:data:`TRAILER_SIZE` bytes: the last action the console received (int64, the one a sticky
frame repeats) and the words of plangym's sticky-action generator. The serialized state
names the cartridge by its md5 near its start, which tells a state of another game apart
before the ALE sees it.

>>> state = encode_state(b"", b"ALE" + b"0" * 32, last_action=3, words=bytes(8 * N_WORDS))
>>> ale_bytes, last_action, words = decode_state(state)
>>> ale_bytes[:3], last_action, len(state) - len(ale_bytes) == TRAILER_SIZE
(b'ALE', 3, True)
"""

from __future__ import annotations

import re
import struct
from typing import Any

import numpy as np

from plangym.rng import N_WORDS
from plangym.videogames.env import check_uint8_vector

_MD5 = re.compile(rb"[0-9a-f]{32}")
# Cartridges whose save rounds part of their state (the DPC chip of Pitfall II keeps its
# sound clock fraction to 8 decimals), so the running emulator drifts from a state it saved.
_LOSSY_CARTRIDGES = (b"CartridgeDPC",)
_LAST_ACTION = struct.Struct("<q")
TRAILER_SIZE = _LAST_ACTION.size + 8 * N_WORDS


def cartridge_tag(reference: bytes, game: str) -> tuple[int, bytes]:
    """Return where the cartridge md5 sits in a serialized ALE state, and the md5."""
    match = _MD5.search(reference)
    if match is None:  # a new ALE serialization format: fail loudly, not inexactly
        raise RuntimeError(f"{game}: cannot find the cartridge md5 in the ALE state")
    return match.start(), match.group()


def saves_lossily(reference: bytes) -> bool:
    """Whether the cartridge's saves round part of its state (see ``_LOSSY_CARTRIDGES``)."""
    return any(tag in reference for tag in _LOSSY_CARTRIDGES)


def encode_state(prefix: bytes, ale_bytes: bytes, last_action: int, words: bytes) -> np.ndarray:
    """Return ``prefix``, the ALE's bytes and the sticky-action trailer as one uint8 vector."""
    parts = (prefix, ale_bytes, _LAST_ACTION.pack(last_action), words)
    return np.frombuffer(b"".join(parts), dtype=np.uint8)


def decode_state(state: np.ndarray) -> tuple[bytes, int, bytes]:
    """Return the ALE's bytes, the last action and the generator words of a checked state."""
    trailer = state[-TRAILER_SIZE:].tobytes()
    (last_action,) = _LAST_ACTION.unpack_from(trailer)
    return state[:-TRAILER_SIZE].tobytes(), last_action, trailer[_LAST_ACTION.size :]


def check_cartridge(state: Any, name: str, game: str, cartridge: tuple[int, bytes]) -> None:
    """Raise unless ``state`` is a state of the game whose md5 ``cartridge`` names."""
    check_uint8_vector(state, name, game)
    start, md5 = cartridge
    if len(state) <= start + len(md5) + TRAILER_SIZE or (
        state[start : start + len(md5)].tobytes() != md5
    ):
        raise ValueError(
            f"{name}: expected a state of {game} (cartridge md5 {md5.decode()}), "
            "received a state of another game or corrupt bytes"
        )
