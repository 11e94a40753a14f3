"""ParallelEnv: exact results in input order, async API, typed errors and worker faults.

Everything runs real worker processes (fork and spawn) around real gymnasium and ALE envs.
"""

import gc
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import plangym
from plangym.api_tests import assert_identical
from plangym.control import ClassicControl
from plangym.vectorization import ClosedEnvironmentError, ParallelEnv, WorkerCrashedError
from plangym.vectorization.costs import DispatchCosts
from plangym.vectorization.parallel import plan_chunks
from plangym.vectorization.scheduler import Scheduler
from tests.helpers import backend_checks as checks
from tests.helpers import vectorized_contract as contract
from tests.helpers.faulty_env import DIE, CountingCartPole, faulty_state
from tests.helpers.processes import wait_dead
from tests.helpers.subprocess_runs import run_python
from tests.helpers.vectorized_contract import assert_same_array_form, random_states

# Spawned workers import tests.helpers.faulty_env by name: they inherit this sys.path.


def worker_pids(env: ParallelEnv) -> list[int]:
    return [worker.pid for worker in env.batch_env.workers]


@pytest.fixture(scope="module", params=["fork", "spawn"])
def cartpole(request):
    env = plangym.make(
        "CartPole-v1", n_workers=3, start_method=request.param, inline_small_batches=False
    )
    yield env
    env.close()


@pytest.fixture(scope="module")
def pacman():
    env = plangym.make(
        "ALE/MsPacman-v5", n_workers=2, repeat_action_probability=0.25, inline_small_batches=False
    )
    yield env
    env.close()


@pytest.fixture(scope="module")
def faulty(tmp_path_factory):
    env = checks.faulty_vectorized_env(ParallelEnv, tmp_path_factory.mktemp("faults") / "die")
    yield env
    env.close()


def test_make_builds_a_parallel_env():
    env = plangym.make("CartPole-v1", n_workers=2)
    assert isinstance(env, ParallelEnv) and env.n_workers == 2
    assert env.obs_shape == (4,) and env.action_space.n == 2
    env.close()


def test_tab_completion_offers_what_the_env_and_the_modules_answer(pacman):
    """dir() left out the local env's attributes and the lazily loaded classes."""
    names = dir(pacman)
    assert {"get_ram", "lives", "repeat_action_probability", "step_batch_async"} <= set(names)
    assert pacman.repeat_action_probability == 0.25
    assert "RayVectorEnv" in dir(plangym.vector) and "MarioEnv" in dir(plangym.videogames)


@pytest.mark.parametrize("size", [1, 2, 3, 7, 100, 2500])
@pytest.mark.parametrize("per_element_dt", [False, True])
def test_step_batch_equals_the_single_env(cartpole, size, per_element_dt):
    contract.check_step_batch_equals_the_single_env(cartpole, size, per_element_dt)


@pytest.mark.parametrize("size", [1, 5, 64])
def test_atari_step_batch_equals_the_single_env(pacman, size):
    states = random_states(pacman.plan_env, size, seed=size)
    actions = np.random.default_rng(size).integers(pacman.n_actions, size=size)
    dts = ([1, 2, 3] * size)[:size]
    expected = pacman.plan_env.step_batch(actions, states=states, dt=dts)
    assert_identical(pacman.step_batch(actions, states=states, dt=dts), expected)


def test_atari_array_form_equals_the_single_env(pacman):
    states = random_states(pacman.plan_env, 6, seed=6)
    actions = np.random.default_rng(6).integers(pacman.n_actions, size=6)
    expected = pacman.plan_env.step_batch(actions, states=states, dt=2, arrays=True)
    result = pacman.step_batch(actions, states=states, dt=2, arrays=True)
    assert isinstance(result[1], np.ndarray) and result[1].shape == (6, 210, 160, 3)
    assert sorted(result[-1]) == sorted(expected[-1]) and "lives" in result[-1]
    assert_same_array_form(result, expected)


