"""A worker process and the pipe to it, as the caller sees them.

>>> from plangym.control.classic_control import ClassicControl
>>> from plangym.vectorization.messages import GetAttr
>>> worker = WorkerProcess(lambda: ClassicControl("CartPole-v1", frameskip=2))
>>> worker.receive(worker.send(GetAttr("frameskip")))
2
>>> worker.close()
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any

import cloudpickle

from plangym.core import PlanEnv
from plangym.utils.fork_safety import start_method_for
from plangym.validation import check_timeout
from plangym.vectorization.errors import WorkerCrashedError, add_note, held_back, note_build
from plangym.vectorization.forked_children import STARTED_WORKERS
from plangym.vectorization.handler import HandlerFactory
from plangym.vectorization.messages import (
    READY_ID,
    Attach,
    Close,
    Reply,
    Request,
    StepChunk,
    StepChunkReply,
)
from plangym.vectorization.packing import DtypeChannel, replaced
from plangym.vectorization.shared_memory import interrupts_deferred
from plangym.vectorization.wire import decode_reply, encode, unwrap_reply
from plangym.vectorization.worker import run_worker

CLOSE_TIMEOUT_S = 5.0
# How long a new worker may take to build its env: only ends waits that would never end.
READY_TIMEOUT = 300.0


DAEMON_HAS_NO_CHILDREN = (
    "worker processes cannot start here: this process is a daemon (a multiprocessing.Pool "
    "worker), which Python does not let have children; run it in a "
    "concurrent.futures.ProcessPoolExecutor instead, or build the env without workers"
)


class WorkerProcess:
    """One worker process running :func:`~plangym.vectorization.worker.run_worker`.

    It sends requests (:mod:`plangym.vectorization.messages`), reads their replies in
    order, and notices the process's death.

    Args:
        constructor: A callable that builds the env, or a
            :class:`~plangym.vectorization.handler.HandlerFactory` (cloudpickled).
        index: Position of the worker in its batch, used in messages.
        context: A multiprocessing context. None: chosen at each start (spawn once plangym
            started threads fork does not copy, see :mod:`plangym.utils.fork_safety`).
        wait_ready: Wait until the env is built before returning.
        daemon: Start the process as a daemon (a daemon cannot start processes itself).
    """

    def __init__(
        self,
        constructor: Callable[[], PlanEnv] | HandlerFactory,
        index: int = 0,
        context: mp.context.BaseContext | None = None,
        wait_ready: bool = True,
        daemon: bool = True,
    ):
        self.index = index
        self._daemon = daemon
        self._factory_blob = cloudpickle.dumps(constructor)
        self._context = context  # None: a restart after OpenGL started threads spawns
        self._next_id = READY_ID + 1
        self._conn: Connection | None = None
        self._process: BaseProcess | None = None
        # close() from another thread (to end a call that hangs) reaps as that call does.
        self._reaping = threading.RLock()
        self.start()
        if wait_ready:
            self.wait_ready()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(index={self.index}, pid={self.pid}, alive={self.is_alive})"

    # Life cycle -----------------------------------------------------------------------------
    def start(self) -> None:
        """Start the process; :meth:`wait_ready` waits until its env is built."""
        if mp.current_process().daemon:  # Python's own error is a bare AssertionError
            raise RuntimeError(DAEMON_HAS_NO_CHILDREN)
        context = self._context or mp.get_context(start_method_for(None))
        parent_conn, child_conn = context.Pipe()
        # typeshed's BaseContext has no Process; every context get_context returns has one.
        process = context.Process(  # type: ignore[attr-defined]
            target=run_worker,
            args=(child_conn, self._factory_blob, os.getpid()),
            name=f"plangym-worker-{self.index}",
            daemon=self._daemon,
        )
        process.start()
        self._start_method = context.get_start_method()
        STARTED_WORKERS.add(process)
        child_conn.close()
        self._conn, self._process = parent_conn, process
        # Replies come in the order of the requests that get one: the ids still awaited.
        self._awaiting: deque[int] = deque([READY_ID])
        # A new process knows no dtype and no shared buffers yet.
        self._states_out, self._states_in = DtypeChannel(), DtypeChannel()
        self._sent_specs: dict[str, tuple] = {}
        self._attached: dict | None = None  # the specs dict last found attached

    def wait_ready(self) -> None:
        """Wait until the env is built; raise its error (TimeoutError after READY_TIMEOUT s).

        A worker forked after OpenGL or SDL started threads can deadlock.
        """
        try:
            self.receive(READY_ID, timeout=READY_TIMEOUT)
        except TimeoutError:
            raise TimeoutError(
                f"worker {self.index}: its env was not built within {READY_TIMEOUT:g} s (a "
                "constructor that blocks, or a worker forked after a library started threads "
                "it needs, such as OpenGL or SDL: try start_method='spawn')"
            ) from None
        except BaseException as error:  # the constructor's own error: say whose it was
            if held_back(error):
                note_build(error, self.index, self._start_method)
            raise

    def restart(self) -> None:
        """Kill the process (whatever it does) and start a fresh one; wait for its env.

        Ctrl-C waits until the new process runs (halfway, there would be no process, no
        pipe). It maps the old one's buffers at once: its handler may write there, and it
        knows which buffers to remove should the caller die.
        """
        specs = self.relaunch()
        self.finish_restart(specs)

    def relaunch(self) -> dict[str, tuple]:
        """Kill the process and start a new one (Ctrl-C waits); return the buffers it had."""
        specs = self._sent_specs
        with interrupts_deferred():
            self.terminate()
            self.start()
        return specs

    def finish_restart(self, specs: dict[str, tuple]) -> None:
        """Wait until a relaunched worker's env is built; map the buffers ``specs``."""
        try:
            self.wait_ready()
        except BaseException:
            self._sent_specs = specs  # what the next relaunch must map: this one never did
            raise
        with contextlib.suppress(WorkerCrashedError):  # the next request finds out
            self.ensure_attached(specs)

    def ensure_attached(self, specs: dict[str, tuple]) -> None:
        """Tell the worker of the shared buffers in ``specs`` it does not map yet."""
        if specs is self._attached:  # the same buffers as last time (the hot path)
            return
        sent = self._sent_specs
        changed = {field: spec for field, spec in specs.items() if sent.get(field) != spec}
        if changed:
            self.send(Attach(changed))
            sent.update(changed)
        self._attached = specs

    def terminate(self) -> None:
        """Kill the process at once and release its pipe."""
        with interrupts_deferred(), self._reaping:  # all of it, by one thread at a time
            if self._process is not None:
                if self._process.is_alive():
                    self._process.kill()
                self._process.join(CLOSE_TIMEOUT_S)
                # A call waiting in another thread may be reaping it this very moment.
                with contextlib.suppress(ValueError):
                    self._process.close()
            if self._conn is not None:
                self._conn.close()
            self._process, self._conn = None, None

    def kill(self) -> None:
        """Kill the process at once; its pipe stays open for a thread reading it (EOF)."""
        process = self._process
        with contextlib.suppress(ValueError):  # reaped by close() in another thread
            if process is not None:
                process.kill()  # a no-op once the process was waited for

    def request_close(self) -> None:
        """Ask the worker to close its env and exit (without waiting)."""
        if self._process is not None:
            with contextlib.suppress(WorkerCrashedError):
                self.send(Close())

    def close(self) -> None:
        """Ask the worker to close its env and exit; kill it if it does not in time."""
        self.request_close()
        self.finish_close()

    def finish_close(self, timeout: float = CLOSE_TIMEOUT_S) -> None:
        """Wait up to ``timeout`` s for a worker asked to close, then reap it."""
        if self._process is not None and self._process.is_alive():
            self._process.join(max(timeout, 0.0))
        self.terminate()

    @property
    def pid(self) -> int | None:
        """Process id of the worker."""
        process = self._process  # read once: close() in another thread may reap it
        with contextlib.suppress(ValueError):  # reaped (closed) by close() in another thread
            return None if process is None else process.pid
        return None

    @property
    def is_alive(self) -> bool:
        """Whether the worker process runs."""
        process = self._process
        with contextlib.suppress(ValueError):  # closed by close() in another thread
            return process is not None and process.is_alive()
        return False

    @property
    def connection(self) -> Connection:
        """The caller's end of the pipe (WorkerCrashedError if terminated or not restarted)."""
        if self._conn is None:
            raise self.crashed()
        return self._conn

    # Requests -------------------------------------------------------------------------------
    def send(self, body: Any) -> int:
        """Send a request (one of :mod:`plangym.vectorization.messages`); return its id."""
        return self.send_encoded(encode(Request(self._next_id, body)), type(body) is not Attach)

    def send_encoded(self, message: bytes, answered: bool = True) -> int:
        """Send a request already encoded; return its id (``answered``: it gets a reply)."""
        request_id = self._next_id
        self._next_id += 1
        connection = self.connection
        try:
            connection.send_bytes(message)
        except (OSError, ValueError) as error:
            raise self.crashed() from error
        if answered:
            self._awaiting.append(request_id)
        return request_id

    def receive(self, request_id: int, timeout: float | None = None) -> Any:
        """Wait for the reply to ``request_id`` (older ones are discarded); return it.

        Raises the worker's error, :class:`WorkerCrashedError` or :class:`TimeoutError`.
        """
        timeout = check_timeout(timeout)
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if request_id not in self._awaiting:  # a reply read before, or never asked
                raise RuntimeError(
                    f"worker {self.index}: the reply to request {request_id} was read already "
                    "(a later one was waited for first: replies come in the requests' order)"
                )
            # Without a deadline, a blocking read returns on a reply or on EOF (a death).
            left = None if deadline is None else max(deadline - time.monotonic(), 0.0)
            if left is not None and not self.connection.poll(left):
                raise TimeoutError(f"worker {self.index}: no reply within {timeout} s")
            reply = self.read_reply(*self.read_blob())
            if reply.request_id == request_id:
                return unwrap_reply(reply)

    def read_blob(self) -> tuple[bytes, int]:
        """Read one reply's bytes (one is there, or the worker died) and its request's id.

        The worker answers in order and the shortest replies carry no id
        (:func:`~plangym.vectorization.wire.encode`): it is the oldest one awaited.
        """
        try:
            return self.connection.recv_bytes(), self._awaiting.popleft()
        except (EOFError, OSError) as error:
            raise self.crashed() from error

    def read_reply(self, blob: bytes, request_id: int) -> Reply:
        """Decode the reply to ``request_id``.

        After an error the two ends may disagree (buffers the worker could not map, a dtype
        in a reply not unpickled here): the buffers are sent again, then the dtype comes again.
        """
        reply = None
        try:
            reply = decode_reply(blob, request_id)
        except Exception as error:  # say, an object of a class only the worker imported
            add_note(error, f"worker {self.index}'s reply could not be unpickled here")
            self._states_in.forget()
            raise
        finally:
            if reply is None or not reply.ok:  # the request may not have been unpickled
                self._states_out.forget()
                with contextlib.suppress(WorkerCrashedError):  # the next request finds out
                    self.send(Attach(dict(self._sent_specs)))
        return reply

    def crashed(self) -> WorkerCrashedError:
        """Return the error that describes this worker's death."""
        code, process = None, self._process  # read once: close() may reap it meanwhile
        if process is not None:
            with contextlib.suppress(ValueError):  # closed by close() in another thread
                process.join(0.1)
                code = process.exitcode
        return WorkerCrashedError(f"worker {self.index} (pid {self.pid}) died, exit code {code}")

    def send_step_chunk(self, request: StepChunk) -> int:
        """Send a chunk of a batch, its states' dtype only if the worker does not know it."""
        states = self._states_out.encode_states(request.states)
        try:
            return self.send(replaced(request, states=states))
        except BaseException:  # e.g. an action that cannot be pickled: nothing was sent
            self._states_out.forget()
            raise

    def decode_step_reply(self, reply: StepChunkReply) -> StepChunkReply:
        """Return ``reply`` with its states' dtype restored."""
        return replaced(reply, states=self._states_in.decode_states(reply.states))


def stop_workers(workers: list[WorkerProcess]) -> None:
    """Stop every worker: all asked first, so they exit together, then reaped.

    On Ctrl-C it still kills the rest before the KeyboardInterrupt goes on.
    """
    try:
        for worker in workers:
            worker.request_close()
        deadline = time.monotonic() + CLOSE_TIMEOUT_S  # for all of them: they close together
        for worker in workers:
            worker.finish_close(deadline - time.monotonic())
    except BaseException:
        for worker in workers:
            worker.terminate()
        raise
