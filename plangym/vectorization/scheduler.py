"""One scheduler for every backend: what each worker runs, when, and what a fault costs.

A batch is cut into contiguous chunks (:func:`plan_chunks`); the first ones are handed to
the workers as soon as they are encoded, and the rest to whichever worker frees up first.
A worker that dies is restarted and its tasks are re-run from the inputs they were given,
at most :data:`MAX_RERUNS` times each, so an input that kills every worker stepping it
fails the batch with :class:`WorkerCrashedError` instead of looping forever. An error
raised by an env is raised once every other task is back, so every worker is idle again.
A timeout or Ctrl-C gives the batch up and restarts the workers still on it; their late
answers are recognised and dropped. Results come back in input order.

The same machinery runs whole-env requests, one per worker (:meth:`Scheduler.broadcast`).

>>> plan_chunks(4096, 2, has_states=True)[:2]
[(0, 512), (512, 1024)]
>>> plan_chunks(5, 2, has_states=False)
[(0, 3), (3, 5)]
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from plangym.vectorization.backend import STALE, Backend, BatchInputs, ChunkResult
from plangym.vectorization.errors import WorkerCrashedError

# How many times one task is re-run after its worker died, within one batch.
MAX_RERUNS = 2
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


@dataclass
class Task:
    """One request for one worker: a chunk of a batch, or a whole-env call."""

    request: Any
    start: int = 0  # the elements of a chunk, for messages
    stop: int = 0
    label: str = ""  # what the task is, for messages about a call
    worker: int | None = None  # set when sent
    ticket: Any = None
    reruns: int = 0
    done: bool = False
    result: Any = None

    def describe(self) -> str:
        """Say what the task is, for error messages."""
        return self.label or f"elements {self.start}..{self.stop - 1}"


@dataclass
class Batch:
    """Tasks handed to the workers whose results have not all been collected yet."""

    tasks: list[Task]
    rerunnable: bool  # whether a task may run again from its inputs when its worker dies
    want_state: bool = False
    unsent: deque[Task] = field(default_factory=deque)
    errors: list[BaseException] = field(default_factory=list)

    def in_flight(self) -> list[Task]:
        """Tasks sent to a worker and not answered yet, in the order they were sent."""
        return [task for task in self.tasks if task.worker is not None and not task.done]

    def columns(self) -> tuple[list, ...]:
        """Return the chunks' result columns, joined in input order."""
        columns: list[list] = [[] for _ in range(6 if self.want_state else 5)]
        for task in self.tasks:
            for column, part in zip(columns, task.result.columns, strict=True):
                column.extend(part)
        return tuple(columns)

    def chunk_costs(self) -> list[tuple[int, float]]:
        """``(elements, compute seconds)`` of every chunk its worker timed."""
        return [
            (task.stop - task.start, task.result.compute_s)
            for task in self.tasks
            if isinstance(task.result, ChunkResult) and task.result.compute_s is not None
        ]


