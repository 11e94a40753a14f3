"""A tiny gymnasium env that misbehaves on request, for the vector-env fault tests.

:class:`FaultyEnv` is a noisy random walk with short episodes, so autoresets happen within a
few steps. Everything random comes from ``self.np_random``: ``reset(seed=...)`` fixes the run,
and a reference vector env fed the same seeds and actions gives the same results.

* Observation: ``Box(-inf, inf, (3,), float64)``, ``[position, steps this episode, noise]``.
* Actions (``Discrete(10)``): 0 to 3 move the position by ``action - 1.5`` plus noise. The others
  are faults: :data:`RAISE` (7) raises :class:`FaultError` before anything changes;
  :data:`NAP_LONG` (8) sleeps ``nap_long_s`` seconds (:data:`NAP_LONG_S` unless set, e.g.
  ``envs.set_attr("nap_long_s", 600.0)`` for a step that hangs) and :data:`NAP` (9)
  :data:`NAP_S` seconds, then both act as action 0. Actions 4 to 6 act as action 0 too.
* Episodes end at random (terminated, 10% per step) or after 4 to 8 steps (truncated).
* ``reset`` sleeps ``delay`` seconds first (0 unless set, e.g. ``envs.set_attr("delay",
  [0, 2.0])``); so does the method :meth:`FaultyEnv.nap`.
* Every sleep first creates ``busy_file`` (when given): a test waits for it to know that a
  sub-env is busy before it kills the sub-env's worker.
* While ``poison_file`` (when given) exists, ``reset`` kills the process it runs in: a worker
  rebuilt then dies again as it resets its new sub-env.
* Bookkeeping read with ``get_attr``, never put in infos (a rebuilt env starts again from 0):
  ``resets`` counts the resets of this env object, ``last_obs`` is its latest observation and
  :meth:`FaultyEnv.pid` the id of the process it lives in.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

RAISE, NAP_LONG, NAP = 7, 8, 9
NAP_LONG_S, NAP_S = 2.0, 1.0
FAULTS = (RAISE, NAP_LONG, NAP)


class FaultError(ArithmeticError):
    """The error a :class:`FaultyEnv` raises on :data:`RAISE`: the caller must see this type."""


class BuildError(LookupError):
    """The error :func:`make_broken_env` raises: building the env fails."""


class FaultyEnv(gymnasium.Env):
    """A random walk that raises or sleeps when its action says so (see the module docstring).

    Args:
        busy_file: A file created when a sleep starts, so a test knows the env is busy.
        poison_file: While this file exists, ``reset`` SIGKILLs the env's process.
    """

    def __init__(self, busy_file: str | None = None, poison_file: str | None = None):
        self.busy_file, self.poison_file = busy_file, poison_file
        self.observation_space = spaces.Box(-np.inf, np.inf, (3,), np.float64)
        self.action_space = spaces.Discrete(10)
        self.delay = 0.0
        self.nap_long_s = NAP_LONG_S
        self.resets = 0
        self.last_obs: np.ndarray | None = None
        self._position = 0.0
        self._steps = 0
        self._limit = 0

    def _obs(self, noise: float) -> np.ndarray:
        self.last_obs = np.array([self._position, self._steps, noise], dtype=np.float64)
        return self.last_obs.copy()

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        if self.poison_file and Path(self.poison_file).exists():
            os.kill(os.getpid(), signal.SIGKILL)
        self._sleep(self.delay)
        self.resets += 1
        rng = self.np_random
        self._position = float(rng.normal())
        self._steps = 0
        self._limit = int(rng.integers(4, 9))
        return self._obs(float(rng.random())), {"start": self._position}

    def step(self, action):
        action = int(action)
        if action == RAISE:
            raise FaultError(f"action {action} means raise")
        self._sleep({NAP_LONG: self.nap_long_s, NAP: NAP_S}.get(action, 0.0))
        if action > 3:
            action = 0
        rng = self.np_random
        noise = float(rng.normal(scale=0.1))
        self._position += action - 1.5 + noise
        self._steps += 1
        reward = float(-abs(self._position))
        terminated = bool(rng.random() < 0.1)
        truncated = not terminated and self._steps >= self._limit
        info = {"steps": self._steps, "noise": np.float32(noise)}
        return self._obs(noise), reward, terminated, truncated, info

    def _sleep(self, seconds: float) -> None:
        if seconds > 0:
            if self.busy_file:
                Path(self.busy_file).touch()
            time.sleep(seconds)

    def nap(self) -> int:
        """Sleep ``delay`` seconds; return the process id."""
        self._sleep(self.delay)
        return os.getpid()

    def pid(self) -> int:
        """Return the id of the process the env lives in."""
        return os.getpid()


def make_faulty_env(busy_file: str | None = None, poison_file: str | None = None) -> FaultyEnv:
    """Build a :class:`FaultyEnv` (a picklable ``env_fn``)."""
    return FaultyEnv(busy_file, poison_file)


def make_broken_env() -> FaultyEnv:
    """An ``env_fn`` that fails: it raises :class:`BuildError`."""
    raise BuildError("this env cannot be built")


class NapOnStep(gymnasium.Wrapper):
    """Sleeps ``nap_s`` seconds (0 unless set, e.g. with ``set_attr``) before each step."""

    def __init__(self, env: gymnasium.Env):
        super().__init__(env)
        self.nap_s = 0.0

    def step(self, action):
        time.sleep(self.nap_s)
        return self.env.step(action)
