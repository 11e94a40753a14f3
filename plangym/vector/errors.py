"""The errors of plangym's vector envs: gymnasium's and plangym's at once.

They are :mod:`plangym.vectorization.errors`, re-exported under the names gymnasium's vector
code catches (``VectorTimeoutError`` is a ``multiprocessing.TimeoutError``, like gymnasium's).
"""

from plangym.vectorization.errors import (
    AlreadyPendingCallError,
    ClosedEnvironmentError,
    NoAsyncCallError,
    SubEnvCrashedError,
)
from plangym.vectorization.errors import CallTimeoutError as VectorTimeoutError

__all__ = [
    "AlreadyPendingCallError",
    "ClosedEnvironmentError",
    "NoAsyncCallError",
    "SubEnvCrashedError",
    "VectorTimeoutError",
]
