"""The process backend: worker processes, pipes and shared memory.

What crosses per chunk: the states are copied once into a shared arena the workers map
(:mod:`plangym.vectorization.shared_states`), observations, rewards and flags are written
by the workers into shared buffers (:mod:`plangym.vectorization.transport`), and only a
small :class:`~plangym.vectorization.messages.StepChunk` and its reply (new states'
descriptor, infos) go through the pipe.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from multiprocessing.connection import wait
from typing import Any

import numpy as np

from plangym.columns import is_record_block
from plangym.vectorization.backend import STALE, Backend, BatchInputs, CallRequest, ChunkResult
from plangym.vectorization.messages import Call, GetAttr, SetAttr, StepChunk
from plangym.vectorization.obs_pool import ObservationPool
from plangym.vectorization.packing import pack_actions, pack_states, state_layout
from plangym.vectorization.process import WorkerProcess, stop_workers, unwrap_reply
from plangym.vectorization.shared_memory import SharedOutputs
from plangym.vectorization.shared_states import aligned, states_nbytes, write_states
from plangym.vectorization.transport import read_outputs


@dataclass
class ArenaLayout:
    """Where each chunk's states go in the shared arenas (None: through the pipe)."""

    outputs: SharedOutputs
    parts: list  # each chunk's input states, or None
    layouts: list  # their state_layout
    in_bytes: list  # bytes each takes in the input arena (None: cannot go there)
    in_starts: list[int]
    out_regions: list[tuple[int, int]]  # (start, capacity) of each chunk's new states
    specs: dict  # the shared buffers' names, as the workers map them


class ProcessBackend(Backend):
    """Worker processes and the shared buffers their chunks' outputs go through.

    Args:
        workers: The worker processes (they stay this backend's: closing it stops them).
        obs_shape: Shape of one observation (sizes the shared output buffers).
        obs_dtype: Dtype of the observations.
    """

    def __init__(self, workers: list[WorkerProcess], obs_shape: tuple, obs_dtype: Any):
        self.workers = workers
        self.n_workers = len(workers)
        self._obs_shape, self._obs_dtype = tuple(obs_shape), np.dtype(obs_dtype)
        self._resources = _Resources(workers)
        # Runs on close(), on garbage collection and at interpreter exit, whichever is first.
        self._finalizer = weakref.finalize(self, self._resources.release)

    def outputs(self, capacity: int) -> SharedOutputs:
        """Shared output buffers with room for ``capacity`` elements (grown as needed)."""
        current = self._resources.outputs
        if current is None or current.capacity < capacity:
            size = max(capacity, 2 * (current.capacity if current else 0), 16)
            if current is not None:
                current.close()
            self._resources.outputs = SharedOutputs(size, self._obs_shape, self._obs_dtype)
        return self._resources.outputs

    def shared_memory_names(self) -> list[str]:
        """Names of the shared-memory blocks the workers' outputs go through (in /dev/shm)."""
        outputs = self._resources.outputs
        return [] if outputs is None else [spec[0] for spec in outputs.specs.values()]

    # Chunks ---------------------------------------------------------------------------------
    def prepare(self, inputs: BatchInputs, bounds: list[tuple[int, int]]) -> ArenaLayout:
        """Size the shared buffers for the batch and lay its chunks' states out in them."""
        outputs = self.outputs(len(inputs))
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
        return ArenaLayout(outputs, parts, layouts, in_bytes, in_starts, out_regions, outputs.specs)

    def encode(
        self, inputs: BatchInputs, layout: ArenaLayout, index: int, start: int, stop: int
    ) -> StepChunk:
        """Copy chunk ``index``'s states into the input arena; return its request."""
        part, packed = layout.parts[index], None
        if part is not None:
            nbytes = layout.in_bytes[index]
            if nbytes is not None:
                arena = layout.outputs.arena("states_in")
                start_byte, part_layout = layout.in_starts[index], layout.layouts[index]
                packed = write_states(arena, start_byte, nbytes, part, part_layout)
            packed = packed or pack_states(part)
        return StepChunk(
            pack_actions(inputs.actions[start:stop]),
            packed,
            inputs.dts[start:stop],
            inputs.want_state,
            start,
            layout.out_regions[index],
            layout.specs,
        )

    def _state_bytes_hint(self, states: list | np.ndarray | None) -> int:
        """Bytes to reserve per new state: a little more than the input or last states."""
        if is_record_block(states):
            nbytes = states.dtype.itemsize
        elif states:
            sample = states[0]
            nbytes = sample.nbytes if isinstance(sample, np.ndarray) else 0
        else:
            nbytes = self._resources.state_bytes
        return nbytes + nbytes // 8 + 16 if nbytes else 0

    # The protocol -----------------------------------------------------------------------------
    def submit(self, worker: int, request: Any) -> int:
        """Send ``request`` to ``worker``; its ticket is the request id."""
        process = self.workers[worker]
        if isinstance(request, StepChunk):
            return process.send_step_chunk(request)
        return process.send(call_message(request))

    def wait(self, tickets: dict[int, Any], timeout: float | None) -> list[int]:
        """Workers with a reply (or EOF, if dead) to read."""
        if len(tickets) == 1 and timeout is None:
            return list(tickets)  # a blocking read returns on the reply or on EOF
        connections = {self.workers[worker].connection: worker for worker in tickets}
        return [connections[ready] for ready in wait(list(connections), timeout)]

    def result(self, worker: int, ticket: int, request: Any) -> Any:
        """Read ``worker``'s next reply: the answer to ``ticket``, or STALE."""
        process = self.workers[worker]
        reply = process.read_reply()
        if reply.request_id != ticket:
            return STALE  # a late reply to a request given up on
        payload = unwrap_reply(reply)
        if not isinstance(request, StepChunk):
            return payload
        reply = process.decode_step_reply(payload)
        resources = self._resources
        arrays = {f: buffer.array for f, buffer in resources.outputs.buffers.items()}
        count = len(request.dts)
        columns = read_outputs(arrays, request.offset, count, reply.fallback, resources.obs_pool)
        columns.append(reply.infos)
        if request.want_state:
            new_states = resources.outputs.read_states(reply.states)
            if new_states and isinstance(new_states[0], np.ndarray):
                resources.state_bytes = new_states[0].nbytes
            columns.insert(0, new_states)
        started, finished = reply.times
        return ChunkResult(columns, finished - started)

    def restart(self, worker: int) -> None:
        """Kill ``worker``'s process and start a fresh one."""
        self.workers[worker].restart()

    def close(self) -> None:
        """Stop every worker and free the shared buffers."""
        self._finalizer()


def call_message(request: CallRequest) -> Call | GetAttr | SetAttr:
    """Return the pipe message of a whole-env request."""
    if request.kind == "getattr":
        return GetAttr(request.name)
    if request.kind == "setattr":
        return SetAttr(request.name, request.args[0])
    return Call(request.name, request.args, request.kwargs)


class _Resources:
    """What a backend must release, held apart so its finalizer keeps no backend alive."""

    def __init__(self, workers: list[WorkerProcess]):
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
            stop_workers(self.workers)
        finally:
            outputs, self.outputs = self.outputs, None
            if outputs is not None:
                outputs.close()
