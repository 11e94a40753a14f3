"""How a worker process notices that its caller is gone, and leaves nothing behind.

A worker polls its caller; once the caller is gone it removes the caller's shared buffers
(only the tracker could otherwise, and it warns on stderr) and exits at once.
"""

from __future__ import annotations

import os
import signal
import threading
import time

from plangym.vectorization.leftover_blocks import pid_running
from plangym.vectorization.shared_memory import AttachedOutputs

PARENT_POLL_S = 0.5


def caller_alive(parent_pid: int, first_ppid: int) -> bool:
    """Whether the caller (``parent_pid``) runs.

    Under fork and spawn ``first_ppid`` (the parent at start) is the caller, and its death
    changes the parent; otherwise (a fork server) ask the kernel about the caller itself.
    """
    if first_ppid == parent_pid:
        return os.getppid() == parent_pid
    return pid_running(parent_pid)


def caller_gone(parent_pid: int, first_ppid: int, wait_s: float = 1.0) -> bool:
    """Whether the caller is gone, waiting up to ``wait_s`` for it to be (see below).

    A pipe from a dying caller reads EOF a moment before its children are handed to a
    new parent.
    """
    deadline = time.monotonic() + wait_s
    while caller_alive(parent_pid, first_ppid):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.01)
    return True


def guard_worker(parent_pid: int, owned: AttachedOutputs) -> int:
    """Set up a worker process: Ctrl-C ignored, exit (cleaning ``owned``) with the caller.

    SIGTERM ends the worker quietly, whatever handler a forked worker inherited (systemd or
    Slurm stopping a process group must not run the caller's). A daemon thread removes the
    caller's ``owned`` buffers and exits once the caller is gone. Returns the first parent
    pid (see :func:`caller_alive`).
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if hasattr(signal, "pthread_sigmask"):  # a caller may start workers with them blocked
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
    first_ppid = os.getppid()

    def watch() -> None:
        while caller_alive(parent_pid, first_ppid):
            time.sleep(PARENT_POLL_S)
        owned.remove_orphaned()
        os._exit(0)

    threading.Thread(target=watch, name="plangym-parent-watch", daemon=True).start()
    return first_ppid
