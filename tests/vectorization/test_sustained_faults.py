"""Sustained faults: worker processes SIGKILLed again and again while batches run.

A background thread kills a random live worker every 0.2-0.4 s while the caller keeps
stepping. Whatever is killed, a ``ParallelEnv`` must return exactly what the single env
returns, an ``AsyncVectorEnv`` must keep answering every step, and after ``close()``
nothing may be left: no child process, no shared-memory segment and, in a fresh
interpreter, not a line on stderr (no traceback of the resource tracker).

Only plangym's public API is used; the processes and kills are real.
"""

from __future__ import annotations

import multiprocessing
import os
import random
import secrets
import signal
import string
import sys
import textwrap
import threading
import time
from multiprocessing import resource_tracker, shared_memory
from pathlib import Path

import numpy as np
import pytest

import plangym
from tests.helpers.subprocess_runs import run_python

SHM = Path("/dev/shm")
KILL_INTERVAL_S = (0.2, 0.4)
MIN_BATCHES = 40  # ParallelEnv batches per scenario (more if they are quicker than this:)
MIN_SECONDS = 2.5  # keep stepping at least this long, so that about ten kills land
MIN_VECTOR_STEPS = 150

pytestmark = [
    pytest.mark.skipif(not SHM.is_dir(), reason="needs /dev/shm (Linux)"),
    pytest.mark.skipif(sys.platform != "linux", reason="needs /proc and SIGKILL"),
]


# Processes and segments -----------------------------------------------------------------------
def parent_of(pid: int) -> int | None:
    """The parent pid of ``pid`` (None if it is gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    return int(stat.rsplit(b")", 1)[1].split()[1])


def live_children() -> set[int]:
    """Pids of this process's children, not counting zombies (dead, not reaped yet)."""
    multiprocessing.active_children()  # reaps the multiprocessing children that ended
    children = set()
    for stat_path in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat_path.read_bytes().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == os.getpid() and fields[0] != b"Z":
            children.add(int(stat_path.parent.name))
    return children


def tracker_pid() -> int | None:
    """Pid of multiprocessing's resource tracker (a child that lives as long as we do)."""
    return getattr(resource_tracker._resource_tracker, "_pid", None)


def segments(prefix: str) -> set[str]:
    """The shared-memory segments in /dev/shm whose names start with ``prefix``."""
    return {path.name for path in SHM.glob(prefix + "*")}


@pytest.fixture
def shm_prefix(monkeypatch) -> str:
    """Name this test's segments ``psm_z<4 letters>...`` (default names go on with hex).

    Other pytest sessions on the machine create ``psm_*`` segments of their own at any
    time; with a prefix of its own, a segment left behind is this test's.
    """
    while True:
        prefix = "psm_z" + "".join(secrets.choice(string.ascii_lowercase[6:]) for _ in range(4))
        if not segments(prefix):
            break
    monkeypatch.setattr(shared_memory, "_SHM_NAME_PREFIX", "/" + prefix)
    return prefix


@pytest.fixture
def leaves_nothing(shm_prefix):
    """Check, after the test closed its env, that no child and no new segment is left."""
    children_before = live_children()
    segments_before = segments("psm_")
    yield
    ignored = children_before | {tracker_pid()}
    deadline = time.monotonic() + 10
    while live_children() - ignored and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not live_children() - ignored, "a child process outlived close()"
    # Every segment this test made has its prefix; new psm_* ones of other names belong
    # to other sessions running meanwhile.
    left = segments("psm_") - segments_before
    assert not segments(shm_prefix), f"segments of this test left in /dev/shm: {left}"


class Killer(threading.Thread):
    """SIGKILLs a random live worker (pids read anew each time) every 0.2-0.4 s."""

    def __init__(self, pids, seed: int = 0):
        super().__init__(name="worker-killer", daemon=True)
        self._pids, self._random = pids, random.Random(seed)
        self._stop_event = threading.Event()
        self.kills = 0
        self.seen: set[int] = set()

    def run(self) -> None:
        while not self._stop_event.wait(self._random.uniform(*KILL_INTERVAL_S)):
            try:
                pids = [pid for pid in self._pids() if pid is not None]
            except Exception:  # the env is in the middle of replacing a worker
                continue
            self.seen.update(pids)
            # Only our own children: a pid just freed could be someone else's by now.
            pids = [pid for pid in pids if parent_of(pid) == os.getpid()]
            if not pids:
                continue
            try:
                os.kill(self._random.choice(pids), signal.SIGKILL)
            except ProcessLookupError:
                continue
            self.kills += 1

    def stop(self) -> None:
        self._stop_event.set()
        if self.ident is not None:  # started
            self.join(10)
            assert not self.is_alive()


# Inputs -----------------------------------------------------------------------------------------
def distinct_states(single, count: int = 5) -> list:
    """``count`` different states of ``single`` (a CartPole-v1 env), one step apart."""
    single.seed(3)
    states = []
    for action in [0, 1, 1, 0, 1, 0, 0, 1][:count]:
        single.step(action)
        states.append(single.get_state())
    return states


def assert_batches_identical(ours: tuple, reference: tuple) -> None:
    """Every column of two ``step_batch`` results is bit for bit the same."""
    assert len(ours) == len(reference) == 6
    new_states, observs, rewards, terminals, truncateds, infos = ours
    ref_states, ref_observs, ref_rewards, ref_terminals, ref_truncateds, ref_infos = reference
    assert len(new_states) == len(ref_states)
    for i, (state, ref) in enumerate(zip(new_states, ref_states, strict=True)):
        assert np.array_equal(state, ref), f"state {i} differs"
        assert state.dtype == ref.dtype and state.tobytes() == ref.tobytes(), f"state {i}"
    for i, (obs, ref) in enumerate(zip(observs, ref_observs, strict=True)):
        assert np.array_equal(obs, ref), f"observation {i} differs"
        assert np.asarray(obs).tobytes() == np.asarray(ref).tobytes(), f"observation {i}"
    assert rewards == ref_rewards
    assert terminals == ref_terminals
    assert truncateds == ref_truncateds
    assert infos == ref_infos


