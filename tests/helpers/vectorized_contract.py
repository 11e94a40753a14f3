"""Checks every vectorized backend (ParallelEnv, RayEnv) must pass, written once.

Each takes a vectorized CartPole env with 3 workers whose local env is ``env.plan_env``.
"""

import os
import signal
import time

import numpy as np
import pytest

from plangym.api_tests import assert_identical
from plangym.vectorization import (
    AlreadyPendingCallError,
    ClosedEnvironmentError,
    NoAsyncCallError,
    WorkerCrashedError,
)
from tests.helpers.faulty_env import POISON, faulty_state
from tests.helpers.processes import wait_dead


def random_states(env, n: int, seed: int = 0) -> list:
    """``n`` states along a random trajectory of ``env`` (seeded)."""
    rng = np.random.default_rng(seed)
    env.seed(seed)
    env.reset()
    states = []
    for _ in range(n):
        env.step(env.sample_action() if rng.random() < 0.5 else env.action_space.sample())
        states.append(env.get_state())
    return states


def check_step_batch_equals_the_single_env(env, size: int, per_element_dt: bool) -> None:
    """Results with and without returned states equal the local env's, bit for bit."""
    states = random_states(env.plan_env, size, seed=size)
    rng = np.random.default_rng(size)
    actions = rng.integers(2, size=size)
    dt = rng.integers(1, 4, size=size).tolist() if per_element_dt else 2
    expected = env.plan_env.step_batch(actions, states=states, dt=dt)
    assert_identical(env.step_batch(actions, states=states, dt=dt), expected)
    no_states = env.step_batch(actions, states=states, dt=dt, return_state=False)
    assert_identical(no_states, expected[1:])


def check_stateless_chunks(env) -> tuple:
    """After reset, each of the 3 workers steps its chunk of a stateless batch from there.

    Returns the reset state and the actions, for checks of what follows.
    """
    state, *_ = env.reset()
    actions = [0, 1, 1, 0, 1, 0, 0]  # chunks of 3 workers: [0:3] [3:5] [5:7]
    result = env.step_batch(actions)
    local = env.plan_env
    expected = []
    for start, stop in [(0, 3), (3, 5), (5, 7)]:
        local.set_state(state)
        expected.extend(local.step(a) for a in actions[start:stop])
    assert_identical(result, tuple(list(c) for c in zip(*expected, strict=True)))
    return state, actions


def check_async_api(env) -> None:
    """The pending-call state machine and its typed errors."""
    state, *_ = env.reset()
    with pytest.raises(NoAsyncCallError, match="without any prior call to `step_batch_async`"):
        env.step_batch_wait()
    env.step_batch_async([0, 1, 1, 0], states=[state] * 4)
    with pytest.raises(AlreadyPendingCallError):
        env.step_batch_async([0], states=[state])
    with pytest.raises(AlreadyPendingCallError):
        env.step_batch([0], states=[state])
    with pytest.raises(AlreadyPendingCallError):
        env.sync_states()
    result = env.step_batch_wait(timeout=60)
    assert_identical(result, env.plan_env.step_batch([0, 1, 1, 0], states=[state] * 4))
    with pytest.raises(NoAsyncCallError):
        env.step_batch_wait()


def check_call_get_attr_set_attr(env) -> None:
    """Whole-env requests reach the env of each of the 3 workers."""
    assert env.get_attr("frameskip") == [1, 1, 1]
    env.set_attr("autoreset", [False, True, False])
    assert env.get_attr("autoreset") == [False, True, False]
    env.set_attr("autoreset", True)
    assert env.get_attr("autoreset") == [True] * 3
    clones = env.call("clone", frameskip=2)  # envs travel back as constructor + state
    assert [type(c).__name__ for c in clones] == ["ClassicControl"] * 3
    assert all(c.frameskip == 2 for c in clones)
    assert all(s.dtype == env.plan_env.state_dtype for s in env.call("get_state"))
    with pytest.raises(ValueError, match="values: expected 3 values"):
        env.set_attr("autoreset", [True])


