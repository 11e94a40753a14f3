"""The state codec of stable-retro games: the emulator's save as a compact, comparable vector.

stable-retro's save state (about 1 MB on the Genesis) holds bytes that are not game state:
the tail of a buffer it never clears (whatever that memory held before) and words that are
addresses in the current process. :func:`find_written_bytes` and
:func:`find_ignored_pointers` find both once per emulator so that they can be zeroed in
every state; :func:`encode_state` then keeps the non-zero 256-byte pages behind a header
naming the game, :func:`decode_state` rebuilds the save, and :func:`state_problem` says
what is wrong with bytes offered as a state.

>>> raw = np.zeros(1000, dtype=np.uint8)
>>> raw[300] = 7
>>> state = encode_state(raw, "Demo-Genesis-v0", raw_size=1000)
>>> len(state) == HEADER_SIZE + 4 + PAGE_SIZE, decode_state(state) == raw.tobytes()
(True, True)
>>> state_problem(state, "Other-Genesis-v0", raw_size=1000)
'a state of Demo-Genesis-v0'
"""

from __future__ import annotations

import os
import sys
from typing import Any

import numpy as np

from plangym.validation.values import counted

# State layout: header, then the indices of the emulator state's non-zero pages (uint32),
# then those pages. The header names the game so a state of another game is refused before
# the emulator sees it (the emulator accepts any bytes of the right length).
MAGIC = b"PGRETRO1"
PAGE_SIZE = 256
_NAME_BYTES = 64
_HEADER_DTYPE = np.dtype(
    [
        ("magic", "S8"),
        ("game", f"S{_NAME_BYTES}"),
        ("raw_size", "<u4"),  # length of the emulator's save state
        ("n_pages", "<u4"),  # non-zero pages kept
    ]
)
HEADER_SIZE = _HEADER_DTYPE.itemsize


def _memory_debugging() -> str:
    """Name the setting that overwrites freed memory here, as far as this process can see."""
    settings = [
        "Python's dev mode (-X dev, PYTHONDEVMODE)" if sys.flags.dev_mode else "",
        f"PYTHONMALLOC={os.environ['PYTHONMALLOC']}" if "PYTHONMALLOC" in os.environ else "",
        "MALLOC_PERTURB_" if os.environ.get("MALLOC_PERTURB_", "0") != "0" else "",
    ]
    found = [setting for setting in settings if setting]
    return " or ".join(found) if found else "a memory debugger or allocator that fills freed memory"


def find_written_bytes(em: Any, attempts: int = 8) -> tuple[int, np.ndarray]:
    """Return how much of a save state the emulator writes, and the bytes it skips there.

    stable-retro hands out save states in buffers it does not clear: the core writes the
    first part (145 KB of 1 MB on the Genesis, skipping a few bytes there) and the rest is
    whatever that memory held before, so two saves of one game differ. Freeing a buffer
    of a save's size filled with a known byte just before saving makes the allocator hand
    that buffer to the save; the bytes still holding the fill byte, for two different
    fill bytes, are the ones the core leaves alone. No byte the core writes can hold both,
    but an attempt whose save got another buffer (one freed earlier: the allocator's
    choice) sees old bytes as written: a byte counts as unwritten when one attempt saw it
    so, and the attempts go on until two in a row add nothing.
    """
    size = len(em.get_state())
    unwritten = np.zeros(size, dtype=bool)
    unchanged = 0
    for _ in range(attempts):
        seen = np.ones(size, dtype=bool)
        for fill in (0xA5, 0x5A):
            filled = bytearray([fill]) * (size + 64)
            del filled
            seen &= np.frombuffer(em.get_state(), dtype=np.uint8) == fill
        before = int(unwritten.sum())
        unwritten |= seen
        unchanged = unchanged + 1 if before and unwritten.sum() == before else 0
        if unchanged == 2:
            break
    written = np.flatnonzero(~unwritten)
    if unchanged < 2 or not len(written):  # an allocator that overwrites freed memory
        raise RuntimeError(
            "RetroEnv: cannot tell which bytes of the emulator's save state it writes, so "
            "its states would not compare exactly: the probe needs freed memory handed back "
            f"as it was left, which {_memory_debugging()} prevents; run without it"
        )
    end = int(written[-1]) + 1
    return end, np.flatnonzero(unwritten[:end])


