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
import mmap
import os
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from multiprocessing import resource_tracker, shared_memory
from typing import Any

import numpy as np

from plangym.columns import BatchColumns, intern_dtype, is_record_block, records_to_states
from plangym.vectorization.obs_pool import ObservationPool
from plangym.vectorization.shared_states import read_states, state_layout

try:  # what SharedMemory uses on POSIX; Windows has no resource tracker to keep out of
    import _posixshmem
except ImportError:  # pragma: no cover - Windows
    _posixshmem = None

# A packed list of states: ("arrays", dtype, lengths, blob) or ("objects", list).
PackedStates = tuple


def pack_states(states: Sequence[Any] | np.ndarray) -> PackedStates:
    """Pack a list of states into one blob when they are arrays of one dtype, <= 1-D.

    A 1-D record array (see :class:`plangym.columns.BatchColumns`) packs as its rows.
    """
    if is_record_block(states):
        return ("arrays", states.dtype, None, states.tobytes(), len(states))
    layout = state_layout(states)
    if layout is None:
        return ("objects", list(states))
    dtype, ndim = layout
    blob = b"".join([state.tobytes() for state in states])
    lengths = None if ndim == 0 else b"".join([s.shape[0].to_bytes(8, "little") for s in states])
    return ("arrays", dtype, lengths, blob, len(states))


def unpack_states(packed: PackedStates, as_records: bool = False) -> list | np.ndarray:
    """Rebuild the list of states packed by :func:`pack_states` (read-only arrays).

    With ``as_records``, 0-d record states come back as one read-only 1-D record array
    (what :meth:`plangym.core.PlanEnv.run_batch_columns` reads fastest) instead of a list.
    """
    if packed[0] == "objects":
        return packed[1]
    if packed[0] == "shared":
        raise ValueError("packed: states in shared memory are read with read_states")
    _, dtype, lengths, blob, count = packed
    if lengths is None:
        records = np.frombuffer(blob, dtype=dtype, count=count)
        if as_records and dtype.names is not None:
            return records
        return records_to_states(records)
    ends = np.cumsum(np.frombuffer(lengths, dtype="<i8") * dtype.itemsize).tolist()
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
            self._last = intern_dtype(token)
        return self._last

    def encode_states(self, packed: PackedStates | None) -> PackedStates | None:
        """Replace the dtype of packed states by its token."""
        if packed is None or packed[0] == "objects":
            return packed
        return (packed[0], self.encode(packed[1]), *packed[2:])

    def decode_states(self, packed: PackedStates | None) -> PackedStates | None:
        """Undo :meth:`encode_states`."""
        if packed is None or packed[0] == "objects":
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


