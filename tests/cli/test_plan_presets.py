"""``plangym plan --preset fmc``, budgets, checkpoints and ``--resume``; the benchmark script."""

from __future__ import annotations

import json
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .test_cli import run

pytestmark = pytest.mark.timeout(240)
pytest.importorskip("PIL.Image")
pytest.importorskip("tqdm")

BOXING = ["plan", "ALE/Boxing-v5", "--preset", "fmc", "--baseline-games", "0"]
TINY = {
    "fmc": ["--walkers", "4", "--horizon", "3", "--budget", "10"],
    "uct": ["--planner", "uct", "--budget", "12", "--wave-size", "4", "--rollout-depth", "2"],
}


def summary_of(out: Path) -> dict:
    return json.loads((out / "summary.json").read_text())


def test_preset_picks_the_published_parameters_and_counts_samples(tmp_path):
    # Only the walkers are overridden (a tiny swarm); the rest comes from the preset.
    result = run(
        *BOXING, "--walkers", "8", "--steps", "5", "--workers", "1", "--out", str(tmp_path)
    )
    assert result.returncode == 0, result.stderr
    summary = summary_of(tmp_path)
    assert summary["planner"] == "fmc" and summary["preset"] == "fmc"
    assert summary["frameskip"] == 9  # Boxing's published repeat of 3 -v0 steps, 3 frames each
    # The budget is the preset's, 2,000; 30 rounds of 8 walkers cap it at 240 samples.
    assert summary["planner_params"] == {"n_walkers": 8, "horizon": 30, "budget": 2000}
    assert summary["samples_simulated"] == 5 * 240
    assert summary["samples_per_action_mean"] == 240
    assert summary["frames_simulated"] == (5 * 240 + 5) * 9
    for key in ("score", "episode_ended", "agent_steps", "wall_s", "frames_per_s", "checkpoint"):
        assert key in summary
    assert Path(summary["checkpoint"]).name == "checkpoint.pkl"
    assert "samples/action" in result.stdout


def test_preset_defaults_to_a_whole_game():
    result = run("plan", "--help")
    assert "30,000" in result.stdout and "--preset" in result.stdout
    assert "--resume" in result.stdout and "--checkpoint-every" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["plan", "ALE/Pong-v5", "--preset", "fmc"], "no published parameters for 'ALE/Pong-v5'"),
        (["plan", "CartPole-v1", "--budget", "10"], "--budget: the swarm planner has none"),
        (["plan", "ALE/Boxing-v5", "--resume", "NOWHERE"], "--resume: no checkpoint.pkl"),
    ],
)
def test_preset_and_resume_errors_are_one_line(tmp_path, args, message):
    result = run(*[a.replace("NOWHERE", str(tmp_path / "none")) for a in args])
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.startswith("plangym:")]
    assert len(lines) == 1 and message in lines[0], result.stderr


@pytest.mark.parametrize("planner", ["fmc", "uct"])
def test_resume_plays_the_same_actions_as_an_uninterrupted_game(tmp_path, planner):
    whole, part = tmp_path / "whole", tmp_path / "part"
    options = [*BOXING, *TINY[planner], "--workers", "1"]
    assert run(*options, "--steps", "40", "--out", str(whole)).returncode == 0
    # Stops after 25 steps (its checkpoints at 10, 20 and 25), then goes on to 40 steps on
    # two workers: the workers change nothing.
    first = run(*options, "--steps", "25", "--checkpoint-every", "10", "--out", str(part))
    assert first.returncode == 0, first.stderr
    resumed = run("plan", "ALE/Boxing-v5", "--resume", str(part), "--steps", "40")
    assert resumed.returncode == 0, resumed.stderr
    assert "resumed at step 25" in resumed.stderr
    actions = json.loads((whole / "actions.json").read_text())
    assert json.loads((part / "actions.json").read_text()) == actions
    a, b = summary_of(whole), summary_of(part)
    for key in ("score", "frames_simulated", "samples_simulated", "agent_steps", "planner_params"):
        assert a[key] == b[key], key
    assert b["resumed"] and b["replay_exact"] is True


