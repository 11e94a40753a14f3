"""``plangym plan`` stopped by SIGINT (Ctrl-C) or SIGTERM keeps the game played so far.

The command runs as a user runs it, in a subprocess whose stderr is a pseudo-terminal, so
that its progress bar shows how many steps were played before the signal is sent.
"""

from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import plangym

from .test_cli import plangym_script

pytestmark = pytest.mark.timeout(240)
Image = pytest.importorskip("PIL.Image")
pytest.importorskip("tqdm")

# Pong with a small swarm never ends within the budget, and plays ~30 steps a second.
PLAN = ["plan", "ALE/Pong-v5", "--workers", "2", "--walkers", "8", "--horizon", "2"]
PLAN += ["--steps", "100000", "--baseline-games", "4", "--seed", "3"]


# A test runner started in the background may ignore SIGINT, and its children inherit
# that: Ctrl-C is restored before the command replaces this interpreter (same process id).
AS_IN_A_TERMINAL = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "os.execv(sys.argv[1], sys.argv[1:])"
)


class RunningPlan:
    """``plangym plan`` in a subprocess; its stderr (a terminal) is read as it comes."""

    def __init__(self, out: Path, new_session: bool = False):
        import fcntl
        import pty
        import struct
        import termios

        self.out = out
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 160, 0, 0))
        env = {**os.environ, "SDL_VIDEODRIVER": "dummy", "SDL_AUDIODRIVER": "dummy"}
        self.process = subprocess.Popen(
            [sys.executable, "-c", AS_IN_A_TERMINAL, plangym_script(), *PLAN, "--out", str(out)],
            stdout=subprocess.PIPE,
            stderr=slave,
            env=env,
            start_new_session=new_session,
        )
        os.close(slave)
        self.master = master
        self.chunks: list[bytes] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self.master, 4096)
            except OSError:  # the terminal closed
                return
            if not chunk:
                return
            self.chunks.append(chunk)

    @property
    def stderr(self) -> str:
        return b"".join(self.chunks).decode(errors="replace")

    def wait_for_steps(self, steps: int, timeout: float = 120) -> int:
        """Wait until the progress bar shows at least ``steps`` agent steps; return them."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.process.poll() is None, self.stderr
            shown = [int(n) for n in re.findall(r"(\d+)/100000 \[", self.stderr)]
            if shown and shown[-1] >= steps:
                return shown[-1]
            time.sleep(0.05)
        raise AssertionError(f"no progress to {steps} steps: {self.stderr[-500:]}")

    def children(self) -> list[int]:
        """The process ids whose parent is the command (its workers)."""
        return children_of(self.process.pid)

    def finish(self) -> tuple[int, str, list[str]]:
        """Wait for the command; return its status, stdout and last stderr lines."""
        stdout, _ = self.process.communicate(timeout=120)
        self.reader.join(timeout=10)
        os.close(self.master)
        lines = [line for line in re.split(r"[\r\n]+", self.stderr) if line.strip()]
        return self.process.returncode, stdout.decode(), lines


def children_of(parent: int) -> list[int]:
    """The process ids whose parent is ``parent``, read from /proc."""
    pids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):  # the process ended meanwhile
            continue
        if int(fields[1]) == parent:
            pids.append(int(stat.parent.name))
    return pids


def running(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, dead but not yet reaped, does not)."""
    try:
        os.kill(pid, 0)
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (ProcessLookupError, FileNotFoundError):
        return False
    return state != "Z"