def find_ignored_pointers(em: Any, content_size: int) -> np.ndarray:
    """Return the bytes of a save state that hold addresses of this process, unread on load.

    Cores save some structures whole, pointers included; those differ from process to
    process and a restore recomputes them instead of reading them. Candidates are the
    8-byte words that point into this process's mapped memory; a candidate counts when a
    restore of the state with it zeroed saves it back unchanged (so a restore ignores it).
    The emulator's state is left as it was.
    """
    original = em.get_state()
    raw = np.frombuffer(original, dtype=np.uint8)[:content_size]
    ranges = []
    with open("/proc/self/maps") as maps:
        for line in maps:
            start, end = line.split()[0].split("-")
            ranges.append((int(start, 16), int(end, 16)))
    starts = np.array([r[0] for r in ranges], dtype=np.uint64)
    ends = np.array([r[1] for r in ranges], dtype=np.uint64)
    candidates: list[int] = []
    for shift in range(8):  # saves pack fields: pointers sit at any offset
        words = raw[shift : shift + 8 * ((len(raw) - shift) // 8)].view("<u8")
        where = np.clip(np.searchsorted(starts, words, side="right") - 1, 0, None)
        mapped = (words >= starts[where]) & (words < ends[where]) & (words > 1 << 16)
        candidates.extend(shift + 8 * np.flatnonzero(mapped))
    if not candidates:
        return np.zeros(0, dtype=np.int64)
    candidate_bytes = (np.array(candidates)[:, None] + np.arange(8)).ravel()
    probe = bytearray(original)
    for index in candidate_bytes:
        probe[index] = 0
    em.set_state(bytes(probe))
    back = np.frombuffer(em.get_state(), dtype=np.uint8)[:content_size]
    em.set_state(original)
    words_back = back[candidate_bytes].reshape(-1, 8)
    ignored = (words_back == raw[candidate_bytes].reshape(-1, 8)).all(axis=1)
    return np.unique(candidate_bytes.reshape(-1, 8)[ignored].ravel())


def encode_state(raw: np.ndarray, game: str, raw_size: int) -> np.ndarray:
    """Return a save state as a header plus its non-zero pages.

    ``raw`` is the start of a ``raw_size``-byte save state whose other bytes are zeros.
    """
    n_pages = -(-len(raw) // PAGE_SIZE)
    if len(raw) % PAGE_SIZE:
        raw = np.concatenate([raw, np.zeros(n_pages * PAGE_SIZE - len(raw), dtype=np.uint8)])
    pages = raw.reshape(n_pages, PAGE_SIZE)
    # A page is kept when any of its bytes is non-zero (testing bytes measured faster than
    # testing 8-byte words: benchmarks/design_figures.py).
    kept = np.flatnonzero(pages.any(axis=1)).astype("<u4")
    header = np.zeros((), dtype=_HEADER_DTYPE)
    header["magic"] = MAGIC
    header["game"] = game.encode()[:_NAME_BYTES]
    header["raw_size"] = raw_size
    header["n_pages"] = len(kept)
    return np.concatenate(
        [np.frombuffer(header.tobytes(), np.uint8), kept.view(np.uint8), pages[kept].ravel()]
    )


def _read(state: np.ndarray, start: int, stop: int, dtype: Any) -> np.ndarray:
    """Return the bytes ``state[start:stop]`` read as ``dtype``.

    A state may be strided (a row of a Fortran-ordered archive, a slice with a step):
    NumPy reads wider items only from contiguous bytes, so those few are copied first
    (no copy for a contiguous state).
    """
    return np.ascontiguousarray(state[start:stop]).view(dtype)


def decode_state(state: np.ndarray) -> bytes:
    """Return the emulator save state a checked ``state`` holds."""
    header = _read(state, 0, HEADER_SIZE, _HEADER_DTYPE)[0]
    raw_size, n_kept = int(header["raw_size"]), int(header["n_pages"])
    kept = _read(state, HEADER_SIZE, HEADER_SIZE + 4 * n_kept, "<u4")
    pages = np.zeros((-(-raw_size // PAGE_SIZE), PAGE_SIZE), dtype=np.uint8)
    pages[kept] = state[HEADER_SIZE + 4 * n_kept :].reshape(n_kept, PAGE_SIZE)
    return pages.reshape(-1)[:raw_size].tobytes()


def state_problem(state: np.ndarray, game: str, raw_size: int) -> str | None:
    """Say what is wrong with a uint8 vector offered as a ``game`` state (None: nothing)."""
    if len(state) < HEADER_SIZE:
        return f"{counted(len(state), 'byte')}, shorter than a state's {HEADER_SIZE}-byte header"
    header = _read(state, 0, HEADER_SIZE, _HEADER_DTYPE)[0]
    if bytes(header["magic"]) != MAGIC:
        return "bytes without a plangym retro state header"
    owner = bytes(header["game"]).decode(errors="replace")
    if owner != game[:_NAME_BYTES]:
        return f"a state of {owner}"
    n_kept = int(header["n_pages"])
    n_total = -(-raw_size // PAGE_SIZE)
    if int(header["raw_size"]) != raw_size or n_kept > n_total:
        return f"a state of {int(header['raw_size'])} emulator bytes, this one has {raw_size}"
    if len(state) != HEADER_SIZE + n_kept * (4 + PAGE_SIZE):
        announced = counted(n_kept, "page")
        return f"{counted(len(state), 'byte')} where the header announces {announced} (corrupt)"
    kept = _read(state, HEADER_SIZE, HEADER_SIZE + 4 * n_kept, "<u4")
    if n_kept and (kept[-1] >= n_total or np.any(np.diff(kept.astype(np.int64)) <= 0)):
        return "page indices out of order or range (corrupt)"
    return None
