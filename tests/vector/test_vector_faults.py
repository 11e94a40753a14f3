"""What ``plangym.vector``'s vector envs do when things go wrong, with real processes.

Workers are killed with real SIGKILLs, while idle and while busy in a step, a reset or a call;
sub-envs raise, sleep past a timeout, or cannot be built
(:mod:`tests.helpers.vector_faulty_env`). After each fault the vector env must go on, and its
results must stay exactly those of a reference (gymnasium's ``SyncVectorEnv`` fed the same
seeds and actions) for every sub-env the fault did not touch. Misuse (a call out of turn, a
batch of actions of the wrong length, bad seeds or masks) raises gymnasium's typed errors
before anything reaches a sub-env, and closing (or garbage-collecting) a vector env leaves no
worker process and no shared-memory segment behind.
"""

from __future__ import annotations

import functools
import gc
import multiprocessing
import os
import re
import signal
import threading
import time
from pathlib import Path

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import plangym
from plangym.vector import (
    AlreadyPendingCallError,
    AsyncVectorEnv,
    ClosedEnvironmentError,
    NoAsyncCallError,
    PlanVectorEnv,
    SubEnvCrashedError,
    SyncVectorEnv,
    VectorTimeoutError,
)
from plangym.vectorization import errors as plangym_errors
from tests.helpers.processes import pid_alive, wait_dead
from tests.helpers.vector_checks import assert_same
from tests.helpers.vector_faulty_env import (
    FAULTS,
    NAP,
    NAP_LONG,
    NAP_LONG_S,
    NAP_S,
    RAISE,
    BuildError,
    FaultError,
    NapOnStep,
    make_broken_env,
    make_faulty_env,
)

N = 3  # sub-envs per vector env
SEED = 4321
MODES = list(AutoresetMode)
FLAVOURS = {"async": AsyncVectorEnv, "sync": SyncVectorEnv}
NEXT_STEP, SAME_STEP, DISABLED = (
    AutoresetMode.NEXT_STEP,
    AutoresetMode.SAME_STEP,
    AutoresetMode.DISABLED,
)
RESULTS = ("obs", "rewards", "terminations", "truncations")


# Processes and shared memory -------------------------------------------------------------------
def live_children() -> set[int]:
    """The live processes this one forked (its command line: multiprocessing workers)."""
    me = os.getpid()
    cmdline = Path(f"/proc/{me}/cmdline").read_bytes()
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            same_program = (entry / "cmdline").read_bytes() == cmdline
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        if parent == me and same_program and pid_alive(int(entry.name)):
            found.add(int(entry.name))
    return found


