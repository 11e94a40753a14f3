"""gymnasium's MuJoCo environments (v4 and v5) with exact states; needs the ``mujoco`` extra.

* :mod:`plangym.control.mujoco.env`: :class:`MujocoEnv`, the environment;
* :mod:`plangym.control.mujoco.state`: the state codec, which moves a state between the
  simulator and a flat float64 vector (integers as exact 32-bit pieces) and checks it.

MuJoCo itself is imported by :mod:`plangym.control.shared.mujoco_runtime`.
"""

from __future__ import annotations

from plangym.control.mujoco.env import MujocoEnv

__all__ = ["MujocoEnv"]
