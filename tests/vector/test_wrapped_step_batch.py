"""``step_batch`` of a vector env whose sub-envs have wrappers: through them, as ``step``."""

import collections
import functools
import os
import random
import threading
import warnings
from contextlib import closing

import gymnasium
import numpy as np
import pytest
from gymnasium.wrappers import (
    AtariPreprocessing,
    FrameStackObservation,
    RescaleAction,
    StickyAction,
    TimeLimit,
    TransformReward,
)

import plangym

SCALED = [
    functools.partial(RescaleAction, min_action=-1.0, max_action=1.0),
    functools.partial(TransformReward, func=lambda reward: 10.0 * reward),
]


def predicts_next_steps(envs, steps=5):
    """Step each sub-env's state with its next action, then the vector env: the same."""
    for _ in range(steps):
        actions = envs.action_space.sample()
        states = envs.get_states()
        new_states, observs, rewards, terminals, _, infos = envs.step_batch(list(actions), states)
        obs, vector_rewards, terminations, _, _ = envs.step(actions)
        for planned, stepped in zip(observs, obs, strict=True):
            np.testing.assert_array_equal(planned, stepped)
            assert envs.single_observation_space.contains(planned)
        assert rewards == list(vector_rewards)
        assert terminals == list(terminations)
        for planned, reached in zip(new_states, envs.get_states(), strict=True):
            assert planned.tobytes() == reached.tobytes()
    return infos


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_step_batch_takes_the_wrapped_actions_and_rewards(mode):
    with closing(
        plangym.make_vec("Pendulum-v1", 2, vectorization_mode=mode, wrappers=SCALED)
    ) as envs:
        envs.reset(seed=0)
        assert envs.single_action_space.high.tolist() == [1.0]
        infos = predicts_next_steps(envs)
        assert infos[0] == {"n_step": 1, "dt": 1}
        # A swarm with no walker left: the states' record dtype, as without wrappers.
        states, observs, *_ = envs.step_batch([], [], arrays=True)
        assert states.dtype == envs.get_states()[0].dtype and observs.shape == (0, 3)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_step_batch_through_a_frame_stack_predicts_the_next_stacks(mode):
    stack = functools.partial(FrameStackObservation, stack_size=3)
    with closing(
        plangym.make_vec("CartPole-v1", 2, vectorization_mode=mode, wrappers=[stack])
    ) as envs:
        envs.reset(seed=1)
        predicts_next_steps(envs, steps=4)
        assert envs.single_observation_space.shape == (3, 4)


def one_sync_sub_env(name, *wrappers):
    """A sync vector env of one sub-env with ``wrappers``, closed at the end of a ``with``."""
    return closing(plangym.make_vec(name, 1, vectorization_mode="sync", wrappers=list(wrappers)))


def test_a_sub_envs_stack_after_planning_is_the_one_before():
    stack = functools.partial(FrameStackObservation, stack_size=3)
    with one_sync_sub_env("CartPole-v1", stack) as envs:
        envs.reset(seed=2)
        envs.step(np.array([1]))
        states = envs.get_states()
        envs.step_batch([0, 1, 0], [states[0]] * 3, dt=[5, 2, 9])
        planned = envs.step(np.array([0]))[0]
        envs.reset(seed=2)
        envs.step(np.array([1]))
        np.testing.assert_array_equal(planned, envs.step(np.array([0]))[0])


def test_step_batch_does_not_count_against_a_wrappers_time_limit():
    limit = functools.partial(TimeLimit, max_episode_steps=6)
    with closing(
        plangym.make_vec(
            "CartPole-v1", 1, vectorization_mode="sync", wrappers=[limit], remove_time_limit=True
        )
    ) as envs:
        envs.reset(seed=3)
        states = envs.get_states()
        *_, truncateds, _ = envs.step_batch([0, 1] * 4, states * 8, dt=2)
        assert truncateds == [False] * 8  # 2 of the sub-env's 6 steps each
        truncations = [bool(envs.step(np.array([t % 2]))[3][0]) for t in range(6)]
        assert truncations == [False] * 5 + [True]


def test_wrapped_actions_are_checked_before_anything_is_sent():
    with closing(
        plangym.make_vec("Pendulum-v1", 2, vectorization_mode="async", wrappers=SCALED)
    ) as envs:
        envs.reset(seed=0)
        states = envs.get_states()
        bad = r"actions\[1\]: expected finite values for Box\(-1.0, 1.0"
        with pytest.raises(ValueError, match=bad):
            envs.step_batch([[0.0], [np.nan]], states)
        with pytest.raises(TypeError, match=r"states\[0\]: expected a Pendulum-v1 state"):
            envs.step_batch([[0.0], [0.5]], ["not a state", states[1]])
        assert envs.get_states()[0].tobytes() == states[0].tobytes()
        predicts_next_steps(envs, steps=1)


