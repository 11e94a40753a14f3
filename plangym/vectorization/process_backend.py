"""The process backend: worker processes, pipes and shared memory, for both faces.

A chunk's states, observations, rewards and flags, and a vector step's actions and rows,
go through shared memory; only a small request and its reply cross the pipe.
"""

from __future__ import annotations

import math
import multiprocessing as mp
import os
import select
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from multiprocessing import resource_tracker
from typing import Any

import numpy as np

from plangym.columns import is_record_block
from plangym.vectorization.backend import STALE, Backend, BatchInputs, ChunkResult
from plangym.vectorization.errors import run_all
from plangym.vectorization.leftover_blocks import remove_dead_callers_blocks
from plangym.vectorization.messages import InBuffer, Step, StepChunk
from plangym.vectorization.packing import PackedStates, pack_actions, pack_states, state_layout
from plangym.vectorization.process import WorkerProcess, stop_workers
from plangym.vectorization.shared_memory import SharedArray, SharedOutputs, interrupts_deferred
from plangym.vectorization.shared_states import aligned, states_nbytes, write_states
from plangym.vectorization.transport import read_outputs
from plangym.vectorization.wire import EMPTY_INFO, STEP_FROM_BUFFER, unwrap_reply


@dataclass
class ArenaLayout:
    """Where each chunk's states go in the shared arenas (None: through the pipe)."""

    outputs: SharedOutputs
    parts: list  # each chunk's input states, or None
    layouts: list  # their state_layout
    in_bytes: list  # bytes each takes in the input arena (None: cannot go there)
    in_starts: list[int]
    out_regions: list[tuple[int, int]]  # (start, capacity) of each chunk's new states


