"""A refused command changes nothing; a resumed or interrupted game says what happened.

A usage error (a budget below the walkers, UCT on a continuous action space, a seed the env
cannot take, a ROM that is not imported, a planner the preset overrides) is found before
any worker starts, and leaves ``--out`` as it was: no file removed, no directory created.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from .test_cli import nonblank_lines, run

pytestmark = pytest.mark.timeout(120)
pytest.importorskip("PIL.Image")
pytest.importorskip("tqdm")

TINY = ["--workers", "1", "--walkers", "4", "--horizon", "2", "--baseline-games", "0"]


def files_of(folder: Path) -> dict[str, bytes]:
    """Every file in ``folder`` and its bytes."""
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


def earlier_run(folder: Path) -> dict[str, bytes]:
    """Fill ``folder`` as an earlier game would have; return its files."""
    folder.mkdir(parents=True)
    (folder / "checkpoint.pkl").write_bytes(b"the earlier game's checkpoint")
    (folder / "summary.json").write_text('{"checkpoint": "checkpoint.pkl"}\n')
    (folder / "actions.json").write_text("[0, 1]\n")
    return files_of(folder)


def rom_missing(game: str) -> bool:
    """Whether stable-retro lists ``game`` but its ROM is not imported here."""
    retro = pytest.importorskip("stable_retro")
    try:
        retro.data.get_romfile_path(game, retro.data.Integrations.ALL)
    except FileNotFoundError:
        return True
    return False


def needs(args: list[str]) -> None:
    """Skip a case whose env is not installed here (or whose ROM is)."""
    if "cartpole-balance" in args:
        pytest.importorskip("dm_control")
    if "SuperMarioBros-9-9-v0" in args:
        pytest.importorskip("nes_py")
    if "ZeroWing-Genesis-v0" in args and not rom_missing("ZeroWing-Genesis-v0"):
        pytest.skip("ZeroWing-Genesis-v0's ROM is imported here")


def one_error_line(result: Any) -> str:
    """The one line a refused command prints, after checking its status."""
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    lines = nonblank_lines(result.stderr)
    assert len(lines) == 1 and lines[0].startswith("plangym: error: "), lines
    return lines[0]


REFUSED_PLANS = [
    (
        ["CartPole-v1", "--planner", "fmc", "--walkers", "8", "--budget", "3"],
        "plangym: error: --budget: expected at least n_walkers = 8 samples per action",
    ),
    (
        ["Pendulum-v1", "--planner", "uct"],
        "plangym: error: --planner uct: UCT needs a Discrete action space, received Box",
    ),
    (
        ["ALE/Boxing-v5", "--preset", "fmc", "--planner", "swarm"],
        "plangym: error: --planner swarm: --preset fmc plays the fmc planner",
    ),
    (["cartpole-balance", "--seed", str(2**32)], "plangym: error: --seed: expected"),
    (["ZeroWing-Genesis-v0"], "python -m stable_retro.import DIRECTORY"),
    (["BalloonLearningEnvironment-v0"], "plangym cannot build BalloonLearningEnvironment-v0"),
    (["SuperMarioBros-9-9-v0"], "plangym: error: name: expected a gym-super-mario-bros id"),
    (
        ["CartPole-v1", "--planner", "uct", "--budget", "8", "--waves", "3"],
        "plangym: error: --waves: uct with a budget (--budget) runs waves until",
    ),
    (
        ["ALE/Boxing-v5", "--preset", "fmc", "--planner", "uct", "--waves", "3"],
        "plangym: error: --waves: uct with a budget (--preset fmc) runs waves until",
    ),
]


@pytest.mark.parametrize(
    ("args", "message"),
    REFUSED_PLANS,
    ids=[
        "fmc-budget",
        "uct-box",
        "preset-swarm",
        "dm-control-seed",
        "rom",
        "balloon",
        "mario",
        "uct-waves-and-budget",
        "uct-waves-and-preset",
    ],
)
def test_a_refused_plan_leaves_out_as_it_was(tmp_path, args, message):
    needs(args)
    out = tmp_path / "earlier"
    before = earlier_run(out)
    line = one_error_line(run("plan", *args, "--steps", "2", "--workers", "2", "--out", str(out)))
    assert message in line, line
    assert files_of(out) == before  # the earlier game's checkpoint above all
    new = tmp_path / "new" / "out"
    assert message in one_error_line(run("plan", *args, "--steps", "2", "--out", str(new)))
    assert not (tmp_path / "new").exists()


@pytest.mark.parametrize("command", ["check", "bench"])
def test_a_seed_the_env_cannot_take_is_a_usage_error_in_check_and_bench(command):
    pytest.importorskip("dm_control")
    result = run(command, "cartpole-balance", "--seed", str(2**32))
    line = one_error_line(result)
    assert line.startswith("plangym: error: --seed: expected") and "2**32 - 1" in line, line
    assert "None" not in line, line  # the command line has no None to pass
    assert result.stdout == ""  # no FAIL table: the env was never asked


def test_the_highest_seed_a_dm_control_task_takes_passes_its_checks():
    pytest.importorskip("dm_control")
    result = run("check", "cartpole-balance", "--steps", "3", "--seed", str(2**32 - 1))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "all checks passed" in result.stdout


@pytest.mark.parametrize(
    "args",
    [
        ["check", "ZeroWing-Genesis-v0", "--steps", "3"],
        ["bench", "ZeroWing-Genesis-v0", "--rounds", "1", "--batch", "4"],
        ["check", "BalloonLearningEnvironment-v0"],
        ["bench", "BalloonLearningEnvironment-v0", "--rounds", "1", "--batch", "4"],
    ],
    ids=["check-rom", "bench-rom", "check-balloon", "bench-balloon"],
)
def test_an_env_that_cannot_be_built_here_is_one_line_saying_what_to_do(args):
    needs(args)
    line = one_error_line(run(*args))
    if "ZeroWing-Genesis-v0" in args:
        assert "ZeroWing-Genesis-v0" in line and "import" in line and "ROM" in line, line
        assert "python -m stable_retro.import DIRECTORY" in line, line
    else:
        assert "plangym cannot build BalloonLearningEnvironment-v0" in line, line
        assert "plangym list" in line, line


def test_an_unwritable_out_is_refused_before_any_env_is_built(tmp_path, monkeypatch, capsys):
    import plangym
    from plangym.cli import main

    def no_env(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("an env was built before --out was checked")

    monkeypatch.setattr(plangym, "make", no_env)
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    assert main(["plan", "ALE/MsPacman-v5", "--out", str(blocker / "out")]) == 2
    assert "plangym: error: --out: cannot write to" in capsys.readouterr().err


def test_resume_refuses_fewer_steps_than_were_played(tmp_path):
    out = tmp_path / "run"
    first = run("plan", "CartPole-v1", "--steps", "6", *TINY, "--out", str(out))
    assert first.returncode == 0, first.stderr
    before = files_of(out)
    line = one_error_line(run("plan", "CartPole-v1", "--resume", str(out), "--steps", "4"))
    assert "--steps: the checkpoint in" in line and "has 6 agent steps played" in line, line
    assert files_of(out) == before


@contextmanager
def ctrl_c_caught() -> Iterator[None]:
    """Let SIGINT reach the command (a test runner in the background may ignore it)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def ctrl_c_then(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function``, which first receives a SIGINT, as a Ctrl-C at that moment would send."""

    def interrupted(*args: Any, **kwargs: Any) -> Any:
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(10**6):  # the handler runs between two bytecodes, and raises
            pass
        return function(*args, **kwargs)

    return interrupted


def test_a_ctrl_c_while_the_gif_is_drawn_is_in_the_summary(tmp_path, monkeypatch, capsys):
    from plangym.cli import main, outputs

    monkeypatch.setattr(outputs, "replay_frames", ctrl_c_then(outputs.replay_frames))
    out = tmp_path / "run"
    with ctrl_c_caught():
        status = main(["plan", "CartPole-v1", "--steps", "4", *TINY, "--out", str(out)])
    assert status == 130
    summary = json.loads((out / "summary.json").read_text())
    assert summary["interrupted"] is True and summary["signal"] == "SIGINT"
    assert summary["agent_steps"] == 4 and summary["gif"] is None
    assert sorted(files_of(out)) == ["actions.json", "checkpoint.pkl", "summary.json"]
    printed = capsys.readouterr()
    assert "4 (interrupted by SIGINT)" in printed.out
    assert printed.err.splitlines()[-1] == (
        f"plangym: interrupted (SIGINT) while writing; wrote actions.json, summary.json in {out}"
    )


def test_a_ctrl_c_while_resuming_into_another_directory_leaves_it_as_it_was(
    tmp_path, monkeypatch, capsys
):
    from plangym.cli import main, plan

    saved = tmp_path / "saved"
    assert main(["plan", "CartPole-v1", "--steps", "3", *TINY, "--out", str(saved)]) == 0
    other = tmp_path / "other"
    before = earlier_run(other)
    monkeypatch.setattr(plan, "restore_trajectory", ctrl_c_then(plan.restore_trajectory))
    with ctrl_c_caught():
        status = main(["plan", "CartPole-v1", "--resume", str(saved), "--out", str(other)])
    assert status == 130
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"plangym: interrupted (SIGINT) while resuming; {other} is unchanged"
    )
    assert files_of(other) == before


def test_a_new_game_stopped_before_its_first_checkpoint_drops_the_earlier_one(
    tmp_path, monkeypatch
):
    """Left there, the summary would report it and --resume would go on with the other game."""
    from plangym.cli import main, plan

    out = tmp_path / "run"
    earlier_run(out)
    monkeypatch.setattr(plan, "play", ctrl_c_then(plan.play))
    with ctrl_c_caught():
        status = main(["plan", "CartPole-v1", "--steps", "3", *TINY, "--out", str(out)])
    assert status == 130
    assert not (out / "checkpoint.pkl").exists()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["interrupted"] is True and summary["checkpoint"] is None


def test_check_and_bench_help_show_their_defaults():
    check = run("check", "--help").stdout
    assert "steps per check (default: 40)" in check and "(default: 0)" in check
    bench = run("bench", "--help").stdout
    for default in ("workers (default: 2)", "(default: 256)", "(default: 5)", "(default: 1)"):
        assert default in bench, bench
    assert "--resume DIR" in run("plan", "--help").stdout


def test_an_extra_argument_points_to_the_subcommands_help():
    line = one_error_line(run("plan", "--steps", "3", "CartPole-v1", "extra"))
    assert line == "plangym: error: unrecognized arguments: extra (see 'plangym plan --help')"


def test_a_game_stopped_while_its_gif_is_drawn_leaves_no_earlier_gif(tmp_path, monkeypatch):
    """An earlier game's GIF (or an earlier part's, resumed) never sits beside a new summary."""
    from plangym.cli import main, outputs

    out = tmp_path / "run"
    game = ["plan", "CartPole-v1", *TINY, "--out", str(out)]
    gif_stopped = ctrl_c_then(outputs.replay_frames)
    assert main([*game, "--steps", "3"]) == 0 and (out / "trajectory.gif").exists()
    with monkeypatch.context() as patched, ctrl_c_caught():
        patched.setattr(outputs, "replay_frames", gif_stopped)
        resumed = main(["plan", "CartPole-v1", "--resume", str(out), "--steps", "5"])
    assert resumed == 130
    assert sorted(files_of(out)) == ["actions.json", "checkpoint.pkl", "summary.json"]
    assert main(["plan", "CartPole-v1", "--resume", str(out), "--steps", "7"]) == 0
    assert (out / "trajectory.gif").exists()
    with monkeypatch.context() as patched, ctrl_c_caught():
        patched.setattr(outputs, "replay_frames", gif_stopped)
        new_game = main([*game, "--steps", "2", "--seed", "1"])
    assert new_game == 130
    assert sorted(files_of(out)) == ["actions.json", "checkpoint.pkl", "summary.json"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["seed"] == 1 and summary["agent_steps"] == 2 and summary["gif"] is None
