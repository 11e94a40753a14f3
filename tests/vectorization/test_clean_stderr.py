"""No fault of a ParallelEnv prints anything, and none leaves shared memory behind.

Every scenario runs in a fresh interpreter, so that the stderr of its worker processes and
of multiprocessing's resource tracker (a process that inherits the stderr of the process
that started it) land in the captured stream. ``subprocess.run`` returns once every
holder of that stream is gone: the script, its workers and its tracker.

The scripts name their shared memory with a prefix of their own (the tracker and other
test sessions use the default one), so a segment left in /dev/shm is theirs.
"""

import os
import random
import string
import textwrap
from pathlib import Path

import pytest

from tests.helpers.processes import wait_dead
from tests.helpers.subprocess_runs import run_python

REPO = Path(__file__).resolve().parents[2]  # the scripts import tests.helpers from here
SHM = Path("/dev/shm")

pytestmark = pytest.mark.skipif(not SHM.is_dir(), reason="needs /dev/shm (Linux)")

PRELUDE = """
import contextlib, gc, os, signal, sys, threading, time
sys.path.insert(0, {repo!r})
from multiprocessing import shared_memory
shared_memory._SHM_NAME_PREFIX = {prefix!r}  # segments of this script only
from pathlib import Path
import plangym
from plangym.api_tests import assert_identical
from plangym.vectorization import NoAsyncCallError, ParallelEnv
from tests.helpers.backend_checks import (
    assert_steps_like_the_single_env, check_a_worker_killed_between_batches_is_noticed,
    faulty_vectorized_env)
from tests.helpers.faulty_env import HANG, PAUSE, RAISE, CartError, faulty_state
from tests.helpers.processes import wait_dead

def pids(env):
    return [worker.pid for worker in env.batch_env.workers]

def report(env):
    print("shm", *env.scheduler.backend.shared_memory_names(), flush=True)

def wait_gone(path, seconds=20):
    deadline = time.monotonic() + seconds
    while path.exists():
        assert time.monotonic() < deadline, f"{{path}} was never claimed"
        time.sleep(0.01)

def faulty(fault):
    env = faulty_vectorized_env(ParallelEnv, MARKER)
    return env, faulty_state(env.plan_env, 0.0), faulty_state(env.plan_env, fault)

def cartpole(**kwargs):
    env = plangym.make("CartPole-v1", n_workers=2, inline_small_batches=False, **kwargs)
    state, *_ = env.reset()
    return env, state

def stepped_cartpole():
    # its workers stepped a batch, and its shared memory is reported
    env, state = cartpole()
    env.step_batch([0, 1, 0], states=[state] * 3)
    report(env)
    return env, state

def must_raise(error, call, *args, **kwargs):
    try:
        call(*args, **kwargs)
    except error:
        return
    raise AssertionError(f"no {{error.__name__}}")

def ctrl_c_after(seconds):
    threading.Timer(seconds, os.kill, args=(os.getpid(), signal.SIGINT)).start()

def pause_mid_batch(env, states):
    # the worker stepping the PAUSE state sleeps 30 s once it claims the marker
    MARKER.write_text("pause once")
    env.step_batch_async([0, 1, 1, 0], states=states)
    wait_gone(MARKER)
"""

EPILOGUE = """
assert "ray" not in sys.modules, "a ParallelEnv imported ray"
print("done", flush=True)
"""


def run_scenario(body: str, tmp_path: Path, epilogue: str = EPILOGUE, timeout: float = 60):
    """Run ``body`` in a fresh interpreter; return it, having checked it leaked no segment."""
    while True:  # "/psm_" and 5 letters that are never hex: 4 random hex digits follow
        prefix = "/psm_z" + "".join(random.choices(string.ascii_lowercase[6:], k=4))
        if not any(SHM.glob(prefix[1:] + "*")):
            break
    script = PRELUDE.format(repo=str(REPO), prefix=prefix)
    script += f"MARKER = Path({str(tmp_path / 'marker')!r})\n"
    script += textwrap.dedent(body) + epilogue
    # A caller killed here leaves multiprocessing's temp folder (its forkserver's socket):
    # in tmp_path, pytest removes it.
    environ = {**os.environ, "TMPDIR": str(tmp_path)}
    done = run_python(script, timeout=timeout, cwd=tmp_path, env=environ)
    names = [line.split()[1:] for line in done.stdout.splitlines() if line.startswith("shm ")]
    assert names, f"the scenario reported no shared memory:\n{done.stdout}\n{done.stderr}"
    assert all(name.startswith(prefix[1:]) for line in names for name in line)
    left = sorted(path.name for path in SHM.glob(prefix[1:] + "*"))
    assert not left, f"shared memory left behind: {left}"
    return done


