"""The vectorized step of gymnasium's Pendulum-v1 (``PendulumEnv``), bit for bit.

The torque keeps the action's dtype: a float32 action gives a float32 ``u``, and the terms
``0.001 * (u**2)`` and ``3.0 / (m * l**2) * u`` are float32 products (NumPy 2 takes the
Python float constants for float32) before joining the float64 sums. The squares of NumPy
scalars (``angle_normalize(th) ** 2``, ``thdot**2``, ``u**2``) are C's ``pow``, not
``x * x``: :func:`~plangym.control.classic_control.kernels.libm_check.scalar_square`
computes them so.

>>> import gymnasium
>>> env = gymnasium.make("Pendulum-v1").unwrapped
>>> _ = env.reset(seed=0)
>>> kernel, last_u = PendulumKernel(env), np.zeros(1)
>>> action = np.array([[3.0]], dtype=np.float32)  # clipped to max_torque
>>> new, rewards, _ = kernel.step(np.array([env.state]), action, None, last_u)
>>> _, reward, *_ = env.step(action[0])
>>> new[0].tobytes() == env.state.tobytes(), float(rewards[0]) == float(reward), last_u
(True, True, array([2.]))
"""

from __future__ import annotations

import numpy as np

from plangym.control.classic_control.kernels import Kernel
from plangym.control.classic_control.kernels.libm_check import (
    TWO_PI,
    np_cos,
    np_sin,
    remainder,
    scalar_square,
)


class PendulumKernel(Kernel):
    """Vectorized ``PendulumEnv.step``: physics ``(theta, theta_dot)``."""

    gym_class = "gymnasium.envs.classic_control.pendulum.PendulumEnv"
    own_methods = ("step", "_get_obs")

    n_physics = 2
    scalar_calls = ("np.cos", "np.sin", "float64 ** 2", "float32 ** 2", "%")
    min_batch = 4
    has_last_u = True

    def step(self, physics, actions, steps_beyond, last_u, *, kinds=None, out=None):
        """Step every row once (see :meth:`Kernel.step`)."""
        env = self.env
        physics = self.held(physics, kinds)
        th, thdot = physics[:, 0], physics[:, 1]
        g, m, l, dt = env.g, env.m, env.l, env.dt  # noqa: E741 - the env's names
        actions = np.asarray(actions)
        u = np.clip(actions.reshape(len(actions), -1), -env.max_torque, env.max_torque)[:, 0]
        if last_u is not None:
            last_u[...] = u
        costs = (
            scalar_square(_angle_normalize(th))
            + 0.1 * scalar_square(thdot)
            + 0.001 * scalar_square(u)
        )
        newthdot = thdot + (3 * g / (2 * l) * np_sin(th) + 3.0 / (m * l**2) * u) * dt
        newthdot = np.clip(newthdot, -env.max_speed, env.max_speed)
        newth = th + newthdot * dt
        new_physics = np.stack((newth, newthdot), axis=1, out=out).astype(np.float64, copy=False)
        rewards = (-costs).astype(np.float64, copy=False)
        return new_physics, rewards, np.zeros(len(th), dtype=np.bool_)

    def observe(self, physics):
        """Return the observations ``(cos theta, sin theta, theta_dot)`` as float32."""
        physics = np.asarray(physics, dtype=np.float64)
        theta, thetadot = physics[:, 0], physics[:, 1]
        return np.stack((np_cos(theta), np_sin(theta), thetadot), axis=1).astype(np.float32)


def _angle_normalize(x: np.ndarray) -> np.ndarray:
    """Return gymnasium's ``angle_normalize`` of every element, as on one NumPy scalar."""
    return remainder(x + np.pi, TWO_PI) - np.pi
