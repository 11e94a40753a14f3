"""Whole Atari games with Fractal Monte Carlo's published parameters, beside the published scores.

Each run is one ``plangym plan ALE/<Game>-v5 --preset fmc`` game (one v5 episode: over at
the game's end or at the v5 limit of 108,000 frames, and up to 30,000 agent steps): the
swarm is the ``fmc`` planner with the game's published horizon, walkers and budget of
samples per action, each sample ``3 x repeat`` frames (the published repeat of gym's
``-v0`` steps of 2-4 frames); UCT plays at the same frameskip and budget.
Every run writes its directory under ``--runs`` (summary, actions, GIF, checkpoint). Each
run's summary, and the checkpoint of a game not over, are also kept in ``--results`` (in
the repository, so the table outlives the runs and a long game can go on on another
machine), and the script then writes a Markdown table beside the published numbers
(``--table``, by default docs/published_games.md) with the GIFs copied next to it.

Runs are resumable: a game over (or stopped at a step cap at least ``--max-steps``) is
skipped unless ``--force``; any other goes on from its checkpoint, in ``--runs`` or kept
(``plangym plan --resume``), replayed exactly. Ctrl-C (or SIGTERM) stops the game being
played, which keeps its checkpoint, and the script, after writing the table of what is done.

``--curve GAME`` plays GAME at fractions of the published budget (``--fractions``, by
default 25%, 50% and 100%): walkers and budget are scaled together, the horizon kept, so
each decision looks as far ahead with fewer walkers. The table then has a
score-vs-samples section.

Run (from the repository root):

    python benchmarks/published_games.py                       # Boxing, Alien, Qbert; swarm, uct
    python benchmarks/published_games.py --curve Boxing --planners swarm
    # A smoke run, written under /tmp: the defaults would record it in the published table.
    python benchmarks/published_games.py --games Boxing --max-steps 3 --fraction 0.02 \
        --runs /tmp/pg/runs --results /tmp/pg/results --table /tmp/pg/published_games.md
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

from host import cpu_model
from workloads import positive_int

from plangym.cli.checkpoint import CHECKPOINT
from plangym.cli.interrupt import Interrupted, stop_signals_raise
from plangym.planning.presets import (
    FMC_PRESETS,
    FULL_GAME_STEPS,
    UCT_PUBLISHED,
    FMCPreset,
    fmc_preset,
)
from plangym.version import __version__

ROOT = Path(__file__).resolve().parent.parent
PLANNER_OF = {"swarm": "fmc", "uct": "uct"}  # the benchmark's names: plan's planners
KEEP_CHECKPOINT_BYTES = 1_000_000  # a swarm's game: tens of KB (actions, generator states)


def run_name(game: str, planner: str, seed: int, fraction: float) -> str:
    """``boxing-swarm-seed0`` (``-x0.25`` for a fraction of the published budget)."""
    name = f"{game.lower()}-{planner}-seed{seed}"
    return name if fraction == 1.0 else f"{name}-x{fraction:g}"


def plan_command(
    preset: FMCPreset, planner: str, seed: int, fraction: float, args: argparse.Namespace
) -> list[str]:
    """The ``plangym plan`` command line of one run (without --out / --resume)."""
    command = [sys.executable, "-m", "plangym", "plan", preset.env_name, "--preset", "fmc"]
    command += ["--planner", PLANNER_OF[planner], "--seed", str(seed)]
    if fraction != 1.0:
        walkers, budget = preset.scaled(fraction)
        command += ["--budget", str(budget)]
        if planner == "swarm":
            command += ["--walkers", str(walkers)]
    return command


def common_options(args: argparse.Namespace) -> list[str]:
    """Options every run and every resumed run takes from the script's command line."""
    options = ["--workers", str(args.workers), "--baseline-games", str(args.baseline_games)]
    options += [
        "--checkpoint-every",
        str(args.checkpoint_every),
        "--gif-every",
        str(args.gif_every),
    ]
    if args.max_steps:
        options += ["--steps", str(args.max_steps)]
    return options


