"""The dm_control suite's tasks with exact states; needs the ``dm_control`` extra.

* :mod:`plangym.control.dm_control.env`: :class:`DMControlEnv`, the environment;
* :mod:`plangym.control.dm_control.state`: the state codec, which moves a task's state
  between the simulator and bytes, and :data:`EPISODE_MODEL_FIELDS`.

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