def wait_gone(pids: list[int], timeout: float = 5) -> list[int]:
    """The pids still running after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while any(running(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return [pid for pid in pids if running(pid)]


def gif_frames(path: Path) -> list[np.ndarray]:
    """Every picture the GIF shows, a frame merged with its repeats counted once each."""
    frames = []
    with Image.open(io.BytesIO(path.read_bytes())) as image:
        delay = None
        for index in range(image.n_frames):
            image.seek(index)
            delay = delay or image.info["duration"]
            frame = np.asarray(image.convert("RGB"))
            frames += [frame] * (image.info["duration"] // delay)
    return frames


def replayed_screen(name: str, actions: list) -> np.ndarray:
    """The screen after ``actions`` from the start ``plangym plan --seed 3`` plays from."""
    env = plangym.make(name)
    env.seed(3)
    env.reset()
    for action in actions:
        env.step(action)
    screen = env.get_image()
    env.close()
    return screen


def check_kept_work(out: Path, signal_name: str, played: int) -> dict:
    """The files of an interrupted run: whole, consistent with one another, no leftovers."""
    assert sorted(p.name for p in out.iterdir()) == [
        "actions.json",
        "summary.json",
        "trajectory.gif",
    ]
    summary = json.loads((out / "summary.json").read_text())
    actions = json.loads((out / "actions.json").read_text())
    assert summary["interrupted"] is True and summary["signal"] == signal_name
    assert summary["agent_steps"] == len(actions) >= played
    assert summary["episode_ended"] is False and summary["replay_exact"] is True
    assert summary["random_games"] == 0  # the random baseline never ran
    assert summary["gif_frames"] == len(actions) and summary["frames_simulated"] > 0
    shown = gif_frames(out / "trajectory.gif")
    assert len(shown) == len(actions)
    np.testing.assert_array_equal(shown[-1], replayed_screen("ALE/Pong-v5", actions))
    return summary


def test_ctrl_c_writes_the_steps_played_and_leaves_no_worker(tmp_path):
    out = tmp_path / "run"
    plan = RunningPlan(out)
    played = plan.wait_for_steps(20)
    workers = plan.children()
    assert len(workers) >= 2, workers
    plan.process.send_signal(signal.SIGINT)
    status, stdout, lines = plan.finish()
    assert status == 130, lines
    assert lines[-1] == f"plangym: interrupted (SIGINT); wrote {out}", lines
    assert "Traceback" not in plan.stderr
    summary = check_kept_work(out, "SIGINT", played)
    assert f"{summary['agent_steps']} (interrupted by SIGINT)" in stdout
    assert stdout.splitlines()[-1].split() == ["score", f"{summary['score']:g}"]
    assert wait_gone(workers) == []


def test_sigterm_to_the_whole_process_group_writes_the_steps_played(tmp_path):
    # As a service manager stops a job: the workers receive SIGTERM too, and die of it.
    out = tmp_path / "run"
    plan = RunningPlan(out, new_session=True)
    played = plan.wait_for_steps(20)
    workers = plan.children()
    os.killpg(plan.process.pid, signal.SIGTERM)
    status, _, lines = plan.finish()
    assert status == 143, lines
    assert lines[-1] == f"plangym: interrupted (SIGTERM); wrote {out}", lines
    check_kept_work(out, "SIGTERM", played)
    assert wait_gone(workers) == []


def test_sigterm_to_the_command_alone_stops_its_workers(tmp_path):
    out = tmp_path / "run"
    plan = RunningPlan(out)
    played = plan.wait_for_steps(10)
    workers = plan.children()
    plan.process.send_signal(signal.SIGTERM)
    status, _, lines = plan.finish()
    assert status == 143 and lines[-1] == f"plangym: interrupted (SIGTERM); wrote {out}"
    check_kept_work(out, "SIGTERM", played)
    assert wait_gone(workers) == []


def test_a_second_ctrl_c_while_writing_leaves_whole_files(tmp_path):
    out = tmp_path / "run"
    plan = RunningPlan(out)
    plan.wait_for_steps(150)  # the GIF of 150 steps takes a while to replay and code
    workers = plan.children()
    plan.process.send_signal(signal.SIGINT)
    deadline = time.monotonic() + 60
    while not (out / "summary.json").exists() and time.monotonic() < deadline:
        time.sleep(0.005)
    plan.process.send_signal(signal.SIGINT)  # while the GIF is replayed
    status, _, lines = plan.finish()
    assert status == 130, lines
    assert lines[-1] == (
        f"plangym: interrupted again (SIGINT) while writing; wrote actions.json, "
        f"summary.json in {out}"
    ), lines
    # No GIF, nor any half-written file: only whole files that agree with each other.
    assert sorted(p.name for p in out.iterdir()) == ["actions.json", "summary.json"]
    summary = json.loads((out / "summary.json").read_text())
    actions = json.loads((out / "actions.json").read_text())
    assert summary["interrupted"] is True and summary["agent_steps"] == len(actions) >= 150
    assert summary["gif"] is None and summary["gif_frames"] == 0
    assert wait_gone(workers) == []


def test_other_commands_stop_on_sigterm_with_status_143():
    env = {**os.environ, "SDL_VIDEODRIVER": "dummy", "SDL_AUDIODRIVER": "dummy"}
    args = ["bench", "CartPole-v1", "--batch", "64", "--rounds", "100000"]
    process = subprocess.Popen(
        [plangym_script(), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    deadline = time.monotonic() + 60
    workers: list[int] = []
    while len(workers) < 2 and time.monotonic() < deadline:  # the ParallelEnv is up
        time.sleep(0.1)
        workers = children_of(process.pid)
    time.sleep(1)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 143, stderr
    assert stderr.decode().splitlines()[-1] == "plangym: interrupted (SIGTERM)"
    assert wait_gone(workers) == []


# A Ctrl-C the moment the plan command's module starts to load (with the planners and the
# workers it imports): the interpreter's default SIGINT handling, as in a terminal.
CTRL_C_WHILE_IMPORTING = """
import os, signal, sys

signal.signal(signal.SIGINT, signal.default_int_handler)


class CtrlCOnImport:
    def find_spec(self, name, path=None, target=None):
        if name == "plangym.cli.plan":
            os.kill(os.getpid(), signal.SIGINT)
        return None


sys.meta_path.insert(0, CtrlCOnImport())
from plangym.cli import main

sys.exit(main(["plan", "CartPole-v1", "--steps", "2", "--out", sys.argv[1]]))
"""


def test_a_ctrl_c_while_the_command_imports_is_one_line(tmp_path):
    from tests.helpers.subprocess_runs import run_python

    env = {**os.environ, "SDL_VIDEODRIVER": "dummy", "SDL_AUDIODRIVER": "dummy"}
    out = tmp_path / "out"
    result = run_python(CTRL_C_WHILE_IMPORTING, str(out), timeout=100, env=env)
    assert result.returncode == 130, result.stderr
    assert result.stderr.splitlines() == ["plangym: interrupted (SIGINT)"], result.stderr
    assert not out.exists()
