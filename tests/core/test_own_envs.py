"""A user's own envs, as docs/extending.md writes them: the suite, the errors and the
planners meet them with what the guide says."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from gymnasium.wrappers import TimeLimit

import plangym
from plangym import api_tests
from plangym.core import PlangymEnv
from plangym.planning import FMCPlanner, SwarmPlanner, UCTPlanner
from plangym.planning.common import features_of
from plangym.vectorization import ParallelEnv
from tests.helpers.composite_env import Hopscotch
from tests.helpers.corridor_env import Corridor, PositionCorridor
from tests.helpers.frozen_lake_env import FrozenLake


class TestFrozenLake(api_tests.TestPlangymEnv):
    """Discrete observations are ints: the suite read their .shape and failed."""

    @pytest.fixture
    def env(self):
        env = FrozenLake()
        yield env
        env.close()


class DictCorridor(Corridor):
    """Its state is a dict of arrays, which works everywhere but needs STATE_IS_ARRAY."""

    def get_state(self):
        return {"corridor": super().get_state()}

    def set_state(self, state):
        super().set_state(state["corridor"])

    def check_state(self, state, name="state"):
        super().check_state(state["corridor"], name)


def test_the_suite_says_what_a_state_that_is_not_an_array_needs():
    check = api_tests.TestPlanEnv.test_reset_returns_state_obs_info
    with pytest.raises(AssertionError, match="set the class attribute STATE_IS_ARRAY = False"):
        check(None, DictCorridor(seed=1))
    DictCorridor.STATE_IS_ARRAY = False
    try:
        check(None, DictCorridor(seed=1))
    finally:
        del DictCorridor.STATE_IS_ARRAY


class NoStateLake(PlangymEnv):
    """A gymnasium env without get_state / set_state: only its author knows them."""

    def __init__(self, name="FrozenLake-v1", **kwargs):
        super().__init__(name=name, **kwargs)


def test_a_member_left_unwritten_names_itself():
    env = NoStateLake()
    with pytest.raises(NotImplementedError, match=r"NoStateLake.get_state is not implemented"):
        env.reset()


@pytest.mark.parametrize("planner_class", [SwarmPlanner, UCTPlanner])
def test_the_planners_say_they_need_an_action_space(planner_class):
    with pytest.raises(TypeError, match="gymnasium action_space; the Corridor has none"):
        planner_class(Corridor(seed=1))
    planner_class(FrozenLake())  # a PlangymEnv has one


def test_frozen_lake_replays_exactly_from_a_state():
    env = FrozenLake()
    state, *_ = env.reset()
    actions = [env.sample_action() for _ in range(20)]
    first = env.step_batch(actions, [state] * 20)
    assert all(isinstance(obs, int | np.integer) for obs in first[1])
    api_tests.assert_identical(env.step_batch(actions, [state] * 20), first)


class TestPositionCorridor(api_tests.TestPlanEnv):
    """0-d observations: the suite compared the array form's rows as NumPy scalars."""

    @pytest.fixture
    def env(self):
        env = PositionCorridor(seed=5)
        yield env
        env.close()


@pytest.mark.parametrize("copy", [True, False])
def test_zero_d_observations_come_back_as_the_single_env_gives_them(copy):
    # The workers' rows of a shared (n,) buffer came back as np.float64, not 0-d arrays.
    single = PositionCorridor(seed=5)
    state, *_ = single.reset()
    actions = [single.sample_action() for _ in range(6)]
    expected = single.step_batch(actions, [state] * 6, dt=2)
    assert all(type(obs) is np.ndarray and obs.shape == () for obs in expected[1])
    env = ParallelEnv(PositionCorridor, "Corridor", seed=5, n_workers=2, inline_small_batches=False)
    try:
        got = env.step_batch(actions, [state] * 6, dt=2, copy=copy)
        api_tests.assert_identical(got, expected)
    finally:
        env.close()
        single.close()


class TestHopscotch(api_tests.TestPlangymEnv):
    """Dict observations and Tuple actions: the suite compared shapes the spaces do not have."""

    @pytest.fixture(params=[True, False], ids=["tuple-actions", "discrete-actions"])
    def env(self, request):
        env = Hopscotch(tuple_actions=request.param)
        yield env
        env.close()


@pytest.mark.parametrize("planner_class", [SwarmPlanner, FMCPlanner])
def test_the_swarms_say_dict_observations_need_features(planner_class):
    # features_of failed inside NumPy ("float() argument ... not 'dict'") once play had begun.
    env = Hopscotch(tuple_actions=False)
    with pytest.raises(TypeError, match=r"features: the default, features_of, reads .* Dict"):
        planner_class(env)
    planner = planner_class(env, features=lambda observs: [o["position"] for o in observs])
    state, *_ = env.reset(seed=3)
    assert planner.decide(state).action in range(4)


def test_features_of_names_what_it_cannot_read():
    with pytest.raises(TypeError, match=r"features: .* received observations of type dict"):
        features_of([{"position": np.zeros(2)}] * 2)


@pytest.mark.parametrize(
    "kwargs",
    [
        pytest.param({"wrappers": [(TimeLimit, {"max_episode_steps": 10})]}, id="wrappers"),
        pytest.param({"remove_time_limit": False}, id="registered"),
    ],
)
def test_a_time_limit_on_a_users_env_warns_that_states_may_not_hold_its_count(kwargs):
    # It was taken silently: FrozenLake's states hold no count, so three steps from one
    # state could truncate three ways.
    with pytest.warns(UserWarning, match=r"FrozenLake: the .*TimeLimit.* TIME_LIMIT_IN_STATE"):
        FrozenLake(**kwargs).close()
    held_count = type("HeldCount", (FrozenLake,), {"TIME_LIMIT_IN_STATE": True})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        held_count(**kwargs).close()
    refused = type("Refused", (FrozenLake,), {"TIME_LIMIT_IN_STATE": False})
    if "wrappers" in kwargs:
        with pytest.raises(ValueError, match="Refused states do not hold a TimeLimit's step count"):
            refused(**kwargs)


def test_plangyms_own_families_say_whether_states_hold_the_count():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        plangym.make("CartPole-v1", remove_time_limit=False).close()
        plangym.make("Pendulum-v1", wrappers=[(TimeLimit, {"max_episode_steps": 10})]).close()
