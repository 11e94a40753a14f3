"""The base of vectorized environments: a local env plus workers that share batches.

Subclasses only say what a worker is (:meth:`VectorizedEnv.create_backend`); a
``SINGLETON`` class's local env lives in a worker (:mod:`~plangym.vectorization.worker_env`).

>>> VectorizedEnv.batch_step_data([0, 1, 1], None, 2, batch_size=2)
([[None, None], [None]], [[0, 1], [1]], [[2, 2], [2]])
"""

from __future__ import annotations

import functools
import reprlib
import time
from abc import abstractmethod
from collections.abc import Callable, Sequence
from typing import Any

from plangym.columns import BatchColumns, BatchInput, columns_of
from plangym.constructor import constructor_defaults
from plangym.core import PlanEnv
from plangym.validation import (
    all_alike,
    check_flag,
    check_process_count,
    check_return_state,
    check_timeout,
    check_values_per_worker,
)
from plangym.vectorization.backend import Backend, BatchInputs
from plangym.vectorization.calls import unpack_transitions
from plangym.vectorization.chunks import batch_step_data, split_similar_chunks
from plangym.vectorization.costs import DispatchCosts
from plangym.vectorization.lifecycle import CallState, idle_only, one_thread_at_a_time
from plangym.vectorization.local_env import LocalEnvAPI
from plangym.vectorization.messages import Call, GetAttr, SetAttr
from plangym.vectorization.process import CLOSE_TIMEOUT_S
from plangym.vectorization.scheduler import OnCrash, Scheduler
from plangym.vectorization.worker_env import build_local_env


