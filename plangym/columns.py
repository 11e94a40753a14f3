"""A stepped batch held column by column: the form batches take inside plangym.

``step_batch`` hands out a tuple of lists, one element per (state, action) pair. Inside,
and between processes, the same results travel as :class:`BatchColumns`, where a column
may be held in bulk: the new states as one record array when every state is a 0-d record
of one dtype, the observations as one stacked array when they were written straight
into a caller's buffer. :meth:`BatchColumns.as_lists` turns them into what
``step_batch`` returns, each state and observation owning its memory.

>>> import numpy as np
>>> dtype = np.dtype([("x", "<f8"), ("t", "<i8")])
>>> records = np.zeros(2, dtype)
>>> records["x"] = [0.5, 1.5]
>>> states = records_to_states(records)
>>> states[1].shape, float(states[1]["x"])
((), 1.5)
>>> bool(states_to_records(states, dtype)[1] == records[1])
True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

_DTYPES: dict[np.dtype, np.dtype] = {}


def intern_dtype(dtype: np.dtype) -> np.dtype:
    """Return the one instance of ``dtype`` this process uses for states.

    Checking a batch of states compares dtypes by identity, which is much cheaper than by
    value; states rebuilt from bytes (from workers, from pickles) get the interned dtype.
    """
    return _DTYPES.setdefault(dtype, dtype)


def is_record_block(states: Any) -> bool:
    """Whether ``states`` is a 1-D record array holding one 0-d record state per row."""
    return isinstance(states, np.ndarray) and states.ndim == 1 and states.dtype.names is not None


def records_to_states(records: np.ndarray) -> list[np.ndarray]:
    """Split a 1-D record array into read-only 0-d states that each own their bytes.

    Owning their bytes matters to planners: keeping one state of a batch in a tree must
    not keep the whole batch alive.
    """
    dtype, size = records.dtype, records.dtype.itemsize
    blob = records.tobytes()
    array = np.ndarray  # a local name: this loop runs once per state of every batch
    return [array((), dtype, blob[start : start + size]) for start in range(0, len(blob), size)]


def states_to_records(states: Sequence[np.ndarray], dtype: np.dtype) -> np.ndarray | None:
    """Stack 0-d record states of ``dtype`` into one record array; None if they are not."""
    for state in states:
        if not (
            type(state) is np.ndarray
            and not state.shape
            and (state.dtype is dtype or state.dtype == dtype)
        ):
            return None
    return np.frombuffer(b"".join([state.tobytes() for state in states]), dtype)


@dataclass
class BatchColumns:
    """The results of a stepped batch, one column per returned quantity.

    Attributes:
        states: None (states not wanted), a list of states, or a 1-D record array with
            one state per row.
        observs: A list of observations, or an array stacking them (row i is element i).
        rewards: One reward per element.
        terminals: One terminal flag per element.
        truncateds: One truncated flag per element.
        infos: One info dictionary per element.
    """

    states: list | np.ndarray | None
    observs: list | np.ndarray
    rewards: list
    terminals: list
    truncateds: list
    infos: list

    @classmethod
    def from_rows(cls, rows: list[tuple], want_state: bool) -> BatchColumns:
        """Build the columns from per-element ``([state,] obs, reward, ...)`` tuples."""
        if not rows:
            return cls(([] if want_state else None), [], [], [], [], [])
        columns = [list(column) for column in zip(*rows, strict=True)]
        if not want_state:
            columns.insert(0, None)
        return cls(*columns)

    def as_lists(self) -> tuple[list, ...]:
        """Return what ``step_batch`` returns: ``([states,] observs, rewards, ...)``."""
        observs = self.observs
        if isinstance(observs, np.ndarray):
            observs = [row.copy() for row in observs]
        data = (observs, self.rewards, self.terminals, self.truncateds, self.infos)
        if self.states is None:
            return data
        states = records_to_states(self.states) if is_record_block(self.states) else self.states
        return (states, *data)
