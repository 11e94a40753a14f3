"""Errors raised by vectorized environments.

Errors raised inside a worker are re-raised in the caller with their original type; the
worker's traceback is attached as the ``__cause__`` (a :class:`RemoteTraceback`), so the
printed traceback shows where in the worker it happened.
"""

from __future__ import annotations


class VectorizedEnvError(RuntimeError):
    """Base class of the errors specific to vectorized environments."""


class AlreadyPendingCallError(VectorizedEnvError):
    """An asynchronous call is pending: collect it (``step_batch_wait``) first."""


class NoAsyncCallError(VectorizedEnvError):
    """``step_batch_wait`` was called with no ``step_batch_async`` pending."""


class ClosedEnvironmentError(VectorizedEnvError):
    """The environment was closed; it cannot be used any more."""


class WorkerCrashedError(VectorizedEnvError):
    """A worker died and its work could not be re-run (no states were supplied)."""


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
