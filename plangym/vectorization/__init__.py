"""Vectorized environments: step batches on several workers with exact results."""

from plangym.vectorization.compat import BatchEnv, ExternalProcess
from plangym.vectorization.env import VectorizedEnv
from plangym.vectorization.errors import (
    AlreadyPendingCallError,
    ClosedEnvironmentError,
    NoAsyncCallError,
    WorkerCrashedError,
)
from plangym.vectorization.parallel import ParallelEnv
from plangym.vectorization.ray import RayEnv
from plangym.vectorization.ray_actor import RemoteEnv

__all__ = [
    "AlreadyPendingCallError",
    "BatchEnv",
    "ClosedEnvironmentError",
    "ExternalProcess",
    "NoAsyncCallError",
    "ParallelEnv",
    "RayEnv",
    "RemoteEnv",
    "VectorizedEnv",
    "WorkerCrashedError",
]
