"""gymnasium's classic control tasks (CartPole, Acrobot, MountainCar, Pendulum) with exact states.

* :mod:`plangym.control.classic_control.env`: :class:`ClassicControl`, the environment;
* :mod:`plangym.control.classic_control.state`: the state record and its codec, the only
  code that moves states into and out of the gymnasium env;
* :mod:`plangym.control.classic_control.kernels`: vectorized step kernels, bit for bit as
  gymnasium's scalar step;
* :mod:`plangym.control.classic_control.kernel_batch`: a batch of states stepped by a
  kernel, with the results of the bulk loop.
"""

from __future__ import annotations

from plangym.control.classic_control.env import ClassicControl, classic_state_dtype

__all__ = ["ClassicControl", "classic_state_dtype"]
