"""Checks every vectorized backend (ParallelEnv, RayEnv) must pass, written once.

Each takes a vectorized CartPole env with 3 workers whose local env is ``env.plan_env``.
"""

import numpy as np
import pytest

from plangym.api_tests import assert_identical
from plangym.vectorization import AlreadyPendingCallError, NoAsyncCallError


def random_states(env, n: int, seed: int = 0) -> list:
    """``n`` states along a random trajectory of ``env`` (seeded)."""
    rng = np.random.default_rng(seed)
    env.seed(seed)
    env.reset()
    states = []
    for _ in range(n):
        env.step(env.sample_action() if rng.random() < 0.5 else env.action_space.sample())
        states.append(env.get_state())
    return states


def check_step_batch_equals_the_single_env(env, size: int, per_element_dt: bool) -> None:
    """Results with and without returned states equal the local env's, bit for bit."""
    states = random_states(env.plan_env, size, seed=size)
    rng = np.random.default_rng(size)
    actions = rng.integers(2, size=size)
    dt = rng.integers(1, 4, size=size).tolist() if per_element_dt else 2
    expected = env.plan_env.step_batch(actions, states=states, dt=dt)
    assert_identical(env.step_batch(actions, states=states, dt=dt), expected)
    no_states = env.step_batch(actions, states=states, dt=dt, return_state=False)
    assert_identical(no_states, expected[1:])


def check_stateless_chunks(env) -> tuple:
    """After reset, each of the 3 workers steps its chunk of a stateless batch from there.

    Returns the reset state and the actions, for checks of what follows.
    """
    state, *_ = env.reset()
    actions = [0, 1, 1, 0, 1, 0, 0]  # chunks of 3 workers: [0:3] [3:5] [5:7]
    result = env.step_batch(actions)
    local = env.plan_env
    expected = []
    for start, stop in [(0, 3), (3, 5), (5, 7)]:
        local.set_state(state)
        expected.extend(local.step(a) for a in actions[start:stop])
    assert_identical(result, tuple(list(c) for c in zip(*expected, strict=True)))
    return state, actions


def check_async_api(env) -> None:
    """The pending-call state machine and its typed errors."""
    state, *_ = env.reset()
    with pytest.raises(NoAsyncCallError, match="no step_batch_async call is pending"):
        env.step_batch_wait()
    env.step_batch_async([0, 1, 1, 0], states=[state] * 4)
    with pytest.raises(AlreadyPendingCallError):
        env.step_batch_async([0], states=[state])
    with pytest.raises(AlreadyPendingCallError):
        env.step_batch([0], states=[state])
    with pytest.raises(AlreadyPendingCallError):
        env.sync_states()
    result = env.step_batch_wait(timeout=60)
    assert_identical(result, env.plan_env.step_batch([0, 1, 1, 0], states=[state] * 4))
    with pytest.raises(NoAsyncCallError):
        env.step_batch_wait()


def check_call_get_attr_set_attr(env) -> None:
    """Whole-env requests reach the env of each of the 3 workers."""
    assert env.get_attr("frameskip") == [1, 1, 1]
    env.set_attr("autoreset", [False, True, False])
    assert env.get_attr("autoreset") == [False, True, False]
    env.set_attr("autoreset", True)
    assert env.get_attr("autoreset") == [True] * 3
    clones = env.call("clone", frameskip=2)  # envs travel back as constructor + state
    assert [type(c).__name__ for c in clones] == ["ClassicControl"] * 3
    assert all(c.frameskip == 2 for c in clones)
    assert all(s.dtype == env.plan_env.state_dtype for s in env.call("get_state"))
    with pytest.raises(ValueError, match="values: expected 3 values"):
        env.set_attr("autoreset", [True])
