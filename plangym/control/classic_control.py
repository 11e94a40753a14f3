"""gymnasium's classic control tasks with exact states.

A state is a 0-d NumPy record holding everything that decides the future: the physics
vector (with its dtype: MountainCarContinuous steps in float32), CartPole's
``steps_beyond_terminated``, the time-limit counter when a limit is kept, Pendulum's
``last_u`` (drawn by the renderer) and the ``np_random`` generator that the next reset
draws from.

>>> env = ClassicControl("CartPole-v1")
>>> state, obs, info = env.reset()
>>> state["physics"].shape
(4,)
>>> copy = state.copy()
>>> _ = env.step(1)
>>> env.set_state(copy)
>>> bool(env.get_state() == copy)
True
"""

from __future__ import annotations

from typing import Any

import numpy as np

from plangym.core import PlangymEnv
from plangym.rng import N_WORDS, generator_words, restore_generator
from plangym.utils import find_time_limit
from plangym.validation import describe

# How the physics vector is stored by the gymnasium env, so it is restored the same way.
_FLOAT64_ARRAY, _FLOAT32_ARRAY, _TUPLE = 0, 1, 2
_NONE = -1


def classic_state_dtype(n_physics: int) -> np.dtype:
    """Record type of the states of a classic control env with ``n_physics`` variables."""
    return np.dtype(
        [
            ("physics", "<f8", (n_physics,)),
            ("physics_kind", "u1"),
            ("steps_beyond_terminated", "<i8"),
            ("elapsed_steps", "<i8"),
            ("has_last_u", "?"),
            ("last_u", "<f8"),
            ("rng", "<u8", (N_WORDS,)),
        ]
    )


def _physics_kind(physics: Any) -> int:
    if isinstance(physics, np.ndarray):
        return _FLOAT32_ARRAY if physics.dtype == np.float32 else _FLOAT64_ARRAY
    return _TUPLE


def _physics_value(values: np.ndarray, kind: int) -> Any:
    if kind == _FLOAT32_ARRAY:
        return values.astype(np.float32)
    if kind == _TUPLE:
        return tuple(np.float64(value) for value in values)
    return values.copy()


class ClassicControl(PlangymEnv):
    """CartPole, Pendulum, MountainCar, MountainCarContinuous and Acrobot, exactly restorable.

    A bare physics vector of the right length (the state format of plangym 0.1) is accepted
    by :meth:`set_state` too; it sets the physics and leaves the rest as it is.

    >>> env = ClassicControl("Pendulum-v1")
    >>> env.action_space
    Box(-2.0, 2.0, (1,), float32)
    >>> state, *_ = env.reset()
    >>> new_state, obs, reward, terminal, truncated, info = env.step(
    ...     np.array([0.5], dtype=np.float32), state=state, dt=3)
    >>> info["n_step"]
    3
    """

    def setup(self) -> None:
        """Build the gymnasium env and derive the record type of its states."""
        super().setup()
        self._state_dtype = classic_state_dtype(len(self._gym_env.unwrapped.state))

    @property
    def state_dtype(self) -> np.dtype:
        """NumPy record type of this env's states."""
        self.gym_env  # noqa: B018 - builds the env when setup was delayed
        return self._state_dtype

    def get_state(self) -> np.ndarray:
        """Return the exact state of the env as a 0-d record array."""
        unwrapped = self.gym_env.unwrapped
        physics = unwrapped.state
        record = np.zeros((), dtype=self.state_dtype)
        record["physics"] = physics
        record["physics_kind"] = _physics_kind(physics)
        steps_beyond = getattr(unwrapped, "steps_beyond_terminated", None)
        record["steps_beyond_terminated"] = _NONE if steps_beyond is None else steps_beyond
        time_limit = find_time_limit(self.gym_env)
        elapsed = None if time_limit is None else time_limit._elapsed_steps
        record["elapsed_steps"] = _NONE if elapsed is None else elapsed
        last_u = getattr(unwrapped, "last_u", None)
        record["has_last_u"] = last_u is not None
        record["last_u"] = 0.0 if last_u is None else last_u
        record["rng"] = generator_words(unwrapped.np_random)
        return record

    def set_state(self, state: np.ndarray) -> None:
        """Restore a state from :meth:`get_state` (or a bare physics vector)."""
        self.check_state(state)
        unwrapped = self.gym_env.unwrapped
        if state.dtype.names is None:
            unwrapped.state = np.array(state, dtype=np.float64)
            return
        unwrapped.state = _physics_value(state["physics"], int(state["physics_kind"]))
        if hasattr(unwrapped, "steps_beyond_terminated"):
            steps_beyond = int(state["steps_beyond_terminated"])
            unwrapped.steps_beyond_terminated = None if steps_beyond == _NONE else steps_beyond
        time_limit = find_time_limit(self.gym_env)
        if time_limit is not None:
            time_limit._elapsed_steps = max(int(state["elapsed_steps"]), 0)
        if hasattr(unwrapped, "last_u"):
            unwrapped.last_u = float(state["last_u"]) if state["has_last_u"] else None
        restore_generator(unwrapped.np_random, state["rng"])

    def check_state(self, state: Any, name: str = "state") -> None:
        """Raise unless ``state`` is a state of this env (or its bare physics vector)."""
        expected = self.state_dtype
        if isinstance(state, np.ndarray):
            if state.dtype == expected and state.shape == ():
                return
            physics_shape = expected["physics"].shape
            if state.dtype.names is None and state.dtype.kind == "f" and (
                state.shape == physics_shape
            ):
                return
        raise TypeError(
            f"{name}: expected a {self.name} state (a 0-d record array from get_state(), or "
            f"a float array of shape {expected['physics'].shape}), received {describe(state)}"
        )
