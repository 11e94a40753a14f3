"""The classic control kernels step every row bit for bit as gymnasium's scalar env steps it.

For each env, batches of states (realistic ones and edge cases: termination thresholds, goal
positions, velocity bounds, angles near pi, large velocities, CartPole past the end) and
actions (out-of-bound torques too) go through the kernel in one pass and, row by row,
through ``gymnasium.make(id).unwrapped`` set to that state; the new states, observations,
rewards, flags, ``steps_beyond_terminated`` and ``last_u`` must have the same bits. Chains
of 200 steps from reset states compare the two as they go. Every batch of edge cases is
drawn with the scalar math on NumPy's loops or forced onto its exact fallback, the scalar
calls element by element (``PLANGYM_SCALAR_MATH=1``). Then the cases where
:func:`kernel_for` must refuse.
"""

import contextlib
import functools
import math
import os
import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.envs.classic_control.acrobot import AcrobotEnv
from gymnasium.envs.classic_control.cartpole import CartPoleEnv
from hypothesis import given, settings
from hypothesis import strategies as st

from plangym.control.classic_control.kernels import (
    KERNEL_ENV_IDS,
    Kernel,
    kernel_for,
    libm_check,
    set_kernels_enabled,
)
from plangym.control.classic_control.state import _physics_kind

ENV_IDS = list(KERNEL_ENV_IDS)
PI = math.pi
F32_MAX = float(np.finfo(np.float32).max)


@functools.cache
def scalar_env(env_id, **kwargs):
    env = gymnasium.make(env_id, **kwargs).unwrapped
    env.reset(seed=0)
    return env


def f32(value):
    return float(np.float32(value))


def around(*values):
    """The values, their float32 roundings and the doubles just beside each."""
    out = []
    for v in values:
        out += [v, f32(v), math.nextafter(v, math.inf), math.nextafter(v, -math.inf)]
    return out


def edge_or(lo, hi, *edges):
    ranged = st.floats(lo, hi, allow_nan=False, allow_infinity=False)
    return st.one_of(ranged, st.sampled_from(around(*edges)) if edges else ranged)


# The state's kind as the env held it: 0 float64 array, 1 float32 array, 2 tuple.
def put_state(env, row, kind):
    if kind == 1:
        env.state = np.array(row, dtype=np.float32)
    elif kind == 2:
        env.state = tuple(np.float64(v) for v in row)
    else:
        env.state = np.array(row, dtype=np.float64)


def scalar_step(env, row, kind, action, steps_beyond, last_u):
    """Step the scalar env from this state; return what the kernel must match."""
    put_state(env, row, kind)
    if hasattr(env, "steps_beyond_terminated"):
        env.steps_beyond_terminated = None if steps_beyond == -1 else int(steps_beyond)
    if hasattr(env, "last_u"):
        env.last_u = last_u
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # stepping past the end; NaN and overflow
        obs, reward, terminated, truncated, _ = env.step(action)
    assert truncated is False
    beyond = getattr(env, "steps_beyond_terminated", None)
    return (
        np.array(env.state, dtype=np.float64),
        _physics_kind(env.state),
        obs,
        float(reward),
        terminated,
        -1 if beyond is None else beyond,
        getattr(env, "last_u", None),
    )


@contextlib.contextmanager
def scalar_math_forced(forced=True):
    """Put every scalar call of the kernels on its scalar loop (the fallback) meanwhile."""
    before = os.environ.get("PLANGYM_SCALAR_MATH")
    os.environ["PLANGYM_SCALAR_MATH"] = "1" if forced else "0"
    libm_check.scalar_math_forced.cache_clear()  # read once per process otherwise
    try:
        yield
    finally:
        if before is None:
            del os.environ["PLANGYM_SCALAR_MATH"]
        else:
            os.environ["PLANGYM_SCALAR_MATH"] = before
        libm_check.scalar_math_forced.cache_clear()


def row_action(actions, i):
    return int(actions[i]) if actions.ndim == 1 else actions[i]


