"""How batches cross process boundaries without pickling every element.

* States travel as one byte blob per chunk plus their dtype and lengths
  (:func:`pack_states` / :func:`unpack_states`). Each unpacked state owns its bytes, so
  keeping one state does not keep a whole batch alive.
* Observations, rewards and flags are written by the workers into shared memory
  (:class:`SharedOutputs`) and read once by the caller.
* Anything that does not fit (states that are not arrays, rewards that are not Python
  floats, ...) falls back to pickling the whole list, which keeps results bit-identical.

>>> import numpy as np
>>> states = [np.arange(3, dtype=np.uint8), np.arange(5, dtype=np.uint8)]
>>> packed = pack_states(states)
>>> [s.tolist() for s in unpack_states(packed)]
[[0, 1, 2], [0, 1, 2, 3, 4]]
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from multiprocessing import shared_memory
from typing import Any

import numpy as np

# A packed list of states: ("arrays", dtype, lengths, blob) or ("objects", list).
PackedStates = tuple


def pack_states(states: Sequence[Any]) -> PackedStates:
    """Pack a list of states into one blob when they are arrays of one dtype, <= 1-D."""
    first = states[0] if len(states) else None
    if not isinstance(first, np.ndarray) or first.ndim > 1:
        return ("objects", list(states))
    dtype, ndim = first.dtype, first.ndim
    for state in states:
        if not (
            isinstance(state, np.ndarray)
            and (state.dtype is dtype or state.dtype == dtype)
            and state.ndim == ndim
        ):
            return ("objects", list(states))
    blob = b"".join([state.tobytes() for state in states])
    lengths = None if ndim == 0 else b"".join([s.shape[0].to_bytes(8, "little") for s in states])
    return ("arrays", dtype, lengths, blob, len(states))


def unpack_states(packed: PackedStates) -> list:
    """Rebuild the list of states packed by :func:`pack_states` (read-only arrays)."""
    if packed[0] == "objects":
        return packed[1]
    _, dtype, lengths, blob, count = packed
    size = dtype.itemsize
    if lengths is None:
        return [np.ndarray((), dtype, blob[i * size : (i + 1) * size]) for i in range(count)]
    ends = np.cumsum(np.frombuffer(lengths, dtype="<i8") * size).tolist()
    starts = [0, *ends[:-1]]
    return [
        np.frombuffer(blob[start:end], dtype=dtype) for start, end in zip(starts, ends, strict=True)
    ]


class DtypeChannel:
    """Sends a dtype only when it differs from the last one sent on the same pipe.

    Pickling a record dtype costs tens of microseconds; a batch's states share one dtype,
    and so do most consecutive batches. Each end of a pipe keeps one channel per direction.

    >>> sender, receiver = DtypeChannel(), DtypeChannel()
    >>> token = sender.encode(np.dtype("u1"))
    >>> receiver.decode(token), sender.encode(np.dtype("u1"))
    (dtype('uint8'), None)
    """

    def __init__(self):
        self._last: np.dtype | None = None

    def encode(self, dtype: np.dtype) -> np.dtype | None:
        """Return ``dtype`` if the other end does not know it yet, else None."""
        if dtype is self._last or dtype == self._last:
            return None
        self._last = dtype
        return dtype

    def decode(self, token: np.dtype | None) -> np.dtype:
        """Return the dtype that ``token`` stands for."""
        if token is not None:
            self._last = token
        return self._last

    def encode_states(self, packed: PackedStates | None) -> PackedStates | None:
        """Replace the dtype of packed states by its token."""
        if packed is None or packed[0] != "arrays":
            return packed
        return (packed[0], self.encode(packed[1]), *packed[2:])

    def decode_states(self, packed: PackedStates | None) -> PackedStates | None:
        """Undo :meth:`encode_states`."""
        if packed is None or packed[0] != "arrays":
            return packed
        return (packed[0], self.decode(packed[1]), *packed[2:])


def pack_actions(actions: Any) -> tuple:
    """Actions as raw bytes when they are a numeric array; lists are sent as they are."""
    if isinstance(actions, np.ndarray) and actions.dtype.kind in "biuf":
        return ("array", actions.dtype.str, actions.shape, actions.tobytes())
    return ("list", actions)


def unpack_actions(packed: tuple) -> Any:
    """Undo :func:`pack_actions`."""
    if packed[0] == "array":
        _, dtype, shape, data = packed
        return np.frombuffer(data, dtype=dtype).reshape(shape)
    return packed[1]


class SharedArray:
    """A NumPy array in a named shared-memory block that other processes can attach to."""

    def __init__(self, shape: tuple[int, ...], dtype: np.dtype, name: str | None = None):
        self.shape, self.dtype = tuple(shape), np.dtype(dtype)
        nbytes = max(int(np.prod(shape)) * self.dtype.itemsize, 1)
        if name is None:
            self._memory = shared_memory.SharedMemory(create=True, size=nbytes)
            self.owner = True
        else:
            # Workers share their caller's resource tracker, so attaching adds nothing to
            # unregister; the tracker removes the block if the caller dies without doing so.
            self._memory = shared_memory.SharedMemory(name=name)
            self.owner = False
        self.array = np.ndarray(self.shape, self.dtype, buffer=self._memory.buf)

    @property
    def spec(self) -> tuple[str, tuple[int, ...], str]:
        """What another process needs to attach: (name, shape, dtype)."""
        return (self._memory.name, self.shape, self.dtype.str)

    @classmethod
    def attach(cls, spec: tuple[str, tuple[int, ...], str]) -> SharedArray:
        """Attach to the block described by ``spec``."""
        name, shape, dtype = spec
        return cls(shape, np.dtype(dtype), name=name)

    def close(self) -> None:
        """Detach; the creator also removes the block."""
        self.array = None
        with contextlib.suppress(Exception):
            self._memory.close()
        if self.owner:
            with contextlib.suppress(FileNotFoundError):
                self._memory.unlink()


class SharedOutputs:
    """Shared buffers for the fixed-shape outputs of a batch: obs, rewards and flags."""

    FIELDS = ("observs", "rewards", "terminals", "truncateds")

    def __init__(self, capacity: int, obs_shape: tuple[int, ...], obs_dtype: np.dtype):
        self.capacity = capacity
        self.obs_shape, self.obs_dtype = tuple(obs_shape), np.dtype(obs_dtype)
        self.buffers = {
            "observs": SharedArray((capacity, *self.obs_shape), self.obs_dtype),
            "rewards": SharedArray((capacity,), np.float64),
            "terminals": SharedArray((capacity,), np.bool_),
            "truncateds": SharedArray((capacity,), np.bool_),
        }

    @property
    def specs(self) -> dict[str, tuple]:
        """Attachment specs of every buffer."""
        return {field: buffer.spec for field, buffer in self.buffers.items()}

    def close(self) -> None:
        """Remove every buffer."""
        for buffer in self.buffers.values():
            buffer.close()


class AttachedOutputs:
    """A worker's view of the caller's :class:`SharedOutputs` (re-attached when they grow)."""

    def __init__(self):
        self._specs: dict[str, tuple] | None = None
        self._buffers: dict[str, SharedArray] = {}

    def arrays(self, specs: dict[str, tuple] | None) -> dict[str, np.ndarray]:
        """Return the arrays described by ``specs`` (None: the same as last time)."""
        if specs is not None and specs != self._specs:
            self.close()
            self._buffers = {field: SharedArray.attach(spec) for field, spec in specs.items()}
            self._specs = specs
        return {field: buffer.array for field, buffer in self._buffers.items()}

    def close(self) -> None:
        """Detach from every buffer."""
        for buffer in self._buffers.values():
            buffer.close()
        self._buffers, self._specs = {}, None


def write_outputs(arrays: dict[str, np.ndarray], offset: int, results: tuple) -> dict:
    """Write a chunk's obs, rewards and flags into shared ``arrays`` at ``offset``.

    Returns, per field, either None (written to shared memory) or the list itself when its
    elements do not fit the shared array exactly (they are then pickled with the reply).
    """
    observs, rewards, terminals, truncateds = results
    end = offset + len(rewards)
    fallback: dict[str, list | None] = {}
    obs_array = arrays["observs"]
    row_shape, row_dtype = obs_array.shape[1:], obs_array.dtype
    if all(
        isinstance(obs, np.ndarray) and obs.shape == row_shape and obs.dtype == row_dtype
        for obs in observs
    ):
        if observs:
            obs_array[offset:end] = observs
        fallback["observs"] = None
    else:
        fallback["observs"] = list(observs)
    for field, values, kind in (
        ("rewards", rewards, float),
        ("terminals", terminals, bool),
        ("truncateds", truncateds, bool),
    ):
        if all(type(value) is kind for value in values):
            arrays[field][offset:end] = values
            fallback[field] = None
        else:
            fallback[field] = list(values)
    return fallback


def read_outputs(arrays: dict[str, np.ndarray], offset: int, count: int, fallback: dict) -> list:
    """Read back what :func:`write_outputs` wrote: [observs, rewards, terminals, truncateds]."""
    columns = []
    for field in SharedOutputs.FIELDS:
        if fallback[field] is not None:
            columns.append(fallback[field])
        elif field == "observs":
            columns.append(list(arrays[field][offset : offset + count].copy()))
        else:
            columns.append(arrays[field][offset : offset + count].tolist())
    return columns