def check_attributes_survive_a_replaced_worker(env) -> None:
    """A worker that replaces a dead one gets the attributes set on it: a batch re-run
    there steps as the dead one would have (it used to step with the constructor's values).
    """
    env.set_attr("frameskip", 3)
    try:
        state, *_ = env.reset(seed=1)
        expected = env.plan_env.step_batch([0, 1, 0, 1, 1, 0], [state] * 6)
        dead = env.scheduler.backend.worker_pids[1]
        os.kill(dead, signal.SIGKILL)
        assert wait_dead([dead], 30)
        assert_identical(env.step_batch([0, 1, 0, 1, 1, 0], [state] * 6), expected)
        assert env.scheduler.backend.worker_pids[1] != dead
        assert env.get_attr("frameskip") == [3, 3, 3]
    finally:
        env.set_attr("frameskip", 1)


def check_a_poison_state_fails_the_batch_not_the_env(env) -> None:
    """A state that kills every worker stepping it: a bounded number of re-runs, then
    WorkerCrashedError naming its elements; the env stays usable. ``env`` is a 2-worker
    vectorized FaultyCartPole."""
    good = faulty_state(env.plan_env, 0.0)
    poison = faulty_state(env.plan_env, POISON)
    env.step_batch_async([0, 0, 1, 0], states=[good, good, poison, good])
    started = time.monotonic()
    with pytest.raises(WorkerCrashedError, match=r"elements 2\.\.3 .*re-run"):
        env.step_batch_wait(timeout=60)  # without a cap: re-runs until the timeout
    assert time.monotonic() - started < 30
    expected = env.plan_env.step_batch([0, 1, 0, 1], states=[good] * 4)
    assert_identical(env.step_batch([0, 1, 0, 1], states=[good] * 4), expected)


def refusable_calls(env, state) -> dict:
    """Every public call that must refuse to run while a batch is pending or after close."""
    return {
        "step": lambda: env.step(0),
        "step from a state": lambda: env.step(0, state=state),
        "step_batch": lambda: env.step_batch([0], states=[state]),
        "step_batch_async": lambda: env.step_batch_async([0], states=[state]),
        "make_transitions": lambda: env.make_transitions([0], [state]),
        "run_batch": lambda: env.run_batch([0], [state], [1], True),
        "step_with_dt": lambda: env.step_with_dt(0, 2),
        "reset": env.reset,
        "get_state": env.get_state,
        "set_state": lambda: env.set_state(state),
        "sync_states": lambda: env.sync_states(state),
        "sample_action": env.sample_action,
        "call": lambda: env.call("get_state"),
        "get_attr": lambda: env.get_attr("name"),
        "set_attr": lambda: env.set_attr("autoreset", True),
    }


def check_refused_calls_change_nothing(env) -> None:
    """While a batch is pending every other call raises AlreadyPendingCallError before it
    touches anything: the local env keeps its state, the batch its result."""
    state, *_ = env.reset()
    other = random_states(env.plan_env, 3, seed=5)[-1]
    env.step_batch_async([0, 1], states=[state, state])
    local = env.plan_env.get_state()
    for name, call in refusable_calls(env, other).items():
        with pytest.raises(AlreadyPendingCallError):
            call()
        assert bool(env.plan_env.get_state() == local), f"{name} changed the local env"
    result = env.step_batch_wait(timeout=60)
    assert_identical(result, env.plan_env.step_batch([0, 1], states=[state, state]))


def check_calls_after_close_raise(env) -> None:
    """After close() every call raises ClosedEnvironmentError (close itself is idempotent)."""
    state = env.plan_env.get_state()
    env.close()
    env.close()
    calls = {**refusable_calls(env, state), "step_batch_wait": env.step_batch_wait}
    for name, call in calls.items():
        with pytest.raises(ClosedEnvironmentError):
            call()
            pytest.fail(f"{name} ran after close()")


