"""The loop a worker process runs: build one env, then answer requests until told to stop.

Requests and replies are pickled tuples sent over a pipe::

    request: (kind, request_id, *arguments)
    reply:   (request_id, "ok", payload) or (request_id, "error", (error, traceback_text))

except ``("attach", request_id, specs)``, which a restarted worker is sent at once so that
it knows the caller's shared buffers, and which is not answered.

``step_batch`` writes observations, rewards and flags into the caller's shared memory and
replies with the packed states and the infos only. A worker ignores Ctrl-C (the caller
decides what an interrupt means) and exits when its caller's process is gone, removing the
caller's shared memory on the way out (nobody else can, but the resource tracker, which
warns about it on stderr). None of this prints anything.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import threading
import time
import traceback
from multiprocessing.connection import Connection
from typing import Any

import cloudpickle
import numpy as np

from plangym.vectorization.shared_states import read_states, write_states
from plangym.vectorization.transport import (
    AttachedOutputs,
    DtypeChannel,
    pack_states,
    unpack_actions,
    unpack_states,
    write_outputs,
)

_NO_ARENA = np.zeros(0, np.uint8)  # what a batch of zero-byte states is read from
READY_ID = 0  # request id of the "env is built" message a worker sends first
PARENT_POLL_S = 0.5


def dumps(message: Any) -> bytes:
    """Pickle a message, falling back to cloudpickle for lambdas and local classes."""
    try:
        return pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, AttributeError, TypeError):
        return cloudpickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)


def error_payload(error: BaseException) -> tuple[BaseException, str]:
    """Return the error (or a picklable stand-in) with the current traceback text."""
    text = traceback.format_exc()
    try:
        pickle.loads(dumps(error))
    except Exception:
        error = RuntimeError(f"{type(error).__name__}: {error}")
    return error, text


def pid_running(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie (dead, not yet reaped)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):  # no /proc: trust kill
        return True


def caller_alive(parent_pid: int, first_ppid: int) -> bool:
    """Whether the caller (``parent_pid``) runs.

    ``first_ppid`` is this process's parent when it started. Under fork and spawn that is
    the caller, and the caller's death makes another process the parent. Otherwise (the
    parent is a fork server, or the caller died before this process got going), ask the
    kernel about the caller itself.
    """
    if first_ppid == parent_pid:
        return os.getppid() == parent_pid
    return pid_running(parent_pid)


def caller_gone(parent_pid: int, first_ppid: int, wait_s: float = 1.0) -> bool:
    """Whether the caller is gone, waiting up to ``wait_s`` for it to be (see below).

    A pipe from a dying caller reads EOF a moment before its children are handed to a
    new parent.
    """
    deadline = time.monotonic() + wait_s
    while caller_alive(parent_pid, first_ppid):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.01)
    return True


def exit_when_orphaned(
    parent_pid: int, first_ppid: int | None = None, outputs: AttachedOutputs | None = None
) -> None:
    """Start a daemon thread that ends this process once its caller is gone.

    The caller's shared ``outputs`` are removed first (see :func:`caller_alive` for
    ``first_ppid``; default: the current parent).
    """
    first_ppid = os.getppid() if first_ppid is None else first_ppid

    def watch() -> None:
        while caller_alive(parent_pid, first_ppid):
            time.sleep(PARENT_POLL_S)
        if outputs is not None:
            outputs.remove_orphaned()
        os._exit(0)

    threading.Thread(target=watch, name="plangym-parent-watch", daemon=True).start()


class Channels:
    """The worker's end of the state dtype channels (see :class:`DtypeChannel`)."""

    def __init__(self):
        self.incoming, self.outgoing = DtypeChannel(), DtypeChannel()


