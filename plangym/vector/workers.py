"""Where the sub-envs of a vector env run: the small protocol every backend offers.

A backend owns ``num_envs`` sub-envs, one per worker (the caller itself, a process, a Ray
actor). The vector env (:mod:`plangym.vector.vector_env`) decides what each one runs; the
backend moves a :mod:`~plangym.vector.commands` command to a sub-env and its answer back:

* :meth:`SubEnvWorkers.send` hands a command to sub-env ``index``;
* :meth:`SubEnvWorkers.ready` says which of the sub-envs asked can answer now;
* :meth:`SubEnvWorkers.receive` reads one answer. A reset or a step writes its
  observation, reward and flags into :attr:`SubEnvWorkers.outputs` and answers its info;
  other commands answer their result. The env's error is raised with its own type, and
  :class:`~plangym.vectorization.errors.WorkerCrashedError` when the worker died;
* :meth:`SubEnvWorkers.restart` rebuilds a dead sub-env and resets it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from plangym.vector.batch_outputs import BatchOutputs
from plangym.vector.commands import Step


class SubEnvWorkers(ABC):
    """The sub-envs of one vector env, as the vector env drives them."""

    num_envs: int
    outputs: BatchOutputs

    @abstractmethod
    def send(self, index: int, command: Any) -> None:
        """Hand ``command`` to sub-env ``index`` (a dead worker is noticed on receive)."""

    def send_steps(self, actions: Any, items: list) -> None:
        """Send every sub-env its step; ``items`` are the actions one per sub-env.

        ``actions`` is the batch as the user gave it; a backend with a shared action
        buffer copies an array batch there at once instead of sending each item.
        """
        for index, item in enumerate(items):
            self.send(index, Step(item))

    @abstractmethod
    def ready(self, indices: list[int], timeout: float | None) -> list[int]:
        """Return the sub-envs among ``indices`` whose answer can be read now."""

    @abstractmethod
    def receive(self, index: int) -> Any:
        """Read sub-env ``index``'s answer to its last command."""

    @abstractmethod
    def restart(self, index: int) -> dict:
        """Rebuild sub-env ``index`` and reset it; return the reset's info.

        Its observation is written to :attr:`outputs`, with reward 0, no termination and a
        truncation; the info says ``worker_restarted``.
        """

    @abstractmethod
    def close(self, terminate: bool = False) -> None:
        """Stop every worker (at once if ``terminate``) and release what they share."""

    @property
    def worker_pids(self) -> tuple[int | None, ...]:
        """Process id of each sub-env's worker."""
        return (None,) * self.num_envs


def mark_restarted(outputs: BatchOutputs, index: int) -> None:
    """Write the reward and flags of a step whose worker died: 0, not terminated, truncated."""
    outputs.rewards[index] = 0.0
    outputs.terminations[index] = np.False_
    outputs.truncations[index] = np.True_
