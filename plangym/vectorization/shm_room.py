"""Room in /dev/shm for a shared block, taken before a batch is sent, not when first written.

POSIX shared memory (a tmpfs, /dev/shm on Linux) gives a block its pages when they are
first written. With too little room left that write fails as SIGBUS, which kills the
process writing: the caller (no exception to catch) or a worker (a crash that re-running
cannot cure). Containers often have little room: Docker gives 64 MB unless run with
``--shm-size``. Reserving the pages a batch will use before it is sent turns that into an
``OSError`` (``ENOSPC``) the caller can catch, raised before any worker gets work.

>>> import tempfile
>>> with tempfile.TemporaryFile() as file:
...     reserve(file.fileno(), 0, 4096)
...     os.fstat(file.fileno()).st_size >= 4096
True
"""

from __future__ import annotations

import errno
import os

SHM_FOLDER = "/dev/shm"
# What a file system that cannot reserve answers: its pages then come as they are written.
CANNOT_RESERVE = (errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS)


def reserve(fd: int, start: int, stop: int) -> None:
    """Back bytes ``[start, stop)`` of the block open as ``fd`` with memory now.

    Raises OSError (``ENOSPC``) saying how much was needed and how much room is left.
    """
    if stop <= start or not hasattr(os, "posix_fallocate"):  # macOS: no such call
        return
    try:
        os.posix_fallocate(fd, start, stop - start)
    except OSError as error:
        if error.errno in CANNOT_RESERVE:
            return
        if error.errno == errno.ENOSPC:
            raise OSError(errno.ENOSPC, no_room_message(stop - start)) from None
        raise


def no_room_message(needed: int) -> str:
    """Say that ``needed`` bytes did not fit in /dev/shm, how much room it has, what to do."""
    try:
        stats = os.statvfs(SHM_FOLDER)
        room = (
            f", which has {_megabytes(stats.f_bavail * stats.f_frsize)} free of "
            f"{_megabytes(stats.f_blocks * stats.f_frsize)}"
        )
    except OSError:  # no such folder: the message goes without the figures
        room = ""
    return (
        f"shared memory: the batch needs {_megabytes(needed)} more in {SHM_FOLDER}{room}, so "
        "nothing was sent to the workers: step smaller batches, or give it more room "
        "(Docker: docker run --shm-size=2g)"
    )


def _megabytes(nbytes: int) -> str:
    return f"{nbytes / 2**20:,.1f} MB"
