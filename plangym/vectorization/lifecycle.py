"""The call state of both faces, as gymnasium's ``AsyncVectorEnv`` keeps it.

An env is idle, has one asynchronous call pending (``step_batch_async``, ``reset_async``,
``step_async``, ``call_async``), or is closed. Every public method checks the state first
and, when it must refuse, raises before it changes anything:

* a call while another is pending raises :class:`AlreadyPendingCallError`;
* a ``*_wait`` with nothing of its kind pending raises :class:`NoAsyncCallError`;
* any call after ``close()`` raises :class:`ClosedEnvironmentError`.

A call holds the env while it runs (:meth:`CallState.held`): another thread's call waits
(their requests would meet on the same pipes), then sees a call left pending as above. A
``close()`` from another thread lets a running call end first (within a grace period), then
stops what it waits on and leaves the release to it (:meth:`CallState.release_when_free`):
nothing is freed under a running call, which ends with :class:`ClosedEnvironmentError`.

>>> class Door:
...     call_state = CallState("Door")
...     @idle_only
...     def open(self):
...         return "opened"
>>> door = Door()
>>> door.open()
'opened'
>>> door.call_state.closed = True
>>> door.open()
Traceback (most recent call last):
...
plangym.vectorization.errors.ClosedEnvironmentError: Trying to operate on `Door`, ...
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from plangym.vectorization.errors import (
    CLOSED_WHILE_WAITING,
    AlreadyPendingCallError,
    ClosedEnvironmentError,
    NoAsyncCallError,
)

Method = TypeVar("Method", bound=Callable[..., Any])


class CallState:
    """Whether an env is idle, waits for an asynchronous call (which one), or is closed.

    Args:
        owner: The env's class name, for messages.
    """

    def __init__(self, owner: str):
        self.owner = owner
        self.pid = os.getpid()  # the process whose workers, pipes and buffers these are
        self.closed = False
        self.pending: str | None = None  # the kind of call pending: "step", "reset", ...
        self.batch: Any = None  # what its *_wait collects
        self.lock = threading.RLock()  # held by the thread whose call runs (re-entrant)
        self._depth = 0  # nested calls of the thread holding the lock
        # What close() left to the call it interrupted, taken by one thread only.
        self._release: Callable[[], None] | None = None
        self._handover = threading.Lock()

    def __getstate__(self) -> dict:  # a copy of an env gets locks of its own
        unshared = ("lock", "_handover", "_release", "_depth")
        return {key: value for key, value in self.__dict__.items() if key not in unshared}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self.lock, self._handover = threading.RLock(), threading.Lock()
        self._release, self._depth, self.pid = None, 0, os.getpid()

    def check_running(self) -> None:
        """Raise :class:`ClosedEnvironmentError` once the env is closed.

        In a process forked from the one that built the env, RuntimeError: the workers'
        pipes and buffers are the parent's, and two processes using them mix their replies.
        """
        if os.getpid() != self.pid:
            raise RuntimeError(
                f"{self.owner}: this env's workers belong to process {self.pid}, which built "
                f"it; this process ({os.getpid()}) is a fork of it and shares their pipes: "
                "build an env of its own here"
            )
        if self.closed:
            raise ClosedEnvironmentError(
                f"Trying to operate on `{self.owner}`, after a call to `close()`."
            )

    def check_idle(self, method: str) -> None:
        """Raise unless ``method`` may run now: the env is open and nothing is pending."""
        self.check_running()
        if self.pending is not None:
            raise AlreadyPendingCallError(
                f"Calling `{method}` while waiting for a pending call to `{self.pending}` to "
                "complete.",
                self.pending,
            )

    def start(self, kind: str, batch: Any) -> None:
        """Remember the asynchronous call of ``kind`` just sent."""
        self.pending, self.batch = kind, batch

    def take(self, kind: str) -> Any:
        """Return the pending call of ``kind`` for its ``*_wait`` and go back to idle."""
        self.check_running()
        if self.pending != kind:
            raise NoAsyncCallError(
                f"Calling `{kind}_wait` without any prior call to `{kind}_async`.", kind
            )
        batch, self.pending, self.batch = self.batch, None, None
        return batch

    def close(self) -> Any:
        """Mark the env closed; return the batch of a call left pending, if any."""
        batch, self.pending, self.batch = self.batch, None, None
        self.closed = True
        return batch

    def held(self) -> CallState:
        """Hold the env for one call: ``with call_state.held():``.

        A call of another thread waits; a close() that stopped this call ends it with
        ClosedEnvironmentError.
        """
        return self

    # The context manager of held(), for blocks: the decorators below use run_held instead.
    def __enter__(self) -> None:
        self.lock.acquire()
        self._depth += 1

    def __exit__(self, kind: type | None, error: BaseException | None, trace: Any) -> None:
        try:
            self._depth -= 1
            self.after_call(error)
        finally:
            self.lock.release()

    def run_held(
        self, method: str | None, call: Callable[..., Any], /, *args: Any, **kwargs: Any
    ) -> Any:
        """Return ``call(*args, **kwargs)`` holding the env (checked idle first, given ``method``).

        The lock is taken by a C-level ``with``: a Ctrl-C cannot land between taking it and
        the block that gives it back (it did after ``lock.acquire()`` in ``__enter__``,
        which left the lock held and every other thread's call waiting for ever). The count
        changes with no call in between, so it is exact whenever the lock is held.
        """
        with self.lock:
            self._depth += 1
            try:
                if method is not None:
                    self.check_idle(method)
                result = call(*args, **kwargs)
            except BaseException as error:
                self._depth -= 1
                self.after_call(error)
                raise
            self._depth -= 1
            self.after_call(None)
            return result

    def after_call(self, error: BaseException | None) -> None:
        """Run what a close() meanwhile left to this call, once the outermost one ends."""
        with self._handover:  # a close() meanwhile left its release here, or saw no call
            release = None
            if not self._depth:
                release, self._release = self._release, None
        if release is not None:  # close() stopped this call
            try:
                release()
            finally:
                if not isinstance(error, ClosedEnvironmentError):
                    raise ClosedEnvironmentError(CLOSED_WHILE_WAITING)

    def release_when_free(
        self, release: Callable[[], None], interrupt: Callable[[], None], grace: float
    ) -> None:
        """Run ``release`` once no call holds the env.

        A call of another thread that still runs after ``grace`` seconds is interrupted
        (``interrupt`` stops the workers it waits on); that call, or one of this thread
        (close() from a callback), runs ``release`` itself when it ends: nothing is freed
        under a running call.
        """
        try:
            while not self.lock.acquire(timeout=grace):
                if self._hand_over(release):
                    interrupt()
                    return
                # The call ended between the wait and the hand-over: wait for the lock again.
        except BaseException:  # a Ctrl-C while waiting: the call (or a later one) releases
            with self._handover:
                self._release = release
            interrupt()
            raise
        try:
            if not self._hand_over(release):
                release()
        finally:
            self.lock.release()

    def _hand_over(self, release: Callable[[], None]) -> bool:
        """Leave ``release`` to the call that runs, if one does; say whether one does."""
        with self._handover:
            if not self._depth:
                return False
            self._release = release
            return True


def idle_only(method: Method) -> Method:
    """Make ``method`` hold its object's ``call_state`` and check it before anything else."""

    @functools.wraps(method)
    def checked(self: Any, *args: Any, **kwargs: Any) -> Any:
        return self.call_state.run_held(method.__name__, method, self, *args, **kwargs)

    return checked  # type: ignore[return-value]


def one_thread_at_a_time(method: Method) -> Method:
    """Make ``method`` hold its object's ``call_state`` while it runs (it checks it itself)."""

    @functools.wraps(method)
    def held(self: Any, *args: Any, **kwargs: Any) -> Any:
        return self.call_state.run_held(None, method, self, *args, **kwargs)

    return held  # type: ignore[return-value]