def assert_batch_exact(
    env,
    physics,
    actions,
    kinds=None,
    steps_beyond=None,
    last_u=None,
    pass_kinds=True,
    forced=False,
):
    """Step the batch with the kernel and each row with ``env``; compare every bit.

    ``forced``: the kernel's scalar math on its scalar loops (the fallback).
    """
    n = len(physics)
    physics = np.asarray(physics, dtype=np.float64).reshape(n, -1)
    kinds = np.zeros(n, dtype=np.uint8) if kinds is None else np.asarray(kinds, dtype=np.uint8)
    kernel = kernel_for(env)
    assert kernel is not None
    before = physics.copy()
    beyond = None if steps_beyond is None else np.array(steps_beyond, dtype=np.int64)
    torques = None if last_u is None else np.array(last_u, dtype=np.float64)
    with scalar_math_forced(forced):
        if forced:
            assert kernel.scalar_loops() == kernel.scalar_calls
        new, rewards, terminated = kernel.step(
            physics, actions, beyond, torques, kinds=kinds if pass_kinds else None
        )
        observations = kernel.observe(new)
        # In place (out=physics, column-major as a vector env holds them): the same bits.
        in_place = np.array(physics, order="F")
        beyond_too = None if beyond is None else np.array(steps_beyond, dtype=np.int64)
        torques_too = None if last_u is None else np.array(last_u, dtype=np.float64)
        same = kernel.step(
            in_place,
            actions,
            beyond_too,
            torques_too,
            kinds=kinds if pass_kinds else None,
            out=in_place,
        )
    assert physics.tobytes() == before.tobytes(), "the kernel changed its input"
    assert same[0] is in_place and in_place.tobytes() == new.tobytes(), "stepped in place"
    assert same[1].tobytes() == rewards.tobytes() and (same[2] == terminated).all()
    assert beyond is None or (beyond_too == beyond).all()
    assert torques_too is None or torques_too.tobytes() == torques.tobytes()
    assert new.dtype == np.float64 and new.shape == physics.shape
    assert rewards.dtype == np.float64 and rewards.shape == (n,)
    assert terminated.dtype == np.bool_ and terminated.shape == (n,)
    assert observations.dtype == np.float32
    for i in range(n):
        sb = -1 if steps_beyond is None else int(steps_beyond[i])
        lu = None if last_u is None else float(last_u[i])
        state, kind, obs, reward, ended, sb_after, lu_after = scalar_step(
            env, physics[i], int(kinds[i]), row_action(actions, i), sb, lu
        )
        where = f"row {i}: {physics[i].tolist()} action {actions[i]!r} kind {kinds[i]}"
        assert kind == kernel.physics_kind, where
        assert new[i].tobytes() == state.tobytes(), f"{where}: {new[i]} != {state}"
        assert observations[i].tobytes() == np.asarray(obs, np.float32).tobytes(), where
        assert obs.dtype == np.float32, where
        assert np.float64(rewards[i]).tobytes() == np.float64(reward).tobytes(), (
            f"{where}: reward {rewards[i]!r} != {reward!r}"
        )
        assert bool(terminated[i]) == ended, where
        if kernel.has_steps_beyond:
            assert beyond[i] == sb_after, where
        if kernel.has_last_u:
            assert np.float64(torques[i]).tobytes() == np.float64(lu_after).tobytes(), where
    return n


def assert_kinds_batch_exact(env, batch, forced):
    """:func:`assert_batch_exact` of a drawn ``(physics, actions, kinds)`` batch."""
    physics, actions, kinds = batch
    assert_batch_exact(env, physics, actions, kinds=kinds, forced=forced)


# Strategies: rows of states with their kind, and actions --------------------------------------
def rows_of(*columns, max_size=40):
    """Lists of 1 to ``max_size`` rows, a tuple of one value drawn from each column."""
    return st.lists(st.tuples(*columns), min_size=1, max_size=max_size)


