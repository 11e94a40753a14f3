"""plangym's worker processes in a real Jupyter kernel: Ctrl-C, restart and shutdown.

Each test starts an ipykernel on this interpreter (jupyter_client's ``KernelManager`` and a
blocking client, see ``tests.helpers.kernel_helpers``) and runs cells in it as a notebook would:

* a :class:`ParallelEnv` and a :class:`plangym.vector.AsyncVectorEnv` of env classes
  defined in a cell, interrupted (``interrupt_kernel``, a SIGINT to the kernel's process
  group) while a worker is busy: the cell ends with KeyboardInterrupt at once, the busy
  worker is replaced, the idle one kept, and the env gives the single env's results;
* restarting the kernel, shutting it down, killing it: every process the kernel started
  (workers, multiprocessing's resource tracker) is gone within seconds, and so is every
  shared-memory segment its envs created (each kernel names its segments with a prefix of
  its own, so whatever is left in /dev/shm under it is that kernel's).

The figures (interrupt-to-error latency, time until the workers and segments are gone)
are printed (``pytest -s``) and repeated in the assertion messages.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

pytest.importorskip("ipykernel")
pytest.importorskip("jupyter_client")

from tests.helpers.kernel_helpers import (
    MAPPED_SEGMENTS_CODE,
    SHM,
    Kernel,
    Watch,
    children_of,
    remove_segments,
    segments_left,
    set_prefix_code,
    shm_prefix,
)
from tests.helpers.processes import pid_alive, wait_dead

pytestmark = [
    pytest.mark.skipif(not SHM.is_dir() or not Path("/proc/self/stat").exists(), reason="Linux"),
    pytest.mark.timeout(180),
]

# Generous bounds for a loaded 2-core machine; the figures measured are far below them.
INTERRUPT_LATENCY_S = 10.0  # interrupt_kernel() to the cell's KeyboardInterrupt
GONE_S = 15.0  # shutdown or restart to the last process and segment gone
BUSY_WAIT_S = 60.0  # for a worker to start its slow step
CELL_S = 120.0


def report(message: str) -> str:
    """Print a measured figure (shown by ``pytest -s``) and return it for assertions."""
    print(f"\n[jupyter kernel] {message}", flush=True)
    return message


def seconds(value: float | None) -> str:
    """A duration for a report ("never": the thing did not happen)."""
    return "never" if value is None else f"{value:.3f} s"


def wait_for(path: Path, timeout: float) -> bool:
    """Wait until ``path`` exists; return whether it does."""
    deadline = time.monotonic() + timeout
    while not path.exists():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


@pytest.fixture
def kernel(tmp_path):
    """A kernel whose shared-memory segments carry a prefix of their own.

    On the way out the kernel is killed and any segment left under its prefix removed (a
    test that passes has checked there is none).
    """
    prefix = shm_prefix()
    kernel = Kernel(tmp_path)
    kernel.prefix = prefix
    kernel.marks = tmp_path / "marks"
    kernel.marks.mkdir()
    try:
        kernel.run(set_prefix_code(prefix) + MAPPED_SEGMENTS_CODE).ok()
        yield kernel
    finally:
        kernel.close()
        remove_segments(segments_left(prefix))


def interrupt_when_busy(kernel: Kernel, msg_id: str, busy_pid: int, code: str) -> tuple:
    """Interrupt the cell ``msg_id`` once worker ``busy_pid`` runs its slow step.

    The slow step leaves a mark named by its pid; the interrupt comes a second later, so
    that the idle worker's answer has been read. The cell prints the wall-clock time at
    which its call returned (``@@left``). Returns the cell and a description of the
    figures: seconds from ``interrupt_kernel()`` to the call raising (plangym's part: the
    busy worker is replaced meanwhile), to the error message (IPython has rendered the
    traceback) and to the execute_reply.
    """
    mark = kernel.marks / str(busy_pid)
    if not wait_for(mark, BUSY_WAIT_S):
        cell = kernel.collect(msg_id, code, CELL_S)
        raise AssertionError(f"worker {busy_pid} never started its slow step\n{cell.describe()}")
    time.sleep(1.0)
    interrupted, interrupted_wall = time.monotonic(), time.time()
    kernel.km.interrupt_kernel()
    cell = kernel.collect(msg_id, code, CELL_S)
    to_raise = cell.value("left") - interrupted_wall
    to_error = None if cell.error_at is None else cell.error_at - interrupted
    to_reply = cell.reply_at - interrupted
    figures = (
        f"interrupt -> call raised {seconds(to_raise)}, -> error message {seconds(to_error)}, "
        f"-> execute_reply {seconds(to_reply)}"
    )
    assert cell.status == "error", f"{figures}\n{cell.describe()}"
    assert cell.error["ename"] == "KeyboardInterrupt", f"{figures}\n{cell.describe()}"
    assert to_raise < INTERRUPT_LATENCY_S, figures
    assert to_error < INTERRUPT_LATENCY_S, figures
    return cell, figures


def check_closed(kernel: Kernel, pids: list[int], close_code: str) -> None:
    """Close the env in the kernel: its workers are reaped and its segments removed."""
    segments = kernel.run(close_code).ok().value("segments")
    assert segments, "the env mapped no shared memory: nothing was checked"
    assert all(name.startswith(kernel.prefix) for name in segments), segments
    assert wait_dead(pids, GONE_S), f"workers alive after close(): {pids}"
    assert segments_left(kernel.prefix) == [], segments_left(kernel.prefix)


# ParallelEnv -----------------------------------------------------------------------------------

PARALLEL_SETUP = """
import json, os, time
from pathlib import Path

