"""Step batches on a Ray cluster: :class:`RayEnv`, whose workers are :class:`RemoteEnv` actors.

``RayEnv`` has the contract of :class:`~plangym.vectorization.parallel.ParallelEnv`:
``step_batch`` returns exactly what the single env returns on the same inputs, in input
order, and the workers are Ray actors that may live on any node of a cluster. Ray is an
optional dependency (``pip install "plangym[ray]"``); this module imports without it and
only building a ``RayEnv`` needs it.

>>> import plangym
>>> env = plangym.make("CartPole-v1", n_workers=2, ray=True)  # doctest: +SKIP
>>> state, obs, info = env.reset()  # doctest: +SKIP
>>> states, observs, rewards, terminals, truncateds, infos = env.step_batch(
...     actions=[0, 1, 0], states=[state] * 3)  # doctest: +SKIP
>>> env.close()  # doctest: +SKIP

What crosses between the caller and an actor, per chunk of a batch: the states as one
byte blob (:func:`~plangym.vectorization.transport.pack_states`), the observations as one
stacked array, rewards and flags as arrays, the infos as one list. Anything that does not
fit exactly (observations of different shapes, rewards that are not Python floats) travels
as a list instead, so results stay bit-identical.

>>> import numpy as np
>>> payload = pack_columns((None, [np.zeros(2), np.ones(2)], [1.0, 0.5], [False, True],
...                         [False, False], [{}, {}]))
>>> type(payload[1]).__name__, payload[1].shape, payload[2].dtype
('ndarray', (2, 2), dtype('float64'))
>>> unpack_columns(payload)[1:4]
[[array([0., 0.]), array([1., 1.])], [1.0, 0.5], [False, True]]
"""

from __future__ import annotations

import contextlib
import functools
import os
import pickle
import socket
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import cloudpickle
import numpy as np

from plangym.core import PlanEnv
from plangym.vectorization.env import VectorizedEnv, chunk_bounds
from plangym.vectorization.errors import (
    WorkerCrashedError,
    with_remote_traceback,
)
from plangym.vectorization.transport import (
    pack_actions,
    pack_states,
    unpack_actions,
    unpack_states,
)
from plangym.vectorization.worker import dumps, error_payload

# How many times one chunk is re-run on a replaced actor within one batch before giving up:
# an element that kills every process stepping it must not loop forever.
MAX_RERUNS = 2

# Actors are placed on as many nodes as possible; they reserve no CPU while they run, so
# more actors than cores still start (override with RayEnv(actor_options=...)).
DEFAULT_ACTOR_OPTIONS: dict[str, Any] = {"scheduling_strategy": "SPREAD"}


def import_ray() -> ModuleType:
    """Return the ``ray`` module, or raise an ImportError that says how to install it."""
    try:
        import ray
        import ray.exceptions
    except ImportError as error:
        raise ImportError(
            'RayEnv needs Ray, which is not installed: pip install "plangym[ray]" '
            '(or pip install "ray>=2.9")'
        ) from error
    return ray


def connect(address: str | None = None) -> ModuleType:
    """Connect this process to Ray unless it already is; return the ``ray`` module.

    ``address`` (or else the ``RAY_ADDRESS`` environment variable) names an existing
    cluster, e.g. ``"10.0.0.5:6379"``. Without either, Ray looks for a cluster started on
    this machine with ``ray start`` and otherwise starts a local one. A process already
    connected (``ray.init`` called before) keeps its connection and ``address`` is ignored.
    """
    ray = import_ray()
    if not ray.is_initialized():
        ray.init(address=address or os.environ.get("RAY_ADDRESS"), ignore_reinit_error=True)
    return ray


