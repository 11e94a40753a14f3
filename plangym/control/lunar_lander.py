"""``FastLunarLander-v0``: gymnasium's LunarLander without particles, optionally deterministic.

plangym 0.1 shipped its own LunarLander: no engine particles (decoration that costs Box2D
bodies) and a ``deterministic`` option. This one runs gymnasium's lander physics with
plangym's replay states (see :mod:`plangym.control.box_2d`), and ``deterministic=True``
makes every random draw the middle of its range: flat ground, no initial push, no engine
dispersion (and no wind gusts' random phase), so every episode is the same.

>>> env = LunarLander(deterministic=True)
>>> _, first, _ = env.reset()
>>> _, second, _ = env.reset()
>>> bool((first == second).all())
True
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.wrappers import TimeLimit

from plangym.control.box_2d import Box2DEnv, wrap_callable
from plangym.extras import require

require("Box2D", extra="box2d", family="Box2D")
from gymnasium.envs.box2d.lunar_lander import LunarLander as GymLunarLander  # noqa: E402

__all__ = ["LunarLander", "LanderPhysics"]

# gymnasium registers LunarLander-v3 with this episode limit.
MAX_EPISODE_STEPS = 1000


class Midpoints:
    """Stands in for ``np_random`` in deterministic mode: each draw is its range's middle.

    >>> Midpoints().uniform(0.0, 2.0, size=3).tolist(), Midpoints().integers(-9999, 9999)
    ([1.0, 1.0, 1.0], 0)
    """

    def uniform(self, low: float = 0.0, high: float = 1.0, size: Any = None) -> Any:
        middle = (low + high) / 2
        return middle if size is None else np.full(size, middle)

    def integers(self, low: int, high: int | None = None, size: Any = None) -> Any:
        low, high = (0, low) if high is None else (low, high)
        middle = (low + high) // 2
        return middle if size is None else np.full(size, middle)


_MIDPOINTS = Midpoints()


class LanderPhysics(GymLunarLander):
    """gymnasium's LunarLander whose draws are :class:`Midpoints` when ``deterministic``.

    The real generator stays underneath (it is what replay states record), untouched.
    """

    def __init__(self, deterministic: bool = False, **kwargs: Any):
        super().__init__(**kwargs)
        self.deterministic = deterministic

    @property
    def np_random(self) -> Any:
        """The midpoint sampler when deterministic, else gymnasium's generator."""
        if self.deterministic:
            return _MIDPOINTS
        return gym.Env.np_random.fget(self)

    @np_random.setter
    def np_random(self, value: np.random.Generator) -> None:
        gym.Env.np_random.fset(self, value)


class LunarLander(Box2DEnv):
    """plangym 0.1's fast LunarLander, with exact (replay) states.

    Args:
        name: Defaults to ``"FastLunarLander-v0"``.
        deterministic: Flat ground, no initial push, no engine dispersion.
        continuous: Two continuous engines (as LunarLanderContinuous) instead of 4 actions.
        remove_time_limit: None or True: no episode limit; False: 1000 steps, as gymnasium.
        episodic_life: Accepted for plangym 0.1 compatibility; the lander has one life.
        Other arguments: see :class:`~plangym.control.box_2d.Box2DEnv`; extra keyword
            arguments (``gravity``, ``enable_wind``, ...) go to gymnasium's LunarLander.

    >>> env = LunarLander(continuous=True)
    >>> state, *_ = env.reset()
    >>> env.step(np.array([1.0, 0.0], dtype=np.float32), state=state)[0].shape
    (64,)
    """

    def __init__(
        self,
        name: str | None = None,
        frameskip: int = 1,
        episodic_life: bool = True,
        autoreset: bool = True,
        wrappers: list[wrap_callable] | None = None,
        delay_setup: bool = False,
        deterministic: bool = False,
        continuous: bool = False,
        render_mode: str | None = "rgb_array",
        remove_time_limit: bool | None = None,
        **kwargs: Any,
    ):
        self._deterministic = bool(deterministic)
        self._continuous = bool(continuous)
        super().__init__(
            name="FastLunarLander-v0" if name is None else name,
            frameskip=frameskip,
            episodic_life=episodic_life,
            autoreset=autoreset,
            wrappers=wrappers,
            delay_setup=delay_setup,
            render_mode=render_mode,
            remove_time_limit=True if remove_time_limit is None else bool(remove_time_limit),
            **kwargs,
        )

    @property
    def deterministic(self) -> bool:
        """Whether every episode is the same (no random draws)."""
        return self._deterministic

    @property
    def continuous(self) -> bool:
        """Whether actions are two continuous engine throttles."""
        return self._continuous

    def make_physics_env(self) -> gym.Env:
        """Build the lander (no render mode, hence no particles), with gymnasium's limit."""
        env = LanderPhysics(
            deterministic=self.deterministic, continuous=self.continuous, **self._gym_env_kwargs
        )
        if not self.remove_time_limit:
            env = TimeLimit(env, max_episode_steps=MAX_EPISODE_STEPS)
        return env

    def dynamics_settings(self) -> str:
        """Name the settings in every state: gymnasium's, deterministic, continuous."""
        own = f"deterministic={self.deterministic},continuous={self.continuous}"
        return f"{own},{super().dynamics_settings()}"
