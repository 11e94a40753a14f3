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

from plangym.core import PlanEnv
from plangym.vectorization.backend import Backend
from plangym.vectorization.chunks import plan_chunks
from plangym.vectorization.compat import (
    BatchEnv,
    ExternalProcess,
    Promise,
    external_workers,
    stack_rows,
)
from plangym.vectorization.costs import DispatchCosts
from plangym.vectorization.env import VectorizedEnv
from plangym.vectorization.process_backend import ProcessBackend
from plangym.vectorization.scheduler import Scheduler

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

    Args:
        env_class: The :class:`PlanEnv` class each worker builds.
        name: Environment name.
        frameskip: Passed to ``env_class``; None keeps its default, as ``make`` does.
        autoreset: Passed to ``env_class``; None keeps its default.
        delay_setup: Start the workers later, in :meth:`setup`.
        n_workers: Number of worker processes.
        blocking: Accepted for plangym 0.1 compatibility (calls always block unless made
            with ``step_batch_async``).
        start_method: "fork", "spawn" or "forkserver"; None uses multiprocessing's default.
        inline_small_batches: Step a batch that carries states in the calling process when
            the measured costs say a round trip to the workers would take longer (see
            :mod:`plangym.vectorization.costs`); results are the same either way.
        dispatch_costs: The cost estimates that decide it (default: learned from the
            batches run, starting from nothing measured).
        kwargs: Passed to ``env_class``.
    """

    def __init__(
        self,
        env_class: type[PlanEnv],
        name: str,
        frameskip: int | None = None,
        autoreset: bool | None = None,
        delay_setup: bool = False,
        n_workers: int = 8,
        blocking: bool = False,
        start_method: str | None = None,
        inline_small_batches: bool = True,
        dispatch_costs: DispatchCosts | None = None,
        **kwargs: Any,
    ):
        self._start_method = start_method
        super().__init__(
            env_class=env_class,
            name=name,
            frameskip=frameskip,
            autoreset=autoreset,
            delay_setup=delay_setup,
            n_workers=n_workers,
            blocking=blocking,
            inline_small_batches=inline_small_batches,
            dispatch_costs=dispatch_costs,
            **kwargs,
        )

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

    def create_scheduler(self, backend: Backend) -> Scheduler:
        """Return a scheduler that queues a second short chunk when the costs say so."""
        return Scheduler(backend, queue_depth=self.dispatch_costs.chunks_to_queue)

    @property
    def batch_env(self) -> BatchEnv:
        """The workers as plangym 0.1's :class:`BatchEnv` (a view of this env's own)."""
        return BatchEnv.view(self.scheduler, self.blocking)

    @property
    def _batch_env(self) -> BatchEnv:
        """Return :attr:`batch_env` (plangym 0.1's name for it)."""
        return self.batch_env

    @property
    def workers(self) -> list[ExternalProcess]:
        """The worker processes."""
        return external_workers(self.scheduler)