# In the actor ---------------------------------------------------------------------------------
class PackedError(Exception):
    """An exception raised in an actor, pickled by plangym rather than by Ray.

    Ray pickles task errors with its own copy of cloudpickle, which turns a class pickled
    by value (an env class defined in a notebook or registered with
    ``cloudpickle.register_pickle_by_value``) into a new, different class in the caller.
    Pickled with the same cloudpickle as the env constructor, the caller gets its own
    class back, and :meth:`unpack` returns the original error with the actor's traceback.
    """

    def __init__(self, blob: bytes):
        super().__init__(blob)
        self.blob = blob

    @classmethod
    def current(cls, error: BaseException) -> PackedError:
        """Pack ``error``, which is being handled, with its traceback text."""
        return cls(dumps(error_payload(error)))

    def unpack(self) -> BaseException:
        """Return the original error, with the actor's traceback as its ``__cause__``."""
        error, text = pickle.loads(self.blob)
        return with_remote_traceback(error, text)


def reports_errors(method: Callable) -> Callable:
    """Make an actor method raise its errors as :class:`PackedError`."""

    @functools.wraps(method)
    def wrapper(self: RemoteEnv, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except PackedError:
            raise
        except Exception as error:
            raise PackedError.current(error) from None

    return wrapper


def stack_rows(values: list, kind: type, dtype: Any) -> np.ndarray | list:
    """``values`` as one array when every value is exactly of type ``kind``, else the list."""
    if all(type(value) is kind for value in values):
        return np.array(values, dtype=dtype)
    return list(values)


def stack_observations(observs: list) -> np.ndarray | list:
    """Observations as one stacked array when they are arrays of one shape and dtype."""
    first = observs[0] if observs else None
    if type(first) is not np.ndarray or first.ndim == 0:
        return list(observs)
    shape, dtype = first.shape, first.dtype
    if all(
        type(obs) is np.ndarray and obs.shape == shape and obs.dtype == dtype for obs in observs
    ):
        return np.stack(observs)
    return list(observs)


def pack_columns(results: tuple) -> tuple:
    """Pack ``(new_states or None, observs, rewards, terminals, truncateds, infos)``."""
    new_states, observs, rewards, terminals, truncateds, infos = results
    return (
        None if new_states is None else pack_states(new_states),
        stack_observations(observs),
        stack_rows(rewards, float, np.float64),
        stack_rows(terminals, bool, np.bool_),
        stack_rows(truncateds, bool, np.bool_),
        list(infos),
    )


def unpack_columns(payload: tuple) -> list:
    """Undo :func:`pack_columns`: ``[new_states or None, observs, rewards, ...]`` as lists.

    Each observation is copied out of the stacked array, so it owns its memory (arrays
    read from Ray's object store are read-only and would keep the whole batch alive).
    """
    packed_states, observs, rewards, terminals, truncateds, infos = payload
    columns: list = [None if packed_states is None else unpack_states(packed_states)]
    columns.append([row.copy() for row in observs] if isinstance(observs, np.ndarray) else observs)
    for values in (rewards, terminals, truncateds):
        columns.append(values.tolist() if isinstance(values, np.ndarray) else values)
    columns.append(infos)
    return columns


class RemoteEnv:
    """One env living in a Ray actor, built from a cloudpickled constructor.

    A plain class: :func:`remote_env_class` turns it into a Ray actor class, and it can be
    used in-process too (which is how its packing is tested without a cluster). Errors
    raised by the env come out of every method as :class:`PackedError`, including an
    error while building the env, which every call raises again.

    Args:
        factory_blob: ``cloudpickle.dumps`` of a callable that builds the env.
    """

    def __init__(self, factory_blob: bytes):
        self._env: PlanEnv | None = None
        self._build_error: PackedError | None = None
        try:
            self._env = cloudpickle.loads(factory_blob)()
        except Exception as error:
            # Raised from ready(): an error in an actor's constructor would reach the
            # caller as ActorDiedError, without its type.
            self._build_error = PackedError.current(error)

    @property
    def env(self) -> PlanEnv:
        """The env (raises the error that kept it from being built)."""
        if self._env is None:
            raise self._build_error
        return self._env

    @reports_errors
    def ready(self) -> int:
        """Return the process id once the env is built."""
        _ = self.env
        return os.getpid()

    @reports_errors
    def location(self) -> dict[str, Any]:
        """Return where this actor runs: Ray node id, node address, host name, process id."""
        ray = import_ray()
        return {
            "node_id": ray.get_runtime_context().get_node_id(),
            "node_ip": ray.util.get_node_ip_address(),
            "hostname": socket.gethostname(),
            "pid": os.getpid(),
        }

    @reports_errors
    def step_batch_chunk(
        self, packed_actions: tuple, packed_states: tuple | None, dts: list[int], want_state: bool
    ) -> tuple:
        """Step a chunk the caller has checked and packed; return it packed.

        Returns ``(packed_states or None, observs, rewards, terminals, truncateds, infos)``
        in the form of :func:`pack_columns`.
        """
        states = None if packed_states is None else unpack_states(packed_states)
        results = self.env.run_batch(unpack_actions(packed_actions), states, dts, want_state)
        if not want_state:
            results = (None, *results)
        return pack_columns(results)

    @reports_errors
    def call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """Return ``env.name(*args, **kwargs)``."""
        return getattr(self.env, name)(*args, **kwargs)

    @reports_errors
    def get_attr(self, name: str) -> Any:
        """Return the env's attribute ``name``."""
        return getattr(self.env, name)

    @reports_errors
    def set_attr(self, name: str, value: Any) -> None:
        """Set the env's attribute ``name``."""
        setattr(self.env, name, value)

    @reports_errors
    def reset(self, return_state: bool = True) -> tuple:
        """Reset the env (see :meth:`PlanEnv.reset`)."""
        return self.env.reset(return_state=return_state)

    @reports_errors
    def get_state(self) -> Any:
        """Return the env's state."""
        return self.env.get_state()

    @reports_errors
    def set_state(self, state: Any) -> None:
        """Set the env's state."""
        self.env.set_state(state)

    @reports_errors
    def step(
        self, action: Any, state: Any = None, dt: int = 1, return_state: bool | None = None
    ) -> tuple:
        """Step the env once (see :meth:`PlanEnv.step`)."""
        return self.env.step(action, state=state, dt=dt, return_state=return_state)

    @reports_errors
    def step_batch(
        self, actions: Sequence, states: Sequence | None = None, dt: Any = 1, return_state=None
    ) -> tuple:
        """Step a batch (results are pickled element by element; RayEnv avoids that)."""
        return self.env.step_batch(actions, states=states, dt=dt, return_state=return_state)

    @reports_errors
    def close(self) -> None:
        """Close the env."""
        if self._env is not None:
            self._env.close()


@functools.cache
def remote_env_class() -> Any:
    """Return the Ray actor class of :class:`RemoteEnv` (built on first use; needs Ray)."""
    return import_ray().remote(RemoteEnv)


def remote_error(error: BaseException) -> BaseException:
    """Return the exception to raise in the caller for an actor task that raised ``error``."""
    cause = getattr(error, "cause", None)
    if isinstance(cause, PackedError):
        return cause.unpack()
    if isinstance(cause, BaseException):
        return with_remote_traceback(cause, str(error))
    return error


# In the caller --------------------------------------------------------------------------------
class RemoteEnvPool:
    """The actors of a :class:`RayEnv`: starts, replaces and kills them.

    Args:
        ray: The ``ray`` module, connected.
        factory_blob: ``cloudpickle.dumps`` of the env constructor every actor runs.
        n_workers: Number of actors.
        actor_options: Passed to ``.options()`` of the actor class (resources, placement).
    """

    def __init__(self, ray: ModuleType, factory_blob: bytes, n_workers: int, actor_options: dict):
        self.ray = ray
        self._factory_blob = factory_blob
        self._actor_options = dict(actor_options)
        self.actors = [self.start() for _ in range(n_workers)]

    def start(self) -> Any:
        """Start one actor (without waiting for its env to be built)."""
        actor_class = remote_env_class().options(**self._actor_options)
        return actor_class.remote(self._factory_blob)

    def wait_ready(self) -> list[int]:
        """Wait until every env is built; return the actors' process ids."""
        return self.gather([actor.ready.remote() for actor in self.actors])

    def replace(self, index: int) -> None:
        """Kill actor ``index`` (whatever it is doing) and start a fresh one in its place."""
        self.kill(self.actors[index])
        self.actors[index] = self.start()

    def kill(self, actor: Any) -> None:
        """Kill one actor; an actor that is already dead is fine."""
        # A dead actor, or a Ray already shut down, has nothing left to kill.
        with contextlib.suppress(Exception):
            self.ray.kill(actor, no_restart=True)

    def kill_all(self) -> None:
        """Kill every actor."""
        for actor in self.actors:
            self.kill(actor)

    def gather(self, refs: list, rerun: Callable[[int], Any] | None = None) -> list:
        """Results of one task per actor (``refs[i]`` runs on actor i), in actor order.

        An actor that dies is replaced; with ``rerun`` its task is submitted again
        (``rerun(i)`` returns the new reference), otherwise :class:`WorkerCrashedError` is
        raised. Errors are raised once every task is done, so every actor is idle.
        """
        ray = self.ray
        results: list = [None] * len(refs)
        errors: list[BaseException] = []
        attempts = [0] * len(refs)
        waiting = {ref: index for index, ref in enumerate(refs)}
        while waiting:
            ready, _ = ray.wait(list(waiting), num_returns=1)
            index = waiting.pop(ready[0])
            try:
                results[index] = ray.get(ready[0])
            except ray.exceptions.RayTaskError as error:
                errors.append(remote_error(error))
            except (ray.exceptions.RayActorError, ray.exceptions.ObjectLostError) as error:
                self.replace(index)
                attempts[index] += 1
                if rerun is None or attempts[index] > MAX_RERUNS:
                    errors.append(crash_error(index, error, "its call could not be re-run"))
                else:
                    waiting[rerun(index)] = index
        if errors:
            raise errors[0]
        return results


def crash_error(index: int, error: BaseException, consequence: str) -> WorkerCrashedError:
    """Return a :class:`WorkerCrashedError` naming worker ``index``, caused by ``error``."""
    summary = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    crash = WorkerCrashedError(
        f"worker {index} (a Ray actor, replaced) died: {type(error).__name__}: {summary}; "
        f"{consequence}"
    )
    crash.__cause__ = error
    return crash


@dataclass
class RayChunk:
    """One actor's share of a batch, kept so it can be re-run if the actor dies."""

    worker: int
    start: int
    stop: int
    request: tuple
    ref: Any = None
    reruns: int = 0


@dataclass
class RayBatch:
    """A dispatched ``step_batch`` whose results have not been collected yet."""

    chunks: list[RayChunk]
    want_state: bool
    has_states: bool


class RayEnv(VectorizedEnv):
    """Steps batches on ``n_workers`` Ray actors, with the single env's exact results.

    A local env serves single steps, properties and input checks; each actor
    (:class:`RemoteEnv`) builds its own env from the same constructor, on any node of the
    cluster. A batch is split into contiguous chunks of similar size, one per actor, and
    the results come back in input order.

    Args:
        env_class: The :class:`PlanEnv` class every actor builds.
        name: Environment name.
        frameskip: Passed to ``env_class``; None keeps its default, as ``make`` does.
        autoreset: Passed to ``env_class``; None keeps its default.
        delay_setup: Connect and start the actors later, in :meth:`setup`.
        n_workers: Number of actors.
        address: Address of the Ray cluster (``"HOST:PORT"``); None uses ``RAY_ADDRESS``,
            else a cluster started on this machine, else a new local one (see
            :func:`connect`). A process already connected to Ray stays connected.
        blocking: Accepted for plangym 0.1 compatibility (calls always block unless made
            with ``step_batch_async``).
        actor_options: Passed to Ray's ``.options()`` when an actor is created, e.g.
            ``{"num_cpus": 1}`` to reserve one core per actor; the default spreads the
            actors over the nodes without reserving cores.
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
        address: str | None = None,
        blocking: bool = False,
        actor_options: dict | None = None,
        **kwargs: Any,
    ):
        self.blocking = blocking
        self._address = address
        self._actor_options = (
            dict(DEFAULT_ACTOR_OPTIONS) if actor_options is None else dict(actor_options)
        )
        self._pool: RemoteEnvPool | None = None
        super().__init__(
            env_class=env_class,
            name=name,
            frameskip=frameskip,
            autoreset=autoreset,
            delay_setup=delay_setup,
            n_workers=n_workers,
            **kwargs,
        )

    def setup_workers(self) -> None:
        """Connect to Ray, start the actors and wait until their envs are built."""
        ray = connect(self._address)
        factory_blob = cloudpickle.dumps(self.create_env_callable())
        pool = RemoteEnvPool(ray, factory_blob, self.n_workers, self._actor_options)
        try:
            pool.wait_ready()
        except BaseException:
            pool.kill_all()
            raise
        self._pool = pool

    @property
    def pool(self) -> RemoteEnvPool:
        """The :class:`RemoteEnvPool` holding the actors."""
        self._check_open()
        if self._pool is None:
            self.setup()
        return self._pool

    @property
    def workers(self) -> list:
        """The actor handles, one per worker (as in plangym 0.1)."""
        return list(self.pool.actors)

    # Batches --------------------------------------------------------------------------------
    def dispatch_batch(
        self, actions: Sequence, states: list | None, dts: list[int], want_state: bool
    ) -> RayBatch:
        """Submit every actor its chunk of a checked batch."""
        pool = self.pool
        chunks = []
        for worker, (start, stop) in enumerate(chunk_bounds(len(actions), self.n_workers)):
            packed_states = None if states is None else pack_states(states[start:stop])
            request = (pack_actions(actions[start:stop]), packed_states, dts[start:stop])
            chunk = RayChunk(worker, start, stop, (*request, want_state))
            chunk.ref = pool.actors[worker].step_batch_chunk.remote(*chunk.request)
            chunks.append(chunk)
        return RayBatch(chunks, want_state, states is not None)

    def gather_batch(self, batch: RayBatch, timeout: float | None = None) -> tuple[list, ...]:
        """Collect ``batch`` as its chunks finish; return the columns in input order.

        An actor that dies is replaced and, when the batch came with states, its chunk is
        re-run there. An error raised by an env is raised once every other chunk is back.
        """
        pool = self.pool
        ray = pool.ray
        deadline = None if timeout is None else time.monotonic() + timeout
        waiting = {chunk.ref: chunk for chunk in batch.chunks}
        results: dict[int, list] = {}
        errors: list[BaseException] = []
        while waiting:
            remaining = None if deadline is None else max(deadline - time.monotonic(), 0.0)
            ready, _ = ray.wait(list(waiting), num_returns=1, timeout=remaining)
            if not ready:
                self._abandon_on_timeout(list(waiting.values()), timeout)
            chunk = waiting.pop(ready[0])
            try:
                results[chunk.worker] = unpack_columns(ray.get(chunk.ref))
            except ray.exceptions.RayTaskError as error:
                errors.append(remote_error(error))
            except (ray.exceptions.RayActorError, ray.exceptions.ObjectLostError) as error:
                crash = self._rerun_after_crash(chunk, batch, error)
                if crash is None:
                    waiting[chunk.ref] = chunk
                else:
                    errors.append(crash)
            except Exception as error:  # decoding failed: raised once the others are back
                errors.append(error)
        if errors:
            raise errors[0]
        return self._assemble(batch, results)

    def abandon_batch(self, batch: RayBatch) -> None:
        """Forget an interrupted batch.

        Nothing needs undoing: each chunk's inputs and results are objects of their own in
        Ray's store, and an actor still on its chunk runs the next one after it.
        """

    def _rerun_after_crash(
        self, chunk: RayChunk, batch: RayBatch, error: BaseException
    ) -> WorkerCrashedError | None:
        """Replace the dead actor and re-submit its chunk; return an error if it cannot be."""
        pool = self.pool
        pool.replace(chunk.worker)
        span = f"elements {chunk.start}..{chunk.stop - 1}"
        if not batch.has_states:
            return crash_error(chunk.worker, error, f"its chunk ({span}) had no states to re-run")
        chunk.reruns += 1
        if chunk.reruns > MAX_RERUNS:
            return crash_error(
                chunk.worker, error, f"its chunk ({span}) was re-run {MAX_RERUNS} times"
            )
        chunk.ref = pool.actors[chunk.worker].step_batch_chunk.remote(*chunk.request)
        return None

    def _abandon_on_timeout(self, busy: list[RayChunk], timeout: float | None) -> None:
        workers = sorted(chunk.worker for chunk in busy)
        for worker in workers:
            self.pool.replace(worker)
        raise TimeoutError(
            f"timeout: step_batch took longer than {timeout} s; workers {workers} were "
            "replaced and the batch abandoned"
        )

    @staticmethod
    def _assemble(batch: RayBatch, results: dict[int, list]) -> tuple[list, ...]:
        columns: list[list] = [[] for _ in range(6)]
        for chunk in batch.chunks:
            for column, part in zip(columns, results[chunk.worker], strict=True):
                if part is not None:
                    column.extend(part)
        return tuple(columns) if batch.want_state else tuple(columns[1:])

    # Whole-env requests ----------------------------------------------------------------------
    def sync_states(self, state: Any = None) -> None:
        """Put every actor in ``state`` (default: the local env's state).

        The state goes to the object store once; an actor that dies meanwhile is replaced
        and set to the state too.
        """
        self._check_idle()
        pool = self.pool
        state_ref = pool.ray.put(self.plan_env.get_state() if state is None else state)
        refs = [actor.set_state.remote(state_ref) for actor in pool.actors]
        pool.gather(refs, rerun=lambda i: pool.actors[i].set_state.remote(state_ref))

    def locations(self) -> list[dict[str, Any]]:
        """Where each actor runs (see :meth:`RemoteEnv.location`), in worker order."""
        self._check_idle()
        pool = self.pool
        return pool.gather([actor.location.remote() for actor in pool.actors])

    def call(self, name: str, *args: Any, **kwargs: Any) -> list:
        """Call ``env.name(*args, **kwargs)`` on every actor; return their results."""
        self._check_idle()
        pool = self.pool
        return pool.gather([actor.call.remote(name, *args, **kwargs) for actor in pool.actors])

    def get_attr(self, name: str) -> list:
        """Return attribute ``name`` of every actor's env."""
        self._check_idle()
        pool = self.pool
        return pool.gather([actor.get_attr.remote(name) for actor in pool.actors])

    def set_attr(self, name: str, values: Any) -> None:
        """Set attribute ``name`` in every actor's env: one value each, or one for all."""
        self._check_idle()
        values = self.values_per_worker(values, self.n_workers)
        pool = self.pool
        refs = [
            actor.set_attr.remote(name, v) for actor, v in zip(pool.actors, values, strict=True)
        ]
        pool.gather(refs)

    def reset(self, return_state: bool = True) -> tuple:
        """Reset the local env and put every actor in the same state."""
        self._check_idle()
        return super().reset(return_state=return_state)

    def set_state(self, state: Any) -> None:
        """Set the local env and every actor to ``state``."""
        self._check_idle()
        super().set_state(state)

    def close(self) -> None:
        """Kill the actors and close the local env; later calls raise ClosedEnvironmentError.

        The Ray cluster itself stays up (other envs may use it): ``ray.shutdown()`` ends a
        local one.
        """
        if getattr(self, "_closed", True):
            return
        self._closed = True
        self._pending = None
        if self._pool is not None:
            self._pool.kill_all()
        if self._plan_env is not None:
            self._plan_env.close()