@st.composite
def cartpole_batches(draw):
    rows = draw(
        rows_of(
            edge_or(-3.0, 3.0, 2.4, -2.4),
            edge_or(-3.0, 3.0, 0.0, 1e-9, -1e-9),
            edge_or(-0.5, 0.5, 12 * 2 * PI / 360, -12 * 2 * PI / 360, PI, -PI),
            st.one_of(edge_or(-4.0, 4.0, 0.0), edge_or(-1e3, 1e3, 50.0, -50.0)),
            st.sampled_from([0, 1]),
            st.sampled_from([-1, -1, 0, 1, 5]),
        )
    )
    physics = np.array([r[:4] for r in rows])
    return physics, np.array([r[4] for r in rows]), np.array([r[5] for r in rows])


@st.composite
def acrobot_batches(draw):
    angle = st.one_of(edge_or(-PI, PI, PI, -PI, 0.0), edge_or(-30.0, 30.0))
    rows = draw(
        rows_of(
            angle,
            angle,
            st.one_of(edge_or(-4 * PI, 4 * PI, 4 * PI, -4 * PI), edge_or(-40.0, 40.0)),
            st.one_of(edge_or(-9 * PI, 9 * PI, 9 * PI, -9 * PI), edge_or(-90.0, 90.0)),
            st.sampled_from([0, 1, 2]),
            st.sampled_from([0, 1]),  # a float64 state, or a float32 one (after reset)
            max_size=24,
        )
    )
    # Float32 rows not rounded: the env gets them rounded, from the record, so must the kernel.
    return (
        np.array([r[:4] for r in rows]),
        np.array([r[4] for r in rows]),
        np.array([r[5] for r in rows]),
    )


@st.composite
def mountain_car_batches(draw):
    rows = draw(
        rows_of(
            edge_or(-1.3, 0.7, -1.2, 0.5, 0.6),
            edge_or(-0.08, 0.08, 0.07, -0.07, 0.0, 1e-3, -1e-3),
            st.sampled_from([0, 1, 2]),
            st.sampled_from([0, 2]),  # after a reset, or after a step
        )
    )
    physics = np.array([r[:2] for r in rows])
    return physics, np.array([r[2] for r in rows]), np.array([r[3] for r in rows])


def box_actions(low, high, bound):
    """Actions in and beyond [-bound, bound], at and around the bounds."""
    return st.one_of(
        edge_or(low, high, bound, -bound, 0.0, -0.0),
        edge_or(-1e6, 1e6),
        st.sampled_from([F32_MAX, -F32_MAX, 1e30, -1e-30, 5e-324]),
    )


@st.composite
def continuous_mountain_car_batches(draw):
    rows = draw(
        rows_of(
            edge_or(-1.3, 0.7, -1.2, 0.45, 0.6),
            edge_or(-0.08, 0.08, 0.07, -0.07, 0.0),
            box_actions(-3.0, 3.0, 1.0),
            st.sampled_from([0, 1]),  # after a reset (float64), after a step (float32)
        )
    )
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    physics = np.array([r[:2] for r in rows])
    kinds = np.array([r[3] for r in rows])
    physics[kinds == 1] = physics[kinds == 1].astype(np.float32)
    with np.errstate(over="ignore"):
        actions = np.array([[r[2]] for r in rows], dtype=dtype)
    return physics, actions, kinds


@st.composite
def pendulum_batches(draw):
    rows = draw(
        rows_of(
            st.one_of(edge_or(-PI, PI, PI, -PI, 0.0), edge_or(-100.0, 100.0)),
            st.one_of(edge_or(-8.0, 8.0, 8.0, -8.0, 0.0), edge_or(-1e3, 1e3)),
            box_actions(-5.0, 5.0, 2.0),
            edge_or(-2.0, 2.0),
        )
    )
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    physics = np.array([r[:2] for r in rows])
    with np.errstate(over="ignore"):
        actions = np.array([[r[2]] for r in rows], dtype=dtype)
    return physics, actions, np.array([r[3] for r in rows])


# Batches of edge cases ------------------------------------------------------------------------
@settings(max_examples=200)
@given(
    batch=cartpole_batches(),
    env_id=st.sampled_from(["CartPole-v0", "CartPole-v1"]),
    forced=st.booleans(),
)
def test_cartpole_batches(batch, env_id, forced):
    physics, actions, steps_beyond = batch
    assert_batch_exact(
        scalar_env(env_id), physics, actions, steps_beyond=steps_beyond, forced=forced
    )


