"""The vectorized step of gymnasium's CartPole-v0/v1 (``CartPoleEnv``), bit for bit.

The dynamics are float64 throughout, as the env unpacks its float64 state into NumPy
scalars: each operation of ``CartPoleEnv.step`` is applied to whole columns in the same
order, with the same constants read from the instance (``force_mag``, ``tau``,
``kinematics_integrator``, ``_sutton_barto_reward``...). ``steps_beyond_terminated``
(-1 for None) and the rewards follow the env's logic past the end of an episode; the
kernel does not warn, where the env warns on the first such step.

>>> import gymnasium
>>> env = gymnasium.make("CartPole-v1").unwrapped
>>> _ = env.reset(seed=0)
>>> kernel = CartPoleKernel(env)
>>> beyond = np.array([-1])
>>> new, rewards, terminated = kernel.step(np.array([env.state]), np.array([1]), beyond, None)
>>> obs, reward, *_ = env.step(1)
>>> new[0].tobytes() == env.state.tobytes(), kernel.observe(new)[0].tobytes() == obs.tobytes()
(True, True)
"""

from __future__ import annotations

import numpy as np

from plangym.control.classic_control.kernels import Kernel
from plangym.control.classic_control.kernels.libm_check import np_cos, np_sin, np_square


class CartPoleKernel(Kernel):
    """Vectorized ``CartPoleEnv.step``: physics ``(x, x_dot, theta, theta_dot)``."""

    gym_class = "gymnasium.envs.classic_control.cartpole.CartPoleEnv"

    n_physics = 4
    scalar_calls = ("np.cos", "np.sin", "np.square")
    min_batch = 8
    has_steps_beyond = True

    def step(self, physics, actions, steps_beyond, last_u, *, kinds=None):
        """Step every row once (see :meth:`Kernel.step`)."""
        env = self.env
        x, x_dot, theta, theta_dot = self.held(physics, kinds).T.copy()
        actions = np.asarray(actions)
        force = np.where(actions == 1, env.force_mag, -env.force_mag)
        costheta = np_cos(theta)
        sintheta = np_sin(theta)
        temp = (force + env.polemass_length * np_square(theta_dot) * sintheta) / env.total_mass
        thetaacc = (env.gravity * sintheta - costheta * temp) / (
            env.length * (4.0 / 3.0 - env.masspole * np_square(costheta) / env.total_mass)
        )
        xacc = temp - env.polemass_length * thetaacc * costheta / env.total_mass
        tau = env.tau
        if env.kinematics_integrator == "euler":
            x = x + tau * x_dot
            x_dot = x_dot + tau * xacc
            theta = theta + tau * theta_dot
            theta_dot = theta_dot + tau * thetaacc
        else:  # semi-implicit euler
            x_dot = x_dot + tau * xacc
            x = x + tau * x_dot
            theta_dot = theta_dot + tau * thetaacc
            theta = theta + tau * theta_dot
        new_physics = np.stack((x, x_dot, theta, theta_dot), axis=1).astype(np.float64, copy=False)
        x_threshold, theta_threshold = env.x_threshold, env.theta_threshold_radians
        terminated = (
            (x < -x_threshold)
            | (x > x_threshold)
            | (theta < -theta_threshold)
            | (theta > theta_threshold)
        )
        sutton_barto = env._sutton_barto_reward
        if steps_beyond is None:  # every episode still going on
            steps_beyond = np.full(len(terminated), -1, dtype=np.int64)
        fell = terminated & (steps_beyond == -1)  # the pole just fell
        beyond = terminated & ~fell  # stepping on past the end
        rewards = np.where(
            terminated,
            np.where(fell, -1.0 if sutton_barto else 1.0, -1.0 if sutton_barto else 0.0),
            0.0 if sutton_barto else 1.0,
        ).astype(np.float64)
        steps_beyond[fell] = 0
        steps_beyond[beyond] += 1
        return new_physics, rewards, terminated