def test_without_states_each_worker_steps_its_chunk_from_its_own_state(cartpole):
    """After reset every worker holds the reset state; a chunk steps on from there."""
    state, actions = contract.check_stateless_chunks(cartpole)
    local = cartpole.plan_env
    # the next stateless batch continues from where each worker's chunk ended
    follow = cartpole.step_batch([1, 1, 1])
    for column, chunk_end in zip(follow[0], [2, 4, 6], strict=True):
        local.set_state(state)
        for a in actions[[0, 3, 5][[2, 4, 6].index(chunk_end)] : chunk_end + 1]:
            local.step(a)
        assert_identical(column, local.step(1)[0])


def test_a_bad_start_method_is_refused_naming_it():
    with pytest.raises(ValueError, match=r"start_method: expected one of \[.*'spawn'\]"):
        plangym.make("CartPole-v1", n_workers=2, start_method="bogus")


def test_a_batch_with_states_moves_no_env_wherever_it_runs():
    """In the caller or on the workers, later calls go on from where they were before it."""
    in_caller = DispatchCosts(2, smoothing=0.0, per_element=1e-9, overhead=1.0)
    envs = [
        ParallelEnv(ClassicControl, "CartPole-v1", n_workers=2, dispatch_costs=in_caller),
        ParallelEnv(ClassicControl, "CartPole-v1", n_workers=2, inline_small_batches=False),
    ]
    seen = []
    for env in envs:
        start, *_ = env.reset(seed=0)
        moved = env.step(0)[0]  # the local env is one step away from the workers
        env.step_batch([1] * 12, [start] * 12, dt=[1, 2, 3] * 4)  # some episodes end in it
        after = (env.get_state(), env.step_batch([0, 0, 1]), env.step(1), env.reset())
        seen.append((moved, after))
        env.close()
    assert_identical(seen[0], seen[1])


def test_an_attribute_set_for_all_workers_reaches_the_caller_env_too():
    # The caller's env steps small batches: an attribute that reached only the workers made
    # one batch step 3 frames or 1 frame by where the costs sent it.
    in_caller = DispatchCosts(2, smoothing=0.0, per_element=1e-9, overhead=1.0)
    env = ParallelEnv(ClassicControl, "CartPole-v1", n_workers=2, dispatch_costs=in_caller)
    try:
        start, *_ = env.reset(seed=0)
        env.set_attr("frameskip", 3)
        assert (env.frameskip, env.plan_env.frameskip, env.get_attr("frameskip")) == (3, 3, [3, 3])
        assert [info["n_step"] for info in env.step_batch([1, 1], [start] * 2)[-1]] == [3, 3]
        env.frameskip = 2  # the attribute itself: every env
        assert (env.plan_env.frameskip, env.get_attr("frameskip")) == (2, [2, 2])
        with pytest.raises(ValueError, match="frameskip: expected an integer >= 1, received 0"):
            env.set_attr("frameskip", 0)  # refused by the caller's env, before any worker
        assert env.get_attr("frameskip") == [2, 2]
        env.set_attr("frameskip", [1, 4])  # workers that differ: batches with states go there
        assert [info["n_step"] for info in env.step_batch([1, 1], [start] * 2)[-1]] == [1, 4]
    finally:
        env.close()


def test_a_frameskip_set_before_a_delayed_setup_builds_every_env():
    env = plangym.make("CartPole-v1", n_workers=2, delay_setup=True)
    try:
        env.frameskip = 4
        env.setup()
        assert (env.frameskip, env.plan_env.frameskip, env.get_attr("frameskip")) == (4, 4, [4, 4])
    finally:
        env.close()


