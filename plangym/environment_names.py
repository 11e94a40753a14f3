"""Names of the environments plangym can build, one list per family.

>>> "CartPole-v1" in CLASSIC_CONTROL
True
>>> "ALE/MsPacman-v5" in ATARI
True
"""

from __future__ import annotations

import ale_py
import gymnasium as gym

gym.register_envs(ale_py)

CLASSIC_CONTROL = [
    "CartPole-v0",
    "CartPole-v1",
    "MountainCar-v0",
    "MountainCarContinuous-v0",
    "Pendulum-v1",
    "Acrobot-v1",
]


def _ale_ids() -> list[str]:
    """Every id whose entry point is ale-py's AtariEnv, as ale-py registered them."""
    return sorted(
        env_id
        for env_id, spec in gym.registry.items()
        if isinstance(spec.entry_point, str) and spec.entry_point.startswith("ale_py")
    )


ATARI = _ale_ids()

FAMILIES = {"classic_control": CLASSIC_CONTROL, "atari": ATARI}

ALL = [name for names in FAMILIES.values() for name in names]