def done(summary: dict | None, args: argparse.Namespace) -> bool:
    """Whether ``summary`` is of a game over, or stopped at a cap at least this run's."""
    if summary is None or summary.get("interrupted", True):
        return False
    return summary["episode_ended"] or summary["max_steps"] >= (args.max_steps or FULL_GAME_STEPS)


def read_summary(path: Path) -> dict | None:
    """The summary at ``path``, if there is one."""
    return json.loads(path.read_text()) if path.exists() else None


def keep(run: Path, args: argparse.Namespace) -> None:
    """Keep ``run``'s summary in ``--results``; and its checkpoint, while its game goes on.

    The kept checkpoint lets another machine (or a later session) resume the game. One
    over ``KEEP_CHECKPOINT_BYTES`` (UCT's, which holds its search tree) is not kept: the
    repository is no place for it.
    """
    summary = read_summary(run / "summary.json")
    kept_checkpoint = args.results / "checkpoints" / f"{run.name}.pkl"
    if summary is not None:
        args.results.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(run / "summary.json", args.results / f"{run.name}.json")
    if summary is not None and summary["episode_ended"]:
        kept_checkpoint.unlink(missing_ok=True)
    elif (run / CHECKPOINT).exists():
        size = (run / CHECKPOINT).stat().st_size
        if size > KEEP_CHECKPOINT_BYTES:
            print(f"{run.name}: checkpoint not kept ({size / 1e6:,.1f} MB)", flush=True)
            kept_checkpoint.unlink(missing_ok=True)
            return
        kept_checkpoint.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(run / CHECKPOINT, kept_checkpoint)


def play_run(
    preset: FMCPreset, planner: str, seed: int, fraction: float, args: argparse.Namespace
) -> int:
    """Play (or resume, or skip) one run and keep it; return ``plangym plan``'s exit status.

    A game found in ``--runs`` or kept in ``--results`` goes on from its checkpoint, unless
    it is over (or stopped at a cap at least ``--max-steps``): then it is skipped.
    """
    run = args.runs / run_name(preset.game, planner, seed, fraction)
    kept_checkpoint = args.results / "checkpoints" / f"{run.name}.pkl"
    if args.force and run.exists():
        shutil.rmtree(run)
    summary = read_summary(run / "summary.json")
    if summary is None and not args.force:
        summary = read_summary(args.results / f"{run.name}.json")
    if done(summary, args) and not args.force:
        print(f"skip {run.name}: done (--force plays it again)", flush=True)
        return 0
    if not (run / CHECKPOINT).exists() and kept_checkpoint.exists() and not args.force:
        run.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(kept_checkpoint, run / CHECKPOINT)
    if (run / CHECKPOINT).exists():
        command = [sys.executable, "-m", "plangym", "plan", preset.env_name, "--resume", str(run)]
        print(f"resume {run.name}", flush=True)
    else:
        command = [*plan_command(preset, planner, seed, fraction, args), "--out", str(run)]
        print(f"play {run.name}", flush=True)
    status = run_to_the_end([*command, *common_options(args)])
    keep(run, args)
    return status


def run_to_the_end(command: list[str]) -> int:
    """Run ``command`` (``plangym plan``) and wait until it exits; return its exit status.

    A Ctrl-C on the terminal reaches it too: it saves its game, which takes longer than the
    0.25 s ``subprocess.call`` waits before killing it. A stop signal sent to this script
    alone is passed on after 2 s. Stopped so, the status is the signal's (130, 143).
    """
    child = subprocess.Popen(command)
    stop: Interrupted | None = None
    passed_on = False
    while True:
        try:
            status = child.wait(timeout=2.0 if stop is not None and not passed_on else None)
        except subprocess.TimeoutExpired:
            assert stop is not None  # only then is there a timeout
            child.send_signal(stop.signum)
            passed_on = True
        except Interrupted as signal_received:
            stop = stop or signal_received
        else:
            return status if stop is None or status in (130, 143) else stop.exit_status


def machine() -> str:
    """The CPU model and count, and the OS."""
    model = cpu_model(platform.processor() or platform.machine())
    return (
        f"{model}, {os.cpu_count()} cores, {platform.system()}, Python {platform.python_version()}"
    )