def test_autoreset_set_on_the_env_reaches_the_local_env_and_every_worker():
    """It stayed on the ParallelEnv object: the envs went on resetting after an end."""
    env = plangym.make("CartPole-v1", n_workers=2)
    delayed = plangym.make("CartPole-v1", n_workers=2, delay_setup=True)
    try:
        env.autoreset = False
        assert (env.autoreset, env.plan_env.autoreset, env.get_attr("autoreset")) == (
            False,
            False,
            [False, False],
        )
        delayed.autoreset = False
        delayed.setup()
        assert (delayed.plan_env.autoreset, delayed.get_attr("autoreset")) == (False, [False] * 2)
        with pytest.raises(TypeError, match="autoreset"):
            env.autoreset = "no"
    finally:
        env.close()
        delayed.close()


def test_a_subclass_may_set_autoreset_before_the_env_is_built():
    """plangym 0.1 code did (AttributeError: _plan_env); the constructor's value wins, as
    in 0.1."""

    class EarlyAutoreset(ParallelEnv):
        def __init__(self, *args, **kwargs):
            self.autoreset = False
            super().__init__(*args, **kwargs)

    env = EarlyAutoreset(ClassicControl, "CartPole-v1", n_workers=1, autoreset=True)
    try:
        assert (env.autoreset, env.get_attr("autoreset")) == (True, [True])
    finally:
        env.close()


def test_small_cheap_batches_run_in_the_caller_with_the_same_results():
    # Costs as measured on this machine, kept fixed: ~15 us per CartPole transition,
    # ~300 us per round trip to the workers.
    costs = DispatchCosts(2, smoothing=0.0, per_element=15e-6, overhead=300e-6)
    env = ParallelEnv(CountingCartPole, "CartPole-v1", n_workers=2, dispatch_costs=costs)
    contract.check_small_cheap_batches_run_in_the_caller(env)


def test_the_dispatch_choice_counts_env_steps_not_elements():
    # Fixed costs, ~15 us per CartPole step and ~300 us per round trip: 8 states at dt=1
    # step here (120 us against 360 us), the same 8 at dt=50 on the workers (6 ms against
    # 3.3 ms), with the same results either way.
    costs = DispatchCosts(2, smoothing=0.0, per_element=15e-6, overhead=300e-6)
    env = ParallelEnv(CountingCartPole, "CartPole-v1", n_workers=2, dispatch_costs=costs)
    try:
        states = random_states(env.plan_env, 8)
        actions = [0, 1] * 4
        for dt, where in ((1, "here"), (50, "workers"), (1, "here")):
            expected = env.plan_env.clone().step_batch(actions, states=states, dt=dt)
            here, there = env.plan_env.steps_here, sum(env.get_attr("steps_here"))
            assert_identical(env.step_batch(actions, states=states, dt=dt), expected)
            ran_here = env.plan_env.steps_here - here  # dt=50 stops at each episode's end
            ran_there = sum(env.get_attr("steps_here")) - there
            assert (ran_here > 0, ran_there > 0) == (where == "here", where == "workers"), dt
        # Measured at dt=20 on the workers and at dt=1 here (the caller on one core, each
        # batch a 256-state MsPacman one): per env step the workers are faster at any dt.
        costs = DispatchCosts(2, per_element=340e-6, overhead=1e-3)
        for local_s in (0.33, 0.30):
            costs.record_remote(128, 4.0, 4.2, size=256, dt=20)
            costs.record_local(256, local_s, dt=1)
        assert not costs.prefer_local(256, dt=20) and not costs.prefer_local(256, dt=1)
    finally:
        env.close()


def test_a_cold_first_round_trip_does_not_keep_small_batches_in_the_caller():
    # A fresh ParallelEnv's first batch took 6-26 ms on the workers, later ones 0.5 ms; 8
    # states at 100 us each take 0.8 ms here. The first measurement alone kept every small
    # batch in the caller until the 256th.
    costs = DispatchCosts(2)
    remote_s, picks = iter([20e-3] + [0.5e-3] * 100), ""
    for _ in range(20):
        if costs.prefer_local(8):
            picks += "L"
            costs.record_local(8, 0.8e-3)
        else:
            picks += "R"
            costs.record_remote(4, 0.4e-3, next(remote_s))
    assert picks == "R" * 20