def test_bookkeeping_stays_in_step_batch_infos_only():
    with closing(
        plangym.make_vec("Pendulum-v1", 1, vectorization_mode="sync", wrappers=SCALED)
    ) as envs:
        envs.reset(seed=0)
        infos = envs.step_batch([[0.1]], envs.get_states(), dt=3)[5]
        assert infos[0] == {"n_step": 3, "dt": 3}
        assert not set(envs.step(np.array([[0.1]]))[4]) & {"n_step", "dt"}


def test_atari_preprocessing_on_the_vector_face_plans_what_it_steps():
    pytest.importorskip("cv2", reason="AtariPreprocessing resizes frames with OpenCV")
    preprocess = functools.partial(AtariPreprocessing, noop_max=0)
    with closing(
        plangym.make_vec(
            "ALE/Pong-v5",
            2,
            vectorization_mode="sync",
            wrappers=[preprocess],
            frameskip=1,
            repeat_action_probability=0.0,
        )
    ) as envs:
        envs.reset(seed=0)
        predicts_next_steps(envs, steps=3)
        assert envs.single_observation_space.shape == (84, 84)
        infos = envs.step_batch([0], envs.get_states()[:1], dt=2)[5]
        assert (infos[0]["n_step"], infos[0]["dt"]) == (2 * 4, 2)  # AtariPreprocessing: 4 frames


def test_make_vec_on_ray_plans_through_the_wrappers(ray_cluster):
    with closing(
        plangym.make_vec("Pendulum-v1", 2, vectorization_mode="ray", wrappers=SCALED)
    ) as envs:
        envs.reset(seed=0)
        predicts_next_steps(envs, steps=2)


def test_a_wrapper_reading_the_sub_envs_spec_plans_what_it_steps():
    # TimeAwareObservation reads the sub-env's spec (its time limit) and counts steps.
    with closing(
        plangym.make_vec(
            "CartPole-v1",
            1,
            vectorization_mode="sync",
            wrappers=[gymnasium.wrappers.TimeAwareObservation],
        )
    ) as envs:
        envs.reset(seed=0)
        predicts_next_steps(envs, steps=2)


def test_planning_warns_of_wrappers_whose_state_states_do_not_hold():
    stack = functools.partial(FrameStackObservation, stack_size=2)
    limit = functools.partial(TimeLimit, max_episode_steps=9)
    with closing(
        plangym.make_vec("CartPole-v1", 2, vectorization_mode="sync", wrappers=[stack, limit])
    ) as envs:
        envs.reset(seed=0)
        with pytest.warns(UserWarning, match="get_states: .*FrameStackObservation, TimeLimit"):
            states = envs.get_states()
        with pytest.warns(UserWarning, match="set_states: .*FrameStackObservation, TimeLimit"):
            envs.set_states(states)
        with pytest.warns(UserWarning, match="step_batch: .*FrameStackObservation, TimeLimit"):
            envs.step_batch([0], states[:1])


def test_wrappers_keeping_no_state_plan_without_a_warning():
    with closing(
        plangym.make_vec("Pendulum-v1", 1, vectorization_mode="sync", wrappers=SCALED)
    ) as envs:
        envs.reset(seed=0)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            envs.step_batch([[0.0]], envs.get_states())


class Bookkeeper(gymnasium.Wrapper):
    """A user's wrapper: a model shared with the caller, a log, an open file, a counter."""

    model = None

    def __init__(self, env):
        super().__init__(env)
        self.model = Bookkeeper.model
        self.log = []
        self.stats = {"file": open(os.devnull, "w"), "steps": 0}  # noqa: SIM115

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.log.append(action)
        self.stats["steps"] += 1
        self.last_action = action  # first set by a step
        return obs, reward * self.model["scale"], terminated, truncated, info


def test_planning_gives_a_wrapper_back_its_own_objects_as_they_were():
    Bookkeeper.model = {"scale": 1.0}
    with closing(
        plangym.make_vec("CartPole-v1", 1, vectorization_mode="sync", wrappers=[Bookkeeper])
    ) as envs:
        envs.reset(seed=0)
        keeper = envs.envs[0]
        model, log, stats, file = keeper.model, keeper.log, keeper.stats, keeper.stats["file"]
        envs.step_batch([1, 0, 1], envs.get_states() * 3, dt=4)
        assert keeper.model is model and keeper.log is log and keeper.stats is stats
        assert keeper.stats["file"] is file and not file.closed
        assert (log, stats["steps"], hasattr(keeper, "last_action")) == ([], 0, False)
        model["scale"] = 10.0  # the caller's model still drives the wrapper
        assert envs.step_batch([1], envs.get_states())[2] == [10.0]
        file.close()


