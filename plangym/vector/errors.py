"""The errors of plangym's vector envs: gymnasium's and plangym's at once, and their log.

:mod:`plangym.vectorization.errors`' errors under the names gymnasium's vector code catches
(``VectorTimeoutError`` is a ``multiprocessing.TimeoutError``, like gymnasium's).
"""

from __future__ import annotations

import traceback
from typing import TYPE_CHECKING

from gymnasium import logger

from plangym.vectorization.errors import (
    AlreadyPendingCallError,
    ClosedEnvironmentError,
    NoAsyncCallError,
    RemoteTraceback,
    SubEnvCrashedError,
)
from plangym.vectorization.errors import CallTimeoutError as VectorTimeoutError
from plangym.vectorization.ray_backend import RayShutDownError

if TYPE_CHECKING:
    from plangym.vectorization.scheduler import Batch

__all__ = [
    "AlreadyPendingCallError",
    "ClosedEnvironmentError",
    "NoAsyncCallError",
    "SubEnvCrashedError",
    "VectorTimeoutError",
    "log_worker_errors",
]


def worker_traceback(error: BaseException) -> str:
    """Return the traceback of ``error`` where it was raised: in its worker, if it has one.

    >>> print(worker_traceback(ValueError("bad")), end="")
    ValueError: bad
    """
    if isinstance(error.__cause__, RemoteTraceback):
        return error.__cause__.text
    return "".join(traceback.format_exception(error))


def log_worker_errors(batch: Batch) -> None:
    """Log each sub-env's error in ``batch`` with ``logger.error``, as gymnasium does.

    Errors of the whole env raised here (closed, its Ray connection shut down) come from no
    sub-env: they are raised, not logged.
    """
    failed = [
        task
        for task in batch.errors()
        if not isinstance(task.error, ClosedEnvironmentError | RayShutDownError)
    ]
    for task in failed:
        assert task.error is not None  # errors() lists the tasks that have one
        # A dead worker has no traceback of its own: the error says what was lost.
        died = isinstance(task.error, SubEnvCrashedError)
        fate = "its worker died: the sub-env was rebuilt, reset" if died else "the sub-env is kept"
        logger.error(
            f"Received the following error from Worker-{task.worker} during {batch.label} "
            f"({fate} and stays usable):"
        )
        logger.error(f"{task.error}\n" if died else worker_traceback(task.error))
    if failed:
        logger.error(f"Raising the error of Worker-{failed[0].worker} in the main process.")
