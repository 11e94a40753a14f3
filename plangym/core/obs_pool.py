"""Observation arrays for the caller, recycled once nobody references them any more.

A batch returns one array per observation, as a single env does, so that keeping one
observation does not keep a batch alive. A fresh 100 KB Atari screen costs page faults on
top of writing it: a batch of 256 screens is 25 MB that the allocator hands back to the
system when the batch is dropped and takes again for the next one. Writing into an array
that an earlier batch handed out and the user has since dropped costs the write alone: a
``ParallelEnv`` copies the observations out of shared memory into such arrays (about half
the time of fresh ones for a batch of 256 screens here), and an Atari env's ``step_batch``
has the emulator draw into them (0.88x the time of a batch, measured in one process). An
array is reused only when the pool holds the last reference to it, so what a user keeps is
never overwritten.

>>> import numpy as np
>>> pool = ObservationPool()
>>> screens = np.arange(2 * 4096, dtype=np.uint8).reshape(2, 4096) % 7
>>> first = pool.copies(screens)
>>> kept = first[1]
>>> del first
>>> second = pool.copies(screens[::-1] + 1)
>>> bool((kept == screens[1]).all())  # still referenced, so not reused
True
>>> bool((second[0] == screens[1] + 1).all())
True
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

# Smaller observations come from NumPy's allocator cheaply: copy them plainly.
MIN_BYTES = 4096


def rows_of(array: np.ndarray) -> list[np.ndarray]:
    """Return one array per row of ``array``, views into it.

    The rows of a 1-d array are 0-d arrays, as a single env returns 0-d observations;
    iterating over it would give NumPy scalars instead.
    """
    if array.ndim == 1:
        return [array[index, ...] for index in range(len(array))]
    return list(array)


def _references(arrays: list[np.ndarray], index: int) -> int:
    """Return the reference count of ``arrays[index]``, always taken the same way."""
    return sys.getrefcount(arrays[index])


class ObservationPool:
    """Hands out observation arrays (copies of rows, or to write into), reusing free ones.

    An array is free when only the pool still holds it.

    The pool keeps at most twice as many arrays as the largest batch it has served.
    """

    def __init__(self) -> None:
        self._arrays: list[np.ndarray] = []
        self._kind: tuple | None = None
        self._limit = 0
        # The count an array has when the pool's list holds the only reference to it.
        probe = [np.empty(0)]
        self._free_count = _references(probe, 0)

    def __len__(self) -> int:
        """Return how many arrays the pool holds (handed out or free)."""
        return len(self._arrays)

    def clear(self) -> None:
        """Let go of every array (an env's ``close()``: its batches' memory goes back)."""
        self._arrays, self._kind, self._limit = [], None, 0

    def copies(self, rows: np.ndarray) -> list[np.ndarray]:
        """Return one array per row of ``rows``, each owning its memory."""
        if not len(rows) or rows[0].nbytes < MIN_BYTES:
            return [row.copy() for row in rows_of(rows)]
        arrays = self.arrays(len(rows), rows.shape[1:], rows.dtype)
        for array, row in zip(arrays, rows, strict=True):
            np.copyto(array, row)
        return arrays

    def arrays(self, count: int, shape: tuple[int, ...], dtype: Any) -> list[np.ndarray]:
        """Return ``count`` arrays of ``shape`` and ``dtype`` to write into, owned by the caller.

        Arrays earlier calls handed out and nobody else holds now come first, then new ones.
        """
        kind = (tuple(shape), np.dtype(dtype))
        if kind != self._kind:
            self._arrays, self._kind = [], kind
        self._limit = max(self._limit, 2 * count)
        arrays = self._arrays
        free = (i for i in range(len(arrays)) if _references(arrays, i) == self._free_count)
        handed = []
        for _ in range(count):
            index = next(free, None)
            if index is None:
                array = np.empty(shape, dtype)
                if len(arrays) < self._limit:
                    arrays.append(array)
            else:
                array = arrays[index]
            handed.append(array)
        return handed