import numpy as np

from plangym.api_tests import assert_identical
from plangym.control.classic_control import ClassicControl
from plangym.vectorization.parallel import ParallelEnv

MARKS = Path({marks!r})


class SlowCartPole(ClassicControl):
    \"\"\"CartPole whose steps sleep ``delay`` s; a slow step leaves a mark named by its pid.\"\"\"

    tag = "fresh"

    def __init__(self, *args, delay=0.0, **kwargs):
        self.delay = delay
        super().__init__(*args, **kwargs)

    def apply_action(self, action):
        if self.delay:
            (MARKS / str(os.getpid())).touch()
            time.sleep(self.delay)
        return super().apply_action(action)


env = ParallelEnv(SlowCartPole, name="CartPole-v1", n_workers=2, inline_small_batches=False)
single = ClassicControl("CartPole-v1")
state, *_ = env.reset()
rng = np.random.default_rng(0)
states, s = [], state
for action in rng.integers(0, 2, 40):
    s, _, _, end, cut, _ = single.step(int(action), state=s)
    states.append(s)
    if end or cut:
        s = state


def check_batches():
    \"\"\"Worker batches equal the single env's (with states, small and large; without).\"\"\"
    for size in (8, 40):
        actions = [int(a) for a in rng.integers(0, 2, size)]
        dts = [int(d) for d in rng.integers(1, 4, size)]
        got = env.step_batch(actions, states=states[:size], dt=dts)
        assert_identical(got, single.step_batch(actions, states=states[:size], dt=dts))
    env.reset()
    _, rewards, *_ = env.step_batch([0, 1, 0, 1])
    assert rewards == [1.0] * 4, rewards


check_batches()
print("@@pids", json.dumps([worker.pid for worker in env.workers]))
"""

PARALLEL_LONG_BATCH = """
env.set_attr("tag", ["kept-0", "kept-1"])
env.set_attr("delay", [0.0, 0.1])  # worker 1 is slow: ~10 steps of 0.1 s per element
try:
    env.step_batch([0, 1] * 32, states=[state] * 64, dt=[1000] * 64)  # 2 chunks, one each
finally:
    print("@@left", json.dumps(time.time()))
"""

PARALLEL_AFTER = """
print("@@pids", json.dumps([worker.pid for worker in env.workers]))
print("@@tags", json.dumps(env.get_attr("tag")))
print("@@delays", json.dumps(env.get_attr("delay")))
env.set_attr("delay", 0.0)
check_batches()
print("@@checked", json.dumps(True))
"""

PARALLEL_CLOSE = """
segments = sorted(set(mapped_segments()) | set(env.scheduler.backend.shared_memory_names()))
env.close()
print("@@segments", json.dumps(segments))
"""


def test_interrupting_a_parallel_batch_keeps_the_env_usable(kernel):
    code = PARALLEL_SETUP.format(marks=str(kernel.marks))
    before = kernel.run(code, CELL_S).ok().value("pids")
    msg_id = kernel.submit(PARALLEL_LONG_BATCH)
    _, figures = interrupt_when_busy(kernel, msg_id, before[1], PARALLEL_LONG_BATCH)
    figures = report(f"ParallelEnv batch: {figures}")

    after_cell = kernel.run(PARALLEL_AFTER, CELL_S)
    after = after_cell.value("pids")
    # Worker 0 had answered: kept. Worker 1 was busy: replaced by a fresh process, the old
    # one reaped, and its env given the attributes set on the one it replaces.
    assert after[0] == before[0], f"{figures}; the idle worker was replaced: {before} -> {after}"
    assert after[1] != before[1], f"{figures}; the busy worker was kept: {before} -> {after}"
    assert not pid_alive(before[1]), f"the interrupted worker {before[1]} still runs"
    assert after_cell.value("tags") == ["kept-0", "kept-1"]
    assert after_cell.value("delays") == [0.0, 0.1]
    after_cell.ok()
    assert after_cell.value("checked")

    check_closed(kernel, after, PARALLEL_CLOSE)


# Vector env ------------------------------------------------------------------------------------

VECTOR_SETUP = """
import json, os, time
from pathlib import Path

