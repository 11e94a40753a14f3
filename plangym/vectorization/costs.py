"""Running cost estimates that decide where a batch is stepped fastest.

A round trip to the workers (about 70 us on a 2-core VM, plus packing) saves ``1 - 1/k``
of the env work: a few cheap transitions step faster in the caller, with the local env,
with the same results. Batches of at most :attr:`DispatchCosts.max_inline` elements are
judged by smoothed per-element and per-call costs; larger ones by what whole batches of
their size class (a power of two) measured each way (classic control's NumPy batches beat
a round trip, an emulator's do not). Work is counted in env steps (elements times the
batch's mean ``dt``), so a batch measured at one ``dt`` judges batches at another. Each
way is measured twice, the first being a warm-up (caches, Ray's object store: one cold
measurement once kept a RayEnv's batches in the caller, 16% slower); then the faster way is
taken and the other measured again every :attr:`~DispatchCosts.probe_every`-th batch
(:attr:`~DispatchCosts.probe_close`-th while within :attr:`~DispatchCosts.close_factor`),
so no estimate goes stale.

>>> costs = DispatchCosts(n_workers=2)
>>> costs.prefer_local(8)          # nothing measured yet: use the workers
False
>>> for wall_s in (20e-3, 400e-6):  # a cold warm-up, then 400 us
...     costs.record_remote(chunk_size=4, compute_s=60e-6, wall_s=wall_s)
>>> costs.prefer_local(8), costs.prefer_local(512)
(True, False)
>>> costs.prefer_local(8, dt=20)  # 20 times the work: sharing it out pays for the round trip
False
>>> for wall_s in (40e-3, 20e-3):  # 4096 states on the workers: a warm-up, then 20 ms
...     costs.record_remote(chunk_size=512, compute_s=1e-3, wall_s=wall_s, size=4096)
>>> costs.prefer_local(4096)  # measured on the workers only: now in the caller
True
>>> for wall_s in (9e-3, 5e-3):
...     costs.record_local(4096, wall_s=wall_s)
>>> costs.prefer_local(4096), costs.prefer_local(300)  # 4x faster here; 300: never measured
(True, False)
"""

from __future__ import annotations

import math
from typing import Any

from plangym.validation import describe


class DispatchCosts:
    """Smoothed per-element env cost and per-call round-trip overhead of the workers."""

    max_inline = 64
    probe_every = 256
    close_factor = 1.25  # two ways this close: a small difference is worth checking often
    probe_close = 16

    def __init__(
        self,
        n_workers: int,
        smoothing: float = 0.3,
        per_element: float | None = None,
        overhead: float | None = None,
    ):
        self.n_workers = n_workers
        self.smoothing = smoothing  # weight of a new measurement (0: keep the first values)
        self._local_runs = 0
        # Round trips measured; the first is a warm-up the second replaces (given estimates
        # count as measured). A cold first one (6-26 ms for CartPole, against 0.4 ms) once
        # kept small batches in the caller for hundreds of batches.
        self._remote_runs = 2 if overhead is not None else 0
        self.per_element = per_element  # seconds of env work per element and unit of dt
        self.overhead = overhead  # seconds a round trip adds to the work
        # Large batches: seconds per env step of whole batches, by (where, size class), and
        # how many batches each estimate has seen.
        self._large: dict[tuple[str, int], float] = {}
        self._large_samples: dict[tuple[str, int], int] = {}
        self._large_calls: dict[int, int] = {}

    @classmethod
    def checked(cls, costs: Any, n_workers: int) -> DispatchCosts:
        """Return ``costs``, or new estimates for ``n_workers`` if None (else a TypeError)."""
        if costs is None:
            return cls(n_workers)
        if not isinstance(costs, DispatchCosts):
            raise TypeError(
                f"dispatch_costs: expected None or a DispatchCosts, received {describe(costs)}"
            )
        return costs

    def _blend(self, old: float | None, new: float) -> float:
        return new if old is None else (1 - self.smoothing) * old + self.smoothing * new

    def record_remote(
        self, chunk_size: int, compute_s: float, wall_s: float, size: int = 0, dt: float = 1.0
    ) -> None:
        """Learn from a batch of ``size`` at mean ``dt`` on the workers (its largest chunk)."""
        self._remote_runs += 1
        warm = self._remote_runs > 2
        if chunk_size > 0:
            per_element = compute_s / (chunk_size * dt)
            self.per_element = self._blend(self.per_element, per_element) if warm else per_element
        overhead = max(wall_s - compute_s, 0.0)
        self.overhead = self._blend(self.overhead, overhead) if warm else overhead
        self._record_large("remote", size, wall_s / dt)

    def record_local(self, size: int, wall_s: float, dt: float = 1.0) -> None:
        """Learn from a batch of ``size`` (mean ``dt``) run in the calling process."""
        if 0 < size <= self.max_inline:
            self.per_element = self._blend(self.per_element, wall_s / (size * dt))
        self._record_large("local", size, wall_s / dt)

    def _record_large(self, where: str, size: int, step_wall_s: float) -> None:
        if size > self.max_inline:
            key = (where, size.bit_length())
            seen = self._large_samples[key] = self._large_samples.get(key, 0) + 1
            # The second batch of a size each way replaces its warm-up, not blended.
            old = self._large.get(key) if seen > 2 else None
            self._large[key] = self._blend(old, step_wall_s / size)

    def _prefer_local_large(self, size: int) -> bool:
        size_class = size.bit_length()
        calls = self._large_calls[size_class] = self._large_calls.get(size_class, 0) + 1
        samples = self._large_samples
        if samples.get(("remote", size_class), 0) < 2:
            return False  # measure this size on the workers, past its warm-up
        if samples.get(("local", size_class), 0) < 2:
            return True  # and in the caller
        local, remote = self._large[("local", size_class)], self._large[("remote", size_class)]
        faster_here = local < remote
        close = max(local, remote) < self.close_factor * min(local, remote)
        probe = calls % (self.probe_close if close else self.probe_every) == 0
        return not faster_here if probe else faster_here

    def prefer_local(self, size: int, dt: float = 1.0) -> bool:
        """Whether ``size`` elements at mean ``dt`` are expected to step faster here than there."""
        if self.per_element is None or self.overhead is None or self._remote_runs < 2:
            return False
        if size > self.max_inline:
            return self._prefer_local_large(size)
        self._local_runs += 1
        if self._local_runs % self.probe_every == 0:
            return False  # measure the workers again
        local = size * dt * self.per_element
        remote = self.overhead + math.ceil(size / self.n_workers) * dt * self.per_element
        return local < remote
