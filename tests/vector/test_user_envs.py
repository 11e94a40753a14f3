"""A user's own plannable env on gymnasium's vector face, through :class:`GymPlanEnv`.

make_vec serves plangym's names only; a user's env reaches AsyncVectorEnv/SyncVectorEnv,
with states and step_batch, as ``GymPlanEnv(MyEnv(autoreset=False))`` (docs/vector.md).
"""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest

from plangym import api_tests
from plangym.vector import AsyncVectorEnv, GymPlanEnv, SyncVectorEnv
from tests.helpers.corridor_env import Corridor, PositionCorridor

VECTOR_CLASSES = [SyncVectorEnv, AsyncVectorEnv]


class SpacedCorridor(Corridor):
    """The corridor with the gymnasium spaces a vector env reads."""

    action_space = gymnasium.spaces.Discrete(2)

    @property
    def observation_space(self) -> gymnasium.spaces.Box:
        return gymnasium.spaces.Box(0.0, 1.0, (self.length,), np.float32)


class SpacedPosition(PositionCorridor):
    action_space = gymnasium.spaces.Discrete(2)
    observation_space = gymnasium.spaces.Box(0.0, 100.0, (), np.float64)


class OneWayCorridor(SpacedCorridor):
    """Its own check_action is stricter than its space: only right is allowed."""

    def check_action(self, action, name="action"):
        super().check_action(action, name)
        if int(action) != 1:
            raise ValueError(f"{name}: expected 1 (right, the only way), received {action}")


def sub_envs(vector_class, env_class, n=2):
    return vector_class([lambda: GymPlanEnv(env_class(seed=7, autoreset=False))] * n)


@pytest.mark.parametrize("vector_class", VECTOR_CLASSES)
@pytest.mark.parametrize("env_class", [SpacedCorridor, SpacedPosition])
def test_step_batch_from_the_sub_envs_states_is_the_single_envs(vector_class, env_class):
    single = env_class(seed=7, autoreset=False)
    envs = sub_envs(vector_class, env_class)
    try:
        envs.reset()
        for _ in range(3):
            envs.step(np.array([1, 0]))
        states = envs.get_states()
        actions = [0, 1, 1, 0]
        expected = single.step_batch(actions, [states[0], states[1]] * 2, dt=3)
        got = envs.step_batch(actions, [states[0], states[1]] * 2, dt=3)
        api_tests.assert_identical(got, expected)  # 0-d observations stay 0-d arrays
        # step_batch moved no sub-env: the next step starts from the same states.
        following = envs.step(np.array([0, 1]))[0]
        alone = single.step_batch([0, 1], states)[1]
        api_tests.assert_identical(following, np.stack(alone))
    finally:
        envs.close()
        single.close()


@pytest.mark.parametrize("vector_class", VECTOR_CLASSES)
def test_a_users_own_action_check_refuses_the_step_before_any_sub_env_moves(vector_class):
    # The space let action 0 through; sub-env 1's worker refused it after sub-env 0 stepped.
    envs = sub_envs(vector_class, OneWayCorridor)
    try:
        envs.reset()
        states = envs.get_states()
        with pytest.raises(ValueError, match=r"actions\[1\]: expected 1 \(right, the only way\)"):
            envs.step(np.array([1, 0]))
        api_tests.assert_identical(envs.get_states(), states)
        assert len(envs.step(np.array([1, 1]))) == 5
    finally:
        envs.close()


def test_an_env_without_gymnasium_spaces_is_refused_naming_what_it_lacks():
    with pytest.raises(TypeError, match=r"plan_env: .* Corridor whose observation_space is None"):
        GymPlanEnv(Corridor(seed=1, autoreset=False))


def test_an_env_that_resets_itself_is_refused():
    with pytest.raises(ValueError, match="plan_env: expected an env built with autoreset=False"):
        GymPlanEnv(SpacedCorridor(seed=1))