import numpy as np
from gymnasium.envs.classic_control.cartpole import CartPoleEnv

from plangym.vector import AsyncVectorEnv

MARKS = Path({marks!r})


class SlowGymCartPole(CartPoleEnv):
    \"\"\"gymnasium's CartPole whose steps sleep ``delay`` s, leaving a mark named by the pid.\"\"\"

    delay = 0.0
    tag = "fresh"

    def step(self, action):
        if self.delay:
            (MARKS / str(os.getpid())).touch()
            time.sleep(self.delay)
        return super().step(action)


envs = AsyncVectorEnv([SlowGymCartPole] * 2)


def check_steps(seed, actions):
    \"\"\"reset(seed) and steps equal a SlowGymCartPole per sub-env, bit for bit.\"\"\"
    obs, _ = envs.reset(seed=seed)
    singles = [SlowGymCartPole() for _ in range(2)]
    want = np.stack([one.reset(seed=seed + i)[0] for i, one in enumerate(singles)])
    assert obs.tobytes() == want.tobytes(), (obs, want)
    for row in actions:
        obs, rewards, ends, cuts, _ = envs.step(np.array(row))
        steps = [one.step(int(a)) for one, a in zip(singles, row)]
        assert obs.tobytes() == np.stack([s[0] for s in steps]).tobytes()
        assert rewards.tolist() == [s[1] for s in steps]
        assert ends.tolist() == [s[2] for s in steps]
        assert cuts.tolist() == [s[3] for s in steps]


check_steps(3, [[0, 1], [1, 1], [0, 0], [1, 0]])
print("@@pids", json.dumps(envs.worker_pids))
"""

VECTOR_LONG_STEP = """
envs.set_attr("tag", ["kept-0", "kept-1"])
envs.set_attr("delay", [0.0, 60.0])  # sub-env 1 is slow: a minute per step
envs.step_async(np.array([1, 1]))
try:
    envs.step_wait(timeout={timeout})
finally:
    print("@@left", json.dumps(time.time()))
"""

VECTOR_AFTER = """
print("@@tags", json.dumps(envs.get_attr("tag")))
print("@@delays", json.dumps(envs.get_attr("delay")))
envs.set_attr("delay", 0.0)
check_steps(11, [[1, 0], [1, 1], [0, 1]])
print("@@checked", json.dumps(True))
"""

VECTOR_CLOSE = """
segments = mapped_segments()
envs.close()
print("@@segments", json.dumps(segments))
"""


@pytest.mark.parametrize(
    "timeout",
    [
        pytest.param(None),
        300,
    ],
    ids=["step_wait()", "step_wait(timeout)"],
)
def test_interrupting_a_vector_step_keeps_the_env_usable(kernel, timeout):
    code = VECTOR_SETUP.format(marks=str(kernel.marks))
    before = kernel.run(code, CELL_S).ok().value("pids")
    long_step = VECTOR_LONG_STEP.format(timeout=timeout)
    msg_id = kernel.submit(long_step)
    _, figures = interrupt_when_busy(kernel, msg_id, before[1], long_step)
    figures = report(f"AsyncVectorEnv step_wait(timeout={timeout}): {figures}")

    # worker_pids asks no worker: read first, so a wrong answer cannot hang the cell.
    after = kernel.run('print("@@pids", json.dumps(envs.worker_pids))').ok().value("pids")
    assert after[0] == before[0], f"{figures}; the idle worker was replaced: {before} -> {after}"
    assert after[1] != before[1], f"{figures}; the busy worker was kept: {before} -> {after}"
    assert not pid_alive(before[1]), f"the interrupted worker {before[1]} still runs"
    after_cell = kernel.run(VECTOR_AFTER, CELL_S)
    # The rebuilt sub-env was given the attributes set on the one it replaces.
    assert after_cell.value("tags") == ["kept-0", "kept-1"], after_cell.describe()
    assert after_cell.value("delays") == [0.0, 60.0], after_cell.describe()
    after_cell.ok()
    assert after_cell.value("checked")

    check_closed(kernel, after, VECTOR_CLOSE)


# Restart, shutdown, kill -----------------------------------------------------------------------

ENVS_SETUP = """
import json, os
import plangym

