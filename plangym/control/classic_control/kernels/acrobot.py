"""The vectorized step of gymnasium's Acrobot-v1 (``AcrobotEnv``), bit for bit.

The env appends the torque to its state (promoting a float32 state, as reset leaves it, to
float64 exactly), integrates ``_dsdt`` over one ``dt`` with ``rk4``, wraps both angles into
``[-pi, pi]`` by repeated subtraction (``wrap``) and bounds both velocities (``bound``, with
Python's ``min`` and ``max``). Here each of those runs on whole columns: the same operations
in the same order, the constant parts of each expression computed as Python computes them,
the squares of NumPy scalars as C's ``pow``
(:func:`~plangym.control.classic_control.kernels.libm_check.scalar_square`). With a nonzero
``torque_noise_max`` the env draws from its generator in step: :func:`make_kernel` refuses.

An angle so large that ``wrap`` would loop more than a million times (gymnasium's step
would run for many seconds, or forever for an infinite angle) raises ValueError here.

>>> import gymnasium
>>> env = gymnasium.make("Acrobot-v1").unwrapped
>>> _ = env.reset(seed=0)
>>> kernel = AcrobotKernel(env)
>>> new, rewards, terminated = kernel.step(np.array([env.state]), np.array([2]), None, None)
>>> obs, reward, *_ = env.step(2)
>>> new[0].tobytes() == env.state.tobytes(), kernel.observe(new)[0].tobytes() == obs.tobytes()
(True, True)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from plangym.control.classic_control.kernels import (
    FLOAT32_ARRAY,
    FLOAT64_ARRAY,
    TUPLE,
    Kernel,
)
from plangym.control.classic_control.kernels.libm_check import np_cos, np_sin, scalar_square

# Beyond this many turns, wrap's loop is refused rather than run (see the module docstring).
_MAX_WRAP_TURNS = 1_000_000


class AcrobotKernel(Kernel):
    """Vectorized ``AcrobotEnv.step``: physics ``(theta1, theta2, dtheta1, dtheta2)``."""

    gym_class = "gymnasium.envs.classic_control.acrobot.AcrobotEnv"
    own_methods = ("step", "_dsdt", "_terminal", "_get_ob")

    n_physics = 4
    scalar_calls = ("np.cos", "np.sin", "float64 ** 2")
    min_batch = 8
    exact_kinds = frozenset({FLOAT64_ARRAY, FLOAT32_ARRAY, TUPLE})

    def step(self, physics, actions, steps_beyond, last_u, *, kinds=None, out=None):
        """Step every row once (see :meth:`Kernel.step`)."""
        env = self.env
        if env.torque_noise_max != 0:
            raise ValueError("torque_noise_max is not 0: Acrobot's step draws random torques")
        theta1, theta2, dtheta1, dtheta2 = self.held(physics, kinds).T.copy()
        torque = np.asarray(env.AVAIL_TORQUE, dtype=np.float64)[np.asarray(actions)]
        theta1, theta2, dtheta1, dtheta2 = _rk4(env, (theta1, theta2, dtheta1, dtheta2, torque))
        pi = np.pi
        theta1 = _wrap(theta1, -pi, pi)
        theta2 = _wrap(theta2, -pi, pi)
        dtheta1 = _bound(dtheta1, -env.MAX_VEL_1, env.MAX_VEL_1)
        dtheta2 = _bound(dtheta2, -env.MAX_VEL_2, env.MAX_VEL_2)
        new_physics = np.stack((theta1, theta2, dtheta1, dtheta2), axis=1, out=out)
        terminated = -np_cos(theta1) - np_cos(theta2 + theta1) > 1.0
        rewards = np.where(terminated, 0.0, -1.0)
        return new_physics, rewards, terminated

    @classmethod
    def accepts(cls, env: Any) -> bool:
        """Refuse ``torque_noise_max``: the env then draws from its generator in step."""
        return env.torque_noise_max == 0

    def observe(self, physics):
        """Return ``(cos t1, sin t1, cos t2, sin t2, dt1, dt2)`` as float32, as ``_get_ob``."""
        s = np.asarray(physics, dtype=np.float64)
        columns = (np_cos(s[:, 0]), np_sin(s[:, 0]), np_cos(s[:, 1]), np_sin(s[:, 1]))
        return np.stack((*columns, s[:, 2], s[:, 3]), axis=1).astype(np.float32)


def _dsdt(env: Any, s: tuple) -> tuple:
    """Return ``AcrobotEnv._dsdt`` of the augmented state columns ``s`` (its first four)."""
    m1 = env.LINK_MASS_1
    m2 = env.LINK_MASS_2
    l1 = env.LINK_LENGTH_1
    lc1 = env.LINK_COM_POS_1
    lc2 = env.LINK_COM_POS_2
    I1 = env.LINK_MOI  # noqa: N806 - the env's names
    I2 = env.LINK_MOI  # noqa: N806
    g = 9.8
    theta1, theta2, dtheta1, dtheta2, a = s
    cos_theta2, sin_theta2 = np_cos(theta2), np_sin(theta2)
    d1 = m1 * lc1**2 + m2 * (l1**2 + lc2**2 + 2 * l1 * lc2 * cos_theta2) + I1 + I2
    d2 = m2 * (lc2**2 + l1 * lc2 * cos_theta2) + I2
    phi2 = m2 * lc2 * g * np_cos(theta1 + theta2 - np.pi / 2.0)
    phi1 = (
        -m2 * l1 * lc2 * scalar_square(dtheta2) * sin_theta2
        - 2 * m2 * l1 * lc2 * dtheta2 * dtheta1 * sin_theta2
        + (m1 * lc1 + m2 * l1) * g * np_cos(theta1 - np.pi / 2)
        + phi2
    )
    if env.book_or_nips == "nips":
        ddtheta2 = (a + d2 / d1 * phi1 - phi2) / (m2 * lc2**2 + I2 - scalar_square(d2) / d1)
    else:
        ddtheta2 = (
            a + d2 / d1 * phi1 - m2 * l1 * lc2 * scalar_square(dtheta1) * sin_theta2 - phi2
        ) / (m2 * lc2**2 + I2 - scalar_square(d2) / d1)
    ddtheta1 = -(d2 * ddtheta2 + phi1) / d1
    return dtheta1, dtheta2, ddtheta1, ddtheta2, 0.0


def _rk4(env: Any, y0: tuple) -> tuple:
    """Return ``rk4(env._dsdt, y0, [0, env.dt])[:4]``, on columns."""
    t = [0, env.dt]
    dt = t[1] - t[0]
    dt2 = dt / 2.0
    k1 = _dsdt(env, y0)
    k2 = _dsdt(env, tuple(y + dt2 * k for y, k in zip(y0, k1, strict=True)))
    k3 = _dsdt(env, tuple(y + dt2 * k for y, k in zip(y0, k2, strict=True)))
    k4 = _dsdt(env, tuple(y + dt * k for y, k in zip(y0, k3, strict=True)))
    sixth = dt / 6.0
    return tuple(y0[j] + sixth * (k1[j] + 2 * k2[j] + 2 * k3[j] + k4[j]) for j in range(4))


def _wrap(x: np.ndarray, m: float, big_m: float) -> np.ndarray:
    """Return acrobot's ``wrap(x, m, M)`` of every element: the same subtractions, in turn."""
    diff = big_m - m
    too_far = np.abs(x) > _MAX_WRAP_TURNS * abs(diff)  # infinite angles too, not NaN
    if too_far.any():
        raise ValueError(f"an angle too large to wrap turn by turn: {x[too_far][0]!r}")
    x = x.copy()
    rows = np.flatnonzero(x > big_m)
    while rows.size:
        x[rows] = x[rows] - diff
        rows = rows[x[rows] > big_m]
    rows = np.flatnonzero(x < m)
    while rows.size:
        x[rows] = x[rows] + diff
        rows = rows[x[rows] < m]
    return x


def _bound(x: np.ndarray, m: float, big_m: float) -> np.ndarray:
    """Return acrobot's ``bound(x, m, M)``: ``min(max(x, m), M)`` with Python's min and max."""
    x = np.where(m > x, m, x)  # max(x, m) keeps x unless m > x (so NaN stays)
    return np.where(big_m < x, big_m, x)  # min(., M) keeps it unless M < it