def wait_until(condition, seconds: float = 15.0) -> bool:
    """Wait up to ``seconds`` until ``condition()`` holds; return whether it does."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def shm_segments() -> set[str]:
    """The ``psm_*`` shared-memory segments that exist (anyone's)."""
    return {path.name for path in Path("/dev/shm").glob("psm_*")}


def mapped_segments() -> set[str]:
    """The ``psm_*`` shared-memory segments this process maps."""
    return set(re.findall(r"/dev/shm/(psm_\w+)", Path("/proc/self/maps").read_text()))


def kill_worker(envs, index: int) -> int:
    """SIGKILL sub-env ``index``'s worker and wait until it is dead; return its pid."""
    pid = envs.worker_pids[index]
    os.kill(pid, signal.SIGKILL)
    assert wait_dead([pid]), f"worker {pid} survived SIGKILL"
    return pid


def wait_busy(busy_file: Path) -> None:
    """Wait until a sub-env has started sleeping (it created ``busy_file``)."""
    assert wait_until(busy_file.exists), "no sub-env started its sleep"


def assert_replaced(before: tuple, after: tuple, replaced: set[int]) -> None:
    """Exactly the workers in ``replaced`` have a new pid."""
    for index, (old, new) in enumerate(zip(before, after, strict=True)):
        if index in replaced:
            assert new != old and pid_alive(new), f"worker {index} was not replaced"
        else:
            assert new == old, f"worker {index} was replaced ({old} -> {new})"


# Comparing results -----------------------------------------------------------------------------
def row_info(infos: dict, index: int) -> dict:
    """Sub-env ``index``'s own info out of batched ``infos`` (the keys its mask sets)."""
    return {
        key: row_info(value, index) if isinstance(value, dict) else value[index]
        for key, value in infos.items()
        if not key.startswith("_") and infos[f"_{key}"][index]
    }


def assert_row(got: tuple, want: tuple, index: int, where: str = "step") -> None:
    """Sub-env ``index``'s results in ``got`` are exactly those in ``want``."""
    for name, mine, theirs in zip(RESULTS, got[:4], want[:4], strict=True):
        assert mine.dtype == theirs.dtype, f"{where}: {name} dtype {mine.dtype}"
        assert mine[index].tobytes() == theirs[index].tobytes(), (
            f"{where}: {name} of sub-env {index}: {mine[index]} != {theirs[index]}"
        )
    assert_same(row_info(got[-1], index), row_info(want[-1], index), f"{where}: infos[{index}]")


def assert_restarted(envs, got: tuple, rows: set[int]) -> None:
    """The ``rows`` of a step report a rebuilt, freshly reset sub-env (a truncation)."""
    obs, rewards, terminations, truncations, infos = got
    expected_mask = [index in rows for index in range(envs.num_envs)]
    assert infos["_worker_restarted"].tolist() == expected_mask
    last_obs, resets = envs.get_attr("last_obs"), envs.get_attr("resets")
    for index in rows:
        assert rewards[index] == 0.0
        assert not terminations[index]
        assert truncations[index]
        assert obs[index].tobytes() == last_obs[index].tobytes()  # the new env's reset obs
        assert resets[index] == 1  # a new env, reset once
        assert row_info(infos, index) == {"start": obs[index][0], "worker_restarted": True}


class Lockstep:
    """Our vector env and a reference (gymnasium's ``SyncVectorEnv``) driven alike.

    Every step compares the results of the sub-envs not in :attr:`diverged` exactly. Fault
    actions go to ours only; the reference gets action 0 instead (what a fault does after
    sleeping). Under ``DISABLED`` the sub-envs that ended are reset after each step, in each
    env as its own flags say.
    """

    def __init__(self, ours: PlanVectorEnv, ref: gymnasium.vector.VectorEnv):
        self.ours, self.ref = ours, ref
        self.mode = ours.autoreset_mode
        self.n = ours.num_envs
        self.rng = np.random.default_rng(SEED)
        self.diverged: set[int] = set()  # sub-envs whose episodes differ from the reference's

    @property
    def compared(self) -> list[int]:
        return [index for index in range(self.n) if index not in self.diverged]

    def actions(self, faults: dict[int, int] | None = None) -> np.ndarray:
        actions = self.rng.integers(0, 4, size=self.n)
        for index, fault in (faults or {}).items():
            actions[index] = fault
        return actions

    def reset(self, seed: int = SEED) -> tuple:
        got = self.ours.reset(seed=seed)
        assert_same(got, self.ref.reset(seed=seed), "reset")
        self.diverged.clear()
        return got

    def step_ref(self, actions: np.ndarray) -> tuple:
        return self.ref.step(np.where(np.isin(actions, FAULTS), 0, actions))

    def step(self, actions=None, reset_ended: bool = True, timeout: float | None = None):
        """Step both; compare; return ``(ours, reference's)`` results."""
        actions = self.actions() if actions is None else actions
        self.ours.step_async(actions.copy())
        got = self.ours.step_wait(timeout=timeout)
        want = self.step_ref(actions)
        self.check(got, want)
        if reset_ended:
            self.reset_ended(got, want)
        return got, want

    def check(self, got: tuple, want: tuple) -> None:
        for index in self.compared:
            assert_row(got, want, index)

    def reset_ended(self, got: tuple, want: tuple) -> None:
        """Under DISABLED, reset the sub-envs that ended (in both); compare what they return."""
        if self.mode is not DISABLED:
            return
        ours_ended, ref_ended = got[2] | got[3], want[2] | want[3]
        for index in self.compared:
            assert ours_ended[index] == ref_ended[index]
        if ours_ended.any():
            ours_reset = self.ours.reset(options={"reset_mask": ours_ended})
        if ref_ended.any():
            ref_reset = self.ref.reset(options={"reset_mask": ref_ended})
        for index in self.compared:
            if ours_ended[index]:
                assert_same(ours_reset[0][index], ref_reset[0][index], "masked reset obs")
                assert_same(row_info(ours_reset[1], index), row_info(ref_reset[1], index))


@pytest.fixture
def make_lockstep():
    """Build a :class:`Lockstep` (ours over ``env_fn``); everything is closed at teardown."""
    built = []

    def make(flavour="async", mode=NEXT_STEP, env_fn=make_faulty_env, **kwargs) -> Lockstep:
        ours = FLAVOURS[flavour]([env_fn] * N, autoreset_mode=mode, **kwargs)
        built.append(ours)
        ref = gymnasium.vector.SyncVectorEnv([make_faulty_env] * N, autoreset_mode=mode)
        built.append(ref)
        return Lockstep(ours, ref)

    yield make
    for env in built:
        if isinstance(env, PlanVectorEnv):
            env.close(terminate=True)
        else:
            env.close()


@pytest.fixture
def lock(make_lockstep) -> Lockstep:
    """The default :class:`Lockstep`, reset (both sides seeded alike)."""
    lockstep = make_lockstep()
    lockstep.reset()
    return lockstep


def check_after_restart(lock: Lockstep, got: tuple, want: tuple, index: int) -> None:
    """The step that found ``index``'s worker dead, and what follows, in each autoreset mode."""
    ours, mode = lock.ours, lock.mode
    lock.diverged.add(index)
    lock.check(got, want)
    assert_restarted(ours, got, {index})
    if mode is DISABLED:  # the truncated sub-env must be reset by the caller first
        with pytest.raises(RuntimeError, match=rf"sub-envs \[[0-9, ]*{index}[0-9, ]*\]"):
            ours.step(lock.actions())
    lock.reset_ended(got, want)
    got, want = lock.step(reset_ended=False)  # the rebuilt sub-env is unseeded: it may end
    obs, rewards, terminations, truncations, _ = got
    resets = ours.get_attr("resets")[index]
    lock.reset_ended(got, want)
    if mode is NEXT_STEP:  # the step after a truncation resets the sub-env
        assert (rewards[index], terminations[index], truncations[index]) == (0.0, False, False)
        assert obs[index].tobytes() == ours.get_attr("last_obs")[index].tobytes()
        assert resets == 2
    elif mode is SAME_STEP:  # the restarted sub-env steps on (and resets if that ends it)
        assert rewards[index] != 0.0
        assert resets == 1 + int(terminations[index] or truncations[index])
    else:  # reset by reset_ended above
        assert resets == 2
    for _ in range(15):
        lock.step()


# 1. A worker dies during a step ----------------------------------------------------------------
@pytest.mark.parametrize("shared_memory", [True, False], ids=["shm", "no-shm"])
@pytest.mark.parametrize("mode", MODES, ids=lambda mode: mode.name)
def test_a_killed_idle_worker_is_replaced_and_its_step_truncated(
    make_lockstep, mode, shared_memory
):
    lock = make_lockstep(mode=mode, shared_memory=shared_memory)
    lock.reset()
    for _ in range(3):
        lock.step()
    pids = lock.ours.worker_pids
    kill_worker(lock.ours, 1)
    lock.diverged.add(1)
    got, want = lock.step(reset_ended=False)  # no exception
    assert_replaced(pids, lock.ours.worker_pids, {1})
    check_after_restart(lock, got, want, 1)


@pytest.mark.parametrize("mode", MODES, ids=lambda mode: mode.name)
def test_a_worker_killed_while_busy_in_a_step_is_replaced(make_lockstep, tmp_path, mode):
    busy_file = tmp_path / "busy"
    lock = make_lockstep(mode=mode, env_fn=functools.partial(make_faulty_env, str(busy_file)))
    ours = lock.ours
    lock.reset()
    lock.step()
    pids = ours.worker_pids
    actions = lock.actions({2: NAP})
    ours.step_async(actions.copy())
    wait_busy(busy_file)
    kill_worker(ours, 2)
    got = ours.step_wait()
    want = lock.step_ref(actions)
    assert_replaced(pids, ours.worker_pids, {2})
    check_after_restart(lock, got, want, 2)


def test_the_env_survives_many_kills(lock):
    ours = lock.ours
    lock.diverged = {0, 2}  # the sub-envs killed; sub-env 1 is compared all along
    for rows in [{0}, {2}, {0, 2}, {0}, {0}, {2}]:
        pids = ours.worker_pids
        for index in rows:
            kill_worker(ours, index)
        got, _ = lock.step()
        assert_replaced(pids, ours.worker_pids, rows)
        assert_restarted(ours, got, rows)
        for _ in range(4):
            lock.step()
    lock.reset(SEED + 1)  # seeded again: every sub-env is back in lockstep
    for _ in range(10):
        lock.step()


# 2. A worker dies during a reset ---------------------------------------------------------------
@pytest.mark.parametrize("busy", [False, True], ids=["idle", "busy"])
def test_a_reset_whose_worker_died_is_run_again(make_lockstep, tmp_path, busy):
    busy_file = tmp_path / "busy"
    lock = make_lockstep(env_fn=functools.partial(make_faulty_env, str(busy_file)))
    ours = lock.ours
    lock.reset()
    for _ in range(3):
        lock.step()
    pids = ours.worker_pids
    if busy:
        ours.set_attr("delay", [0.0, NAP_S, 0.0])
        ours.reset_async(seed=SEED + 1)
        wait_busy(busy_file)
        kill_worker(ours, 1)
        got = ours.reset_wait()
    else:
        kill_worker(ours, 1)
        got = ours.reset(seed=SEED + 1)
    assert_same(got, lock.ref.reset(seed=SEED + 1), "reset")  # bit for bit
    assert "worker_restarted" not in got[1]
    assert_replaced(pids, ours.worker_pids, {1})
    # The rebuilt sub-env was given the attributes set on the one it replaced.
    assert ours.get_attr("delay") == ((0.0, NAP_S, 0.0) if busy else (0.0, 0.0, 0.0))
    ours.set_attr("delay", 0.0)
    for _ in range(10):  # every sub-env in lockstep
        lock.step()


# 3. A worker dies during a call ----------------------------------------------------------------
CALLS = {  # set_attr is re-run on the replacement (tests/vectorization/test_partial_failures)
    "call": lambda envs: envs.call("pid"),
    "get_attr": lambda envs: envs.get_attr("resets"),
}


@pytest.mark.parametrize("how", list(CALLS))
def test_a_call_whose_worker_died_raises_and_the_env_goes_on(lock, how):
    ours = lock.ours
    lock.step()
    pids = ours.worker_pids
    kill_worker(ours, 0)
    with pytest.raises(SubEnvCrashedError, match="sub-env 0") as caught:
        CALLS[how](ours)
    assert isinstance(caught.value, plangym_errors.WorkerCrashedError)
    assert_replaced(pids, ours.worker_pids, {0})
    assert ours.call("pid") == ours.worker_pids
    lock.reset(SEED + 1)
    for _ in range(10):
        lock.step()


def test_the_log_of_a_call_whose_worker_died_says_the_sub_env_was_rebuilt(lock, recwarn):
    """gymnasium's error log (AsyncVectorEnv's, as warnings) must not say it was kept."""
    lock.step()
    kill_worker(lock.ours, 2)
    with pytest.raises(SubEnvCrashedError):
        lock.ours.call("pid")
    log = "\n".join(str(warning.message) for warning in recwarn)
    assert "Worker-2 during call (its worker died: the sub-env was rebuilt, reset and" in log
    assert "is kept" not in log and "Traceback" not in log


@pytest.mark.parametrize("mode", [NEXT_STEP, SAME_STEP], ids=lambda mode: mode.name)
@pytest.mark.parametrize("how", ["call", "get_attr"])
def test_the_next_step_reports_a_restart_that_happened_in_a_call(make_lockstep, how, mode):
    """The sub-env was rebuilt and reset in the call: its next step says so (truncated)."""
    ours = make_lockstep(mode=mode).ours
    ours.reset(seed=SEED)
    ours.step(np.zeros(N, np.int64))
    kill_worker(ours, 1)
    with pytest.raises(SubEnvCrashedError, match="sub-env 1"):
        CALLS[how](ours)
    obs, rewards, terminations, truncations, infos = ours.step(np.zeros(N, np.int64))
    assert truncations.tolist() == [False, True, False]
    assert (rewards[1], terminations[1]) == (0.0, False)
    assert infos["worker_restarted"][1] and infos["_worker_restarted"].tolist() == [0, 1, 0]
    assert "final_obs" not in infos  # its last step before the crash was lost
    ours.step(np.zeros(N, np.int64))  # and then on, as after any truncation
    assert not ours.step(np.zeros(N, np.int64))[3].any()


# 4. A sub-env raises ---------------------------------------------------------------------------
@pytest.mark.parametrize("mode", [NEXT_STEP, SAME_STEP], ids=lambda mode: mode.name)
@pytest.mark.parametrize("flavour", list(FLAVOURS))
def test_an_env_error_keeps_its_type_and_the_env_stays_usable(make_lockstep, flavour, mode):
    lock = make_lockstep(flavour, mode)
    ours = lock.ours
    lock.reset()  # just reset: a step is a step (not an autoreset) in every sub-env
    pids = ours.worker_pids
    actions = lock.actions({1: RAISE})
    with pytest.raises(FaultError, match="means raise") as caught:
        ours.step(actions.copy())
    assert type(caught.value) is FaultError
    notes = getattr(caught.value, "__notes__", [])
    assert any("sub-env 1" in note and "during step" in note for note in notes), notes
    assert ours.worker_pids == pids  # not restarted
    lock.step_ref(actions)  # the other sub-envs stepped
    lock.diverged.add(1)
    for _ in range(5):
        lock.step()
    lock.reset(SEED + 1)
    for _ in range(5):
        lock.step()
    assert ours.worker_pids == pids


@pytest.mark.parametrize("flavour", list(FLAVOURS))
def test_errors_of_several_sub_envs_name_them_all(make_lockstep, flavour):
    lock = make_lockstep(flavour)
    lock.reset()
    with pytest.raises(FaultError) as caught:
        lock.ours.step(lock.actions({0: RAISE, 2: RAISE}))
    notes = getattr(caught.value, "__notes__", [])
    assert any("sub-env 0" in note and "[2] raised too" in note for note in notes), notes
    lock.reset()
    lock.step()


@pytest.mark.parametrize("broken", [0, 1], ids=["first", "second"])
@pytest.mark.parametrize("flavour", list(FLAVOURS))
def test_an_env_that_cannot_be_built_raises_its_error(flavour, broken):
    before = live_children()
    env_fns = [make_faulty_env] * N
    env_fns[broken] = make_broken_env
    with pytest.raises(BuildError, match="cannot be built") as caught:
        FLAVOURS[flavour](env_fns)
    if flavour == "async" and broken:  # which worker (env_fns[0] is first built here)
        assert f"raised while worker {broken} built its env" in caught.value.__notes__
    gc.collect()
    assert wait_until(lambda: not live_children() - before), live_children() - before


def test_a_failed_build_stops_its_other_workers_at_once():
    gc.collect()
    before, segments = live_children(), mapped_segments()
    gc.disable()  # what must happen must not wait for the cyclic garbage collector
    try:
        with pytest.raises(BuildError):
            AsyncVectorEnv([make_faulty_env, make_faulty_env, make_broken_env])
        leftover = live_children() - before
        stopped = wait_dead(leftover, 1.0)
        segments_left = mapped_segments() - segments
    finally:
        gc.enable()
        gc.collect()
    assert stopped, f"workers {leftover} outlived the failed constructor"
    assert not segments_left


def test_a_failed_restart_leaves_no_stale_answer(make_lockstep, tmp_path):
    poison = tmp_path / "poison"
    lock = make_lockstep(env_fn=functools.partial(make_faulty_env, poison_file=str(poison)))
    ours = lock.ours
    lock.reset()
    lock.step()
    poison.touch()  # from now on a rebuilt sub-env dies as it is reset
    kill_worker(ours, 0)
    with pytest.raises(plangym_errors.WorkerCrashedError):
        ours.step(lock.actions())
    poison.unlink()
    lock.reset(SEED + 1)  # a fresh start: every sub-env in lockstep again
    for _ in range(5):
        lock.step()


# 5. Timeouts -----------------------------------------------------------------------------------
def assert_timeout_error(error: BaseException) -> None:
    assert isinstance(error, VectorTimeoutError)
    assert isinstance(error, multiprocessing.TimeoutError)
    assert isinstance(error, TimeoutError)


def assert_a_late_sub_env_is_replaced(ours, late: int, start, wait, error: type) -> None:
    """Sub-env ``late`` naps through ``wait(timeout=0.2)`` after ``start()``.

    The wait must raise ``error`` naming itself, and exactly the late worker be replaced.
    """
    pids = ours.worker_pids
    ours.set_attr("delay", [NAP_LONG_S if index == late else 0.0 for index in range(N)])
    start()
    with pytest.raises(error, match=wait.__name__) as caught:
        wait(timeout=0.2)
    assert_timeout_error(caught.value)
    assert_replaced(pids, ours.worker_pids, {late})


@pytest.mark.parametrize("mode", MODES, ids=lambda mode: mode.name)
def test_a_step_wait_timeout_replaces_the_late_sub_env(make_lockstep, mode):
    lock = make_lockstep(mode=mode)
    ours = lock.ours
    lock.reset()
    lock.step(timeout=30.0)  # a generous timeout changes nothing
    pids = ours.worker_pids
    actions = lock.actions({1: NAP_LONG})
    ours.step_async(actions.copy())
    start = time.monotonic()
    with pytest.raises(multiprocessing.TimeoutError, match="step_wait") as caught:
        ours.step_wait(timeout=0.2)
    assert time.monotonic() - start < NAP_LONG_S
    assert_timeout_error(caught.value)
    assert_replaced(pids, ours.worker_pids, {1})
    assert ours.get_attr("resets")[1] == 1  # rebuilt and reset
    with pytest.raises(NoAsyncCallError):  # idle again
        ours.step_wait()
    want = lock.step_ref(actions)  # the others stepped
    lock.diverged.add(1)
    if mode is DISABLED:  # ours was not told which other sub-envs ended in the lost step
        lost = (want[2] | want[3]) & (np.arange(N) != 1)
        lock.reset_ended((None, None, lost, lost), (None, None, lost, lost))
    # The rebuilt sub-env's next step reports it, as a step its worker died in does (it
    # returned the reset observation with no flag: an ordinary transition to a learner).
    got, want = lock.step(reset_ended=False)
    check_after_restart(lock, got, want, 1)
    lock.reset(SEED + 1)
    for _ in range(5):
        lock.step()


def test_ctrl_c_during_a_step_replaces_the_late_sub_env_and_its_next_step_says_so(lock):
    ours = lock.ours
    lock.step()
    pids = ours.worker_pids
    # The last sub-env sleeps: the answers are read in order, so only its worker is busy.
    actions = lock.actions({2: NAP_LONG})
    ctrl_c = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
    ctrl_c.start()
    with pytest.raises(KeyboardInterrupt):
        ours.step(actions.copy())
    ctrl_c.join()
    assert_replaced(pids, ours.worker_pids, {2})
    lock.step_ref(actions)  # the others stepped
    lock.diverged.add(2)
    got, want = lock.step(reset_ended=False)
    check_after_restart(lock, got, want, 2)


def test_set_states_after_a_timeout_steps_from_the_states():
    """A restored state supersedes the report a rebuilt sub-env owed its next step."""
    envs = plangym.make_vec("CartPole-v1", 2, "async", wrappers=[NapOnStep])
    try:
        envs.reset(seed=SEED)
        saved, actions = envs.get_states(), np.array([0, 1])
        envs.set_attr("nap_s", [0.0, NAP_LONG_S])
        envs.step_async(actions)
        with pytest.raises(VectorTimeoutError):
            envs.step_wait(timeout=0.2)
        envs.set_attr("nap_s", 0.0)
        envs.set_states(saved)
        got = envs.step(actions)
        envs.set_states(saved)
        assert_same(got, envs.step(actions))
        assert "worker_restarted" not in got[4]
    finally:
        envs.close()


def test_a_reset_wait_timeout_replaces_the_late_sub_env(lock):
    ours = lock.ours
    start = functools.partial(ours.reset_async, seed=SEED + 1)
    assert_a_late_sub_env_is_replaced(ours, 1, start, ours.reset_wait, TimeoutError)
    # Sub-env 1 was rebuilt, and given the attributes set on the one it replaced.
    assert ours.get_attr("delay") == (0.0, NAP_LONG_S, 0.0)
    ours.set_attr("delay", 0.0)
    ours.reset_async(seed=SEED + 2)
    got = ours.reset_wait(timeout=30.0)
    assert_same(got, lock.ref.reset(seed=SEED + 2))
    for _ in range(10):
        lock.step()


def test_a_call_wait_timeout_replaces_the_late_sub_env(lock):
    ours = lock.ours
    ours.call_async("nap")
    assert ours.call_wait(timeout=30.0) == ours.worker_pids
    start = functools.partial(ours.call_async, "nap")
    assert_a_late_sub_env_is_replaced(ours, 2, start, ours.call_wait, VectorTimeoutError)
    assert ours.call("pid") == ours.worker_pids
    lock.reset(SEED + 1)
    for _ in range(10):
        lock.step()


@pytest.mark.parametrize(
    ("timeout", "error"), [("5", TypeError), (True, TypeError), (float("nan"), ValueError)]
)
def test_a_bad_timeout_raises_before_the_pending_call_is_touched(lock, timeout, error):
    ours = lock.ours
    actions = lock.actions()
    for start, wait in [
        (lambda: ours.step_async(actions.copy()), ours.step_wait),
        (lambda: ours.reset_async(seed=SEED + 3), ours.reset_wait),
        (lambda: ours.call_async("pid"), ours.call_wait),
    ]:
        start()
        with pytest.raises(error, match=r"^timeout: expected None or a number of seconds"):
            wait(timeout=timeout)
        wait(timeout=float("inf"))  # still pending, and inf waits as None does
    lock.reset(SEED + 3)
    lock.step()


# 6. Calls out of turn --------------------------------------------------------------------------
def raises_pending(name: str):
    """Expect an ``AlreadyPendingCallError`` (plangym's and gymnasium's) about ``name``."""
    return raises_typed(
        AlreadyPendingCallError,
        gymnasium.error.AlreadyPendingCallError,
        plangym_errors.AlreadyPendingCallError,
        name,
    )


def raises_no_call(name: str):
    """Expect a ``NoAsyncCallError`` (plangym's and gymnasium's) about ``name``."""
    return raises_typed(
        NoAsyncCallError, gymnasium.error.NoAsyncCallError, plangym_errors.NoAsyncCallError, name
    )


class raises_typed:  # noqa: N801 - used like pytest.raises
    """``pytest.raises(ours)`` that checks the error is also ``theirs`` and ``plangyms``."""

    def __init__(self, ours, theirs, plangyms, name):
        self.expected = (ours, theirs, plangyms)
        self.name = name
        self.context = pytest.raises(ours)

    def __enter__(self):
        self.info = self.context.__enter__()
        return self.info

    def __exit__(self, *exc_info):
        suppressed = self.context.__exit__(*exc_info)
        error = self.info.value
        for kind in self.expected:
            assert isinstance(error, kind), f"{error!r} is not a {kind}"
        assert error.name == self.name
        return suppressed


@pytest.mark.parametrize("flavour", list(FLAVOURS))
def test_calls_out_of_turn_raise_gymnasiums_errors(make_lockstep, flavour):
    lock = make_lockstep(flavour)
    ours = lock.ours
    lock.reset()
    actions = lock.actions()
    ours.step_async(actions.copy())
    with raises_pending("step"):
        ours.step_async(actions.copy())
    with raises_pending("step"):
        ours.reset_async(seed=SEED)
    with raises_pending("step"):
        ours.call_async("pid")
    with raises_pending("step"):
        ours.call("pid")
    with raises_pending("step"):
        ours.get_attr("resets")
    with raises_pending("step"):
        ours.set_attr("delay", 0.0)
    with raises_no_call("reset"):
        ours.reset_wait()
    with raises_no_call("call"):
        ours.call_wait()
    lock.check(ours.step_wait(), lock.step_ref(actions))  # the pending step is intact
    with raises_no_call("step"):
        ours.step_wait()
    ours.reset_async(seed=SEED + 1)
    with raises_pending("reset"):
        ours.step_async(lock.actions())
    with raises_no_call("step"):
        ours.step_wait()
    assert_same(ours.reset_wait(), lock.ref.reset(seed=SEED + 1))
    ours.call_async("resets")
    with raises_pending("call"):
        ours.reset_async()
    assert ours.call_wait() == (2, 2, 2)
    for _ in range(3):
        lock.step()


CLOSED_CALLS = {
    "reset": lambda envs: envs.reset(seed=SEED),
    "reset_async": lambda envs: envs.reset_async(),
    "reset_wait": lambda envs: envs.reset_wait(),
    "step": lambda envs: envs.step(np.zeros(N, np.int64)),
    "step_async": lambda envs: envs.step_async(np.zeros(N, np.int64)),
    "step_wait": lambda envs: envs.step_wait(),
    "call": lambda envs: envs.call("pid"),
    "call_async": lambda envs: envs.call_async("pid"),
    "call_wait": lambda envs: envs.call_wait(),
    "get_attr": lambda envs: envs.get_attr("resets"),
    "set_attr": lambda envs: envs.set_attr("delay", 0.0),
    "worker_pids": lambda envs: envs.worker_pids,
}


@pytest.mark.parametrize("flavour", list(FLAVOURS))
def test_a_closed_env_raises_closed_environment_error(flavour):
    envs = FLAVOURS[flavour]([make_faulty_env] * N)
    envs.reset(seed=SEED)
    envs.close()
    envs.close()  # closing twice is fine
    for name, call in CLOSED_CALLS.items():
        with pytest.raises(ClosedEnvironmentError) as caught:
            call(envs)
        assert isinstance(caught.value, gymnasium.error.ClosedEnvironmentError), name
        assert isinstance(caught.value, plangym_errors.ClosedEnvironmentError), name


# 7. Bad input ----------------------------------------------------------------------------------
def reset_mask(mask):
    return lambda envs: envs.reset(options={"reset_mask": mask})


BAD_INPUTS = {
    "actions-too-many": (
        lambda envs: envs.step(np.zeros(N + 1, np.int64)),
        ValueError,
        r"actions: expected an array of shape \(3,\).*got shape \(4,\)",
    ),
    "actions-too-few": (lambda envs: envs.step([0, 1]), ValueError, "actions: expected 3 actions"),
    "seeds-too-few": (
        lambda envs: envs.reset(seed=[1, 2]),
        ValueError,
        "seed: expected None, an int or a list of 3 seeds",
    ),
    "seeds-too-many": (lambda envs: envs.reset(seed=[1, 2, 3, 4]), ValueError, "list of 3 seeds"),
    "seed-not-an-int": (
        lambda envs: envs.reset(seed=[5, 2.5, 6]),
        ValueError,
        r"^seed\[1\]: expected None or an int >= 0, received 2.5 \(float\)",
    ),
    "seed-negative": (
        lambda envs: envs.reset(seed=-1),
        ValueError,
        r"^seed: expected None or an int >= 0, received -1 \(int\)",  # the single env's words
    ),
    "reset-mask-list": (reset_mask([True] * N), TypeError, r"reset_mask.*numpy array"),
    "reset-mask-shape": (reset_mask(np.ones(N + 1, np.bool_)), ValueError, r"reset_mask.*shape"),
    "reset-mask-dtype": (reset_mask(np.ones(N, np.int64)), TypeError, r"reset_mask.*dtype"),
    "reset-mask-all-false": (
        reset_mask(np.zeros(N, np.bool_)),
        ValueError,
        r"reset_mask.*at least one True",
    ),
    "set-attr-count": (
        lambda envs: envs.set_attr("delay", [1.0, 1.0]),
        ValueError,
        "Values must be a list or tuple with length equal to the number of environments",
    ),
}


@pytest.mark.parametrize("case", list(BAD_INPUTS))
@pytest.mark.parametrize("flavour", list(FLAVOURS))
def test_bad_input_is_refused_before_anything_is_sent(make_lockstep, flavour, case):
    call, error, match = BAD_INPUTS[case]
    lock = make_lockstep(flavour)
    lock.reset()
    lock.step()
    with pytest.raises(error, match=match):
        call(lock.ours)
    assert lock.ours.get_attr("delay") == (0.0,) * N
    for _ in range(3):  # idle, and no sub-env was reset or stepped: still in lockstep
        lock.step()


@pytest.mark.parametrize("flavour", list(FLAVOURS))
def test_an_unknown_autoreset_mode_is_refused(flavour):
    before = live_children()
    with pytest.raises(ValueError, match="autoreset_mode: expected an AutoresetMode"):
        FLAVOURS[flavour]([make_faulty_env] * N, autoreset_mode="bogus")
    assert not live_children() - before


@pytest.mark.parametrize("flavour", list(FLAVOURS))
def test_disabled_mode_refuses_to_step_an_episode_that_ended(make_lockstep, flavour):
    lock = make_lockstep(flavour, DISABLED)
    lock.reset()
    for _ in range(20):
        got, want = lock.step(reset_ended=False)
        ended = got[2] | got[3]
        if ended.any():
            break
    assert ended.any(), "no episode ended in 20 steps"
    indices = re.escape(str(np.flatnonzero(ended).tolist()))
    with pytest.raises(RuntimeError, match=rf"sub-envs {indices} ended.*reset_mask"):
        lock.ours.step(lock.actions())
    lock.reset_ended(got, want)
    for _ in range(10):
        lock.step()


# 8. Cleanup ------------------------------------------------------------------------------------
def start_async(**kwargs):
    """An AsyncVectorEnv of :class:`FaultyEnv`, its pids and the segments it created."""
    mapped = mapped_segments()
    envs = AsyncVectorEnv([make_faulty_env] * N, **kwargs)
    envs.reset(seed=SEED)
    envs.step(np.zeros(N, np.int64))  # the action buffer too
    segments = mapped_segments() - mapped
    assert segments
    return envs, envs.worker_pids, segments


def assert_all_released(pids, segments, before: set[int]) -> None:
    """No worker lives (any this process started since ``before``); no segment is left."""
    assert wait_dead(pids), "a worker outlived close()"
    assert wait_until(lambda: not live_children() - before), live_children() - before
    assert not segments & shm_segments(), "shared memory left behind"
    assert not segments & mapped_segments()


@pytest.mark.parametrize("terminate", [False, True], ids=["close", "terminate"])
@pytest.mark.parametrize("shared_memory", [True, False], ids=["shm", "no-shm"])
def test_close_stops_the_workers_and_removes_the_shared_memory(shared_memory, terminate):
    before, existing = live_children(), shm_segments()
    envs, pids, segments = start_async(shared_memory=shared_memory)
    assert segments <= shm_segments() - existing
    envs.close(terminate=terminate)
    assert envs.closed
    assert_all_released(pids, segments, before)
    assert not segments & (shm_segments() - existing)


def test_close_collects_a_pending_step():
    before = live_children()
    envs, pids, segments = start_async()
    envs.step_async(np.array([0, 1, 2]))
    with pytest.warns(UserWarning, match="pending call to `step`"):
        envs.close()
    assert_all_released(pids, segments, before)


@pytest.mark.parametrize("terminate", [False, True], ids=["timeout", "terminate"])
def test_close_does_not_wait_for_a_slow_pending_step(terminate):
    before = live_children()
    envs, pids, segments = start_async()
    envs.step_async(np.array([0, NAP_LONG, 0]))
    start = time.monotonic()
    if terminate:
        envs.close(terminate=True)
    else:
        with pytest.warns(UserWarning, match="pending call"):
            envs.close(timeout=0.2)
    assert time.monotonic() - start < NAP_LONG_S
    assert_all_released(pids, segments, before)


def test_ctrl_c_while_close_collects_a_pending_step_stops_the_workers():
    """No worker is rebuilt for an env being closed (they were, then stopped by a second
    close())."""
    before = live_children()
    envs, pids, segments = start_async()
    envs.step_async(np.array([0, NAP_LONG, 0]))
    ctrl_c = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
    ctrl_c.start()
    with pytest.warns(UserWarning, match="pending call"), pytest.raises(KeyboardInterrupt):
        envs.close()
    ctrl_c.join()
    assert_all_released(pids, segments, before)


def test_close_from_another_thread_ends_a_step_that_hangs():
    """close() is the way out of a step whose sub-env hangs: the step raises
    ClosedEnvironmentError (it read the closed env's buffers: AttributeError)."""
    before = live_children()
    envs, pids, segments = start_async()
    envs.set_attr("nap_long_s", 600.0)
    envs.reset(seed=SEED)  # no autoreset due: sub-env 0 steps, and hangs
    closer = threading.Timer(1.0, envs.close)
    closer.start()
    with pytest.raises(ClosedEnvironmentError, match="closed while this call waited"):
        envs.step(np.array([NAP_LONG, 0, 0]))
    closer.join()
    assert_all_released(pids, segments, before)


@pytest.mark.parametrize("pending", [False, True], ids=["idle", "pending"])
def test_a_garbage_collected_env_leaves_no_worker(pending):
    before = live_children()
    envs, pids, segments = start_async()
    if pending:
        envs.step_async(np.array([0, NAP, 0]))
    del envs
    gc.collect()
    assert_all_released(pids, segments, before)
