"""plangym 0.1's public surface of ``plangym.vectorization.parallel``, on real workers.

``BatchEnv``: ``len()``, indexing to its ``ExternalProcess`` workers, attribute forwarding,
``reset(indices=None, return_states=True)``, ``sync_states(state, blocking=True)``,
``make_transitions``. ``ExternalProcess``: its spaces, attribute forwarding, ``call``,
``close``, and ``set_state``/``step``/``step_batch``/``reset`` with ``blocking=``.
``ParallelEnv``: ``_batch_env``, ``blocking``, ``sync_states``, and the class attributes
and properties of the env class it wraps.
"""

import inspect

import gymnasium as gym
import numpy as np
import pytest

import plangym
from plangym.api_tests import assert_identical
from plangym.control.classic_control import ClassicControl
from plangym.core import PlangymEnv
from plangym.vectorization import AlreadyPendingCallError, RayEnv, VectorizedEnv
from plangym.vectorization.parallel import BatchEnv, ExternalProcess, ParallelEnv, Promise
from plangym.videogames import AtariEnv
from tests.helpers.vectorized_contract import random_states


@pytest.fixture(scope="module")
def env():
    env = plangym.make("CartPole-v1", n_workers=2, inline_small_batches=False)
    yield env
    env.close()


@pytest.fixture(scope="module")
def worker():
    worker = ExternalProcess(lambda: ClassicControl("Pendulum-v1", frameskip=2))
    yield worker
    worker.close()


# ParallelEnv ------------------------------------------------------------------------------------
def test_parallel_env_keeps_its_batch_env_and_blocking_flag(env):
    assert isinstance(env._batch_env, BatchEnv)
    assert env.blocking is False and env._batch_env.blocking is False
    blocking = plangym.make("CartPole-v1", n_workers=1, blocking=True)
    try:
        assert blocking.blocking is True and blocking.clone().blocking is True
    finally:
        blocking.close()


def test_parallel_env_answers_what_the_env_class_answers(env):
    single = plangym.make("CartPole-v1")
    for name in [
        "SINGLETON",
        "STATE_IS_ARRAY",
        "OBS_IS_ARRAY",
        "AVAILABLE_OBS_TYPES",
        "TAKES_RESET_OPTIONS",
    ]:
        assert getattr(env, name) == getattr(ClassicControl, name), name
    assert env.DEFAULT_OBS_TYPE == "coords" and env.remove_time_limit is True
    assert env.obs_shape == single.obs_shape == (4,)
    assert type(env.gym_env.unwrapped) is type(single.gym_env.unwrapped)
    assert env.state_dtype == single.state_dtype


CLASS_ATTRIBUTES = [
    "AVAILABLE_OBS_TYPES",
    "AVAILABLE_RENDER_MODES",
    "DEFAULT_OBS_TYPE",
    "STATE_IS_ARRAY",
    "OBS_IS_ARRAY",
    "SINGLETON",
]


@pytest.mark.parametrize("cls", [VectorizedEnv, ParallelEnv, RayEnv])
@pytest.mark.parametrize("name", CLASS_ATTRIBUTES)
def test_vectorized_env_classes_have_plangym_env_class_attributes(cls, name):
    """plangym 0.1's vectorized envs were PlangymEnvs: the class answers PlangymEnv's values."""
    assert hasattr(cls, name)
    assert getattr(cls, name) == getattr(PlangymEnv, name)


def test_worker_pids_are_the_worker_processes(env):
    import multiprocessing

    children = {child.pid for child in multiprocessing.active_children()}
    assert len(set(env.worker_pids)) == 2 and set(env.worker_pids) <= children


def test_vectorized_envs_are_plangym_envs_to_isinstance(env):
    # plangym 0.1 code tells its envs apart with isinstance(env, PlangymEnv).
    assert isinstance(env, PlangymEnv)
    assert issubclass(RayEnv, PlangymEnv) and issubclass(VectorizedEnv, PlangymEnv)


PLANGYM_ENV_METHODS = ["apply_wrappers", "wrap", "init_gym_env", "init_spaces", "seed"]
PLANGYM_ENV_METHODS += ["get_coords_obs", "get_rgb_obs", "get_grayscale_obs"]


