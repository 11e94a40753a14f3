"""The vectorized step of gymnasium's MountainCarContinuous-v0, bit for bit.

``Continuous_MountainCarEnv.step`` mixes NumPy scalars and Python floats, and NumPy 2
computes each operation in the type its operands promote to: float32 when a float32 meets a
Python number or another float32 (the Python number taken as float32), float64 otherwise.
Which operands are float32 changes from row to row:

* the state is float32 after a step (the env stores ``np.array(..., dtype=np.float32)``) but
  float64 after a reset (``physics_kind`` tells them apart, see :meth:`Kernel.step`);
* ``force = min(max(action[0], min_action), max_action)`` is the action's NumPy scalar, or
  the Python float bound when it clips;
* the velocity and position become Python floats when clamped to their bounds, and the
  velocity the integer 0 at the left wall.

So each value here is a float64 column with the kind of each element (Python number,
float32 or float64), and each operation is computed both ways and picked per element,
comparisons included (``np.float32(0.07) > 0.07`` is False in NumPy 2). The reward is
``math.pow`` of the unclipped action, a Python float (OverflowError as in ``math.pow`` when
it overflows). Actions of another dtype than float32 or float64, or constants that are not
Python numbers or NumPy float32/float64 scalars, are stepped row by row by the env's own
step function on a stand-in object, exactly too.

>>> import gymnasium
>>> env = gymnasium.make("MountainCarContinuous-v0").unwrapped
>>> _ = env.reset(seed=0)
>>> env.state = env.state.astype(np.float32)  # as after a step
>>> kernel = ContinuousMountainCarKernel(env)
>>> actions = np.array([[1.5]], dtype=np.float32)  # clipped to max_action
>>> new, rewards, _ = kernel.step(np.array([env.state], np.float64), actions, None, None)
>>> obs, reward, *_ = env.step(actions[0])
>>> new[0].tobytes() == env.state.astype(np.float64).tobytes(), float(rewards[0]) == reward
(True, True)
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import numpy as np

from plangym.control.classic_control.kernels import (
    FLOAT32_ARRAY,
    FLOAT64_ARRAY,
    TUPLE,
    Kernel,
)
from plangym.control.classic_control.kernels.libm_check import math_cos, math_square

# The kind of a value, what NumPy 2 promotes it as: bits, see _promote.
PY, F32, F64 = 0, 1, 2
_CONSTANTS = (
    "min_action",
    "max_action",
    "power",
    "max_speed",
    "max_position",
    "min_position",
    "goal_position",
    "goal_velocity",
)
_F64 = np.dtype(np.float64)
_F32 = np.dtype(np.float32)

Typed = tuple[Any, Any]  # (values as float64, kinds): each an array or one scalar


def kind_of(value: Any) -> int | None:
    """Return the kind of a constant: a Python number, a float32 or float64; None otherwise."""
    if type(value) in (int, float):
        return PY
    if type(value) is np.float32:
        return F32
    if type(value) is np.float64:
        return F64
    return None


def _promote(ka: Any, kb: Any) -> tuple[Any, Any]:
    """Return where NumPy computes in float32 and the kinds of the results.

    The kinds are bits: float32 where a float32 meets a Python number or a float32 (their
    union is F32), float64 where a float64 takes part, a Python float from two of them.
    """
    either = ka | kb
    return either == F32, either & ~(either >> 1)  # F32 | F64 gives F64


def _binary(op: Callable, a: Typed, b: Typed) -> Typed:
    """Return ``op(a, b)`` of typed columns, each element computed in its promoted type."""
    (va, ka), (vb, kb) = a, b
    va, vb = np.asarray(va, dtype=_F64), np.asarray(vb, dtype=_F64)
    narrow, kind = _promote(ka, kb)
    if np.all(narrow):
        return op(va.astype(_F32), vb.astype(_F32)).astype(_F64), kind
    values = op(va, vb)
    if np.any(narrow):
        values = np.where(narrow, op(va.astype(_F32), vb.astype(_F32)).astype(_F64), values)
    return values, kind


def _compare(op: Callable, a: Typed, b: Typed) -> np.ndarray:
    """Return ``op(a, b)`` of typed columns, compared in each element's promoted type."""
    (va, ka), (vb, kb) = a, b
    va, vb = np.asarray(va, dtype=_F64), np.asarray(vb, dtype=_F64)
    narrow, _ = _promote(ka, kb)
    if np.all(narrow):
        return op(va.astype(_F32), vb.astype(_F32))
    result = op(va, vb)
    if np.any(narrow):
        result = np.where(narrow, op(va.astype(_F32), vb.astype(_F32)), result)
    return result


def _where(condition: np.ndarray, a: Typed, b: Typed) -> Typed:
    """Return ``a`` where ``condition`` holds, else ``b``: values and kinds."""
    if not condition.any():
        return b
    (va, ka), (vb, kb) = a, b
    same_kind = isinstance(ka, int) and isinstance(kb, int) and ka == kb
    return np.where(condition, va, vb), ka if same_kind else np.where(condition, ka, kb)