class ProcessBackend(Backend):
    """Worker processes and the shared buffers their outputs go through.

    Args:
        workers: Worker processes already started (they become this backend's: closing
            it stops them), or None to :meth:`start` them later.
        obs_shape: Shape of one observation (sizes the chunks' shared output buffers).
        obs_dtype: Dtype of the observations.
    """

    def __init__(
        self, workers: Sequence[WorkerProcess] | None = None, obs_shape: tuple = (), obs_dtype=None
    ):
        self._obs_shape = tuple(obs_shape)
        self._obs_dtype = np.dtype(obs_dtype or np.float64)
        self._resources = _Resources(list(workers or []))
        # Runs on close(), on garbage collection and at interpreter exit, whichever is first.
        self._finalizer = weakref.finalize(self, self._resources.release)

    def start(
        self,
        constructors: Sequence[Callable],
        context: str | None = None,
        daemon: bool = True,
        worker_class: type[WorkerProcess] = WorkerProcess,
    ) -> None:
        """Start one worker per constructor, all at once; wait until their envs are built.

        Each maps the arrays :meth:`allocate` made; if one env fails, all are stopped.
        """
        # A method asked for is kept; the default is chosen by each worker at each start.
        mp_context = mp.get_context(context) if context is not None else None
        # Workers inherit the caller's tracker (one of their own would unlink live buffers).
        resource_tracker.ensure_running()
        remove_dead_callers_blocks()
        workers = self._resources.workers
        try:
            for index, constructor in enumerate(constructors):
                worker = worker_class(
                    constructor, index=index, context=mp_context, wait_ready=False, daemon=daemon
                )
                workers.append(worker)
            for worker in workers:
                worker.wait_ready()
                worker.ensure_attached(self._resources.batch_specs)
        except BaseException:
            self.close(terminate=True)
            raise

    @property
    def workers(self) -> list[WorkerProcess]:
        """The worker processes."""
        return self._resources.workers

    @property
    def n_workers(self) -> int:
        """Number of workers."""
        return len(self._resources.workers)

    @property
    def worker_pids(self) -> tuple[int | None, ...]:
        """Process id of each worker."""
        return tuple(worker.pid for worker in self.workers)

    def allocate(self, shape: tuple, dtype: Any) -> np.ndarray:
        """Return a zeroed shared array every worker maps (a vector step's rows)."""
        shared = SharedArray(shape, dtype, reserved=True)
        shared.array[...] = 0
        self._resources.arrays.append(shared)
        specs = self._resources.batch_specs
        specs[f"batch:{len(specs)}"] = shared.spec
        return shared.array

    def stage_actions(self, actions: np.ndarray) -> bool:
        """Copy an array of actions into the shared action buffer (replaced on a new shape)."""
        if actions.dtype.hasobject:
            return False
        resources = self._resources
        current = resources.actions
        if current is None or current.shape != actions.shape or current.dtype != actions.dtype:
            resources.actions = None
            if current is not None:
                current.close()
            current = resources.actions = SharedArray(actions.shape, actions.dtype, reserved=True)
            resources.actions_specs = {"actions": current.spec}
        current.array[...] = actions
        return True

    def outputs(self, capacity: int) -> SharedOutputs:
        """Shared output buffers with room for ``capacity`` elements (grown as needed)."""
        current = self._resources.outputs
        if current is None or current.capacity < capacity:
            size = max(capacity, 2 * (current.capacity if current else 0), 16)
            if current is not None:
                current.close()
            current = self._resources.outputs = SharedOutputs(
                size, self._obs_shape, self._obs_dtype
            )
        return current

    def shared_memory_names(self) -> list[str]:
        """Names of the shared-memory blocks the workers' outputs go through (in /dev/shm)."""
        return [spec[0] for spec in self._resources.all_specs().values()]

    # Chunks ---------------------------------------------------------------------------------
    def prepare(self, inputs: BatchInputs, bounds: list[tuple[int, int]]) -> ArenaLayout:
        """Size the shared buffers for the batch and lay its chunks' states out in them."""
        outputs = self.outputs(len(inputs))
        outputs.reserve_rows(len(inputs))  # before the arena: an OSError leaves nothing sent
        states = inputs.states
        parts = [None if states is None else states[start:stop] for start, stop in bounds]
        layouts = [None if part is None else state_layout(part) for part in parts]
        in_bytes = [
            0 if part is None else layout and states_nbytes(part, layout)
            for part, layout in zip(parts, layouts, strict=True)
        ]
        hint = self._state_bytes_hint(states) if inputs.want_state else 0
        out_bytes = [aligned((stop - start) * hint) for start, stop in bounds]
        outputs.ensure_state_bytes(sum(aligned(b or 0) for b in in_bytes), sum(out_bytes))
        in_starts, out_regions, in_start, out_start = [], [], 0, 0
        for nbytes, capacity in zip(in_bytes, out_bytes, strict=True):
            in_starts.append(in_start)
            in_start += aligned(nbytes or 0)
            out_regions.append((out_start, capacity))
            out_start += capacity
        return ArenaLayout(outputs, parts, layouts, in_bytes, in_starts, out_regions)

    def encode(
        self, inputs: BatchInputs, layout: ArenaLayout, index: int, start: int, stop: int
    ) -> StepChunk:
        """Copy chunk ``index``'s states into the input arena; return its request."""
        part = layout.parts[index]
        packed: PackedStates | None = None
        if part is not None:
            nbytes = layout.in_bytes[index]
            if nbytes is not None:
                arena = layout.outputs.arena("states_in")
                start_byte, part_layout = layout.in_starts[index], layout.layouts[index]
                packed = write_states(arena, start_byte, nbytes, part, part_layout)
            packed = packed or pack_states(part)
        actions = pack_actions(inputs.actions[start:stop])
        dts, region = inputs.dts[start:stop], layout.out_regions[index]
        return StepChunk(actions, packed, dts, inputs.want_state, start, region)

    def _state_bytes_hint(self, states: list | np.ndarray | None) -> int:
        """Bytes to reserve per new state: a little more than the input or last states."""
        if is_record_block(states):
            nbytes = states.dtype.itemsize
        elif states is not None and len(states):
            sample = states[0]
            nbytes = sample.nbytes if isinstance(sample, np.ndarray) else 0
        else:
            nbytes = self._resources.state_bytes
        return nbytes + nbytes // 8 + 16 if nbytes else 0

    # The protocol -----------------------------------------------------------------------------
    def submit(self, worker: int, request: Any) -> int:
        """Send ``request`` to ``worker`` with the buffers it needs; return the request id."""
        resources = self._resources
        process, kind = resources.workers[worker], type(request)
        if kind is Step and type(request.action) is InBuffer:  # a vector step's hot path
            process.ensure_attached(resources.actions_specs)
            return process.send_encoded(STEP_FROM_BUFFER)
        if kind is StepChunk:
            if request.offset is not None:
                outputs = resources.outputs
                assert outputs is not None  # made by prepare() for this batch
                process.ensure_attached(outputs.specs)
            return process.send_step_chunk(request)
        return process.send(request)

    def wait(self, tickets: dict[int, Any], timeout: float | None) -> list[int]:
        """Workers with a reply (or EOF, if dead) to read."""
        if len(tickets) == 1 and timeout is None:
            return list(tickets)  # a blocking read returns on the reply or on EOF
        return readable(
            {self.workers[worker].connection.fileno(): worker for worker in tickets}, timeout
        )

    def result(self, worker: int, ticket: int, request: Any) -> Any:
        """Read ``worker``'s next reply: the answer to ``ticket``, or STALE."""
        process = self._resources.workers[worker]
        blob, request_id = process.read_blob()
        if request_id != ticket:
            return STALE  # a late reply to a request given up on
        if blob == EMPTY_INFO:  # a vector step's hot path: nothing to decode
            return {}
        payload = unwrap_reply(process.read_reply(blob, request_id))
        if type(request) is not StepChunk or request.offset is None:
            return payload
        reply = process.decode_step_reply(payload)
        resources = self._resources
        outputs = resources.outputs
        assert outputs is not None  # made by prepare() for this batch
        arrays = {f: buffer.array for f, buffer in outputs.buffers.items()}
        count = len(request.dts)
        columns, shared = read_outputs(arrays, request.offset, count, reply.fallback)
        columns.append(reply.infos)
        if request.want_state:
            assert reply.states is not None  # a worker asked for new states sends them
            new_states = outputs.read_states(reply.states)
            if new_states and isinstance(new_states[0], np.ndarray):
                resources.state_bytes = new_states[0].nbytes
            columns.insert(0, new_states)
        started, finished = reply.times
        return ChunkResult(columns, finished - started, shared_observs=shared)

    def restart(self, worker: int) -> None:
        """Kill ``worker``'s process and start a fresh one, mapping the same buffers."""
        self.workers[worker].restart()

    def abandon(self, workers: list[int]) -> None:
        """Replace ``workers``, all killed and started before any is waited for.

        A Ctrl-C while the new ones build their envs then leaves none on the old call.
        """
        with interrupts_deferred():
            specs = [self.workers[worker].relaunch() for worker in workers]
        run_all(
            partial(self.workers[worker].finish_restart, mapped)
            for worker, mapped in zip(workers, specs, strict=True)
        )

    def interrupt(self) -> None:
        """Kill every worker, leaving pipes and buffers to the call that waits on them."""
        self.closing = True
        if self._resources.owned():
            for worker in self.workers:
                worker.kill()

    def close(self, terminate: bool = False) -> None:
        """Stop every worker (at once if ``terminate``) and free the shared buffers."""
        self.closing = True
        if terminate and self._resources.owned():
            for worker in self.workers:
                worker.terminate()
        self._finalizer()


