"""The vectorized step of gymnasium's MountainCar-v0 (``MountainCarEnv``), bit for bit.

The env's step computes on the NumPy float64 scalars of its state and keeps the result as a
tuple ``(position, velocity)`` (``physics_kind`` TUPLE). ``math.cos(3 * position)`` is C's
``cos`` of a double: NumPy's array ``cos`` gives the same bits where
:mod:`~plangym.control.classic_control.kernels.libm_check` passes (and an infinite position
raises ValueError, as ``math.cos`` does). The velocity the env sets to the integer 0 at the
left wall is the float 0.0 here: it holds the same value and steps the same.

>>> import gymnasium
>>> env = gymnasium.make("MountainCar-v0").unwrapped
>>> _ = env.reset(seed=0)
>>> kernel = MountainCarKernel(env)
>>> new, rewards, terminated = kernel.step(np.array([env.state]), np.array([2]), None, None)
>>> _ = env.step(2)
>>> new[0].tobytes() == np.array(env.state).tobytes(), float(rewards[0])
(True, -1.0)
"""

from __future__ import annotations

import numpy as np

from plangym.control.classic_control.kernels import TUPLE, Kernel
from plangym.control.classic_control.kernels.libm_check import math_cos


class MountainCarKernel(Kernel):
    """Vectorized ``MountainCarEnv.step``: physics ``(position, velocity)``."""

    gym_class = "gymnasium.envs.classic_control.mountain_car.MountainCarEnv"

    n_physics = 2
    scalar_calls = ("math.cos",)
    min_batch = 4
    physics_kind = TUPLE

    def step(self, physics, actions, steps_beyond, last_u, *, kinds=None, out=None):
        """Step every row once (see :meth:`Kernel.step`)."""
        env = self.env
        physics = self.held(physics, kinds)
        position, velocity = physics[:, 0], physics[:, 1]
        actions = np.asarray(actions)
        # velocity += (action - 1) * force + math.cos(3 * position) * (-gravity)
        velocity = velocity + ((actions - 1) * env.force + math_cos(3 * position) * (-env.gravity))
        velocity = np.clip(velocity, -env.max_speed, env.max_speed)
        position = position + velocity
        position = np.clip(position, env.min_position, env.max_position)
        at_wall = (position == env.min_position) & (velocity < 0)
        velocity = np.where(at_wall, 0.0, velocity)
        terminated = (position >= env.goal_position) & (velocity >= env.goal_velocity)
        rewards = np.full(len(position), -1.0)
        new_physics = np.stack((position, velocity), axis=1, out=out).astype(np.float64, copy=False)
        return new_physics, rewards, terminated