class Scheduler:
    """Runs batches and whole-env requests on the workers of a :class:`Backend`.

    Args:
        backend: The workers.
        chunks_per_worker: At most this many chunks per worker in a batch with states.
        queue_depth: How many chunks of a given size each worker is sent at once (default:
            one). A second one keeps a worker busy while the caller reads the results of
            its first, which pays off for short chunks.
    """

    def __init__(
        self,
        backend: Backend,
        chunks_per_worker: int = CHUNKS_PER_WORKER,
        queue_depth: Callable[[int], int] | None = None,
    ):
        self.backend = backend
        self.chunks_per_worker = chunks_per_worker
        self._queue_depth = queue_depth or (lambda chunk_size: 1)

    # Batches ----------------------------------------------------------------------------------
    def dispatch(self, inputs: BatchInputs) -> Batch:
        """Encode a checked batch and send every worker its first chunks."""
        backend, n_workers = self.backend, self.backend.n_workers
        has_states = inputs.states is not None
        bounds = plan_chunks(len(inputs), n_workers, has_states, self.chunks_per_worker)
        depth = self._queue_depth(bounds[0][1] - bounds[0][0]) if bounds else 1
        batch = Batch([], rerunnable=has_states, want_state=inputs.want_state)
        try:
            layout = backend.prepare(inputs, bounds)
            for index, (start, stop) in enumerate(bounds):
                request = backend.encode(inputs, layout, index, start, stop)
                task = Task(request, start, stop)
                batch.tasks.append(task)
                # The first chunks leave as soon as they are encoded: the workers start
                # while the caller encodes the next ones.
                if index < n_workers * depth:
                    self._submit(task, index % n_workers, batch)
                else:
                    batch.unsent.append(task)
        except BaseException:  # Ctrl-C halfway: nothing may keep running on its inputs
            self.abandon(batch)
            raise
        return batch

    def gather(self, batch: Batch, timeout: float | None = None) -> Batch:
        """Collect every task of ``batch``; raise the first error once all are back.

        On timeout the workers still busy are restarted and :class:`TimeoutError` raised.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        while in_flight := batch.in_flight():
            # A worker answers in the order it was sent its tasks: its next answer is for
            # the oldest one it holds.
            oldest: dict[int, Task] = {}
            for task in in_flight:
                oldest.setdefault(task.worker, task)
            remaining = None if deadline is None else max(deadline - time.monotonic(), 0.0)
            tickets = {worker: task.ticket for worker, task in oldest.items()}
            ready = self.backend.wait(tickets, remaining)
            if not ready:
                self._give_up(batch, timeout)
            # Each answer is decoded as it arrives, while the other workers still compute.
            for worker in ready:
                self._collect(oldest[worker], batch)
        if batch.errors:
            raise batch.errors[0]
        return batch

    def run(self, inputs: BatchInputs, timeout: float | None = None) -> Batch:
        """Dispatch and gather one batch; on Ctrl-C give it up and re-raise."""
        batch = self.dispatch(inputs)
        self.gather_or_abandon(batch, timeout)
        return batch

    def gather_or_abandon(self, batch: Batch, timeout: float | None = None) -> Batch:
        """:meth:`gather`, giving the batch up if Ctrl-C interrupts it."""
        try:
            return self.gather(batch, timeout)
        except KeyboardInterrupt:
            self.abandon(batch)
            raise

    def abandon(self, batch: Batch) -> None:
        """Give ``batch`` up: its unsent tasks are dropped, its busy workers released."""
        busy = sorted({task.worker for task in batch.in_flight()})
        batch.unsent.clear()
        for task in batch.tasks:
            task.done = True
        self.backend.abandon(busy)

    # Whole-env requests -----------------------------------------------------------------------
    def broadcast(
        self, requests: dict[int, Any], label: str, rerunnable: bool = False
    ) -> list[Any]:
        """Send ``requests[worker]`` to each worker named; return their results in order.

        ``rerunnable`` requests (setting a state) run again on a worker that replaced a
        dead one; the others raise :class:`WorkerCrashedError`.
        """
        batch = Batch([], rerunnable=rerunnable)
        try:
            for worker, request in requests.items():
                task = Task(request, label=f"its {label} request")
                batch.tasks.append(task)
                self._submit(task, worker, batch)
        except BaseException:
            self.abandon(batch)
            raise
        self.gather_or_abandon(batch)
        return [task.result for task in batch.tasks]

    def broadcast_all(self, request: Any, label: str, rerunnable: bool = False) -> list[Any]:
        """:meth:`broadcast` the same ``request`` to every worker."""
        return self.broadcast(
            dict.fromkeys(range(self.backend.n_workers), request), label, rerunnable
        )

    # Internals --------------------------------------------------------------------------------
    def _submit(self, task: Task, worker: int, batch: Batch) -> None:
        task.worker = worker
        try:
            task.ticket = self.backend.submit(worker, task.request)
        except WorkerCrashedError as crash:  # found dead on sending
            self._recover(task, batch, crash)

    def _collect(self, task: Task, batch: Batch) -> None:
        try:
            result = self.backend.result(task.worker, task.ticket, task.request)
        except WorkerCrashedError as crash:
            self._recover(task, batch, crash)
            return
        except Exception as error:  # the env's error: raised once the others are back
            task.done = True
            batch.errors.append(error)
            return
        if result is STALE:
            return
        task.done, task.result = True, result
        if batch.unsent and not batch.errors:
            self._submit(batch.unsent.popleft(), task.worker, batch)

    def _recover(self, task: Task, batch: Batch, crash: WorkerCrashedError) -> None:
        """Restart ``task``'s dead worker and re-run what it held, within the cap."""
        worker = task.worker
        # Every task queued at the dead worker was lost with it, not only this one.
        lost = [queued for queued in batch.in_flight() if queued.worker == worker]
        self.backend.restart(worker)
        task.reruns += 1
        if not batch.rerunnable or task.reruns > MAX_RERUNS:
            for queued in lost:
                queued.done = True
            batch.errors.append(self._crash_error(task, batch, crash))
            return
        for queued in lost:
            self._submit(queued, worker, batch)

    @staticmethod
    def _crash_error(task: Task, batch: Batch, crash: WorkerCrashedError) -> WorkerCrashedError:
        if not batch.rerunnable:
            consequence = f"{task.describe()} could not be re-run (no states to re-run from)"
        else:
            consequence = (
                f"{task.describe()} killed the worker on each of {MAX_RERUNS + 1} runs "
                f"(re-run {MAX_RERUNS} times), so the batch was given up"
            )
        error = WorkerCrashedError(f"{crash}; {consequence}")
        error.__cause__ = crash
        return error

    def _give_up(self, batch: Batch, timeout: float | None) -> None:
        busy = sorted({task.worker for task in batch.in_flight()})
        for worker in busy:
            self.backend.restart(worker)
        batch.unsent.clear()
        for task in batch.tasks:
            task.done = True
        raise TimeoutError(
            f"timeout: step_batch took longer than {timeout} s; workers {busy} were "
            "replaced and the batch abandoned"
        )
