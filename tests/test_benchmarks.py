"""The family benchmark scripts run and print their tables (tiny settings).

Speed goals are read off the scripts' own tables (see benchmarks/RESULTS.md), never
asserted here: this only keeps the scripts working as the code they measure changes.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
RUNS = {
    "against_commit.py": (["HEAD", "--rounds", "1", "--quick"], "| plan |"),
    "atari_state_codec.py": (["--rounds", "1", "--steps", "50"], "fixed/raw rate"),
    "parallel.py": (["--rounds", "1", "--only", "atari"], "ParallelEnv / raw limit (per-round)"),
    "classic_kernels.py": (["--rounds", "1", "--quick"], "| array form / raw loop |"),
    "design_figures.py": (["--rounds", "1"], "PCG64 state read / CartPole step"),
    "kernel_workers.py": (
        ["--rounds", "1", "--min-time", "0.01", "--sections", "parallel", "vector"],
        "| kernels / no kernels |",
    ),
    "mujoco_envs.py": (["Hopper-v5", "--rounds", "1", "--batch", "8"], "| Hopper-v5 |"),
    "dm_control.py": (["cartpole-balance", "--rounds", "1", "--batch", "8"], "cartpole-balance"),
    "lunar_lander.py": (["--rounds", "1", "--batch", "8"], "Fast batch"),
    "box2d.py": (["--rounds", "1", "--games", "LunarLander-v3"], "LunarLander-v3"),
    "montezuma.py": (["--rounds", "1", "--batch", "8", "--frameskip", "1"], "set_state"),
    "retro.py": (["--rounds", "1", "--batch", "4"], "ratio"),
    "nes.py": (["--rounds", "1", "--batch", "4"], "ratio"),
    "vector.py": (
        ["--rounds", "1", "--steps-cartpole", "50", "--steps-mspacman", "20"],
        "| CartPole-v1 x8 |",
    ),
    "w1_stages.py": (["--rounds", "1"], "| raw limit / ours (per-round median) |"),
}


@pytest.mark.parametrize("script", sorted(RUNS))
def test_benchmark_script_runs(script):
    arguments, expected = RUNS[script]
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), *arguments],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert expected in done.stdout
    assert "DIFFER" not in done.stdout  # the scripts check their contenders agree


def test_scaling_writes_json_and_plots(tmp_path):
    """scaling.py (CartPole only, tiny) writes its JSON; plot_scaling.py draws it."""
    import json

    data = tmp_path / "scaling.json"
    measure = [sys.executable, str(BENCHMARKS / "scaling.py"), "--quick", "--rounds", "1"]
    measure += ["--envs", "cartpole", "--no-ray", "--out", str(data)]
    done = subprocess.run(measure, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(data.read_text())
    assert result["quick"] is True and result["rounds"] == 1 and result["date"]
    machine = set(result["machine"])
    assert {"platform", "cpu", "cores", "python", "plangym", "git_commit"} <= machine
    block = result["batch"]["CartPole-v1"]
    assert block["limit"] == "raw limit"
    expected = {"one process", "kernels (arrays=True)", "ParallelEnv (2 workers)", "raw limit"}
    assert set(block["series"]) == expected
    entry_point = result["vector"]["entry_point"]
    series = [
        *block["series"].values(),
        *result["vector"]["async"]["CartPole-v1"]["series"].values(),
        *entry_point["series"].values(),
    ]
    for one in series:
        assert all(rate > 0 for rate in one["transitions_per_s"])
        assert one["frames_per_s"] == one["transitions_per_s"]  # CartPole: a frame a step
    assert "workers" in result["skipped"] and "RayEnv" in result["skipped"]

    images, page = tmp_path / "img", tmp_path / "docs" / "performance.md"
    draw = [sys.executable, str(BENCHMARKS / "plot_scaling.py"), "--data", str(data)]
    draw += ["--img-dir", str(images), "--page", str(page)]
    done = subprocess.run(draw, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    for name in ("batch.png", "vector.png"):
        assert (images / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not (images / "workers.png").exists()  # MsPacman only
    text = page.read_text()
    assert "![batch](../img/batch.png)" in text and result["date"][:10] in text
    assert "smoke run" in text


ROUNDS_SCRIPTS = sorted(
    path.name for path in BENCHMARKS.glob("*.py") if '"--rounds"' in path.read_text()
)


@pytest.mark.parametrize("script", ROUNDS_SCRIPTS)
def test_a_count_below_one_is_the_options_error(script):
    """--rounds 0 ended in a traceback (no median of no data) or wrote an empty result."""
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), *(["HEAD"] * (script == "against_commit.py")),
         "--rounds", "0"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr[-2000:]
    last = done.stderr.strip().splitlines()[-1]
    assert "error:" in last and "--rounds" in last and "Traceback" not in done.stderr, last


@pytest.mark.parametrize("script", ["check_extras.py", "check_minimums.py"])
def test_the_dev_scripts_help_does_no_work(script, tmp_path):
    """--help built a virtualenv and ran the check (check_extras took it as an extra)."""
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS.parent / "scripts" / script), "--help"],
        capture_output=True, text=True, timeout=60, check=False,
        env={**os.environ, "TMPDIR": str(tmp_path)},
    )  # fmt: skip
    assert done.returncode == 0 and done.stdout.startswith("usage: "), done.stderr[-2000:]
    assert list(tmp_path.iterdir()) == []  # no virtualenv made