class VectorizedEnv(LocalEnvAPI, PlanEnv):
    """A :class:`PlanEnv` that steps batches on several workers.

    The local env and every worker's env are built as ``env_class(name, **kwargs)``, with
    the keywords given here only. Public methods refuse to run while an asynchronous batch
    is pending or after :meth:`close` (:mod:`plangym.vectorization.lifecycle`); other
    public attributes are the local env's.

    Args:
        env_class: The :class:`PlanEnv` class every worker builds.
        name: Environment name passed to ``env_class``.
        frameskip: Passed to ``env_class``; None leaves its default (5 for Atari, 1 for
            classic control).
        autoreset: Passed to ``env_class``; None leaves its default.
        delay_setup: Build the local env and the workers later, in :meth:`setup`.
        n_workers: Number of workers.
        blocking: Accepted for plangym 0.1 compatibility (calls always block unless made
            with ``step_batch_async``).
        inline_small_batches: Step a batch with states in the calling process when the
            measured costs (:mod:`plangym.vectorization.costs`) say it is faster; results
            are the same either way.
        dispatch_costs: The cost estimates that decide it (default: learned from scratch).
        kwargs: Passed to ``env_class``.
    """

    _start_method: str | None = None  # how worker processes start (ParallelEnv's parameter)
    _differing: frozenset[str] = frozenset()  # attributes set_attr set apart per worker
    processes_per_cpu: int | None = None  # for worker processes: how many per CPU at most

    def __init__(
        self,
        env_class: type[PlanEnv],
        name: str,
        frameskip: int | None = None,
        autoreset: bool | None = None,
        delay_setup: bool = False,
        n_workers: int = 8,
        blocking: bool = False,
        *,
        inline_small_batches: bool = True,
        dispatch_costs: DispatchCosts | None = None,
        **kwargs: Any,
    ):
        self._blocking = blocking
        self.inline_small_batches = check_flag("inline_small_batches", inline_small_batches)
        self._n_workers = check_process_count(
            "n_workers", n_workers, self.processes_per_cpu, type(self).__name__
        )
        self.dispatch_costs = DispatchCosts.checked(dispatch_costs, self._n_workers)
        self._env_class = env_class
        self.call_state = CallState(type(self).__name__)
        self._scheduler: Scheduler | None = None
        # Only what the caller passed: the env class fills in the rest.
        self._env_kwargs = dict(kwargs)
        given = {"frameskip": frameskip, "autoreset": autoreset}
        self._env_kwargs.update({key: value for key, value in given.items() if value is not None})
        self._env_kwargs.pop("delay_setup", None)
        self._plan_env: PlanEnv | None = None
        # Until the local env exists (delay_setup), its values as its signature gives them.
        expected = {**constructor_defaults(env_class), **self._env_kwargs}
        super().__init__(
            name=name,
            frameskip=expected.get("frameskip", 1),
            autoreset=expected.get("autoreset", True),
            delay_setup=delay_setup,
            return_image=bool(expected.get("return_image", False)),
        )

    def __repr__(self) -> str:
        given = "".join(f", {key}={reprlib.repr(value)}" for key, value in self._env_kwargs.items())
        head = f"{type(self).__name__}(name={self.name!r}, n_workers={self.n_workers}"
        return f"{head}, env_class={self._env_class.__name__}{given})"  # and the user's settings

    # Construction ---------------------------------------------------------------------------
    def create_env_callable(self, **kwargs: Any) -> Callable[[], PlanEnv]:
        """Return a picklable callable that builds one env like this one's.

        It gets this env's keywords (``kwargs`` overriding them) and nothing else.
        """
        env_kwargs = {**self._env_kwargs, **kwargs, "delay_setup": False}
        return functools.partial(self._env_class, name=self.name, **env_kwargs)

    @idle_only
    def setup(self) -> None:
        """Build the local env (a ``SINGLETON`` env's in a worker process), then the workers."""
        plan_env = build_local_env(self.create_env_callable(), self._env_class, self._start_method)
        self._plan_env = plan_env
        # The built env's own, whatever its signature says (frameskip etc.: LocalEnvAPI).
        self._return_image = plan_env.return_image
        self._scheduler = self.create_scheduler(self.create_backend())

    @abstractmethod
    def create_backend(self) -> Backend:
        """Start the workers; return them as a :class:`Backend`."""

    def create_scheduler(self, backend: Backend) -> Scheduler:
        """Return the scheduler of this env's batches (subclasses tune its chunking)."""
        return Scheduler(backend)

    # Properties ---------------------------------------------------------------------------
    @property
    def n_workers(self) -> int:
        """Number of workers."""
        return self._n_workers

    @property
    def blocking(self) -> bool:
        """Whether calls block (plangym 0.1's flag): they do, unless made with ``*_async``."""
        return self._blocking

    @property
    def plan_env(self) -> PlanEnv:
        """The env serving single steps, properties and input checks (see :meth:`setup`)."""
        if self._plan_env is None:
            self.setup()
            assert self._plan_env is not None  # setup() built it
        return self._plan_env

    @property
    def scheduler(self) -> Scheduler:
        """The scheduler running this env's batches on its workers."""
        self.call_state.check_running()
        if self._scheduler is None:
            self.setup()
            assert self._scheduler is not None  # setup() started it
        return self._scheduler

    # As the vector envs': each worker's process id (a Ray actor's; None where not known).
    worker_pids = property(lambda self: self.scheduler.backend.worker_pids, doc="Worker pids.")

    # Batches --------------------------------------------------------------------------------
    @idle_only
    def step_batch(
        self,
        actions: BatchInput,
        states: BatchInput | None = None,
        dt: int | BatchInput = 1,
        return_state: bool | None = None,
        arrays: bool = False,
        copy: bool = True,
    ) -> tuple[Any, ...]:  # lists, or with arrays=True arrays and a dict of infos
        """Step a batch: the contract of :meth:`PlanEnv.step_batch`.

        With states, results are bit-identical to the single env's and no env moves.
        Without states, each worker steps its chunk on from its own state: the local env's
        after :meth:`reset`, :meth:`set_state` or :meth:`sync_states`, then where its last
        stateless chunk ended.
        """
        # Checked by the local env, stepped by run_batch_columns (run_columns).
        return PlanEnv.step_batch(self, actions, states, dt, return_state, arrays, copy)

    # plangym 0.1's name for step_batch: the same checks, the same results.
    make_transitions = step_batch

    # PlanEnv's: its run_batch_columns is the one below; its clone repeats the constructor call.
    run_batch = idle_only(PlanEnv.run_batch)
    clone = idle_only(PlanEnv.clone)

    @idle_only
    def run_batch_columns(
        self,
        actions: Any,
        states: Any,
        dts: list[int],
        want_state: bool,
        observs_out: Any = None,
        copy: bool = True,
    ) -> BatchColumns:
        """Step a checked batch (see :meth:`PlanEnv.run_batch_columns`) with :meth:`run_columns`.

        ``observs_out`` is not written: the observations come back as the workers send them.
        """
        return self.run_columns(BatchInputs(actions, states, dts, want_state, copy))

    def run_columns(self, inputs: BatchInputs) -> BatchColumns:
        """Step a checked batch where it is cheapest: here for a few cheap states."""
        started = time.perf_counter()
        size = len(inputs)
        dt = sum(inputs.dts) / size if size else 1.0  # the costs count env steps
        if (
            inputs.states is not None
            and self.inline_small_batches
            and not self._differing
            and self.dispatch_costs.prefer_local(size, dt)
        ):
            # A batch with states moves no env, here as on the workers (PlanEnvHandler).
            plan_env = self.plan_env
            with plan_env.state_kept():
                columns = plan_env.run_batch_columns(
                    inputs.actions, inputs.states, inputs.dts, inputs.want_state
                )
            self.dispatch_costs.record_local(size, time.perf_counter() - started, dt)
            return columns
        batch = self.scheduler.run(inputs)
        costs = batch.chunk_costs()
        if costs:
            chunk_size, compute_s = max(costs)
            wall_s = time.perf_counter() - started
            self.dispatch_costs.record_remote(chunk_size, compute_s, wall_s, size, dt)
        return columns_of(batch.columns(), inputs.want_state)

    @idle_only
    def step_batch_async(
        self,
        actions: BatchInput,
        states: BatchInput | None = None,
        dt: int | BatchInput = 1,
        return_state: bool | None = None,
        copy: bool = True,
    ) -> None:
        """Check a batch and send it to the workers; collect it with :meth:`step_batch_wait`.

        Any other call before :meth:`step_batch_wait` raises ``AlreadyPendingCallError``.
        ``copy=False``: see :meth:`PlanEnv.step_batch`.
        """
        copy, return_state = check_flag("copy", copy), check_return_state(return_state)
        checked_actions, checked_states, dts = self.check_batch(actions, states, dt)
        want_state = return_state if return_state is not None else checked_states is not None
        inputs = BatchInputs(checked_actions, checked_states, dts, want_state, copy)
        self.call_state.start("step_batch", self.scheduler.dispatch(inputs))

    @one_thread_at_a_time
    def step_batch_wait(self, timeout: float | None = None) -> tuple[list, ...]:
        """Wait for the pending batch and return its results.

        Raises ``NoAsyncCallError`` when nothing is pending, and :class:`TimeoutError`
        after ``timeout`` s (the batch abandoned, its workers replaced: the env stays usable).
        """
        timeout = check_timeout(timeout)  # a bad one leaves the batch pending
        batch = self.call_state.take("step_batch")
        return self.scheduler.gather(batch, timeout).columns()

    # Whole-env requests ----------------------------------------------------------------------
    @idle_only
    def sync_states(self, state: Any = None) -> None:
        """Put every worker in ``state`` (default: the local env's state).

        A worker that dies meanwhile is replaced and set to the state too.
        """
        if state is None:
            state = self.plan_env.get_state()
        else:  # refused here, as by set_state, before any worker sees it
            state = self.plan_env.thawed_state(state)
            self.plan_env.check_state(state)
        self.scheduler.broadcast_all(Call("set_state", (state,)), "set_state", OnCrash.RERUN)

    @idle_only
    def call(self, name: str, *args: Any, **kwargs: Any) -> list:
        """Call ``env.name(*args, **kwargs)`` in every worker; return their results."""
        return self.scheduler.broadcast_all(Call(name, args, kwargs), name)

    @idle_only
    def get_attr(self, name: str) -> list:
        """Return attribute ``name`` of every worker's env."""
        return self.scheduler.broadcast_all(GetAttr(name), name)

    @idle_only
    def set_attr(self, name: str, values: Any) -> None:
        """Set attribute ``name`` in every worker's env: one value each, or one for all.

        One value for all goes to the local env first (checked before any worker sees it).
        Different values make the workers differ: batches with states then run on them.
        """
        values = check_values_per_worker(values, self.n_workers)
        alike = all_alike(values)
        if alike:
            setattr(self.plan_env, name, values[0])
        requests = {i: SetAttr(name, value) for i, value in enumerate(values)}
        batch = self.scheduler.set_attributes(requests, name)
        # A worker that refused its value keeps another: the workers and the local env differ.
        same = alike and not batch.errors()
        self._differing = (self._differing - {name}) if same else (self._differing | {name})
        self.scheduler.raise_first(batch)

    def close(self) -> None:
        """Stop the workers and close the local env; later calls raise ClosedEnvironmentError.

        A call running in another thread may end first, for up to ``CLOSE_TIMEOUT_S``
        seconds; then its workers are stopped and it raises ClosedEnvironmentError.
        """
        call_state = getattr(self, "call_state", None)
        if call_state is None or call_state.closed:
            return
        call_state.close()
        scheduler = self._scheduler
        interrupt = scheduler.backend.interrupt if scheduler is not None else lambda: None
        call_state.release_when_free(self._release, interrupt, CLOSE_TIMEOUT_S)

    def _release(self) -> None:
        if self._scheduler is not None:
            self._scheduler.close()
        if self._plan_env is not None:
            self._plan_env.close()

    def __getstate__(self) -> dict:
        raise TypeError(
            f"{type(self).__name__} cannot be pickled or deep-copied: it owns its workers. "
            "Pickle its plan_env, or build a copy with clone()"
        )

    # plangym 0.1's helpers for splitting and joining batches by hand.
    split_similar_chunks = staticmethod(split_similar_chunks)

    @classmethod
    def batch_step_data(cls, actions: Sequence, states: Any, dt: Any, batch_size: int) -> tuple:
        """Split a batch as plangym 0.1 did (:func:`~.chunks.batch_step_data`)."""
        return batch_step_data(actions, states, dt, batch_size)

    unpack_transitions = staticmethod(unpack_transitions)
