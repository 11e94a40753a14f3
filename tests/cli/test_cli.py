"""The ``plangym`` console script, run as a user runs it: in a subprocess."""

from __future__ import annotations

import json
import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from plangym.cli.outputs import report

pytestmark = pytest.mark.timeout(120)


def plangym_script() -> str:
    script = Path(sys.executable).parent / "plangym"
    if script.exists():
        return str(script)
    found = shutil.which("plangym")
    if found is None:
        pytest.skip("the plangym console script is not installed (pip install -e .)")
    return found


def run(*args: str, timeout: float = 100) -> subprocess.CompletedProcess:
    env = {**os.environ, "SDL_VIDEODRIVER": "dummy", "SDL_AUDIODRIVER": "dummy"}
    return subprocess.run(
        [plangym_script(), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        check=False,
    )


def plan(options: str, out: Path) -> subprocess.CompletedProcess:
    """``plangym plan`` with ``options`` (split at the spaces), writing to ``out``."""
    return run("plan", *options.split(), "--out", str(out))


def summary_of(out: Path) -> dict:
    """The ``summary.json`` that ``plangym plan`` wrote to ``out``."""
    return json.loads((out / "summary.json").read_text())


def plan_summary(options: str, out: Path) -> tuple[subprocess.CompletedProcess, dict]:
    """:func:`plan`, which must succeed: its result and summary."""
    result = plan(options, out)
    assert result.returncode == 0, result.stderr
    return result, summary_of(out)


def nonblank_lines(stderr: str) -> list[str]:
    """stderr's lines that say something (the ALE prints no banner: plangym quiets it)."""
    return [line for line in stderr.splitlines() if line.strip()]


def test_list_shows_families_names_and_extras():
    result = run("list")
    assert result.returncode == 0, result.stderr
    for text in (
        "classic_control (6 environments)",
        "CartPole-v1",
        "ALE/MsPacman-v5",
        "optional extras",
        "classic-control",
    ):
        assert text in result.stdout


def test_lists_extras_packages_as_pip_installs_them_here():
    from plangym.cli.list_envs import extras

    found = extras()
    # plangym[viz] inside an extra is viz's packages, not plangym itself.
    assert not any("plangym" in packages for packages in found.values()), found
    assert {"pillow", "tqdm"} <= set(found["notebooks"])
    # setuptools is in the nes extra for Python >= 3.12 only.
    assert ("setuptools" in found["nes"]) == (sys.version_info >= (3, 12)), found["nes"]


def test_list_one_family():
    result = run("list", "--family", "classic_control")
    assert result.returncode == 0
    assert "CartPole-v1" in result.stdout and "ALE/" not in result.stdout


def test_list_says_which_retro_games_have_their_rom():
    """stable-retro lists 1,006 games and ships one ROM: the list says which ones run."""
    pytest.importorskip("stable_retro")
    result = run("list", "--family", "retro")
    assert result.returncode == 0, result.stderr
    assert "  ROMs imported here: Airstriker-Genesis-v0; the others: python -m" in result.stdout


def test_lua_scripted_retro_games_are_not_sent_to_plangym_list():
    """plangym list names them: the line must not say it does not."""
    pytest.importorskip("stable_retro")
    result = run("check", "1942-Nes-v0")
    assert result.returncode == 2 and "runs a Lua script" in result.stderr
    assert "plangym list" not in result.stderr


def test_python_dash_m_runs_the_same_command():
    result = subprocess.run(
        [sys.executable, "-m", "plangym", "--version"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0
    assert result.stdout.startswith("plangym ")


def test_check_classic_control_has_no_sticky_column():
    result = run("check", "CartPole-v1", "--steps", "10")
    assert result.returncode == 0, result.stdout + result.stderr
    rows = [line for line in result.stdout.splitlines() if line.startswith("replay")]
    assert rows and all(row.split()[-2:] == ["PASS", "n/a"] for row in rows)
    assert "all checks passed" in result.stdout


def test_check_atari_with_and_without_sticky_actions():
    result = run("check", "ALE/Pong-v5", "--steps", "10")
    assert result.returncode == 0, result.stdout + result.stderr
    table = result.stdout.splitlines()[1:6]
    assert "sticky p=0.25" in table[0]
    assert all(row.split()[-2:] == ["PASS", "PASS"] for row in table[1:])


def test_bench_prints_rates_for_both_setups():
    result = run("bench", "CartPole-v1", "--workers", "2", "--batch", "16", "--rounds", "2")
    assert result.returncode == 0, result.stderr
    assert "steps/s" in result.stdout and "frames/s" in result.stdout
    assert "one process" in result.stdout and "ParallelEnv, 2 workers" in result.stdout


def test_bench_counts_agent_steps_not_batch_elements():
    """With dt 4, each element is 4 agent steps: at frameskip 1, steps/s equals frames/s."""
    result = run("bench", "CartPole-v1", "--workers", "1", "--batch", "8", "--rounds", "1",
                 "--dt", "4")  # fmt: skip
    assert result.returncode == 0, result.stderr
    row = next(line for line in result.stdout.splitlines() if line.startswith("one process"))
    steps, frames = row.split()[2:4]
    assert steps == frames and "ParallelEnv, 1 worker " in result.stdout


def test_bench_times_a_one_emulator_per_process_env_before_its_workers():
    pytest.importorskip("stable_retro")
    result = run(
        "bench", "Airstriker-Genesis-v0", "--workers", "2", "--batch", "4", "--rounds", "1"
    )
    assert result.returncode == 0, result.stderr
    assert "one process" in result.stdout and "ParallelEnv, 2 workers" in result.stdout


REQUIRED_KEYS = {
    "env",
    "planner",
    "frameskip",
    "workers",
    "seed",
    "score",
    "agent_steps",
    "frames_simulated",
    "wall_s",
    "frames_per_s",
}


def test_plan_writes_gif_and_summary_and_prints_the_score_last(tmp_path):
    out = tmp_path / "run"
    result, summary = plan_summary(
        "CartPole-v1 --workers 1 --steps 30 --walkers 8 --horizon 4 --dt 4 --seed 2 "
        "--baseline-games 4",
        out,
    )
    assert summary.keys() >= REQUIRED_KEYS
    assert summary["env"] == "CartPole-v1" and summary["planner"] == "swarm"
    assert summary["seed"] == 2 and summary["workers"] == 1 and summary["frameskip"] == 1
    assert summary["agent_steps"] == 30 and summary["replay_exact"] is True
    assert summary["random_games"] == 4 and summary["random_score_mean"] > 0
    assert (out / "trajectory.gif").read_bytes()[:6] == b"GIF89a"
    assert len(json.loads((out / "actions.json").read_text())) == 30
    label, score = result.stdout.splitlines()[-1].split()
    assert label == "score" and float(score) == summary["score"]
    assert "Traceback" not in result.stderr
    written = f"{out / 'summary.json'}, {out / 'actions.json'}"
    assert f"wrote             {out / 'trajectory.gif'}, {written}" in result.stdout


def test_the_report_says_why_no_gif_was_written(tmp_path, capsys):
    # As after a Ctrl-C before the first step: the files written, then why there is no GIF.
    out = tmp_path / "run"
    _, summary = plan_summary("CartPole-v1 --workers 1 --steps 2 --baseline-games 0", out)
    report({**summary, "gif": None}, "no steps were played", out)
    written = f"{out / 'summary.json'}, {out / 'actions.json'}"
    assert (
        f"wrote             {written}; no GIF (no steps were played)\n" in capsys.readouterr().out
    )


def test_plan_atari_on_two_workers_with_uct(tmp_path):
    _, summary = plan_summary(
        "ALE/MsPacman-v5 --planner uct --workers 2 --steps 4 --waves 1 --wave-size 4 "
        "--rollout-depth 1 --baseline-games 2",
        tmp_path,
    )
    assert summary["planner"] == "uct" and summary["workers"] == 2
    assert summary["frameskip"] == 5 and summary["agent_steps"] == 4
    assert summary["frames_simulated"] > 4 * 5 and summary["replay_exact"] is True
    assert summary["gif_frames"] == 4


def test_same_seed_same_score_through_the_command(tmp_path):
    scores = []
    for name in ("a", "b"):
        plan(
            "CartPole-v1 --workers 1 --steps 15 --walkers 4 --horizon 3 --seed 9 "
            "--baseline-games 0",
            tmp_path / name,
        )
        scores.append(summary_of(tmp_path / name))
    assert scores[0]["score"] == scores[1]["score"]
    assert (tmp_path / "a" / "actions.json").read_text() == (
        tmp_path / "b" / "actions.json"
    ).read_text()


def file_in_the_way(tmp_path: Path) -> str:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    return str(blocker / "out")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["plan", "ALE/MsPacmann-v5"], "unknown environment 'ALE/MsPacmann-v5'"),
        (["check", "NoSuchEnv-v0"], "unknown environment 'NoSuchEnv-v0'"),
        (["bench", "CartPol-v1"], "closest known names: CartPole-v1"),
        (["plan", "CartPole-v1", "--planner", "astar"], "invalid choice: 'astar'"),
        (["plan", "CartPole-v1", "--steps", "0"], "--steps: expected an integer >= 1"),
        (["plan", "CartPole-v1", "--steps", "-1"], "--steps: expected an integer >= 1"),
        (["plan", "CartPole-v1", "--steps", "abc"], "received 'abc'"),
        (["plan", "CartPole-v1", "--workers", "0"], "--workers: expected an integer >= 1"),
        (["bench", "CartPole-v1", "--batch", "2.5"], "--batch: expected an integer >= 1"),
        (["plan", "Pendulum-v1", "--planner", "uct", "--out", "OUT"], "Discrete"),
        (["plan", "CartPole-v1", "--out", None], "--out: cannot write to"),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
        ([], "usage:"),
        (["plan", "CartPole-v1", "--seed", "-5"], "--seed: expected an integer >= 0"),
        (["check", "CartPole-v1", "--seed", "-1"], "--seed: expected an integer >= 0"),
        (["bench", "CartPole-v1", "--seed", "-1"], "--seed: expected an integer >= 0"),
        (["plan", "CartPole-v1", "--planner", "uct", "--walkers", "4"], "--walkers: not options"),
        (["plan", "CartPole-v1", "--planner", "fmc", "--dt", "3"], "--dt: not options of the fmc"),
        (["plan", "CartPole-v1", "--out", ""], "--out: expected a path, received ''"),
        (["plan", "CartPole-v1", "--resume", ""], "--resume: expected a path, received ''"),
    ],
    ids=[
        "unknown-env",
        "check-unknown",
        "bench-typo",
        "planner",
        "steps-0",
        "steps-neg",
        "steps-abc",
        "workers-0",
        "batch-float",
        "uct-continuous",
        "unwritable-out",
        "command",
        "no-command",
        "plan-seed-negative",
        "check-seed-negative",
        "bench-seed-negative",
        "uct-with-swarm-option",
        "fmc-with-swarm-option",
        "out-empty",
        "resume-empty",
    ],
)
def test_user_errors_are_one_line_and_exit_nonzero(tmp_path, args, message):
    replace = {None: file_in_the_way(tmp_path), "OUT": str(tmp_path / "out")}
    args = [replace.get(arg, arg) for arg in args]
    result = run(*args)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    lines = nonblank_lines(result.stderr)
    assert message in result.stderr
    if args:
        assert len(lines) == 1 and lines[0].startswith("plangym: error: "), lines


