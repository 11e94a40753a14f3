"""Sub-envs in worker processes: pipes for commands, shared memory for the data.

Observations, rewards and flags are written by each worker into the caller's shared
arrays; an array batch of actions is copied once into a shared action buffer and each
worker is sent one byte. Only infos that are not empty, and the answers of other commands,
are pickled. A worker that dies is noticed on the next read and replaced.

>>> import gymnasium
>>> from gymnasium.vector import AutoresetMode
>>> from plangym.vector.commands import Reset
>>> workers = ProcessWorkers(
...     [lambda: gymnasium.make("CartPole-v1")] * 2, AutoresetMode.NEXT_STEP,
...     gymnasium.spaces.Box(-5, 5, (4,)))
>>> workers.send(0, Reset(seed=1))
>>> workers.receive(0), workers.outputs.observations().shape
({}, (2, 4))
>>> workers.close()
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import weakref
from collections.abc import Callable, Sequence
from multiprocessing.connection import wait
from typing import Any

import gymnasium
import numpy as np
from gymnasium import Space
from gymnasium.vector import AutoresetMode

from plangym.vector.batch_outputs import BatchOutputs, rows_are_arrays
from plangym.vector.commands import AttachActions, Reset, Restarted, Step
from plangym.vector.process_worker import (
    NOTHING_TO_SAY,
    STEP_FROM_BUFFER,
    WorkerSetup,
    run_sub_env_worker,
)
from plangym.vector.workers import SubEnvWorkers, mark_restarted
from plangym.vectorization.errors import with_remote_traceback
from plangym.vectorization.messages import Close, decode, dumps
from plangym.vectorization.process import WorkerProcess, stop_workers
from plangym.vectorization.shared_memory import SharedArray, interrupts_deferred

OBSERVING = (Reset, Step, Restarted)  # commands whose answer is an info (obs in outputs)


class SharedArrays:
    """The shared arrays a caller creates for its workers, removed together on close."""

    def __init__(self):
        self.arrays: list[SharedArray] = []

    def allocate(self, shape: tuple, dtype: Any) -> np.ndarray:
        """Return a new zeroed shared array (the allocator :class:`BatchOutputs` takes)."""
        shared = SharedArray(shape, dtype)
        self.arrays.append(shared)
        shared.array[...] = 0
        return shared.array

    @property
    def specs(self) -> list[tuple]:
        """What a worker needs to map each array, in allocation order."""
        return [shared.spec for shared in self.arrays]

    def release(self, shared: SharedArray) -> None:
        """Remove one array."""
        self.arrays.remove(shared)
        shared.close()

    def close(self) -> None:
        """Remove every array."""
        with interrupts_deferred():
            for shared in self.arrays:
                shared.close()
            self.arrays.clear()


class ProcessWorkers(SubEnvWorkers):
    """One worker process per sub-env.

    Args:
        env_fns: One constructor per sub-env (cloudpickled: lambdas work).
        autoreset_mode: The vector env's autoreset mode.
        observation_space: The single observation space (lays out the shared rows).
        shared_memory: Pass observations through shared memory (else pickled).
        context: A multiprocessing start method (None: the default one).
        daemon: Start the workers as daemons.
    """

    def __init__(
        self,
        env_fns: Sequence[Callable[[], gymnasium.Env]],
        autoreset_mode: AutoresetMode,
        observation_space: Space,
        shared_memory: bool = True,
        context: str | None = None,
        daemon: bool = True,
    ):
        self.num_envs = len(env_fns)
        self._shared = SharedArrays()
        self._resources = _Resources(self._shared)
        self._finalizer = weakref.finalize(self, self._resources.release)
        self.obs_shared = shared_memory and rows_are_arrays(observation_space)
        self.outputs = BatchOutputs(
            observation_space, self.num_envs, self._shared.allocate, in_place=self.obs_shared
        )
        self._pending: list[Any] = [None] * self.num_envs
        self._actions: SharedArray | None = None
        self._actions_seen: list[tuple | None] = [None] * self.num_envs
        try:
            self._start_workers(env_fns, autoreset_mode, observation_space, context, daemon)
        except BaseException:  # one env could not be built: stop the others at once
            self._finalizer()
            raise

    def _start_workers(
        self,
        env_fns: Sequence[Callable[[], gymnasium.Env]],
        autoreset_mode: AutoresetMode,
        observation_space: Space,
        context: str | None,
        daemon: bool,
    ) -> None:
        specs, mp_context = self._shared.specs, mp.get_context(context)
        for index, env_fn in enumerate(env_fns):
            setup = WorkerSetup(
                env_fn,
                index,
                autoreset_mode,
                observation_space,
                self.num_envs,
                specs,
                self.obs_shared,
            )
            self._resources.workers.append(
                WorkerProcess(
                    setup,
                    index,
                    mp_context,
                    wait_ready=False,
                    target=run_sub_env_worker,
                    daemon=daemon,
                    close_message=dumps(Close()),
                )
            )
        for worker in self._resources.workers:
            worker.wait_ready()

    @property
    def workers(self) -> list[WorkerProcess]:
        """The worker processes, one per sub-env."""
        return self._resources.workers

    @property
    def worker_pids(self) -> tuple[int | None, ...]:
        """Process id of each sub-env's worker."""
        return tuple(worker.pid for worker in self.workers)

    # Commands ---------------------------------------------------------------------------------
    def send(self, index: int, command: Any) -> None:
        """Send ``command`` to sub-env ``index``'s worker."""
        self._pending[index] = command
        self._send_bytes(index, dumps(command))

    def send_steps(self, actions: Any, items: list) -> None:
        """Copy an array batch into the shared action buffer, then wake every worker."""
        if not isinstance(actions, np.ndarray) or actions.dtype.hasobject:
            super().send_steps(actions, items)
            return
        buffer = self._action_buffer(actions)
        buffer[...] = actions
        spec = self._actions.spec
        step = Step()
        for index in range(self.num_envs):
            self._pending[index] = step
            if self._actions_seen[index] != spec:
                self._send_bytes(index, dumps(AttachActions(spec)))
                self._actions_seen[index] = spec
            self._send_bytes(index, STEP_FROM_BUFFER)

    def _action_buffer(self, actions: np.ndarray) -> np.ndarray:
        """Return a shared buffer shaped and typed like ``actions`` (replaced on change)."""
        current = self._actions
        if current is None or current.shape != actions.shape or current.dtype != actions.dtype:
            if current is not None:
                self._shared.release(current)
            self._actions = None
            self._shared.allocate(actions.shape, actions.dtype)
            self._actions = self._shared.arrays[-1]
        return self._actions.array

    def _send_bytes(self, index: int, message: bytes) -> None:
        # A dead worker (a closed pipe): its receive says so.
        with contextlib.suppress(OSError, ValueError, AttributeError):
            self.workers[index].connection.send_bytes(message)

    def ready(self, indices: list[int], timeout: float | None) -> list[int]:
        """Return the sub-envs among ``indices`` whose worker answered (or died)."""
        if timeout is None:
            return list(indices)  # a blocking read returns on the answer or on EOF
        connections = {self.workers[index].connection: index for index in indices}
        return [connections[conn] for conn in wait(list(connections), timeout)]

    def receive(self, index: int) -> Any:
        """Read sub-env ``index``'s answer (see :meth:`SubEnvWorkers.receive`)."""
        worker = self.workers[index]
        try:
            blob = worker.connection.recv_bytes()
        except (EOFError, OSError, AttributeError) as error:
            raise worker.crashed() from error
        command, self._pending[index] = self._pending[index], None
        if blob == NOTHING_TO_SAY:
            return {}
        reply = decode(blob)
        if not reply.ok:
            raise with_remote_traceback(reply.payload, reply.traceback)
        if isinstance(command, OBSERVING) and not self.obs_shared:
            obs, info = reply.payload
            self.outputs.write_obs(index, obs)
            return info
        return reply.payload

    def restart(self, index: int) -> dict:
        """Replace sub-env ``index``'s worker by a fresh one and reset its sub-env."""
        self.workers[index].restart()
        self._actions_seen[index] = None
        self.send(index, Restarted())
        info = self.receive(index)
        mark_restarted(self.outputs, index)
        return info

    def close(self, terminate: bool = False) -> None:
        """Stop every worker and remove the shared arrays."""
        if terminate:
            for worker in self.workers:
                worker.terminate()
        self._finalizer()


class _Resources:
    """What a backend must release, held apart so its finalizer keeps no backend alive."""

    def __init__(self, shared: SharedArrays):
        self.workers: list[WorkerProcess] = []
        self.shared = shared

    def release(self) -> None:
        """Stop every worker, then remove the shared arrays (this runs once)."""
        try:
            stop_workers(self.workers)
        finally:
            self.shared.close()
