"""No fault of a ParallelEnv prints anything, and none leaves shared memory behind.

Every scenario runs in a fresh interpreter, so that the stderr of its worker processes and
of multiprocessing's resource tracker (a process that inherits the stderr of the process
that started it) land in the captured stream. ``subprocess.run`` returns once every
holder of that stream is gone: the script, its workers and its tracker.

The scripts name their shared memory with a prefix of their own (the tracker and other
test sessions use the default one), so a segment left in /dev/shm is theirs.
"""

import random
import string
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.helpers.processes import wait_dead

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
from tests.helpers.faulty_env import HANG, PAUSE, RAISE, CartError, FaultyCartPole, faulty_state
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

def faulty(marker):
    return ParallelEnv(FaultyCartPole, "CartPole-v1", n_workers=2,
                       die_marker=str(marker), inline_small_batches=False)
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
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        cwd=tmp_path,
    )
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


def test_an_error_raised_in_a_worker(tmp_path):
    done = run_scenario(
        """
        env = faulty(MARKER)
        good, cursed = faulty_state(env.plan_env, 0.0), faulty_state(env.plan_env, RAISE)
        try:
            env.step_batch([0, 1, 0, 1], states=[good, good, cursed, good])
        except CartError:
            pass
        else:
            raise AssertionError("no CartError")
        report(env)
        expected = env.plan_env.step_batch([0, 1, 0, 1], states=[good] * 4)
        assert_identical(env.step_batch([0, 1, 0, 1], states=[good] * 4), expected)
        env.close()
        """,
        tmp_path,
    )
    assert_clean(done)


def test_workers_killed_mid_batch_three_times(tmp_path):
    # A worker stepping a PAUSE state sleeps 30 s once it claims the marker: it is surely
    # mid-batch when killed, and the re-run of its chunk goes through.
    done = run_scenario(
        """
        env = faulty(MARKER)
        good, paused = faulty_state(env.plan_env, 0.0), faulty_state(env.plan_env, PAUSE)
        for victim in (1, 0, 1):  # 2 chunks of 2 elements: element 2 goes to worker 1
            states = [good] * 4
            states[2 * victim] = paused
            before = pids(env)
            MARKER.write_text("pause once")
            env.step_batch_async([0, 1, 1, 0], states=states)
            wait_gone(MARKER)
            os.kill(before[victim], signal.SIGKILL)
            result = env.step_batch_wait(timeout=20)
            after = pids(env)
            assert after[victim] != before[victim] and after[1 - victim] == before[1 - victim]
            assert_identical(result, env.plan_env.step_batch([0, 1, 1, 0], states=states))
            report(env)
        env.close()
        """,
        tmp_path,
    )
    assert_clean(done)


