"""``reset(seed=...)``: gymnasium's habit, with plangym's return tuple, for every family.

The episode a seed starts is a function of the seed alone (whatever the env did before),
and for envs gymnasium registers it is the episode ``gymnasium.make(name).reset(seed=...)``
starts.
"""

from __future__ import annotations

import importlib.util

import gymnasium
import numpy as np
import pytest

import plangym
from plangym.api_tests import assert_identical

# (name, the module its extra brings, whether gymnasium's own env draws the same episode)
FAMILIES = [
    ("CartPole-v1", None, True),
    ("Pendulum-v1", None, True),
    ("ALE/Pong-v5", None, False),  # plangym's frameskip 5 is not the id's 4
    ("Hopper-v5", "mujoco", True),
    ("cartpole-balance", "dm_control", False),
    ("LunarLander-v3", "Box2D", True),
    ("FastLunarLander-v0", None, False),
]


def params():
    for name, module, same in FAMILIES:
        missing = module is not None and importlib.util.find_spec(module) is None
        marks = pytest.mark.skip(reason=f"{module} is not installed") if missing else ()
        yield pytest.param(name, same, id=name, marks=marks)


def observation(obs):
    return np.asarray(obs).copy()


def same_state(a, b) -> bool:
    return np.array_equal(a, b) if isinstance(a, np.ndarray) else bool(a == b)


@pytest.mark.parametrize(("name", "same_as_gymnasium"), list(params()))
def test_reset_seed_starts_the_first_episode_of_the_seed(name, same_as_gymnasium):
    env = plangym.make(name)
    try:
        state, obs, info = env.reset(seed=11)
        first = observation(obs)
        for _ in range(3):
            env.step(env.sample_action())
        env.reset()  # another episode in between: the seed alone decides
        obs_again, info_again = env.reset(seed=11, return_state=False)
        assert np.array_equal(observation(obs_again), first)
        assert same_state(env.get_state(), state)
        assert not same_state(env.reset(seed=12)[0], state)
        if same_as_gymnasium:
            gym_obs, _ = gymnasium.make(name).reset(seed=11)
            assert np.array_equal(first, gym_obs)
    finally:
        env.close()


@pytest.mark.parametrize(("name", "same_as_gymnasium"), list(params()))
def test_reset_seed_leaves_the_generator_where_gymnasiums_reset_does(name, same_as_gymnasium):
    # Wrappers draw from it after a reset (AtariPreprocessing's no-ops): it must be gymnasium's.
    if not same_as_gymnasium and not name.startswith("ALE/"):
        pytest.skip("gymnasium registers no env of this name and family")
    env = plangym.make(name)
    theirs = gymnasium.make(name)
    try:
        env.reset(seed=11)
        theirs.reset(seed=11)
        ours = env.gym_env.unwrapped.np_random.bit_generator.state
        assert ours == theirs.unwrapped.np_random.bit_generator.state
    finally:
        env.close()
        theirs.close()


@pytest.mark.parametrize("seed", [-1, 1.5, "3", True])
def test_reset_refuses_a_seed_that_is_not_a_non_negative_int(seed):
    env = plangym.make("CartPole-v1")
    with pytest.raises(ValueError, match="seed: expected None or an int >= 0"):
        env.reset(seed=seed)


@pytest.mark.parametrize(("name", "same_as_gymnasium"), list(params()))
@pytest.mark.parametrize("seed", [-1, "3", True])
def test_seed_refuses_what_reset_refuses_before_touching_a_generator(name, same_as_gymnasium, seed):
    env = plangym.make(name)
    try:
        state, *_ = env.reset(seed=5)
        with pytest.raises(ValueError, match="seed: expected None or an int >= 0"):
            env.seed(seed)
        assert same_state(env.get_state(), state)  # nothing was reseeded or reset
    finally:
        env.close()


def test_reset_options_reach_classic_control_and_are_refused_elsewhere():
    cartpole, pong = plangym.make("CartPole-v1"), plangym.make("ALE/Pong-v5")
    gym_cartpole = gymnasium.make("CartPole-v1")
    try:
        options = {"low": -0.001, "high": 0.001}
        state, obs, _ = cartpole.reset(seed=3, options=options)
        assert np.array_equal(obs, gym_cartpole.reset(seed=3, options=options)[0])
        assert np.abs(obs).max() <= 0.001
        stepped = cartpole.step(1, state=state)  # the state holds all of it: exact
        assert_identical(cartpole.step(1, state=state), stepped)
        with pytest.raises(ValueError, match="options: AtariEnv takes no reset options"):
            pong.reset(options={"low": -0.1})
        for bad in (0, [], ""):  # was taken as no options
            with pytest.raises(TypeError, match="options: expected None or a dict, received"):
                cartpole.reset(options=bad)
        pong.reset(options={})  # gymnasium's wrappers pass empty options: fine
    finally:
        cartpole.close(), pong.close(), gym_cartpole.close()


def test_a_parallel_env_resets_its_workers_to_the_seeded_episode():
    single = plangym.make("CartPole-v1")
    env = plangym.make("CartPole-v1", n_workers=2)
    try:
        state, obs, _ = env.reset(seed=5)
        assert np.array_equal(obs, single.reset(seed=5)[1])
        expected = single.step_batch([0, 1], [state, state])
        observs = env.step_batch([0, 1])[0]  # each worker from its own state: the seeded one
        assert all(np.array_equal(a, b) for a, b in zip(observs, expected[1], strict=True))
    finally:
        env.close()


@pytest.mark.parametrize("n_workers", [None, 2])
def test_return_state_is_none_true_or_false(n_workers):
    env = plangym.make("CartPole-v1", **({} if n_workers is None else {"n_workers": n_workers}))
    try:
        state, *_ = env.reset()
        for call in (
            lambda flag: env.reset(return_state=flag),
            lambda flag: env.step(0, state=state, return_state=flag),
            lambda flag: env.step_batch([0, 1], states=[state, state], return_state=flag),
        ):
            with pytest.raises(TypeError, match="return_state: expected None, True or False"):
                call("yes")
            assert len(call(np.True_)) == len(call(True))
            assert len(call(np.False_)) == len(call(False))
        assert len(env.reset(return_state=None)) == 2  # 0.1's falsy None: no state
    finally:
        env.close()
