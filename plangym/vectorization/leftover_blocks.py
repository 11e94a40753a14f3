"""Shared-memory blocks of callers killed with all their processes, removed by the next one.

A SIGKILL to a whole process group (Jupyter's "kill kernel") ends the caller, its workers
(:mod:`plangym.vectorization.orphans`) and its tracker at once, leaving the blocks in
``/dev/shm``. On Linux a block is named ``psm_<pid namespace>_<caller pid>_<random>``
(multiprocessing's own names have hex digits only after ``psm_``), so that a later caller
removes the blocks of callers of its pid namespace that no longer run.

>>> name = block_name()
>>> name is None or name.startswith(f"psm_{pid_namespace()}_{os.getpid()}_")
True
"""

from __future__ import annotations

import contextlib
import os
import secrets
from multiprocessing import shared_memory

try:
    import _posixshmem
except ImportError:  # pragma: no cover - Windows: blocks go with their handles
    _posixshmem = None

SHM_DIR = "/dev/shm"


def pid_running(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie (dead, not yet reaped)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):  # no /proc: trust kill
        return True


def pid_namespace() -> str | None:
    """Return the pid namespace of this process (an inode number); None without /proc."""
    try:
        return str(os.stat("/proc/self/ns/pid").st_ino)
    except OSError:
        return None


def block_name() -> str | None:
    """Return a name for a new block that says whose it is (None: the system's default).

    Outside Linux there is no namespace to tell pids apart, and macOS allows 31 characters.
    """
    namespace = pid_namespace()
    if namespace is None or _posixshmem is None or not os.path.isdir(SHM_DIR):
        return None
    return f"{_prefix()}{namespace}_{os.getpid()}_{secrets.token_hex(4)}"


def _prefix() -> str:
    """Return the prefix multiprocessing gives block names, without its slash (``psm_``)."""
    return getattr(shared_memory, "_SHM_NAME_PREFIX", "/psm_").lstrip("/")


def remove_dead_callers_blocks() -> list[str]:
    """Remove the blocks of this pid namespace whose caller no longer runs; return them.

    A pid in another namespace (a container sharing ``/dev/shm``) means nothing here, so
    those blocks are left alone; so is a block whose caller's pid was reused.
    """
    namespace = pid_namespace()
    if namespace is None or _posixshmem is None:
        return []
    prefix = f"{_prefix()}{namespace}_"
    try:
        names = os.listdir(SHM_DIR)
    except OSError:
        return []
    dead = []
    for name in names:
        pid = name[len(prefix) :].split("_", 1)[0] if name.startswith(prefix) else ""
        if pid.isdigit() and not pid_running(int(pid)):
            dead.append(name)
    # A block still mapped is an orphan's (a caller killed alone): its workers remove it and
    # tell the caller's tracker, which would warn about a block removed under it.
    removed = []
    mapped = mapped_blocks() if dead else set()
    for name in (name for name in dead if name not in mapped):
        with contextlib.suppress(FileNotFoundError, PermissionError):  # another got it
            _posixshmem.shm_unlink("/" + name)
            removed.append(name)
    return removed


def mapped_blocks() -> set[str]:
    """Return the names of the blocks that running processes map (those one may read).

    >>> block = shared_memory.SharedMemory(create=True, size=8)
    >>> block.name.lstrip("/") in mapped_blocks()
    True
    >>> block.close(); block.unlink()
    """
    mapped = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError), open(f"/proc/{entry}/maps", "rb") as maps:
                for line in maps:
                    if b" /dev/shm/" in line:
                        mapped.add(line.split(b" /dev/shm/", 1)[1].split()[0].decode())
    return mapped
