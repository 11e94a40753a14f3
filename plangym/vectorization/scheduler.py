"""The one gather / recover / timeout loop, for every backend and both faces.

A call is a :class:`~plangym.vectorization.calls.Batch` of tasks, one request each: the
chunks of a ``step_batch`` (:meth:`Scheduler.dispatch`), or one per worker named
(:meth:`Scheduler.send`); its :class:`~plangym.vectorization.calls.OnCrash` says what a
dead worker means. An env's error is raised once every other task is back (every worker
idle again). A timeout or Ctrl-C gives the call up and replaces the workers still on it.
Results come back in input order.
"""
# Batch, OnCrash and Task (plangym.vectorization.calls) are imported from here too.

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from plangym.core.obs_pool import ObservationPool, rows_of
from plangym.vectorization.backend import STALE, Backend, BatchInputs, ChunkResult
from plangym.vectorization.calls import UNSENT, Batch, OnCrash, Task
from plangym.vectorization.chunks import CHUNKS_PER_WORKER, plan_chunks
from plangym.vectorization.errors import (
    CLOSED_WHILE_WAITING,
    CallTimeoutError,
    ClosedEnvironmentError,
    WorkerCrashedError,
    add_note,
    held_back,
)
from plangym.vectorization.messages import SetAttr
from plangym.vectorization.replacement import Replacements
from plangym.vectorization.shared_memory import interrupts_deferred

MAX_RERUNS = 2  # how many times one task is re-run after its worker died, within one call


