"""Environments for the vector-env parity tests, built by module-level (picklable) functions.

``DictInfoEnv`` exercises what a vector env has to batch: a nested ``Dict`` observation (with a
``Tuple`` and a ``Dict`` inside), and infos of every kind ``gymnasium.vector`` treats
differently: python ``int``/``float``/``bool``, numpy scalars, numpy arrays, strings, nested
dicts, keys present only on some steps, and infos on reset too. Everything random is drawn
from ``self.np_random``, so ``reset(seed=...)`` fixes the whole run. Episodes end at random
(terminated) or on a per-episode step limit (truncated), both within a few dozen steps.
"""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium
import numpy as np
from gymnasium import spaces


class DictInfoEnv(gymnasium.Env):
    """A random walk with a nested ``Dict`` observation and rich infos."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["rgb_array"], "render_fps": 30}

    def __init__(self, terminate_prob: float = 0.025, render_mode: str | None = None):
        self.terminate_prob = terminate_prob
        self.render_mode = render_mode
        self.observation_space = spaces.Dict(
            {
                "position": spaces.Box(-np.inf, np.inf, (3,), np.float32),
                "count": spaces.Discrete(1000),
                "flags": spaces.MultiBinary(4),
                "nested": spaces.Dict(
                    {
                        "pair": spaces.Tuple(
                            (spaces.Discrete(5), spaces.Box(0.0, 1.0, (2, 2), np.float64))
                        ),
                        "mode": spaces.Discrete(3, start=-1),
                    }
                ),
            }
        )
        self.action_space = spaces.Discrete(4)
        self.episode = 0
        self._position = np.zeros(3, dtype=np.float32)
        self._count = 0
        self._limit = 0
        self._mode = 0

    def _obs(self) -> dict[str, Any]:
        rng = self.np_random
        return {
            "position": self._position.copy(),
            "count": np.int64(self._count),
            "flags": rng.integers(0, 2, size=4, dtype=np.int8),
            "nested": {
                "pair": (np.int64(self._count % 5), rng.random((2, 2))),
                "mode": np.int64(self._mode),
            },
        }

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        rng = self.np_random
        self.episode += 1
        self._count = 0 if not options else int(options.get("start_count", 0))
        self._position = rng.normal(size=3).astype(np.float32)
        self._limit = int(rng.integers(20, 60))
        self._mode = int(rng.integers(-1, 2))
        info = {
            "episode": self.episode,  # python int
            "seeded": seed is not None,  # python bool
            "n_options": -1 if options is None else len(options),
            "start": self._position.astype(np.float64),  # numpy array
            "limit": np.int16(self._limit),  # numpy scalar
        }
        return self._obs(), info

    def step(self, action):
        rng = self.np_random
        action = int(action)
        self._count += 1
        noise = rng.normal(scale=0.1, size=3).astype(np.float32)
        self._position = self._position + np.float32(action - 1.5) * np.float32(0.1) + noise
        self._mode = int(rng.integers(-1, 2))
        reward = float(self._position.sum()) + (1.0 if action == self._mode + 1 else 0.0)
        terminated = bool(rng.random() < self.terminate_prob)
        truncated = not terminated and self._count >= self._limit
        info: dict[str, Any] = {
            "step": self._count,  # python int
            "noise": float(noise[0]),  # python float
            "even": self._count % 2 == 0,  # python bool
            "scaled": np.float32(reward / 3.0),  # numpy float scalar
            "tick": np.int32(self._count * 7),  # numpy int scalar
            "np_flag": np.bool_(action > 1),  # numpy bool: not a np.number
            "vector": np.array([action, self._count, reward], dtype=np.float32),
            "label": f"a{action}-m{self._mode}",  # string
            "details": {"action": action, "sub": {"parity": "odd" * (self._count % 2)}},
        }
        if rng.random() < 0.3:  # a key present only on some steps
            info["bonus"] = float(rng.random())
        if terminated or truncated:
            info["reason"] = "terminated" if terminated else "truncated"
            info["episode_length"] = np.int64(self._count)
        return self._obs(), reward, terminated, truncated, info

    def render(self):
        frame = np.zeros((4, 4, 3), dtype=np.uint8)
        frame[..., 0] = self._count % 256
        return frame

    def scaled_count(self, factor: int, offset: int = 0) -> int:
        """A method with arguments, for ``call``."""
        return self._count * factor + offset


def make_dict_env() -> DictInfoEnv:
    """Build a :class:`DictInfoEnv` (a picklable ``env_fn``)."""
    return DictInfoEnv()


def make_gym_env(env_id: str, **kwargs: Any) -> gymnasium.Env:
    """Build a registered gymnasium env, registering the ALE envs first when asked for one."""
    if env_id.startswith("ALE/"):
        import ale_py

        gymnasium.register_envs(ale_py)
    return gymnasium.make(env_id, **kwargs)
