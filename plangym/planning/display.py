"""Pictures of planned games, inline in Jupyter: replay a trajectory and animate it.

:func:`replay_frames` replays the actions of a :class:`~plangym.planning.common.Trajectory`
from its saved states in an env that draws, and tells whether every state it reached is
the one saved while planning. :class:`Animation` shows frames in Jupyter as an animated GIF
(an ``<img>`` with a data URI, so a rendered notebook page keeps it too; ``_repr_png_`` is
the last frame, for front ends without HTML). ``trajectory.animation("CartPole-v1")`` does
both; a trajectory itself displays as a small table. GIFs and PNGs need Pillow: the ``viz``
extra (``pip install 'plangym[viz]'``).

>>> import plangym
>>> from plangym.planning import SwarmPlanner, play
>>> env = plangym.make("CartPole-v1")
>>> trajectory = play(env, SwarmPlanner(env, n_walkers=8, horizon=4), max_steps=20, seed=0)
>>> trajectory  # in Jupyter: a table (trajectory._repr_html_())
Trajectory(score=20, agent_steps=20, frames_simulated=..., wall_s=..., ended=False)
>>> animation = trajectory.animation("CartPole-v1")  # shows inline in Jupyter
>>> animation
Animation(20 frames of 300x200, 50 fps, 0.4 s)
>>> animation._repr_html_()[:42]
'<img src="data:image/gif;base64,R0lGODlhLA'
>>> drawing = plangym.make("CartPole-v1", return_image=True)
>>> frames, exact = replay_frames(drawing, trajectory, every=5)
>>> len(frames), frames[0].shape, exact  # after steps 1, 6, 11, 16 and the last
(5, (200, 300, 3), True)
>>> drawing.close()
>>> env.close()
"""

from __future__ import annotations

import base64
import html
import io
import os
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

import plangym
from plangym.planning.common import same_state
from plangym.planning.gif import pillow_image, write_gif
from plangym.validation import check_positive_int

if TYPE_CHECKING:
    from plangym.planning.common import Trajectory

MAX_SIDE = 320  # larger pictures are subsampled; Atari screens (210x160) stay whole
ATARI_FPS = 60.0  # the Atari 2600 draws 60 frames a second (ale-py's render_fps is a viewer's)
DEFAULT_DELAY_CS = 8
MIN_DELAY_CS = 2  # browsers show shorter GIF delays as 10 cs


def replay_frames(
    env: Any, trajectory: Trajectory, every: int = 1, max_side: int = MAX_SIDE
) -> tuple[list[np.ndarray], bool]:
    """Replay ``trajectory`` in ``env`` from its saved states; return its pictures.

    Each action ``t`` is applied from ``trajectory.states[t]``; the picture after every
    ``every``-th action (and after the last) is kept, subsampled to at most ``max_side``
    pixels a side (:func:`shrink`).

    Args:
        env: An env that draws: built with ``return_image=True`` (its ``info["rgb"]`` is
            used) or one whose ``get_image()`` works.
        trajectory: What :func:`~plangym.planning.common.play` returned.
        every: Keep every ``every``-th picture.
        max_side: Largest side of a picture.

    Returns:
        ``(frames, exact)``: RGB uint8 arrays, and whether every state the replay reached
        is the one saved while planning.
    """
    check_positive_int("every", every)
    check_positive_int("max_side", max_side)
    frames: list[np.ndarray] = []
    exact = True
    last = len(trajectory.actions) - 1
    for t, action in enumerate(trajectory.actions):
        state, *_, info = env.step(action, state=trajectory.states[t])
        exact = exact and same_state(state, trajectory.states[t + 1])
        if t % every == 0 or t == last:
            picture = info["rgb"] if "rgb" in info else env.get_image()
            frames.append(shrink(np.asarray(picture, dtype=np.uint8), max_side))
    return frames, exact


