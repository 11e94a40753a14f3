"""plangym 0.1's surface of ``plangym.vectorization.parallel``, kept apart from the hot path.

:class:`ExternalProcess`, :class:`Promise` and :class:`BatchEnv` (a view of a
``ParallelEnv``'s own backend and scheduler, or its own when built from workers).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator, Sequence
from typing import Any, cast

import numpy as np

from plangym.validation import (
    check_batch_action_values,
    check_batch_actions,
    check_batch_dt,
    check_batch_states,
    check_return_state,
    check_timeout,
    is_integer,
)
from plangym.vectorization.backend import BatchInputs
from plangym.vectorization.lifecycle import CallState
from plangym.vectorization.messages import Call, GetAttr
from plangym.vectorization.process import WorkerProcess
from plangym.vectorization.process_backend import ProcessBackend
from plangym.vectorization.scheduler import OnCrash, Scheduler


class Promise:
    """The future result of a request to an :class:`ExternalProcess`; call it to wait."""

    def __init__(self, worker: WorkerProcess, request_id: int):
        self.worker, self.request_id = worker, request_id
        self._result: tuple[bool, Any] | None = None  # (ok, value or error), once received

    def __call__(self, timeout: float | None = None) -> Any:
        """Block until the result is there and return it (again on later calls)."""
        timeout = check_timeout(timeout)  # a bad one consumes nothing
        if self._result is None:
            try:
                self._result = True, self.worker.receive(self.request_id, timeout=timeout)
            except TimeoutError:  # still to come: a later call waits again
                raise
            except Exception as error:
                self._result = False, error
        ok, value = self._result
        if not ok:
            raise value
        return value


class ExternalProcess(WorkerProcess):
    """A worker process with plangym 0.1's calls; takes :class:`WorkerProcess`'s arguments.

    Requests return :class:`Promise` objects (a worker's error is raised with its type).
    """

    def call(self, name: str, *args: Any, **kwargs: Any) -> Promise:
        """Call ``env.name(*args, **kwargs)`` in the worker; return a promise of the result."""
        return Promise(self, self.send(Call(name, args, kwargs)))

    def get_attr(self, name: str) -> Promise:
        """Promise of the worker env's attribute ``name``."""
        return Promise(self, self.send(GetAttr(name)))

    @functools.cached_property
    def observation_space(self) -> Any:
        """Observation space of the worker's env (asked once, then remembered)."""
        return self.get_attr("observation_space")()

    @functools.cached_property
    def action_space(self) -> Any:
        """Action space of the worker's env (asked once, then remembered)."""
        return self.get_attr("action_space")()

    def __getattr__(self, name: str) -> Any:
        """Any other public attribute is the worker env's, read through the pipe."""
        return self.get_attr(_forwardable(self, name))()

    def step(self, action: Any, state: Any = None, dt: int = 1, blocking: bool = True) -> Any:
        """Step the worker env once (see :meth:`PlanEnv.step`); a promise if not blocking."""
        return _maybe_block(self.call("step", action, state=state, dt=dt), blocking)

    def step_batch(
        self,
        actions: Sequence,
        states: Sequence | None = None,
        dt: Any = None,
        return_state: bool | None = None,
        blocking: bool = True,
    ) -> Any:
        """Step a batch in the worker env (results are pickled; ParallelEnv avoids that)."""
        dt = 1 if dt is None else dt  # plangym 0.1's default
        promise = self.call("step_batch", actions, states=states, dt=dt, return_state=return_state)
        return _maybe_block(promise, blocking)

    def reset(self, blocking: bool = True, return_states: bool = False) -> Any:
        """Reset the worker env: ``(state, obs, info)``, or ``(obs, info)`` without states."""
        return _maybe_block(self.call("reset", return_state=return_states), blocking)

    def set_state(self, state: Any, blocking: bool = True) -> Any:
        """Set the worker env's state; a promise if not blocking."""
        return _maybe_block(self.call("set_state", state), blocking)


def _maybe_block(promise: Promise, blocking: bool) -> Any:
    return promise() if blocking else promise


def _forwardable(owner: object, name: str) -> str:
    """Return ``name`` if ``owner.__getattr__`` may forward it, else raise AttributeError."""
    # Never private names, nor the class's own members (a property that failed, say).
    if name.startswith("_") or hasattr(type(owner), name):
        raise AttributeError(f"{type(owner).__name__!r} object has no attribute {name!r}")
    return name


def external_workers(scheduler: Scheduler) -> list[ExternalProcess]:
    """Return the workers of a scheduler that runs :class:`ExternalProcess` workers."""
    backend = scheduler.backend
    assert isinstance(backend, ProcessBackend)
    # A ProcessBackend holds the workers it was given or started, of the class it was told.
    return cast("list[ExternalProcess]", backend.workers)


def stack_rows(values: Sequence) -> np.ndarray:
    """One array of ``values``: stacked when they are arrays of one shape, else objects.

    >>> stack_rows([np.zeros(2), np.ones(2)]).shape, stack_rows([{}, {"a": 1}]).dtype
    ((2, 2), dtype('O'))
    """
    arrays = all(isinstance(value, np.ndarray) for value in values)
    if values and arrays and len({(v.shape, v.dtype) for v in values}) == 1:
        return np.stack(values)
    stacked = np.empty(len(values), dtype=object)
    stacked[:] = list(values)
    return stacked


class BatchEnv:
    """The workers of a ``ParallelEnv``, as plangym 0.1 exposed them.

    ``len()`` counts the workers, ``batch_env[i]`` is the i-th :class:`ExternalProcess`,
    and other public attributes are the first worker env's.

    Args:
        envs: The :class:`ExternalProcess` workers.
        blocking: Accepted for plangym 0.1 compatibility: chunks always run on all the
            workers at once.
        obs_shape: Shape of one observation (sizes the shared output buffers); None asks
            the first worker's observation space.
        obs_dtype: Dtype of the observations; None asks the first worker, as for the shape.
        queue_depth: How many chunks of a given size each worker is sent at once (see
            :class:`~plangym.vectorization.scheduler.Scheduler`).
    """

    def __init__(
        self,
        envs: list[ExternalProcess],
        blocking: bool = False,
        obs_shape: tuple | None = None,
        obs_dtype: Any = None,
        queue_depth: Callable[[int], int] | None = None,
    ):
        envs = list(envs)
        self.blocking = blocking
        if obs_shape is None or obs_dtype is None:
            space = envs[0].observation_space
            obs_shape = space.shape if obs_shape is None else obs_shape
            obs_dtype = space.dtype if obs_dtype is None else obs_dtype
        # Observations of another dtype than the buffers' travel with the reply, exact.
        backend = ProcessBackend(envs, obs_shape or (), obs_dtype or np.float64)
        self.scheduler = Scheduler(backend, queue_depth=queue_depth)

    # Checks a batch's states: a ParallelEnv's local env (a view), else the first worker.
    _checker: Any = None
    # A view's calls hold its ParallelEnv's turn: its close() frees nothing under them.
    _call_state: CallState | None = None

    @classmethod
    def view(
        cls, scheduler: Scheduler, blocking: bool, checker: Any, call_state: CallState
    ) -> BatchEnv:
        """Return the ``BatchEnv`` of a ``ParallelEnv``'s scheduler, local env and call state."""
        batch_env = cls.__new__(cls)
        batch_env.scheduler, batch_env.blocking = scheduler, blocking
        batch_env._checker, batch_env._call_state = checker, call_state
        return batch_env

    @contextlib.contextmanager
    def _turn(self) -> Iterator[None]:
        """Hold the ParallelEnv of a view while a call runs (refused once it is closed)."""
        if self._call_state is None:
            yield
            return
        with self._call_state.held():
            self._call_state.check_running()
            yield

    @property
    def workers(self) -> list[ExternalProcess]:
        """The worker processes."""
        return external_workers(self.scheduler)

    _envs = workers  # plangym 0.1's name

    def __len__(self) -> int:
        """Return the number of workers."""
        return len(self.workers)

    def __getitem__(self, index: int) -> ExternalProcess:
        """Return the worker at ``index``."""
        return self.workers[index]

    def __getattr__(self, name: str) -> Any:
        """Any other public attribute is the first worker env's (plangym 0.1 forwarding)."""
        return getattr(self.workers[0], _forwardable(self, name))

    n_workers = property(__len__)

    def sync_states(self, state: Any, blocking: bool = True) -> list[Promise] | None:
        """Set every worker's env to ``state`` (``blocking=False``: one :class:`Promise` each)."""
        if not blocking:
            return [worker.set_state(state, blocking=False) for worker in self.workers]
        with self._turn():
            self.scheduler.broadcast_all(Call("set_state", (state,)), "set_state", OnCrash.RERUN)
        return None

    def reset(self, indices: Sequence[int] | None = None, return_states: bool = True) -> tuple:
        """Reset the workers' envs (those at ``indices``, default all), all at once.

        Returns plangym 0.1's stacked batch: ``(states, observs, infos)`` arrays, one row
        per worker reset, or ``(observs, infos)`` without ``return_states``.
        """
        n = self.n_workers
        if indices is None:
            indices = range(n)
        else:  # before any worker is reset
            bad = [index for index in indices if not is_integer(index) or not 0 <= index < n]
            if bad:
                raise ValueError(f"indices: expected worker indices in 0..{n - 1}, got {bad[0]!r}")
            indices = [int(index) for index in indices]
        request = Call("reset", (), {"return_state": return_states})
        with self._turn():
            results = self.scheduler.broadcast(dict.fromkeys(indices, request), "reset")
        return tuple(stack_rows(column) for column in zip(*results, strict=True))

    def make_transitions(
        self,
        actions: Sequence | np.ndarray,
        states: Sequence | np.ndarray | None = None,
        dt: int | Sequence[int] = 1,
        return_state: bool | None = None,
    ) -> tuple[list, ...]:
        """Step a batch on the workers, checked first (see :meth:`PlanEnv.step_batch`)."""
        with self._turn():
            return self._make_transitions(actions, states, dt, return_state)

    def _make_transitions(self, actions: Any, states: Any, dt: Any, return_state: Any) -> tuple:
        return_state = check_return_state(return_state)
        actions = check_batch_actions(actions)
        dts = check_batch_dt(dt, len(actions))
        states = check_batch_states(states, len(actions))
        check_batch_action_values(self.workers[0].action_space, actions)
        if states is not None:  # every state, before any worker steps its chunk
            if self._checker is not None:
                self._checker.check_states(list(states))
            else:
                self.workers[0].call("check_states", list(states))()
        want_state = return_state if return_state is not None else states is not None
        return self.scheduler.run(BatchInputs(actions, states, dts, want_state)).columns()

    def close(self) -> None:
        """Stop every worker and free the shared buffers."""
        self.scheduler.close()
