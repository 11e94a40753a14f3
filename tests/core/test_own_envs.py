"""A user's own envs, as docs/extending.md writes them: the suite, the errors and the
planners meet them with what the guide says."""

from __future__ import annotations

import numpy as np
import pytest

from plangym import api_tests
from plangym.core import PlangymEnv
from plangym.planning import SwarmPlanner, UCTPlanner
from tests.helpers.corridor_env import Corridor
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