def test_workers_killed_during_big_batches(tmp_path):
    # Kills at whatever point the workers have reached, batches whose buffers grow.
    done = run_scenario(
        """
        env = plangym.make("CartPole-v1", n_workers=2, inline_small_batches=False)
        state, *_ = env.reset()
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
        tmp_path,
    )
    assert_clean(done)


def test_a_worker_killed_between_batches(tmp_path):
    done = run_scenario(
        """
        env = plangym.make("CartPole-v1", n_workers=2, inline_small_batches=False)
        state, *_ = env.reset()
        env.step_batch([0, 1, 0], states=[state] * 3)
        report(env)
        victim = pids(env)[0]
        os.kill(victim, signal.SIGKILL)
        assert wait_dead([victim])
        result = env.step_batch([1, 0, 1], states=[state] * 3)
        assert victim not in pids(env)
        assert_identical(result, env.plan_env.step_batch([1, 0, 1], states=[state] * 3))
        env.close()
        """,
        tmp_path,
    )
    assert_clean(done)


def test_a_timeout(tmp_path):
    done = run_scenario(
        """
        env = faulty(MARKER)
        good, stuck = faulty_state(env.plan_env, 0.0), faulty_state(env.plan_env, HANG)
        env.step_batch_async([0, 0], states=[good, stuck])
        try:
            env.step_batch_wait(timeout=0.5)
        except TimeoutError:
            pass
        else:
            raise AssertionError("no TimeoutError")
        report(env)
        expected = env.plan_env.step_batch([0, 1], states=[good, good])
        assert_identical(env.step_batch([0, 1], states=[good, good]), expected)
        env.close()
        """,
        tmp_path,
    )
    assert_clean(done)


def test_ctrl_c_during_a_batch(tmp_path):
    done = run_scenario(
        """
        env = faulty(MARKER)
        good, paused = faulty_state(env.plan_env, 0.0), faulty_state(env.plan_env, PAUSE)
        MARKER.write_text("pause once")
        env.step_batch_async([0, 1, 1, 0], states=[good, good, paused, good])
        wait_gone(MARKER)  # worker 1 sleeps: Ctrl-C lands while the caller waits
        threading.Timer(0.2, os.kill, args=(os.getpid(), signal.SIGINT)).start()
        try:
            env.step_batch_wait()
        except KeyboardInterrupt:
            pass
        else:
            raise AssertionError("no KeyboardInterrupt")
        report(env)
        expected = env.plan_env.step_batch([0, 1, 1], states=[good] * 3)
        assert_identical(env.step_batch([0, 1, 1], states=[good] * 3), expected)
        # Then Ctrl-C at other moments of the wait, with buffers that grow.
        for n, delay in ((2000, 0.002), (4000, 0.004), (8000, 0.01), (16000, 0.02)):
            env.step_batch_async([0] * n, states=[good] * n)
            try:
                threading.Timer(delay, os.kill, args=(os.getpid(), signal.SIGINT)).start()
                env.step_batch_wait()
                time.sleep(0.1)  # the batch was faster: Ctrl-C lands here
            except KeyboardInterrupt:
                with contextlib.suppress(NoAsyncCallError):  # Ctrl-C came before the wait
                    env.step_batch_wait()
            assert_identical(env.step_batch([0, 1, 1], states=[good] * 3), expected)
        report(env)
        env.close()
        """,
        tmp_path,
    )
    assert_clean(done)


def test_ctrl_c_while_shared_memory_is_made_or_removed(tmp_path):
    # Ctrl-C between creating a segment and registering it with the resource tracker, and
    # between removing one and unregistering it: the two moments where it used to leak a
    # segment, or leave a name the tracker warned about at exit.
    done = run_scenario(
        """
        from multiprocessing import resource_tracker

        def interrupt_in(name):
            original = getattr(resource_tracker, name)
            def interrupted(*args):
                setattr(resource_tracker, name, original)
                os.kill(os.getpid(), signal.SIGINT)
                return original(*args)
            setattr(resource_tracker, name, interrupted)

        env = plangym.make("CartPole-v1", n_workers=2, inline_small_batches=False)
        state, *_ = env.reset()
        env.step_batch([0] * 100, states=[state] * 100)
        for name, size in (("register", 1000), ("unregister", 5000)):
            interrupt_in(name)  # the next bigger batch replaces the buffers
            try:
                env.step_batch([0] * size, states=[state] * size)
            except KeyboardInterrupt:
                pass
            else:
                raise AssertionError("no KeyboardInterrupt")
            assert getattr(resource_tracker, name).__name__ == name
            expected = env.plan_env.step_batch([1] * size, states=[state] * size)
            assert_identical(env.step_batch([1] * size, states=[state] * size), expected)
            report(env)
        env.close()
        """,
        tmp_path,
    )
    assert_clean(done)


def test_close(tmp_path):
    done = run_scenario(
        """
        env = plangym.make("CartPole-v1", n_workers=2, inline_small_batches=False)
        state, *_ = env.reset()
        env.step_batch([0, 1, 0], states=[state] * 3)
        report(env)
        workers = pids(env)
        env.close()
        assert all(not Path(f"/proc/{pid}").exists() for pid in workers)
        """,
        tmp_path,
    )
    assert_clean(done)


def test_ctrl_c_during_close(tmp_path):
    done = run_scenario(
        """
        env = faulty(MARKER)
        good, paused = faulty_state(env.plan_env, 0.0), faulty_state(env.plan_env, PAUSE)
        env.step_batch([0, 1], states=[good, good])
        report(env)
        workers = pids(env)
        MARKER.write_text("pause once")
        env.step_batch_async([0, 1, 1, 0], states=[good, good, paused, good])
        wait_gone(MARKER)  # worker 1 sleeps: close() waits for it, and Ctrl-C comes
        threading.Timer(0.2, os.kill, args=(os.getpid(), signal.SIGINT)).start()
        try:
            env.close()
        except KeyboardInterrupt:
            pass
        else:
            raise AssertionError("no KeyboardInterrupt")
        assert wait_dead(workers, 5)
        """,
        tmp_path,
    )
    assert_clean(done)


def test_garbage_collection(tmp_path):
    done = run_scenario(
        """
        env = plangym.make("CartPole-v1", n_workers=2, inline_small_batches=False)
        state, *_ = env.reset()
        env.step_batch([0, 1, 0], states=[state] * 3)
        report(env)
        workers = pids(env)
        del env
        gc.collect()
        assert all(not Path(f"/proc/{pid}").exists() for pid in workers)
        """,
        tmp_path,
    )
    assert_clean(done)


def test_exit_without_close(tmp_path):
    done = run_scenario(
        """
        env = plangym.make("CartPole-v1", n_workers=2, inline_small_batches=False)
        state, *_ = env.reset()
        env.step_batch([0, 1, 0], states=[state] * 3)
        report(env)
        """,
        tmp_path,
    )
    assert_clean(done)


@pytest.mark.parametrize("start_method", ["fork", "spawn", "forkserver"])
def test_parent_death(tmp_path, start_method):
    # The workers remove the buffers they know of before they exit; the last batch here
    # replaced the first one's, and its workers were restarted: they are told at once.
    done = run_scenario(
        f"""
        env = plangym.make("CartPole-v1", n_workers=2, inline_small_batches=False,
                           start_method={start_method!r})
        state, *_ = env.reset()
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
