"""Small helpers: building gymnasium envs lean, and converting frames.

>>> frame = np.zeros((2, 3, 3), dtype=np.uint8)
>>> frame[..., 0] = 255
>>> to_grayscale(frame)
array([[76, 76, 76],
       [76, 76, 76]], dtype=uint8)
"""

from __future__ import annotations

import dataclasses
from typing import Any

import gymnasium as gym
import numpy as np

# ITU-R 601-2 luma, the transform PIL's "L" mode applies, in integer arithmetic.
_LUMA = np.array([299, 587, 114], dtype=np.uint32)


def to_grayscale(frame: np.ndarray) -> np.ndarray:
    """Convert an RGB frame (H, W, 3) to a grayscale frame (H, W) of uint8."""
    luma = frame.astype(np.uint32) @ _LUMA
    return ((luma + 500) // 1000).astype(np.uint8)


def process_frame(frame: np.ndarray, mode: str = "RGB") -> np.ndarray:
    """Return ``frame`` unchanged ("RGB") or in grayscale ("L" / "GRAY")."""
    if mode in {"L", "GRAY"}:
        return to_grayscale(frame)
    if mode != "RGB":
        raise ValueError(f"mode: expected one of ['GRAY', 'L', 'RGB'], received {mode!r}")
    return frame


def make_gym_env(name: str, remove_time_limit: bool = True, **kwargs: Any) -> gym.Env:
    """Build a gymnasium env without the wrappers that only slow stepping down.

    The passive env checker and the order enforcer are left out; the time limit is kept
    only when ``remove_time_limit`` is False.
    """
    spec = gym.spec(name)
    overrides: dict[str, Any] = {"order_enforce": False, "disable_env_checker": True}
    if remove_time_limit:
        overrides["max_episode_steps"] = None
    return gym.make(dataclasses.replace(spec, **overrides), **kwargs)


def remove_time_limit(gym_env: gym.Env) -> gym.Env:
    """Return ``gym_env`` with every ``TimeLimit`` wrapper taken out of its chain."""
    outer: gym.Env | None = None
    current = gym_env
    while isinstance(current, gym.Wrapper):
        if isinstance(current, gym.wrappers.TimeLimit):
            if outer is None:
                gym_env = current = current.env
                continue
            outer.env = current.env
            current = current.env
            continue
        outer, current = current, current.env
    return gym_env


def find_time_limit(gym_env: gym.Env) -> gym.wrappers.TimeLimit | None:
    """Return the outermost ``TimeLimit`` wrapper of ``gym_env``, if any."""
    current = gym_env
    while isinstance(current, gym.Wrapper):
        if isinstance(current, gym.wrappers.TimeLimit):
            return current
        current = current.env
    return None
