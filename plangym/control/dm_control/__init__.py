"""The dm_control suite's tasks with exact states; needs the ``dm_control`` extra.

* :mod:`plangym.control.dm_control.env`: :class:`DMControlEnv`, the environment;
* :mod:`plangym.control.dm_control.state`: the state codec, which moves a task's state
  between the simulator and flat float64 vectors, and :data:`EPISODE_MODEL_FIELDS`;
* :mod:`plangym.control.dm_control.pictures`: ``get_image``, plangym 0.1's
  ``render(mode)`` and ``show_game`` (a pygame window);
* :mod:`plangym.control.dm_control.names`: task names and :data:`LQR_MODEL_SEED`.

MuJoCo itself is imported by :mod:`plangym.control.shared.mujoco_runtime`.
"""

from __future__ import annotations

from plangym.control.dm_control.env import (
    EPISODE_MODEL_FIELDS,
    LQR_MODEL_SEED,
    DMControlEnv,
    split_name,
)

__all__ = ["EPISODE_MODEL_FIELDS", "LQR_MODEL_SEED", "DMControlEnv", "split_name"]