def shrink(frame: np.ndarray, max_side: int = MAX_SIDE) -> np.ndarray:
    """Subsample a large picture (classic control draws 600x400) to keep GIFs small.

    >>> shrink(np.zeros((400, 600, 3), np.uint8)).shape
    (200, 300, 3)
    >>> shrink(np.zeros((210, 160, 3), np.uint8)).shape
    (210, 160, 3)
    """
    stride = -(-max(frame.shape[:2]) // max_side)
    return frame[::stride, ::stride] if stride > 1 else frame


def real_time_delay_cs(env: Any, every: int = 1) -> int:
    """Hundredths of a second each kept picture lasts, for a replay at the game's speed.

    At least :data:`MIN_DELAY_CS`: faster games play slower than real time.
    """
    base = getattr(env, "unwrapped", env)
    # stable-retro gives its rate under gym's old key only.
    metadata = env.metadata
    rate = metadata.get("render_fps") or metadata.get("video.frames_per_second") or 30
    fps = ATARI_FPS if hasattr(base, "ale") else float(rate)
    return max(MIN_DELAY_CS, round(100 * env.frameskip * every / fps))


def drawing_env(name: str, frameskip: int | None = None) -> Any:
    """Build the env called ``name`` with ``return_image=True`` (and ``frameskip`` if given)."""
    kwargs: dict[str, Any] = {} if frameskip is None else {"frameskip": frameskip}
    return plangym.make(name, return_image=True, **kwargs)


def animate(
    trajectory: Trajectory,
    env_or_name: Any,
    every: int = 1,
    frameskip: int | None = None,
    max_side: int = MAX_SIDE,
) -> Animation:
    """Replay ``trajectory`` and return its :class:`Animation`, at the game's speed.

    Args:
        trajectory: What :func:`~plangym.planning.common.play` returned.
        env_or_name: An env that draws, or the name of the game: an env is then built
            with ``return_image=True`` (and closed afterwards).
        every: Keep every ``every``-th picture.
        frameskip: For a name: the frameskip the game was played with (default: the
            env's default).
        max_side: Largest side of a picture.

    A replay that does not reach the saved states (another frameskip, another game) warns.
    """
    if not trajectory.actions:
        raise ValueError("trajectory: no steps were played, nothing to animate")
    built = isinstance(env_or_name, str)
    if not built and frameskip is not None:
        raise ValueError("frameskip: give it with a name; an env has its own frameskip")
    env = drawing_env(env_or_name, frameskip) if built else env_or_name
    try:
        frames, exact = replay_frames(env, trajectory, every, max_side)
        delay_cs = real_time_delay_cs(env, every)
    finally:
        if built:
            env.close()
    if not exact:
        warnings.warn(
            "the replay did not reach the states saved while planning: was the game played "
            "in another env, or with another frameskip?",
            RuntimeWarning,
            stacklevel=3,
        )
    return Animation(frames, delay_cs=delay_cs)


class Animation:
    """Frames that show inline in Jupyter as an animated GIF.

    Args:
        frames: RGB uint8 arrays (height, width, 3), all of one shape.
        fps: Frames per second; or give ``delay_cs``.
        delay_cs: Hundredths of a second each frame is shown (default 8).
        loop: Times the animation repeats; 0 repeats forever.

    >>> frames = [np.full((20, 30, 3), value, np.uint8) for value in (0, 128, 255)]
    >>> animation = Animation(frames, fps=10)
    >>> animation, len(animation), animation.delay_cs
    (Animation(3 frames of 30x20, 10 fps, 0.3 s), 3, 10)
    >>> animation.gif_bytes()[:6], animation._repr_png_()[1:4]
    (b'GIF89a', b'PNG')
    """

    def __init__(
        self,
        frames: Sequence[np.ndarray],
        fps: float | None = None,
        delay_cs: int | None = None,
        loop: int = 0,
    ):
        if not len(frames):
            raise ValueError("frames: expected at least one frame, received none")
        self.frames = [np.asarray(frame) for frame in frames]
        shapes = {frame.shape for frame in self.frames}
        first = self.frames[0]
        if len(shapes) > 1 or first.ndim != 3 or first.shape[2] != 3 or first.dtype != np.uint8:
            raise ValueError(
                "frames: expected RGB uint8 arrays of one shape (height, width, 3), "
                f"received shapes {sorted(shapes)} and dtype {first.dtype}"
            )
        if fps is not None and delay_cs is not None:
            raise ValueError("give fps or delay_cs, not both")
        if fps is not None:
            if not fps > 0:
                raise ValueError(f"fps: expected a number > 0, received {fps!r}")
            delay_cs = max(MIN_DELAY_CS, round(100 / fps))
        self.delay_cs = check_positive_int(
            "delay_cs", DEFAULT_DELAY_CS if delay_cs is None else delay_cs
        )
        self.loop = loop
        self._gif: bytes | None = None

    @property
    def fps(self) -> float:
        """Frames shown per second."""
        return 100 / self.delay_cs

    @property
    def duration_s(self) -> float:
        """Seconds one pass of the animation lasts."""
        return len(self.frames) * self.delay_cs / 100

    def gif_bytes(self) -> bytes:
        """Return the animated GIF (made once, then kept)."""
        if self._gif is None:
            buffer = io.BytesIO()
            write_gif(buffer, self.frames, delay_cs=self.delay_cs, loop=self.loop)
            self._gif = buffer.getvalue()
        return self._gif

    def save(self, path: str | os.PathLike) -> Path:
        """Write the GIF to ``path``; return the path."""
        path = Path(path)
        path.write_bytes(self.gif_bytes())
        return path

    def png_bytes(self, index: int = -1) -> bytes:
        """Return frame ``index`` (the last by default) as a PNG."""
        buffer = io.BytesIO()
        pillow_image().fromarray(self.frames[index]).save(buffer, format="PNG")
        return buffer.getvalue()

    def _repr_html_(self) -> str:
        data = base64.b64encode(self.gif_bytes()).decode("ascii")
        height, width = self.frames[0].shape[:2]
        alt = html.escape(f"animation, {len(self)} frames", quote=True)
        return (
            f'<img src="data:image/gif;base64,{data}" width="{width}" height="{height}" '
            f'alt="{alt}"/>'
        )

    def _repr_png_(self) -> bytes:
        return self.png_bytes()

    def __len__(self) -> int:
        return len(self.frames)

    def __repr__(self) -> str:
        height, width = self.frames[0].shape[:2]
        frames = f"{len(self)} frame" + ("s" if len(self) > 1 else "")
        return (
            f"{type(self).__name__}({frames} of {width}x{height}, {self.fps:.3g} fps, "
            f"{self.duration_s:.1f} s)"
        )


def trajectory_html(trajectory: Trajectory) -> str:
    """Return a small HTML table of what a planner's game achieved (see ``Trajectory``).

    >>> from plangym.planning.common import Trajectory
    >>> print(trajectory_html(Trajectory(actions=[0, 1], rewards=[1.0, 2.5], wall_s=0.5,
    ...                                  frames_simulated=1000)))
    <table>
    <tr><th>score</th><td>3.5</td></tr>
    <tr><th>agent steps</th><td>2</td></tr>
    <tr><th>frames simulated</th><td>1,000</td></tr>
    <tr><th>wall time</th><td>0.5 s (2,000 frames/s)</td></tr>
    <tr><th>episode ended</th><td>no</td></tr>
    </table>
    """
    wall_s = trajectory.wall_s
    rate = f" ({trajectory.frames_simulated / wall_s:,.0f} frames/s)" if wall_s > 0 else ""
    rows = [
        ("score", format_score(trajectory.score)),
        ("agent steps", f"{trajectory.agent_steps:,}"),
        ("frames simulated", f"{trajectory.frames_simulated:,}"),
        ("wall time", f"{wall_s:.1f} s{rate}"),
        ("episode ended", "yes" if trajectory.ended else "no"),
    ]
    cells = [
        f"<tr><th>{html.escape(label)}</th><td>{html.escape(value)}</td></tr>"
        for label, value in rows
    ]
    return "\n".join(["<table>", *cells, "</table>"])


def format_score(score: float) -> str:
    """Format a score with thousands separators, and no decimals when it is whole.

    >>> format_score(1790.0), format_score(-3.25), format_score(1 / 3), format_score(2e-5)
    ('1,790', '-3.25', '0.333333', '2e-05')
    """
    if float(score).is_integer() or abs(score) >= 1e6:
        return f"{score:,.0f}"
    return f"{score:,.6g}"