def test_a_refused_run_keeps_the_earlier_runs_checkpoint(tmp_path):
    """A refused command changes nothing: the earlier game can still be resumed.

    A new game stopped before its first checkpoint drops it instead (test_refused_plans).
    """
    out = str(tmp_path / "out")
    first = run("plan", "CartPole-v1", "--steps", "3", "--workers", "1", "--out", out)
    assert first.returncode == 0 and (tmp_path / "out" / "checkpoint.pkl").exists()
    # The second run is refused (a planner the env cannot take) in the same directory.
    second = run("plan", "Pendulum-v1", "--planner", "uct", "--out", out)
    assert second.returncode == 2
    assert (tmp_path / "out" / "checkpoint.pkl").exists()
    resumed = run("plan", "CartPole-v1", "--resume", out)
    assert resumed.returncode == 0 and "resumed at step 3" in resumed.stderr, resumed.stderr
    with_seed = run("plan", "CartPole-v1", "--resume", out, "--seed", "3")
    assert with_seed.returncode == 2 and "leave out --seed" in with_seed.stderr


def test_a_checkpoint_that_no_longer_replays_is_one_line_on_resume(tmp_path):
    out = tmp_path / "out"
    assert (
        run("plan", "CartPole-v1", "--steps", "4", "--workers", "1", "--out", str(out)).returncode
        == 0
    )
    checkpoint = out / "checkpoint.pkl"
    data = pickle.loads(checkpoint.read_bytes())
    data["rewards"][0] += 1.0  # edited by hand
    checkpoint.write_bytes(pickle.dumps(data))
    result = run("plan", "CartPole-v1", "--resume", str(out))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "--resume: checkpoint: replaying step 0 gave reward" in result.stderr