class Scheduler:
    """Runs calls on the workers of a :class:`Backend`.

    Args:
        backend: The workers.
        chunks_per_worker: At most this many chunks per worker in a batch with states.
        queue_depth: How many chunks of a given size each worker is sent at once (default:
            one); a second keeps a worker busy while the caller reads its first.
        unit: What a worker is called in messages ("worker", "sub-env").
        recovery: Builds the request a replaced worker runs first (see
            :mod:`plangym.vectorization.replacement`); its answer is the result of a task
            lost under ``OnCrash.REPORT``.
        crash_error: The class of the error a lost task raises.
    """

    def __init__(
        self,
        backend: Backend,
        chunks_per_worker: int = CHUNKS_PER_WORKER,
        queue_depth: Callable[[int], int] | None = None,
        unit: str = "worker",
        recovery: Callable[[str], Any] | None = None,
        crash_error: type[WorkerCrashedError] = WorkerCrashedError,
    ):
        self.backend = backend
        self.obs_pool = ObservationPool()  # the arrays batches' observations are copied into
        self.chunks_per_worker = chunks_per_worker
        self._queue_depth = queue_depth
        self.unit, self.crash_error = unit, crash_error
        self.replacements = Replacements(backend, recovery)

    def close(self, terminate: bool = False) -> None:
        """Stop the backend's workers and let go of the observation arrays kept for reuse."""
        self.backend.close(terminate=terminate)
        self.obs_pool.clear()

    def close_after(self, batch: Batch | None, timeout: float | None, terminate: bool) -> None:
        """Collect ``batch``, a call left pending, within ``timeout``; then :meth:`close`.

        No worker is replaced from here: a fault or a timeout while collecting stops them
        all, at once, as does a Ctrl-C (which goes on).
        """
        self.backend.closing = True
        try:
            if batch is not None and not terminate:
                self.gather(batch, timeout, raise_errors=False)
        except Exception:
            terminate = True
        except BaseException:
            terminate = True
            raise
        finally:
            self.close(terminate=terminate)

    # Sending ------------------------------------------------------------------------------
    def dispatch(self, inputs: BatchInputs) -> Batch:
        """Encode a checked batch and send every worker its first chunks."""
        backend, n_workers = self.backend, self.backend.n_workers
        has_states = inputs.states is not None
        bounds = plan_chunks(len(inputs), n_workers, has_states, self.chunks_per_worker)
        queue_depth = self._queue_depth  # None: one chunk per worker at a time
        depth = queue_depth(bounds[0][1] - bounds[0][0]) if queue_depth and bounds else 1
        on_crash = OnCrash.RERUN if has_states else OnCrash.RAISE
        batch = Batch(
            [], "step_batch", on_crash, inputs.want_state, copy_observs=inputs.copy_observs
        )
        try:
            layout = backend.prepare(inputs, bounds)
            for index, (start, stop) in enumerate(bounds):
                task = Task(backend.encode(inputs, layout, index, start, stop), start, stop)
                batch.tasks.append(task)
                # Sent as soon as encoded: the workers start while the next ones are.
                if index < n_workers * depth:
                    self._submit(task, index % n_workers, batch)
                else:
                    batch.unsent.append(task)
        except BaseException:  # Ctrl-C halfway: nothing may keep running on its inputs
            self.abandon(batch)
            raise
        return batch

    def send(
        self, requests: dict[int, Any], label: str, on_crash: OnCrash, limit: int | None = None
    ) -> Batch:
        """Send ``requests[worker]`` to each worker named; collect with :meth:`gather`.

        With a ``limit``, at most that many run at once, the rest as earlier ones end.
        """
        # All built before the first is sent: a woken worker competes for the caller's core.
        tasks = [Task(request, home=worker) for worker, request in requests.items()]
        batch = Batch(tasks, label, on_crash, in_order=True)
        batch.unsent.extend(tasks[limit:] if limit is not None else ())
        try:
            for task in tasks[:limit]:  # each one that cannot be sent sends the next queued
                self._submit(task, task.home, batch)
        except BaseException:
            self.abandon(batch)
            raise
        return batch

    # Gathering ----------------------------------------------------------------------------
    def gather(self, batch: Batch, timeout: float | None = None, raise_errors: bool = True):
        """Collect every task of ``batch``; then raise the first error (see :meth:`raise_first`).

        On timeout the busy workers are replaced and :class:`CallTimeoutError` raised; on
        any other exception (Ctrl-C) they are given up (:meth:`abandon`) and it goes on.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            if deadline is None and batch.in_order:
                # A read returns on the answer or on the worker's death.
                for task in batch.tasks:
                    while task.worker != UNSENT and not task.done:
                        self._collect(task, batch)
                in_flight = []
            else:
                in_flight = batch.in_flight()
            while in_flight:
                # A worker answers in order: its next answer is for its oldest task.
                oldest: dict[int, Task] = {}
                for task in in_flight:
                    oldest.setdefault(task.worker, task)
                remaining = None if deadline is None else max(deadline - time.monotonic(), 0)
                tickets = {worker: task.ticket for worker, task in oldest.items()}
                ready = self.backend.wait(tickets, remaining)
                if not ready:
                    self._time_out(batch, timeout)
                # Each answer is decoded as it arrives, while the other workers compute.
                for worker in ready:
                    self._collect(oldest[worker], batch)
                in_flight = batch.in_flight()
        except CallTimeoutError:  # the busy workers were replaced already
            raise
        except BaseException:  # Ctrl-C, or anything unforeseen: no worker stays on the call
            self.abandon(batch)
            raise
        if raise_errors:
            self.raise_first(batch)
        return batch

    def raise_first(self, batch: Batch) -> None:
        """Raise the first task's error, noting which worker raised it and who else did."""
        failed = batch.errors()
        if not failed:
            return
        first, error = failed[0], failed[0].error
        assert error is not None  # errors() lists the tasks that have one
        where = first.describe(self.unit)
        others = sorted({task.worker for task in failed[1:]})
        if first.ticket is None:
            note = f"{batch.label} could not be sent to {where}, so it did not run there"
        else:
            note = f"raised by {where} during {batch.label}"
        if others:
            note += f" ({self.unit}s {others} raised too)"
        add_note(error, note + "; the env is still usable")
        raise error

    def run(self, inputs: BatchInputs, timeout: float | None = None) -> Batch:
        """Dispatch and gather one batch."""
        return self.gather(self.dispatch(inputs), timeout)

    def broadcast(
        self, requests: dict[int, Any], label: str, on_crash: OnCrash = OnCrash.RAISE
    ) -> list[Any]:
        """Run ``requests[worker]`` on each worker named; return the results in order."""
        batch = self.gather(self.send(requests, label, on_crash))
        return [task.result for task in batch.tasks]

    def set_attributes(
        self, requests: dict[int, SetAttr], label: str, limit: int | None = None
    ) -> Batch:
        """Set attributes on the workers; the errors are left for the caller to raise.

        A worker that dies meanwhile is replaced and set again. Each value a worker took is
        set again on any worker that replaces it later, even if another worker refused its
        own value.
        """
        batch = self.gather(self.send(requests, label, OnCrash.RERUN, limit), None, False)
        taken = {t.home: t.request for t in batch.tasks if t.done and t.error is None}
        self.replacements.remember_attributes(taken)
        return batch

    def broadcast_all(self, request: Any, label: str, on_crash: OnCrash = OnCrash.RAISE):
        """:meth:`broadcast` the same ``request`` to every worker."""
        return self.broadcast(
            dict.fromkeys(range(self.backend.n_workers), request), label, on_crash
        )

    # Giving up ----------------------------------------------------------------------------
    def abandon(self, batch: Batch) -> None:
        """Give ``batch`` up (Ctrl-C): unsent tasks dropped, busy workers released."""
        busy = self._drop(batch)
        if self.backend.closing:
            return
        # A second Ctrl-C must not leave a worker whose late answer the next call reads.
        with interrupts_deferred():
            self.replacements.replace_busy(busy)

    def _time_out(self, batch: Batch, timeout: float | None) -> None:
        busy = self._drop(batch)
        if self.backend.closing:
            raise ClosedEnvironmentError(CLOSED_WHILE_WAITING)
        message = (
            f"timeout: {batch.label}_wait took longer than {timeout} s; {self.unit}s {busy} "
            "were replaced and the call abandoned"
        )
        try:
            self.replacements.replace_busy(busy)  # Ctrl-C can stop a replacement that hangs
        except Exception as error:
            raise CallTimeoutError(f"{message}; a replacement failed: {error}") from error
        raise CallTimeoutError(message)

    def _drop(self, batch: Batch) -> list[int]:
        busy = sorted({task.worker for task in batch.in_flight()})
        batch.unsent.clear()
        for task in batch.tasks:
            task.done = True
        batch.abandoned = busy
        return busy

    # Internals ----------------------------------------------------------------------------
    def _submit(self, task: Task, worker: int, batch: Batch) -> bool:
        """Send ``task`` to ``worker``; False when it was found dead (and recovered)."""
        task.worker = worker
        try:
            task.ticket = self.backend.submit(worker, task.request)
        except WorkerCrashedError as crash:  # found dead on sending
            self._recover(task, batch, crash)
            return False
        except Exception as error:  # not encoded (say, an argument that cannot be pickled)
            # Nothing was sent (no ticket): the worker is idle and keeps its env.
            task.done, task.error = True, error
            self._send_next(batch, worker)
        return True

    def _collect(self, task: Task, batch: Batch) -> None:
        try:
            result = self.backend.result(task.worker, task.ticket, task.request)
        except WorkerCrashedError as crash:
            self._recover(task, batch, crash)
            return
        except BaseException as error:  # the env's error: raised once the others are back
            if not held_back(error):  # this process's own Ctrl-C
                raise
            task.done, task.error = True, error
            self._send_next(batch, task.worker)
            return
        if result is STALE:
            return
        if isinstance(result, ChunkResult) and result.shared_observs:
            self._hand_out_observs(result, batch)
        task.done, task.result = True, result
        self._send_next(batch, task.worker)

    def _hand_out_observs(self, result: ChunkResult, batch: Batch) -> None:
        """Turn a chunk's rows of a shared buffer into its observations, one per element.

        Copies (recycled by :attr:`obs_pool`) made while the workers compute the other
        chunks, or views valid until the next batch if the batch asked for no copies.
        """
        column = 1 if batch.want_state else 0
        rows = result.columns[column]
        result.columns[column] = self.obs_pool.copies(rows) if batch.copy_observs else rows_of(rows)

    def _send_next(self, batch: Batch, free_worker: int) -> None:
        """Send the next unsent task: to its own worker, or a chunk to ``free_worker``."""
        if not batch.unsent:
            return
        if batch.unsent[0].home != UNSENT:  # a worker's own request: it must run anyway
            queued = batch.unsent.popleft()
            self._submit(queued, queued.home, batch)
        elif not batch.errors():
            self._submit(batch.unsent.popleft(), free_worker, batch)

    def _recover(self, task: Task, batch: Batch, crash: WorkerCrashedError) -> None:
        """Replace ``task``'s dead worker and do what the call's policy says."""
        worker = task.worker
        # Every task queued at the dead worker was lost with it, not only this one.
        lost = [queued for queued in batch.in_flight() if queued.worker == worker]
        try:
            answer = self.replacements.replace(worker, batch.label)
        except ClosedEnvironmentError:  # close() in another thread: the whole call ends
            raise
        except BaseException as error:  # the rebuilt env failed too: report it, go on
            if not held_back(error):  # this process's own Ctrl-C
                raise
            add_note(error, f"while replacing {self.unit} {worker}, which died ({crash})")
            for queued in lost:
                queued.done, queued.error = True, error
            return
        task.reruns += 1
        if batch.on_crash is OnCrash.RERUN and task.reruns <= MAX_RERUNS:
            for queued in lost:
                # Found dead again: that recovery re-sent (or gave up) every lost task.
                if not self._submit(queued, worker, batch):
                    return
            return
        for queued in lost:
            queued.done = True
        if batch.on_crash is OnCrash.REPORT:
            task.result, task.restarted = answer, True
        else:
            task.error = task.lost(self.crash_error, self.unit, batch, crash, MAX_RERUNS)
        self._send_next(batch, worker)
