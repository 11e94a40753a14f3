"""Errors of vectorized environments, on both faces: plangym's and gymnasium's vector API.

Each call-state error is also gymnasium's of the same name. A worker's error is raised in
the caller with its type, the worker's traceback as its ``__cause__`` (a
:class:`RemoteTraceback`).

>>> import gymnasium
>>> error = AlreadyPendingCallError("step_async: a reset is pending", "reset")
>>> isinstance(error, gymnasium.error.AlreadyPendingCallError), error.name
(True, 'reset')
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterable

import gymnasium

from plangym.validation.values import add_note


class VectorizedEnvError(RuntimeError):
    """Base class of the errors specific to vectorized environments."""


class AlreadyPendingCallError(VectorizedEnvError, gymnasium.error.AlreadyPendingCallError):
    """An asynchronous call is pending: collect it (its ``*_wait``) first."""

    def __init__(self, message: str, name: str = ""):
        # RuntimeError's __init__ runs; mypy checks the call against gymnasium's.
        super().__init__(message)  # type: ignore[call-arg]
        self.name = name


class NoAsyncCallError(VectorizedEnvError, gymnasium.error.NoAsyncCallError):
    """A ``*_wait`` call with no matching ``*_async`` call pending."""

    def __init__(self, message: str, name: str = ""):
        super().__init__(message)  # type: ignore[call-arg]  # as in AlreadyPendingCallError
        self.name = name


class ClosedEnvironmentError(VectorizedEnvError, gymnasium.error.ClosedEnvironmentError):
    """The environment was closed; it cannot be used any more."""


# What a call waiting on workers raises once close() (from another thread) took them.
CLOSED_WHILE_WAITING = (
    "Trying to operate on an env after a call to `close()`: it was closed while this call "
    "waited, and the call is abandoned."
)


class WorkerCrashedError(VectorizedEnvError):
    """A worker died and its work could not be re-run."""


class SubEnvCrashedError(WorkerCrashedError):
    """A sub-env's worker died during a call that cannot be re-run; it was restarted."""


class CallTimeoutError(multiprocessing.TimeoutError, TimeoutError):
    """A call ran out of time; the workers still busy with it were replaced."""


class RemoteTraceback(Exception):  # noqa: N818 - it is the traceback text, not an error
    """The traceback of an exception raised in a worker, printed as the cause."""

    def __init__(self, text: str):
        super().__init__(text)
        self.text = text

    def __str__(self) -> str:
        return f"\n\nTraceback in the worker:\n{self.text}"


def with_remote_traceback(error: BaseException, text: str) -> BaseException:
    """Return ``error`` with the worker's traceback ``text`` attached as its cause."""
    error.__cause__ = RemoteTraceback(text)
    return error


def held_back(error: BaseException) -> bool:
    """Whether ``error`` waits for the rest of a call: not this process's own Ctrl-C or exit.

    A KeyboardInterrupt or SystemExit that an env raised in a worker arrives with the
    worker's traceback: it is that env's error, like any other.

    >>> held_back(ValueError()), held_back(KeyboardInterrupt())
    (True, False)
    >>> held_back(with_remote_traceback(KeyboardInterrupt(), "in the env's step"))
    True
    """
    return isinstance(error, Exception) or isinstance(error.__cause__, RemoteTraceback)


def note_build(error: BaseException, worker: int, start_method: str) -> None:
    """Say whose build ``error`` was; a worker not forked may die of a script's main code."""
    if isinstance(error, WorkerCrashedError) and start_method != "fork":
        add_note(
            error,
            f"a worker started by {start_method} imports the main module again: a script "
            "needs its code under `if __name__ == '__main__':`",
        )
    add_note(error, f"raised while worker {worker} built its env")


def run_all(steps: Iterable[Callable[[], object]]) -> None:
    """Run every step, then raise the first exception any of them raised.

    One worker that cannot be repaired must not leave the others broken.

    >>> done = []
    >>> run_all([lambda: done.append(1), lambda: 1 / 0, lambda: done.append(3)])
    Traceback (most recent call last):
    ZeroDivisionError: division by zero
    >>> done
    [1, 3]
    """
    failures = []
    for step in steps:
        try:
            step()
        except BaseException as error:
            if not held_back(error):
                raise
            failures.append(error)
    if failures:
        raise failures[0]
