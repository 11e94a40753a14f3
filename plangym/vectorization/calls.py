"""What one call on the workers is: its tasks, their policy on a crash, their results.

The :class:`~plangym.vectorization.scheduler.Scheduler` runs them; these are records.

>>> batch = Batch([Task("a", 0, 2), Task("b", 2, 3)], "step_batch", OnCrash.RERUN)
>>> [task.describe("worker") for task in batch.tasks], batch.in_flight()
(['elements 0..1', 'elements 2..2'], [])
"""

from __future__ import annotations

import enum
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from plangym.vectorization.backend import ChunkResult

UNSENT = -1  # Task.worker until the task is sent


class OnCrash(enum.Enum):
    """What a worker dying during a call means for its tasks."""

    RERUN = "rerun"  # run them again on the replacement, from their inputs
    REPORT = "report"  # the replacement's answer to the recovery request is the result
    RAISE = "raise"  # the call fails with WorkerCrashedError


@dataclass(slots=True)
class Task:
    """One request for one worker: a chunk of a batch, or a whole-env call."""

    request: Any
    start: int = 0  # the elements of a chunk, for messages
    stop: int = 0
    worker: int = UNSENT  # the worker it was sent to
    home: int = UNSENT  # the worker it must run on, if any (a sub-env's request)
    ticket: Any = None
    reruns: int = 0
    done: bool = False
    result: Any = None
    error: BaseException | None = None
    restarted: bool = False  # its worker died and was replaced (OnCrash.REPORT)

    def describe(self, unit: str) -> str:
        """Say what the task is, for messages: its elements, or its worker."""
        return f"elements {self.start}..{self.stop - 1}" if self.stop else f"{unit} {self.worker}"

    def lost(
        self, error_class: type[Exception], unit: str, batch: Batch, crash: Exception, reruns: int
    ) -> Exception:
        """Return the error of this task, lost with its worker (``crash``) in ``batch``."""
        what = self.describe(unit)
        if batch.on_crash is OnCrash.RERUN:
            consequence = (
                f"the worker running {what} died on each of {reruns + 1} runs "
                f"(re-run {reruns} times), so the call was given up"
            )
        elif self.stop > self.start:
            consequence = f"{what} could not be re-run (no states to re-run from)"
        else:
            consequence = f"{what} was replaced, but its {batch.label} request was lost"
        error = error_class(f"{crash}; {consequence}")
        error.__cause__ = crash
        return error


@dataclass(slots=True)
class Batch:
    """One call's tasks, sent to the workers, whose results are not all collected yet."""

    tasks: list[Task]
    label: str
    on_crash: OnCrash
    want_state: bool = False
    copy_observs: bool = True  # False: chunks' observations stay views of shared rows
    in_order: bool = False  # read in the order sent, no wait(): answers cheap to read
    unsent: deque[Task] = field(default_factory=deque)
    abandoned: list[int] = field(default_factory=list)  # workers replaced on giving up

    def in_flight(self) -> list[Task]:
        """Return the tasks sent and not answered yet, in the order they were sent."""
        return [task for task in self.tasks if task.worker != UNSENT and not task.done]

    def errors(self) -> list[Task]:
        """Return the tasks that ended in an error, in input order."""
        return [task for task in self.tasks if task.error is not None]

    def results(self) -> dict[int, Any]:
        """Each worker's result, for a call of one task per worker."""
        return {task.worker: task.result for task in self.tasks if task.error is None}

    def columns(self) -> tuple[list, ...]:
        """Return the chunks' result columns, joined in input order."""
        parts = (task.result.columns for task in self.tasks)
        return join_columns(parts, 6 if self.want_state else 5)

    def chunk_costs(self) -> list[tuple[int, float]]:
        """``(elements, compute seconds)`` of every chunk its worker timed."""
        return [
            (task.stop - task.start, task.result.compute_s)
            for task in self.tasks
            if isinstance(task.result, ChunkResult) and task.result.compute_s is not None
        ]


def join_columns(parts: Iterable[Sequence], width: int) -> tuple[list, ...]:
    """Join the ``width`` result columns of each part, in order: one list per column."""
    columns: list[list] = [[] for _ in range(width)]
    for part in parts:
        for column, values in zip(columns, part, strict=True):
            column.extend(values)
    return tuple(columns)


def unpack_transitions(results: list, return_states: bool) -> tuple[list, ...]:
    """Join the workers' results as plangym 0.1 did, in order: the columns as lists.

    >>> unpack_transitions([([1], [1.0], [False], [False], [{}])] * 2, False)
    ([1, 1], [1.0, 1.0], [False, False], [False, False], [{}, {}])
    """
    return join_columns(results, 6 if return_states else 5)
