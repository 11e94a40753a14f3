"""A batch whose shared buffers do not fit in /dev/shm: an OSError before anything is sent.

/dev/shm hands out pages as they are first written; with too little room the writing
process died of SIGBUS (the caller: "Bus error", nothing to catch; a worker: a crash that
re-runs could not cure). Docker's default /dev/shm is 64 MB. The scenarios run in a mount
namespace of their own whose /dev/shm is a small tmpfs (root only).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap

import pytest

SHM_MB = 24

SCENARIO = textwrap.dedent(
    """
    import errno, sys
    import plangym
    from plangym.exactness import difference

    face = sys.argv[1]
    if face == "parallel":
        env = plangym.make("ALE/Pong-v5", obs_type="ram", n_workers=2)
        state, *_ = env.reset(seed=0)
    else:
        env = plangym.make_vec("ALE/Pong-v5", 2, "async", obs_type="ram")
        env.reset(seed=0)
        state = env.get_states()[0]
    expected = env.step_batch([0, 1, 2], [state] * 3)
    try:
        env.step_batch([0] * 20000, [state] * 20000)  # ~150 MB of states in and out
    except OSError as error:
        assert error.errno == errno.ENOSPC, error
        print("refused:", error)
    else:
        print("the big batch ran")
    small = env.step_batch([0, 1, 2], [state] * 3)
    print("small batch exact:", difference(small, expected))
    env.close()
    """
)


def run_in_small_shm(face: str) -> subprocess.CompletedProcess[str]:
    mount = f"mount -t tmpfs -o size={SHM_MB}m tmpfs /dev/shm"
    command = f'{mount} && exec "$0" -c "$1" {face}'
    return subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "sh", "-c", command,
         sys.executable, SCENARIO],
        capture_output=True, text=True, timeout=240, check=False,
    )  # fmt: skip


@pytest.fixture(scope="module")
def can_mount_a_small_shm():
    if shutil.which("unshare") is None:
        pytest.skip("no unshare here")
    probe = subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "sh", "-c",
         f"mount -t tmpfs -o size={SHM_MB}m tmpfs /dev/shm"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if probe.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs in a mount namespace here: {probe.stderr.strip()}")


@pytest.mark.parametrize("face", ["parallel", "make_vec"])
def test_a_batch_too_big_for_dev_shm_is_refused_and_the_env_goes_on(can_mount_a_small_shm, face):
    run = run_in_small_shm(face)
    assert run.returncode == 0, f"status {run.returncode}\n{run.stdout}\n{run.stderr[-3000:]}"
    assert "in /dev/shm, which has" in run.stdout, run.stdout
    assert "free of 24.0 MB" in run.stdout and "--shm-size" in run.stdout, run.stdout
    assert "small batch exact: None" in run.stdout, run.stdout
