"""The one loop every worker process runs: build a handler, then answer requests.

Requests and replies are the types of :mod:`plangym.vectorization.messages`, flattened on
the pipe. The loop maps the caller's shared buffers when told to
(:class:`~plangym.vectorization.messages.Attach`), restores the states' dtype tokens of a
chunk (:class:`~plangym.vectorization.packing.DtypeChannel`), and hands everything else to
its :class:`~plangym.vectorization.handler.Handler`. A worker ignores Ctrl-C (the caller
decides what an interrupt means) and exits when its caller's process is gone, removing
the caller's shared memory on the way out (see :mod:`plangym.vectorization.orphans`).
None of this prints anything.
"""

from __future__ import annotations

import contextlib
import os
from multiprocessing.connection import Connection
from typing import Any

import cloudpickle

from plangym.vectorization.handler import Handler, as_handler_factory
from plangym.vectorization.messages import (
    READY_ID,
    Attach,
    Close,
    Reply,
    Request,
    StepChunk,
    StepChunkReply,
)
from plangym.vectorization.orphans import caller_gone, guard_worker
from plangym.vectorization.packing import DtypeChannel, replaced
from plangym.vectorization.shared_memory import AttachedOutputs
from plangym.vectorization.wire import decode, encode, encode_reply, error_reply


class Channels:
    """The worker's end of the state dtype channels (see :class:`DtypeChannel`)."""

    def __init__(self):
        self.incoming, self.outgoing = DtypeChannel(), DtypeChannel()

    def step_chunk(self, handler: Handler, body: StepChunk) -> Any:
        """Run a chunk on ``handler``, with the dtypes of its states restored."""
        body = replaced(body, states=self.incoming.decode_states(body.states))
        payload = handler.handle(body)
        if type(payload) is StepChunkReply:
            payload = replaced(payload, states=self.outgoing.encode_states(payload.states))
        return payload


def serve(conn: Connection, handler: Handler, buffers: AttachedOutputs) -> bool:
    """Answer requests until told to close; return whether the caller was lost."""
    channels = Channels()
    try:
        while True:
            try:
                request = decode(conn.recv_bytes())
            except (EOFError, OSError):
                return True  # the caller closed the pipe or is gone
            assert isinstance(request, Request)  # a caller sends only requests
            request_id, body = request
            if type(body) is Close:
                conn.send_bytes(encode(Reply(request_id, True, None)))
                return False
            if type(body) is Attach:  # not answered: the next request says if it failed
                with contextlib.suppress(Exception):
                    buffers.attach(body.specs)
                continue
            try:
                if type(body) is StepChunk:
                    payload = channels.step_chunk(handler, body)
                else:
                    payload = handler.handle(body)
            except BaseException as error:
                message = encode(error_reply(request_id, error))
            else:
                try:
                    message = encode_reply(request_id, payload)
                except Exception as error:  # an unpicklable result: report it instead
                    message = encode(error_reply(request_id, error))
            try:
                conn.send_bytes(message)
            except ValueError as error:  # too large for one pipe message
                conn.send_bytes(encode(error_reply(request_id, error)))
    except OSError:  # a reply the caller is no longer there to read
        return True


def run_worker(conn: Connection, factory_blob: bytes, parent_pid: int) -> None:
    """Entry point of a worker process: ``factory_blob`` builds its handler."""
    buffers = AttachedOutputs()
    first_ppid = guard_worker(parent_pid, buffers)
    try:
        handler = as_handler_factory(cloudpickle.loads(factory_blob))(buffers)
    except BaseException as error:  # report why the env could not be built, then stop
        with contextlib.suppress(OSError):  # unless the caller is gone
            conn.send_bytes(encode(error_reply(READY_ID, error)))
        buffers.close()
        return
    caller_lost = True
    try:
        conn.send_bytes(encode(Reply(READY_ID, True, os.getpid())))
        caller_lost = serve(conn, handler, buffers)
    except OSError:
        pass
    finally:
        if caller_lost and caller_gone(parent_pid, first_ppid):
            buffers.remove_orphaned()
        buffers.close()
        with contextlib.suppress(Exception):
            handler.close()
