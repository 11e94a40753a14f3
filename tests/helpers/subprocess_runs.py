"""Running Python code in a fresh interpreter from a test, its output captured as text."""

import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path


def run_python(
    code: str,
    *args: str,
    timeout: float,
    cwd: str | Path | None = None,
    env: Mapping[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run ``python -c code *args`` on this interpreter and return it, whatever its status.

    ``env=None`` hands the child this process's environment. ``run`` returns once every
    holder of the child's stdout and stderr is gone (its own children too).
    """
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        cwd=cwd,
        env=env,
    )