def check_inherited_batch_methods_work(env) -> None:
    """run_batch and step_with_dt, inherited from PlanEnv, work on the vectorized env."""
    states = random_states(env.plan_env, 5, seed=11)
    single = env.plan_env.clone()
    expected = single.step_batch([0, 1, 1, 0, 1], states=states, dt=2)
    assert_identical(env.run_batch([0, 1, 1, 0, 1], states, [2] * 5, True), expected)
    env.set_state(states[0])
    single.set_state(states[0])
    assert_identical(env.step_with_dt(1, 3), single.step_with_dt(1, 3))


def check_small_cheap_batches_run_in_the_caller(env) -> None:
    """A vectorized ``CountingCartPole`` whose fixed costs favour the caller for 8 states.

    The batch runs in the caller, a big one on the workers, and results are the same.
    """
    try:
        states = random_states(env.plan_env, 8)
        actions = [0, 1] * 4
        expected = env.plan_env.clone().step_batch(actions, states=states)
        here, there = env.plan_env.steps_here, sum(env.get_attr("steps_here"))
        assert_identical(env.step_batch(actions, states=states), expected)
        assert env.plan_env.steps_here == here + 8  # ran here
        env.step_batch([0] * 4096, states=[states[0]] * 4096)  # a big batch goes out
        assert sum(env.get_attr("steps_here")) == there + 4096
        env.inline_small_batches = False
        assert_identical(env.step_batch(actions, states=states), expected)
        assert sum(env.get_attr("steps_here")) == there + 4096 + 8
    finally:
        env.close()


def check_the_array_form_equals_the_single_env(env) -> None:
    """``arrays=True`` gives the single env's arrays, from a list or a record array of states.

    With ``copy=False`` too (observations that may be views of a backend's shared rows).
    """
    size = 40  # above the kernels' threshold: both sides step in NumPy passes
    states = random_states(env.plan_env, size, seed=3)
    actions = np.random.default_rng(3).integers(2, size=size)
    dts = [1, 2, 3, 1] * (size // 4)
    expected = env.plan_env.step_batch(actions, states=states, dt=dts, arrays=True)
    records = expected[0]
    assert isinstance(records, np.ndarray) and records.dtype.names is not None
    for given in (states, env.plan_env.step_batch([0] * size, states, arrays=True)[0]):
        if given is not states:
            expected = env.plan_env.step_batch(actions, states=given, dt=dts, arrays=True)
        result = env.step_batch(actions, states=given, dt=dts, arrays=True)
        assert_same_array_form(result, expected)
        viewed = env.step_batch(actions, states=given, dt=dts, arrays=True, copy=False)
        assert_same_array_form(viewed, expected)  # views where a backend has shared rows
        no_states = env.step_batch(actions, states=given, dt=dts, arrays=True, return_state=False)
        assert_same_array_form(no_states, expected[1:])
    # No walker left: arrays of no row, of the same dtypes and row shapes, as the single env's.
    for stepper in (env, env.plan_env):
        nothing = stepper.step_batch([], states=[], arrays=True)
        for column, full in zip(nothing[:-1], expected[:-1], strict=True):
            assert (column.shape, column.dtype) == ((0, *full.shape[1:]), full.dtype)
        assert nothing[0].flags.writeable is False and nothing[-1] == {}


def assert_same_array_form(result: tuple, expected: tuple) -> None:
    """Two ``step_batch(..., arrays=True)`` results are equal: types, dtypes and bytes."""
    assert len(result) == len(expected)
    assert_identical(result[:-1], expected[:-1])
    infos, expected_infos = result[-1], expected[-1]
    assert type(infos) is type(expected_infos)
    if isinstance(infos, dict):
        assert list(infos) == list(expected_infos)
        for key, values in infos.items():
            assert values.dtype == expected_infos[key].dtype, key
            assert values.tobytes() == expected_infos[key].tobytes(), key
    else:
        assert_identical(infos, expected_infos)
