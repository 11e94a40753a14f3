"""The errors of plangym's vector envs, catchable as gymnasium's and as plangym's.

Code written for ``gymnasium.vector.AsyncVectorEnv`` catches
``gymnasium.error.AlreadyPendingCallError`` and friends, and ``multiprocessing.TimeoutError``;
code written for plangym catches :mod:`plangym.vectorization.errors`. Each error here is
both, so either kind of ``except`` clause works unchanged.

>>> import gymnasium
>>> error = AlreadyPendingCallError("step_async: a reset is pending", "reset")
>>> isinstance(error, gymnasium.error.AlreadyPendingCallError), error.name
(True, 'reset')
"""

from __future__ import annotations

import multiprocessing

import gymnasium

from plangym.vectorization import errors as plangym_errors


class AlreadyPendingCallError(
    plangym_errors.AlreadyPendingCallError, gymnasium.error.AlreadyPendingCallError
):
    """A ``*_async`` call is pending: collect it with its ``*_wait`` first."""

    def __init__(self, message: str, name: str):
        super().__init__(message)
        self.name = name


class NoAsyncCallError(plangym_errors.NoAsyncCallError, gymnasium.error.NoAsyncCallError):
    """A ``*_wait`` call with no matching ``*_async`` call pending."""

    def __init__(self, message: str, name: str):
        super().__init__(message)
        self.name = name


class ClosedEnvironmentError(
    plangym_errors.ClosedEnvironmentError, gymnasium.error.ClosedEnvironmentError
):
    """The vector env was closed; it cannot be used any more."""


class VectorTimeoutError(multiprocessing.TimeoutError, TimeoutError):
    """A ``*_wait`` call ran out of time (the sub-envs still busy were restarted)."""


class SubEnvCrashedError(plangym_errors.WorkerCrashedError):
    """A sub-env's worker died during a call that cannot be re-run; it was restarted."""
