"""Stop signals (Ctrl-C's SIGINT, and SIGTERM) as an exception the commands can handle.

Inside :func:`stop_signals_raise`, either signal raises :class:`Interrupted` in the main
thread, so that ``finally`` blocks close the workers and ``plangym plan`` can save the
game played so far. The exit status is the one a shell shows for a process the signal
ended: 128 + its number, 130 for SIGINT and 143 for SIGTERM. A signal that was ignored
when the command started (a background job of a script) stays ignored.

>>> import os, signal
>>> with stop_signals_raise() as stops:
...     try:
...         os.kill(os.getpid(), signal.SIGTERM)
...         for _ in range(1000):  # the handler runs between two bytecodes
...             pass
...     except Interrupted as stop:
...         print(stop.signal_name, stop.exit_status, len(stops.received))
SIGTERM 143 1
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(KeyboardInterrupt):
    """A stop signal arrived.

    A KeyboardInterrupt, so that the code which cleans up after Ctrl-C (the workers'
    scheduler) does the same for SIGTERM.
    """

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    @property
    def signal_name(self) -> str:
        """``"SIGINT"`` or ``"SIGTERM"``."""
        return signal.Signals(self.signum).name

    @property
    def exit_status(self) -> int:
        """128 + the signal's number, as a shell reports a process the signal ended."""
        return 128 + self.signum


class StopSignals:
    """Raises :class:`Interrupted` for each stop signal; remembers them in ``received``."""

    def __init__(self) -> None:
        self.received: list[Interrupted] = []

    @property
    def first(self) -> Interrupted | None:
        """The first signal received, or None."""
        return self.received[0] if self.received else None

    def handle(self, signum: int, frame: FrameType | None) -> None:
        """Raise :class:`Interrupted` (the signal handler)."""
        stop = Interrupted(signum)
        self.received.append(stop)
        raise stop


# The StopSignals of the block being run, if any (a list: no global statement needed).
_ACTIVE: list[StopSignals] = []


@contextlib.contextmanager
def stop_signals_raise() -> Iterator[StopSignals]:
    """Make SIGINT and SIGTERM raise :class:`Interrupted` inside the block.

    Nested blocks share the outer block's :class:`StopSignals`. Outside the main thread
    (where Python runs no signal handlers) nothing changes.
    """
    if _ACTIVE:
        yield _ACTIVE[0]
        return
    stops = StopSignals()
    if threading.current_thread() is not threading.main_thread():
        yield stops
        return
    previous = {signum: signal.getsignal(signum) for signum in STOP_SIGNALS}
    for signum, handler in previous.items():
        if handler is not signal.SIG_IGN:
            signal.signal(signum, stops.handle)
    _ACTIVE.append(stops)
    try:
        yield stops
    finally:
        _ACTIVE.clear()
        for signum, handler in previous.items():
            # getsignal returns None for a handler not installed from Python.
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)
