"""The Ray backend: one :class:`~plangym.vectorization.ray_actor.RemoteEnv` actor per worker.

A chunk's inputs and results are objects of their own in Ray's object store, so there is
nothing to undo when a batch is given up on: an actor still on its chunk runs the next
request after it. A dead actor (SIGKILL, ``ray.kill``, a lost node) is killed for good and
replaced by a new one.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from plangym.vectorization.backend import Backend, BatchInputs, ChunkResult
from plangym.vectorization.errors import WorkerCrashedError
from plangym.vectorization.packing import (
    PackedActions,
    PackedStates,
    pack_actions,
    pack_states,
    unpack_columns,
)
from plangym.vectorization.ray_actor import remote_env_class, remote_error


@dataclass(frozen=True)
class RayChunk:
    """The arguments of one actor's ``step_batch_chunk`` call."""

    actions: PackedActions
    states: PackedStates | None
    dts: list[int]
    want_state: bool


class RayBackend(Backend):
    """The actors of a :class:`~plangym.vectorization.ray.RayEnv`.

    Args:
        ray: The ``ray`` module, connected.
        factory_blob: ``cloudpickle.dumps`` of the env constructor every actor runs.
        n_workers: Number of actors.
        actor_options: Passed to ``.options()`` of the actor class (resources, placement).
    """

    def __init__(self, ray: ModuleType, factory_blob: bytes, n_workers: int, actor_options: dict):
        self.ray = ray
        self.n_workers = n_workers
        self._factory_blob = factory_blob
        self._actor_options = dict(actor_options)
        self.actors = [self.start() for _ in range(n_workers)]

    def start(self) -> Any:
        """Start one actor (without waiting for its env to be built)."""
        actor_class = remote_env_class().options(**self._actor_options)
        return actor_class.remote(self._factory_blob)

    def wait_ready(self) -> list[int]:
        """Wait until every env is built; return the actors' process ids."""
        refs = [actor.ready.remote() for actor in self.actors]
        try:
            return self.ray.get(refs)
        except self.ray.exceptions.RayTaskError as error:
            build_error = remote_error(error)  # raised below, with its own cause kept
        raise build_error

    def kill(self, actor: Any) -> None:
        """Kill one actor; an actor that is already dead is fine."""
        # A dead actor, or a Ray already shut down, has nothing left to kill.
        with contextlib.suppress(Exception):
            self.ray.kill(actor, no_restart=True)

    # The protocol -----------------------------------------------------------------------------
    def encode(self, inputs: BatchInputs, layout: Any, index: int, start: int, stop: int) -> Any:
        """Pack chunk ``index`` (its states as one blob) for the object store."""
        states = None if inputs.states is None else pack_states(inputs.states[start:stop])
        actions = pack_actions(inputs.actions[start:stop])
        return RayChunk(actions, states, inputs.dts[start:stop], inputs.want_state)

    def submit(self, worker: int, request: Any) -> Any:
        """Start ``request`` on actor ``worker``; its ticket is the result's reference."""
        actor = self.actors[worker]
        if isinstance(request, RayChunk):
            chunk = request
            return actor.step_batch_chunk.remote(
                chunk.actions, chunk.states, chunk.dts, chunk.want_state
            )
        if request.kind == "actor":  # a method of the actor itself (ready, location)
            return getattr(actor, request.name).remote(*request.args)
        if request.kind == "getattr":
            return actor.get_attr.remote(request.name)
        if request.kind == "setattr":
            return actor.set_attr.remote(request.name, request.args[0])
        return actor.call.remote(request.name, *request.args, **(request.kwargs or {}))

    def wait(self, tickets: dict[int, Any], timeout: float | None) -> list[int]:
        """Actors whose task has finished (or failed)."""
        workers = {ref: worker for worker, ref in tickets.items()}
        ready, _ = self.ray.wait(list(workers), num_returns=1, timeout=timeout)
        return [workers[ref] for ref in ready]

    def result(self, worker: int, ticket: Any, request: Any) -> Any:
        """Return the task's value; raise WorkerCrashedError when its actor died."""
        ray = self.ray
        try:
            value = ray.get(ticket)
        except ray.exceptions.RayTaskError as error:
            env_error = remote_error(error)  # raised below, with its own cause kept
        except (ray.exceptions.RayActorError, ray.exceptions.ObjectLostError) as error:
            summary = str(error).strip().splitlines()[0] if str(error).strip() else ""
            crash = WorkerCrashedError(
                f"worker {worker} (a Ray actor, replaced) died: {type(error).__name__}: "
                f"{summary or type(error).__name__}"
            )
            raise crash from error
        else:
            env_error = None
        if env_error is not None:
            raise env_error
        if not isinstance(request, RayChunk):
            return value
        payload, compute_s = value
        columns = unpack_columns(payload)
        return ChunkResult(columns if request.want_state else columns[1:], compute_s)

    def restart(self, worker: int) -> None:
        """Kill actor ``worker`` (whatever it is doing) and start a fresh one in its place."""
        self.kill(self.actors[worker])
        self.actors[worker] = self.start()

    def abandon(self, workers: list[int]) -> None:
        """Nothing to undo: the actors' results are objects of their own (see above)."""

    def close(self) -> None:
        """Kill every actor (the cluster stays up)."""
        for actor in self.actors:
            self.kill(actor)
