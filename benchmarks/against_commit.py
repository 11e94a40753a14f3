"""This working tree against another git revision, side by side, in one run.

``python benchmarks/against_commit.py REV [--rounds 7] [--only NAME ...] [--list]`` checks
REV out in a temporary ``git worktree`` (removed at the end, also on error or Ctrl-C) and
times the same measures on both trees. Every measurement is a fresh interpreter
(``sys.executable this_file --measure NAME``) with ``PYTHONPATH=<tree>`` and an empty
temporary directory as its working directory, so neither the repository nor the editable
install can decide which plangym is imported; each subprocess checks that ``plangym.__file__``
lies under the tree it was given and fails loudly otherwise. The measuring code is this
file's, for both trees: only plangym's public API (``plangym.make``, ``step_batch``,
``plan_env``, ``make_vec``, ``plangym.vector.AsyncVectorEnv``, ``reset``, ``step``,
``close``, ``python -m plangym plan``) is used, so any revision that has it can be measured.

Measures (``--list`` prints them):

* ``w1``: ``ALE/MsPacman-v5`` ParallelEnv, 2 workers, ``inline_small_batches=False``, 256
  distinct states, ``step_batch(dt=1, return_state=True)``; frames/s (256 x frameskip over
  the median of 7 calls after 2 warm-ups).
* ``atari_single``: ``ALE/MsPacman-v5`` in this process, 256 distinct states,
  ``step_batch(dt=1, return_state=True)``; frames/s (the frame loop and the in-place path).
* ``kernels_single``: CartPole-v1 in this process, ``step_batch(arrays=True)`` of 4096
  states as one record array; steps/s (the classic-control kernel path).
* ``step_single``: CartPole-v1 ``env.step(action, state=state)``, 2000 calls; microseconds
  per step (median of 5), lower is better: the generic path of one step.
* ``w2``: CartPole-v1 ParallelEnv, 2 workers, ``inline_small_batches=False``, 4096 states;
  steps/s (median of 7 calls after 2 warm-ups).
* ``w3``: CartPole-v1 ParallelEnv, 2 workers, default settings, batches of 8 states;
  microseconds per call (median of 5 x 300 calls after 50 warm-ups), lower is better.
* ``vector``: ``plangym.vector.AsyncVectorEnv`` of 4 ``gymnasium.make("CartPole-v1")``;
  vector steps/s with NumPy actions (median of 3 x 2000 steps after 300 warm-up steps).
* ``vector_mspacman``: the same with 4 ``ALE/MsPacman-v5`` (median of 3 x 200 steps after 50).
* ``make_vec``: ``plangym.make_vec("CartPole-v1", num_envs=4, vectorization_mode="async")``;
  vector steps/s as ``vector``.
* ``vec_step_batch``: ``make_vec`` CartPole-v1 with 2 sub-envs, ``step_batch`` of 4096
  states; steps/s (median of 7 calls after 2 warm-ups).
* ``plan``: ``python -m plangym plan ALE/MsPacman-v5 --planner swarm --workers 2 --steps 60
  --seed 0``; the ``frames_per_s`` of its ``summary.json`` (planning time only).

Protocol: the measures run one after the other; each runs ``--rounds`` rounds, and each
round is one subprocess per tree, REV first on odd rounds and this tree first on even ones,
so neither tree always runs right after the other (this 2-core VM runs faster in a burst
after idle time). ``--quick`` shrinks every measure to a smoke test whose numbers mean
nothing.

Reading the table: the two medians over the rounds, and the ratio as the MEDIAN OF THE
PER-ROUND RATIOS with their min..max. The ratio is oriented so that above 1 always means
this tree is faster: this/REV for rates, REV/this for times. A refactor that claims "no
slower than the commit before" wants ratios of about 1 or more, with min..max spanning 1 at
worst. The header names the date, both commits (this tree as ``HEAD`` plus ``+dirty`` when
``git status --porcelain`` is not empty), the cores (``nproc``) and the CPU model.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from host import cpu_model

HERE = Path(__file__).resolve()
ROOT = HERE.parent.parent
SIZES = {"quick": False}  # set in the measuring subprocess by --quick

# Measures (run in the subprocess) ---------------------------------------------------------


@dataclass(frozen=True)
class Value:
    """What one measurement subprocess reports."""

    value: float
    unit: str
    higher_is_better: bool


MEASURES: dict[str, Callable[[], Value]] = {}


def measure(function: Callable[[], Value]) -> Callable[[], Value]:
    """Register a measure under its function name."""
    MEASURES[function.__name__] = function
    return function


def n(full: int, quick: int) -> int:
    """A count: ``full`` normally, ``quick`` under ``--quick``."""
    return quick if SIZES["quick"] else full


def workloads():
    """``benchmarks/workloads.py`` next to this file (the same code measures both trees)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("workloads", HERE.parent / "workloads.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def median_seconds(call: Callable[[], object], warmups: int, repeats: int) -> float:
    for _ in range(warmups):
        call()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def vector_steps_per_second(env, warmup: int, repeats: int, steps: int) -> float:
    """Vector steps per second of ``env.step`` on seeded NumPy action arrays."""
    import numpy as np

    env.reset(seed=0)
    n_actions = int(env.single_action_space.n)
    rng = np.random.default_rng(0)
    for action in rng.integers(n_actions, size=(warmup, env.num_envs)):
        env.step(action)
    rates = []
    for _ in range(repeats):
        actions = rng.integers(n_actions, size=(steps, env.num_envs))
        start = time.perf_counter()
        for action in actions:
            env.step(action)
        rates.append(steps / (time.perf_counter() - start))
    return statistics.median(rates)


def vector_rate(env, warmup: int, repeats: int, steps: int) -> Value:
    """:func:`vector_steps_per_second` of ``env`` as a measure's value; closes ``env``."""
    try:
        return Value(vector_steps_per_second(env, warmup, repeats, steps), "steps/s", True)
    finally:
        env.close()


def make_cartpole():
    import gymnasium

    return gymnasium.make("CartPole-v1")


def make_mspacman():
    import ale_py
    import gymnasium

    gymnasium.register_envs(ale_py)
    return gymnasium.make("ALE/MsPacman-v5")


def batch_seconds(env, states: list, actions) -> float:
    """Median seconds of ``env.step_batch(actions, states, return_state=True)``."""
    return median_seconds(
        lambda: env.step_batch(actions, states=states, dt=1, return_state=True),
        warmups=n(2, 1),
        repeats=n(7, 1),
    )


@measure
def w1() -> Value:

    import plangym

    env = plangym.make("ALE/MsPacman-v5", n_workers=2, inline_small_batches=False)
    return mspacman_frames_per_second(env, env.plan_env)


@measure
def atari_single() -> Value:
    import plangym

    env = plangym.make("ALE/MsPacman-v5")
    return mspacman_frames_per_second(env, env)


def mspacman_frames_per_second(env, single) -> Value:
    """Frames/s of ``env.step_batch`` on 256 MsPacman states (``single``: its plain env)."""
    import numpy as np

    try:
        size = n(256, 16)
        states = workloads().game_states(single, size)
        actions = np.random.default_rng(1).integers(single.n_actions, size=size)
        frames = size * single.frameskip
        return Value(frames / batch_seconds(env, states, actions), "frames/s", True)
    finally:
        env.close()


@measure
def kernels_single() -> Value:
    import numpy as np

    import plangym

    env = plangym.make("CartPole-v1")
    size = n(4096, 64)
    states = np.stack(workloads().cartpole_states(env, size))  # one record array
    actions = np.arange(size) % 2
    seconds = median_seconds(
        lambda: env.step_batch(actions, states=states, arrays=True),
        warmups=n(2, 1),
        repeats=n(7, 1),
    )
    return Value(size / seconds, "steps/s", True)


@measure
def step_single() -> Value:
    import plangym

    env = plangym.make("CartPole-v1")
    state, *_ = env.reset()
    calls = n(2000, 20)

    def steps() -> None:
        for i in range(calls):
            env.step(i % 2, state=state)

    seconds = median_seconds(steps, warmups=1, repeats=n(5, 1))
    return Value(1e6 * seconds / calls, "us/step", False)


@measure
def w2() -> Value:
    import numpy as np

    import plangym

    env = plangym.make("CartPole-v1", n_workers=2, inline_small_batches=False)
    try:
        size = n(4096, 64)
        states = workloads().cartpole_states(env.plan_env, size)
        actions = np.arange(size) % 2
        return Value(size / batch_seconds(env, states, actions), "steps/s", True)
    finally:
        env.close()


@measure
def w3() -> Value:
    import numpy as np

    import plangym

    env = plangym.make("CartPole-v1", n_workers=2)
    try:
        states = workloads().cartpole_states(env.plan_env, 8)
        actions = np.arange(8) % 2
        calls = n(300, 10)

        def block() -> None:
            for _ in range(calls):
                env.step_batch(actions, states=states)

        for _ in range(n(50, 2)):
            env.step_batch(actions, states=states)
        seconds = median_seconds(block, warmups=0, repeats=n(5, 1))
        return Value(seconds / calls * 1e6, "us/call", False)
    finally:
        env.close()


@measure
def vector() -> Value:
    from plangym.vector import AsyncVectorEnv

    return vector_rate(AsyncVectorEnv([make_cartpole] * 4), n(300, 10), n(3, 1), n(2000, 50))


@measure
def vector_mspacman() -> Value:
    import ale_py
    import gymnasium

    from plangym.vector import AsyncVectorEnv

    gymnasium.register_envs(ale_py)
    return vector_rate(AsyncVectorEnv([make_mspacman] * 4), n(50, 5), n(3, 1), n(200, 20))


@measure
def make_vec() -> Value:
    import plangym

    env = plangym.make_vec("CartPole-v1", num_envs=4, vectorization_mode="async")
    return vector_rate(env, n(300, 10), n(3, 1), n(2000, 50))


@measure
def vec_step_batch() -> Value:
    import numpy as np

    import plangym

    size = n(4096, 64)
    plain = plangym.make("CartPole-v1")
    try:
        states = workloads().cartpole_states(plain, size)
    finally:
        plain.close()
    actions = np.arange(size) % 2
    env = plangym.make_vec("CartPole-v1", num_envs=2, vectorization_mode="async")
    try:
        env.reset(seed=0)
        seconds = median_seconds(
            lambda: env.step_batch(actions, states=states), warmups=n(2, 1), repeats=n(7, 1)
        )
        return Value(size / seconds, "steps/s", True)
    finally:
        env.close()


@measure
def plan() -> Value:
    """``python -m plangym plan ...`` run in this (already checked) interpreter."""
    import runpy

    # Under the working directory, which the driver removes even if this process is killed.
    with tempfile.TemporaryDirectory(prefix="plan-out-", dir=os.getcwd()) as out:
        sys.argv = [
            "plangym",
            "plan",
            "ALE/MsPacman-v5",
            "--planner",
            "swarm",
            "--workers",
            "2",
            "--steps",
            str(n(60, 3)),
            "--seed",
            "0",
            "--out",
            out,
            *(["--baseline-games", "0"] if SIZES["quick"] else []),
        ]
        code = 0
        # The command's report goes to stderr: stdout carries only our JSON line.
        with contextlib.redirect_stdout(sys.stderr):
            try:
                runpy.run_module("plangym", run_name="__main__", alter_sys=True)
            except SystemExit as done:
                code = done.code
        if code not in (0, None):
            raise RuntimeError(f"python -m plangym plan exited with {code!r}")
        summary = json.loads((Path(out) / "summary.json").read_text())
    return Value(float(summary["frames_per_s"]), "frames/s", True)


def run_measure(name: str, tree: Path) -> int:
    """The subprocess side: check which plangym is imported, measure, print one JSON line."""
    signal.signal(signal.SIGTERM, exit_on_signal)  # close the envs when the driver stops us
    # ``python this_file`` puts benchmarks/ first on sys.path; its scripts (dm_control.py,
    # retro.py, vector.py, ...) must not shadow real packages, and plangym must come from
    # PYTHONPATH alone.
    sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != HERE.parent]
    import plangym

    where = Path(plangym.__file__).resolve()
    if not where.is_relative_to(tree.resolve()):
        print(
            f"against_commit: WRONG PLANGYM: imported {where}, expected one under {tree}",
            file=sys.stderr,
        )
        return 3
    value = MEASURES[name]()
    answer = {"value": value.value, "unit": value.unit, "higher_is_better": value.higher_is_better}
    print(json.dumps(answer), flush=True)
    return 0


