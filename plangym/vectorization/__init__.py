"""Vectorized environments: step batches on several workers with exact results."""

from plangym.vectorization.env import VectorizedEnv
from plangym.vectorization.errors import (
    AlreadyPendingCallError,
    ClosedEnvironmentError,
    NoAsyncCallError,
    WorkerCrashedError,
)
from plangym.vectorization.parallel import BatchEnv, ExternalProcess, ParallelEnv
from plangym.vectorization.ray import RayEnv, RemoteEnv

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