def test_resume_refuses_new_planner_options(tmp_path):
    assert run(*BOXING, *TINY["fmc"], "--steps", "3", "--out", str(tmp_path)).returncode == 0
    result = run("plan", "ALE/Boxing-v5", "--resume", str(tmp_path), "--walkers", "9")
    assert result.returncode == 2 and "leave out --walkers" in result.stderr
    other = run("plan", "ALE/Alien-v5", "--resume", str(tmp_path))
    assert other.returncode == 2 and "plays 'ALE/Boxing-v5'" in other.stderr


def test_benchmark_script_plays_writes_the_table_skips_done_runs_and_resumes_kept_ones(
    tmp_path,
):
    script = Path(__file__).resolve().parents[2] / "benchmarks" / "published_games.py"
    command = [sys.executable, str(script), "--games", "Boxing", "--max-steps", "2"]
    command += ["--fraction", "0.02", "--workers", "1", "--baseline-games", "0"]
    command += ["--runs", str(tmp_path / "runs"), "--table", str(tmp_path / "docs" / "t.md")]
    command += ["--results", str(tmp_path / "kept")]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    table = (tmp_path / "docs" / "t.md").read_text()
    assert "| Boxing | swarm | 0 | 9 | 3 | 40 |" in table and "| Boxing | uct | 0 | 9 |" in table
    kept = json.loads((tmp_path / "kept" / "boxing-swarm-seed0-x0.02.json").read_text())
    assert kept["frameskip"] == 9 and not kept["interrupted"]  # the table outlives the runs
    assert (tmp_path / "docs" / "img" / "published_games" / "boxing-swarm-seed0-x0.02.gif").exists()
    again = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert again.stdout.count("skip ") == 2
    # On a machine without the runs, the kept checkpoints carry the games on to a new cap.
    shutil.rmtree(tmp_path / "runs")
    assert (tmp_path / "kept" / "checkpoints" / "boxing-swarm-seed0-x0.02.pkl").exists()
    longer = [*command[:5], "3", *command[6:]]
    on = subprocess.run(longer, capture_output=True, text=True, timeout=120, check=False)
    assert on.returncode == 0 and on.stdout.count("resume ") == 2, on.stderr[-2000:]
    kept = json.loads((tmp_path / "kept" / "boxing-swarm-seed0-x0.02.json").read_text())
    assert kept["agent_steps"] == 3 and kept["max_steps"] == 3


def test_a_preset_game_is_a_v5_episode_cut_at_its_frame_limit():
    from plangym.cli.plan_settings import env_keywords

    assert env_keywords("ALE/Qbert-v5", 15, whole_game=True)["remove_time_limit"] is False
    assert "remove_time_limit" not in env_keywords("ALE/Qbert-v5", 15)  # plangym's default


# A tiny swarm on CartPole: 8 steps in well under a second, the GIF included.
CARTPOLE = ["plan", "CartPole-v1", "--workers", "1", "--walkers", "4", "--horizon", "2"]
RUN_OPTIONS = ["--baseline-games", "2", "--checkpoint-every", "3", "--gif-every", "2"]


@pytest.fixture
def checkpoint_steps(monkeypatch) -> list[int]:
    """The agent steps at which ``plangym plan`` saves its checkpoints (run in this process)."""
    from plangym.cli.checkpoint import Checkpointer

    steps: list[int] = []
    save = Checkpointer.save

    def recorded(saver: Checkpointer) -> None:
        save(saver)
        steps.append(saver.saved_step)

    monkeypatch.setattr(Checkpointer, "save", recorded)
    return steps


