"""The backend in the caller: every worker's handler runs in this process, as it is sent.

What ``SyncVectorEnv`` runs on, and the simplest backend to read the protocol by.

>>> from plangym.control.classic_control import ClassicControl
>>> from plangym.vectorization.messages import GetAttr
>>> backend = LocalBackend([lambda: ClassicControl("CartPole-v1", frameskip=3)] * 2)
>>> ticket = backend.submit(1, GetAttr("frameskip"))
>>> backend.wait({1: ticket}, None), backend.result(1, ticket, GetAttr("frameskip"))
([1], 3)
>>> backend.close()
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from plangym.vectorization.backend import Backend, packed_result
from plangym.vectorization.handler import Handler, as_handler_factory
from plangym.vectorization.shared_memory import AttachedOutputs


class LocalBackend(Backend):
    """Handlers in this process, one per worker; a request runs as it is submitted.

    Args:
        constructors: One env constructor or
            :class:`~plangym.vectorization.handler.HandlerFactory` per worker (used again
            to rebuild one).
        handlers: The handlers, if already built from ``constructors``.
    """

    n_workers: int

    def __init__(self, constructors: Sequence[Callable], handlers: list[Handler] | None = None):
        self._factories = [as_handler_factory(constructor) for constructor in constructors]
        self.n_workers = len(self._factories)
        self.handlers = handlers or [self._build(index) for index in range(self.n_workers)]
        self._answers: dict[int, tuple[bool, Any]] = {}
        self._next_ticket = 0

    def _build(self, index: int) -> Handler:
        return self._factories[index](AttachedOutputs())  # nothing to share with itself

    def submit(self, worker: int, request: Any) -> int:
        """Run ``request`` now; its answer (or error) waits for :meth:`result`."""
        try:
            self._answers[worker] = (True, self.handlers[worker].handle(request))
        except Exception as error:
            self._answers[worker] = (False, error)
        self._next_ticket += 1
        return self._next_ticket

    def wait(self, tickets: dict[int, Any], timeout: float | None) -> list[int]:
        """Every worker asked: their answers are there already."""
        return list(tickets)

    def result(self, worker: int, ticket: Any, request: Any) -> Any:
        """Return the answer of ``worker``'s request, or raise its error."""
        ok, answer = self._answers.pop(worker)
        if not ok:
            raise answer
        return packed_result(answer, request)

    def restart(self, worker: int) -> None:
        """Close ``worker``'s handler and build a new one from its constructor."""
        self.handlers[worker].close()
        self.handlers[worker] = self._build(worker)

    def close(self, terminate: bool = False) -> None:
        """Close every handler's env."""
        for handler in self.handlers:
            handler.close()
