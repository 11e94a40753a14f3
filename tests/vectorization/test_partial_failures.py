"""A call that fails on some workers and not on others: the caller's books follow what each
worker did, so that later calls are right (attributes a replacement gets again, which sub-envs
ended their episodes, where a batch may run)."""

from __future__ import annotations

import functools
import os
import signal
import threading

import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import plangym
from plangym.api_tests import assert_identical
from plangym.vector import AsyncVectorEnv, SubEnvCrashedError, SyncVectorEnv
from plangym.vectorization import ParallelEnv
from tests.helpers.pipe_env import PipeEnv, make_pipe_sub_env
from tests.helpers.processes import wait_dead
from tests.helpers.vector_faulty_env import RAISE, FaultError, make_faulty_env


def kill(pid: int) -> None:
    os.kill(pid, signal.SIGKILL)
    assert wait_dead([pid]), f"worker {pid} survived SIGKILL"


def test_a_value_a_sub_env_took_survives_its_rebuild_when_another_refused_its_own(recwarn):
    envs = AsyncVectorEnv([make_pipe_sub_env] * 2)
    try:
        envs.reset(seed=0)
        with pytest.raises(ValueError, match="frameskip"):
            envs.set_attr("frameskip", [3, 0])  # sub-env 1 refuses 0
        kill(envs.worker_pids[0])
        envs.step(np.array([0, 0]))  # sub-env 0 is rebuilt
        assert envs.get_attr("frameskip") == (3, 1)
    finally:
        envs.close()


def test_a_set_attr_whose_worker_died_is_set_on_its_replacement(recwarn):
    envs = AsyncVectorEnv([make_pipe_sub_env] * 2)
    try:
        envs.reset(seed=0)
        kill(envs.worker_pids[1])
        envs.set_attr("frameskip", 4)
        assert envs.get_attr("frameskip") == (4, 4)
        _, rewards, _, truncated, infos = envs.step(np.array([0, 0]))
        assert truncated.tolist() == [False, True] and infos["worker_restarted"][1]
        assert rewards.tolist() == [4.0, 0.0]  # the rebuilt one was reset in the call
    finally:
        envs.close()


def test_parallel_env_workers_step_as_the_local_env_after_a_worker_died():
    """``env.frameskip = 3`` reached the local env and worker 0 only, and batches gave one
    answer here and another on the workers."""
    env = ParallelEnv(PipeEnv, "CartPole-v1", n_workers=2, inline_small_batches=False)
    try:
        state, *_ = env.reset()
        kill(env.workers[1].pid)
        env.frameskip = 3
        assert env.get_attr("frameskip") == [3, 3]
        actions, states = [0, 1] * 4, [state] * 8
        assert_identical(env.step_batch(actions, states), env.plan_env.step_batch(actions, states))
    finally:
        env.close()


def test_parallel_env_steps_on_its_workers_once_one_refused_a_value():
    """Worker 0 took frameskip 3, worker 1 refused 0: the workers differ from the local env,
    so a batch may no longer run here (it ran here or there, with two answers)."""
    env = ParallelEnv(PipeEnv, "CartPole-v1", n_workers=2)
    try:
        state, *_ = env.reset()
        with pytest.raises(ValueError, match="frameskip"):
            env.set_attr("frameskip", [3, 0])
        rewards = {tuple(env.step_batch([0, 0], [state, state])[2]) for _ in range(20)}
        assert rewards == {(3.0, 1.0)}
    finally:
        env.close()


@pytest.mark.parametrize("vector_class", [SyncVectorEnv, AsyncVectorEnv])
def test_under_disabled_a_step_that_raised_ends_no_episode(vector_class, recwarn):
    """The sub-env's row still held the flags of its last episode's end: every later step was
    refused, even after a reset of that sub-env."""
    envs = vector_class([make_faulty_env] * 2, autoreset_mode=AutoresetMode.DISABLED)
    try:
        envs.reset(seed=3)
        ended = np.zeros(2, bool)
        while not ended.any():
            _, _, terminated, truncated, _ = envs.step(np.zeros(2, np.int64))
            ended = terminated | truncated
        envs.reset(options={"reset_mask": ended})
        faulty = int(np.flatnonzero(ended)[0])
        actions = np.zeros(2, np.int64)
        actions[faulty] = RAISE
        with pytest.raises(FaultError):
            envs.step(actions)
        envs.step(np.zeros(2, np.int64))  # refused before: "ended ... and were not reset"
    finally:
        envs.close()


