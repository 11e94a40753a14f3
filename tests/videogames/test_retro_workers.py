"""Vectorized RetroEnvs whether or not the caller holds this process's one emulator.

A vectorized env of a ``SINGLETON`` class keeps its local env in a worker process: the
caller may hold a ``RetroEnv`` before, and build one while the vectorized env is open.
"""

import multiprocessing

import numpy as np
import pytest

pytest.importorskip("stable_retro")

import plangym
from plangym.api_tests import assert_identical
from plangym.vectorization.errors import ClosedEnvironmentError
from plangym.videogames.retro import RetroEnv

NAME = "Airstriker-Genesis-v0"
PROPERTIES = [
    "obs_shape",
    "action_shape",
    "action_space",
    "observation_space",
    "frameskip",
    "autoreset",
    "return_image",
    "batch_path",
    "obs_type",
    "render_mode",
    "metadata",
    "reward_range",
    "n_actions",
    "game",
    "SINGLETON",
    "FAST_PATHS",
    "STATE_IS_ARRAY",
    "DEFAULT_OBS_TYPE",
]


def random_states(env, n, seed):
    env.reset()
    actions = np.random.default_rng(seed).integers(env.n_actions, size=n)
    return [env.step(int(action), return_state=True)[0] for action in actions]


def single_steps(env, state):
    """What the single-env API returns from ``state``, in the order a planner calls it."""
    env.seed(7)
    samples = [env.sample_action() for _ in range(3)] + [env.action_space.sample()]
    env.set_state(state)
    rows = [env.get_state(), env.step(5), env.step_with_dt(9, dt=2), env.get_image()]
    rows.append(env.render())  # "rgb_array", the default: the screen again
    rows.append(env.step(4, state=state, dt=3, return_state=True))
    return [samples, rows, env.reset()]


@pytest.mark.parametrize("ray", [False, True], ids=["parallel", "ray"])
def test_workers_while_the_caller_holds_an_emulator(ray, request):
    if ray:
        request.getfixturevalue("ray_cluster")
    children = set(multiprocessing.active_children())
    held = RetroEnv(NAME)
    try:
        states = random_states(held, 8, seed=3)
        actions = [int(a) for a in np.random.default_rng(4).integers(held.n_actions, size=8)]
        dts = [1, 2, 3, 1, 2, 3, 1, 2]
        single = held.step_batch(actions, states=states, dt=dts)
        expected = single_steps(held, states[5])
        assert_identical(expected[1][4], expected[1][3])
        env = plangym.make(NAME, n_workers=2, ray=ray, inline_small_batches=False)
        try:
            assert_identical(env.step_batch(actions, states=states, dt=dts), single)
            assert_identical(env.plan_env.step_batch(actions, states=states, dt=dts), single)
            assert_identical(single_steps(env, states[5]), expected)
            for name in PROPERTIES:
                assert_identical(getattr(env, name), getattr(held, name), name)
            with pytest.raises(ValueError, match=r"actions\[1\]"):
                env.step_batch([0, 126], states=states[:2])
            with pytest.raises(ValueError, match=r"states\[1\]: expected a state of"):
                env.step_batch([0, 1], states=[states[0], states[1][:-5]])
            held.step(0)  # the caller's emulator is its own throughout
        finally:
            env.close()
        with pytest.raises(ClosedEnvironmentError):
            env.plan_env.get_state()  # no worker is started again for it
    finally:
        held.close()
    assert set(multiprocessing.active_children()) <= children


def test_the_caller_builds_an_emulator_while_workers_run():
    children = set(multiprocessing.active_children())
    env = plangym.make(NAME, n_workers=2)
    try:
        state = env.reset()[0]
        # Unpickled here, stable-retro's env would build an emulator in this process.
        assert env.gym_env is None
        with pytest.raises(AttributeError, match="stays in the worker process"):
            _ = env.retro_env
        here = RetroEnv(NAME)
        try:
            assert_identical(here.step(3, state=state, dt=2), env.step(3, state=state, dt=2))
            actions = [1, 2, 3]
            assert_identical(
                env.step_batch(actions, states=[state] * 3),
                here.step_batch(actions, states=[state] * 3),
            )
        finally:
            here.close()
    finally:
        env.close()
    assert set(multiprocessing.active_children()) <= children


def test_a_vector_env_checks_states_without_an_emulator_in_the_caller():
    """Sub-env 0's worker checks them: a bad state changes no sub-env, as elsewhere."""
    envs = plangym.make_vec(NAME, 2, "async")
    try:
        envs.reset(seed=0)
        saved = envs.get_states()
        envs.action_space.seed(1)
        envs.step(envs.action_space.sample())
        moved = envs.get_states()
        with pytest.raises(ValueError, match=r"^states\[1\]: expected a state of Airstriker"):
            envs.set_states([saved[0], np.zeros(3, np.uint8)])
        assert [s.tobytes() for s in envs.get_states()] == [s.tobytes() for s in moved]
        with pytest.raises(ValueError, match=r"^states\[2\]: expected a state of Airstriker"):
            envs.step_batch([0, 1, 2], [saved[0], saved[1], saved[1][:-1]])
        here = RetroEnv(NAME)  # the caller holds no emulator of the vector env's
        here.close()
        envs.set_states(saved)
        assert [s.tobytes() for s in envs.get_states()] == [s.tobytes() for s in saved]
        assert [picture.shape for picture in envs.render()] == [(224, 320, 3)] * 2
    finally:
        envs.close()


