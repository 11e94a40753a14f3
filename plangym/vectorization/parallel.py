"""Step batches on worker processes: ``ParallelEnv`` -> ``BatchEnv`` -> ``ExternalProcess``.

>>> import plangym
>>> env = plangym.make("CartPole-v1", n_workers=2)
>>> state, obs, info = env.reset()
>>> states, observs, rewards, terminals, truncateds, infos = env.step_batch(
...     actions=[0, 1, 0], states=[state] * 3)
>>> single = env.plan_env.step_batch([0, 1, 0], states=[state] * 3)
>>> all(bool(a == b) for a, b in zip(states, single[0]))
True
>>> env.step_batch_async([1, 1], states=[state, state])
>>> len(env.step_batch_wait(timeout=30)[0])
2
>>> env.close()
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import pickle
import time
import weakref
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from multiprocessing import resource_tracker
from multiprocessing.connection import wait
from typing import Any

import cloudpickle
import numpy as np

from plangym.core import PlanEnv
from plangym.validation import (
    check_batch_action_values,
    check_batch_actions,
    check_batch_dt,
    check_batch_states,
)
from plangym.vectorization.costs import DispatchCosts
from plangym.vectorization.env import VectorizedEnv, chunk_bounds
from plangym.vectorization.errors import (
    WorkerCrashedError,
    with_remote_traceback,
)
from plangym.vectorization.obs_pool import ObservationPool
from plangym.vectorization.shared_states import (
    aligned,
    state_layout,
    states_nbytes,
    write_states,
)
from plangym.vectorization.transport import (
    DtypeChannel,
    SharedOutputs,
    interrupts_deferred,
    pack_actions,
    pack_states,
    read_outputs,
)
from plangym.vectorization.worker import READY_ID, dumps, run_worker

CLOSE_TIMEOUT_S = 5.0


class ExternalProcess:
    """One worker process owning one env built from a (cloud)pickled constructor.

    Requests return :class:`Promise` objects; calling a promise blocks for the result and
    re-raises an error from the worker with its original type and traceback.

    Args:
        constructor: A callable that builds the env (it is cloudpickled, so lambdas and
            classes defined in a notebook work).
        index: Position of the worker in its batch, used in messages.
        context: A multiprocessing context (fork, spawn or forkserver).
    """

    def __init__(
        self,
        constructor: Callable[[], PlanEnv],
        index: int = 0,
        context: mp.context.BaseContext | None = None,
        wait_ready: bool = True,
    ):
        self.index = index
        self._factory_blob = cloudpickle.dumps(constructor)
        self._context = context or mp.get_context()
        self._next_id = READY_ID + 1
        self._spaces: dict[str, Any] = {}  # the env's spaces, once asked for
        self._conn = None
        self._process = None
        self.start()
        if wait_ready:
            self.wait_ready()

    def __repr__(self) -> str:
        return f"ExternalProcess(index={self.index}, pid={self.pid}, alive={self.is_alive})"

    # Life cycle -----------------------------------------------------------------------------
    def start(self) -> None:
        """Start the process; :meth:`wait_ready` waits until its env is built."""
        parent_conn, child_conn = self._context.Pipe()
        process = self._context.Process(
            target=run_worker,
            args=(child_conn, self._factory_blob, os.getpid()),
            name=f"plangym-worker-{self.index}",
            daemon=True,
        )
        process.start()
        child_conn.close()
        self._conn, self._process = parent_conn, process
        # A new process knows no dtype and no shared buffers yet.
        self._states_out, self._states_in = DtypeChannel(), DtypeChannel()
        self._sent_specs: dict | None = None

    def wait_ready(self) -> None:
        """Block until the env is built in the worker; raise its error if building failed."""
        self.receive(READY_ID)

    def restart(self) -> None:
        """Kill the process (whatever it is doing) and start a fresh one.

        Ctrl-C waits until the new process runs: halfway, this worker would have no process
        and no pipe (a spawned one would also print the interrupted start). It does not wait
        for the env to be built: the ready message is then dropped like any stale reply.

        The new process maps the shared buffers the old one had at once (an "attach"
        request, not answered): should the caller die before its next batch, the workers
        still know which buffers to remove (see :func:`worker.exit_when_orphaned`).
        """
        specs = self._sent_specs
        with interrupts_deferred():
            self.terminate()
            self.start()
        self.wait_ready()
        if specs is not None:
            with contextlib.suppress(WorkerCrashedError):  # the next request finds out
                self.send("attach", specs)
                self._sent_specs = specs

    def terminate(self) -> None:
        """Kill the process at once and release its pipe."""
        with interrupts_deferred():  # all of it, or a closed process object stays behind
            if self._process is not None and self._process.is_alive():
                self._process.kill()
            if self._process is not None:
                self._process.join(CLOSE_TIMEOUT_S)
                self._process.close()
            if self._conn is not None:
                self._conn.close()
            self._process, self._conn = None, None

    def request_close(self) -> None:
        """Ask the worker to close its env and exit (without waiting)."""
        if self._process is not None:
            with contextlib.suppress(WorkerCrashedError):
                self.send("close")

    def close(self) -> None:
        """Ask the worker to close its env and exit; kill it if it does not in time."""
        self.request_close()
        self.finish_close()

    def finish_close(self) -> None:
        """Wait for a worker asked to close (see :meth:`request_close`), then reap it."""
        if self._process is not None and self._process.is_alive():
            self._process.join(CLOSE_TIMEOUT_S)
        self.terminate()

    @property
    def pid(self) -> int | None:
        """Process id of the worker."""
        return None if self._process is None else self._process.pid

    @property
    def is_alive(self) -> bool:
        """Whether the worker process runs."""
        return self._process is not None and self._process.is_alive()

    @property
    def connection(self):
        """The caller's end of the pipe to the worker."""
        return self._conn

    @property
    def sentinel(self) -> int:
        """A handle that becomes ready when the process ends."""
        return self._process.sentinel

    # Requests -------------------------------------------------------------------------------
    def send(self, kind: str, *arguments: Any) -> int:
        """Send a request; return its id."""
        request_id = self._next_id
        self._next_id += 1
        try:
            self._conn.send_bytes(dumps((kind, request_id, *arguments)))
        except (OSError, ValueError) as error:
            raise self.crashed() from error
        return request_id

    def receive(self, request_id: int, timeout: float | None = None) -> Any:
        """Wait for the reply to ``request_id`` (older replies are discarded) and return it.

        Raises the worker's error, :class:`WorkerCrashedError` if the process died, or
        :class:`TimeoutError`.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if not self.poll(deadline):
                raise TimeoutError(f"worker {self.index}: no reply within {timeout} s")
            reply = self.read_reply()
            if reply[0] == request_id:
                return unwrap_reply(reply)

    def poll(self, deadline: float | None) -> bool:
        """Whether a reply (or the worker's death) can be read before ``deadline``."""
        if deadline is None:
            return True  # a blocking read returns on a reply, or on EOF when the worker dies
        return self._conn.poll(max(deadline - time.monotonic(), 0.0))

    def read_reply(self) -> tuple:
        """Read one reply from the pipe (the caller knows one is there, or the worker died)."""
        try:
            return pickle.loads(self._conn.recv_bytes())
        except (EOFError, OSError) as error:
            raise self.crashed() from error

    def crashed(self) -> WorkerCrashedError:
        """Return the error that describes this worker's death."""
        code = None
        if self._process is not None:
            self._process.join(0.1)
            code = self._process.exitcode
        return WorkerCrashedError(f"worker {self.index} (pid {self.pid}) died, exit code {code}")

    def send_step_batch(
        self,
        actions: Sequence,
        packed_states: tuple | None,
        dts: list[int],
        return_state: bool,
        offset: int,
        states_region: tuple[int, int],
        specs: dict,
    ) -> int:
        """Send a chunk of ``step_batch``.

        Observations, rewards and flags go to the shared buffers at row ``offset``; new
        states go to the ``(start, capacity)`` bytes of the shared state arena.
        """
        new_specs = None if specs == self._sent_specs else specs
        request_id = self.send(
            "step_batch",
            pack_actions(actions),
            self._states_out.encode_states(packed_states),
            dts,
            return_state,
            offset,
            states_region,
            new_specs,
        )
        self._sent_specs = specs
        return request_id

    def decode_step_reply(self, payload: tuple) -> tuple:
        """Return ``(packed_states, infos, fallback, times)`` with the states' dtype restored."""
        packed_states, infos, fallback, times = payload
        return self._states_in.decode_states(packed_states), infos, fallback, times

    def call(self, name: str, *args: Any, **kwargs: Any) -> Promise:
        """Call ``env.name(*args, **kwargs)`` in the worker; return a promise of the result."""
        return Promise(self, self.send("call", name, args, kwargs))

    def get_attr(self, name: str) -> Promise:
        """Promise of the worker env's attribute ``name``."""
        return Promise(self, self.send("getattr", name))

    def set_attr(self, name: str, value: Any) -> Promise:
        """Set the worker env's attribute ``name``; the promise returns None."""
        return Promise(self, self.send("setattr", name, value))

    # plangym 0.1 conveniences -----------------------------------------------------------------
    @property
    def observation_space(self) -> Any:
        """Observation space of the worker's env (asked once, then remembered)."""
        return self._cached_space("observation_space")

    @property
    def action_space(self) -> Any:
        """Action space of the worker's env (asked once, then remembered)."""
        return self._cached_space("action_space")

    def _cached_space(self, name: str) -> Any:
        if name not in self._spaces:
            self._spaces[name] = self.get_attr(name)()
        return self._spaces[name]

    def __getattr__(self, name: str) -> Any:
        """Any other public attribute is the worker env's, read through the pipe."""
        # Private names and this class's own members (a property that failed, say) are
        # never sent to the worker.
        if name.startswith("_") or hasattr(type(self), name):
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return self.get_attr(name)()

    def step(self, action: Any, state: Any = None, dt: int = 1, blocking: bool = True) -> Any:
        """Step the worker env once (see :meth:`PlanEnv.step`); a promise if not blocking."""
        return self._maybe_block(self.call("step", action, state=state, dt=dt), blocking)

    def step_batch(
        self,
        actions: Sequence,
        states: Sequence | None = None,
        dt: Any = 1,
        return_state: bool | None = None,
        blocking: bool = True,
    ) -> Any:
        """Step a batch in the worker env (results are pickled; ParallelEnv avoids that)."""
        dt = 1 if dt is None else dt  # plangym 0.1's default
        promise = self.call("step_batch", actions, states=states, dt=dt, return_state=return_state)
        return self._maybe_block(promise, blocking)

    def reset(self, blocking: bool = True, return_states: bool = False) -> Any:
        """Reset the worker env: ``(state, obs, info)``, or ``(obs, info)`` without states."""
        return self._maybe_block(self.call("reset", return_state=return_states), blocking)

    def set_state(self, state: Any, blocking: bool = True) -> Any:
        """Set the worker env's state; a promise if not blocking."""
        return self._maybe_block(self.call("set_state", state), blocking)

    @staticmethod
    def _maybe_block(promise: Promise, blocking: bool) -> Any:
        return promise() if blocking else promise


class Promise:
    """The future result of a request to an :class:`ExternalProcess`; call it to wait."""

    def __init__(self, worker: ExternalProcess, request_id: int):
        self.worker, self.request_id = worker, request_id

    def __call__(self, timeout: float | None = None) -> Any:
        """Block until the result is there and return it."""
        return self.worker.receive(self.request_id, timeout=timeout)


def stack_rows(values: Sequence) -> np.ndarray:
    """One array of ``values``: stacked when they are arrays of one shape, else objects.

    >>> stack_rows([np.zeros(2), np.ones(2)]).shape, stack_rows([{}, {"a": 1}]).dtype
    ((2, 2), dtype('O'))
    """
    arrays = all(isinstance(value, np.ndarray) for value in values)
    if values and arrays and len({(v.shape, v.dtype) for v in values}) == 1:
        return np.stack(values)
    stacked = np.empty(len(values), dtype=object)
    stacked[:] = list(values)
    return stacked


def unwrap_reply(reply: tuple) -> Any:
    """Return the payload of an "ok" reply; raise the worker's error otherwise."""
    _, status, payload = reply
    if status == "ok":
        return payload
    error, text = payload
    raise with_remote_traceback(error, text)


# A batch with states is cut into up to this many chunks per worker, handed out as workers
# become free, so a worker slowed down (by the caller sharing its core, by a costly part of
# the batch) takes fewer of them. Chunks are not made smaller than MIN_CHUNK elements: each
# costs a round trip.
CHUNKS_PER_WORKER = 4
MIN_CHUNK = 64


def plan_chunks(n: int, n_workers: int, has_states: bool) -> list[tuple[int, int]]:
    """Bounds of the chunks a batch of ``n`` elements is cut into.

    Without states every worker gets exactly one chunk: it steps on from its own state.

    >>> len(plan_chunks(4096, 2, has_states=True)), len(plan_chunks(100, 2, has_states=True))
    (8, 2)
    >>> plan_chunks(5, 2, has_states=False)
    [(0, 3), (3, 5)]
    """
    if not has_states:
        return chunk_bounds(n, n_workers)
    pieces = min(n_workers * CHUNKS_PER_WORKER, max(n_workers, n // MIN_CHUNK))
    return chunk_bounds(n, pieces)


@dataclass
class Chunk:
    """A piece of a batch, kept so it can be re-run if its worker dies."""

    index: int
    start: int
    stop: int
    request: tuple
    worker: int | None = None  # set when sent
    request_id: int = 0


@dataclass
class PendingBatch:
    """A dispatched ``step_batch`` whose results have not been collected yet."""

    chunks: list[Chunk]
    return_state: bool
    has_states: bool
    unsent: deque[Chunk]
    results: dict[int, Any] = field(default_factory=dict)  # by chunk index

    def in_flight(self) -> list[Chunk]:
        """Chunks sent to a worker and not answered yet."""
        return [c for c in self.chunks if c.worker is not None and c.index not in self.results]


class BatchEnv:
    """Holds the workers: sends each its chunk of a batch and gathers the results in order.

    As in plangym 0.1, ``len()`` counts the workers, ``batch_env[i]`` is the i-th
    :class:`ExternalProcess`, and other public attributes are the first worker env's.

    Args:
        envs: The :class:`ExternalProcess` workers.
        blocking: Accepted for plangym 0.1 compatibility: chunks always run on all the
            workers at once.
        obs_shape: Shape of one observation (sizes the shared output buffers); None asks
            the first worker's observation space.
        obs_dtype: Dtype of the observations; None asks the first worker, as for the shape.
        chunks_to_queue: How many chunks of a given size to send each worker at once
            (default: one). A second one keeps a worker busy while the caller reads the
            results of its first, which pays off for short chunks; long ones are better
            handed out one at a time, to whichever worker frees up first.
    """

    def __init__(
        self,
        envs: list[ExternalProcess],
        blocking: bool = False,
        obs_shape: tuple | None = None,
        obs_dtype: Any = None,
        chunks_to_queue: Callable[[int], int] | None = None,
    ):
        self.workers = list(envs)
        self.blocking = blocking
        if obs_shape is None or obs_dtype is None:
            space = self.workers[0].observation_space
            obs_shape = space.shape if obs_shape is None else obs_shape
            obs_dtype = space.dtype if obs_dtype is None else obs_dtype
        self._obs_shape = tuple(obs_shape or ())
        # Envs without an observation dtype get float64 buffers; observations of another
        # dtype then travel pickled (see transport.write_outputs), still exact.
        self._obs_dtype = np.dtype(obs_dtype or np.float64)
        self._chunks_to_queue = chunks_to_queue or (lambda chunk_size: 1)
        self._resources = _Resources(self.workers)
        # Runs on close(), on garbage collection and at interpreter exit, whichever is first.
        self._finalizer = weakref.finalize(self, self._resources.release)

    def __len__(self) -> int:
        """Return the number of workers."""
        return len(self.workers)

    def __getitem__(self, index: int) -> ExternalProcess:
        """Return the worker at ``index``."""
        return self.workers[index]

    def __getattr__(self, name: str) -> Any:
        """Any other public attribute is the first worker env's (plangym 0.1 forwarding)."""
        if name.startswith("_") or hasattr(type(self), name):
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return getattr(self.workers[0], name)

    @property
    def n_workers(self) -> int:
        """Number of workers."""
        return len(self.workers)

    def outputs(self, capacity: int) -> SharedOutputs:
        """Shared output buffers with room for ``capacity`` elements (grown as needed)."""
        current = self._resources.outputs
        if current is None or current.capacity < capacity:
            size = max(capacity, 2 * (current.capacity if current else 0), 16)
            if current is not None:
                current.close()
            self._resources.outputs = SharedOutputs(size, self._obs_shape, self._obs_dtype)
        return self._resources.outputs

    # step_batch -----------------------------------------------------------------------------
    def dispatch(
        self, actions: Sequence, states: list | None, dts: list[int], return_state: bool
    ) -> PendingBatch:
        """Send every worker its first chunks; return the pending batch."""
        n = len(actions)
        outputs = self.outputs(n)
        bounds = plan_chunks(n, self.n_workers, states is not None)
        queued_per_worker = self._chunks_to_queue(bounds[0][1] - bounds[0][0]) if bounds else 1
        parts = [None if states is None else states[start:stop] for start, stop in bounds]
        layouts = [None if part is None else state_layout(part) for part in parts]
        # None: the chunk's states cannot share memory and go through the pipe.
        in_bytes = [
            0 if part is None else layout and states_nbytes(part, layout)
            for part, layout in zip(parts, layouts, strict=True)
        ]
        out_bytes = [
            aligned((stop - start) * self._state_bytes_hint(states)) if return_state else 0
            for start, stop in bounds
        ]
        outputs.ensure_state_bytes(sum(aligned(b or 0) for b in in_bytes), sum(out_bytes))
        arena, specs = outputs.arena("states_in"), outputs.specs
        pending = PendingBatch([], return_state, states is not None, deque())
        in_start = out_start = 0
        for index, ((start, stop), part, layout, nbytes, capacity) in enumerate(
            zip(bounds, parts, layouts, in_bytes, out_bytes, strict=True)
        ):
            packed = None
            if part is not None:
                if nbytes is not None:
                    packed = write_states(arena, in_start, nbytes, part, layout)
                packed = packed or pack_states(part)
                in_start += aligned(nbytes or 0)
            region = (out_start, capacity)
            out_start += capacity
            request = (actions[start:stop], packed, dts[start:stop], return_state, start)
            chunk = Chunk(index, start, stop, (*request, region, specs))
            pending.chunks.append(chunk)
            # The first chunks leave as soon as their states are in place: the workers start
            # while the caller copies the states of the next ones.
            if index < self.n_workers * queued_per_worker:
                chunk.worker = index % self.n_workers
                self._send_chunk(chunk, pending)
            else:
                pending.unsent.append(chunk)
        return pending

    def _send_next(self, worker: int, pending: PendingBatch) -> None:
        """Hand ``worker`` the next unsent chunk of ``pending``, if any."""
        if pending.unsent:
            chunk = pending.unsent.popleft()
            chunk.worker = worker
            self._send_chunk(chunk, pending)

    def _state_bytes_hint(self, states: list | None) -> int:
        """Bytes to reserve per new state: a little more than the input or last states."""
        if states:
            sample = states[0]
            nbytes = sample.nbytes if isinstance(sample, np.ndarray) else 0
        else:
            nbytes = self._resources.state_bytes
        return nbytes + nbytes // 8 + 16 if nbytes else 0

    def _send_chunk(self, chunk: Chunk, pending: PendingBatch) -> None:
        try:
            chunk.request_id = self.workers[chunk.worker].send_step_batch(*chunk.request)
        except WorkerCrashedError:
            self._recover(chunk, pending)

    def gather(self, pending: PendingBatch, timeout: float | None = None) -> tuple[list, ...]:
        """Collect the results of ``pending`` in input order.

        A worker that dies is restarted and, when the batch came with states, its chunk is
        re-run. An error raised in a worker is re-raised here once every other chunk is
        back, so all workers are idle again. On timeout the workers still busy are
        restarted and :class:`TimeoutError` is raised.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        errors: list[BaseException] = []
        while True:
            in_flight = pending.in_flight()
            if not in_flight:
                break
            # A worker answers its chunks in the order it was sent them: its next reply is
            # for the oldest one.
            oldest: dict[int, Chunk] = {}
            for chunk in in_flight:
                oldest.setdefault(chunk.worker, chunk)
            waiting = {self.workers[w].connection: c for w, c in oldest.items()}
            if len(waiting) == 1 and deadline is None:
                ready = list(waiting)  # a blocking read returns on the reply or on EOF
            else:
                remaining = None if deadline is None else max(deadline - time.monotonic(), 0.0)
                ready = wait(list(waiting), remaining)
                if not ready:
                    self._abandon_on_timeout(pending, timeout)
            # Each chunk is decoded as it arrives, while the other workers still compute.
            for connection in ready:
                chunk = waiting[connection]
                self._collect(chunk, pending, errors)
                if chunk.index in pending.results and not errors:
                    self._send_next(chunk.worker, pending)
        if errors:
            raise errors[0]
        return self._assemble(pending)

    def _abandon_on_timeout(self, pending: PendingBatch, timeout: float | None) -> None:
        busy = [c.worker for c in pending.in_flight()]
        for index in busy:
            self.workers[index].restart()
        raise TimeoutError(
            f"timeout: step_batch took longer than {timeout} s; workers {busy} were "
            "restarted and the batch abandoned"
        )

    def _collect(self, chunk: Chunk, pending: PendingBatch, errors: list) -> None:
        worker = self.workers[chunk.worker]
        try:
            reply = worker.read_reply()
        except WorkerCrashedError as crash:
            if not pending.has_states:
                worker.restart()
                pending.results[chunk.index] = None
                errors.append(crash)
                return
            self._recover(chunk, pending)
            return
        if reply[0] != chunk.request_id:
            return  # a late reply to an abandoned request
        try:
            packed_states, infos, fallback, times = worker.decode_step_reply(unwrap_reply(reply))
            count = chunk.stop - chunk.start
            pool = self._resources.obs_pool
            columns = read_outputs(self._arrays(), chunk.start, count, fallback, pool)
            columns.append(infos)
            if pending.return_state:
                new_states = self._resources.outputs.read_states(packed_states)
                if new_states and isinstance(new_states[0], np.ndarray):
                    self._resources.state_bytes = new_states[0].nbytes
                columns.insert(0, new_states)
            pending.results[chunk.index] = (columns, times)
        except BaseException as error:  # re-raised once the other workers are done
            pending.results[chunk.index] = None
            errors.append(error)

    def _recover(self, chunk: Chunk, pending: PendingBatch) -> None:
        """Restart a dead worker and re-run its chunks from the states they were given."""
        worker = self.workers[chunk.worker]
        crash = worker.crashed()
        worker.restart()
        if not pending.has_states:
            raise WorkerCrashedError(
                f"{crash}; its chunk (elements {chunk.start}..{chunk.stop - 1}) had no states "
                "to re-run from"
            ) from crash
        # Every chunk queued at the dead worker was lost with it, not only the one awaited.
        for lost in pending.in_flight():
            if lost.worker == chunk.worker:
                lost.request_id = worker.send_step_batch(*lost.request)

    def _arrays(self) -> dict[str, np.ndarray]:
        return {f: buffer.array for f, buffer in self._resources.outputs.buffers.items()}

    def _assemble(self, pending: PendingBatch) -> tuple[list, ...]:
        columns: list[list] = [[] for _ in range(6 if pending.return_state else 5)]
        for chunk in pending.chunks:
            for column, part in zip(columns, pending.results[chunk.index][0], strict=True):
                column.extend(part)
        return tuple(columns)

    def abandon(self, pending: PendingBatch) -> None:
        """Forget ``pending`` and restart the workers still busy with it.

        A worker left running would go on reading its input states from, and writing its
        results to, shared memory that the next batch reuses.
        """
        for chunk in pending.in_flight():
            self.workers[chunk.worker].restart()
        pending.unsent.clear()
        pending.results.clear()

    # Whole-batch requests ----------------------------------------------------------------------
    def call_all(
        self, kind: str, *arguments_per_worker: Sequence, indices: Sequence[int] | None = None
    ) -> list:
        """Send one request of ``kind`` to every worker (or those at ``indices``) at once.

        Returns their results in order; the i-th item of each of ``arguments_per_worker``
        goes to the i-th worker addressed.
        """
        workers = self.workers if indices is None else [self.workers[i] for i in indices]
        request_ids = [
            worker.send(kind, *(arguments[i] for arguments in arguments_per_worker))
            for i, worker in enumerate(workers)
        ]
        results, errors = [], []
        for worker, request_id in zip(workers, request_ids, strict=True):
            try:
                results.append(worker.receive(request_id))
            except WorkerCrashedError:
                worker.restart()
                raise
            except BaseException as error:
                results.append(None)
                errors.append(error)
        if errors:
            raise errors[0]
        return results

    def sync_states(self, state: Any, blocking: bool = True) -> list[Promise] | None:
        """Set every worker's env to ``state``.

        With ``blocking=False`` the requests are sent and one :class:`Promise` per worker
        is returned; call each to wait for its worker.
        """
        if not blocking:
            return [worker.set_state(state, blocking=False) for worker in self.workers]
        n = self.n_workers
        self.call_all("call", ["set_state"] * n, [(state,)] * n, [{}] * n)
        return None

    def reset(self, indices: Sequence[int] | None = None, return_states: bool = True) -> tuple:
        """Reset the workers' envs (those at ``indices``, default all), all at once.

        Returns plangym 0.1's stacked batch: ``(states, observs, infos)`` arrays, one row
        per worker reset, or ``(observs, infos)`` without ``return_states``.
        """
        indices = range(self.n_workers) if indices is None else [int(i) for i in indices]
        n = len(indices)
        results = self.call_all(
            "call",
            ["reset"] * n,
            [()] * n,
            [{"return_state": return_states}] * n,
            indices=indices,
        )
        return tuple(stack_rows(column) for column in zip(*results, strict=True))

    def make_transitions(
        self,
        actions: Sequence,
        states: Sequence | None = None,
        dt: int | Sequence[int] = 1,
        return_state: bool | None = None,
    ) -> tuple[list, ...]:
        """Step a batch on the workers, checked first (plangym 0.1's entry point).

        Same contract as :meth:`PlanEnv.step_batch`; :class:`ParallelEnv` checks with its
        local env instead and calls :meth:`dispatch` and :meth:`gather` itself.
        """
        actions = check_batch_actions(actions)
        dts = check_batch_dt(dt, len(actions))
        states = check_batch_states(states, len(actions))
        check_batch_action_values(self.workers[0].action_space, actions)
        want_state = return_state if return_state is not None else states is not None
        return self.gather(self.dispatch(actions, states, dts, want_state))

    def close(self) -> None:
        """Stop every worker and free the shared buffers."""
        self._finalizer()


class _Resources:
    """What a BatchEnv must release, held apart so its finalizer keeps no BatchEnv alive."""

    def __init__(self, workers: list[ExternalProcess]):
        self.workers = workers
        self.outputs: SharedOutputs | None = None
        self.state_bytes = 0  # size of the last new state seen, to size the arena
        self.obs_pool = ObservationPool()

    def release(self) -> None:
        """Stop every worker (all asked first, so they exit together) and free the buffers.

        This runs once (it is a finalizer): interrupted by Ctrl-C while workers exit, it
        still kills the rest and frees the buffers before the KeyboardInterrupt goes on.
        """
        try:
            for worker in self.workers:
                worker.request_close()
            for worker in self.workers:
                worker.finish_close()
        except BaseException:
            for worker in self.workers:
                worker.terminate()
            raise
        finally:
            outputs, self.outputs = self.outputs, None
            if outputs is not None:
                outputs.close()


class ParallelEnv(VectorizedEnv):
    """Steps batches on ``n_workers`` processes, with the single env's exact results.

    Args:
        env_class: The :class:`PlanEnv` class each worker builds.
        name: Environment name.
        frameskip: Passed to ``env_class``; None keeps its default, as ``make`` does.
        autoreset: Passed to ``env_class``; None keeps its default.
        delay_setup: Start the workers later, in :meth:`setup`.
        n_workers: Number of worker processes.
        blocking: Accepted for plangym 0.1 compatibility (calls always block unless made
            with ``step_batch_async``).
        inline_small_batches: Step a batch that carries states in the calling process when
            the measured costs say a round trip to the workers would take longer (see
            :mod:`plangym.vectorization.costs`); results are the same either way.
        start_method: "fork", "spawn" or "forkserver"; None uses multiprocessing's default.
        kwargs: Passed to ``env_class``.
    """

    def __init__(
        self,
        env_class: type[PlanEnv],
        name: str,
        frameskip: int | None = None,
        autoreset: bool | None = None,
        delay_setup: bool = False,
        n_workers: int = 8,
        blocking: bool = False,
        start_method: str | None = None,
        inline_small_batches: bool = True,
        **kwargs: Any,
    ):
        self.blocking = blocking
        self.inline_small_batches = inline_small_batches
        self._costs = DispatchCosts(n_workers)
        self._start_method = start_method
        self._batch_env: BatchEnv | None = None
        super().__init__(
            env_class=env_class,
            name=name,
            frameskip=frameskip,
            autoreset=autoreset,
            delay_setup=delay_setup,
            n_workers=n_workers,
            **kwargs,
        )

    def setup_workers(self) -> None:
        """Start the worker processes (all at once) and wait until their envs are built."""
        context = mp.get_context(self._start_method)
        # Workers must share the caller's resource tracker (inherited when it runs before
        # they start); with one of their own, a worker's exit would unlink live buffers.
        resource_tracker.ensure_running()
        constructor = self.create_env_callable()
        workers = [
            ExternalProcess(constructor, index=i, context=context, wait_ready=False)
            for i in range(self.n_workers)
        ]
        try:
            for worker in workers:
                worker.wait_ready()
        except BaseException:
            for worker in workers:
                worker.terminate()
            raise
        space = getattr(self.plan_env, "observation_space", None)
        self._batch_env = BatchEnv(
            workers,
            blocking=self.blocking,
            obs_shape=self.plan_env.obs_shape or (),
            obs_dtype=getattr(space, "dtype", None) or np.float64,
            chunks_to_queue=self._costs.chunks_to_queue,
        )

    @property
    def batch_env(self) -> BatchEnv:
        """The :class:`BatchEnv` holding the workers."""
        self._check_open()
        if self._batch_env is None:
            self.setup()
        return self._batch_env

    # Batches --------------------------------------------------------------------------------
    def run_batch(self, actions, states, dts, want_state) -> tuple[list, ...]:
        """Step a checked batch where it is cheapest (here for a few cheap states)."""
        started = time.perf_counter()
        if (
            states is not None
            and self.inline_small_batches
            and self._costs.prefer_local(len(actions))
        ):
            result = self.plan_env.run_batch(actions, states, dts, want_state)
            self._costs.record_local(len(actions), time.perf_counter() - started)
            return result
        pending = self.dispatch_batch(actions, states, dts, want_state)
        result = self.wait_batch(pending)
        self._learn_costs(pending, time.perf_counter() - started)
        return result

    def _learn_costs(self, pending: PendingBatch, wall_s: float) -> None:
        if pending.chunks:
            times = {c.index: pending.results[c.index][1] for c in pending.chunks}
            chunk_size, compute_s = max(
                (c.stop - c.start, times[c.index][1] - times[c.index][0]) for c in pending.chunks
            )
            self._costs.record_remote(chunk_size, compute_s, wall_s)

    def dispatch_batch(self, actions, states, dts, return_state) -> PendingBatch:
        """Send a checked batch to the workers (see :meth:`BatchEnv.dispatch`)."""
        return self.batch_env.dispatch(actions, states, dts, return_state)

    def gather_batch(self, pending: PendingBatch, timeout: float | None = None) -> tuple:
        """Collect a dispatched batch (see :meth:`BatchEnv.gather`)."""
        return self.batch_env.gather(pending, timeout=timeout)

    def abandon_batch(self, pending: PendingBatch) -> None:
        """Forget a batch and restart the workers still on it (see :meth:`BatchEnv.abandon`)."""
        self.batch_env.abandon(pending)

    # Whole-env requests ----------------------------------------------------------------------
    def sync_states(self, state: Any = None) -> None:
        """Put every worker in ``state`` (default: the local env's state)."""
        self._check_idle()
        self.batch_env.sync_states(self.plan_env.get_state() if state is None else state)

    def call(self, name: str, *args: Any, **kwargs: Any) -> list:
        """Call ``env.name(*args, **kwargs)`` in every worker; return their results."""
        self._check_idle()
        n = self.n_workers
        return self.batch_env.call_all("call", [name] * n, [args] * n, [kwargs] * n)

    def get_attr(self, name: str) -> list:
        """Return attribute ``name`` of every worker's env."""
        self._check_idle()
        return self.batch_env.call_all("getattr", [name] * self.n_workers)

    def set_attr(self, name: str, values: Any) -> None:
        """Set attribute ``name`` in every worker's env: one value each, or one for all."""
        self._check_idle()
        n = self.n_workers
        values = self.values_per_worker(values, n)
        self.batch_env.call_all("setattr", [name] * n, values)

    def reset(self, return_state: bool = True) -> tuple:
        """Reset the local env and put every worker in the same state."""
        self._check_open()
        return super().reset(return_state=return_state)

    def close(self) -> None:
        """Stop the workers and close the local env; later calls raise ClosedEnvironmentError."""
        if getattr(self, "_closed", True):
            return
        self._closed = True
        self._pending = None
        if self._batch_env is not None:
            self._batch_env.close()
        if self._plan_env is not None:
            self._plan_env.close()