@contextlib.contextmanager
def interrupts_deferred() -> Iterator[None]:
    """Hold back Ctrl-C (SIGINT) until the block is done, then deliver it.

    Creating a block and registering it with the resource tracker, or removing it and
    unregistering it, are two steps each: a KeyboardInterrupt between them would leave a
    block nobody removes, or a name the tracker warns about at exit. Python runs signal
    handlers in the main thread only, so elsewhere there is nothing to hold back. The
    signal is also blocked at the OS level meanwhile, so a process started in the block
    (a worker) inherits it blocked until it decides what Ctrl-C means for it.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    handler = signal.getsignal(signal.SIGINT)
    if not callable(handler):  # ignored, or the default action: nothing to hold back
        yield
        return
    received: list = []
    signal.signal(signal.SIGINT, lambda signum, frame: received.append(frame))
    blocked = hasattr(signal, "pthread_sigmask")
    if blocked:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        if blocked:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
        signal.signal(signal.SIGINT, handler)
        if received:
            handler(signal.SIGINT, received[0])


class _UntrackedMapping:
    """A block mapped as ``SharedMemory(name)`` maps it on POSIX, without registering it.

    What ``SharedMemory(name, track=False)`` does on Python 3.13+.
    """

    def __init__(self, name: str):
        fd = _posixshmem.shm_open("/" + name, os.O_RDWR, mode=0o600)
        try:
            self._mmap = mmap.mmap(fd, os.fstat(fd).st_size)
        finally:
            os.close(fd)
        self.name = name
        self.buf = memoryview(self._mmap)

    def close(self) -> None:
        self.buf.release()
        self._mmap.close()


def attach_untracked(name: str) -> Any:
    """Map the block ``name`` (created by another process) without telling the tracker.

    The resource tracker is shared by the caller and its workers, and it keeps one *set*
    of names: a worker registering a block the caller registered already adds nothing,
    and a worker unregistering it would drop the caller's entry, so that the caller's own
    unregister fails in the tracker (a ``KeyError`` traceback on stderr) and the block
    leaks if the caller dies. Only the creator registers and unregisters a block.
    """
    if sys.version_info >= (3, 13):
        return shared_memory.SharedMemory(name=name, track=False)
    if _posixshmem is None:  # pragma: no cover - Windows: no tracker
        return shared_memory.SharedMemory(name=name)
    return _UntrackedMapping(name)


def remove_orphaned(name: str) -> None:
    """Remove the block ``name`` of a caller that died, and its entry in the tracker.

    Run by the caller's workers once it is gone: the one whose removal succeeds also
    unregisters the name, so the tracker (shared with them, and exiting after them) has
    nothing left to remove or warn about. Segments the workers never heard of are
    removed by the tracker, with a warning.
    """
    if _posixshmem is None:  # pragma: no cover - Windows: blocks go with their handles
        return
    try:
        _posixshmem.shm_unlink("/" + name)
    except OSError:  # another worker or the caller removed it first
        return
    # A worker whose caller started no tracker before it would start one of its own here
    # (which knows no name): only tell a tracker inherited from the caller.
    if getattr(resource_tracker._resource_tracker, "_fd", None) is not None:
        with contextlib.suppress(Exception):
            resource_tracker.unregister("/" + name, "shared_memory")


class SharedArray:
    """A NumPy array in a named shared-memory block that other processes can attach to.

    The creator registers the block with multiprocessing's resource tracker and removes
    it, once (see :func:`attach_untracked` for why the others do neither). The tracker
    removes the block if the caller dies without doing so, and the workers do it first
    when they know it (see :func:`remove_orphaned`), so no warning is printed.
    """

    def __init__(self, shape: tuple[int, ...], dtype: np.dtype, name: str | None = None):
        self.shape, self.dtype = tuple(shape), np.dtype(dtype)
        nbytes = max(int(np.prod(shape)) * self.dtype.itemsize, 1)
        self._unlinked = False
        if name is None:
            self.owner = True
            try:
                with interrupts_deferred():
                    self._memory = shared_memory.SharedMemory(create=True, size=nbytes)
            except BaseException:  # Ctrl-C, held back until the block was registered
                if hasattr(self, "_memory"):
                    self.close()
                raise
        else:
            self._memory = attach_untracked(name)
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
        """Detach; the creator also removes the block (once: closing again does nothing)."""
        self.array = None
        with contextlib.suppress(Exception):
            self._memory.close()
        if self.owner and not self._unlinked:
            self._unlinked = True
            with interrupts_deferred(), contextlib.suppress(FileNotFoundError):
                self._memory.unlink()


class SharedOutputs:
    """Shared buffers for the fixed-shape outputs of a batch: obs, rewards and flags."""

    FIELDS = ("observs", "rewards", "terminals", "truncateds")

    def __init__(self, capacity: int, obs_shape: tuple[int, ...], obs_dtype: np.dtype):
        self.capacity = capacity
        self.obs_shape, self.obs_dtype = tuple(obs_shape), np.dtype(obs_dtype)
        self.buffers: dict[str, SharedArray] = {}
        try:
            for field, shape, dtype in (
                ("observs", (capacity, *self.obs_shape), self.obs_dtype),
                ("rewards", (capacity,), np.float64),
                ("terminals", (capacity,), np.bool_),
                ("truncateds", (capacity,), np.bool_),
            ):
                self.buffers[field] = SharedArray(shape, dtype)
        except BaseException:  # Ctrl-C halfway: remove the buffers made so far
            self.close()
            raise

    @property
    def specs(self) -> dict[str, tuple]:
        """Attachment specs of every buffer."""
        return {field: buffer.spec for field, buffer in self.buffers.items()}

    def ensure_state_bytes(self, in_bytes: int, out_bytes: int) -> None:
        """Make the state arenas ("states_in", "states_out") hold at least these many bytes.

        See :mod:`plangym.vectorization.shared_states`. An arena that grows is replaced
        (its specs change, so workers attach to the new one with their next chunk).
        """
        for field, needed in (("states_in", in_bytes), ("states_out", out_bytes)):
            current = self.buffers.get(field)
            size = current.shape[0] if current is not None else 0
            if needed > size:
                if current is not None:  # out of the dict first: it is never used closed
                    del self.buffers[field]
                    current.close()
                self.buffers[field] = SharedArray((max(needed, 2 * size),), np.uint8)

    def arena(self, field: str) -> np.ndarray:
        """Return the state arena ``field`` ("states_in" or "states_out"; empty if none)."""
        buffer = self.buffers.get(field)
        return np.zeros(0, np.uint8) if buffer is None else buffer.array

    def read_states(self, packed: PackedStates) -> list:
        """Return the states of a worker's reply, each owning its bytes."""
        if packed[0] == "shared":
            return read_states(self.arena("states_out"), packed)
        return unpack_states(packed)

    def close(self) -> None:
        """Remove every buffer; closed outputs have room for nothing, so they get replaced."""
        self.capacity = 0
        with interrupts_deferred():
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
            self._specs = specs  # known before attached, for remove_orphaned
            try:
                self._buffers = {f: SharedArray.attach(spec) for f, spec in specs.items()}
            except BaseException:
                self._specs = None
                raise
        return {field: buffer.array for field, buffer in self._buffers.items()}

    def close(self) -> None:
        """Detach from every buffer."""
        for buffer in self._buffers.values():
            buffer.close()
        self._buffers, self._specs = {}, None

    def remove_orphaned(self) -> None:
        """Remove the caller's buffers once it is gone (see :func:`remove_orphaned`)."""
        for name, *_ in list((self._specs or {}).values()):
            remove_orphaned(name)


