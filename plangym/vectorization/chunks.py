"""How a batch is cut into contiguous chunks, one request each.

>>> plan_chunks(4096, 2, has_states=True)[:2]
[(0, 512), (512, 1024)]
>>> plan_chunks(5, 2, has_states=False)
[(0, 3), (3, 5)]
"""

from __future__ import annotations

# A batch with states is cut into up to this many chunks per worker, handed out as workers
# free up, so a worker slowed down (by the caller sharing its core, by a costly part of the
# batch) takes fewer of them. Chunks are not made smaller than MIN_CHUNK elements: each
# costs a round trip.
CHUNKS_PER_WORKER = 4
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
    """Bounds of the chunks a batch of ``n`` elements is cut into.

    Without states every worker gets exactly one chunk: it steps on from its own state.
    """
    if not has_states:
        return chunk_bounds(n, n_workers)
    pieces = min(n_workers * chunks_per_worker, max(n_workers, n // MIN_CHUNK))
    return chunk_bounds(n, pieces)