@pytest.mark.parametrize("name", PLANGYM_ENV_METHODS)
def test_vectorized_env_methods_of_plangym_env_keep_their_signatures(name):
    assert inspect.signature(getattr(VectorizedEnv, name)) == inspect.signature(
        getattr(PlangymEnv, name)
    )


@pytest.mark.parametrize("name", [*PLANGYM_ENV_METHODS, "get_state", "get_image", "step"])
def test_forwarded_methods_show_the_source_that_runs(name):
    # IPython's ``env.get_state??`` follows __wrapped__: it showed PlanEnv's abstract method,
    # whose body only raises, for a method that works.
    method = getattr(VectorizedEnv, name)
    assert "not_implemented" not in inspect.getsource(method)
    assert "getattr(self, target)" in inspect.getsource(method)
    assert method.__doc__  # and its documentation stays


def test_vectorized_env_repr_shows_the_settings_it_was_given():
    # In a notebook the repr is how one tells envs apart: a frameskip or an obs_type given
    # to make() shows, without building anything (delay_setup).
    env = plangym.make(
        "ALE/MsPacman-v5", n_workers=2, frameskip=3, obs_type="ram", delay_setup=True
    )
    try:
        assert repr(env) == (
            "ParallelEnv(name='ALE/MsPacman-v5', n_workers=2, env_class=AtariEnv, "
            "obs_type='ram', frameskip=3)"
        )
    finally:
        env.close()


def test_vectorized_env_plangym_env_members_answer_with_the_local_env(env):
    single = plangym.make("CartPole-v1")
    assert env.metadata == single.metadata and env.reward_range == single.reward_range
    assert env.obs_type == single.obs_type and env.render_mode == single.render_mode
    assert env.get_coords_obs(np.ones(4)).tolist() == [1.0] * 4
    assert env.render(mode="rgb_array").shape == single.render().shape
    env.seed(3)  # the local env's generators; the workers follow through states
    env.step_batch_async([0], states=[env.get_state()])
    with pytest.raises(AlreadyPendingCallError):
        env.seed(3)  # every forwarded method obeys the call state
    env.step_batch_wait()


def test_vectorized_env_batch_helpers_of_plangym_01():
    states, actions, dts = VectorizedEnv.batch_step_data([0, 1, 1, 0, 1], None, 2, batch_size=2)
    assert states == [[None] * 3, [None] * 2] and actions == [[0, 1, 1], [0, 1]]
    assert dts == [[2, 2, 2], [2, 2]]
    results = [
        (["s0"], [1], [1.0], [False], [False], [{}]),
        (["s1"], [2], [0.0], [True], [False], [{}]),
    ]
    joined = VectorizedEnv.unpack_transitions(results, return_states=True)
    assert joined == (["s0", "s1"], [1, 2], [1.0, 0.0], [False, True], [False, False], [{}, {}])


def test_parallel_env_instance_answers_the_wrapped_class_attributes():
    env = plangym.make("ALE/Pong-v5", n_workers=2, obs_type="ram")
    try:
        for name in CLASS_ATTRIBUTES:
            assert hasattr(type(env), name), name
            assert getattr(env, name) == getattr(AtariEnv, name), name
        assert "ram" in env.AVAILABLE_OBS_TYPES and env.DEFAULT_OBS_TYPE == "rgb"
        assert env.DEFAULT_OBS_TYPE != ParallelEnv.DEFAULT_OBS_TYPE
        states = random_states(env.plan_env, 2)
        assert_identical(env.step_batch([0, 1], states), env.plan_env.step_batch([0, 1], states))
    finally:
        env.close()


def test_parallel_env_class_attributes_before_setup_are_the_wrapped_class():
    env = ParallelEnv(AtariEnv, "ALE/Pong-v5", n_workers=1, delay_setup=True)
    assert env._plan_env is None
    assert env.AVAILABLE_OBS_TYPES == AtariEnv.AVAILABLE_OBS_TYPES
    assert env._plan_env is None  # answered by the class: nothing was built
    env.close()


def test_parallel_env_wrappers_are_the_workers_envs_wrappers(env):
    assert env._wrappers is None
    wrappers = [(gym.wrappers.TransformReward, {"func": lambda r: 2 * r})]
    wrapped = plangym.make("CartPole-v1", n_workers=2, wrappers=wrappers)
    try:
        assert wrapped._wrappers == wrapped.plan_env._wrappers == wrappers
        state, *_ = wrapped.reset()
        rewards = wrapped.step_batch([0, 1], states=[state, state])[2]
        assert list(rewards) == [2.0, 2.0]  # the workers' envs wrap too
    finally:
        wrapped.close()


