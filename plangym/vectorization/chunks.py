"""How a batch is cut into contiguous chunks, one request each.

A batch with states is cut into chunks that shrink as the batch goes: each takes
``1 / (2 * n_workers)`` of the elements left, none is shorter than ``min_chunk`` elements
(a round trip each; the last may have half that), and every worker gets one. The first
chunks are long, so there are few round trips; the last are short and go to whichever
worker frees up first, so workers running at different speeds (one shares its core with
the caller) finish close together. On W1 (256 MsPacman states, 2 workers, chunks down to
1.5 ms of work) a batch ran at 0.91 of the raw limit this way and at 0.89-0.90 with four
equal chunks per worker (``benchmarks/parallel.py``, 2026-11-27).

>>> plan_chunks(256, 2, has_states=True, min_chunk=8)[:4]
[(0, 64), (64, 112), (112, 148), (148, 175)]
>>> plan_chunks(256, 2, has_states=True, min_chunk=8)[-3:]
[(232, 240), (240, 248), (248, 256)]
>>> plan_chunks(5, 2, has_states=False)
[(0, 3), (3, 5)]
>>> plan_chunks(4096, 2, has_states=True, chunks_per_worker=1)  # equal chunks (Ray)
[(0, 2048), (2048, 4096)]
"""

from __future__ import annotations

# Chunks are not cut shorter than this many elements while the cost of one is unknown.
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
    n: int,
    n_workers: int,
    has_states: bool,
    chunks_per_worker: int | None = None,
    min_chunk: int = MIN_CHUNK,
) -> list[tuple[int, int]]:
    """Bounds of the chunks a batch of ``n`` elements is cut into.

    Args:
        n: Elements in the batch.
        n_workers: Workers that share it.
        has_states: Whether the elements carry states. Without them every worker gets
            exactly one chunk: it steps on from its own state.
        chunks_per_worker: None: shrinking chunks (see the module docstring). A number:
            equal chunks, at most that many per worker and none under ``min_chunk``.
        min_chunk: The fewest elements a chunk is cut to (the last one may have half).
    """
    if not has_states:
        return chunk_bounds(n, n_workers)
    min_chunk = max(1, min_chunk)
    if chunks_per_worker is not None:
        return chunk_bounds(n, min(n_workers * chunks_per_worker, max(n_workers, n // min_chunk)))
    bounds: list[tuple[int, int]] = []
    share = -(-n // n_workers)  # every worker gets a chunk, however small the batch
    start = 0
    while start < n:
        left = n - start
        size = min(max(min_chunk, -(-left // (2 * n_workers))), share, left)
        if len(bounds) >= n_workers - 1 and 2 * (left - size) < min_chunk:
            size = left  # no sliver after this one
        bounds.append((start, start + size))
        start += size
    return bounds