def test_unwritable_out_fails_before_planning(tmp_path):
    result = run("plan", "ALE/MsPacman-v5", "--out", file_in_the_way(tmp_path))
    assert result.returncode == 2
    # No emulator was started: the ALE's banner never appears.
    assert "A.L.E" not in result.stderr


def test_list_names_each_family_with_its_extra(capsys):
    from plangym.cli import main

    for package in ("mujoco", "dm_control", "Box2D", "nes_py", "stable_retro"):
        pytest.importorskip(package)  # the lines below say "installed"

    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "mujoco (21 environments; extra 'mujoco', installed)" in out
    assert "dm_control (51 environments; extra 'dm-control', installed)" in out
    assert "box2d (6 environments; extra 'box2d', installed; FastLunarLander-v0 needs none)" in out
    assert "montezuma (1 environment)" in out
    assert "nes (140 environments; extra 'nes', installed)" in out
    assert "extra 'retro', installed" in out


def run_with_terminal_stderr(*args: str) -> tuple[subprocess.CompletedProcess, str]:
    """Run the command with stderr on a pseudo-terminal (where progress bars are drawn)."""
    import fcntl
    import pty
    import struct
    import termios
    import threading

    master, slave = pty.openpty()
    # 24 rows of 120 columns: a new pseudo-terminal has 0 columns, too few for any bar.
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 120, 0, 0))
    chunks: list[bytes] = []

    def read() -> None:
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # the terminal closed
                return
            if not chunk:
                return
            chunks.append(chunk)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    env = {**os.environ, "SDL_VIDEODRIVER": "dummy", "SDL_AUDIODRIVER": "dummy"}
    try:
        result = subprocess.run(
            [plangym_script(), *args],
            stdout=subprocess.PIPE,
            stderr=slave,
            text=True,
            timeout=100,
            env=env,
            check=False,
        )
    finally:
        os.close(slave)
    reader.join(timeout=10)
    os.close(master)
    return result, b"".join(chunks).decode(errors="replace")


