"""A child forked with ``os.fork`` from a caller forgets the caller's worker processes.

Else multiprocessing's exit handler in the child would kill and join them.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import weakref
from multiprocessing.process import BaseProcess

# Every worker process started in this process and not yet reaped.
STARTED_WORKERS: weakref.WeakSet[BaseProcess] = weakref.WeakSet()


def _disown_inherited_workers() -> None:
    children = getattr(mp.process, "_children", None)
    if isinstance(children, set):
        children.difference_update(STARTED_WORKERS)


os.register_at_fork(after_in_child=_disown_inherited_workers)