@settings(max_examples=150)
@given(
    batch=cartpole_batches(),
    euler=st.booleans(),
    sutton_barto=st.booleans(),
    forced=st.booleans(),
)
def test_cartpole_settings(batch, euler, sutton_barto, forced):
    physics, actions, steps_beyond = batch
    env = scalar_env("CartPole-v1", sutton_barto_reward=sutton_barto)
    env.kinematics_integrator = "euler" if euler else "semi-implicit euler"
    try:
        assert_batch_exact(env, physics, actions, steps_beyond=steps_beyond, forced=forced)
    finally:
        env.kinematics_integrator = "euler"


@settings(max_examples=60)
@given(
    batch=cartpole_batches(),
    force_mag=st.sampled_from([10.0, 3.3, -7.1, 0.0, -0.0, 1e308, -1e308, np.inf]),
)
def test_cartpole_forces_of_any_magnitude(batch, force_mag):
    """The kernel's forces are the env's, bit for bit, zeros' signs and overflows included."""
    physics, actions, steps_beyond = batch
    env = scalar_env("CartPole-v1")
    env.force_mag = force_mag
    try:
        with np.errstate(all="ignore"):
            assert_batch_exact(env, physics, actions, steps_beyond=steps_beyond)
    finally:
        env.force_mag = 10.0


@settings(max_examples=150)
@given(batch=acrobot_batches(), forced=st.booleans())
def test_acrobot_batches(batch, forced):
    assert_kinds_batch_exact(scalar_env("Acrobot-v1"), batch, forced)


@settings(max_examples=60)
@given(batch=acrobot_batches(), dt=st.sampled_from([0.2, 0.05, 0.37]), forced=st.booleans())
def test_acrobot_nips_and_dt(batch, dt, forced):
    env = scalar_env("Acrobot-v1", render_mode=None)  # another instance than the book one
    env.book_or_nips, env.dt = "nips", dt
    assert_kinds_batch_exact(env, batch, forced)


@settings(max_examples=200)
@given(batch=mountain_car_batches(), forced=st.booleans())
def test_mountain_car_batches(batch, forced):
    assert_kinds_batch_exact(scalar_env("MountainCar-v0"), batch, forced)


@settings(max_examples=250)
@given(
    batch=continuous_mountain_car_batches(),
    goal_velocity=st.sampled_from([0, 0.01]),
    forced=st.booleans(),
)
def test_continuous_mountain_car_batches(batch, goal_velocity, forced):
    env = scalar_env("MountainCarContinuous-v0", goal_velocity=goal_velocity)
    assert_kinds_batch_exact(env, batch, forced)
    physics, actions, _ = batch
    # Without kinds, a row of float32 values is taken for a float32 state.
    inferred = (physics.astype(np.float32) == physics).all(axis=1).astype(np.uint8)
    assert_batch_exact(env, physics, actions, kinds=inferred, pass_kinds=False, forced=forced)


@settings(max_examples=200)
@given(batch=pendulum_batches(), g=st.sampled_from([10.0, 9.81]), forced=st.booleans())
def test_pendulum_batches(batch, g, forced):
    physics, actions, last_u = batch
    assert_batch_exact(
        scalar_env("Pendulum-v1", g=g), physics, actions, last_u=last_u, forced=forced
    )


