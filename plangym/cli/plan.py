"""``plangym plan NAME``: play a game with a reference planner, save a GIF and a summary.

The planner steps its batches on ``--workers`` processes (a ``ParallelEnv``; 1 means in
this process). Atari games are planned with RAM observations, cheap to ship between
processes and a good feature for the swarm's distances. After the game, the actions are
replayed from the saved states in a fresh env that draws the screen: that replay makes
``trajectory.gif`` and checks that every state it reaches is the one saved while planning.
A uniformly random policy plays ``--baseline-games`` games of as many agent steps from the
same start, for comparison.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

import plangym
from plangym.cli.args import (
    Command,
    Option,
    UsageError,
    env_settings,
    non_negative_int,
    positive_int,
    prepare_out_dir,
    probability,
)
from plangym.cli.progress import PlanProgress
from plangym.extras import require
from plangym.planning.common import Trajectory, play, random_scores
from plangym.planning.display import drawing_env, real_time_delay_cs, replay_frames
from plangym.planning.gif import write_gif
from plangym.planning.swarm import SwarmPlanner
from plangym.planning.uct import UCTPlanner
from plangym.version import __version__

VIZ_MODULES = ("PIL", "tqdm")  # the GIF and the progress bar: the viz extra
# The options of each planner, by the keyword of the planner class that each one sets.
SWARM_OPTIONS = {
    "n_walkers": Option(
        "--walkers", positive_int, 32, "walkers: the batch of every step_batch call (default: 32)"
    ),
    "horizon": Option("--horizon", positive_int, 8, "rounds per decision (default: 8)"),
    "dt": Option("--dt", positive_int, 2, "agent steps per walker step (default: 2)"),
    "repeat_probability": Option(
        "--repeat", probability, 0.5, "chance a walker repeats its last action (default: 0.5)"
    ),
}
UCT_OPTIONS = {
    "waves": Option("--waves", positive_int, 2, "waves per decision (default: 2)"),
    "wave_size": Option("--wave-size", positive_int, 32, "leaves expanded per wave (default: 32)"),
    "rollout_depth": Option(
        "--rollout-depth", non_negative_int, 6, "random actions after each expansion (default: 6)"
    ),
    "rollout_dt": Option(
        "--rollout-dt", positive_int, 1, "agent steps each random action is held for (default: 1)"
    ),
}
PLANNERS: dict[str, tuple[type, dict[str, Option]]] = {
    "swarm": (SwarmPlanner, SWARM_OPTIONS),
    "uct": (UCTPlanner, UCT_OPTIONS),
}

COMMAND = Command(
    "plan",
    help="play a game with a reference planner; write a GIF and a summary",
    description="Play one episode (at most --steps agent steps) with a reference "
    "planner stepping its batches on --workers processes. Writes OUT/trajectory.gif "
    "and OUT/summary.json and prints the score last.",
    options=(
        Option.env_name("environment name, e.g. ALE/MsPacman-v5"),
        Option("--planner", default="swarm", choices=tuple(PLANNERS), help="default: swarm"),
        Option(
            "--workers", positive_int, 2, "worker processes; 1 plans in this process (default: 2)"
        ),
        Option(
            "--steps",
            positive_int,
            300,
            "agent steps at most; fewer if the episode ends (default: 300)",
        ),
        Option.seed("seed of env and planner"),
        Option("--out", default="plangym-out", help="output directory"),
        Option.frameskip(),
    ),
    groups={
        "swarm planner": tuple(SWARM_OPTIONS.values()),
        "uct planner": tuple(UCT_OPTIONS.values()),
        "output": (
            Option(
                "--baseline-games",
                non_negative_int,
                16,
                "random-policy games to compare with; 0 skips (default: 16)",
            ),
            Option("--gif-every", positive_int, 1, "keep every k-th frame in the GIF (default: 1)"),
        ),
    },
)


def run(args: argparse.Namespace) -> int:
    """Plan, compare with random play, write the GIF and the summary; print the score."""
    env_class, frameskip = env_settings(args)
    check_viz_extra()
    out = prepare_out_dir(args.out)
    env_kwargs: dict[str, Any] = {"frameskip": frameskip}
    if "ram" in getattr(env_class, "AVAILABLE_OBS_TYPES", ()):
        env_kwargs["obs_type"] = "ram"
    workers = {"n_workers": args.workers} if args.workers > 1 else {}
    env = plangym.make(args.name, **workers, **env_kwargs)
    try:
        planner, params = build_planner(args, env)
        where = f"{args.workers} workers" if args.workers > 1 else "1 process"
        print(
            f"plangym plan: {args.name} with {args.planner} ({describe(params)}) on "
            f"{where}, {args.steps} steps, seed {args.seed}",
            file=sys.stderr,
        )
        with PlanProgress(args.steps, desc=args.name, required=True) as progress:
            trajectory = play(env, planner, args.steps, seed=args.seed, on_step=progress)
        baseline = (
            random_scores(env, trajectory.agent_steps, args.baseline_games, seed=args.seed)
            if args.baseline_games and trajectory.agent_steps
            else []
        )
    finally:
        env.close()
    gif_path, gif_frames, replay_exact, gif_problem = save_gif(
        args.name, frameskip, trajectory, out / "trajectory.gif", args.gif_every
    )
    summary = make_summary(args, frameskip, params, trajectory, baseline, replay_exact)
    summary["gif"] = str(gif_path) if gif_path else None
    summary["gif_frames"] = gif_frames
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    # The actions replay the game from the start: one compact line, not one per action.
    actions = [a.tolist() if isinstance(a, np.ndarray) else a for a in trajectory.actions]
    (out / "actions.json").write_text(json.dumps(actions) + "\n")
    report(summary, trajectory, gif_problem, out)
    return 0


def build_planner(args: argparse.Namespace, env: Any) -> tuple[Any, dict[str, Any]]:
    """Build the planner chosen on the command line; return it and its parameters."""
    planner_class, options = PLANNERS[args.planner]
    params = {keyword: getattr(args, option.dest) for keyword, option in options.items()}
    try:
        return planner_class(env, seed=args.seed, **params), params
    except (TypeError, ValueError) as error:
        raise UsageError(f"--planner {args.planner}: {error}") from None


def describe(params: dict[str, Any]) -> str:
    """``{"n_walkers": 32, "dt": 2}`` as ``n_walkers 32, dt 2``."""
    return ", ".join(f"{key} {value}" for key, value in params.items())


def check_viz_extra() -> None:
    """Stop with one line naming the ``viz`` extra when Pillow or tqdm is missing."""
    for module in VIZ_MODULES:
        try:
            require(module, extra="viz", feature="plangym plan")
        except ImportError as error:
            raise UsageError(str(error)) from None


def save_gif(
    name: str, frameskip: int, trajectory: Trajectory, path: Path, every: int
) -> tuple[Path | None, int, bool | None, str | None]:
    """Replay the game from its saved states in a drawing env and write the GIF.

    Returns ``(path or None, frames written, replay exact or None, why no GIF or None)``.
    """
    if not trajectory.actions:
        return None, 0, None, "no steps were played"
    try:
        env = drawing_env(name, frameskip)
    except Exception as error:  # e.g. pygame missing for classic control
        return None, 0, None, f"cannot draw {name}: {error}"
    try:
        frames, exact = replay_frames(env, trajectory, every)
        delay_cs = real_time_delay_cs(env, every)
    except Exception as error:
        return None, 0, None, f"cannot draw {name}: {error}"
    finally:
        env.close()
    write_gif(path, frames, delay_cs=delay_cs)
    return path, len(frames), exact, None


def make_summary(
    args: argparse.Namespace,
    frameskip: int,
    params: dict[str, Any],
    trajectory: Trajectory,
    baseline: list[float],
    replay_exact: bool | None,
) -> dict[str, Any]:
    """Everything ``summary.json`` records about the run."""
    wall_s = trajectory.wall_s
    random_mean = float(np.mean(baseline)) if baseline else None
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
        "frames_simulated": trajectory.frames_simulated,
        "wall_s": round(wall_s, 3),
        "frames_per_s": round(trajectory.frames_simulated / wall_s, 1) if wall_s else None,
        "random_games": len(baseline),
        "random_score_mean": random_mean,
        "random_score_std": float(np.std(baseline)) if baseline else None,
        "score_vs_random": (
            round(trajectory.score / random_mean, 2) if random_mean and random_mean > 0 else None
        ),
        "replay_exact": replay_exact,
        "plangym_version": __version__,
        "python": platform.python_version(),
        "machine": f"{platform.machine()}, {platform.system()}",
        "finished_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


def report(
    summary: dict[str, Any], trajectory: Trajectory, gif_problem: str | None, out: Path
) -> None:
    """Print the run's results; the score comes last."""
    rows = [
        ("env", f"{summary['env']} (frameskip {summary['frameskip']})"),
        (
            "planner",
            f"{summary['planner']} ({describe(summary['planner_params'])}), seed {summary['seed']}",
        ),
        ("workers", summary["workers"]),
        (
            "agent steps",
            f"{summary['agent_steps']}" + (" (episode over)" if summary["episode_ended"] else ""),
        ),
        (
            "frames simulated",
            f"{summary['frames_simulated']:,} in {summary['wall_s']:.1f} s "
            f"({summary['frames_per_s'] or 0:,.0f} frames/s)",
        ),
    ]
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
    gif = summary["gif"] or f"none ({gif_problem})"
    rows.append(("wrote", f"{gif}, {out / 'summary.json'}, {out / 'actions.json'}"))
    rows.append(("score", f"{trajectory.score:g}"))
    for label, value in rows:
        print(f"{label:<17} {value}")
