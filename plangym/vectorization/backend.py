"""What a kind of worker must offer the scheduler: the :class:`Backend` protocol.

The scheduler decides what each worker runs and when; a backend only moves a request
(:mod:`plangym.vectorization.messages`) to a worker and its answer back, in order.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from plangym.vectorization.messages import StepChunk
from plangym.vectorization.packing import pack_actions, pack_states, unpack_columns

# Returned by Backend.result for a late answer to a request that was given up on.
STALE = object()


@dataclass(frozen=True)
class BatchInputs:
    """A checked batch: one action, state (or none) and dt per element.

    ``copy_observs=False``: observations may be views valid until the next batch.
    """

    actions: Sequence | np.ndarray
    states: list | np.ndarray | None
    dts: list[int]
    want_state: bool
    copy_observs: bool = True

    def __len__(self) -> int:
        return len(self.dts)


@dataclass
class ChunkResult:
    """A chunk's result columns, and the seconds its worker spent computing them.

    ``shared_observs``: the observations are rows of a shared buffer the next batch
    overwrites (the scheduler copies them unless the batch says not to).
    """

    columns: list
    compute_s: float | None = None
    shared_observs: bool = False


def packed_chunk(inputs: BatchInputs, start: int, stop: int) -> StepChunk:
    """Chunk ``start:stop`` of ``inputs``, its states packed as one blob (no shared memory)."""
    states = None if inputs.states is None else pack_states(inputs.states[start:stop])
    actions = pack_actions(inputs.actions[start:stop])
    return StepChunk(actions, states, inputs.dts[start:stop], inputs.want_state)


def packed_result(answer: Any, request: Any) -> Any:
    """Return ``answer`` to ``request``; a chunk's (a ``PackedChunkReply``) as a ChunkResult."""
    if type(request) is not StepChunk:
        return answer
    columns = unpack_columns(answer.columns)
    return ChunkResult(columns if request.want_state else columns[1:], answer.compute_s)


class Backend(ABC):
    """The workers of a vectorized env, as the scheduler uses them."""

    # close() has begun (maybe in another thread): a waiting call ends, replacing none.
    closing = False

    if TYPE_CHECKING:  # read only: an attribute of some backends, a property of others

        @property
        def n_workers(self) -> int:
            """Number of workers."""
            ...

    def prepare(self, inputs: BatchInputs, bounds: list[tuple[int, int]]) -> Any:
        """Get ready to encode the chunks ``bounds`` of ``inputs``; return a layout."""
        return None

    def encode(self, inputs: BatchInputs, layout: Any, index: int, start: int, stop: int) -> Any:
        """Return the request of chunk ``index`` (elements ``start:stop``)."""
        return packed_chunk(inputs, start, stop)

    def stage_actions(self, actions: np.ndarray) -> bool:
        """Put a vector step's actions where every worker reads them; False if unsupported.

        When it returns True, each worker is sent ``Step()`` (its action in the buffer)
        instead of ``Step(action)``.
        """
        return False

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
        ``step_batch`` (5, or 6 with states); any other request's answer is its payload.
        """

    @abstractmethod
    def restart(self, worker: int) -> None:
        """Replace ``worker`` by a fresh one (whatever it was doing)."""

    def abandon(self, workers: list[int]) -> None:
        """Forget the tickets of a call given up on (Ctrl-C) that ``workers`` still run.

        By default they are restarted: a worker left running would write the next call's.
        """
        for worker in workers:
            self.restart(worker)

    @property
    def worker_pids(self) -> tuple[int | None, ...]:
        """Process id of each worker (None where it is not known)."""
        return (None,) * self.n_workers

    def interrupt(self) -> None:
        """Make a call that waits in another thread end (close() is coming), freeing nothing."""
        self.closing = True

    @abstractmethod
    def close(self, terminate: bool = False) -> None:
        """Stop every worker (at once if ``terminate``) and release what they share."""
