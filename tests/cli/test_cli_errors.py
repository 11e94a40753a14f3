"""What the user can fix is one line on stderr for every subcommand; a bug keeps its traceback.

A missing extra is simulated in a fresh interpreter whose import of the extra's package
fails (``sys.modules[name] = None``, what Python does for a module that cannot be
imported), before ``plangym.cli.main`` runs the command line.
"""

from __future__ import annotations

import os

import pytest

from tests.cli.test_cli import nonblank_lines
from tests.helpers.subprocess_runs import run_python

pytestmark = pytest.mark.timeout(120)

RUN_WITHOUT = """
import sys
for name in sys.argv[1].split(","):
    if name:
        sys.modules[name] = None
from plangym.cli import main
sys.exit(main(sys.argv[2:]))
"""


def run_without(modules: list[str], *args: str, cwd: str | None = None):
    """Run ``plangym ARGS`` in a fresh interpreter in which ``modules`` do not import."""
    env = {**os.environ, "SDL_VIDEODRIVER": "dummy", "SDL_AUDIODRIVER": "dummy"}
    return run_python(RUN_WITHOUT, ",".join(modules), *args, timeout=100, cwd=cwd, env=env)


@pytest.mark.parametrize(
    "args",
    [
        ["check", "HalfCheetah-v5", "--steps", "3"],
        ["bench", "HalfCheetah-v5", "--batch", "4", "--rounds", "1"],
        ["plan", "HalfCheetah-v5", "--steps", "2", "--out", "OUT"],
        ["plan", "HalfCheetah-v5", "--steps", "2", "--workers", "1", "--out", "OUT"],
    ],
    ids=["check", "bench", "plan", "plan-1-worker"],
)
def test_a_missing_extra_is_one_line_naming_it_and_its_install_command(tmp_path, args):
    out = tmp_path / "out"
    args = [str(out) if arg == "OUT" else arg for arg in args]
    result = run_without(["mujoco"], *args)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    lines = nonblank_lines(result.stderr)
    assert len(lines) == 1, lines
    assert lines[0].startswith("plangym: error: MuJoCo environments need the 'mujoco' extra")
    assert "pip install" in lines[0] and "plangym[mujoco]" in lines[0]
    assert not out.exists()  # stopped before any work


def test_list_runs_without_an_extra():
    result = run_without(["mujoco", "dm_control"], "list")
    assert result.returncode == 0, result.stderr
    assert "HalfCheetah-v5" in result.stdout and "Traceback" not in result.stderr


def test_plan_without_the_viz_extra_names_it(tmp_path):
    for missing in ("PIL", "tqdm"):
        result = run_without([missing], "plan", "CartPole-v1", "--out", str(tmp_path / "out"))
        assert result.returncode == 2, result.stderr
        lines = nonblank_lines(result.stderr)
        assert len(lines) == 1 and "Traceback" not in result.stderr, lines
        assert lines[0].startswith(
            "plangym: error: plangym plan needs the 'viz' extra: pip install"
        )
        assert not (tmp_path / "out").exists()


def test_a_missing_dependency_of_a_dependency_is_one_line_naming_the_extra():
    # gymnasium's MuJoCo renderer imports packaging, which the mujoco extra brings.
    result = run_without(["packaging"], "check", "HalfCheetah-v5", "--steps", "3")
    assert result.returncode == 2, result.stderr
    lines = nonblank_lines(result.stderr)
    assert len(lines) == 1 and "Traceback" not in result.stderr, lines
    assert lines[0].startswith(
        "plangym: error: MuJoCo environments need the 'mujoco' extra: pip install"
    )
    assert "packaging" in lines[0].rsplit("(", 1)[1]  # the import's own error, last


