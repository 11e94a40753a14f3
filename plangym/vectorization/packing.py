"""States and actions of a chunk in the few flat forms that cross to a worker.

Pickling thousands of small arrays costs far more than one blob, so a chunk's states
travel as :class:`ArrayStates` (arrays of one dtype, at most 1-D, as one blob, for the pipe
or Ray's object store), :class:`SharedStates` (the same written into a shared arena, see
:mod:`plangym.vectorization.shared_states`: only the descriptor travels) or
:class:`ObjectStates` (anything else, the list itself). Each unpacked state owns its bytes,
so keeping one does not keep a batch alive.

>>> import numpy as np
>>> states = [np.arange(3, dtype=np.uint8), np.arange(5, dtype=np.uint8)]
>>> packed = pack_states(states)
>>> type(packed).__name__, packed.n_states
('ArrayStates', 2)
>>> [s.tolist() for s in unpack_states(packed)]
[[0, 1, 2], [0, 1, 2, 3, 4]]
>>> unpack_actions(pack_actions(np.array([0, 2, 1])))
array([0, 2, 1])

A stepped chunk's columns travel back packed too: the states as one blob, observations
stacked, rewards and flags as arrays when that is exact.

>>> payload = pack_columns((None, [np.zeros(2), np.ones(2)], [1.0, 0.5], [False, True],
...                         [False, False], [{}, {}]))
>>> type(payload[1]).__name__, payload[1].shape, payload[2].dtype
('ndarray', (2, 2), dtype('float64'))
>>> unpack_columns(payload)[1:4]
[[array([0., 0.]), array([1., 1.])], [1.0, 0.5], [False, True]]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple, TypeVar, get_args

import numpy as np

from plangym.columns import intern_dtype, is_record_block, records_to_states


class ArrayStates(NamedTuple):
    """States of one dtype as one blob; ``lengths`` (int64 bytes) when they are 1-D."""

    dtype: np.dtype | None  # None: the dtype sent last on this pipe (see DtypeChannel)
    lengths: bytes | None
    blob: bytes
    n_states: int  # not "count", which would hide tuple.count


class SharedStates(NamedTuple):
    """States of one dtype written at ``start`` of a shared arena (see shared_states)."""

    dtype: np.dtype | None
    lengths: bytes | None
    start: int
    n_states: int


class ObjectStates(NamedTuple):
    """States that are not arrays of one dtype: the list itself."""

    items: list


PackedStates = ArrayStates | SharedStates | ObjectStates


class ArrayActions(NamedTuple):
    """A numeric action array as raw bytes."""

    dtype: str
    shape: tuple[int, ...]
    data: bytes


class ListActions(NamedTuple):
    """Actions of any other kind, as they are."""

    items: Any


PackedActions = ArrayActions | ListActions
PACKED_TYPES: tuple[type, ...] = (*get_args(PackedActions), *get_args(PackedStates))


def state_layout(states: Sequence[Any] | np.ndarray) -> tuple[np.dtype, int] | None:
    """``(dtype, ndim)`` when the states are arrays of one dtype and at most 1-D, else None.

    Arrays of Python objects (plangym 0.1's Atari states) are None: their bytes are pointers.
    """
    if is_record_block(states):
        return None if states.dtype.hasobject else (states.dtype, 0)
    first = states[0] if len(states) else None
    if not isinstance(first, np.ndarray) or first.ndim > 1 or first.dtype.hasobject:
        return None
    dtype, ndim = first.dtype, first.ndim
    for state in states:
        if not (
            isinstance(state, np.ndarray)
            and (state.dtype is dtype or state.dtype == dtype)
            and state.ndim == ndim
        ):
            return None
    return dtype, ndim


def pack_states(states: Sequence[Any] | np.ndarray) -> ArrayStates | ObjectStates:
    """Pack states into one blob when they are arrays of one dtype, <= 1-D (or a record array)."""
    if is_record_block(states):
        return ArrayStates(states.dtype, None, states.tobytes(), len(states))
    layout = state_layout(states)
    if layout is None:
        return ObjectStates(list(states))
    dtype, ndim = layout
    blob = b"".join([state.tobytes() for state in states])
    lengths = None if ndim == 0 else b"".join([s.shape[0].to_bytes(8, "little") for s in states])
    return ArrayStates(dtype, lengths, blob, len(states))


def unpack_states(packed: ArrayStates | ObjectStates, as_records: bool = False) -> Any:
    """Rebuild the list of states packed by :func:`pack_states` (read-only arrays).

    ``as_records``: 0-d record states as one 1-D record array (what
    :meth:`plangym.core.PlanEnv.run_batch_columns` reads fastest).
    """
    if isinstance(packed, ObjectStates):
        return packed.items
    if not isinstance(packed, ArrayStates):
        raise TypeError(f"packed: expected ArrayStates or ObjectStates, received {packed!r}")
    dtype = packed.dtype
    assert dtype is not None, "the dtype token was not decoded (see DtypeChannel)"
    if packed.lengths is None:
        records = np.frombuffer(packed.blob, dtype=dtype, count=packed.n_states)
        if as_records and dtype.names is not None:
            return records
        return records_to_states(records)
    ends = np.cumsum(np.frombuffer(packed.lengths, dtype="<i8") * dtype.itemsize).tolist()
    starts = [0, *ends[:-1]]
    blob = packed.blob
    return [np.frombuffer(blob[a:b], dtype=dtype) for a, b in zip(starts, ends, strict=True)]


def pack_actions(actions: Any) -> PackedActions:
    """Actions as raw bytes when they are a numeric array; lists are sent as they are."""
    if isinstance(actions, np.ndarray) and actions.dtype.kind in "biuf":
        return ArrayActions(actions.dtype.str, actions.shape, actions.tobytes())
    return ListActions(actions)


def unpack_actions(packed: PackedActions) -> Any:
    """Undo :func:`pack_actions`."""
    if isinstance(packed, ArrayActions):
        return np.frombuffer(packed.data, dtype=packed.dtype).reshape(packed.shape)
    return packed.items


_NamedTuple = TypeVar("_NamedTuple", bound=NamedTuple)


def replaced(value: _NamedTuple, **changes: Any) -> _NamedTuple:
    """``value._replace(**changes)`` for a NamedTuple, at a fraction of its cost.

    >>> replaced(ObjectStates([1]), items=[2])
    ObjectStates(items=[2])
    """
    fields = list(value)
    for name, new in changes.items():
        fields[value._fields.index(name)] = new
    return tuple.__new__(type(value), fields)


class DtypeChannel:
    """Sends the states' dtype only when it differs from the last one sent on the pipe.

    Pickling a record dtype costs more than a cheap env's step
    (``benchmarks/design_figures.py``), and consecutive batches mostly share one. Each end
    of a pipe keeps one channel per direction.

    >>> sender, receiver = DtypeChannel(), DtypeChannel()
    >>> packed = pack_states([np.zeros(2, np.uint8)])
    >>> receiver.decode_states(sender.encode_states(packed)).dtype
    dtype('uint8')
    >>> sender.encode_states(packed).dtype is None
    True
    >>> sender.forget()  # that message was not sent: the next one carries the dtype
    >>> sender.encode_states(packed).dtype
    dtype('uint8')
    """

    def __init__(self) -> None:
        self._last: np.dtype | None = None

    def forget(self) -> None:
        """Send the dtype again next time: the message that carried it was not sent."""
        self._last = None

    def encode_states(self, packed: PackedStates | None) -> PackedStates | None:
        """Replace the dtype of packed states by None when the other end knows it."""
        if packed is None or isinstance(packed, ObjectStates):
            return packed
        dtype, last = packed.dtype, self._last
        assert dtype is not None, "the states were encoded already"
        # Not "dtype == None": NumPy reads None as float64, so float64 states would never
        # announce their dtype on a new pipe.
        if last is not None and (dtype is last or dtype == last):
            return replaced(packed, dtype=None)
        self._last = dtype
        return packed

    def decode_states(self, packed: PackedStates | None) -> PackedStates | None:
        """Undo :meth:`encode_states`."""
        if packed is None or isinstance(packed, ObjectStates):
            return packed
        if packed.dtype is not None:
            self._last = intern_dtype(packed.dtype)
        if self._last is None:
            raise RuntimeError(
                "states arrived without their dtype: the reply that carried it was lost (an "
                "earlier error on this pipe); the next call sends it again"
            )
        return replaced(packed, dtype=self._last)


# Columns ------------------------------------------------------------------------------------
def stack_values(values: list, kind: type, dtype: Any) -> np.ndarray | list:
    """``values`` as one array when every value is exactly of type ``kind``, else the list."""
    if all(type(value) is kind for value in values):
        return np.array(values, dtype=dtype)
    return list(values)


def stack_observations(observs: list) -> np.ndarray | list:
    """Observations as one stacked array when they are arrays of one shape and dtype."""
    first = observs[0] if observs else None
    if type(first) is np.ndarray and first.ndim:
        shape, dtype = first.shape, first.dtype
        if all(type(o) is np.ndarray and o.shape == shape and o.dtype == dtype for o in observs):
            return np.stack(observs)
    return list(observs)


def pack_columns(results: tuple) -> tuple:
    """Pack ``(new_states or None, observs, rewards, terminals, truncateds, infos)``."""
    new_states, observs, rewards, terminals, truncateds, infos = results
    return (
        None if new_states is None else pack_states(new_states),
        stack_observations(observs),
        stack_values(rewards, float, np.float64),
        stack_values(terminals, bool, np.bool_),
        stack_values(truncateds, bool, np.bool_),
        list(infos),
    )


def unpack_columns(payload: tuple) -> list:
    """Undo :func:`pack_columns`: ``[new_states or None, observs, rewards, ...]`` as lists.

    Each observation is copied out of the stack: it owns its memory (Ray's object store
    gives read-only arrays, and a kept one would pin the batch).
    """
    packed_states, observs, rewards, terminals, truncateds, infos = payload
    columns: list = [None if packed_states is None else unpack_states(packed_states)]
    columns.append([row.copy() for row in observs] if isinstance(observs, np.ndarray) else observs)
    for values in (rewards, terminals, truncateds):
        columns.append(values.tolist() if isinstance(values, np.ndarray) else values)
    columns.append(infos)
    return columns