def test_parallel_env_make_transitions_is_step_batch(env):
    states = random_states(env.plan_env, 5)
    expected = env.plan_env.step_batch([0, 1, 0, 1, 1], states=states, dt=2)
    assert_identical(env.make_transitions([0, 1, 0, 1, 1], states, 2), expected)
    assert_identical(env.run_batch([0, 1, 0, 1, 1], states, [2] * 5, True), expected)
    with pytest.raises(ValueError, match=r"actions\[1\]"):
        env.make_transitions([0, 7], states[:2])


def test_parallel_env_sync_states_puts_every_worker_in_the_state(env):
    state = random_states(env.plan_env, 3)[-1]
    env.sync_states(state)
    assert all(bool(s == state) for s in env.call("get_state"))


# BatchEnv ---------------------------------------------------------------------------------------
def test_batch_env_has_a_length_and_indexes_its_workers(env):
    batch_env = env._batch_env
    assert len(batch_env) == 2
    assert all(isinstance(batch_env[i], ExternalProcess) for i in range(2))
    assert batch_env[-1] is batch_env[1]
    with pytest.raises(IndexError):
        batch_env[2]


def test_batch_env_envs_are_its_worker_processes(env):
    """plangym 0.1's ``BatchEnv._envs``: the list of ExternalProcess workers."""
    batch_env = env._batch_env
    assert batch_env._envs == batch_env.workers == env.workers
    assert len(batch_env._envs) == env.n_workers == 2
    assert all(
        isinstance(worker, ExternalProcess) and worker.is_alive for worker in batch_env._envs
    )
    assert batch_env._envs[1].call("get_state")() is not None


def test_a_batch_env_of_plain_workers_lists_them_in_envs():
    workers = [ExternalProcess(lambda: ClassicControl("CartPole-v1"), index=i) for i in range(2)]
    batch_env = BatchEnv(workers)
    try:
        assert batch_env._envs == workers
    finally:
        batch_env.close()


def test_batch_env_forwards_attributes_to_the_first_worker_env(env):
    batch_env = env._batch_env
    assert batch_env.name == "CartPole-v1" and batch_env.frameskip == 1
    assert batch_env.action_space == env.action_space
    with pytest.raises(AttributeError, match="no_such_thing"):
        batch_env.no_such_thing  # noqa: B018
    with pytest.raises(AttributeError, match="_private"):
        batch_env._private  # noqa: B018 - private names never go to the worker


def test_batch_env_reset_stacks_the_workers_results(env):
    states, observs, infos = env._batch_env.reset()
    assert states.shape == (2,) and states.dtype == env.plan_env.state_dtype
    assert observs.shape == (2, 4) and observs.dtype == np.float32
    assert infos.dtype == object and infos.shape == (2,)
    observs, infos = env._batch_env.reset(indices=[1], return_states=False)
    assert observs.shape == (1, 4) and infos.shape == (1,)
    # The worker reset really is in the state it reports.
    states, *_ = env._batch_env.reset(indices=np.array([0]))
    assert bool(env._batch_env[0].call("get_state")() == states[0])


def test_batch_env_sync_states_blocking_or_with_promises(env):
    batch_env = env._batch_env
    first, second = random_states(env.plan_env, 2, seed=7)
    assert batch_env.sync_states(first) is None
    assert all(bool(s == first) for s in env.call("get_state"))
    promises = batch_env.sync_states(second, blocking=False)
    assert [type(p) for p in promises] == [Promise, Promise]
    assert [p(timeout=30) for p in promises] == [None, None]
    assert all(bool(s == second) for s in env.call("get_state"))


def test_batch_env_make_transitions_checks_then_steps_like_the_env(env):
    batch_env = env._batch_env
    states = random_states(env.plan_env, 6, seed=3)
    actions = [1, 0, 0, 1, 1, 0]
    expected = env.plan_env.step_batch(actions, states=states, dt=[1, 2, 3, 1, 2, 3])
    assert_identical(batch_env.make_transitions(actions, states, [1, 2, 3, 1, 2, 3]), expected)
    no_states = batch_env.make_transitions(actions, states, [1, 2, 3, 1, 2, 3], False)
    assert_identical(no_states, expected[1:])
    with pytest.raises(ValueError, match="dt: expected 6 values"):
        batch_env.make_transitions(actions, states, [1, 2])
    with pytest.raises(ValueError, match=r"actions\[2\]"):
        batch_env.make_transitions([0, 1, 5], states[:3])


