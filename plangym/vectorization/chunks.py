"""How a batch is cut into contiguous chunks, one request each.

By default each worker gets one equal chunk: more chunks let a slowed worker take fewer,
but each costs a round trip (``benchmarks/parallel.py``'s W1: one per worker ran at 0.91
of the raw limit, four at 0.89; in batches of 32, 0.85 against 0.79).

>>> plan_chunks(4096, 2, has_states=True)
[(0, 2048), (2048, 4096)]
>>> plan_chunks(4096, 2, has_states=True, chunks_per_worker=4)[:2]
[(0, 512), (512, 1024)]
>>> plan_chunks(5, 2, has_states=False)
[(0, 3), (3, 5)]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

CHUNKS_PER_WORKER = 1
# With more chunks per worker, none is made smaller than this many elements.
MIN_CHUNK = 64


def chunk_bounds(n: int, n_chunks: int) -> list[tuple[int, int]]:
    """Split ``range(n)`` into at most ``n_chunks`` contiguous ranges differing by <= 1."""
    n_chunks = max(1, min(n_chunks, n))
    size, extra = divmod(n, n_chunks)
    bounds, start = [], 0
    for i in range(n_chunks):
        stop = start + size + (1 if i < extra else 0)
        bounds.append((start, stop))
        start = stop
    return bounds if n else []


def plan_chunks(
    n: int, n_workers: int, has_states: bool, chunks_per_worker: int = CHUNKS_PER_WORKER
) -> list[tuple[int, int]]:
    """Bounds of a batch's chunks (without states, one per worker: each goes on from its own)."""
    if not has_states:
        return chunk_bounds(n, n_workers)
    pieces = min(n_workers * chunks_per_worker, max(n_workers, n // MIN_CHUNK))
    return chunk_bounds(n, pieces)


def split_similar_chunks(vector: Sequence, n_chunks: int) -> list:
    """Split ``vector`` as plangym 0.1 did: chunks of ``ceil(len / n_chunks)``, the last shorter.

    >>> split_similar_chunks(list(range(7)), n_chunks=3)
    [[0, 1, 2], [3, 4, 5], [6]]
    """
    size = max(1, -(-len(vector) // n_chunks))
    return [vector[start : start + size] for start in range(0, len(vector), size)]


def batch_step_data(actions: Sequence, states: Any, dt: Any, batch_size: int) -> tuple:
    """Split a batch as plangym 0.1 did: ``(states_chunks, actions_chunks, dt_chunks)``.

    >>> batch_step_data([0, 1, 1], None, 2, batch_size=2)
    ([[None, None], [None]], [[0, 1], [1]], [[2, 2], [2]])
    """
    states = [None] * len(actions) if states is None or states[0] is None else states
    dts = list(dt) if isinstance(dt, Sequence | np.ndarray) else [dt] * len(actions)
    return tuple(split_similar_chunks(data, batch_size) for data in (states, actions, dts))