def test_a_plangym_module_that_does_not_import_is_a_bug_with_a_traceback():
    result = run_without(["plangym.control.classic_control.env"], "check", "CartPole-v1")
    assert result.returncode == 1
    assert "Traceback" in result.stderr and "plangym.control.classic_control.env" in result.stderr
    assert "plangym: error:" not in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["list", "--family", "nope"], "argument --family: invalid choice: 'nope'"),
        (["list", "extra"], "unrecognized arguments: extra"),
        (["check"], "the following arguments are required: name"),
        (["check", "CartPole-v1", "--steps", "x"], "--steps: expected an integer >= 1"),
        (["bench", "CartPole-v1", "--rounds", "0"], "--rounds: expected an integer >= 1"),
        (["bench", "NoSuchGame-v9"], "unknown environment 'NoSuchGame-v9'"),
        (["plan", "CartPole-v1", "--repeat", "2"], "--repeat: expected a probability"),
        (["plan"], "the following arguments are required: name"),
        # Past what the library takes: refused by the parser, not in a traceback later.
        # The command has no processes_per_cpu to raise: the line does not advise it.
        (["bench", "CartPole-v1", "--workers", "99999"], "least), received 99999 (see"),
        (["plan", "CartPole-v1", "--workers", "99999"], "--workers: expected at most "),
        (["plan", "CartPole-v1", "--planner", "uct", "--rollout-dt", "2147483648"],
         "--rollout-dt: expected an integer in [1, 2147483647]"),
        (["bench", "CartPole-v1", "--dt", "2147483648"], "--dt: expected an integer in [1,"),
        (["plan", "CartPole-v1", "--dt", "2147483648"], "--dt: expected an integer in [1,"),
        (["check", "CartPole-v1", "--steps", "10000000000"], "--steps: expected an integer in"),
        (["bench", "CartPole-v1", "--batch", "100000000000", "--rounds", "1"], "out of memory"),
    ],
    ids=["list-family", "list-extra", "check-name", "check-steps", "bench-rounds",
         "bench-unknown", "plan-repeat", "plan-name", "bench-workers-cap", "plan-workers-cap",
         "plan-rollout-dt-cap",
         "bench-dt-cap", "plan-dt-cap", "check-steps-cap", "bench-batch-memory"],
)  # fmt: skip
def test_bad_arguments_are_one_line_with_status_2(args, message):
    result = run_without([], *args)
    assert result.returncode == 2, result.stderr
    lines = nonblank_lines(result.stderr)
    assert len(lines) == 1 and "Traceback" not in result.stderr, lines
    assert lines[0].startswith("plangym: error: ") and message in lines[0], lines


def test_a_checkpoint_of_stray_text_is_one_line(tmp_path):
    """Unpickling text raised ValueError, which the checkpoint reader let through."""
    (tmp_path / "checkpoint.pkl").write_text("garbage\n")
    result = run_without([], "plan", "CartPole-v1", "--resume", str(tmp_path))
    assert result.returncode == 2, result.stderr
    lines = nonblank_lines(result.stderr)
    assert len(lines) == 1 and lines[0].startswith("plangym: error: --resume: cannot read")


@pytest.mark.parametrize("command", [["plan", "CartPole-v1", "--planner", "fmc", "--walkers"],
                                     ["bench", "CartPole-v1", "--rounds", "1", "--batch"]],
                         ids=["plan-walkers", "bench-batch"])  # fmt: skip
def test_a_size_past_the_free_memory_is_refused_before_any_work(command, tmp_path):
    """Four times the free memory in states alone, each array small: with overcommit no
    allocation failed and the out-of-memory killer ended the process (or another)."""
    from plangym.cli.memory import available_memory

    available = available_memory()
    if available is None:
        pytest.skip("this system does not say how much memory is free")
    size = str(4 * available // 100)  # a CartPole state and observation take more than 100 B
    out = tmp_path / "out"
    result = run_without([], *command, size, "--out", str(out)) if command[0] == "plan" else (
        run_without([], *command, size))  # fmt: skip
    assert result.returncode == 2, result.stderr
    lines = nonblank_lines(result.stderr)
    assert len(lines) == 1 and "its states and observations alone take" in lines[0], lines
    assert not out.exists()
