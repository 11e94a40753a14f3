"""Watching processes from tests: is one alive, wait until a set of them is gone."""

import os
import time
from pathlib import Path


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie counts as dead)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except (FileNotFoundError, ProcessLookupError):  # gone between the open and the read
        return False


def wait_dead(pids, seconds: float = 15.0) -> bool:
    """Wait up to ``seconds`` until no process of ``pids`` runs; return whether none does."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not any(pid_alive(pid) for pid in pids):
            return True
        time.sleep(0.05)
    return False