def test_a_vector_env_is_built_while_the_caller_holds_an_emulator():
    """Its spaces are read off a sub-env built in a worker process, not in the caller."""
    here = RetroEnv(NAME)
    state, *_ = here.reset()
    try:
        envs = plangym.make_vec(NAME, 2, "async", frameskip=here.frameskip)
        try:
            assert envs.single_observation_space == here.observation_space
            assert envs.single_action_space == here.action_space
            new_states, *_ = envs.step_batch([1, 2], [state, state])
            assert_identical(new_states, here.step_batch([1, 2], [state, state])[0])
        finally:
            envs.close()
    finally:
        here.close()


def test_a_state_check_whose_worker_died_is_asked_again():
    """Sub-env 0's worker checks the states (no emulator in the caller): killed, it is
    replaced and the check asked again, as a batch would be re-run."""
    import os
    import signal
    import time

    envs = plangym.make_vec(NAME, 2, "async")
    try:
        envs.reset(seed=0)
        states = envs.get_states()
        expected = envs.step_batch([1, 2, 3], [states[0], states[1], states[0]])
        for _ in range(2):
            os.kill(envs.worker_pids[0], signal.SIGKILL)
            time.sleep(0.2)  # dead before the check is sent
            again = envs.step_batch([1, 2, 3], [states[0], states[1], states[0]])
            assert_identical(again, expected)
            envs.set_states(states)
    finally:
        envs.close()


@pytest.mark.parametrize("ray", [False, True], ids=["parallel", "ray"])
def test_a_local_env_whose_worker_died_loses_its_state_out_loud(ray, request):
    """The local env lives in a worker of its own: killed, it is replaced. Checks and steps
    from given states are asked again; what needs the lost current state is refused until
    reset() or set_state(); settings made on the env are made again on the replacement."""
    import os
    import signal
    import time

    from plangym.vectorization.errors import WorkerCrashedError

    if ray:
        request.getfixturevalue("ray_cluster")
    env = plangym.make(NAME, n_workers=2, ray=ray, inline_small_batches=False)
    try:
        env.frameskip = 2
        states = random_states(env, 4, seed=5)
        expected = env.step_batch([1, 2], states=states[:2])
        single = env.step(3, state=states[2])
        env.set_state(states[3])
        os.kill(env.plan_env._scheduler.backend.worker_pids[0], signal.SIGKILL)
        time.sleep(0.2)  # dead before the checks are sent
        assert_identical(env.step_batch([1, 2], states=states[:2]), expected)
        for call in (env.get_state, lambda: env.step(3), env.get_image):
            with pytest.raises(WorkerCrashedError, match="its current state went with it"):
                call()
        assert_identical(env.step(3, state=states[2]), single)  # frameskip 2, as set
        assert_identical(env.get_state(), single[0])  # a state given: known again
        os.kill(env.plan_env._scheduler.backend.worker_pids[0], signal.SIGKILL)
        time.sleep(0.2)
        env.set_state(states[3])
        assert_identical(env.step(3, return_state=True), env.step(3, state=states[3]))
        # A setting is the first call after the death: it is made on the replacement, whose
        # state is not the one set before.
        os.kill(env.plan_env._scheduler.backend.worker_pids[0], signal.SIGKILL)
        time.sleep(0.2)
        env.frameskip = 2
        with pytest.raises(WorkerCrashedError, match="its current state went with it"):
            env.get_state()
        # A batch from given states that the caller runs through the local env keeps the
        # local env's state around it: a death found then loses only that state.
        env.set_state(states[3])
        os.kill(env.plan_env._scheduler.backend.worker_pids[0], signal.SIGKILL)
        time.sleep(0.2)
        with env.plan_env.state_kept():
            assert_identical(env.plan_env.step_batch([1, 2], states=states[:2]), expected)
        with pytest.raises(WorkerCrashedError, match="its current state went with it"):
            env.get_state()
    finally:
        env.close()


def test_make_vec_builds_several_retro_sub_envs_in_workers_by_default():
    from plangym.vector import AsyncVectorEnv, SyncVectorEnv

    with pytest.raises(ValueError, match=r"^vectorization_mode: expected 'async' or 'ray'"):
        plangym.make_vec(NAME, 2, vectorization_mode="sync")  # refused before any is built
    envs = plangym.make_vec(NAME, 2)
    try:
        assert isinstance(envs, AsyncVectorEnv)
        envs.reset(seed=0)
        envs.step(np.array([1, 2]))
    finally:
        envs.close()
    one = plangym.make_vec(NAME, 1)  # one sub-env: "sync" holds it, as gymnasium's default
    assert isinstance(one, SyncVectorEnv)
    one.close()


def test_the_local_env_of_workers_pickles_as_the_env_it_holds():
    # What the TypeError of pickling a ParallelEnv advises: pickle its plan_env.
    import pickle

    env = plangym.make(NAME, n_workers=1)
    try:
        states = random_states(env, 3, seed=1)
        with pytest.raises(TypeError, match="Pickle its plan_env"):
            pickle.dumps(env)
        data = pickle.dumps(env.plan_env)
    finally:
        env.close()
    copy = pickle.loads(data)  # built here: the caller held no emulator
    try:
        assert isinstance(copy, RetroEnv)
        assert_identical(copy.get_state(), states[-1])
    finally:
        copy.close()