# Large random batches -------------------------------------------------------------------------
def random_batch(env_id, rng, n):
    """``n`` rows over (and a little beyond) the env's ranges, with actions and kinds."""
    kinds, steps_beyond, last_u = np.zeros(n, dtype=np.uint8), None, None
    if env_id.startswith("CartPole"):
        physics = rng.uniform([-2.6, -3, -0.25, -4], [2.6, 3, 0.25, 4], size=(n, 4))
        actions = rng.integers(2, size=n)
        steps_beyond = rng.choice([-1, 0, 1, 5], size=n)
    elif env_id == "Acrobot-v1":
        physics = rng.uniform([-PI, -PI, -15, -30], [PI, PI, 15, 30], size=(n, 4))
        actions = rng.integers(3, size=n)
        kinds = rng.integers(2, size=n).astype(np.uint8)  # float32 rows rounded by the kernel
    elif env_id == "MountainCar-v0":
        physics = rng.uniform([-1.25, -0.075], [0.65, 0.075], size=(n, 2))
        actions = rng.integers(3, size=n)
        kinds = rng.choice([0, 2], size=n).astype(np.uint8)
    elif env_id == "MountainCarContinuous-v0":
        physics = rng.uniform([-1.25, -0.075], [0.65, 0.075], size=(n, 2))
        kinds = rng.integers(2, size=n).astype(np.uint8)
        physics[kinds == 1] = physics[kinds == 1].astype(np.float32)
        actions = rng.uniform(-1.5, 1.5, size=(n, 1)).astype(rng.choice([np.float32, np.float64]))
    else:
        physics = rng.uniform([-2 * PI, -10], [2 * PI, 10], size=(n, 2))
        actions = rng.uniform(-3, 3, size=(n, 1)).astype(np.float32)
        last_u = rng.uniform(-2, 2, size=n)
    return physics, actions, kinds, steps_beyond, last_u


@pytest.mark.parametrize("env_id", ENV_IDS)
@pytest.mark.parametrize(
    ("forced", "sizes"), [(False, (1, 7, 6000)), (True, (1, 600))], ids=["numpy", "scalar-loops"]
)
def test_random_batches(env_id, forced, sizes):
    """``forced``: every scalar call on its fallback, the scalar loop: still gymnasium's bits."""
    rng = np.random.default_rng(abs(hash(env_id)) % 2**32)
    for n in sizes:
        physics, actions, kinds, steps_beyond, last_u = random_batch(env_id, rng, n)
        env = scalar_env(env_id)
        assert_batch_exact(env, physics, actions, kinds, steps_beyond, last_u, forced=forced)


# Chains of steps from reset states ------------------------------------------------------------
def chain_actions(env, rng, n):
    space = env.action_space
    if hasattr(space, "n"):
        return rng.integers(space.n, size=n)
    return rng.uniform(-1.5, 1.5, size=(n, 1)).astype(np.float32) * space.high


@pytest.mark.parametrize("pass_kinds", [True, False], ids=["kinds", "inferred"])
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_chains_of_200_steps(env_id, pass_kinds):
    n_rows, n_steps = 16, 200
    envs = [gymnasium.make(env_id).unwrapped for _ in range(n_rows)]
    for seed, env in enumerate(envs):
        env.reset(seed=seed)
    kernel = kernel_for(envs[0])
    physics = np.array([np.array(env.state, dtype=np.float64) for env in envs])
    kinds = np.array([_physics_kind(env.state) for env in envs], dtype=np.uint8)
    beyond = np.full(n_rows, -1, dtype=np.int64) if kernel.has_steps_beyond else None
    last_u = np.zeros(n_rows) if kernel.has_last_u else None
    rng = np.random.default_rng(3)
    ended_any = False
    for step in range(n_steps):
        actions = chain_actions(envs[0], rng, n_rows)
        physics, rewards, terminated = kernel.step(
            physics, actions, beyond, last_u, kinds=kinds if pass_kinds else None
        )
        kinds[:] = kernel.physics_kind
        observations = kernel.observe(physics)
        ended_any |= terminated.any()
        for i, env in enumerate(envs):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                obs, reward, ended, _, _ = env.step(row_action(actions, i))
            where = f"step {step} row {i}"
            assert physics[i].tobytes() == np.array(env.state, np.float64).tobytes(), where
            assert observations[i].tobytes() == obs.tobytes(), where
            assert rewards[i].tobytes() == np.float64(reward).tobytes(), where
            assert bool(terminated[i]) == ended, where
            if beyond is not None:
                expected = env.steps_beyond_terminated
                assert beyond[i] == (-1 if expected is None else expected), where
            if last_u is not None:
                assert last_u[i] == float(env.last_u), where
    if env_id.startswith("CartPole"):
        assert ended_any  # the chain went past the end of episodes