def load_runs(args: argparse.Namespace) -> list[tuple[str, dict]]:
    """Every run with a summary, by name: the kept ones, then those in ``--runs`` (newer).

    Each summary is kept in ``--results`` as ``<run>.json`` (an interrupted game's too: the
    table says it was interrupted; see :func:`keep`).
    """
    for run in args.runs.glob("*/"):
        keep(run, args)
    return sorted((path.stem, json.loads(path.read_text())) for path in args.results.glob("*.json"))


def gif_link(name: str, summary: dict, args: argparse.Namespace) -> str:
    """Copy the run's GIF next to the table; return a Markdown link to it."""
    source = args.runs / name / "trajectory.gif"
    target = args.gifs / f"{name}.gif"
    if source.exists():
        args.gifs.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    if not target.exists():
        return "—"
    return f"[GIF]({os.path.relpath(target, args.table.parent)})"


def duration(seconds: float) -> str:
    """``42 s`` or ``12.5 min``."""
    return f"{seconds:,.0f} s" if seconds < 120 else f"{seconds / 60:,.1f} min"


def number(value: float | None, digits: int = 0) -> str:
    """``12,345`` (a dash for None)."""
    return "—" if value is None else f"{value:,.{digits}f}"


def table_rows(runs: list[tuple[str, dict]], args: argparse.Namespace, curve: bool) -> list[str]:
    """The Markdown rows of the main table (``curve=False``) or of the curve."""
    rows = []
    # The curve: the runs at fractions of the budget, with the full-budget runs they extend.
    scaled = {name.rsplit("-x", 1)[0] for name, _ in runs if "-x" in name}
    for name, summary in runs:
        if curve and name.rsplit("-x", 1)[0] not in scaled:
            continue
        if not curve and "-x" in name:
            continue
        planner = name.split("-")[1]
        preset = fmc_preset(summary["env"])
        published = preset.score if planner == "swarm" else UCT_PUBLISHED.get(preset.game)
        params = summary["planner_params"]
        state = "ended" if summary["episode_ended"] else f"cap {summary['max_steps']:,}"
        if summary.get("episode_truncated"):
            state = "time limit"
        if summary["interrupted"]:
            state = "interrupted"
        cells = [preset.game, planner, str(summary["seed"]), str(summary["frameskip"])]
        if curve:
            cells += [str(params.get("n_walkers", "—")), number(params.get("budget"))]
        cells += [
            number(summary["score"]),
            number(published),
            f"{summary['score'] / published:.0%}" if published else "—",
            number(summary.get("samples_per_action_mean"), 1),
        ]
        if not curve:
            cells += [number(preset.samples_mean) if planner == "swarm" else "—"]
        cells += [
            f"{summary['agent_steps']:,} ({state})",
            number(summary["frames_simulated"]),
            duration(summary["wall_s"]),
            number(summary.get("frames_per_s")),
            gif_link(name, summary, args),
        ]
        rows.append("| " + " | ".join(cells) + " |")
    return rows