def where_batches_run(costs: DispatchCosts, batches: int, local_s: float, remote_s) -> str:
    """Which way each of ``batches`` batches of 256 goes ("L"/"R"), each way taking its time.

    ``remote_s``: the seconds of each batch on the workers, in turn.
    """
    picks = ""
    for _ in range(batches):
        if costs.prefer_local(256):
            picks += "L"
            costs.record_local(256, local_s)
        else:
            picks += "R"
            costs.record_remote(128, 70e-3, next(remote_s), size=256)
    return picks


def test_a_cold_first_batch_on_the_workers_does_not_keep_large_batches_in_the_caller():
    # RayEnv's W1 as measured: the actors' first batch of 256 MsPacman states took 92 ms,
    # the later ones 70-74 ms; the caller takes 87 ms.
    costs = DispatchCosts(2, per_element=340e-6, overhead=1e-3)
    picks = where_batches_run(costs, 40, 87e-3, iter([92e-3] + [72e-3] * 100))
    assert picks[:4] == "RRLL"  # each way measured twice, past its warm-up
    # Then the workers, but for the caller measured again every 16th batch (87 and 72 ms
    # are within a quarter of each other).
    assert picks[4:].replace("L", "") == "R" * 34 and picks.count("L") == 2 + 2


def test_ways_within_a_quarter_of_each_other_are_measured_again_often():
    costs = DispatchCosts(2, per_element=340e-6, overhead=1e-3)
    picks = where_batches_run(costs, 64, 80e-3, iter([88e-3] * 100))  # 10% slower there
    assert picks.count("R") == 2 + 64 // costs.probe_close  # warm-up, then every 16th


class TestCartPoleContract(checks.CartPoleContract):
    """The contract tests that run on ``cartpole`` as they are."""


def test_copy_false_hands_out_views_of_the_shared_rows_until_the_next_call():
    env = plangym.make("CartPole-v1", n_workers=2, inline_small_batches=False)
    try:
        state, *_ = env.reset()
        states, actions = [state] * 6, [0, 1] * 3
        copied = env.step_batch(actions, states=states)
        viewed = env.step_batch(actions, states=states, copy=False)
        assert_identical(copied, viewed)
        assert all(obs.base is None for obs in copied[1])  # each its own
        assert all(obs.base is not None for obs in viewed[1])  # rows of the shared buffer
        kept = [obs.copy() for obs in viewed[1]]
        later = env.step_batch([1] * 6, states=states, copy=False)
        assert np.shares_memory(viewed[1][0], later[1][0])  # the same rows, written again
        assert any((obs != old).any() for obs, old in zip(viewed[1], kept, strict=True))
        stacked = env.step_batch(actions, states=states, arrays=True, copy=False)
        assert np.array_equal(stacked[1], np.stack(kept))
        env.step_batch_async(actions, states=states, copy=False)
        assert_identical(env.step_batch_wait(), copied)
        with pytest.raises(TypeError, match="copy: expected True or False"):
            env.step_batch(actions, states=states, copy="no")
        assert_identical(env.step_batch(actions, states=states), copied)  # still usable
        single = plangym.make("CartPole-v1")  # its observations are always its own
        assert_identical(single.step_batch(actions, states=states, copy=False), copied)
    finally:
        env.close()


def test_calls_after_close_raise():
    contract.check_calls_after_close_raise(plangym.make("CartPole-v1", n_workers=2))


def test_a_poison_state_fails_the_batch_not_the_env(tmp_path):
    env = checks.faulty_vectorized_env(ParallelEnv, tmp_path / "die")
    try:
        contract.check_a_poison_state_fails_the_batch_not_the_env(env)
    finally:
        env.close()


def test_bad_input_is_rejected_before_dispatch(cartpole):
    state, *_ = cartpole.reset()
    checks.check_bad_input_is_refused(cartpole, state)
    checks.check_nothing_is_pending(cartpole, state)  # nothing was dispatched