# Particular cases -----------------------------------------------------------------------------
def test_continuous_mountain_car_other_dtypes_and_overflow():
    env = scalar_env("MountainCarContinuous-v0")
    physics = np.array([[-0.5, 0.01], [-1.2, -0.07], [0.44, 0.07]])
    kinds = np.array([0, 1, 1])
    physics[1:] = physics[1:].astype(np.float32)
    for dtype in (np.float16, np.int64):
        actions = np.array([[1], [-3], [0]], dtype=dtype)
        assert_batch_exact(env, physics, actions, kinds=kinds)
    kernel = kernel_for(env)
    huge = np.array([[1e200]])  # math.pow overflows: gymnasium raises, so does the kernel
    with pytest.raises(OverflowError):
        kernel.step(physics[:1], huge, None, None)
    with pytest.raises(OverflowError):
        scalar_step(env, physics[0], 0, huge[0], -1, None)


def landing_rows(env, rng, column, target, n):
    """Float32 states whose step lands ``column`` (0 position, 1 velocity) exactly on ``target``.

    There NumPy 2 compares float32 with float32: ``np.float32(0.45) >= 0.45`` is True, the
    float64 comparison says False. Found by stepping gymnasium from the float32 states
    around the one that lands nearest.
    """
    rows, actions = [], []
    while len(rows) < n:
        state = np.array([rng.uniform(0.44, 0.5), rng.uniform(0.005, 0.06)], dtype=np.float32)
        action = rng.uniform(-0.9, 0.9, size=1).astype(np.float32)
        for _ in range(4):  # the landing moves with the state: close in on it
            new, *_ = scalar_step(env, state, 1, action, -1, None)
            state[column] += np.float32(target) - np.float32(new[column])
        for k in range(-24, 25):
            candidate = state.copy()
            candidate[column] += np.float32(k) * np.spacing(state[column])
            new, *_ = scalar_step(env, candidate, 1, action, -1, None)
            if new[column] == f32(target):
                rows.append(candidate.astype(np.float64))
                actions.append(action)
                break
    return np.array(rows), np.array(actions)


def test_continuous_mountain_car_float32_comparisons():
    rng = np.random.default_rng(5)
    for goal_velocity, column, target in ((0, 0, 0.45), (0.01, 1, 0.01)):
        env = scalar_env("MountainCarContinuous-v0", goal_velocity=goal_velocity)
        physics, actions = landing_rows(env, rng, column, target, 6)
        kernel = kernel_for(env)
        _, rewards, terminated = kernel.step(physics, actions, None, None, kinds=[1] * 6)
        # At the float32 goal (in float64 it falls short), or at the float32 goal velocity.
        assert terminated.any() if column else terminated.all()
        assert_batch_exact(env, physics, actions, kinds=[1] * len(physics))


def test_non_finite_states_and_actions():
    nan, inf = math.nan, math.inf
    discrete = {
        "CartPole-v1": [[nan, 0, 0, 0], [0, inf, 0, 0], [0, 0, -inf, 0], [0, 0, 0, -nan]],
        "Acrobot-v1": [[nan, 0, 0, 0], [0, 0, inf, 0], [0, 0, 0, -nan]],
        "MountainCar-v0": [[nan, 0], [0, inf], [0.2, -nan]],
    }
    for env_id, rows in discrete.items():
        beyond = [-1] * len(rows) if env_id.startswith("CartPole") else None
        actions = np.arange(len(rows)) % 2
        with np.errstate(all="ignore"):
            assert_batch_exact(scalar_env(env_id), rows, actions, steps_beyond=beyond)
    rows = [[-0.5, 0.01], [nan, 0.0], [0.1, inf], [0.3, -nan]]
    torques = np.array([[nan], [1], [0], [-nan]], dtype=np.float32)
    with np.errstate(all="ignore"):
        assert_batch_exact(scalar_env("MountainCarContinuous-v0"), rows, torques)
        assert_batch_exact(scalar_env("Pendulum-v1"), rows, torques, last_u=[0.0] * 4)
    for env_id, action in (
        ("MountainCar-v0", np.array([1])),
        ("MountainCarContinuous-v0", np.ones((1, 1), np.float32)),
    ):
        env = scalar_env(env_id)
        with pytest.raises(ValueError, match="math domain error"):  # math.cos(inf)
            scalar_step(env, [-inf, 0.0], 0, row_action(action, 0), -1, None)
        with pytest.raises(ValueError, match="math domain error"):
            kernel_for(env).step(np.array([[-inf, 0.0]]), action, None, None)


