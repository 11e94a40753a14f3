"""What a worker runs its requests with: one :class:`Handler` per face, one loop for all.

A worker is told which handler to build by a :class:`HandlerFactory`; anything else it is
given is taken for an env constructor (plangym 0.1's ``ExternalProcess(constructor)``).
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
