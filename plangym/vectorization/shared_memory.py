"""Shared-memory blocks that the caller creates and its worker processes map.

Only the creator registers a block with the resource tracker and removes it (see
:func:`attach_untracked`), so the tracker warns of nothing.

>>> block = SharedArray((2, 3), np.float64)
>>> view = SharedArray.attach(block.spec)
>>> view.array[1, 2] = 7.0
>>> float(block.array[1, 2])
7.0
>>> view.close(); block.close()
"""

from __future__ import annotations

import contextlib
import mmap
import os
import signal
import sys
import threading
from collections.abc import Iterator
from multiprocessing import resource_tracker, shared_memory
from typing import Any

import numpy as np
from numpy.typing import DTypeLike

from plangym.vectorization.leftover_blocks import block_name
from plangym.vectorization.packing import PackedStates, SharedStates, unpack_states
from plangym.vectorization.shared_states import read_states
from plangym.vectorization.shm_room import reserve

try:  # what SharedMemory uses on POSIX; Windows has no resource tracker to keep out of
    import _posixshmem
except ImportError:  # pragma: no cover - Windows
    _posixshmem = None


@contextlib.contextmanager
def interrupts_deferred() -> Iterator[None]:
    """Hold back Ctrl-C (SIGINT) until the block is done, then deliver it.

    Creating and registering a block (or removing and unregistering it) are two steps that
    an interrupt must not split. The signal is also blocked at the OS level, so a worker
    started meanwhile inherits it blocked until it decides what Ctrl-C means.
    """
    handler = signal.getsignal(signal.SIGINT)
    # Not the main thread, or SIGINT ignored or at its default action: nothing to hold back.
    if threading.current_thread() is not threading.main_thread() or not callable(handler):
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
    """A block mapped as ``SharedMemory(name, track=False)`` (Python 3.13+) maps it on POSIX."""

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

    The shared tracker keeps a *set* of names: a worker unregistering a block would drop
    the caller's entry (a ``KeyError`` on stderr, and a leak if the caller dies).
    """
    if sys.version_info >= (3, 13):
        return shared_memory.SharedMemory(name=name, track=False)
    if _posixshmem is None:  # pragma: no cover - Windows: no tracker
        return shared_memory.SharedMemory(name=name)
    return _UntrackedMapping(name)


def remove_orphaned(name: str) -> None:
    """Remove the block ``name`` of a caller that died, and its entry in the tracker.

    Run by its workers: the one whose removal succeeds also unregisters the name.
    """
    if _posixshmem is None:  # pragma: no cover - Windows: blocks go with their handles
        return
    try:
        _posixshmem.shm_unlink("/" + name)
    except OSError:  # another worker or the caller removed it first
        return
    # Only tell a tracker inherited from the caller (else this would start a new one).
    if getattr(resource_tracker._resource_tracker, "_fd", None) is not None:
        with contextlib.suppress(Exception):
            resource_tracker.unregister("/" + name, "shared_memory")


Spec = tuple[str, tuple[int, ...], str]  # what another process needs to attach to a block

# References to a block's mmap when no array views it: SharedMemory's, its memoryview's,
# the local name's and getrefcount's argument.
_OWN_REFERENCES = 4


class SharedArray:
    """A NumPy array in a named shared-memory block that other processes can attach to.

    The creator registers and removes the block, once; if it dies, its workers
    (:func:`remove_orphaned`) or the tracker do.
    """

    def __init__(
        self,
        shape: tuple[int, ...],
        dtype: DTypeLike,
        name: str | None = None,
        reserved: bool = False,
    ):
        self.shape, self.dtype = tuple(shape), np.dtype(dtype)
        nbytes = max(int(np.prod(shape)) * self.dtype.itemsize, 1)
        self._to_unlink = name is None  # by the creator, once
        if name is None:
            try:
                with interrupts_deferred():
                    self._memory = shared_memory.SharedMemory(
                        name=block_name(), create=True, size=nbytes
                    )
            except BaseException:  # Ctrl-C, held back until the block was registered
                if hasattr(self, "_memory"):
                    self.close()
                raise
        else:
            self._memory = attach_untracked(name)
        self._reserved = 0  # bytes from the start that have their pages (see reserve)
        self.array = np.ndarray(self.shape, self.dtype, buffer=self._memory.buf)
        self.spec: Spec = (self._memory.name, self.shape, self.dtype.str)
        if reserved:  # all of it, now: no room is an OSError and no block
            try:
                self.reserve()
            except BaseException:
                self.close()
                raise

    def reserve(self, nbytes: int | None = None) -> None:
        """Give the block's first ``nbytes`` (all: None) their pages now (see :mod:`shm_room`).

        Raises OSError (``ENOSPC``) when /dev/shm has no room for them, where writing them
        would kill the writing process.
        """
        stop = self.array.nbytes if nbytes is None else min(nbytes, self.array.nbytes)
        if stop > self._reserved:
            fd = getattr(self._memory, "_fd", -1)  # SharedMemory's descriptor on POSIX
            if fd >= 0:
                reserve(fd, self._reserved, stop)
            self._reserved = stop

    @classmethod
    def attach(cls, spec: Spec) -> SharedArray:
        """Attach to the block described by ``spec``."""
        name, shape, dtype = spec
        return cls(shape, np.dtype(dtype), name=name)

    def close(self) -> None:
        """Detach; the creator also removes the block (once: closing again does nothing).

        A mapping still viewed (``copy=False`` observations) is left to its last array:
        unmapping it would crash the next read. SharedMemory.close() then closes the fd.
        """
        self.array = None
        memory: Any = self._memory
        mapping = memory._mmap
        if mapping is not None and sys.getrefcount(mapping) > _OWN_REFERENCES:
            memory._buf, memory._mmap = None, None
        del mapping
        with contextlib.suppress(Exception):
            memory.close()
        if self._to_unlink:
            self._to_unlink = False
            with interrupts_deferred(), contextlib.suppress(FileNotFoundError):
                self._memory.unlink()


class SharedOutputs:
    """Shared buffers for the fixed-shape outputs of a batch: obs, rewards and flags."""

    def __init__(self, capacity: int, obs_shape: tuple[int, ...], obs_dtype: np.dtype):
        self.capacity = capacity
        self._reserved_rows = 0  # rows of every buffer that have their pages
        self.buffers: dict[str, SharedArray] = {}
        try:
            for field, shape, dtype in (
                ("observs", (capacity, *obs_shape), obs_dtype),
                ("rewards", (capacity,), np.float64),
                ("terminals", (capacity,), np.bool_),
                ("truncateds", (capacity,), np.bool_),
            ):
                self.buffers[field] = SharedArray(shape, dtype)
        except BaseException:  # Ctrl-C halfway: remove the buffers made so far
            self.close()
            raise
        self.specs = self._specs()

    def _specs(self) -> dict[str, tuple]:
        # A new dict only when a buffer is replaced: workers told of it compare by identity.
        return {field: buffer.spec for field, buffer in self.buffers.items()}

    def ensure_state_bytes(self, in_bytes: int, out_bytes: int) -> None:
        """Make the state arenas ("states_in", "states_out") hold at least these many bytes.

        A grown arena is replaced: workers attach to it with their next chunk. The bytes
        needed get their pages (:meth:`SharedArray.reserve`), or OSError says there is no room.
        """
        for field, needed in (("states_in", in_bytes), ("states_out", out_bytes)):
            current = self.buffers.get(field)
            size = current.shape[0] if current is not None else 0
            if needed > size:
                if current is not None:  # out of the dict first: it is never used closed
                    del self.buffers[field]
                    current.close()
                current = self.buffers[field] = SharedArray((max(needed, 2 * size),), np.uint8)
                self.specs = self._specs()
            if current is not None and needed > current._reserved:
                current.reserve(needed)

    def reserve_rows(self, count: int) -> None:
        """Give the first ``count`` rows of each output buffer their pages (or OSError)."""
        if count <= self._reserved_rows:  # every batch but a larger one than before
            return
        for field in ("observs", "rewards", "terminals", "truncateds"):
            buffer = self.buffers[field]
            buffer.reserve(count * (buffer.array.nbytes // max(self.capacity, 1)))
        self._reserved_rows = count

    def arena(self, field: str) -> np.ndarray:
        """Return the state arena ``field`` ("states_in" or "states_out"; empty if none)."""
        buffer = self.buffers.get(field)
        return np.zeros(0, np.uint8) if buffer is None else buffer.array

    def read_states(self, packed: PackedStates) -> list | np.ndarray:
        """Return the states of a worker's reply, each owning its bytes."""
        if isinstance(packed, SharedStates):
            return read_states(self.arena("states_out"), packed)
        return unpack_states(packed)

    def close(self) -> None:
        """Remove every buffer; closed outputs have room for nothing, so they get replaced."""
        self.capacity = 0
        with interrupts_deferred():
            for buffer in self.buffers.values():
                buffer.close()


class AttachedOutputs:
    """A worker's map of the caller's shared buffers, by field."""

    def __init__(self) -> None:
        self._specs: dict[str, tuple] = {}
        self._buffers: dict[str, SharedArray] = {}
        self.arrays: dict[str, np.ndarray] = {}

    def attach(self, specs: dict[str, tuple]) -> None:
        """Map every buffer ``specs`` names not mapped as it describes yet (replaced ones anew)."""
        for field, spec in specs.items():
            if self._specs.get(field) == spec and field in self._buffers:
                continue
            old = self._buffers.pop(field, None)
            self.arrays.pop(field, None)
            if old is not None:
                old.close()
            self._specs[field] = spec  # known before mapped, for remove_orphaned
            self._buffers[field] = buffer = SharedArray.attach(spec)
            self.arrays[field] = buffer.array

    def close(self) -> None:
        """Detach from every buffer."""
        for buffer in self._buffers.values():
            buffer.close()
        self._buffers, self._specs, self.arrays = {}, {}, {}

    def remove_orphaned(self) -> None:
        """Remove the caller's buffers once it is gone (see :func:`remove_orphaned`)."""
        for name, *_ in list(self._specs.values()):
            remove_orphaned(name)