def test_pendulum_float16_torques():
    physics = np.array([[0.5, -1.0], [3.1, 8.0], [-3.1, -8.0]])
    actions = np.array([[1.5], [-2.5], [2.0]], dtype=np.float16)
    assert_batch_exact(scalar_env("Pendulum-v1"), physics, actions, last_u=[0.0, 1.0, 2.0])


def test_acrobot_refuses_angles_gymnasium_cannot_wrap():
    kernel = kernel_for(scalar_env("Acrobot-v1"))
    for angle in (1e12, -1e15):  # ~1e11 turns and more: gymnasium would loop for hours
        with pytest.raises(ValueError, match="wrap"):
            kernel.step(np.array([[angle, 0.0, 0.0, 0.0]]), np.array([1]), None, None)


def test_float32_states_where_gymnasium_never_has_them():
    for env_id in ("CartPole-v1", "MountainCar-v0", "Pendulum-v1"):
        kernel = kernel_for(scalar_env(env_id))
        physics = np.zeros((2, kernel.n_physics))
        actions = np.zeros((2, 1)) if env_id.startswith("Pendulum") else np.zeros(2, int)
        with pytest.raises(ValueError, match="kind 1"):
            kernel.step(physics, actions, None, np.zeros(2), kinds=np.array([0, 1]))


def test_cartpole_without_steps_beyond():
    env = scalar_env("CartPole-v1")
    kernel = kernel_for(env)
    physics = np.array([[0.0, 0.0, 0.0, 0.0], [2.4, 1.0, 0.0, 0.0]])
    _, rewards, terminated = kernel.step(physics, np.array([1, 1]), None, None)
    assert terminated.tolist() == [False, True] and rewards.tolist() == [1.0, 1.0]


def test_scalar_square_is_numpy_scalar_power():
    ties = 1.5 + (2 * np.arange(512) + 1) * 2.0**-26  # squares halfway between doubles
    assert libm_check.scalar_square(ties).tobytes() == np.array([v**2 for v in ties]).tobytes()
    small = (1 + np.arange(1, 1024, 2) * 2.0**-12).astype(np.float32)
    expected = np.array([v**2 for v in small], dtype=np.float32)
    assert libm_check.scalar_square(small).tobytes() == expected.tobytes()
    halves = np.array([1.5, -2.5], dtype=np.float16)
    assert libm_check.scalar_square(halves).tolist() == [2.25, 6.25]


# When there is no kernel ----------------------------------------------------------------------
class StepOverridden(CartPoleEnv):
    def step(self, action):
        return super().step(action)


class PlainSubclass(CartPoleEnv):
    def describe(self):
        return "a subclass that changes nothing its step calls"


class DsdtOverridden(AcrobotEnv):
    def _dsdt(self, s_augmented):
        return super()._dsdt(s_augmented)


def test_kernel_for_each_env():
    names = {
        "CartPole": "CartPoleKernel",
        "Acrobot": "AcrobotKernel",
        "MountainCar": "MountainCarKernel",
        "MountainCarContinuous": "ContinuousMountainCarKernel",
        "Pendulum": "PendulumKernel",
    }
    for env_id in ENV_IDS:
        kernel = kernel_for(gymnasium.make(env_id).unwrapped)
        assert type(kernel).__name__ == names[env_id.split("-")[0]], env_id
        assert isinstance(kernel, Kernel)


