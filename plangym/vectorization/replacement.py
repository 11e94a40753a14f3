"""How the scheduler replaces workers: a fresh one that steps as the one it replaces.

A replacement builds its env from scratch: first it is given the attributes ``set_attr``
set on the worker it replaces, then the call's recovery request (a sub-env is reset).
Workers left on a call given up on are all started before any is waited for.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from plangym.vectorization.backend import STALE, Backend
from plangym.vectorization.errors import (
    CLOSED_WHILE_WAITING,
    ClosedEnvironmentError,
    WorkerCrashedError,
    run_all,
)
from plangym.vectorization.messages import SetAttr

# The label a recovery request is built for when the call was given up on (Ctrl-C, a
# timeout): no answer of that call reaches the user to say that the worker was replaced.
ABANDONED = "abandoned"
# How many times a replacement that dies before it is ready is started again.
STARTS_AFTER_A_DEATH = 2


class Replacements:
    """Replaces the workers of ``backend`` (see the module docstring).

    Args:
        backend: The workers.
        recovery: Builds the request every replacement runs before anything else, from the
            label of the call its worker died in, or :data:`ABANDONED`.
    """

    def __init__(self, backend: Backend, recovery: Callable[[str], Any] | None = None):
        self.backend, self.recovery = backend, recovery
        self._attributes: dict[int, dict[str, SetAttr]] = {}  # set on each worker

    def remember_attributes(self, requests: dict[int, SetAttr]) -> None:
        """Set these attributes again on any worker that replaces one of these."""
        for worker, request in requests.items():
            self._attributes.setdefault(worker, {})[request.name] = request

    def replace(self, worker: int, label: str) -> Any:
        """Restart ``worker`` (it died in a ``label`` call); return the recovery's answer.

        A replacement dying before it is ready is started again (not a re-run of tasks).
        """
        for _ in range(STARTS_AFTER_A_DEATH):
            try:
                return self._replace_once(worker, label)
            except WorkerCrashedError:
                continue
        return self._replace_once(worker, label)

    def _replace_once(self, worker: int, label: str) -> Any:
        if self.backend.closing:  # close() in another thread: the call ends, no new workers
            raise ClosedEnvironmentError(CLOSED_WHILE_WAITING)
        self.backend.restart(worker)
        self._set_attributes_again(worker)
        return None if self.recovery is None else self.run_on(worker, self.recovery(label))

    def replace_busy(self, busy: list[int]) -> None:
        """Replace the workers left on a call given up on; raise the first failure after.

        Each gets its attributes and recovery even if another's replacement fails.
        """
        run_all([partial(self.backend.abandon, busy), *(partial(self._rebuild, w) for w in busy)])

    def _rebuild(self, worker: int) -> None:
        self._set_attributes_again(worker)
        if self.recovery is not None:  # a sub-env left mid-call is rebuilt
            self.run_on(worker, self.recovery(ABANDONED))

    def _set_attributes_again(self, worker: int) -> None:
        for request in self._attributes.get(worker, {}).values():
            self.run_on(worker, request)

    def run_on(self, worker: int, request: Any) -> Any:
        """Run one request on ``worker`` now (it runs nothing else); return its answer."""
        ticket = self.backend.submit(worker, request)
        result = STALE
        while result is STALE:  # late answers to an abandoned call come first
            self.backend.wait({worker: ticket}, None)
            result = self.backend.result(worker, ticket, request)
        return result