def test_attributes_survive_a_replaced_worker(cartpole):
    contract.check_attributes_survive_a_replaced_worker(cartpole)


def test_call_get_attr_set_attr(cartpole):
    contract.check_call_get_attr_set_attr(cartpole)


def test_sync_and_set_state_reach_every_worker(cartpole):
    state = random_states(cartpole.plan_env, 5)[-1]
    cartpole.set_state(state)
    for worker_state in cartpole.call("get_state"):
        assert_identical(worker_state, state)
    cartpole.sync_states()
    assert all(bool(s == state) for s in cartpole.call("get_state"))


def test_clone_keeps_parameters():
    env = plangym.make("ALE/Pong-v5", n_workers=2, frameskip=3, obs_type="ram")
    clone = env.clone()
    assert clone.n_workers == 2 and clone.frameskip == 3 and clone.obs_type == "ram"
    assert clone.obs_shape == (128,)
    env.close()
    clone.close()


def test_worker_errors_keep_their_type_and_traceback(faulty):
    checks.check_env_errors_keep_their_type_and_traceback(faulty)


def test_a_worker_killed_mid_batch_is_replaced_and_its_chunk_rerun(faulty):
    env = faulty
    good = faulty_state(env.plan_env, 0.0)
    doomed = faulty_state(env.plan_env, DIE)
    states = [good, good, doomed, good]
    env.marker.write_text("kill once")
    before = worker_pids(env)
    result = env.step_batch([0, 1, 0, 1], states=states)
    after = worker_pids(env)
    assert before[0] == after[0] and before[1] != after[1]
    assert not env.marker.exists()
    assert_identical(result, env.plan_env.step_batch([0, 1, 0, 1], states=states))


class QueuingParallelEnv(ParallelEnv):
    """Four chunks per worker, two sent at once: chunks wait at a worker that may die."""

    def create_scheduler(self, backend):
        return Scheduler(backend, chunks_per_worker=4, queue_depth=lambda chunk_size: 2)


def test_chunks_queued_at_a_killed_worker_are_rerun_too(tmp_path):
    env = checks.faulty_vectorized_env(QueuingParallelEnv, tmp_path / "die")
    try:
        good = faulty_state(env.plan_env, 0.0)
        doomed = faulty_state(env.plan_env, DIE)
        # 512 states make 8 chunks; worker 0 gets chunks 0 and 2 and dies in chunk 0.
        assert len(plan_chunks(512, 2, has_states=True, chunks_per_worker=4)) == 8
        states = [doomed] + [good] * 511
        actions = [i % 2 for i in range(512)]
        env.marker.write_text("kill once")
        before = worker_pids(env)
        env.step_batch_async(actions, states=states)
        result = env.step_batch_wait(timeout=60)  # a lost chunk would be waited for forever
        assert worker_pids(env)[0] != before[0]
        assert not env.marker.exists()
        assert_identical(result, env.plan_env.step_batch(actions, states=states))
    finally:
        env.close()


def test_a_crash_without_states_names_the_worker(faulty):
    env = faulty
    env.set_state(faulty_state(env.plan_env, DIE))
    env.marker.write_text("kill once")
    with pytest.raises(WorkerCrashedError, match=r"worker \d \(pid \d+\) died"):
        env.step_batch([0, 1])
    good = faulty_state(env.plan_env, 0.0)
    assert len(env.step_batch([0, 1], states=[good, good])) == 6


def test_a_worker_killed_between_batches_is_noticed(faulty):
    good = faulty_state(faulty.plan_env, 0.0)
    checks.check_a_worker_killed_between_batches_is_noticed(
        faulty, good, lambda: worker_pids(faulty)
    )


