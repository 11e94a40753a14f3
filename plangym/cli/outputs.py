"""What ``plangym plan`` writes in its output directory, and what it prints.

Each file is written under a temporary name in the same directory, then renamed over the
final name (an atomic step): a file there is whole or absent, even when a second Ctrl-C
stops the writing.

>>> import tempfile
>>> with tempfile.TemporaryDirectory() as folder:
...     path = Path(folder) / "data.json"
...     write_json(path, {"score": 20})
...     print(path.read_text(), sorted(p.name for p in Path(folder).iterdir()))
{
  "score": 20
}
 ['data.json']
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from plangym.cli.interrupt import Interrupted, past_echo, stop_signals_held
from plangym.planning.common import Trajectory
from plangym.planning.display import drawing_env, real_time_delay_cs, replay_frames
from plangym.planning.gif import write_gif
from plangym.version import __version__


def write_atomically(
    path: Path,
    write: Callable[[BinaryIO], object],
    on_written: Callable[[Path], object] | None = None,
) -> None:
    """Call ``write(file)`` on a temporary file next to ``path``, then rename it to ``path``.

    ``on_written(path)`` runs right after the rename, with no stop signal in between: a
    file in place is always one the command reports as written.
    """
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(temporary, "wb") as file:
            write(file)
        with stop_signals_held():
            os.replace(temporary, path)
            if on_written is not None:
                on_written(path)
    finally:
        temporary.unlink(missing_ok=True)  # still there only if the writing was stopped


def numpy_scalar(value: Any) -> Any:
    """Return a NumPy number or array as the Python value JSON writes (actions may be)."""
    if isinstance(value, np.generic | np.ndarray):
        return value.tolist()
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def write_json(
    path: Path,
    data: Any,
    indent: int | None = 2,
    on_written: Callable[[Path], object] | None = None,
) -> None:
    """Write ``data`` as JSON (one line with ``indent=None``), atomically."""
    text = json.dumps(data, indent=indent, default=numpy_scalar) + "\n"
    write_atomically(path, lambda file: file.write(text.encode()), on_written)


def played_part(trajectory: Trajectory) -> Trajectory:
    """Return the steps ``trajectory`` holds whole (a stopped game may lack a reward).

    ``play`` appends a step's state, action and reward one after the other.
    """
    steps = max(
        0, min(len(trajectory.actions), len(trajectory.rewards), len(trajectory.states) - 1)
    )
    return Trajectory(
        states=trajectory.states[: steps + 1],
        actions=trajectory.actions[:steps],
        rewards=trajectory.rewards[:steps],
        frames_simulated=trajectory.frames_simulated,
        wall_s=trajectory.wall_s,
        ended=trajectory.ended and steps == len(trajectory.actions),
        truncated=trajectory.truncated and steps == len(trajectory.actions),
        samples_simulated=trajectory.samples_simulated,
    )


class PlanOutputs:
    """Writes a run's ``actions.json``, ``summary.json`` and ``trajectory.gif``.

    ``written`` lists the files written so far, in order, and ``summary`` is the summary
    last written (None before the first).
    """

    def __init__(self, out: Path, args: argparse.Namespace, frameskip: int, params: dict):
        self.out = out
        self.args = args
        self.frameskip = frameskip
        self.params = params
        self.written: list[str] = []
        self.summary: dict[str, Any] | None = None
        self.gif_problem: str | None = None

    def save(
        self, trajectory: Trajectory, baseline: list[float], stop: Interrupted | None
    ) -> dict[str, Any]:
        """Write the actions, the summary, the GIF, then the summary with the GIF's facts.

        The cheap files come first, so that a second Ctrl-C during the slow GIF keeps them.
        An earlier game's GIF (or an earlier part of this one's, resumed) is removed first:
        if this game's GIF is not drawn, none is left beside its summary. Returns the
        summary.
        """
        path = self.out / "trajectory.gif"
        path.unlink(missing_ok=True)
        # The actions replay the game from the start: one compact line, not one per action.
        actions = [a.tolist() if isinstance(a, np.ndarray) else a for a in trajectory.actions]
        self._write_json("actions.json", actions, indent=None)
        summary = make_summary(self.args, self.frameskip, self.params, trajectory, baseline, stop)
        self._write_json("summary.json", summary)
        self.summary = summary
        gif_frames, replay_exact, self.gif_problem = save_gif(
            self.args.name, self.frameskip, trajectory, path, self.args.gif_every, self._record
        )
        if gif_frames:
            summary.update(gif=str(path), gif_frames=gif_frames, replay_exact=replay_exact)
            self._write_json("summary.json", summary)
        return summary

    def note_stop(self, stop: Interrupted) -> None:
        """Rewrite ``summary.json`` to say that ``stop`` cut the writing short (the GIF)."""
        if self.summary is not None:
            self.summary.update(interrupted=True, signal=stop.signal_name)
            self._write_json("summary.json", self.summary)

    def _write_json(self, name: str, data: Any, indent: int | None = 2) -> None:
        write_json(self.out / name, data, indent, on_written=self._record)

    def _record(self, path: Path) -> None:
        if path.name not in self.written:
            self.written.append(path.name)


def save_gif(
    name: str,
    frameskip: int,
    trajectory: Trajectory,
    path: Path,
    every: int,
    on_written: Callable[[Path], object] | None = None,
) -> tuple[int, bool | None, str | None]:
    """Replay the game from its saved states in a drawing env and write the GIF.

    Returns ``(frames written, replay exact or None, why no GIF or None)``;
    ``on_written``: see :func:`write_atomically`.
    """
    if not trajectory.actions:
        return 0, None, "no steps were played"
    try:
        env = drawing_env(name, frameskip)
    except Exception as error:  # e.g. pygame missing for classic control
        return 0, None, f"cannot draw {name}: {error}"
    try:
        frames, exact = replay_frames(env, trajectory, every)
        delay_cs = real_time_delay_cs(env, every)
    except Exception as error:
        return 0, None, f"cannot draw {name}: {error}"
    finally:
        env.close()
    write_atomically(path, lambda file: write_gif(file, frames, delay_cs=delay_cs), on_written)
    return len(frames), exact, None


def make_summary(
    args: argparse.Namespace,
    frameskip: int,
    params: dict[str, Any],
    trajectory: Trajectory,
    baseline: list[float],
    stop: Interrupted | None = None,
) -> dict[str, Any]:
    """Everything ``summary.json`` records about the run (the GIF's facts come later)."""
    wall_s = trajectory.wall_s
    random_mean = float(np.mean(baseline)) if baseline else None
    per_action = trajectory.samples_per_action
    checkpoint = Path(args.out) / "checkpoint.pkl" if getattr(args, "out", None) else None
    return {
        "env": args.name,
        "planner": args.planner,
        "planner_params": params,
        "frameskip": frameskip,
        "workers": args.workers,
        "seed": args.seed,
        "score": trajectory.score,
        "agent_steps": trajectory.agent_steps,
        "max_steps": args.steps,
        "episode_ended": trajectory.ended,
        "episode_truncated": trajectory.truncated,
        "interrupted": stop is not None,
        "signal": None if stop is None else stop.signal_name,
        "frames_simulated": trajectory.frames_simulated,
        "wall_s": round(wall_s, 3),
        "frames_per_s": round(trajectory.frames_simulated / wall_s, 1) if wall_s else None,
        "preset": getattr(args, "preset", None),
        "samples_simulated": trajectory.samples_simulated,
        "samples_per_action_mean": None if per_action is None else round(per_action, 2),
        "resumed": bool(getattr(args, "resume", None)),
        "checkpoint": str(checkpoint) if checkpoint and checkpoint.exists() else None,
        "random_games": len(baseline),
        "random_score_mean": random_mean,
        "random_score_std": float(np.std(baseline)) if baseline else None,
        "score_vs_random": (
            round(trajectory.score / random_mean, 2) if random_mean and random_mean > 0 else None
        ),
        "replay_exact": None,
        "gif": None,
        "gif_frames": 0,
        "plangym_version": __version__,
        "python": platform.python_version(),
        "machine": f"{platform.machine()}, {platform.system()}",
        "finished_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


def describe(params: dict[str, Any]) -> str:
    """``{"n_walkers": 32, "dt": 2}`` as ``n_walkers 32, dt 2``."""
    return ", ".join(f"{key} {value}" for key, value in params.items())


def report(summary: dict[str, Any], gif_problem: str | None, out: Path) -> None:
    """Print the run's results; the score comes last."""
    steps = f"{summary['agent_steps']}"
    if summary["interrupted"]:
        steps += f" (interrupted by {summary['signal']})"
        print(past_echo(sys.stdout), end="")  # the table starts on a line of its own
    elif summary["episode_ended"]:
        steps += " (episode over)"
    samples = summary.get("samples_per_action_mean")
    rows = [
        ("env", f"{summary['env']} (frameskip {summary['frameskip']})"),
        (
            "planner",
            f"{summary['planner']} ({describe(summary['planner_params'])}), seed {summary['seed']}",
        ),
        ("workers", summary["workers"]),
        ("agent steps", steps),
        (
            "frames simulated",
            f"{summary['frames_simulated']:,} in {summary['wall_s']:.1f} s "
            f"({summary['frames_per_s'] or 0:,.0f} frames/s)",
        ),
    ]
    if samples is not None:
        rows.append(("samples/action", f"{samples:,.1f} agent steps simulated per action"))
    if summary["random_games"]:
        rows.append(
            (
                "random policy",
                f"mean score {summary['random_score_mean']:g} over "
                f"{summary['random_games']} games of "
                f"{summary['agent_steps']} steps",
            )
        )
    if summary["score_vs_random"] is not None:
        rows.append(("vs random", f"{summary['score_vs_random']:g}x the random mean"))
    if summary["replay_exact"] is not None:
        rows.append(("replay", "exact" if summary["replay_exact"] else "NOT exact"))
    written = f"{out / 'summary.json'}, {out / 'actions.json'}"
    if summary["gif"]:
        rows.append(("wrote", f"{summary['gif']}, {written}"))
    else:
        rows.append(("wrote", f"{written}; no GIF ({gif_problem})"))
    rows.append(("score", f"{summary['score']:g}"))
    for label, value in rows:
        print(f"{label:<17} {value}")