def assert_clean(done, returncode: int = 0) -> None:
    assert done.stderr == "", done.stderr
    assert done.returncode == returncode, done.stdout
    if returncode == 0:
        assert done.stdout.splitlines()[-1] == "done", done.stdout


# Each scenario ends in EPILOGUE: no ray imported, and "done" printed last.
SCENARIOS = {
    "an_error_raised_in_a_worker": """
        env, good, cursed = faulty(RAISE)
        must_raise(CartError, env.step_batch, [0, 1, 0, 1], states=[good, good, cursed, good])
        report(env)
        assert_steps_like_the_single_env(env, [0, 1, 0, 1], [good] * 4)
        env.close()
        """,
    # A worker stepping a PAUSE state sleeps 30 s once it claims the marker: it is surely
    # mid-batch when killed, and the re-run of its chunk goes through.
    "workers_killed_mid_batch_three_times": """
        env, good, paused = faulty(PAUSE)
        for victim in (1, 0, 1):  # 2 chunks of 2 elements: element 2 goes to worker 1
            states = [good] * 4
            states[2 * victim] = paused
            before = pids(env)
            pause_mid_batch(env, states)
            os.kill(before[victim], signal.SIGKILL)
            result = env.step_batch_wait(timeout=20)
            after = pids(env)
            assert after[victim] != before[victim] and after[1 - victim] == before[1 - victim]
            assert_identical(result, env.plan_env.step_batch([0, 1, 1, 0], states=states))
            report(env)
        env.close()
        """,
    # Kills at whatever point the workers have reached, batches whose buffers grow.
    "workers_killed_during_big_batches": """
        env, state = cartpole()
        for n, victim in ((2000, 0), (6000, 1), (12000, 0)):
            states = [state] * n
            actions = [i % 2 for i in range(n)]
            expected = env.plan_env.step_batch(actions, states=states)
            env.step_batch_async(actions, states=states)
            os.kill(pids(env)[victim], signal.SIGKILL)
            assert_identical(env.step_batch_wait(timeout=30), expected)
            report(env)
        env.close()
        """,
    "a_worker_killed_between_batches": """
        env, state = stepped_cartpole()
        check_a_worker_killed_between_batches_is_noticed(env, state, lambda: pids(env))
        env.close()
        """,
    # The caller's own SIGTERM handler (one that raises, as the CLI's does) is not the
    # workers': a worker stopped by SIGTERM dies quietly, and is replaced.
    "sigterm_to_a_worker_of_a_caller_with_a_sigterm_handler": """
        def stop(signum, frame):
            raise KeyboardInterrupt("SIGTERM")
        signal.signal(signal.SIGTERM, stop)
        env, state = stepped_cartpole()
        before = pids(env)
        os.kill(before[0], signal.SIGTERM)
        wait_dead([before[0]])
        assert_steps_like_the_single_env(env, [0, 1, 0, 1], [state] * 4)
        assert pids(env)[0] != before[0]
        env.close()
        """,
    "a_timeout": """
        env, good, stuck = faulty(HANG)
        env.step_batch_async([0, 0], states=[good, stuck])
        must_raise(TimeoutError, env.step_batch_wait, timeout=0.5)
        report(env)
        assert_steps_like_the_single_env(env, [0, 1], [good, good])
        env.close()
        """,
    "ctrl_c_during_a_batch": """
        env, good, paused = faulty(PAUSE)
        pause_mid_batch(env, [good, good, paused, good])  # worker 1: Ctrl-C lands in the wait
        ctrl_c_after(0.2)
        must_raise(KeyboardInterrupt, env.step_batch_wait)
        report(env)
        expected = env.plan_env.step_batch([0, 1, 1], states=[good] * 3)
        assert_identical(env.step_batch([0, 1, 1], states=[good] * 3), expected)
        # Then Ctrl-C at other moments of the wait, with buffers that grow.
        for n, delay in ((2000, 0.002), (4000, 0.004), (8000, 0.01), (16000, 0.02)):
            env.step_batch_async([0] * n, states=[good] * n)
            try:
                ctrl_c_after(delay)
                env.step_batch_wait()
                time.sleep(0.1)  # the batch was faster: Ctrl-C lands here
            except KeyboardInterrupt:
                with contextlib.suppress(NoAsyncCallError):  # Ctrl-C came before the wait
                    env.step_batch_wait()
            assert_identical(env.step_batch([0, 1, 1], states=[good] * 3), expected)
        report(env)
        env.close()
        """,
    # Ctrl-C between creating a segment and registering it with the resource tracker, and
    # between removing one and unregistering it: the two moments where it used to leak a
    # segment, or leave a name the tracker warned about at exit.
    "ctrl_c_while_shared_memory_is_made_or_removed": """
        from multiprocessing import resource_tracker

        def interrupt_in(name):
            original = getattr(resource_tracker, name)
            def interrupted(*args):
                setattr(resource_tracker, name, original)
                os.kill(os.getpid(), signal.SIGINT)
                return original(*args)
            setattr(resource_tracker, name, interrupted)

        env, state = cartpole()
        env.step_batch([0] * 100, states=[state] * 100)
        for name, size in (("register", 1000), ("unregister", 5000)):
            interrupt_in(name)  # the next bigger batch replaces the buffers
            must_raise(KeyboardInterrupt, env.step_batch, [0] * size, states=[state] * size)
            assert getattr(resource_tracker, name).__name__ == name
            assert_steps_like_the_single_env(env, [1] * size, [state] * size)
            report(env)
        env.close()
        """,
    "close": """
        env, state = stepped_cartpole()
        workers = pids(env)
        env.close()
        assert all(not Path(f"/proc/{pid}").exists() for pid in workers)
        """,
    "ctrl_c_during_close": """
        env, good, paused = faulty(PAUSE)
        env.step_batch([0, 1], states=[good, good])
        report(env)
        workers = pids(env)
        pause_mid_batch(env, [good, good, paused, good])  # worker 1: Ctrl-C lands in close()
        ctrl_c_after(0.2)
        must_raise(KeyboardInterrupt, env.close)
        assert wait_dead(workers, 5)
        """,
    "garbage_collection": """
        env, state = stepped_cartpole()
        workers = pids(env)
        del env
        gc.collect()
        assert all(not Path(f"/proc/{pid}").exists() for pid in workers)
        """,
    "exit_without_close": """
        env, state = stepped_cartpole()
        """,
}


@pytest.mark.parametrize("body", list(SCENARIOS.values()), ids=list(SCENARIOS))
def test_a_scenario_prints_nothing_and_leaves_no_shared_memory(tmp_path, body):
    assert_clean(run_scenario(body, tmp_path))


@pytest.mark.parametrize("start_method", ["fork", "spawn", "forkserver"])
def test_parent_death(tmp_path, start_method):
    # The workers remove the buffers they know of before they exit; the last batch here
    # replaced the first one's, and its workers were restarted: they are told at once.
    done = run_scenario(
        f"""
        env, state = cartpole(start_method={start_method!r})
        env.step_batch([0, 1, 0], states=[state] * 3)
        from plangym.vectorization.backend import BatchInputs
        inputs = BatchInputs([0] * 4000, [state] * 4000, [1] * 4000, True)
        env.scheduler.abandon(env.scheduler.dispatch(inputs))
        report(env)
        print("pids", *pids(env), flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
        """,
        tmp_path,
        epilogue="",
    )
    assert_clean(done, returncode=-9)
    lines = [line.split() for line in done.stdout.splitlines()]
    workers = [int(pid) for line in lines if line[0] == "pids" for pid in line[1:]]
    assert len(workers) == 2
    assert wait_dead(workers, 5)
