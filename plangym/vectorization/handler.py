"""What a worker runs its requests with: one small handler per face, one loop for all.

A worker (a process, a Ray actor, or the caller itself) owns one handler. The handler owns
the env and answers the requests of :mod:`plangym.vectorization.messages` that its face
sends; the worker around it only moves bytes. Two handlers exist:

* :class:`~plangym.vectorization.plan_handler.PlanEnvHandler` serves a
  :class:`~plangym.core.PlanEnv` (chunks of ``step_batch``, calls, attributes);
* :class:`~plangym.vector.sub_env.SubEnvHandler` serves a gymnasium sub-env of a vector
  env (resets and steps under its autoreset mode, calls, states).

A worker is told which one to build by a :class:`HandlerFactory`. Anything else it is
given is taken for an env constructor and served by a ``PlanEnvHandler``, which is how
plangym 0.1 code starts its workers (``ExternalProcess(constructor)``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from plangym.vectorization.shared_memory import AttachedOutputs


class Handler(ABC):
    """Answers the requests sent to one worker; owns that worker's env."""

    if TYPE_CHECKING:  # read only: an attribute of some handlers, a property of others

        @property
        def env(self) -> Any:
            """The env it serves."""
            ...

    @abstractmethod
    def handle(self, body: Any) -> Any:
        """Carry out one request and return its payload (raise the env's error)."""

    @abstractmethod
    def close(self) -> None:
        """Close the env."""


@dataclass(frozen=True)
class HandlerFactory:
    """Builds a handler in the worker: ``handler_class(*args, buffers=...)``."""

    handler_class: Callable[..., Handler]  # a Handler class, called as described above
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)

    def __call__(self, buffers: AttachedOutputs) -> Handler:
        """Build the handler; ``buffers`` are the caller's shared buffers, as mapped here."""
        return self.handler_class(*self.args, buffers=buffers, **self.kwargs)


def as_handler_factory(constructor: Any) -> HandlerFactory:
    """Return ``constructor`` if it is a factory, else one serving the env it builds."""
    if isinstance(constructor, HandlerFactory):
        return constructor
    from plangym.vectorization.plan_handler import PlanEnvHandler

    return HandlerFactory(PlanEnvHandler, (constructor,))