def test_under_disabled_set_states_that_lost_a_worker_keeps_the_restored_ones_going(recwarn):
    envs = plangym.make_vec(
        "CartPole-v1", num_envs=2, vectorization_mode="async", autoreset_mode="Disabled"
    )
    try:
        envs.reset(seed=0)
        states = envs.get_states()
        terminated, step = np.zeros(2, bool), 0
        while not terminated[0]:  # sub-env 0 falls; sub-env 1 balances
            _, _, terminated, *_ = envs.step(np.array([0, step % 2]))
            step += 1
        assert not terminated[1]
        kill(envs.worker_pids[1])
        with pytest.raises(SubEnvCrashedError):
            envs.set_states(states)
        envs.step(np.array([0, 1]))  # sub-env 0 goes on from its restored state
    finally:
        envs.close()


def test_under_disabled_an_episode_ended_by_a_step_whose_reply_was_lost_is_not_stepped(recwarn):
    """The sub-env stepped and ended its episode, but its info could not be sent: the
    caller could not know, and the next step stepped the finished episode on."""
    reference = make_pipe_sub_env()
    reference.reset(seed=7)
    steps = 1
    while not any(reference.step(0)[2:4]):
        steps += 1
    envs = AsyncVectorEnv([make_pipe_sub_env], autoreset_mode=AutoresetMode.DISABLED)
    try:
        envs.reset(seed=7)
        for _ in range(steps - 1):
            envs.step(np.array([0]))
        envs.set_attr("mode", "lock")
        with pytest.raises(TypeError, match="lock"):
            envs.step(np.array([0]))  # the last step of the episode
        envs.set_attr("mode", None)
        with pytest.raises(RuntimeError, match="ended its episode and was not reset"):
            envs.step(np.array([0]))
        envs.reset(seed=7)
        envs.step(np.array([0]))
    finally:
        envs.close()


def test_a_replacement_whose_build_raises_keyboard_interrupt_costs_no_other_sub_env(
    tmp_path, recwarn
):
    """The rebuilt env's KeyboardInterrupt is its error: it was taken for the caller's
    Ctrl-C, and every busy sub-env was rebuilt (sub-env 0 lost its episode)."""
    poison = tmp_path / "poison"
    envs = AsyncVectorEnv([functools.partial(make_pipe_sub_env, str(poison))] * 2)
    try:
        envs.reset(seed=0)
        for _ in range(3):
            envs.step(np.array([0, 1]))
        poison.touch()
        kill(envs.worker_pids[1])
        with pytest.raises(KeyboardInterrupt, match="raised building the env") as raised:
            envs.step(np.array([0, 1]))
        assert "while replacing sub-env 1" in "\n".join(raised.value.__notes__)
        poison.unlink()
        _, _, _, truncated, _ = envs.step(np.array([0, 1]))
        assert truncated.tolist() == [False, True]  # sub-env 0 kept its episode
    finally:
        envs.close()


def test_with_max_concurrency_a_value_that_cannot_be_sent_stops_no_other_sub_env(recwarn):
    """The next sub-env's request waited for the first's answer, which never came: it was
    never sent, yet its value was remembered for a replacement."""
    envs = AsyncVectorEnv([make_pipe_sub_env] * 2, max_concurrency=1)
    try:
        envs.reset(seed=0)
        with pytest.raises(TypeError, match="lock"):
            envs.set_attr("frameskip", [threading.Lock(), 3])
        assert envs.get_attr("frameskip") == (1, 3)
        kill(envs.worker_pids[1])
        envs.step(np.array([0, 0]))
        assert envs.get_attr("frameskip") == (1, 3)
    finally:
        envs.close()
