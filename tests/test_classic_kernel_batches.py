"""Classic control batches stepped by the vectorized kernels equal the bulk loop's, bit for bit.

Each case plays random trajectories to collect real states (fresh resets, mid-episode,
just ended, past the end), then steps one batch of them with mixed dt through an env using
its kernel and through a twin using the element-by-element bulk loop, and compares every
output: observations, rewards, flags, infos, the new states' bytes and the state each env
is left in.
"""

import numpy as np
import pytest

from plangym.control.classic_control import ClassicControl

ENVS = [
    "CartPole-v0",
    "CartPole-v1",
    "Acrobot-v1",
    "MountainCar-v0",
    "MountainCarContinuous-v0",
    "Pendulum-v1",
]


def collect_states(env, rng, n):
    """``n`` states met along random play: resets, ends of episodes and what follows them."""
    states = []
    state, *_ = env.reset()
    while len(states) < n:
        states.append(state)
        action = env.sample_action()
        state, _, _, terminal, truncated, _ = env.step(
            action, state=state, dt=int(rng.integers(1, 4))
        )
        if (terminal or truncated) and rng.random() < 0.5:
            states.append(state)  # and step on past the end
        if rng.random() < 0.01:
            state, *_ = env.reset()
    return states[:n]


def actions_for(env, rng, n):
    space = env.action_space
    if hasattr(space, "n"):
        return [int(a) for a in rng.integers(space.n, size=n)]
    # plangym refuses actions out of the box; its edges are met too.
    values = np.clip(rng.uniform(-1.2, 1.2, size=(n, *space.shape)), -1, 1) * space.high
    return [value.astype(space.dtype) for value in values]


def assert_same_columns(ours, theirs):
    new_ours, obs_ours, rew_ours, term_ours, trunc_ours, info_ours = ours
    new_theirs, obs_theirs, rew_theirs, term_theirs, trunc_theirs, info_theirs = theirs
    for k, (a, b) in enumerate(zip(new_ours, new_theirs, strict=True)):
        assert a.tobytes() == b.tobytes(), f"state {k}: {a} != {b}"
    for k, (a, b) in enumerate(zip(obs_ours, obs_theirs, strict=True)):
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), f"obs {k}: {a} != {b}"
    assert np.array(rew_ours).tobytes() == np.array(rew_theirs, dtype=np.float64).tobytes()
    assert term_ours == term_theirs
    assert trunc_ours == trunc_theirs
    assert info_ours == info_theirs


@pytest.mark.parametrize("frameskip", [1, 3])
@pytest.mark.parametrize("time_limit", [True, False], ids=["time-limit", "no-limit"])
@pytest.mark.parametrize("name", ENVS)
def test_kernel_batches_equal_the_bulk_loop(name, time_limit, frameskip):
    rng = np.random.default_rng(7)
    kwargs = {"frameskip": frameskip, "remove_time_limit": not time_limit, "autoreset": True}
    ours, theirs = ClassicControl(name, **kwargs), ClassicControl(name, **kwargs)
    assert ours._kernel is not None, "no kernel for this env"
    theirs._kernel = None  # the element-by-element bulk loop
    states = collect_states(theirs, rng, 300)
    actions = actions_for(theirs, rng, len(states))
    dts = [int(d) for d in rng.integers(1, 6, size=len(states))]
    expected = theirs.step_batch(actions, states, dts, return_state=True)
    got = ours.step_batch(actions, states, dts, return_state=True)
    assert_same_columns(got, expected)
    assert ours.get_state().tobytes() == theirs.get_state().tobytes()
    # Episodes do end in these batches (CartPole falls; the others reach their time limit),
    # so the end-of-episode logic is exercised (Acrobot and MountainCarContinuous rarely end).
    if name.startswith("CartPole") or (time_limit and name in {"Pendulum-v1", "MountainCar-v0"}):
        assert any(expected[3]) or any(expected[4])


@pytest.mark.parametrize("name", ["CartPole-v1", "Pendulum-v1"])
def test_small_batches_and_unstackable_actions_take_the_bulk_loop(name):
    env = ClassicControl(name)
    state, *_ = env.reset()
    n = env._kernel.min_batch - 1
    kernel_steps = []
    step = env._kernel.step
    env._kernel.step = lambda *args, **kwargs: kernel_steps.append(1) or step(*args, **kwargs)
    small = env.step_batch([env.sample_action()] * n, [state] * n)
    assert len(small[0]) == n and not kernel_steps  # the bulk loop
    env.step_batch([env.sample_action()] * (n + 1), [state] * (n + 1))
    assert kernel_steps  # the kernel, from min_batch up
    if name == "Pendulum-v1":  # a float64 action among float32 ones cannot be stacked
        actions = [np.array([0.5], np.float32)] * 20 + [np.array([0.5], np.float64)]
        twin = ClassicControl(name)
        twin._kernel = None
        states = [state] * 21
        assert_same_columns(
            env.step_batch(actions, states, return_state=True),
            twin.step_batch(actions, states, return_state=True),
        )
