"""A size option checked against the memory this machine has, before any work.

A planner or a benchmark keeps one state and one observation per walker or batch element,
at least. Past the address space NumPy's allocation fails at once (``MemoryError``); below
it, with Linux's overcommit, the pages come as they are written and the kernel's
out-of-memory killer ends the process (or another one) only once the machine is short of
memory. So what cannot fit is refused first, by a lower bound: the states and the
observations alone, measured on one reset of the env.
"""

from __future__ import annotations

import os
import pickle
from typing import Any

import numpy as np


def check_fits_in_memory(option: str, count: int, env: Any) -> None:
    """Raise MemoryError if ``count`` states and observations of ``env`` exceed free memory.

    ``option`` names the size in the message; ``env`` is reset to measure one of each.
    """
    available = available_memory()
    if available is None:
        return
    state, obs, _ = env.reset()
    each = nbytes(state) + nbytes(obs)
    needed = count * each
    if needed > available:
        raise MemoryError(
            f"{option} {count:,}: its states and observations alone take {gigabytes(needed)} "
            f"({each:,} bytes each) and this machine has {gigabytes(available)} available"
        )


def nbytes(value: Any) -> int:
    """Bytes ``value`` takes at least: an array's data, else its pickle."""
    if isinstance(value, np.ndarray):
        return value.nbytes
    try:
        return len(pickle.dumps(value))
    except Exception:  # something that does not pickle: no lower bound from it
        return 0


def available_memory() -> int | None:
    """Bytes of memory available for new allocations (Linux's MemAvailable), if known."""
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, OSError, ValueError):
        return None


def gigabytes(nbytes: int) -> str:
    """``nbytes`` as gigabytes, for a message."""
    return f"{nbytes / 2**30:,.1f} GB"