class ContinuousMountainCarKernel(Kernel):
    """Vectorized ``Continuous_MountainCarEnv.step``: physics ``(position, velocity)``."""

    gym_class = "gymnasium.envs.classic_control.continuous_mountain_car.Continuous_MountainCarEnv"

    n_physics = 2
    scalar_calls = ("math.cos", "math.pow")
    min_batch = 32
    physics_kind = FLOAT32_ARRAY
    exact_kinds = frozenset({FLOAT64_ARRAY, FLOAT32_ARRAY, TUPLE})

    def step(self, physics, actions, steps_beyond, last_u, *, kinds=None, out=None):
        """Step every row once (see :meth:`Kernel.step`; ``kinds`` matters here)."""
        env = self.env
        physics = self.held(physics, kinds)
        actions = np.asarray(actions)
        actions = actions.reshape(len(actions), -1)
        constants = {name: getattr(env, name) for name in _CONSTANTS}
        kinds_of = {name: kind_of(value) for name, value in constants.items()}
        float32_rows = _float32_rows(physics, kinds)
        if actions.dtype not in (_F32, _F64) or None in kinds_of.values():
            return self._step_rows(physics, actions, float32_rows, out)
        c = {name: (value, kinds_of[name]) for name, value in constants.items()}
        with np.errstate(all="ignore"):  # what is computed both ways overflows one way
            state_kind = _state_kinds(float32_rows)
            position, velocity = (physics[:, 0], state_kind), (physics[:, 1], state_kind)
            action = actions[:, 0]
            a = (action.astype(_F64), F32 if action.dtype == _F32 else F64)
            # force = min(max(action[0], min_action), max_action), with Python's max and min
            force = _where(_compare(operator.gt, c["min_action"], a), c["min_action"], a)
            force = _where(_compare(operator.lt, c["max_action"], force), c["max_action"], force)
            # velocity += force * power - 0.0025 * math.cos(3 * position)
            three_position = _binary(operator.mul, (3, PY), position)
            slope = (0.0025 * math_cos(three_position[0]), PY)  # math.cos gives a float
            push = _binary(operator.sub, _binary(operator.mul, force, c["power"]), slope)
            velocity = _binary(operator.add, velocity, push)
            max_speed = c["max_speed"]
            velocity = _where(_compare(operator.gt, velocity, max_speed), max_speed, velocity)
            min_speed = (-max_speed[0], max_speed[1])
            velocity = _where(_compare(operator.lt, velocity, min_speed), min_speed, velocity)
            position = _binary(operator.add, position, velocity)
            high, low = c["max_position"], c["min_position"]
            position = _where(_compare(operator.gt, position, high), high, position)
            position = _where(_compare(operator.lt, position, low), low, position)
            zero = (0, PY)
            at_wall = _compare(operator.eq, position, low) & _compare(operator.lt, velocity, zero)
            velocity = _where(at_wall, zero, velocity)
            terminated = _compare(operator.ge, position, c["goal_position"]) & _compare(
                operator.ge, velocity, c["goal_velocity"]
            )
            new_state = np.stack((position[0], velocity[0]), axis=1).astype(np.float32)
        rewards = np.where(terminated, 100.0, 0.0) - math_square(action) * 0.1
        if out is None:
            return new_state.astype(np.float64), rewards, terminated
        out[...] = new_state
        return out, rewards, terminated

    def _step_rows(self, physics, actions, float32_rows, out):
        """Step each row with the env's own step function, on a stand-in for the env."""
        from gymnasium.envs.classic_control.continuous_mountain_car import (
            Continuous_MountainCarEnv,
        )

        stand_in = SimpleNamespace(render_mode=None)
        for name in _CONSTANTS:
            setattr(stand_in, name, getattr(self.env, name))
        new_physics = np.empty_like(physics) if out is None else out  # a row is read, then written
        rewards = np.empty(len(physics), dtype=np.float64)
        terminated = np.empty(len(physics), dtype=np.bool_)
        for row, (values, action, small) in enumerate(
            zip(physics, actions, float32_rows.tolist(), strict=True)
        ):
            stand_in.state = values.astype(np.float32) if small else values.copy()
            state, reward, ended, _, _ = Continuous_MountainCarEnv.step(stand_in, action)
            new_physics[row] = state
            rewards[row] = float(reward)
            terminated[row] = ended
        return new_physics, rewards, terminated


def _float32_rows(physics: np.ndarray, kinds: np.ndarray | None) -> np.ndarray:
    """Return the rows whose state the env holds as float32: by kind, else by their values."""
    if kinds is not None:
        return np.asarray(kinds) == FLOAT32_ARRAY
    with np.errstate(over="ignore"):
        return (physics.astype(np.float32) == physics).all(axis=1)


def _state_kinds(float32_rows: np.ndarray) -> Any:
    """Return the kind of each state's values: one kind when all rows share it."""
    if float32_rows.all():
        return F32
    if not float32_rows.any():
        return F64
    return np.where(float32_rows, F32, F64)
