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

import math

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
    _force_buffer: np.ndarray | None = None

    def step(self, physics, actions, steps_beyond, last_u, *, kinds=None, out=None):
        """Step every row once (see :meth:`Kernel.step`).

        Each operation of the env's, in its order, on whole columns; the products and
        sums are computed in place (``a * b`` is ``b * a`` bit for bit), which saves the
        allocations that cost about as much as the arithmetic at thousands of rows.
        """
        env = self.env
        x, x_dot, theta, theta_dot = self.held(physics, kinds).T  # read only
        force = self._forces(env, actions)
        costheta = np_cos(theta)
        sintheta = np_sin(theta)
        total_mass, polemass_length = env.total_mass, env.polemass_length
        # temp = (force + polemass_length * theta_dot ** 2 * sintheta) / total_mass
        temp = np_square(theta_dot)
        temp *= polemass_length
        temp *= sintheta
        temp += force
        temp /= total_mass
        # thetaacc = (gravity * sintheta - costheta * temp)
        #     / (length * (4.0 / 3.0 - masspole * costheta ** 2 / total_mass))
        thetaacc = np.multiply(env.gravity, sintheta, out=sintheta)
        thetaacc -= np.multiply(costheta, temp, out=force)  # the forces are spent: reuse them
        scale = np_square(costheta)
        scale *= env.masspole
        scale /= total_mass
        np.subtract(4.0 / 3.0, scale, out=scale)
        scale *= env.length
        thetaacc /= scale
        # xacc = temp - polemass_length * thetaacc * costheta / total_mass
        xacc = np.multiply(polemass_length, thetaacc, out=scale)
        xacc *= costheta
        xacc /= total_mass
        np.subtract(temp, xacc, out=xacc)
        # Column-major: each variable's column is contiguous (stepping the result again
        # reads contiguous columns too). Each variable is written after its last read, so
        # ``out`` may be ``physics`` itself.
        new_physics = np.empty((4, len(force))).T if out is None else out
        new_x, new_x_dot, new_theta, new_theta_dot = new_physics.T
        tau, product = env.tau, costheta  # the cosines are spent: products go there
        if env.kinematics_integrator == "euler":
            _add_step(x, tau, x_dot, new_x, product)
            _add_step(x_dot, tau, xacc, new_x_dot, product)
            _add_step(theta, tau, theta_dot, new_theta, product)
            _add_step(theta_dot, tau, thetaacc, new_theta_dot, product)
        else:  # semi-implicit euler
            _add_step(x_dot, tau, xacc, new_x_dot, product)
            _add_step(x, tau, new_x_dot, new_x, product)
            _add_step(theta_dot, tau, thetaacc, new_theta_dot, product)
            _add_step(theta, tau, new_theta_dot, new_theta, product)
        # x < -x_threshold or x > x_threshold, theta likewise: |v| > threshold, exactly.
        terminated = np.abs(new_x, out=xacc) > env.x_threshold
        terminated |= np.abs(new_theta, out=xacc) > env.theta_threshold_radians
        return new_physics, _rewards(env, terminated, steps_beyond), terminated

    def _forces(self, env, actions) -> np.ndarray:
        """Return the env's force for each action (``force_mag`` for 1, else its negative).

        ``2 * force_mag * [action == 1] - force_mag`` is exact (doubling is, and so is
        Sterbenz's subtraction), two passes into an array kept from step to step: at
        thousands of rows, writing a new array (memory not in the CPU's cache) costs
        several times the arithmetic.
        """
        force_mag = float(env.force_mag)
        if force_mag == 0.0 or not math.isfinite(2.0 * force_mag):  # -0.0, or it overflows
            return np.where(np.equal(actions, 1), force_mag, -force_mag)
        shape = np.shape(actions)
        if self._force_buffer is None or self._force_buffer.shape != shape:
            self._force_buffer = np.empty(shape)
        forces = np.multiply(np.equal(actions, 1), 2.0 * force_mag, out=self._force_buffer)
        forces -= force_mag
        return forces


def _rewards(env, terminated: np.ndarray, steps_beyond: np.ndarray | None) -> np.ndarray:
    """Return the rewards, and count ``steps_beyond_terminated`` on, as the env does.

    ``steps_beyond`` holds -1 for the env's None; None: every episode was still going on.
    """
    sutton_barto = env._sutton_barto_reward
    if sutton_barto:
        rewards = np.where(terminated, -1.0, 0.0)
    if steps_beyond is None:
        return rewards if sutton_barto else np.ones(len(terminated))
    if not sutton_barto:  # 0.0 for a step past the end of its episode, else 1.0
        past = np.not_equal(steps_beyond, -1)
        past &= terminated
        rewards = np.logical_not(past, out=past).astype(np.float64)
    # Where the pole fell, None becomes 0 and a count goes on: both are "add one" (a plain
    # add of the flags: a masked add costs several times more).
    steps_beyond += terminated
    return rewards


def _add_step(
    value: np.ndarray, tau: float, rate: np.ndarray, out: np.ndarray, product: np.ndarray
) -> None:
    """``out = value + tau * rate``, the env's Euler step of one variable.

    The product goes to the scratch array ``product`` first, so ``out`` may be ``value``.
    """
    np.add(value, np.multiply(tau, rate, out=product), out=out)
