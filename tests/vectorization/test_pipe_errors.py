"""Errors on a worker's pipe leave the env usable, exact and with its workers.

Each end of a pipe keeps state about the other (the buffers mapped, the states' dtype, the
replies awaited). A message that fails to go out or to be read must not leave them
disagreeing, and a request that was never sent must not cost a worker its env.
"""

from __future__ import annotations

import sys
import threading

import numpy as np
import pytest

from plangym.api_tests import assert_identical
from plangym.vector import AsyncVectorEnv
from plangym.vectorization import ParallelEnv
from plangym.vectorization.compat import ExternalProcess
from plangym.vectorization.messages import GetAttr
from plangym.vectorization.ray_actor import PackedError
from plangym.vectorization.wire import error_payload
from tests.helpers.pipe_env import (
    THING_MODULE,
    PipeEnv,
    caller_only_thing,
    make_pipe_sub_env,
    write_thing_module,
)


@pytest.fixture
def env_and_reference():
    """A ParallelEnv of PipeEnvs on 2 workers, the single env, and a batch to step."""
    env = ParallelEnv(PipeEnv, "CartPole-v1", n_workers=2, inline_small_batches=False)
    single = PipeEnv("CartPole-v1")
    state, *_ = single.reset()
    try:
        yield env, single, [0, 1] * 20, [state] * 40
    finally:
        env.close()


def worker_pids(env: ParallelEnv) -> list[int | None]:
    return [worker.pid for worker in env.workers]


def test_a_reply_the_caller_cannot_unpickle_leaves_the_pipe_usable(env_and_reference, tmp_path):
    """That reply carried the states' dtype: every later batch failed without it."""
    env, single, actions, states = env_and_reference
    write_thing_module(str(tmp_path))
    env.set_attr("module_dir", str(tmp_path))
    env.set_attr("mode", "worker_only")
    with pytest.raises(ModuleNotFoundError, match=THING_MODULE) as raised:
        env.step_batch(actions, states)
    assert "reply could not be unpickled here" in "\n".join(raised.value.__notes__)
    assert THING_MODULE not in sys.modules
    env.set_attr("mode", None)
    for _ in range(2):
        assert_identical(env.step_batch(actions, states), single.step_batch(actions, states))


def test_a_first_batch_the_worker_cannot_unpickle_leaves_the_pipe_usable(
    env_and_reference, tmp_path
):
    """That request carried the states' dtype: the worker never learnt it, and every later
    batch failed without it."""
    env, single, actions, states = env_and_reference
    with (
        caller_only_thing(str(tmp_path)) as thing,
        pytest.raises(ModuleNotFoundError, match=THING_MODULE),
    ):
        env.step_batch([thing] * len(states), states)
    for _ in range(2):
        assert_identical(env.step_batch(actions, states), single.step_batch(actions, states))


def test_buffers_a_worker_could_not_map_are_mapped_once_it_can(env_and_reference):
    """An env out of file descriptors cannot map the grown shared buffers; once it has
    them back, the next batch must work (both ends had recorded the buffers as mapped)."""
    env, single, actions, states = env_and_reference
    env.step_batch(actions[:4], states[:4])  # buffers for a small batch
    env.call("limit_fds", True)
    with pytest.raises(OSError) as raised:
        env.step_batch(actions, states)  # they grow: new blocks to map
    assert "could not map the caller's shared buffers" in "\n".join(raised.value.__notes__)
    env.call("limit_fds", False)
    for _ in range(2):
        assert_identical(env.step_batch(actions, states), single.step_batch(actions, states))


def test_an_argument_that_cannot_be_pickled_costs_no_worker(env_and_reference):
    env, single, actions, states = env_and_reference
    pids = worker_pids(env)
    for call in (
        lambda: env.set_attr("lock", threading.Lock()),
        lambda: env.call("process_info", {"lock": threading.Lock()}),
    ):
        with pytest.raises(TypeError) as raised:
            call()
        assert "could not be sent to worker 0, so it did not run" in str(raised.value.__notes__)
    assert worker_pids(env) == pids
    assert_identical(env.step_batch(actions, states), single.step_batch(actions, states))


