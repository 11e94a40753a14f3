"""Observation arrays for the caller, recycled once nobody references them any more.

A ``ParallelEnv`` copies every observation out of shared memory into an array of its own,
as a single env returns them, so that keeping one observation does not keep a batch alive.
A fresh 100 KB Atari screen costs page faults on top of the copy; copying into an array
that an earlier batch handed out and the user has since dropped costs the copy alone
(about half the time for a batch of 256 screens here). An array is reused only when the
pool holds the last reference to it, so what a user keeps is never overwritten.

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

import numpy as np

# Smaller observations come from NumPy's allocator cheaply: copy them plainly.
MIN_BYTES = 4096


def _references(arrays: list[np.ndarray], index: int) -> int:
    """Return the reference count of ``arrays[index]``, always taken the same way."""
    return sys.getrefcount(arrays[index])


class ObservationPool:
    """Hands out copies of observation rows, reusing arrays that only the pool still holds.

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

    def copies(self, rows: np.ndarray) -> list[np.ndarray]:
        """Return one array per row of ``rows``, each owning its memory."""
        if not len(rows) or rows[0].nbytes < MIN_BYTES:
            return [row.copy() for row in rows]
        kind = (rows.shape[1:], rows.dtype)
        if kind != self._kind:
            self._arrays, self._kind = [], kind
        self._limit = max(self._limit, 2 * len(rows))
        arrays = self._arrays
        free = (i for i in range(len(arrays)) if _references(arrays, i) == self._free_count)
        copies = []
        for row in rows:
            index = next(free, None)
            if index is None:
                array = row.copy()
                if len(arrays) < self._limit:
                    arrays.append(array)
            else:
                array = arrays[index]
                np.copyto(array, row)
            copies.append(array)
        return copies