def test_resume_keeps_the_runs_baseline_checkpoint_gif_and_workers_options(
    tmp_path, checkpoint_steps
):
    """Left out on --resume, they keep the checkpointed run's values, not the defaults."""
    from plangym.cli import main

    whole, part = tmp_path / "whole", tmp_path / "part"
    assert main([*CARTPOLE, *RUN_OPTIONS, "--steps", "8", "--out", str(whole)]) == 0
    assert main([*CARTPOLE, *RUN_OPTIONS, "--steps", "4", "--out", str(part)]) == 0
    checkpoint_steps.clear()
    assert main(["plan", "CartPole-v1", "--resume", str(part), "--steps", "8"]) == 0
    assert checkpoint_steps == [6, 8]  # every 3 steps, and at the end (500 by default)
    a, b = summary_of(whole), summary_of(part)
    assert a["random_games"] == 2 and a["gif_frames"] < 9  # every 2nd frame of 9
    for key in ("random_games", "random_score_mean", "gif_frames", "score", "agent_steps"):
        assert a[key] == b[key], key
    assert (whole / "actions.json").read_text() == (part / "actions.json").read_text()
    saved = pickle.loads((part / "checkpoint.pkl").read_bytes())["settings"]
    assert (saved["baseline_games"], saved["checkpoint_every"], saved["gif_every"]) == (2, 3, 2)
    assert saved["workers"] == summary_of(part)["workers"] == 1  # not the default, 2
    # Given again, they win, and the new checkpoint keeps the new values.
    again = ["plan", "CartPole-v1", "--resume", str(part), "--steps", "10"]
    assert main([*again, "--baseline-games", "0", "--checkpoint-every", "0", "--workers", "2"]) == 0
    assert checkpoint_steps[2:] == [10] and summary_of(part)["random_games"] == 0
    assert summary_of(part)["workers"] == 2
    saved = pickle.loads((part / "checkpoint.pkl").read_bytes())["settings"]
    assert (saved["baseline_games"], saved["checkpoint_every"], saved["gif_every"]) == (0, 0, 2)
    assert saved["workers"] == 2


def test_a_checkpoint_without_the_run_options_resumes_with_their_defaults(
    tmp_path, checkpoint_steps
):
    """Checkpoints written before plangym saved them still resume."""
    from plangym.cli import main

    assert main([*CARTPOLE, *RUN_OPTIONS, "--steps", "4", "--out", str(tmp_path)]) == 0
    path = tmp_path / "checkpoint.pkl"
    data = pickle.loads(path.read_bytes())
    for key in ("baseline_games", "checkpoint_every", "gif_every", "workers"):
        del data["settings"][key]
    path.write_bytes(pickle.dumps(data))
    checkpoint_steps.clear()
    assert main(["plan", "CartPole-v1", "--resume", str(tmp_path), "--steps", "6"]) == 0
    summary = summary_of(tmp_path)
    assert summary["random_games"] == 16 and summary["gif_frames"] == 6  # every step's frame
    assert summary["workers"] == 2
    assert checkpoint_steps == [6]  # only at the end: the next would be at step 500


def test_uct_with_a_budget_shows_and_records_the_options_it_uses(tmp_path, capsys):
    """UCT runs waves until the budget is spent: ``waves`` is not what it plays with."""
    from plangym.cli import main

    game = ["plan", "CartPole-v1", *TINY["uct"], "--steps", "2", "--workers", "1"]
    assert main([*game, "--baseline-games", "0", "--out", str(tmp_path)]) == 0
    params = {"wave_size": 4, "rollout_depth": 2, "rollout_dt": 1, "budget": 12}
    assert summary_of(tmp_path)["planner_params"] == params
    printed = capsys.readouterr()
    planner_lines = [line for line in (printed.out + printed.err).splitlines() if "uct (" in line]
    assert len(planner_lines) == 2, planner_lines  # the start line and the summary's
    assert all("waves" not in line and "budget 12" in line for line in planner_lines)
    # Resumed, the game keeps them; without a budget, the waves are the planner's.
    assert main(["plan", "CartPole-v1", "--resume", str(tmp_path), "--steps", "3"]) == 0
    assert summary_of(tmp_path)["planner_params"] == params
    waves = ["plan", "CartPole-v1", "--planner", "uct", "--waves", "1", "--wave-size", "4"]
    assert main([*waves, "--steps", "1", "--workers", "1", "--out", str(tmp_path / "w")]) == 0
    assert summary_of(tmp_path / "w")["planner_params"]["waves"] == 1
