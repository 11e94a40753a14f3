"""Progress bars of planning runs and of the ``plangym`` commands, drawn by tqdm (``viz``).

:class:`PlanProgress` is an ``on_step`` of :func:`~plangym.planning.common.play`: a bar of
agent steps with the score and the simulation rate, a widget in Jupyter.

``tqdm.auto`` draws a widget in Jupyter and a bar on a terminal's stderr. When stderr is
not a terminal (a log file, a pipe, output captured by tests) nothing is drawn, so logs stay
clean. Without tqdm, :func:`progress_bar` returns a bar that draws nothing, unless asked
for one that is required.

>>> with progress_bar(total=3, desc="demo") as bar:
...     for _ in range(3):
...         _ = bar.update()
>>> bar.disable  # stderr is not a terminal here: nothing was drawn
True
"""

from __future__ import annotations

import sys
from typing import Any

from plangym.extras import require
from plangym.planning.common import Progress


def progress_bar(
    total: int | None, desc: str, unit: str = "it", required: bool = False, **options: Any
) -> Any:
    """Return a tqdm bar (``tqdm.auto``) on stderr, drawn only where someone watches.

    Args:
        total: Number of updates expected.
        desc: The label before the bar.
        unit: What one update counts.
        required: Raise an ImportError naming the ``viz`` extra when tqdm is missing;
            otherwise a :class:`NoBar` stands in.
        options: More keyword arguments of ``tqdm``.
    """
    try:
        require("tqdm", extra="viz", feature="A progress bar")
        from tqdm.auto import tqdm
    except ImportError:
        if required:
            raise
        return NoBar(total)
    # disable=None: no bar when stderr is not a terminal (tqdm's widget in Jupyter shows).
    settings = {"file": sys.stderr, "disable": None, "dynamic_ncols": True, **options}
    return tqdm(total=total, desc=desc, unit=unit, **settings)


class NoBar:
    """What :func:`progress_bar` returns without tqdm: counts, draws nothing."""

    def __init__(self, total: int | None = None):
        self.total = total
        self.n = 0
        self.disable = True

    def update(self, n: int = 1) -> None:
        """Count ``n`` more updates."""
        self.n += n

    def set_postfix_str(self, text: str = "", refresh: bool = True) -> None:
        """Ignore the text shown after the bar."""

    def close(self) -> None:
        """Nothing to close."""

    def __enter__(self) -> NoBar:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class PlanProgress:
    """Shows a game being planned: agent steps, score and frames/s; an ``on_step`` of ``play``.

    Args:
        max_steps: The game's step budget (the bar's length).
        desc: The label before the bar.
        required: Raise an ImportError naming the ``viz`` extra when tqdm is missing.

    >>> progress = PlanProgress(200)
    >>> progress(Progress(step=50, max_steps=200, score=120.0, frames_simulated=20000,
    ...                   wall_s=4.0))
    >>> progress.step, progress.postfix
    (50, 'score 120, 5,000 frames/s')
    >>> progress.close()
    """

    def __init__(self, max_steps: int, desc: str = "plan", required: bool = False):
        self.bar = progress_bar(max_steps, desc, unit="step", required=required)
        self.step = 0
        self.postfix = ""

    def __call__(self, progress: Progress) -> None:
        """Move the bar to ``progress.step``; show the score and the simulation rate."""
        rate = progress.frames_simulated / progress.wall_s if progress.wall_s > 0 else 0.0
        self.postfix = f"score {progress.score:,.0f}, {rate:,.0f} frames/s"
        self.bar.set_postfix_str(self.postfix, refresh=False)
        self.bar.update(progress.step - self.step)
        self.step = progress.step

    def close(self) -> None:
        """Finish the bar (a terminal keeps its last state)."""
        self.bar.close()

    def __enter__(self) -> PlanProgress:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
