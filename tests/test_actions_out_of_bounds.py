"""Continuous actions outside the action space go to the env, which clips them.

gymnasium's continuous-control envs (and plangym 0.1) take any finite action and clip it
themselves; planners rely on that when they perturb actions with noise. Such actions must
step exactly as gymnasium's own env steps them, and alike in a single step, in a batch (the
classic control kernels among them) and on worker processes. NaN and infinities are refused.
"""

import gymnasium
import numpy as np
import pytest

import plangym
from plangym.api_tests import assert_identical

# name: plangym.make keywords (None: no gymnasium env to compare with, as for dm_control)
ENVS = {
    "Pendulum-v1": {},
    "MountainCarContinuous-v0": {},
    "BipedalWalker-v3": {},
    "LunarLanderContinuous": {"continuous": True},
    "Hopper-v5": {"render_mode": None},
    "cartpole-balance": None,
}
GYMNASIUM_IDS = {"LunarLanderContinuous": "LunarLander-v3"}


def make(name):
    kwargs = ENVS[name] or {}
    return plangym.make(GYMNASIUM_IDS.get(name, name), autoreset=False, **kwargs)


def noisy_actions(env, n, seed=0):
    """Actions pushed out of the box, as a planner's noise does: up to 3 times its bounds."""
    space = env.action_space
    rng = np.random.default_rng(seed)
    return [(3 * rng.uniform(space.low, space.high)).astype(space.dtype) for _ in range(n)]


@pytest.mark.parametrize("name", [name for name, kwargs in ENVS.items() if kwargs is not None])
def test_out_of_bounds_actions_step_as_gymnasiums_env(name):
    env = make(name)
    kwargs = {key: value for key, value in ENVS[name].items() if key != "render_mode"}
    theirs = gymnasium.make(GYMNASIUM_IDS.get(name, name), **kwargs)
    _, obs, _ = env.reset(seed=3)
    expected, _ = theirs.reset(seed=3)
    assert np.array_equal(obs, expected)
    actions = noisy_actions(env, 20)
    assert any(not env.action_space.contains(action) for action in actions)
    for action in actions:
        obs, reward, terminal, *_ = env.step(action)
        expected, expected_reward, expected_terminal, *_ = theirs.step(action)
        assert obs.tobytes() == np.asarray(expected, dtype=obs.dtype).tobytes()
        assert (reward, terminal) == (float(expected_reward), expected_terminal)
        if terminal:
            break
    env.close()
    theirs.close()


@pytest.mark.parametrize("name", list(ENVS))
def test_out_of_bounds_actions_are_exact_in_batches_and_on_workers(name):
    env = make(name)
    state, *_ = env.reset(seed=1)
    actions = noisy_actions(env, 24, seed=2)  # above every kernel's min_batch
    one_by_one = [env.step(action, state=state, dt=2) for action in actions]
    batch = env.step_batch(actions, states=[state] * len(actions), dt=2)
    assert_identical(batch, tuple(list(column) for column in zip(*one_by_one, strict=True)))
    # The new states hold those actions (Box2D's states replay them): stepping goes on.
    new_states = batch[0]
    then = [env.step(action, state=new) for action, new in zip(actions, new_states, strict=True)]
    then = tuple(list(column) for column in zip(*then, strict=True))
    if name == "cartpole-balance":
        env.close()
        return  # its workers are dm_control's, as exact as the single env (tested elsewhere)
    workers = plangym.make(
        GYMNASIUM_IDS.get(name, name), n_workers=2, autoreset=False, **(ENVS[name] or {})
    )
    try:
        assert_identical(workers.step_batch(actions, states=[state] * len(actions), dt=2), batch)
        assert_identical(workers.step_batch(actions, states=new_states), then)
    finally:
        workers.close()
        env.close()


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_actions_that_are_no_finite_numbers_are_refused(bad):
    env = make("Pendulum-v1")
    state, *_ = env.reset(seed=0)
    with pytest.raises(ValueError, match="action: expected finite values"):
        env.step(np.array([bad], np.float32), state=state)
    with pytest.raises(ValueError, match=r"actions\[1\]: expected finite values"):
        env.step_batch([np.zeros(1, np.float32), np.array([bad], np.float32)], [state] * 2)
    assert_identical(env.get_state(), state)
    env.close()


@pytest.mark.parametrize("name", ["Pendulum-v1", "BipedalWalker-v3"])
def test_values_the_action_dtype_cannot_hold_are_refused(name):
    """1e300 is finite, but inf as the space's float32: a Box2D state recorded inf and no
    other env could restore it."""
    env = make(name)
    state, *_ = env.reset(seed=0)
    big = np.full(env.action_space.shape, 1e300)
    with pytest.raises(ValueError, match=r"action: expected finite values .* \(beyond float32\)"):
        env.step(big, state=state)
    with pytest.raises(ValueError, match=r"actions\[1\]: expected finite values"):
        env.step_batch([big * 0, big], [state] * 2)
    assert_identical(env.get_state(), state)
    env.close()