def step_batch(env: Any, outputs: AttachedOutputs, channels: Channels, request: tuple) -> tuple:
    """Run a chunk of ``step_batch`` and write its fixed-shape outputs to shared memory.

    Returns ``(packed_states, infos, fallback, (started, finished))``: the two times
    (``time.perf_counter`` of this process) let the caller see compute apart from transport.
    """
    started = time.perf_counter()
    packed_actions, packed_states, dts, return_state, offset, states_region, specs = request
    # Attach first: the caller sends new buffer specs once, whether or not this chunk fails.
    arrays = outputs.arrays(specs)
    packed_states = channels.incoming.decode_states(packed_states)
    states = None
    if packed_states is not None and packed_states[0] == "shared":
        # Views of the caller's arena: it leaves them alone until this chunk is answered.
        arena = arrays.get("states_in", _NO_ARENA)
        states = read_states(arena, packed_states, as_records=True, copy=False)
    elif packed_states is not None:
        states = unpack_states(packed_states, as_records=True)
    actions = unpack_actions(packed_actions)
    observs_out = arrays["observs"][offset : offset + len(dts)]
    # The caller's local env, built by the same constructor, checked these inputs already.
    columns = env.run_batch_columns(actions, states, dts, return_state, observs_out)
    packed_new = None
    if return_state:
        if "states_out" in arrays:
            packed_new = write_states(arrays["states_out"], *states_region, columns.states)
        if packed_new is None:  # no room, or not arrays: through the pipe
            packed_new = pack_states(columns.states)
        packed_new = channels.outgoing.encode_states(packed_new)
    fallback = write_outputs(arrays, offset, columns)
    return packed_new, columns.infos, fallback, (started, time.perf_counter())


def handle(
    env: Any, outputs: AttachedOutputs, channels: Channels, kind: str, arguments: tuple
) -> Any:
    """Carry out one request and return its payload."""
    if kind == "step_batch":
        return step_batch(env, outputs, channels, arguments)
    if kind == "call":
        name, args, kwargs = arguments
        return getattr(env, name)(*args, **kwargs)
    if kind == "getattr":
        return getattr(env, arguments[0])
    if kind == "setattr":
        name, value = arguments
        setattr(env, name, value)
        return None
    raise ValueError(f"request: unknown kind {kind!r}")


def run_worker(conn: Connection, factory_blob: bytes, parent_pid: int) -> None:
    """Entry point of a worker process."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):  # a caller may start workers with it blocked
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    first_ppid = os.getppid()
    outputs = AttachedOutputs()
    exit_when_orphaned(parent_pid, first_ppid, outputs)
    try:
        env = cloudpickle.loads(factory_blob)()
    except BaseException as error:  # report why the env could not be built, then stop
        with contextlib.suppress(OSError):  # unless the caller is gone
            conn.send_bytes(dumps((READY_ID, "error", error_payload(error))))
        return
    channels = Channels()
    caller_lost = False
    try:
        conn.send_bytes(dumps((READY_ID, "ok", os.getpid())))
        while True:
            try:
                kind, request_id, *arguments = pickle.loads(conn.recv_bytes())
            except (EOFError, OSError):
                caller_lost = True  # the caller closed the pipe or is gone
                break
            if kind == "close":
                conn.send_bytes(dumps((request_id, "ok", None)))
                break
            if kind == "attach":  # the caller's buffers, sent after a restart: no reply
                with contextlib.suppress(Exception):  # gone already: the next chunk says so
                    outputs.arrays(arguments[0])
                continue
            try:
                reply = (request_id, "ok", handle(env, outputs, channels, kind, tuple(arguments)))
            except BaseException as error:
                reply = (request_id, "error", error_payload(error))
            try:
                message = dumps(reply)
            except Exception as error:  # an unpicklable result: report it instead
                message = dumps((request_id, "error", error_payload(error)))
            conn.send_bytes(message)
    except OSError:  # a reply the caller is no longer there to read
        caller_lost = True
    finally:
        if caller_lost and caller_gone(parent_pid, first_ppid):
            outputs.remove_orphaned()
        outputs.close()
        env.close()
