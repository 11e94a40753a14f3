"""A drop-in for gymnasium's ``AsyncVectorEnv`` on plangym's worker processes.

Same constructor and results, bit for bit; unlike gymnasium's, it stays usable when a
worker dies (it is replaced, its sub-env rebuilt and reset, its step reports a truncation
and ``info["worker_restarted"]``), when a sub-env raises (the error keeps its type) and
after a timeout (the sub-envs still busy are replaced). The hot path pickles nothing:
actions and results go through shared memory, and one byte wakes each worker.

>>> import gymnasium
>>> envs = AsyncVectorEnv([lambda: gymnasium.make("CartPole-v1")] * 2)
>>> len(set(envs.worker_pids))
2
>>> envs.close()
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import gymnasium
from gymnasium import Space
from gymnasium.vector import AutoresetMode

from plangym.validation import check_process_count, check_start_method, describe, is_integer
from plangym.vector.batch_outputs import BatchOutputs, rows_are_arrays
from plangym.vector.spaces import check_shared_memory
from plangym.vector.sub_env import SubEnvHandler
from plangym.vector.vector_env import PlanVectorEnv
from plangym.vectorization.handler import HandlerFactory
from plangym.vectorization.process_backend import ProcessBackend


class AsyncVectorEnv(PlanVectorEnv):
    """Each sub-env in a worker process of its own.

    Takes gymnasium's ``AsyncVectorEnv`` arguments: those of every :class:`PlanVectorEnv`
    (``env_fns`` are cloudpickled, so lambdas and notebook classes work; ``copy=False``
    returns the shared batch buffer), and:

    Args:
        shared_memory: Pass observations through shared memory (else they are pickled);
            as in gymnasium, a custom observation space then raises ValueError.
        context: A multiprocessing start method ("fork", "spawn", "forkserver"; None for
            the default).
        daemon: Start the workers as daemons (a daemon cannot start processes itself).
        worker: Must be None: plangym's workers run plangym's loop, which a function
            written for gymnasium's pipe protocol cannot replace.
        max_concurrency: At most this many sub-envs run ``reset`` or ``step`` at once
            (None: all); the others start as those finish. Other calls run on all.
    """

    def __init__(
        self,
        env_fns: Sequence[Callable[[], gymnasium.Env]],
        shared_memory: bool = True,
        copy: bool = True,
        context: str | None = None,
        daemon: bool = True,
        worker: Callable | None = None,
        observation_mode: str | tuple = "same",
        autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP,
        max_concurrency: int | None = None,
    ):
        if worker is not None:
            raise ValueError(
                "worker: expected None (plangym's workers run plangym's own loop; for a "
                f"custom worker function use gymnasium.vector.AsyncVectorEnv), received {worker!r}"
            )
        if max_concurrency is not None and (not is_integer(max_concurrency) or max_concurrency < 1):
            raise ValueError(
                f"max_concurrency: expected None or an integer >= 1, received "
                f"{describe(max_concurrency)}"
            )
        self.worker = None
        self.max_concurrency = None if max_concurrency is None else int(max_concurrency)
        self.shared_memory = shared_memory
        self.context, self.daemon = check_start_method("context", context), daemon
        self._take_arguments(env_fns, copy, observation_mode, autoreset_mode)
        check_process_count("env_fns", len(env_fns), self.processes_per_cpu, type(self).__name__)
        self._start_from_probe(self._start_workers)

    LOG_WORKER_ERRORS = True
    processes_per_cpu = 64  # see check_process_count: a slip, not a pool, past that

    def _start_workers(self, single: Space) -> tuple[ProcessBackend, BatchOutputs]:
        if self.shared_memory:
            check_shared_memory(single)
        n = len(self.env_fns)
        obs_shared = self.shared_memory and rows_are_arrays(single)
        backend = ProcessBackend(
            obs_shape=getattr(single, "shape", None) or (), obs_dtype=getattr(single, "dtype", None)
        )
        outputs: BatchOutputs | None = None
        try:
            # Every worker writes its sub-env's row of these arrays itself.
            outputs = BatchOutputs(single, n, backend.allocate, in_place=obs_shared)
            layout = {"outputs": "shared", "observation_space": single, "num_envs": n}
            layout["obs_shared"] = obs_shared
            factories = [
                HandlerFactory(SubEnvHandler, (env_fn, index, self.autoreset_mode), layout)
                for index, env_fn in enumerate(self.env_fns)
            ]
            backend.start(factories, self.context, self.daemon)
        except BaseException:
            # Rows still referenced keep their shared memory mapped (SharedArray.close).
            outputs = None
            backend.close(terminate=True)
            raise
        assert outputs is not None, "built before the workers start"
        return backend, outputs
