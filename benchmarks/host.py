"""Where a benchmark ran, for the headers of its tables."""

from __future__ import annotations

import contextlib
from pathlib import Path


def cpu_model(default: str) -> str:
    """The CPU's model name from ``/proc/cpuinfo``; ``default`` where it names none."""
    with contextlib.suppress(OSError):  # not Linux
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return default
