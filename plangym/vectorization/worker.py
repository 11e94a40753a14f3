"""The loop a worker process runs: build one env, then answer requests until told to stop.

Requests and replies are the small types of :mod:`plangym.vectorization.messages`,
pickled over a pipe. A :class:`~plangym.vectorization.messages.StepChunk` writes the
chunk's observations, rewards and flags into the caller's shared memory and replies with
the packed states and the infos only. A worker ignores Ctrl-C (the caller decides what an
interrupt means) and exits when its caller's process is gone, removing the caller's
shared memory on the way out (see :mod:`plangym.vectorization.orphans`). None of this
prints anything.
"""

from __future__ import annotations

import contextlib
import os
import time
from multiprocessing.connection import Connection
from typing import Any

import cloudpickle
import numpy as np

from plangym.vectorization.messages import (
    READY_ID,
    Attach,
    Call,
    Close,
    GetAttr,
    Reply,
    SetAttr,
    StepChunk,
    StepChunkReply,
    decode,
    encode,
    error_reply,
)
from plangym.vectorization.orphans import caller_gone, guard_worker
from plangym.vectorization.packing import (
    DtypeChannel,
    SharedStates,
    pack_states,
    unpack_actions,
    unpack_states,
)
from plangym.vectorization.shared_memory import AttachedOutputs
from plangym.vectorization.shared_states import read_states, write_states
from plangym.vectorization.transport import write_outputs

_NO_ARENA = np.zeros(0, np.uint8)  # what a batch of zero-byte states is read from


class Channels:
    """The worker's end of the state dtype channels (see :class:`DtypeChannel`)."""

    def __init__(self):
        self.incoming, self.outgoing = DtypeChannel(), DtypeChannel()


def step_chunk(
    env: Any, outputs: AttachedOutputs, channels: Channels, request: StepChunk
) -> StepChunkReply:
    """Run a chunk of ``step_batch`` and write its fixed-shape outputs to shared memory."""
    started = time.perf_counter()
    # Attach first: the caller sends new buffer specs once, whether or not this chunk fails.
    arrays = outputs.arrays(request.specs)
    packed_states = channels.incoming.decode_states(request.states)
    states = None
    if isinstance(packed_states, SharedStates):
        # Views of the caller's arena: it leaves them alone until this chunk is answered.
        arena = arrays.get("states_in", _NO_ARENA)
        states = read_states(arena, packed_states, as_records=True, copy=False)
    elif packed_states is not None:
        states = unpack_states(packed_states, as_records=True)
    actions = unpack_actions(request.actions)
    dts, offset, want_state = request.dts, request.offset, request.want_state
    observs_out = arrays["observs"][offset : offset + len(dts)]
    # The caller's local env, built by the same constructor, checked these inputs already.
    columns = env.run_batch_columns(actions, states, dts, want_state, observs_out)
    packed_new = None
    if want_state:
        if "states_out" in arrays:
            packed_new = write_states(arrays["states_out"], *request.states_region, columns.states)
        if packed_new is None:  # no room, or not arrays: through the pipe
            packed_new = pack_states(columns.states)
        packed_new = channels.outgoing.encode_states(packed_new)
    fallback = write_outputs(arrays, offset, columns)
    infos = columns.info_list()
    return StepChunkReply(packed_new, infos, fallback, (started, time.perf_counter()))


def handle(env: Any, outputs: AttachedOutputs, channels: Channels, body: Any) -> Any:
    """Carry out one request and return its payload."""
    if isinstance(body, StepChunk):
        return step_chunk(env, outputs, channels, body)
    if isinstance(body, Call):
        return getattr(env, body.name)(*body.args, **(body.kwargs or {}))
    if isinstance(body, GetAttr):
        return getattr(env, body.name)
    if isinstance(body, SetAttr):
        setattr(env, body.name, body.value)
        return None
    raise TypeError(f"request: unknown kind {type(body).__name__}")


def run_worker(conn: Connection, factory_blob: bytes, parent_pid: int) -> None:
    """Entry point of a worker process."""
    outputs = AttachedOutputs()
    first_ppid = guard_worker(parent_pid, outputs)
    try:
        env = cloudpickle.loads(factory_blob)()
    except BaseException as error:  # report why the env could not be built, then stop
        with contextlib.suppress(OSError):  # unless the caller is gone
            conn.send_bytes(encode(error_reply(READY_ID, error)))
        return
    channels = Channels()
    caller_lost = False
    try:
        conn.send_bytes(encode(Reply(READY_ID, True, os.getpid())))
        while True:
            try:
                request_id, body = decode(conn.recv_bytes())
            except (EOFError, OSError):
                caller_lost = True  # the caller closed the pipe or is gone
                break
            if isinstance(body, Close):
                conn.send_bytes(encode(Reply(request_id, True, None)))
                break
            if isinstance(body, Attach):  # the caller's buffers, after a restart: no reply
                with contextlib.suppress(Exception):  # gone already: the next chunk says so
                    outputs.arrays(body.specs)
                continue
            try:
                reply = Reply(request_id, True, handle(env, outputs, channels, body))
            except BaseException as error:
                reply = error_reply(request_id, error)
            try:
                message = encode(reply)
            except Exception as error:  # an unpicklable result: report it instead
                message = encode(error_reply(request_id, error))
            conn.send_bytes(message)
    except OSError:  # a reply the caller is no longer there to read
        caller_lost = True
    finally:
        if caller_lost and caller_gone(parent_pid, first_ppid):
            outputs.remove_orphaned()
        outputs.close()
        env.close()
