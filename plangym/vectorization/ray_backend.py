"""The Ray backend: one :class:`~plangym.vectorization.ray_actor.RemoteEnv` actor per worker.

Requests and answers are objects in Ray's object store. An actor still on a call given up
on (Ctrl-C), or dead (SIGKILL, ``ray.kill``, a lost node), is killed for good and replaced.
After ``ray.shutdown()`` the actors are gone: calls raise :class:`RayShutDownError` and
closing does nothing (any Ray call would start a new local cluster).
"""

from __future__ import annotations

import contextlib
from functools import partial
from types import ModuleType
from typing import Any

from plangym.vectorization import process
from plangym.vectorization.backend import Backend, packed_result
from plangym.vectorization.errors import WorkerCrashedError, add_note, run_all
from plangym.vectorization.ray_actor import remote_env_class, remote_error


class RayShutDownError(RuntimeError):
    """The Ray connection the actors ran on was shut down (``ray.shutdown()``)."""


class RayBackend(Backend):
    """The actors of a ``RayEnv`` or a ``RayVectorEnv``, started with their envs built.

    If one env cannot be built, every actor is killed and its error raised.

    Args:
        ray: The ``ray`` module, connected.
        factory_blobs: ``cloudpickle.dumps`` of what each actor builds (an env
            constructor or a :class:`~plangym.vectorization.handler.HandlerFactory`).
        actor_options: Passed to ``.options()`` of the actor class (resources, placement).
        unit: What a worker is called in messages.
    """

    n_workers: int

    def __init__(
        self,
        ray: ModuleType,
        factory_blobs: list[bytes],
        actor_options: dict | None = None,
        unit: str = "worker",
    ):
        self.ray = ray
        self.n_workers = len(factory_blobs)
        self.unit = unit
        self._blobs = list(factory_blobs)
        self._actor_options = dict(actor_options or {})
        self._pids: list[int | None] = [None] * self.n_workers
        self._connection = self._connection_now()
        self.actors = [self._start(index) for index in range(self.n_workers)]
        try:
            self.wait_ready()
        except BaseException:
            self.close(terminate=True)
            raise

    def _start(self, index: int) -> Any:
        """Start actor ``index`` (without waiting for its env to be built)."""
        actor_class = remote_env_class().options(**self._actor_options)
        return actor_class.remote(self._blobs[index])

    def wait_ready(self) -> list[int]:
        """Wait until every env is built; return the actors' process ids.

        TimeoutError after ``process.READY_TIMEOUT`` s: actors the cluster cannot place
        (asking more CPUs than it has free) would otherwise wait for ever.
        """
        pids = self._get([actor.ready.remote() for actor in self.actors])
        self._pids = pids
        return list(pids)

    def _get(self, refs: list) -> list:
        ray = self.ray
        if not ray.cluster_resources():  # else the wait below would last its whole timeout
            raise WorkerCrashedError(
                "no node of the Ray cluster is alive (ray.cluster_resources() is empty): no "
                f"actor can be started; {len(refs)} env(s) waited for one"
            )
        try:
            return ray.get(refs, timeout=process.READY_TIMEOUT)
        except ray.exceptions.RayTaskError as error:
            build_error: BaseException = remote_error(error)  # raised below, with its cause
        except ray.exceptions.RayActorError as error:
            # Died before its env was built: placed on a node that was dying, say, which
            # the cluster notices seconds after the actors on it. Started again if replacing.
            build_error = WorkerCrashedError(
                f"a Ray actor died before its env was built: {_first_line(error)}"
            )
        except ray.exceptions.GetTimeoutError:
            _, waiting = ray.wait(refs, num_returns=len(refs), timeout=0)
            free = ray.available_resources()  # a resource none is left of is not listed
            build_error = TimeoutError(
                f"{len(waiting)} of {len(refs)} Ray actors not ready within "
                f"{process.READY_TIMEOUT:g} s: the cluster may lack what they ask for "
                f"(actor_options={self._actor_options}; the cluster has "
                f"{ray.cluster_resources()}, of which {free.get('CPU', 0.0):g} CPU and "
                f"{free.get('GPU', 0.0):g} GPU are free), and the {self.unit}s of one env keep "
                "their resources while it lives"
            )
        raise build_error

    @property
    def worker_pids(self) -> tuple[int | None, ...]:
        """Process id of each actor."""
        return tuple(self._pids)

    def kill(self, actor: Any) -> None:
        """Kill one actor; one already dead (or a Ray shut down) is fine."""
        with contextlib.suppress(Exception):
            self.ray.kill(actor, no_restart=True)

    # The protocol -----------------------------------------------------------------------------
    def submit(self, worker: int, request: Any) -> Any:
        """Start ``request`` on actor ``worker``; its ticket is the answer's reference."""
        self._check_connected()
        try:
            return self.actors[worker].handle.remote(request)
        except Exception as error:  # Ray's bare Exception for an actor of an ended connection
            if not self._still_connected():
                raise self._shut_down() from error
            raise

    def _check_connected(self) -> None:
        if not self.ray.is_initialized():
            raise self._shut_down()

    def _connection_now(self) -> tuple[str, str]:
        """Return the Ray connection this process has: the cluster's address and its job."""
        context = self.ray.get_runtime_context()
        return context.gcs_address, context.get_job_id()

    def _lost_connection(self, error: BaseException) -> BaseException:
        """Return RayShutDownError for ``error`` of a wait or a read if Ray is gone, else it.

        ``error`` itself is raised while the connection holds (a SystemExit of the user's).
        Ray raises SystemExit when ray.shutdown() in another thread ends a wait, and
        ValueError for references of a connection shut down since (ray.init() again).
        Ray is asked no more than whether it is initialized while it may be shutting down:
        reading its runtime context then raises errors of its own.
        """
        if not self.ray.is_initialized():
            return self._shut_down()
        if isinstance(error, ValueError) and not self._still_connected():
            return self._shut_down()
        return error

    def _shut_down(self) -> RayShutDownError:
        return RayShutDownError(
            f"the Ray connection of this env's actors was shut down (ray.shutdown()), "
            f"and its {self.unit}s with it; build the env again"
        )

    def wait(self, tickets: dict[int, Any], timeout: float | None) -> list[int]:
        """Actors whose request has finished (or failed)."""
        self._check_connected()  # else ray.wait would start a new local cluster
        workers = {ref: worker for worker, ref in tickets.items()}
        try:
            ready, _ = self.ray.wait(list(workers), num_returns=1, timeout=timeout)
        except (SystemExit, ValueError) as error:
            raise self._lost_connection(error) from error
        return [workers[ref] for ref in ready]

    def result(self, worker: int, ticket: Any, request: Any) -> Any:
        """Return the request's answer; raise WorkerCrashedError when its actor died."""
        self._check_connected()
        ray = self.ray
        env_error: BaseException | None
        try:
            value = ray.get(ticket)
        except ray.exceptions.RayTaskError as error:
            env_error = remote_error(error)  # raised below, with its own cause kept
        except ray.exceptions.RaySystemError as error:
            env_error = error
        except (ray.exceptions.RayActorError, ray.exceptions.ObjectLostError) as error:
            raise WorkerCrashedError(
                f"{self.unit} {worker} (a Ray actor, replaced) died: {_first_line(error)}"
            ) from error
        except (SystemExit, ValueError) as error:
            raise self._lost_connection(error) from error
        else:
            env_error = None
        if isinstance(env_error, ray.exceptions.RaySystemError):
            # An object one end could not unpickle (in a reply, or in the actor's arguments).
            inner = getattr(env_error, "client_exc", None)
            if isinstance(inner, BaseException):
                add_note(inner, f"an object of {self.unit} {worker}'s call could not be unpickled")
                env_error = inner
        if env_error is not None:
            raise env_error
        return packed_result(value, request)

    def restart(self, worker: int) -> None:
        """Kill actor ``worker`` (whatever it is doing) and start a fresh one in its place."""
        if not self._still_connected():  # not in a cluster the env was not built in
            raise self._shut_down()
        self._replace([worker])

    def abandon(self, workers: list[int]) -> None:
        """Replace the actors still on a call given up on (none left after ray.shutdown)."""
        if self._still_connected():
            self._replace(workers)

    def _replace(self, workers: list[int]) -> None:
        # All started before any is waited for: an actor takes a second or more to start.
        for worker in workers:
            self.kill(self.actors[worker])
            self.actors[worker] = self._start(worker)
        readies = {worker: self.actors[worker].ready.remote() for worker in workers}
        run_all(partial(self._wait_ready, worker, ready) for worker, ready in readies.items())

    def _wait_ready(self, worker: int, ready: Any) -> None:
        try:
            self._pids[worker] = self._get([ready])[0]
        except BaseException:  # its build's error, whatever its type, or a Ctrl-C
            # Killed, so the next call finds it dead and replaces it again.
            self.kill(self.actors[worker])
            self._pids[worker] = None
            raise

    def _still_connected(self) -> bool:
        """Whether this process is still on the Ray connection the actors were started on."""
        return self.ray.is_initialized() and self._connection_now() == self._connection

    def interrupt(self) -> None:
        """Kill every actor: a call waiting on one ends (its connection stays up)."""
        self.closing = True
        if self._still_connected():
            for actor in self.actors:
                self.kill(actor)

    def close(self, terminate: bool = False) -> None:
        """Close the envs (unless ``terminate``) and kill every actor (the cluster stays up)."""
        self.closing = True
        if not self._still_connected():
            return  # ray.shutdown() took the actors; a Ray call would start a new cluster
        try:
            if not terminate:  # as long as worker processes are given to close their envs
                with contextlib.suppress(Exception):
                    closing = [actor.close.remote() for actor in self.actors]
                    self.ray.get(closing, timeout=process.CLOSE_TIMEOUT_S)
        finally:  # a Ctrl-C while they close must not leave them running
            for actor in self.actors:
                self.kill(actor)


def _first_line(error: BaseException) -> str:
    """Return ``error``'s type and the first line of its message."""
    lines = str(error).strip().splitlines()
    return f"{type(error).__name__}: {lines[0]}" if lines else type(error).__name__