def test_batch_env_checks_every_state_and_index_before_any_worker_moves(env):
    """Through a ParallelEnv's view (its local env checks) and on plain workers (worker 0)."""
    acrobot = ClassicControl("Acrobot-v1")
    foreign, *_ = acrobot.reset(seed=0)
    acrobot.close()
    workers = [ExternalProcess(lambda: ClassicControl("CartPole-v1"), index=i) for i in range(2)]
    plain = BatchEnv(workers)
    try:
        for batch_env in (env._batch_env, plain):
            states = list(batch_env.reset()[0])
            before = [worker.call("get_state")() for worker in batch_env.workers]
            with pytest.raises(TypeError, match=r"states\[3\]: expected a CartPole-v1 state"):
                batch_env.make_transitions([0, 1, 0, 1], [*states, states[0], foreign])
            for indices in ([5], [-1], ["0"]):
                with pytest.raises(ValueError, match=r"indices: expected worker indices in 0\.\.1"):
                    batch_env.reset(indices=indices)
            after = [worker.call("get_state")() for worker in batch_env.workers]
            assert all(bool(a == b) for a, b in zip(before, after, strict=True))
    finally:
        plain.close()


# ExternalProcess --------------------------------------------------------------------------------
def test_external_process_has_the_env_spaces_and_attributes(worker):
    local = ClassicControl("Pendulum-v1", frameskip=2)
    assert worker.observation_space == local.observation_space
    assert worker.action_space == local.action_space
    assert worker.frameskip == 2 and worker.obs_type == "coords"
    assert worker.name == "Pendulum-v1"


def test_external_process_steps_blocking_or_with_a_promise(worker):
    local = ClassicControl("Pendulum-v1", frameskip=2)
    state, *_ = local.reset()
    action = np.array([0.5], dtype=np.float32)
    expected = local.step(action, state=state, dt=2)
    assert_identical(worker.step(action, state=state, dt=2), expected)
    promise = worker.step(action, state=state, dt=2, blocking=False)
    assert isinstance(promise, Promise)
    assert_identical(promise(), expected)
    batch = worker.step_batch([action, action], [state, state], 1, return_state=False)
    assert_identical(batch, local.step_batch([action, action], [state, state], return_state=False))


def test_external_process_set_state_and_reset_blocking_or_not(worker):
    local = ClassicControl("Pendulum-v1", frameskip=2)
    state, *_ = local.reset()
    assert worker.set_state(state) is None
    assert worker.set_state(state, blocking=False)() is None
    assert bool(worker.call("get_state")() == state)
    obs, info = worker.reset()  # plangym 0.1: no state unless asked for
    assert obs.shape == (3,) and isinstance(info, dict)
    new_state, obs, info = worker.reset(return_states=True)
    assert bool(worker.call("get_state")() == new_state)
    assert len(worker.reset(blocking=False, return_states=True)()) == 3


def test_external_process_close_stops_it():
    worker = ExternalProcess(lambda: ClassicControl("CartPole-v1"))
    pid = worker.pid
    worker.close()
    assert worker.pid is None and not worker.is_alive
    assert pid is not None


def test_a_batch_env_of_plain_workers_finds_its_observation_shape():
    workers = [ExternalProcess(lambda: ClassicControl("Acrobot-v1"), index=i) for i in range(2)]
    batch_env = BatchEnv(workers)
    try:
        local = ClassicControl("Acrobot-v1")
        states = random_states(local, 4)
        expected = local.step_batch([0, 1, 2, 0], states=states)
        assert_identical(batch_env.make_transitions([0, 1, 2, 0], states), expected)
    finally:
        batch_env.close()


def test_parallel_env_signature_is_plangym_01s():
    env = ParallelEnv(ClassicControl, "CartPole-v1", None, None, False, 1, True)
    try:
        assert env.n_workers == 1 and env.blocking is True and env.frameskip == 1
    finally:
        env.close()