def write_outputs(arrays: dict[str, np.ndarray], offset: int, columns: BatchColumns) -> dict:
    """Write a chunk's obs, rewards and flags into shared ``arrays`` at ``offset``.

    Returns, per field, either None (written to shared memory) or the list itself when its
    elements do not fit the shared array exactly (they are then pickled with the reply).
    Observations the env already wrote in place (``columns.observs`` is a view of the
    shared array) are not copied again.
    """
    observs, rewards = columns.observs, columns.rewards
    terminals, truncateds = columns.terminals, columns.truncateds
    end = offset + len(rewards)
    fallback: dict[str, list | None] = {}
    obs_array = arrays["observs"]
    row_shape, row_dtype = obs_array.shape[1:], obs_array.dtype
    if isinstance(observs, np.ndarray) and np.shares_memory(observs, obs_array):
        fallback["observs"] = None
    elif all(
        isinstance(obs, np.ndarray) and obs.shape == row_shape and obs.dtype == row_dtype
        for obs in observs
    ):
        if len(observs):
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


def read_outputs(
    arrays: dict[str, np.ndarray],
    offset: int,
    count: int,
    fallback: dict,
    pool: ObservationPool | None = None,
) -> list:
    """Read back what :func:`write_outputs` wrote: [observs, rewards, terminals, truncateds].

    Every observation comes back in an array of its own, as a single env returns them:
    keeping one must not keep a whole batch alive. ``pool`` recycles those arrays.
    """
    columns = []
    for field in SharedOutputs.FIELDS:
        if fallback[field] is not None:
            columns.append(fallback[field])
        elif field == "observs":
            rows = arrays[field][offset : offset + count]
            columns.append(pool.copies(rows) if pool else [row.copy() for row in rows])
        else:
            columns.append(arrays[field][offset : offset + count].tolist())
    return columns
