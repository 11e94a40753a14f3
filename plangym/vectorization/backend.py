"""What a kind of worker must offer the scheduler: a small protocol, one file per backend.

A backend owns ``n_workers`` workers (processes, Ray actors, ...). The scheduler
(:mod:`plangym.vectorization.scheduler`) decides what each worker runs and when; the
backend only moves one task's request to a worker and its result back:

* :meth:`Backend.prepare` and :meth:`Backend.encode` turn a checked batch into one request
  per chunk (where the inputs travel: pipes, shared memory, an object store);
* :meth:`Backend.submit` hands a request to a worker and returns a ticket;
* :meth:`Backend.wait` says which workers' oldest tickets can be read now;
* :meth:`Backend.result` reads one: the result, :data:`STALE` for a late answer to a
  request the scheduler gave up on, :class:`WorkerCrashedError` when the worker died, or
  the env's own error;
* :meth:`Backend.restart` replaces a worker; :meth:`Backend.close` stops them all.

A worker runs its tickets in the order they were submitted.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

# Returned by Backend.result for a late answer to a request that was given up on.
STALE = object()


@dataclass(frozen=True)
class BatchInputs:
    """A checked batch: one action, state (or none) and dt per element."""

    actions: Sequence
    states: list | None
    dts: list[int]
    want_state: bool

    def __len__(self) -> int:
        return len(self.dts)


@dataclass(frozen=True)
class CallRequest:
    """A request for one worker's env: ``name`` is a method, or an attribute to get/set."""

    kind: str  # "call", "getattr", "setattr", or "actor" (a method of a Ray actor itself)
    name: str
    args: tuple = ()
    kwargs: dict | None = None


@dataclass
class ChunkResult:
    """A chunk's result columns, and the seconds its worker spent computing them."""

    columns: list[list]
    compute_s: float | None = None


class Backend(ABC):
    """The workers of a vectorized env, as the scheduler uses them."""

    n_workers: int

    def prepare(self, inputs: BatchInputs, bounds: list[tuple[int, int]]) -> Any:
        """Get ready to encode the chunks ``bounds`` of ``inputs``; return a layout."""
        return None

    @abstractmethod
    def encode(self, inputs: BatchInputs, layout: Any, index: int, start: int, stop: int) -> Any:
        """Return the request of chunk ``index`` (elements ``start:stop``)."""

    @abstractmethod
    def submit(self, worker: int, request: Any) -> Any:
        """Send ``request`` to ``worker``; return its ticket (WorkerCrashedError if dead)."""

    @abstractmethod
    def wait(self, tickets: dict[int, Any], timeout: float | None) -> list[int]:
        """Workers whose ticket (the oldest they hold) can be read now; [] on timeout."""

    @abstractmethod
    def result(self, worker: int, ticket: Any, request: Any) -> Any:
        """Read the answer to ``ticket``: a value, :data:`STALE`, or raise.

        A chunk's answer is a :class:`ChunkResult` whose columns are those of
        ``step_batch`` (5, or 6 with states); a call's answer is its value.
        """

    @abstractmethod
    def restart(self, worker: int) -> None:
        """Replace ``worker`` by a fresh one (whatever it was doing)."""

    def abandon(self, workers: list[int]) -> None:
        """Forget the tickets of a batch given up on (Ctrl-C) that ``workers`` still run.

        By default they are restarted: a worker left running would write results where
        the next batch's go.
        """
        for worker in workers:
            self.restart(worker)

    @abstractmethod
    def close(self) -> None:
        """Stop every worker and release what they share."""