# (a) ParallelEnv ------------------------------------------------------------------------------
@pytest.mark.timeout(90)
def test_parallel_env_results_stay_exact_under_sustained_kills(leaves_nothing):
    single = plangym.make("CartPole-v1")
    states = distinct_states(single)
    rng = np.random.default_rng(7)
    env = plangym.make("CartPole-v1", n_workers=2, inline_small_batches=False)
    killer = Killer(lambda: [worker.pid for worker in env.workers], seed=11)
    try:
        first_pids = {worker.pid for worker in env.workers}
        killer.start()
        started, batches = time.monotonic(), 0
        while batches < MIN_BATCHES or time.monotonic() - started < MIN_SECONDS:
            size = int(rng.integers(64, 257))
            batch_states = [states[i] for i in rng.integers(0, len(states), size)]
            actions = [int(a) for a in rng.integers(0, 2, size)]
            dt = [int(d) for d in rng.integers(1, 4, size)]
            ours = env.step_batch(actions, states=batch_states, dt=dt)
            assert_batches_identical(ours, single.step_batch(actions, states=batch_states, dt=dt))
            batches += 1
        killer.stop()
        assert killer.kills >= 3, f"only {killer.kills} kills landed: the test proved little"
        assert killer.seen - first_pids, "no worker was ever replaced"
    finally:
        killer.stop()
        env.close()
        single.close()


# (b) AsyncVectorEnv ---------------------------------------------------------------------------
@pytest.mark.timeout(90)
def test_async_vector_env_keeps_stepping_under_sustained_kills(leaves_nothing):
    envs = plangym.make_vec("CartPole-v1", num_envs=3, vectorization_mode="async")
    killer = Killer(lambda: list(envs.worker_pids), seed=13)
    restarted = 0
    try:
        observs, infos = envs.reset(seed=0)
        assert observs.shape == (3, 4)
        envs.action_space.seed(0)
        killer.start()
        started, steps = time.monotonic(), 0
        while steps < MIN_VECTOR_STEPS or time.monotonic() - started < MIN_SECONDS:
            observs, rewards, terminations, truncations, infos = envs.step(
                envs.action_space.sample()
            )
            assert observs.shape == (3, 4)
            assert rewards.shape == terminations.shape == truncations.shape == (3,)
            mask = infos.get("_worker_restarted")
            if mask is not None:
                assert mask.shape == (3,)
                restarted += int(np.count_nonzero(mask))
            steps += 1
        killer.stop()
        assert killer.kills >= 3, f"only {killer.kills} kills landed: the test proved little"
        assert restarted >= 1, "no sub-env reported worker_restarted"
    finally:
        killer.stop()
        envs.close()


# (d) Nothing on stderr ------------------------------------------------------------------------
SCENARIO = """
import os, random, signal, sys, threading, time
from multiprocessing import shared_memory
shared_memory._SHM_NAME_PREFIX = {prefix!r}
import numpy as np
import plangym

single = plangym.make("CartPole-v1")
single.seed(3)
states = []
for action in [0, 1, 1, 0, 1]:
    single.step(action)
    states.append(single.get_state())
env = plangym.make("CartPole-v1", n_workers=2, inline_small_batches=False)
stop, kills = threading.Event(), [0]

def killer():
    rng = random.Random(5)
    while not stop.wait(rng.uniform(0.2, 0.4)):
        pids = [worker.pid for worker in env.workers if worker.pid is not None]
        if pids:
            try:
                os.kill(rng.choice(pids), signal.SIGKILL)
                kills[0] += 1
            except ProcessLookupError:
                pass

thread = threading.Thread(target=killer, daemon=True)
thread.start()
rng = np.random.default_rng(9)
started, batches = time.monotonic(), 0
while batches < 40 or time.monotonic() - started < 2.5:
    size = int(rng.integers(64, 257))
    batch = [states[i] for i in rng.integers(0, len(states), size)]
    env.step_batch([int(a) for a in rng.integers(0, 2, size)], states=batch,
                   dt=[int(d) for d in rng.integers(1, 4, size)])
    batches += 1
stop.set()
thread.join()
env.close()
single.close()
print("kills", kills[0], "batches", batches, flush=True)
"""


@pytest.mark.timeout(90)
def test_a_killed_parallel_env_leaves_no_traceback_on_stderr(tmp_path):
    while True:
        prefix = "psm_z" + "".join(secrets.choice(string.ascii_lowercase[6:]) for _ in range(4))
        if not segments(prefix):
            break
    code = textwrap.dedent(SCENARIO).format(prefix="/" + prefix)
    environ = dict(os.environ, SDL_VIDEODRIVER="dummy", SDL_AUDIODRIVER="dummy")
    # run() returns once every holder of the child's stderr is gone: the script, its
    # workers and its resource tracker (which prints its warnings as it exits).
    done = run_python(code, timeout=80, cwd=tmp_path, env=environ)
    assert done.returncode == 0, done.stderr
    kills = int(done.stdout.split()[1])
    assert kills >= 3, f"only {kills} kills landed:\n{done.stdout}"
    assert "Traceback" not in done.stderr, done.stderr
    assert "KeyError" not in done.stderr, done.stderr
    assert "resource_tracker" not in done.stderr, done.stderr
    assert not segments(prefix), "the scenario left shared memory behind"