def test_a_wrapper_holding_mujocos_live_data_keeps_it():
    pytest.importorskip("mujoco")

    class ReadsData(gymnasium.Wrapper):
        def __init__(self, env):
            super().__init__(env)
            self.data = env.unwrapped.plan_env.gym_env.unwrapped.data

        def step(self, action):
            obs, _, terminated, truncated, info = self.env.step(action)
            return obs, float(self.data.qpos[0]), terminated, truncated, info

    with closing(
        plangym.make_vec("Hopper-v5", 1, vectorization_mode="sync", wrappers=[ReadsData])
    ) as envs:
        envs.reset(seed=0)
        data = envs.envs[0].data
        envs.step_batch([envs.single_action_space.sample()], envs.get_states())
        assert envs.envs[0].data is data
        predicts_next_steps(envs, steps=2)


Kept = collections.namedtuple("Kept", ["lock", "items"])


class KeepsAll(gymnasium.Wrapper):
    """Keeps state in every kind of object, and returns its frame stack filled in place."""

    class Slotted:
        __slots__ = ("count",)

    def __init__(self, env):
        super().__init__(env)
        self.kept = Kept(threading.Lock(), [])  # a lock: the namedtuple cannot be copied whole
        self.objects = np.empty(2, dtype=object)
        self.objects[:] = [[], {"n": 0}]
        self.slotted = KeepsAll.Slotted()
        self.slotted.count = 0
        self.python_rng, self.legacy_rng = random.Random(0), np.random.RandomState(0)
        self.raw = bytearray(b"\x00")
        self.stack = np.zeros((2, *env.observation_space.shape), dtype=np.float32)
        self.observation_space = gymnasium.spaces.Box(-np.inf, np.inf, self.stack.shape)

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        self.stack[:] = obs
        return self.stack.copy(), info

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.kept.items.append(action)
        self.objects[0].append(action)
        self.objects[1]["n"] += 1
        self.slotted.count += 1
        self.python_rng.random()
        self.legacy_rng.random_sample()
        self.raw[0] = (self.raw[0] + 1) % 256
        self.stack[:-1] = self.stack[1:]
        self.stack[-1] = obs
        return self.stack, reward, terminated, truncated, info  # its own array, in place

    def summary(self):
        return (
            type(self.kept).__name__,
            list(self.kept.items),
            [list(self.objects[0]), dict(self.objects[1])],
            self.slotted.count,
            self.python_rng.random(),
            self.legacy_rng.random_sample(),
            bytes(self.raw),
        )


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_planning_puts_back_every_kind_of_state_a_wrapper_keeps(mode):
    def build():
        return plangym.make_vec("CartPole-v1", 1, vectorization_mode=mode, wrappers=[KeepsAll])

    with closing(build()) as envs, closing(build()) as twin:
        for vector_env in (envs, twin):
            vector_env.reset(seed=0)
            vector_env.step(np.array([1]))
        states = envs.get_states()
        # Each element starts from the sub-env's stack: it predicts the next step.
        _, observs, *_ = envs.step_batch([0, 1], states * 2)
        assert not np.array_equal(observs[0], observs[1])
        np.testing.assert_array_equal(observs[0], envs.step(np.array([0]))[0][0])
        np.testing.assert_array_equal(observs[0], twin.step(np.array([0]))[0][0])
        summaries = envs.call("summary"), twin.call("summary")
        assert summaries[0] == summaries[1]


@pytest.mark.parametrize("name", ["CartPole-v1", "Hopper-v5", "ALE/Pong-v5"])
def test_planning_leaves_the_generator_a_wrapper_draws_from_as_it_was(name):
    if name == "Hopper-v5":
        pytest.importorskip("mujoco")
    sticky = functools.partial(StickyAction, repeat_action_probability=0.5)
    kwargs = {"frameskip": 1, "repeat_action_probability": 0.0} if "ALE" in name else {}

    def build():
        return plangym.make_vec(name, 1, vectorization_mode="sync", wrappers=[sticky], **kwargs)

    with closing(build()) as envs, closing(build()) as twin:
        envs.action_space.seed(1)
        actions = [envs.action_space.sample() for _ in range(12)]
        for vector_env in (envs, twin):
            vector_env.reset(seed=0)
            for action in actions[:3]:
                vector_env.step(action)
        envs.step_batch([actions[5][0]] * 4, envs.get_states() * 4, dt=5)
        for action in actions[3:]:
            stepped, expected = envs.step(action), twin.step(action)
            for got, want in zip(stepped[:4], expected[:4], strict=True):
                np.testing.assert_array_equal(got, want)


def test_states_hold_the_generator_a_wrapper_draws_from():
    sticky = functools.partial(StickyAction, repeat_action_probability=0.5)
    with one_sync_sub_env("CartPole-v1", sticky) as envs:
        envs.reset(seed=0)
        states = envs.get_states()
        words = envs.envs[0].np_random.bit_generator.state
        for t in range(10):
            envs.step(np.array([t % 2]))  # the wrapper draws at every step
        assert envs.envs[0].np_random.bit_generator.state != words
        envs.set_states(states)
        assert envs.envs[0].np_random.bit_generator.state == words
