"""``plangym plan NAME``: play a game with a reference planner, save a GIF and a summary.

The planner steps its batches on ``--workers`` processes (a ``ParallelEnv``; 1 means in
this process). Atari games are planned with RAM observations, cheap to ship between
processes and a good feature for the swarm's distances. After the game, the actions are
replayed from the saved states in a fresh env that draws the screen: that replay makes
``trajectory.gif`` and checks that every state it reaches is the one saved while planning.
A uniformly random policy plays ``--baseline-games`` games of as many agent steps from the
same start, for comparison.

Stopped by Ctrl-C (SIGINT) or SIGTERM, it closes the workers, writes ``actions.json``,
``summary.json`` (``"interrupted": true`` and the signal) and the GIF of the steps played
so far, prints one line on stderr and exits with 130 (SIGINT) or 143 (SIGTERM).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

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
from plangym.cli.interrupt import stop_signals_raise
from plangym.cli.outputs import PlanOutputs, describe, played_part, report
from plangym.cli.progress import PlanProgress
from plangym.extras import require
from plangym.planning.common import Trajectory, play, random_scores
from plangym.planning.swarm import SwarmPlanner
from plangym.planning.uct import UCTPlanner

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
    """Plan, compare with random play, write the outputs; print the score.

    Stopped by SIGINT or SIGTERM, it closes the workers, writes the outputs of the steps
    played so far and returns 130 or 143 (see :mod:`plangym.cli.interrupt`).
    """
    env_class, frameskip = env_settings(args)
    check_viz_extra()
    planner_class, params = planner_settings(args)
    out = prepare_out_dir(args.out)
    env_kwargs: dict[str, Any] = {"frameskip": frameskip}
    if "ram" in getattr(env_class, "AVAILABLE_OBS_TYPES", ()):
        env_kwargs["obs_type"] = "ram"
    trajectory = Trajectory()
    baseline: list[float] = []
    outputs = PlanOutputs(out, args, frameskip, params)
    with stop_signals_raise() as stops:
        try:
            baseline = plan_game(args, planner_class, params, env_kwargs, trajectory)
        except BaseException:
            # A signal may surface as another error: a worker it ended, seen first.
            if stops.first is None:
                raise
        stop = stops.first
        trajectory = played_part(trajectory)
        signals_before = len(stops.received)
        try:
            summary = outputs.save(trajectory, baseline, stop)
        except BaseException:
            if len(stops.received) == signals_before:
                raise  # no new signal: a real error
            first = stops.received[0]
            again = " again" if stop is not None else ""
            files = ", ".join(outputs.written) or "nothing"
            print(
                f"plangym: interrupted{again} ({stops.received[-1].signal_name}) while "
                f"writing; wrote {files} in {out}",
                file=sys.stderr,
            )
            return first.exit_status
    report(summary, outputs.gif_problem, out)
    if stop is not None:
        print(f"plangym: interrupted ({stop.signal_name}); wrote {out}", file=sys.stderr)
        return stop.exit_status
    return 0


def plan_game(
    args: argparse.Namespace,
    planner_class: type,
    params: dict[str, Any],
    env_kwargs: dict[str, Any],
    trajectory: Trajectory,
) -> list[float]:
    """Play the game into ``trajectory``; return the random policy's scores.

    The env (and its workers) is closed however this ends.
    """
    workers = {"n_workers": args.workers} if args.workers > 1 else {}
    env = plangym.make(args.name, **workers, **env_kwargs)
    try:
        try:
            planner = planner_class(env, seed=args.seed, **params)
        except (TypeError, ValueError) as error:
            raise UsageError(f"--planner {args.planner}: {error}") from None
        where = f"{args.workers} workers" if args.workers > 1 else "1 process"
        print(
            f"plangym plan: {args.name} with {args.planner} ({describe(params)}) on "
            f"{where}, {args.steps} steps, seed {args.seed}",
            file=sys.stderr,
        )
        with PlanProgress(args.steps, desc=args.name, required=True) as progress:
            play(env, planner, args.steps, seed=args.seed, on_step=progress, record=trajectory)
        if not (args.baseline_games and trajectory.agent_steps):
            return []
        return random_scores(env, trajectory.agent_steps, args.baseline_games, seed=args.seed)
    finally:
        env.close()


def planner_settings(args: argparse.Namespace) -> tuple[type, dict[str, Any]]:
    """Return the planner class chosen on the command line, and its keyword arguments."""
    planner_class, options = PLANNERS[args.planner]
    return planner_class, {
        keyword: getattr(args, option.dest) for keyword, option in options.items()
    }


def check_viz_extra() -> None:
    """Stop with one line naming the ``viz`` extra when Pillow or tqdm is missing."""
    for module in VIZ_MODULES:
        try:
            require(module, extra="viz", feature="plangym plan")
        except ImportError as error:
            raise UsageError(str(error)) from None