def write_table(args: argparse.Namespace) -> None:
    """Write the Markdown page of every run found in ``args.runs``."""
    runs = load_runs(args)
    dates = sorted(summary["finished_at"][:10] for _, summary in runs)
    when = f"{dates[0]} to {dates[-1]}" if dates else time.strftime("%Y-%m-%d")
    when = dates[0] if dates and dates[0] == dates[-1] else when
    head = (
        "| game | planner | seed | frameskip | score | published | vs published | samples / action "
        "| published samples / action | agent steps | frames simulated | wall time "
        "| frames/s | game |"
    )
    lines = [
        "# Whole Atari games at Fractal Monte Carlo's published budgets",
        "",
        "Written by `benchmarks/published_games.py` (rerun it to refresh this page; see",
        "[planning.md](planning.md#fractal-monte-carlo-fmcplanner) for the algorithm and",
        "where it differs from the published one). One game per row, `--preset fmc`:",
        "the swarm is the `fmc` planner with the published horizon, walkers and budget, and",
        "`frameskip` = 3 x the published repeat (a published sample repeats a `-v0` step of",
        "2-4 frames); UCT plays at the same frameskip and budget. *Samples / action* counts",
        "agent steps simulated per action played (each of `frameskip` frames). *Published* is",
        "FractalAI's README for the swarm, Guo et al. (2014) for UCT. A game is one episode of",
        "`ALE/<Game>-v5`: *ended* at the game's end, or *time limit* when cut at the v5 frame",
        "limit (108,000 frames, 30 minutes of play) with the game not over.",
        "",
        f"Machine: {machine()}; {summarise_workers(runs)}; plangym {__version__}; {when}.",
        "",
        head,
        "|" + "---|" * (head.count("|") - 1),
        *table_rows(runs, args, curve=False),
    ]
    curve = table_rows(runs, args, curve=True)
    if curve:
        head = (
            "| game | planner | seed | frameskip | walkers | budget | score | published "
            "| vs published "
            "| samples / action | agent steps | frames simulated | wall time | frames/s | game |"
        )
        lines += ["", "## Score against samples per action", "", head]
        lines += ["|" + "---|" * (head.count("|") - 1), *curve]
    args.table.parent.mkdir(parents=True, exist_ok=True)
    args.table.write_text("\n".join(lines) + "\n")
    print(f"wrote {args.table}")


def summarise_workers(runs: list[tuple[str, dict]]) -> str:
    """The worker counts the runs used."""
    workers = sorted({summary["workers"] for _, summary in runs})
    return "workers: " + (", ".join(map(str, workers)) if workers else "none yet")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", default="Boxing,Alien,Qbert", help=f"of {sorted(FMC_PRESETS)}")
    parser.add_argument("--seeds", default="0", help="comma-separated seeds (default: 0)")
    parser.add_argument("--planners", default="swarm,uct", help="swarm, uct or both")
    parser.add_argument(
        "--max-steps", type=positive_int, default=None, help="agent steps cap (30,000)"
    )
    parser.add_argument("--workers", type=positive_int, default=2)
    parser.add_argument("--fraction", type=float, default=1.0, help="of the published budget")
    parser.add_argument("--curve", default=None, help="play GAME at each of --fractions")
    parser.add_argument("--fractions", default="0.25,0.5,1")
    parser.add_argument("--force", action="store_true", help="play finished runs again")
    parser.add_argument("--runs", type=Path, default=Path("published-games-runs"))
    parser.add_argument("--table", type=Path, default=ROOT / "docs" / "published_games.md")
    parser.add_argument(
        "--results",
        type=Path,
        default=ROOT / "benchmarks" / "results" / "published_games",
        help="where finished runs' summaries are kept",
    )
    parser.add_argument("--gifs", type=Path, default=None, help="default: TABLE's img/")
    parser.add_argument("--baseline-games", type=int, default=4)
    parser.add_argument("--checkpoint-every", type=positive_int, default=500)
    parser.add_argument("--gif-every", type=positive_int, default=1)
    args = parser.parse_args(argv)
    args.gifs = args.gifs or args.table.parent / "img" / "published_games"
    for planner in args.planners.split(","):
        if planner not in PLANNER_OF:
            parser.error(f"--planners: expected swarm or uct, received {planner!r}")
    for game in [*args.games.split(","), *([args.curve] if args.curve else [])]:
        try:
            fmc_preset(game)
        except ValueError as error:
            parser.error(str(error).replace("--preset fmc", "--games"))
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    seeds = [int(seed) for seed in args.seeds.split(",")]
    if args.curve:
        games, fractions = [args.curve], [float(f) for f in args.fractions.split(",")]
    else:
        games, fractions = args.games.split(","), [args.fraction]
    status = 0
    with stop_signals_raise():
        try:
            for game in games:
                for seed in seeds:
                    for planner in args.planners.split(","):
                        for fraction in fractions:
                            status = play_run(fmc_preset(game), planner, seed, fraction, args)
                            if status in (130, 143):  # stopped by the user: keep what is done
                                return status
        except KeyboardInterrupt as stop:  # SIGINT or SIGTERM (Interrupted) between games
            status = getattr(stop, "exit_status", 130)
        finally:
            write_table(args)
    return status


if __name__ == "__main__":
    sys.exit(main())