def test_a_request_the_worker_cannot_unpickle_is_its_error(env_and_reference, tmp_path):
    """A class the workers cannot import (as one a notebook defines after they started):
    the worker answers with the error, at once, and lives on."""
    env, single, actions, states = env_and_reference
    pids = worker_pids(env)
    with (
        caller_only_thing(str(tmp_path)) as thing,
        pytest.raises(ModuleNotFoundError, match=THING_MODULE),
    ):
        env.call("process_info", {"thing": thing})
    assert worker_pids(env) == pids
    assert_identical(env.step_batch(actions, states), single.step_batch(actions, states))


def test_a_keyboard_interrupt_raised_by_an_env_is_its_error(env_and_reference):
    """Raised in a worker, it is the env's error (the worker stays), not a Ctrl-C of the
    caller's that gives every busy worker up."""
    env, single, actions, states = env_and_reference
    pids = worker_pids(env)
    env.set_attr("mode", "interrupt")
    with pytest.raises(KeyboardInterrupt, match="raised by the env") as raised:
        env.step_batch(actions, states)
    assert "the env is still usable" in raised.value.__notes__[-1]
    assert worker_pids(env) == pids
    env.set_attr("mode", None)
    assert_identical(env.step_batch(actions, states), single.step_batch(actions, states))


def test_an_error_of_a_class_only_the_worker_imports_keeps_its_message(env_and_reference, tmp_path):
    env, single, actions, states = env_and_reference
    write_thing_module(str(tmp_path))
    env.set_attr("module_dir", str(tmp_path))
    env.set_attr("mode", "worker_only_error")
    message = rf"^{THING_MODULE}\.Failure: the pole fell off"
    with pytest.raises(RuntimeError, match=message) as raised:
        env.step_batch(actions, states)
    assert "Failure" in str(raised.value.__cause__)  # the worker's traceback
    assert THING_MODULE not in sys.modules
    env.set_attr("mode", None)
    assert_identical(env.step_batch(actions, states), single.step_batch(actions, states))


def test_a_sub_env_raising_keyboard_interrupt_leaves_the_others_episodes_alone(recwarn):
    envs = AsyncVectorEnv([make_pipe_sub_env] * 2)
    try:
        envs.reset(seed=5)
        envs.step(np.array([0, 1]))
        pids = envs.call("pid")
        envs.set_attr("mode", ["interrupt", None])
        with pytest.raises(KeyboardInterrupt, match="raised by the env"):
            envs.step(np.array([0, 1]))
        envs.set_attr("mode", None)
        _, _, _, truncated, infos = envs.step(np.array([0, 1]))
        assert envs.call("pid") == pids
        assert not truncated.any() and "worker_restarted" not in infos
    finally:
        envs.close()


def test_an_error_whose_message_cannot_be_read_still_reaches_the_caller():
    class UnreadableError(Exception):
        lock = threading.Lock()  # cannot be pickled

        def __reduce__(self):
            raise TypeError("no")

        def __str__(self):
            raise ValueError("no message")

    try:
        raise UnreadableError()
    except UnreadableError as error:
        stand_in, text = error_payload(error)
    assert str(stand_in) == "UnreadableError: <the message could not be read>"
    assert "UnreadableError" in text


def test_a_ray_actors_error_of_a_class_the_caller_lacks_keeps_its_message(tmp_path):
    """Ray's actors pack their errors as the pipe's workers do: the message arrives."""
    with caller_only_thing(str(tmp_path)):
        try:
            raise __import__(THING_MODULE).Failure("out of fuel")
        except Exception as error:
            packed = PackedError.current(error)
    error = packed.unpack()  # the module is gone, as in a caller that never imported it
    assert isinstance(error, RuntimeError)
    assert str(error).startswith(f"{THING_MODULE}.Failure: out of fuel (raised in a worker")
    assert "out of fuel" in error.__cause__.text


def test_plangym_01_promises_are_read_once_and_in_order():
    worker = ExternalProcess(lambda: PipeEnv("CartPole-v1", frameskip=3))
    try:
        first, second = worker.get_attr("frameskip"), worker.get_attr("name")
        assert second() == "CartPole-v1" and second() == "CartPole-v1"
        with pytest.raises(RuntimeError, match="was read already"):
            first(timeout=5)  # it was read and dropped: no wait for ever
        assert worker.receive(worker.send(GetAttr("frameskip"))) == 3
    finally:
        worker.close()
