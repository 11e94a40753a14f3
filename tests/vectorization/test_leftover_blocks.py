"""The sweep of blocks left by callers killed with all their processes (leftover_blocks)."""

import os
import secrets
import subprocess
import sys
from multiprocessing import resource_tracker, shared_memory

import pytest

from plangym.vectorization.leftover_blocks import (
    SHM_DIR,
    _prefix,
    block_name,
    remove_dead_callers_blocks,
)

pytestmark = pytest.mark.skipif(block_name() is None, reason="no named blocks on this system")


def dead_callers_block() -> shared_memory.SharedMemory:
    """A block named as a caller's that has exited (this process maps it)."""
    child = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, check=True
    )
    mine = block_name()
    assert mine is not None
    namespace = mine[len(_prefix()) :].split("_", 1)[0]
    name = f"{_prefix()}{namespace}_{int(child.stdout)}_{secrets.token_hex(4)}"
    block = shared_memory.SharedMemory(name=name, create=True, size=16)
    # The sweep unlinks it, not this process: its tracker must not report it at exit.
    resource_tracker.unregister(block._name, "shared_memory")  # type: ignore[attr-defined]
    return block


def test_a_dead_callers_block_is_left_while_a_process_maps_it():
    # A caller killed alone leaves workers that remove its blocks and tell its tracker, which
    # outlives it; another caller's sweep removing them first made that tracker print
    # "leaked shared_memory objects" and six "No such file" lines on the killed program's
    # terminal.
    block = dead_callers_block()
    name = block.name.lstrip("/")
    try:
        assert name not in remove_dead_callers_blocks()
        assert os.path.exists(os.path.join(SHM_DIR, name))
    finally:
        block.close()
    # Mapped by no one (the whole process group was killed): a leftover.
    assert name in remove_dead_callers_blocks()
    assert not os.path.exists(os.path.join(SHM_DIR, name))
