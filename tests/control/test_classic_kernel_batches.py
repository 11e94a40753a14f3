"""Classic control batches stepped by the vectorized kernels equal the bulk loop's, bit for bit.

Each case plays random trajectories to collect real states (fresh resets, mid-episode,
just ended, past the end), then steps one batch of them with mixed dt through an env using
its kernel and through a twin using the element-by-element bulk loop, and compares every
output: observations, rewards, flags, infos, the new states' bytes and the state each env
is left in.

Then hypothesis draws batches against gymnasium itself: records near the ends of episodes
(CartPole's thresholds, Acrobot over the top, MountainCar's goal) and of the time limit,
CartPole past the end, both physics kinds, mixed dt and frameskip 1-3, each row replayed
by gymnasium's wrapped env (time limit included), put in that state by plangym's codec.
"""

import functools
import math
import warnings

import gymnasium
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plangym.control.classic_control import ClassicControl
from plangym.control.classic_control.kernels import KERNEL_ENV_IDS
from plangym.control.classic_control.state import ClassicStateCodec

ENVS = list(KERNEL_ENV_IDS)


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


# Whole batches against gymnasium, drawn by hypothesis ---------------------------------------
PI = math.pi
# Physics rows per env, reaching past the ends of episodes: CartPole's thresholds, Acrobot
# up and over, MountainCar's goal and left wall.
PHYSICS = {
    "CartPole-v1": ([-2.6, -2.0, -0.25, -3.0], [2.6, 2.0, 0.25, 3.0]),
    "Acrobot-v1": ([-PI, -PI, -12.0, -28.0], [PI, PI, 12.0, 28.0]),
    "MountainCar-v0": ([-1.2, -0.07], [0.6, 0.07]),
    "MountainCarContinuous-v0": ([-1.2, -0.07], [0.6, 0.07]),
    "Pendulum-v1": ([-2 * PI, -8.0], [2 * PI, 8.0]),
}


@functools.cache
def gymnasium_env(name):
    """gymnasium's env with its registered wrappers (time limit included), and a codec."""
    env = gymnasium.make(name)
    env.reset(seed=0)
    return env, ClassicStateCodec(env, cache_rng=False)


def gymnasium_steps(name, record, action, n_steps):
    """Put ``record`` in gymnasium's env with plangym's codec, then step gymnasium alone."""
    env, codec = gymnasium_env(name)
    codec.write(codec.unpack(record.tobytes()))
    reward_sum, steps = 0.0, 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # CartPole stepped past the end of its episode
        for _ in range(n_steps):
            obs, reward, terminal, truncated, _ = env.step(action)
            reward_sum += reward  # as plangym sums a dt's rewards: 0.0 + r1 + r2 ...
            steps += 1
            if terminal or truncated:
                break
    return codec.pack(codec.read()), obs, reward_sum, terminal, truncated, steps


@st.composite
def batches(draw, env):
    """Records near the ends of episodes and of the time limit, with actions and dts."""
    kernel = env._kernel
    n = draw(st.integers(kernel.min_batch, kernel.min_batch + 24))
    template = env.reset()[0]
    records = np.stack([template] * n)
    low, high = PHYSICS[env.name]
    rows = draw(
        st.lists(
            st.tuples(*(st.floats(a, b) for a, b in zip(low, high, strict=True))),
            min_size=n,
            max_size=n,
        )
    )
    kinds = draw(
        st.lists(
            st.sampled_from([int(template["physics_kind"]), kernel.physics_kind]),
            min_size=n,
            max_size=n,
        )
    )
    records["physics"] = rows
    records["physics_kind"] = kinds
    small = records["physics_kind"] == 1  # the env holds float32 there: values that fit
    records["physics"][small] = records["physics"][small].astype(np.float32)
    limit = env._codec.time_limit._max_episode_steps
    near_end = st.integers(limit - 6, limit - 1)
    records["elapsed_steps"] = draw(
        st.lists(st.one_of(near_end, st.integers(0, limit - 1)), min_size=n, max_size=n)
    )
    if kernel.has_steps_beyond:
        records["steps_beyond_terminated"] = draw(
            st.lists(st.sampled_from([-1, -1, 0, 3]), min_size=n, max_size=n)
        )
    if kernel.has_last_u:
        records["has_last_u"] = True
        records["last_u"] = draw(st.lists(st.floats(-2.0, 2.0), min_size=n, max_size=n))
    space = env.action_space
    if hasattr(space, "n"):
        actions = np.array(draw(st.lists(st.integers(0, space.n - 1), min_size=n, max_size=n)))
    else:
        values = draw(st.lists(st.floats(-1.0, 1.0, width=32), min_size=n, max_size=n))
        actions = (np.array(values, dtype=np.float32)[:, None] * space.high).astype(space.dtype)
    dts = draw(st.lists(st.integers(1, 4), min_size=n, max_size=n))
    return records, actions, dts


@settings(max_examples=100)
@given(data=st.data(), frameskip=st.sampled_from([1, 2, 3]))
@pytest.mark.parametrize("name", list(PHYSICS))
def test_kernel_batches_equal_gymnasium(name, data, frameskip):
    env = ClassicControl(name, frameskip=frameskip, remove_time_limit=False, autoreset=False)
    records, actions, dts = data.draw(batches(env))
    new_states, observs, rewards, terminals, truncateds, infos = env.step_batch(
        actions, records, dts, arrays=True
    )
    for i, record in enumerate(records):
        state, obs, reward, terminal, truncated, steps = gymnasium_steps(
            name, record, actions[i], dts[i] * frameskip
        )
        where = f"row {i}: {record} action {actions[i]!r} dt {dts[i]}"
        assert new_states[i].tobytes() == state, where
        assert observs[i].tobytes() == np.asarray(obs, np.float32).tobytes(), where
        assert rewards[i].tobytes() == np.float64(reward).tobytes(), where
        assert (terminals[i], truncateds[i]) == (terminal, truncated), where
        assert infos["n_step"][i] == steps, where