@pytest.mark.parametrize(
    ("timeout", "error"), [("5", TypeError), (None, None), (float("nan"), ValueError)]
)
def test_a_bad_timeout_leaves_the_batch_pending(faulty, timeout, error):
    env = faulty
    state = faulty_state(env.plan_env, 0.0)
    env.step_batch_async([0, 1], states=[state, state])
    if error is not None:
        with pytest.raises(error, match=r"^timeout: expected None or a number of seconds"):
            env.step_batch_wait(timeout=timeout)
    result = env.step_batch_wait(timeout=float("inf"))  # inf waits as None does
    assert_identical(result, env.plan_env.step_batch([0, 1], states=[state, state]))
    promise = env.workers[0].call("get_state")  # plangym 0.1's promises check it too
    with pytest.raises(TypeError, match="timeout"):
        promise(timeout="5")
    promise(timeout=30)


def test_a_timeout_abandons_the_batch_and_leaves_the_env_usable(faulty):
    checks.check_a_timeout_abandons_the_batch(faulty, "timeout")


def test_ctrl_c_during_a_batch_leaves_the_env_usable(faulty):
    good = faulty_state(faulty.plan_env, 0.0)
    checks.check_ctrl_c_during_batches(faulty, [good] * 4000, delay=0.05, rounds=200)


def test_close_reaps_every_worker_and_blocks_further_use():
    env = plangym.make("CartPole-v1", n_workers=2)
    pids = worker_pids(env)
    env.close()
    assert wait_dead(pids, 5)
    env.close()  # idempotent
    for call in (
        lambda: env.step_batch([0]),
        env.reset,
        env.step_batch_wait,
        lambda: env.get_attr("name"),
        lambda: env.step_batch_async([0]),
    ):
        with pytest.raises(ClosedEnvironmentError):
            call()


def test_an_unclosed_env_that_is_collected_reaps_its_workers():
    env = plangym.make("CartPole-v1", n_workers=2)
    pids = worker_pids(env)
    del env
    gc.collect()
    assert wait_dead(pids, 5)


