"""A one-line progress bar on stderr, redrawn in place; silent unless stderr is a terminal."""

from __future__ import annotations

import sys
import time
from typing import TextIO

from plangym.planning.common import Progress


class ProgressBar:
    """Shows step, score and frames/s of a game being planned.

    Args:
        stream: Where to draw (stderr by default).
        enabled: Draw at all; None means "when ``stream`` is a terminal", so logs and
            captured output stay clean.
        min_interval_s: Shortest time between two redraws.
    """

    def __init__(
        self,
        stream: TextIO | None = None,
        enabled: bool | None = None,
        width: int = 24,
        min_interval_s: float = 0.2,
    ):
        self.stream = stream if stream is not None else sys.stderr
        isatty = getattr(self.stream, "isatty", lambda: False)
        self.enabled = isatty() if enabled is None else enabled
        self.width = width
        self.min_interval_s = min_interval_s
        self._last_draw = -float("inf")
        self._drawn = False
        self._width_drawn = 0  # to blank what a longer previous line left behind

    def update(self, progress: Progress) -> None:
        """Redraw the bar for ``progress`` (at most every ``min_interval_s``)."""
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self._last_draw < self.min_interval_s and progress.step < progress.max_steps:
            return
        self._last_draw = now
        line = self.render(progress)
        self.stream.write("\r" + line.ljust(self._width_drawn))
        self._width_drawn = len(line)
        self.stream.flush()
        self._drawn = True

    def render(self, progress: Progress) -> str:
        """Return the text of the bar.

        >>> bar = ProgressBar(enabled=False, width=10)
        >>> bar.render(Progress(step=50, max_steps=200, score=120.0,
        ...                     frames_simulated=20000, wall_s=4.0))
        '[##--------] step 50/200  score 120  5,000 frames/s  4s'
        """
        filled = int(self.width * progress.step / max(progress.max_steps, 1))
        bar = "#" * filled + "-" * (self.width - filled)
        rate = progress.frames_simulated / progress.wall_s if progress.wall_s > 0 else 0.0
        return (
            f"[{bar}] step {progress.step}/{progress.max_steps}  score {progress.score:,.0f}  "
            f"{rate:,.0f} frames/s  {progress.wall_s:.0f}s"
        )

    def close(self) -> None:
        """End the line the bar was drawn on."""
        if self._drawn:
            self.stream.write("\n")
            self.stream.flush()
            self._drawn = False
