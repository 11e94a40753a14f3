"""States through shared memory: byte arenas that the caller and its workers both map.

A batch of 256 Atari states (14.5 KB each) moves 3.7 MB each way; through a pipe that is
pickled and copied in and out of the kernel in 64 KB pieces, a context switch each. Here
the caller copies the input states once into an arena, each worker writes its new states
once into its region of a second one, and the caller copies each out once (a state owns
its bytes). Only a :class:`~plangym.vectorization.packing.SharedStates` descriptor crosses
the pipe; its ``lengths`` are None for 0-d states, else the lengths as int64 bytes.

>>> import numpy as np
>>> arena = np.zeros(256, dtype=np.uint8)
>>> states = [np.arange(3, dtype=np.uint8), np.arange(5, dtype=np.uint8)]
>>> packed = write_states(arena, 64, 192, states)
>>> packed.start, packed.n_states
(64, 2)
>>> [s.tolist() for s in read_states(arena, packed)]
[[0, 1, 2], [0, 1, 2, 3, 4]]
>>> write_states(arena, 0, 4, states) is None  # does not fit in 4 bytes
True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from plangym.columns import is_record_block, records_to_states
from plangym.vectorization.packing import SharedStates, state_layout

# Regions start on cache-line boundaries, which also aligns every dtype's items.
ALIGN = 64


def aligned(nbytes: int) -> int:
    """``nbytes`` rounded up to a multiple of :data:`ALIGN`."""
    return -(-nbytes // ALIGN) * ALIGN


def states_nbytes(states: Sequence[Any] | np.ndarray, layout: tuple | None = None) -> int | None:
    """Bytes the states take in an arena, or None when they cannot go there.

    ``layout`` is their :func:`state_layout` when the caller has it already.
    """
    if (layout or state_layout(states)) is None:
        return None
    if is_record_block(states):
        return states.nbytes
    return sum(state.nbytes for state in states)


def write_states(
    arena: np.ndarray,
    start: int,
    capacity: int,
    states: Sequence[Any] | np.ndarray,
    layout: tuple | None = None,
) -> SharedStates | None:
    """Copy ``states`` into ``arena[start:start + capacity]`` and return their descriptor.

    Returns None (nothing written) when the states are not arrays of one dtype or do not
    fit: they then go through the pipe. ``layout`` is as in :func:`states_nbytes`.
    """
    layout = layout or state_layout(states)
    if layout is None:
        return None
    nbytes = states_nbytes(states, layout)
    if nbytes is None or nbytes > capacity or start + nbytes > arena.nbytes:
        return None
    dtype, ndim = layout
    count = len(states)
    if ndim == 0:  # a record block, or 0-d states: their bytes back to back
        if is_record_block(states):
            data = np.ascontiguousarray(states).view(np.uint8)
        else:
            data = np.frombuffer(b"".join([state.tobytes() for state in states]), np.uint8)
        arena[start : start + nbytes] = data
        return SharedStates(dtype, None, start, count)
    if nbytes:
        np.concatenate(states, out=arena[start : start + nbytes].view(dtype))
    lengths = np.fromiter((len(state) for state in states), dtype="<i8", count=count)
    return SharedStates(dtype, lengths.tobytes(), start, count)


def read_states(
    arena: np.ndarray, packed: SharedStates, as_records: bool = False, copy: bool = True
) -> list | np.ndarray:
    """Read back the states that :func:`write_states` wrote to ``arena`` as ``packed``.

    ``as_records``: 0-d record states as one 1-D record array. ``copy``: every state owns
    read-only bytes (the caller keeps them); else views of the arena (a worker's, read
    during its request only).
    """
    dtype, lengths, start, count = packed
    assert dtype is not None, "the dtype token was not decoded (see DtypeChannel)"
    if lengths is None:
        records = np.frombuffer(arena, dtype=dtype, count=count, offset=start)
        if as_records and dtype.names is not None:
            return records.copy() if copy else records
        return records_to_states(records)
    ends = (np.cumsum(np.frombuffer(lengths, dtype="<i8")) * dtype.itemsize + start).tolist()
    starts = [start, *ends[:-1]]
    if copy:
        return [
            np.frombuffer(arena[a:b].tobytes(), dtype=dtype)
            for a, b in zip(starts, ends, strict=True)
        ]
    return [arena[a:b].view(dtype) for a, b in zip(starts, ends, strict=True)]