def test_kernel_for_refuses():
    assert kernel_for(StepOverridden()) is None
    assert kernel_for(DsdtOverridden()) is None
    # A subclass is an env of its own, whatever it changes: gymnasium's code steps it.
    assert kernel_for(PlainSubclass()) is None
    assert kernel_for(gymnasium.make("CartPole-v1")) is None  # wrapped
    assert kernel_for(gymnasium.make("FrozenLake-v1").unwrapped) is None
    assert kernel_for(object()) is None
    instance_step = gymnasium.make("CartPole-v1").unwrapped
    instance_step.step = lambda action: None
    assert kernel_for(instance_step) is None
    human = gymnasium.make("Pendulum-v1").unwrapped
    human.render_mode = "human"
    assert kernel_for(human) is None
    noisy = gymnasium.make("Acrobot-v1").unwrapped
    noisy.torque_noise_max = 0.1  # the env draws from np_random in step
    assert kernel_for(noisy) is None
    acrobot = gymnasium.make("Acrobot-v1").unwrapped
    kernel = kernel_for(acrobot)
    acrobot.torque_noise_max = 0.1
    with pytest.raises(ValueError, match="torque_noise_max"):
        kernel.step(np.zeros((1, 4)), np.array([1]), None, None)


def test_kernels_switched_off(monkeypatch):
    env = gymnasium.make("CartPole-v1").unwrapped
    set_kernels_enabled(False)
    try:
        assert kernel_for(env) is None
    finally:
        set_kernels_enabled(True)
    assert kernel_for(env) is not None
    monkeypatch.setenv("PLANGYM_NO_KERNELS", "1")
    assert kernel_for(env) is None
    monkeypatch.setenv("PLANGYM_NO_KERNELS", "0")
    assert kernel_for(env) is not None
    with scalar_math_forced():
        assert kernel_for(env) is not None  # the scalar math's fallback keeps the kernels


# The scalar math: NumPy's loops where exact, else the scalar calls ---------------------------
def test_every_scalar_call_has_an_implementation_here():
    choices = libm_check.choices()
    assert set(choices) == set(libm_check.CALLS)
    for name, label in choices.items():
        call = libm_check.CALLS[name]
        assert label in {libm_check.SCALAR_LOOP} | {fast for fast, _ in call.fast}, name
    for name, call in libm_check.CALLS.items():  # any shape, as the scalar calls give it
        grid = np.array([[0.5, 1.5, -2.25], [3.0, -0.0, 7.5]], dtype=call.operand)
        args = (grid, *call.more_args)
        looped = call.scalar_loop(*args)
        assert looped.shape == grid.shape and looped.dtype == call.operand, name
        assert looped.tobytes() == libm_check.implementation(name)(*args).tobytes(), name
    kernels = [kernel_for(gymnasium.make(env_id).unwrapped) for env_id in ENV_IDS]
    assert all(kernel is not None for kernel in kernels)  # whatever this CPU's NumPy does
    assert {name for kernel in kernels for name in kernel.scalar_calls} == set(libm_check.CALLS)


def test_a_fast_implementation_that_differs_is_not_used(monkeypatch):
    exact = libm_check.CALLS["float64 ** 2"].scalar_loop
    off_by_one = ("next double up", lambda x: np.nextafter(exact(x), np.inf))
    picked = libm_check.ScalarCall("test ** 2", exact, (off_by_one, ("exact copy", exact)))
    monkeypatch.setitem(libm_check.CALLS, picked.name, picked)
    assert libm_check.choices()[picked.name] == "exact copy"
    x_times_x = ("x * x", np.square)  # rounds the halfway squares of the check otherwise
    fallback = libm_check.ScalarCall("test2 ** 2", exact, (off_by_one, x_times_x))
    monkeypatch.setitem(libm_check.CALLS, fallback.name, fallback)
    assert libm_check.choices()[fallback.name] == libm_check.SCALAR_LOOP
    assert "test2 ** 2" in libm_check.scalar_loops()
    with scalar_math_forced():
        assert set(libm_check.choices().values()) == {libm_check.SCALAR_LOOP}