env = plangym.make("CartPole-v1", n_workers=2, inline_small_batches=False)
state, *_ = env.reset()
env.step_batch([0, 1] * 32, states=[state] * 64)  # maps the output buffers and state arenas
envs = plangym.make_vec("CartPole-v1", num_envs=2, vectorization_mode="async")
envs.reset(seed=0)
envs.step([0, 1])
names = set(mapped_segments())
assert set(env.scheduler.backend.shared_memory_names()) <= names
print("@@setup", json.dumps({
    "kernel": os.getpid(),
    "parallel": [worker.pid for worker in env.workers],
    "vector": list(envs.worker_pids),
    "segments": sorted(names),
}))
"""


def shutdown(kernel: Kernel, how: str) -> None:
    if how == "restart":
        kernel.km.restart_kernel(now=False)
    elif how == "restart now":
        kernel.km.restart_kernel(now=True)
    elif how == "shutdown":
        kernel.km.shutdown_kernel(now=False)
    elif how == "shutdown now":
        kernel.km.shutdown_kernel(now=True)
    else:  # the kernel alone dies (the OOM killer, a crash), not its process group
        os.kill(kernel.pid, signal.SIGKILL)


# jupyter_client's now=True sends SIGKILL to the kernel's whole process group: the
# workers and multiprocessing's resource tracker die in the same instant as the kernel,
# and nothing is left to remove the shared memory. Workers in process groups of their own
# would outlive the kill and clean up, but a forked worker holds the kernel's listening
# sockets, so the restarted kernel cannot bind its ports until the worker exits (tried:
# "Kernel died before replying to kernel_info").
GROUP_KILLED = {"restart now", "shutdown now"}


@pytest.mark.parametrize(
    "how", ["restart", "restart now", "shutdown", "shutdown now", "kill the kernel process"]
)
def test_no_worker_or_segment_survives_the_kernel(kernel, how):
    setup = kernel.run(ENVS_SETUP, CELL_S).ok().value("setup")
    assert setup["kernel"] == kernel.pid
    workers = {f"ParallelEnv worker {i}": pid for i, pid in enumerate(setup["parallel"])}
    workers |= {f"vector worker {i}": pid for i, pid in enumerate(setup["vector"])}
    children = children_of(kernel.pid)
    assert set(workers.values()) <= set(children), (workers, children)
    others = {f"child {pid}": pid for pid in children if pid not in workers.values()}
    segments = setup["segments"]
    assert segments, "the envs mapped no shared memory: nothing would be checked"
    assert all(name.startswith(kernel.prefix) for name in segments), segments

    watch = Watch({"kernel": kernel.pid, **workers, **others}, segments).start()
    shutdown(kernel, how)
    returned = watch.elapsed()
    watch.wait(GONE_S)
    workers_gone = watch.last_gone(list(workers))
    segments_gone = watch.last_gone(segments)
    everyone = list(workers) + list(others)
    figures = report(
        f"{how}: call returned after {returned:.3f} s; kernel gone after "
        f"{seconds(watch.gone.get('kernel'))}, its workers {seconds(workers_gone)}, every "
        f"child {seconds(watch.last_gone(everyone))}; {len(segments)} segments removed "
        f"{seconds(segments_gone)} ({len(watch.left())} left)"
    )
    assert not watch.alive(), f"{figures}; still running: {watch.alive()}"
    left = segments_left(kernel.prefix)
    if how in GROUP_KILLED and left:
        remove_segments(left)
        pytest.xfail(
            f"{figures}: SIGKILL to the kernel's process group leaves no process to remove "
            f"the {len(left)} shared-memory segments"
        )
    assert left == [], f"{figures}; left in /dev/shm: {left}"

    if how.startswith("restart"):
        kernel.kc.wait_for_ready(timeout=kernel.startup_timeout)
        cell = kernel.run('import os; print("@@pid", os.getpid())').ok()
        assert cell.value("pid") == kernel.pid != setup["kernel"]