# Driver (the parent process) --------------------------------------------------------------


@dataclass
class Series:
    """Per-round values of one measure on both trees."""

    name: str
    base: list[float] = field(default_factory=list)
    ours: list[float] = field(default_factory=list)
    unit: str = ""
    higher_is_better: bool = True
    wall_s: float = 0.0

    def ratios(self) -> list[float]:
        pairs = zip(self.ours, self.base, strict=True)
        if self.higher_is_better:
            return [ours / base for ours, base in pairs]
        return [base / ours for ours, base in pairs]


def git(*arguments: str) -> str:
    return subprocess.run(
        ["git", *arguments], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.strip()


def this_tree_label() -> str:
    head = git("rev-parse", "--short", "HEAD")
    return head + ("+dirty" if git("status", "--porcelain") else "")


def nproc() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 0


def measure_once(name: str, tree: Path, workdir: Path, quick: bool) -> dict:
    """One fresh subprocess measuring ``name`` with ``tree``'s plangym; its JSON answer."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    env.setdefault("SDL_VIDEODRIVER", "dummy")
    env.setdefault("SDL_AUDIODRIVER", "dummy")
    command = [sys.executable, str(HERE), "--measure", name, "--tree", str(tree)]
    # Its own session, so that an interruption can end it with all its workers.
    process = subprocess.Popen(
        [*command, *(["--quick"] if quick else [])],
        cwd=workdir,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        stdout, stderr = process.communicate()
    except BaseException:
        stop_group(process)
        raise
    lines = stdout.strip().splitlines()
    if process.returncode != 0 or not lines:
        raise RuntimeError(
            f"measure {name} on {tree} failed (exit {process.returncode}):\n{stderr[-3000:]}"
        )
    return json.loads(lines[-1])


def stop_group(process: subprocess.Popen) -> None:
    """End a measuring subprocess (a session leader) and every worker in its group."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(5.0)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)  # whatever of the group is left
    process.wait()


def compare(
    names: list[str], rounds: int, base_tree: Path, base_label: str, quick: bool
) -> list[Series]:
    trees = {"base": base_tree, "ours": ROOT}
    results = []
    with tempfile.TemporaryDirectory(prefix="against-commit-cwd-") as workdir:
        for name in names:
            series = Series(name)
            start = time.perf_counter()
            for index in range(1, rounds + 1):
                order = ["base", "ours"] if index % 2 == 1 else ["ours", "base"]
                answers = {
                    side: measure_once(name, trees[side], Path(workdir), quick) for side in order
                }
                for side in order:
                    getattr(series, side).append(answers[side]["value"])
                units = {
                    (answer["unit"], answer["higher_is_better"]) for answer in answers.values()
                }
                if len(units) != 1:
                    raise RuntimeError(f"measure {name}: the trees report different units {units}")
                series.unit, series.higher_is_better = units.pop()
                print(
                    f"{name} round {index}/{rounds} "
                    f"({base_label if order[0] == 'base' else 'this tree'} first): "
                    f"{base_label} {series.base[-1]:,.1f}, this tree {series.ours[-1]:,.1f} "
                    f"{series.unit}",
                    file=sys.stderr,
                    flush=True,
                )
            series.wall_s = time.perf_counter() - start
            results.append(series)
    return results


def number(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:,.2f}"


def table(results: list[Series], base_label: str, ours_label: str) -> list[str]:
    lines = [
        f"| measure | unit | {base_label} median | {ours_label} median "
        "| ratio, >1 = this tree faster: median (min..max) | wall s |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for series in results:
        ratios = series.ratios()
        unit = series.unit + ("" if series.higher_is_better else " (lower is better)")
        lines.append(
            f"| {series.name} | {unit} | {number(statistics.median(series.base))} "
            f"| {number(statistics.median(series.ours))} "
            f"| {statistics.median(ratios):.2f} ({min(ratios):.2f}..{max(ratios):.2f}) "
            f"| {series.wall_s:.0f} |"
        )
    return lines


@contextlib.contextmanager
def worktree(rev: str):
    """``rev`` checked out (detached) in a temporary git worktree, removed on the way out."""
    parent = Path(tempfile.mkdtemp(prefix="against-commit-"))
    path = parent / "tree"
    try:
        git("worktree", "add", "--detach", str(path), rev)
        yield path
    finally:
        with contextlib.suppress(subprocess.CalledProcessError):
            git("worktree", "remove", "--force", str(path))
        shutil.rmtree(parent, ignore_errors=True)
        with contextlib.suppress(subprocess.CalledProcessError):
            git("worktree", "prune")


def raise_interrupt(signum, frame) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def exit_on_signal(signum, frame) -> None:
    sys.exit(128 + signum)


def main() -> int:
    parser = argparse.ArgumentParser(
        description="Time this working tree against another git revision, side by side"
    )
    parser.add_argument("rev", nargs="?", help="the git revision to compare with")
    parser.add_argument("--rounds", type=int, default=7, help="rotating rounds per measure")
    parser.add_argument(
        "--only", nargs="+", choices=list(MEASURES), metavar="NAME", help="measures to run"
    )
    parser.add_argument("--list", action="store_true", help="print the measure names and exit")
    parser.add_argument(
        "--quick", action="store_true", help="tiny sizes: a smoke test, numbers mean nothing"
    )
    parser.add_argument("--measure", choices=list(MEASURES), help=argparse.SUPPRESS)
    parser.add_argument("--tree", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.list:
        print("\n".join(MEASURES))
        return 0
    if args.measure:
        SIZES["quick"] = args.quick
        return run_measure(args.measure, args.tree)
    if not args.rev:
        parser.error("REV is required (or --list)")
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    names = args.only or list(MEASURES)
    try:
        base_commit = git("rev-parse", "--short", f"{args.rev}^{{commit}}")
    except subprocess.CalledProcessError as error:
        parser.error(f"not a revision: {args.rev} ({error.stderr.strip()})")
    same = base_commit.startswith(args.rev) or args.rev.startswith(base_commit)
    base_label = base_commit if same else f"{args.rev} ({base_commit})"
    ours_label = this_tree_label()
    signal.signal(signal.SIGTERM, raise_interrupt)
    started = datetime.datetime.now().astimezone()
    try:
        with worktree(args.rev) as base_tree:
            results = compare(names, args.rounds, base_tree, base_commit, args.quick)
    except RuntimeError as error:  # a measurement failed: its stderr is in the message
        print(f"against_commit: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("against_commit: interrupted; worktree and subprocesses cleaned up", file=sys.stderr)
        return 130
    print(
        f"date: {started:%Y-%m-%d %H:%M %Z}; REV {base_label} vs this tree {ours_label}; "
        f"nproc {nproc()}; CPU {cpu_model('unknown')}; Python {sys.version.split()[0]}"
    )
    print(
        f"{args.rounds} rotating rounds (REV first on odd rounds), one fresh subprocess per "
        "tree and round" + ("; --quick: numbers mean nothing" if args.quick else "")
    )
    print("\n".join(table(results, base_label, ours_label)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
