"""The one loop every worker process runs: build a handler, then answer requests.

A worker prints nothing, ignores Ctrl-C (the caller decides what an interrupt means) and
exits when its caller is gone (see :mod:`plangym.vectorization.orphans`).
"""

from __future__ import annotations

import contextlib
import os
from multiprocessing.connection import Connection

import cloudpickle

from plangym.vectorization.errors import add_note
from plangym.vectorization.handler import Handler, as_handler_factory
from plangym.vectorization.messages import (
    READY_ID,
    Attach,
    Call,
    Close,
    GetAttr,
    Location,
    Reply,
    SetAttr,
    StepChunk,
    StepChunkReply,
)
from plangym.vectorization.orphans import caller_gone, guard_worker
from plangym.vectorization.packing import DtypeChannel, replaced
from plangym.vectorization.shared_memory import AttachedOutputs
from plangym.vectorization.wire import decode, encode, error_reply

# The requests that read or write no shared buffer: they run while one is not mapped.
BUFFERLESS = (Call, GetAttr, SetAttr, Location)


def map_buffers(buffers: AttachedOutputs, specs: dict) -> None:
    """Map the caller's buffers ``specs``; an error says that they could not be mapped."""
    try:
        buffers.attach(specs)
    except Exception as error:
        add_note(error, "the worker could not map the caller's shared buffers")
        raise


def serve(conn: Connection, handler: Handler, buffers: AttachedOutputs) -> bool:
    """Answer requests until told to close; return whether the caller was lost."""
    incoming, outgoing = DtypeChannel(), DtypeChannel()  # the states' dtype tokens
    unmapped: dict | None = None  # the buffers last sent, if they could not all be mapped
    try:
        while True:
            try:
                blob = conn.recv_bytes()
            except (EOFError, OSError):
                return True  # the caller closed the pipe or is gone
            try:
                request_id, body = decode(blob)
            except Exception as error:  # e.g. a class the worker cannot import: say so
                conn.send_bytes(encode(error_reply(READY_ID, error)))  # the id is not read
                continue
            if type(body) is Close:
                conn.send_bytes(encode(Reply(request_id, True, None)))
                return False
            if type(body) is Attach:  # not answered: the next request says if it failed
                # Also sent after any error: the caller may have missed the dtype too.
                outgoing.forget()
                unmapped = body.specs
                with contextlib.suppress(Exception):  # tried again when they are needed
                    map_buffers(buffers, unmapped)
                    unmapped = None
                continue
            try:
                if unmapped is not None and type(body) not in BUFFERLESS:
                    map_buffers(buffers, unmapped)  # else its error says why (no fd left)
                    unmapped = None
                if type(body) is StepChunk:
                    body = replaced(body, states=incoming.decode_states(body.states))
                payload = handler.handle(body)
                if type(payload) is StepChunkReply:
                    payload = replaced(payload, states=outgoing.encode_states(payload.states))
                message = encode(Reply(request_id, True, payload))  # raises if unpicklable
            except BaseException as error:
                outgoing.forget()  # an error goes out instead of the states' dtype
                message = encode(error_reply(request_id, error))
            try:
                conn.send_bytes(message)
            except ValueError as error:  # too large for one pipe message
                outgoing.forget()
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