def test_workers_exit_when_their_parent_is_killed(tmp_path):
    script = textwrap.dedent(
        """
        import os, signal, plangym
        env = plangym.make("CartPole-v1", n_workers=2)
        print(" ".join(str(w.pid) for w in env.batch_env.workers), flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    done = run_python(script, timeout=60)
    pids = [int(pid) for pid in done.stdout.split()]
    assert len(pids) == 2
    assert wait_dead(pids, 5)


def test_a_child_forked_by_the_caller_leaves_its_workers_alone_when_it_exits():
    # The child inherited multiprocessing's list of the caller's workers and the backend's
    # finalizer: its exit killed the workers and removed the shared buffers, so every later
    # batch failed (and the vector face's steps raised a bare StopIteration).
    script = textwrap.dedent(
        """
        import os, sys
        import numpy as np, plangym
        from plangym.vector import AsyncVectorEnv
        env = plangym.make("CartPole-v1", n_workers=2, inline_small_batches=False)
        envs = AsyncVectorEnv([lambda: plangym.make_vec("CartPole-v1", 1, "sync").envs[0]] * 2)
        state, *_ = env.reset(seed=0)
        envs.reset(seed=0)
        before = env.step_batch([0, 1], [state, state])
        pids = [w.pid for w in env.batch_env.workers] + list(envs.worker_pids)
        child = os.fork()
        if child == 0:
            sys.exit(0)  # a normal exit: atexit handlers and finalizers run
        os.waitpid(child, 0)
        after = env.step_batch([0, 1], [state, state])
        envs.step(np.array([0, 1]))
        now = [w.pid for w in env.batch_env.workers] + list(envs.worker_pids)
        same = all(np.array_equal(a, b) for a, b in zip(before[1], after[1]))
        print(same, now == pids, flush=True)
        env.close()
        envs.close()
        """
    )
    done = run_python(script, timeout=120)
    assert done.stdout.split() == ["True", "True"], done.stderr
    assert "Traceback" not in done.stderr, done.stderr


def test_repeated_make_and_close_leak_nothing():
    def open_fds() -> int:
        return len(os.listdir("/proc/self/fd"))

    def children() -> int:
        return len(Path(f"/proc/{os.getpid()}/task/{os.getpid()}/children").read_text().split())

    def mapped_segments() -> set[str]:
        return set(re.findall(r"/dev/shm/(psm_\w+)", Path("/proc/self/maps").read_text()))

    env = plangym.make("CartPole-v1", n_workers=2)
    env.step_batch([0, 1, 0])
    env.close()
    fds, kids, used, others = open_fds(), children(), set(), mapped_segments()
    for _ in range(8):
        env = plangym.make("CartPole-v1", n_workers=2)
        env.step_batch([0, 1, 0], states=[env.get_state()] * 3)
        used |= mapped_segments() - others  # not those of envs of other tests still open
        env.close()
    assert open_fds() <= fds
    assert children() <= kids
    assert used  # the envs' buffers, each removed by its close()
    assert not used & {name for name in os.listdir("/dev/shm")}


KILLED_WITH_ITS_WORKERS = """
import re, sys, time
from pathlib import Path
import plangym
env = plangym.make("CartPole-v1", n_workers=2)
env.step_batch([0, 1, 0], states=[env.get_state()] * 3)
print(" ".join(set(re.findall(r"/dev/shm/(\\S+)", Path("/proc/self/maps").read_text()))))
sys.stdout.flush()
time.sleep(600)
"""


def test_blocks_of_a_caller_killed_with_its_workers_are_removed_by_the_next():
    """SIGKILL to the process group (Jupyter's "kill kernel") ends the caller, its workers
    and its resource tracker at once; the blocks are removed when workers next start."""
    import signal

    child = subprocess.Popen(
        [sys.executable, "-c", KILLED_WITH_ITS_WORKERS],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        blocks = child.stdout.readline().split()
        # Checked before the kill: once the caller is dead, any process of the machine that
        # starts workers (another test running in parallel) may remove them.
        assert set(blocks) <= set(os.listdir("/dev/shm"))
    finally:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait(30)
        child.stdout.close()
    assert blocks and all(f"_{child.pid}_" in name for name in blocks), blocks
    env = plangym.make("CartPole-v1", n_workers=2)
    env.close()
    assert not set(blocks) & set(os.listdir("/dev/shm"))


def test_env_classes_defined_in_user_code_reach_spawned_workers():
    class DoubledReward(ClassicControl):
        def process_reward(self, reward, **kwargs):
            return 2 * reward

    env = ParallelEnv(DoubledReward, "CartPole-v1", n_workers=2, start_method="spawn")
    state, *_ = env.reset()
    _, _, rewards, *_ = env.step_batch([0, 1, 0], states=[state] * 3)
    assert rewards == [2.0, 2.0, 2.0]
    env.close()


def test_a_script_without_a_main_guard_is_told_why_its_spawned_workers_died(tmp_path):
    """Spawned workers import the script again and die; the caller's error says why."""
    script = tmp_path / "unguarded.py"
    script.write_text(  # notes printed here: Python 3.10 keeps them but does not print them
        "import plangym\n"
        "try:\n"
        '    plangym.make("CartPole-v1", n_workers=2, start_method="spawn")\n'
        "except Exception as error:\n"
        '    print(getattr(error, "__notes__", []))\n'
        "    raise\n"
    )
    run = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, check=False
    )
    assert run.returncode == 1
    assert "WorkerCrashedError" in run.stderr, run.stderr[-2000:]
    assert "needs its code under `if __name__ == '__main__':`" in run.stdout


def test_pickling_says_the_workers_cannot_travel(cartpole):
    import copy
    import pickle

    with pytest.raises(TypeError, match=r"ParallelEnv cannot be pickled .* clone\(\)"):
        pickle.dumps(cartpole)
    with pytest.raises(TypeError, match="cannot be pickled or deep-copied"):
        copy.deepcopy(cartpole)
    assert pickle.loads(pickle.dumps(cartpole.plan_env)).name == "CartPole-v1"
    cartpole.step_batch([0], states=[cartpole.reset()[0]])  # still usable
