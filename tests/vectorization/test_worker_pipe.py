"""A worker left without a pipe counts as dead, and error notes work on Python 3.10 too."""

import os
import threading
import types

import pytest

from plangym.api_tests import assert_identical
from plangym.control import ClassicControl
from plangym.validation import values as values_module
from plangym.vectorization import ParallelEnv, WorkerCrashedError
from plangym.vectorization.messages import GetAttr
from plangym.vectorization.process import WorkerProcess


def test_a_worker_without_a_pipe_raises_worker_crashed():
    worker = WorkerProcess(lambda: ClassicControl("CartPole-v1"))
    try:
        worker.terminate()  # what a restart that fails to start a process leaves behind
        with pytest.raises(WorkerCrashedError):
            worker.send(GetAttr("frameskip"))
        worker.restart()
        assert worker.receive(worker.send(GetAttr("frameskip"))) == 1
    finally:
        worker.close()


def test_a_worker_reaped_by_another_thread_is_reported_dead():
    """close() in another thread closes the process object while a call still reads the
    pipe: describing the death must not raise (a ValueError hid ClosedEnvironmentError)."""
    worker = WorkerProcess(lambda: ClassicControl("CartPole-v1"))
    process = worker._process
    try:
        process.kill()
        process.join()
        process.close()  # as terminate() in close()'s thread does, before it drops it
        assert worker.pid is None and not worker.is_alive
        assert isinstance(worker.crashed(), WorkerCrashedError)
    finally:
        worker._process = None  # already reaped above
        worker.terminate()


def test_the_next_batch_replaces_a_worker_without_a_pipe():
    single = ClassicControl("CartPole-v1")
    env = ParallelEnv(ClassicControl, "CartPole-v1", n_workers=2, inline_small_batches=False)
    try:
        state, *_ = single.reset()
        actions, states = [0, 1] * 8, [state] * 16
        env.workers[0].terminate()
        assert_identical(
            env.step_batch(actions, states), single.step_batch(actions, states), "step_batch"
        )
    finally:
        env.close()


def test_notes_are_kept_without_add_note(monkeypatch):
    # Python 3.10 has no BaseException.add_note: the notes go where 3.11 keeps them.
    monkeypatch.setattr(values_module, "sys", types.SimpleNamespace(version_info=(3, 10)))
    error = ValueError("bad")
    values_module.add_note(error, "first")
    values_module.add_note(error, "second")
    assert error.__notes__ == ["first", "second"]


def test_a_worker_whose_env_is_never_built_times_out(monkeypatch):
    """A worker that never sends its ready reply (a deadlocked build) ends the wait."""
    import time

    from plangym.vectorization import process

    monkeypatch.setattr(process, "READY_TIMEOUT", 1.0)
    worker = WorkerProcess(lambda: time.sleep(600), wait_ready=False)
    try:
        with pytest.raises(TimeoutError, match=r"worker 0: .* not built within 1 s .*'spawn'"):
            worker.wait_ready()
    finally:
        worker.terminate()
    assert not worker.is_alive


class InfoWithALock(ClassicControl):
    """CartPole whose infos cannot be pickled while the file ``poison`` exists."""

    def __init__(self, *args, poison: str = "", **kwargs):
        self.poison = poison
        super().__init__(*args, **kwargs)

    def process_info(self, info, **kwargs):
        info = super().process_info(info, **kwargs)
        if os.path.exists(self.poison):
            info["lock"] = threading.Lock()
        return info


def test_a_reply_that_cannot_be_pickled_leaves_the_pipe_usable(tmp_path):
    """The worker's first states announce their dtype; when their reply could not be sent,
    the next one must announce it again (every later batch failed on an assertion)."""
    poison = tmp_path / "poison"
    poison.touch()
    single = ClassicControl("CartPole-v1")
    env = ParallelEnv(InfoWithALock, "CartPole-v1", n_workers=2, poison=str(poison))
    try:
        state, *_ = single.reset()
        actions, states = [0, 1] * 4, [state] * 8
        with pytest.raises(TypeError, match="lock"):
            env.step_batch(actions, states)
        poison.unlink()
        for _ in range(2):
            assert_identical(
                env.step_batch(actions, states), single.step_batch(actions, states), "batch"
            )
    finally:
        env.close()