_LONGEST_POLL_MS = 2**31 - 1  # about 24.8 days


def readable(workers_by_fd: dict[int, int], timeout: float | None) -> list[int]:
    """Return the workers whose pipe holds a reply or was closed (died), within ``timeout``.

    A bare ``poll(2)``: ``multiprocessing.connection.wait`` costs ~50 us per call.
    """
    poller = select.poll()
    for fd in workers_by_fd:
        poller.register(fd, select.POLLIN)
    # poll takes a C int of milliseconds: a longer timeout waits as long as it allows.
    milliseconds = -1 if timeout is None else min(math.ceil(timeout * 1000), _LONGEST_POLL_MS)
    # POLLHUP and POLLERR come whether asked or not: a dead worker is ready too.
    return [workers_by_fd[fd] for fd, _ in poller.poll(milliseconds)]


class _Resources:
    """What a backend must release, held apart so its finalizer keeps no backend alive."""

    def __init__(self, workers: list[WorkerProcess]):
        self.workers = workers
        self.outputs: SharedOutputs | None = None  # a step_batch's chunks
        self.arrays: list[SharedArray] = []  # a vector step's rows
        self.batch_specs: dict[str, tuple] = {}
        self.actions: SharedArray | None = None
        self.actions_specs: dict[str, tuple] = {}
        self.state_bytes = 0  # size of the last new state seen, to size the arena
        # A forked child inherits the finalizer: only the owner may stop and free.
        self.owner_pid = os.getpid()

    def owned(self) -> bool:
        """Whether this process started the workers (not a child forked from it)."""
        return os.getpid() == self.owner_pid

    def all_specs(self) -> dict[str, tuple]:
        """Every shared buffer held, by field."""
        specs = dict(self.batch_specs)
        if self.outputs is not None:
            specs.update(self.outputs.specs)
        specs.update(self.actions_specs)
        return specs

    def release(self) -> None:
        """Stop every worker (all asked first, so they exit together) and free the buffers.

        A finalizer (runs once): on Ctrl-C it still kills the rest and frees the buffers;
        in a forked child it leaves them to the caller.
        """
        if not self.owned():
            return
        try:
            stop_workers(self.workers)
        finally:
            outputs, self.outputs = self.outputs, None
            arrays, self.arrays = [*self.arrays, self.actions], []
            self.actions, self.actions_specs = None, {}
            if outputs is not None:
                outputs.close()
            for shared in arrays:
                if shared is not None:
                    shared.close()
