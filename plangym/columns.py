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
from typing import Any, TypeGuard

import numpy as np

# What step_batch takes for actions, states and dt: a sequence (it needs len() and indexing,
# as 0.1 did: a generator is refused) or an array.
BatchInput = Sequence[Any] | np.ndarray

_DTYPES: dict[np.dtype, np.dtype] = {}


def intern_dtype(dtype: np.dtype) -> np.dtype:
    """Return the one instance of ``dtype`` this process uses for states.

    Checking a batch of states compares dtypes by identity, which is much cheaper than by
    value; states rebuilt from bytes (from workers, from pickles) get the interned dtype.
    """
    return _DTYPES.setdefault(dtype, dtype)


def is_record_block(states: Any) -> TypeGuard[np.ndarray]:
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


def states_to_records(states: Sequence | np.ndarray, dtype: np.dtype) -> np.ndarray | None:
    """Stack 0-d record states of ``dtype`` into one record array; None if they are not.

    >>> dtype = np.dtype([("x", "f8"), ("n", "i8")])
    >>> states = [np.array((1.5, 2), dtype), np.array((0.5, 7), dtype)]
    >>> states_to_records(states, dtype)["n"].tolist(), states_to_records([np.ones(2)], dtype)
    ([2, 7], None)
    """
    try:
        # One glance at each state's dtype (the env's own object), then NumPy copies them
        # all in one call: several times faster than joining their bytes.
        foreign = [state for state in states if state.dtype is not dtype]
    except AttributeError:  # not arrays
        return None
    if not foreign:
        records = np.array(states, dtype=dtype)
        if records.shape == (len(states),):
            return records
    for state in states:
        if not (
            type(state) in (np.ndarray, np.void)  # np.void: an element of a record array
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
        infos: One info dictionary per element, or one dict of arrays with one entry
            per element each (see :meth:`info_list`).
    """

    states: list | np.ndarray | None
    observs: list | np.ndarray
    rewards: list | np.ndarray
    terminals: list | np.ndarray
    truncateds: list | np.ndarray
    infos: list | dict

    @classmethod
    def from_rows(cls, rows: list[tuple], want_state: bool) -> BatchColumns:
        """Build the columns from per-element ``([state,] obs, reward, ...)`` tuples."""
        if not rows:
            return cls(([] if want_state else None), [], [], [], [], [])
        columns = [list(column) for column in zip(*rows, strict=True)]
        states = columns.pop(0) if want_state else None
        observs, rewards, terminals, truncateds, infos = columns
        return cls(states, observs, rewards, terminals, truncateds, infos)

    def info_list(self) -> list[dict]:
        """Return the infos as one dictionary per element.

        >>> BatchColumns(None, [], [], [], [], {"n_step": np.array([1, 2])}).info_list()
        [{'n_step': 1}, {'n_step': 2}]
        """
        infos = self.infos
        if not isinstance(infos, dict):
            return infos
        keys = list(infos)
        columns = [infos[key].tolist() for key in keys]
        if len(keys) == 2:  # the kernels' n_step and dt: a dict display is twice as fast
            first, second = keys
            return [{first: a, second: b} for a, b in zip(columns[0], columns[1], strict=True)]
        return [dict(zip(keys, values, strict=True)) for values in zip(*columns, strict=True)]

    def as_arrays(self) -> tuple:
        """Return ``step_batch(..., arrays=True)``'s tuple: arrays where the data allow.

        New states become one record array when they are 0-d records of one dtype, and the
        observations one stacked array when they share a shape and dtype. The infos are
        one dict of arrays, one entry per key, when every element's info has the same
        keys and each key holds Python numbers of one type (what the classic control
        kernels produce directly: ``{"n_step": ..., "dt": ...}``), else one dict per
        element. :meth:`info_list` turns the dict back into the same dicts.

        >>> columns = BatchColumns(None, [], [], [], [], [{"n_step": 1}, {"n_step": 2}])
        >>> columns.as_arrays()[-1]
        {'n_step': array([1, 2])}
        >>> BatchColumns(None, [], [], [], [], [{"n_step": 1}, {}]).as_arrays()[-1]
        [{'n_step': 1}, {}]
        """
        observs = self.observs
        if not isinstance(observs, np.ndarray):
            observs = _stacked(observs)
        infos = self.infos
        data = (
            observs,
            np.asarray(self.rewards, dtype=np.float64),
            np.asarray(self.terminals, dtype=np.bool_),
            np.asarray(self.truncateds, dtype=np.bool_),
            infos if isinstance(infos, dict) else _info_arrays(infos),
        )
        if self.states is None:
            return data
        states = self.states
        if not is_record_block(states) and states:
            first = states[0]
            dtype = first.dtype if isinstance(first, np.ndarray) else None
            records = None
            if dtype is not None and dtype.names is not None:
                records = states_to_records(states, dtype)
            states = states if records is None else records
        if is_record_block(states):
            # Read-only like every record state (states.md), whichever path built the array
            # (packed bytes are read-only, a NumPy-filled array is not): a flag, no copy.
            states.flags.writeable = False
        return (states, *data)

    def as_lists(self) -> tuple[list, ...]:
        """Return what ``step_batch`` returns: ``([states,] observs, rewards, ...)``."""
        observs = self.observs
        if isinstance(observs, np.ndarray):
            observs = [row.copy() for row in observs]
        rewards = self.rewards
        if isinstance(rewards, np.ndarray):  # columns of a batch stepped in NumPy passes
            rewards = rewards.tolist()  # Python floats, as every step's reward
        terminals, truncateds = _as_list(self.terminals), _as_list(self.truncateds)
        data = (observs, rewards, terminals, truncateds, self.info_list())
        if self.states is None:
            return data
        states = records_to_states(self.states) if is_record_block(self.states) else self.states
        assert isinstance(states, list)  # a list, or a record block made one (see states)
        return (states, *data)


def empty_arrays(space: Any, state_dtype: np.dtype | None, want_state: bool) -> tuple:
    """Return ``step_batch(..., arrays=True)``'s tuple for an empty batch: no row of each.

    The rows would say the observations' shape and the states' dtype; with none, the env's
    observation space and state dtype do, so that array code needs no case for no walkers.

    >>> from gymnasium.spaces import Box
    >>> states, observs, *_, infos = empty_arrays(Box(0, 1, (4,)), np.dtype([("x", "f8")]), True)
    >>> states.shape, states.dtype.names, observs.shape, infos
    ((0,), ('x',), (0, 4), {})
    """
    shape = getattr(space, "shape", None)
    observs: np.ndarray | list = [] if shape is None else np.empty((0, *shape), space.dtype)
    data: tuple[Any, ...] = (observs, np.empty(0), np.empty(0, np.bool_), np.empty(0, np.bool_), {})
    if not want_state:
        return data
    if state_dtype is None or state_dtype.names is None:  # states that are not records
        return ([], *data)
    states = np.empty(0, state_dtype)
    states.flags.writeable = False  # read-only, as every record state
    return (states, *data)


def columns_of(lists: tuple[list, ...], want_state: bool) -> BatchColumns:
    """Return the :class:`BatchColumns` of a batch gathered from workers as lists."""
    states = lists[0] if want_state else None
    observs, rewards, terminals, truncateds, infos = lists[1:] if want_state else lists
    return BatchColumns(states, observs, rewards, terminals, truncateds, infos)


def _as_list(column: list | np.ndarray) -> list:
    """Return a column of flags as a list: an array's ``tolist()``, a list as it is."""
    return column.tolist() if isinstance(column, np.ndarray) else column


def _stacked(observs: list) -> np.ndarray | list:
    """``observs`` stacked in one array when they are arrays of one shape and dtype."""
    if observs and all(isinstance(o, np.ndarray) for o in observs):
        first = observs[0]
        if all(o.shape == first.shape and o.dtype == first.dtype for o in observs):
            return np.stack(observs)
    return observs


# Values that come back unchanged from an array's tolist(): a dict of such arrays turns
# back into exactly the infos it was made of.
_PLAIN_NUMBERS = {bool: np.bool_, int: np.int64, float: np.float64}


def _info_arrays(infos: list[dict]) -> dict[str, np.ndarray] | list[dict]:
    """``infos`` as one array per key when they share their keys and plain number types."""
    if not infos or not infos[0]:
        return infos
    keys = infos[0].keys()
    if any(info.keys() != keys for info in infos):
        return infos
    arrays: dict[str, np.ndarray] = {}
    for key in keys:
        values = [info[key] for info in infos]
        kinds = {type(value) for value in values}
        dtype = _PLAIN_NUMBERS.get(kinds.pop()) if len(kinds) == 1 else None
        if dtype is None:
            return infos
        try:
            arrays[key] = np.array(values, dtype=dtype)
        except OverflowError:  # an int beyond int64
            return infos
    return arrays
