"""Tests and checks that ``ParallelEnv`` and ``RayEnv`` share, beyond ``vectorized_contract``.

* ``CartPoleContract``: the contract tests that take a module's ``cartpole`` fixture (a
  vectorized CartPole with 3 workers) as they are; a backend's module subclasses it as
  ``TestCartPoleContract`` to run them on its own fixture.
* ``faulty_vectorized_env``: two workers of ``FaultyCartPole``, and the checks of how a
  vectorized env of them survives errors, kills, timeouts and Ctrl-C.
* ``check_bad_input_is_refused``: what every backend refuses before it dispatches.

The fresh-interpreter scenarios of test_clean_stderr import this module too.
"""

import os
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from plangym.api_tests import assert_identical
from plangym.vectorization import NoAsyncCallError
from plangym.vectorization.errors import RemoteTraceback
from tests.helpers import vectorized_contract as contract
from tests.helpers.faulty_env import HANG, RAISE, CartError, FaultyCartPole, faulty_state
from tests.helpers.processes import wait_dead


class CartPoleContract:
    """Contract tests on the ``cartpole`` fixture of the module that subclasses this."""

    def test_the_array_form_equals_the_single_env(self, cartpole):
        contract.check_the_array_form_equals_the_single_env(cartpole)

    def test_async_api_and_its_errors(self, cartpole):
        contract.check_async_api(cartpole)

    def test_refused_calls_change_nothing(self, cartpole):
        contract.check_refused_calls_change_nothing(cartpole)

    def test_inherited_batch_methods_work(self, cartpole):
        contract.check_inherited_batch_methods_work(cartpole)


def faulty_vectorized_env(env_class: type, marker: Path) -> Any:
    """A ``env_class`` of two FaultyCartPole workers whose DIE and PAUSE states need ``marker``.

    Each DIE or PAUSE fault happens once per ``marker`` written (``env.marker``).
    """
    env = env_class(
        FaultyCartPole,
        "CartPole-v1",
        n_workers=2,
        die_marker=str(marker),
        inline_small_batches=False,
    )
    env.marker = marker
    return env


def assert_steps_like_the_single_env(env, actions: list, states: list) -> None:
    """``env.step_batch`` returns bit for bit what its local env returns."""
    expected = env.plan_env.step_batch(actions, states=states)
    assert_identical(env.step_batch(actions, states=states), expected)


def check_env_errors_keep_their_type_and_traceback(env) -> CartError:
    """A worker's error reaches the caller with its type and traceback; the env goes on.

    Returns the error raised.
    """
    good, cursed = faulty_state(env.plan_env, 0.0), faulty_state(env.plan_env, RAISE)
    with pytest.raises(CartError, match="is cursed") as caught:
        env.step_batch([0, 1, 0, 1], states=[good, good, cursed, good])
    assert isinstance(caught.value.__cause__, RemoteTraceback)
    assert "apply_action" in str(caught.value.__cause__)
    assert_steps_like_the_single_env(env, [0, 1, 0, 1], [good] * 4)  # still usable, exact
    return caught.value


def check_a_worker_killed_between_batches_is_noticed(
    env, state, worker_pids: Callable[[], list[int]]
) -> None:
    """SIGKILL worker 0 while idle: the next batch replaces it and is exact.

    ``worker_pids()``: the pids of the env's workers as they are now.
    """
    victim = worker_pids()[0]
    os.kill(victim, signal.SIGKILL)
    assert wait_dead([victim])
    result = env.step_batch([1, 0, 1], states=[state] * 3)
    assert victim not in worker_pids()
    assert_identical(result, env.plan_env.step_batch([1, 0, 1], states=[state] * 3))


def check_a_timeout_abandons_the_batch(env, message: str) -> None:
    """A wait that times out raises at once (``message`` matches it); the env goes on."""
    good, stuck = faulty_state(env.plan_env, 0.0), faulty_state(env.plan_env, HANG)
    env.step_batch_async([0, 0], states=[good, stuck])
    started = time.monotonic()
    with pytest.raises(TimeoutError, match=message):
        env.step_batch_wait(timeout=0.5)
    assert time.monotonic() - started < 10
    assert_steps_like_the_single_env(env, [0, 1], [good, good])


def check_ctrl_c_during_batches(env, states: list, delay: float, rounds: int) -> None:
    """Ctrl-C after ``delay`` s, while up to ``rounds`` batches of ``states`` run, reaches
    the caller; then the env steps exactly.
    """
    good = faulty_state(env.plan_env, 0.0)
    actions = [i % 2 for i in range(len(states))]
    timer = threading.Timer(delay, os.kill, args=(os.getpid(), signal.SIGINT))
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        for _ in range(rounds):
            env.step_batch(actions, states=states)
    timer.join()
    assert_steps_like_the_single_env(env, [0, 1, 1], [good] * 3)


def check_bad_input_is_refused(env, state) -> None:
    """Bad actions, states and dts raise naming what is wrong (before any dispatch)."""
    with pytest.raises(ValueError, match=r"actions\[1\]: expected an integer in \[0, 2\)"):
        env.step_batch_async([0, 5], states=[state, state])
    with pytest.raises(TypeError, match=r"states\[0\]"):
        env.step_batch([0], states=[np.zeros(3)])
    with pytest.raises(ValueError, match="dt"):
        env.step_batch([0, 1], states=[state, state], dt=[1, 0])


def check_nothing_is_pending(env, state) -> None:
    """No call is pending and the workers answer at once."""
    with pytest.raises(NoAsyncCallError):
        env.step_batch_wait()
    assert len(env.step_batch([0, 1], states=[state, state])) == 6


def close_during_a_hung_call(env) -> tuple[list[BaseException], float]:
    """Close ``env`` (2 FaultyCartPole workers) from this thread while another thread's
    batch hangs in both workers; return what that call raised and how long close() took."""
    hang = faulty_state(env.plan_env, HANG)
    outcome: list[BaseException] = []

    def hung_call():
        try:
            env.step_batch([0, 1], states=[hang, hang])
        except BaseException as error:
            outcome.append(error)

    caller = threading.Thread(target=hung_call)
    caller.start()
    time.sleep(1.0)  # both workers sleep in the hanging step
    started = time.monotonic()
    env.close()
    took = time.monotonic() - started
    caller.join(60)
    assert not caller.is_alive(), "the waiting call did not end"
    return outcome, took
