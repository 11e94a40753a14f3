"""``plangym plan NAME``: play a game with a reference planner, save a GIF and a summary.

The planner steps its batches on ``--workers`` processes (a ``ParallelEnv``; 1 means in
this process). Atari games are planned with RAM observations, cheap to ship between
processes and a good feature for the swarm's distances. After the game, the actions are
replayed from the saved states in a fresh env that draws the screen: that replay makes
``trajectory.gif`` and checks that every state it reaches is the one saved while planning.
A uniformly random policy plays ``--baseline-games`` games of as many agent steps from the
same start, for comparison.

``--preset fmc`` plays a whole game (one ``-v5`` episode: cut at its frame limit of 108,000
frames if not over before, and up to 30,000 agent steps) with the published Fractal
Monte Carlo parameters of the game (:mod:`plangym.cli.plan_settings`). A checkpoint is
saved every ``--checkpoint-every`` steps, and ``--resume DIR`` continues the game from it
exactly as if it had not stopped (:mod:`plangym.cli.checkpoint`).

Stopped by Ctrl-C (SIGINT) or SIGTERM, it closes the workers, writes ``actions.json``,
``summary.json`` (``"interrupted": true`` and the signal) and the GIF of the steps played
so far, prints one line on stderr and exits with 130 (SIGINT) or 143 (SIGTERM).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path
from typing import Any

import plangym
from plangym.cli.args import (
    Command,
    Option,
    UsageError,
    check_out_dir,
    non_negative_int,
    out_dir,
    path_text,
    positive_int,
    single_env,
    worker_count,
)
from plangym.cli.checkpoint import (
    Checkpointer,
    EarlierCheckpoint,
    load_checkpoint,
    restore_trajectory,
)
from plangym.cli.interrupt import StopSignals, past_echo, stop_signals_raise
from plangym.cli.memory import check_fits_in_memory
from plangym.cli.outputs import PlanOutputs, describe, played_part, report
from plangym.cli.plan_settings import (
    DEFAULT_OUT,
    DEFAULT_STEPS,
    KEPT_ON_RESUME,
    PLANNERS,
    SWARM_OPTIONS,
    UCT_OPTIONS,
    env_keywords,
    live_envs_keyword,
    planner_problem,
    resolve_settings,
)
from plangym.extras import require
from plangym.planning.common import Progress, Trajectory, play, random_scores
from plangym.planning.presets import FULL_GAME_STEPS
from plangym.planning.progress import PlanProgress

VIZ_MODULES = ("PIL", "tqdm")  # the GIF and the progress bar: the viz extra
PRESETS = ("fmc",)

COMMAND = Command(
    "plan",
    help="play a game with a reference planner; write a GIF and a summary",
    description="Play one episode (at most --steps agent steps) with a reference "
    "planner stepping its batches on --workers processes. Writes OUT/trajectory.gif "
    "and OUT/summary.json and prints the score last. --preset fmc plays a whole game "
    "with Fractal Monte Carlo's published parameters of the game.",
    options=(
        Option.env_name("environment name, e.g. ALE/MsPacman-v5"),
        Option(
            "--planner",
            default=None,
            choices=tuple(PLANNERS),
            help="default: swarm (with --preset fmc: fmc)",
        ),
        Option(
            "--preset",
            default=None,
            choices=PRESETS,
            help="fmc: the game's published FMC parameters (frameskip, walkers, horizon, "
            "budget) for the fmc planner, and its budget for uct; a whole game",
        ),
        Option(
            "--workers",
            worker_count,
            None,
            "worker processes; 1 plans in this process (default: "
            f"{KEPT_ON_RESUME['workers']}; resumed: the checkpoint's)",
        ),
        Option(
            "--steps",
            positive_int,
            None,
            f"agent steps at most; fewer if the episode ends (default: {DEFAULT_STEPS}; "
            f"preset: {FULL_GAME_STEPS:,})",
        ),
        Option.seed("seed of env and planner (default: 0)", default=None),
        Option("--out", path_text, None, f"output directory (default: {DEFAULT_OUT})"),
        Option.frameskip(),
    ),
    groups={
        "swarm and fmc planners": tuple(SWARM_OPTIONS.values()),
        "uct planner": tuple(UCT_OPTIONS.values()),
        "long games": (
            Option(
                "--checkpoint-every",
                non_negative_int,
                None,
                "save OUT/checkpoint.pkl every N agent steps; 0: only at the end (default: "
                f"{KEPT_ON_RESUME['checkpoint_every']}; resumed: the checkpoint's)",
            ),
            Option(
                "--resume",
                path_text,
                None,
                "continue the game checkpointed in DIR, with its settings, writing in DIR "
                "(or in --out)",
                metavar="DIR",
            ),
        ),
        "output": (
            Option(
                "--baseline-games",
                non_negative_int,
                None,
                "random-policy games to compare with; 0 skips (default: "
                f"{KEPT_ON_RESUME['baseline_games']}; resumed: the checkpoint's)",
            ),
            Option(
                "--gif-every",
                positive_int,
                None,
                "keep every k-th frame in the GIF (default: "
                f"{KEPT_ON_RESUME['gif_every']}; resumed: the checkpoint's)",
            ),
        ),
    },
)


def run(args: argparse.Namespace) -> int:
    """Plan, compare with random play, write the outputs; print the score.

    Every usage error is found before ``--out`` is touched or a worker starts (see
    :func:`check_game`). Stopped by SIGINT or SIGTERM, it closes the workers, writes the
    outputs of the steps played so far and returns 130 or 143 (see
    :mod:`plangym.cli.interrupt`).
    """
    resumed = load_checkpoint(Path(args.resume)) if args.resume else None
    planner_class, params, frameskip = resolve_settings(args, resumed)
    check_viz_extra()
    check_out_dir(args.out)
    check_game(args, planner_class, params, frameskip)
    with out_dir(args.out) as out:
        return play_and_save(args, out, planner_class, params, frameskip, resumed)


def play_and_save(
    args: argparse.Namespace,
    out: Path,
    planner_class: type,
    params: dict[str, Any],
    frameskip: int,
    resumed: dict[str, Any] | None,
) -> int:
    """Play the game, write its outputs in ``out`` and print its summary; return the status."""
    ours = resumed is not None and Path(args.resume).resolve() == out.resolve()
    earlier = EarlierCheckpoint(out, ours=ours)
    trajectory = Trajectory()
    baseline: list[float] = []
    with stop_signals_raise() as stops:
        try:
            baseline = plan_game(
                args, planner_class, params, frameskip, trajectory, resumed, earlier
            )
        except BaseException:
            # A signal may surface as another error: a worker it ended, seen first.
            if stops.first is None:
                raise
        stop = stops.first
        if stop is not None and resumed is not None and not trajectory.actions:
            # Stopped while the saved game was being restored: nothing was written.
            print(
                f"plangym: interrupted ({stop.signal_name}) while resuming; {out} is unchanged",
                file=sys.stderr,
            )
            return stop.exit_status
        earlier.remove()
        outputs = PlanOutputs(out, args, frameskip, params)
        return save_outputs(outputs, played_part(trajectory), baseline, stops)


def check_game(
    args: argparse.Namespace, planner_class: type, params: dict[str, Any], frameskip: int
) -> None:
    """Build the planner on one env in this process, then drop both, before any work.

    What only a built env tells (a ROM that is not imported, an action space UCT cannot
    search) and the planner's own checks (a budget below the walkers) are then usage
    errors found before ``--out`` is touched and before any worker starts. One env costs
    little next to a game (Super Mario Bros, the slowest, builds in half a second).
    """
    keywords = env_keywords(args.name, frameskip, whole_game=args.preset is not None)
    with single_env(args.name, **keywords) as env:
        build_planner(args, planner_class, params, env)
        if params.get("n_walkers"):
            check_fits_in_memory("--walkers", params["n_walkers"], env)


def build_planner(
    args: argparse.Namespace, planner_class: type, params: dict[str, Any], env: Any
) -> Any:
    """Return the planner of the game; a keyword it refuses is a UsageError naming the flag."""
    try:
        return planner_class(env, seed=args.seed, **params)
    except (TypeError, ValueError) as error:
        raise UsageError(planner_problem(args.planner, str(error))) from None


def save_outputs(
    outputs: PlanOutputs, trajectory: Trajectory, baseline: list[float], stops: StopSignals
) -> int:
    """Write the outputs and print the summary; return the exit status.

    A signal while they are written (the first one, or one more) stops the writing: the
    files written are whole, and the summary says that the command was interrupted.
    """
    out, stop = outputs.out, stops.first
    signals_before = len(stops.received)
    try:
        summary = outputs.save(trajectory, baseline, stop)
    except BaseException:
        if len(stops.received) == signals_before:
            raise  # no new signal: a real error
        first = stops.received[0]
        if stop is None and outputs.summary is not None:
            # The game was over and its summary written: only the GIF was cut short. The
            # summary says so, as the exit status does; one more signal cannot part them.
            with contextlib.suppress(KeyboardInterrupt), stops.held():
                outputs.note_stop(first)
            report(outputs.summary, f"stopped by {first.signal_name} while drawing it", out)
        again = " again" if stop is not None else ""
        files = ", ".join(outputs.written) or "nothing"
        print(
            f"{past_echo(sys.stderr)}plangym: interrupted{again} "
            f"({stops.received[-1].signal_name}) while writing; wrote {files} in {out}",
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
    frameskip: int,
    trajectory: Trajectory,
    resumed: dict[str, Any] | None = None,
    earlier: EarlierCheckpoint | None = None,
) -> list[float]:
    """Play the game into ``trajectory`` (continuing ``resumed``); return the random scores.

    A checkpoint is saved every ``args.checkpoint_every`` steps and when the game is over
    (the first removes ``earlier``). The env (and its workers) is closed however this ends.
    """
    workers = {"n_workers": args.workers} if args.workers > 1 else {}
    keywords = env_keywords(args.name, frameskip, whole_game=args.preset is not None)
    keywords.update(live_envs_keyword(args.name, params.get("n_walkers")))
    env = plangym.make(args.name, **workers, **keywords)
    try:
        planner = build_planner(args, planner_class, params, env)
        if resumed is not None:
            planner.set_planner_state(resumed["planner_state"])
            try:
                restored = restore_trajectory(env, resumed)
            except (TypeError, ValueError) as error:  # edited, or from another env version
                raise UsageError(f"--resume: {error}") from None
            vars(trajectory).update(vars(restored))
        settings = {
            "env": args.name,
            "planner": args.planner,
            "params": params,
            "frameskip": frameskip,
            "seed": args.seed,
            "steps": args.steps,
            "preset": args.preset,
            # Kept by --resume unless given again (see KEPT_ON_RESUME).
            **{key: getattr(args, key) for key in KEPT_ON_RESUME},
        }
        saver = Checkpointer(
            args.out, args.checkpoint_every, settings, planner, trajectory, earlier
        )
        where = f"{args.workers} workers" if args.workers > 1 else "1 process"
        start = f", resumed at step {trajectory.agent_steps}" if resumed else ""
        print(
            f"plangym plan: {args.name} with {args.planner} ({describe(params)}) on "
            f"{where}, {args.steps} steps, seed {args.seed}{start}",
            file=sys.stderr,
        )

        def on_step(step: Progress) -> None:
            progress(step)
            saver(step)

        with PlanProgress(args.steps, desc=args.name, required=True) as progress:
            play(env, planner, args.steps, seed=args.seed, on_step=on_step, record=trajectory)
        if saver.saved_step != trajectory.agent_steps:
            saver.save()
        if not (args.baseline_games and trajectory.agent_steps):
            return []
        try:
            return random_scores(env, trajectory.agent_steps, args.baseline_games, args.seed)
        except MemoryError:  # the game is played: its outputs are still written
            print(
                f"plangym: {args.baseline_games:,} random games do not fit in memory; no "
                "baseline (lower --baseline-games)",
                file=sys.stderr,
            )
            return []
    finally:
        env.close()


def check_viz_extra() -> None:
    """Stop with one line naming the ``viz`` extra when Pillow or tqdm is missing."""
    for module in VIZ_MODULES:
        try:
            require(module, extra="viz", feature="plangym plan")
        except ImportError as error:
            raise UsageError(str(error)) from None
