"""The family benchmark scripts run and print their tables (tiny settings).

Speed goals are read off the scripts' own tables (see benchmarks/RESULTS.md), never
asserted here: this only keeps the scripts working as the code they measure changes.
"""

import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
RUNS = {
    "against_commit.py": (["HEAD", "--rounds", "1", "--quick"], "| plan |"),
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
