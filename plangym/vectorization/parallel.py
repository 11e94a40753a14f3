"""Step batches on worker processes: :class:`ParallelEnv`.

>>> import plangym
>>> env = plangym.make("CartPole-v1", n_workers=2)
>>> state, obs, info = env.reset()
>>> states, observs, rewards, terminals, truncateds, infos = env.step_batch(
...     actions=[0, 1, 0], states=[state] * 3)
>>> single = env.plan_env.step_batch([0, 1, 0], states=[state] * 3)
>>> all(bool(a == b) for a, b in zip(states, single[0]))
True
>>> env.step_batch_async([1, 1], states=[state, state])
>>> len(env.step_batch_wait(timeout=30)[0])
2
>>> env.close()

plangym 0.1's ``BatchEnv``, ``ExternalProcess`` and ``Promise`` are importable from here
too (they live in :mod:`plangym.vectorization.compat`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from plangym.constructor import takes_parameters_of
from plangym.validation import check_start_method
from plangym.vectorization.backend import Backend
from plangym.vectorization.chunks import plan_chunks
from plangym.vectorization.compat import (
    BatchEnv,
    ExternalProcess,
    Promise,
    external_workers,
    stack_rows,
)
from plangym.vectorization.env import VectorizedEnv
from plangym.vectorization.process_backend import ProcessBackend

__all__ = [
    "BatchEnv",
    "ExternalProcess",
    "ParallelEnv",
    "Promise",
    "plan_chunks",
    "stack_rows",
]


class ParallelEnv(VectorizedEnv):
    """Steps batches on ``n_workers`` processes, with the single env's exact results.

    Takes :class:`~plangym.vectorization.env.VectorizedEnv`'s parameters (plangym 0.1's
    ``env_class, name, frameskip, autoreset, delay_setup, n_workers, blocking``, then the
    env's keywords), ``n_workers`` being the number of worker processes, plus:

    Args:
        args: :class:`~plangym.vectorization.env.VectorizedEnv`'s parameters, in its order.
        start_method: "fork", "spawn" or "forkserver"; None uses multiprocessing's default.
        kwargs: :class:`~plangym.vectorization.env.VectorizedEnv`'s parameters by name, and
            the env's keywords.
    """

    processes_per_cpu = 64  # see check_process_count: a slip, not a pool, past that

    @takes_parameters_of(VectorizedEnv.__init__)
    def __init__(self, *args: Any, start_method: str | None = None, **kwargs: Any):
        self._start_method = check_start_method("start_method", start_method)
        super().__init__(*args, **kwargs)

    def create_backend(self) -> Backend:
        """Start the worker processes (all at once) and wait until their envs are built."""
        space = getattr(self.plan_env, "observation_space", None)
        backend = ProcessBackend(
            obs_shape=self.plan_env.obs_shape or (),
            obs_dtype=getattr(space, "dtype", None) or np.float64,
        )
        constructors = [self.create_env_callable()] * self.n_workers
        backend.start(constructors, self._start_method, worker_class=ExternalProcess)
        return backend

    @property
    def batch_env(self) -> BatchEnv:
        """The workers as plangym 0.1's :class:`BatchEnv` (a view of this env's own)."""
        return BatchEnv.view(self.scheduler, self.blocking, self.plan_env, self.call_state)

    _batch_env = batch_env  # plangym 0.1's name

    @property
    def _wrappers(self) -> list | None:
        """The wrappers the env's copies apply, or None (plangym 0.1's attribute)."""
        wrappers = self._env_kwargs.get("wrappers")
        return None if wrappers is None else list(wrappers)

    @property
    def workers(self) -> list[ExternalProcess]:
        """The worker processes."""
        return external_workers(self.scheduler)