def test_progress_bars_are_drawn_on_a_terminal_only(tmp_path):
    pytest.importorskip("tqdm")
    plan = ["plan", "CartPole-v1", "--workers", "1", "--steps", "20", "--walkers", "8"]
    plan += ["--horizon", "4", "--baseline-games", "0", "--out", str(tmp_path)]
    result, terminal = run_with_terminal_stderr(*plan)
    assert result.returncode == 0, terminal
    assert "CartPole-v1: 100%" in terminal and "20/20" in terminal, terminal
    assert "score 20" in terminal and "frames/s" in terminal
    assert result.stdout.splitlines()[-1].split() == ["score", "20"]
    # Not on a terminal (captured): the same stdout and no bar.
    quiet = run(*plan)
    assert quiet.returncode == 0 and "100%" not in quiet.stderr
    assert quiet.stdout.splitlines()[-1] == result.stdout.splitlines()[-1]

    result, terminal = run_with_terminal_stderr("check", "CartPole-v1", "--steps", "5")
    assert result.returncode == 0 and "all checks passed" in result.stdout
    assert "check CartPole-v1: 100%" in terminal and "4/4" in terminal, terminal

    bench = ["bench", "CartPole-v1", "--batch", "8", "--rounds", "2"]
    result, terminal = run_with_terminal_stderr(*bench)
    assert result.returncode == 0 and "ParallelEnv, 2 workers" in result.stdout
    assert "bench CartPole-v1: 100%" in terminal and "6/6" in terminal, terminal


def test_check_and_bench_run_without_tqdm(monkeypatch, capsys):
    from plangym.cli import main

    monkeypatch.setitem(sys.modules, "tqdm", None)
    assert main(["check", "CartPole-v1", "--steps", "5"]) == 0
    assert "all checks passed" in capsys.readouterr().out
    assert main(["bench", "CartPole-v1", "--workers", "2", "--batch", "8", "--rounds", "1"]) == 0
    assert "ParallelEnv, 2 workers" in capsys.readouterr().out
