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
from typing import TextIO

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def past_echo(stream: TextIO) -> str:
    """Return what starts a line printed after a Ctrl-C: a newline on a terminal.

    The terminal echoes "^C" where the cursor is, and a line printed then would follow it.
    """
    return "\n" if stream.isatty() else ""


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
    """Raises :class:`Interrupted` for each stop signal; remembers them in ``received``.

    Inside :meth:`held` a signal is remembered and raised when the block ends.
    """

    def __init__(self) -> None:
        self.received: list[Interrupted] = []
        self._holds = 0
        self._held: Interrupted | None = None  # the first signal a held block received

    @property
    def first(self) -> Interrupted | None:
        """The first signal received, or None."""
        return self.received[0] if self.received else None

    def handle(self, signum: int, frame: FrameType | None) -> None:
        """Raise :class:`Interrupted` (the signal handler), or hold it (see :meth:`held`)."""
        stop = Interrupted(signum)
        self.received.append(stop)
        if self._holds:
            self._held = self._held or stop
            return
        raise stop

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """Run the block whole: a signal that arrives meanwhile is raised when it ends.

        For two steps that must not be parted (a file renamed into place, and noted as
        written).

        >>> import os, signal
        >>> with stop_signals_raise() as stops:
        ...     try:
        ...         with stops.held():
        ...             os.kill(os.getpid(), signal.SIGINT)
        ...             for _ in range(1000):  # the handler runs, and holds the signal
        ...                 pass
        ...             print("the block ran to its end")
        ...     except Interrupted as stop:
        ...         print("then", stop.signal_name)
        the block ran to its end
        then SIGINT
        """
        self._holds += 1
        try:
            yield
        except BaseException:
            self._held = None  # the block's own error goes on; the signal is in received
            raise
        finally:
            self._holds -= 1
        if not self._holds and self._held is not None:
            stop, self._held = self._held, None
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


@contextlib.contextmanager
def stop_signals_held() -> Iterator[None]:
    """:meth:`StopSignals.held` of the active :func:`stop_signals_raise` block, if any."""
    if not _ACTIVE:
        yield
        return
    with _ACTIVE[0].held():
        yield
