"""Gymnasium's scalar math on whole arrays, bit for bit on any CPU, and the self-test behind it.

The kernels compute over whole arrays what gymnasium computes one scalar at a time:
``np.cos`` and ``np.sin`` of a ``np.float64`` (CartPole, Acrobot, Pendulum), ``math.cos``
of a float (the mountain cars), ``np.square`` (CartPole), ``x ** 2`` of a NumPy scalar
(Acrobot, Pendulum: C's ``pow``, or ``powf`` for a float32, which is not always
``x * x``), ``math.pow(a, 2)`` (MountainCarContinuous) and ``%`` (Pendulum's
``angle_normalize``). Each of those is one :class:`ScalarCall` here, with two kinds of array
implementation:

* **fast ones**: NumPy's array loops (``np.cos``, ``np.float_power``...). On most CPUs they
  give the scalar call's bits, but where NumPy dispatches to other SIMD code they may not:
  on AVX-512 machines NumPy 2's ``np.power`` is not C's ``pow``, and no NumPy loop is
  ``powf``;
* **the scalar loop**: the very call gymnasium makes, applied element by element. It is
  exact by construction, at tens of nanoseconds an element.

At first use of a function (once per process) :func:`implementation` runs its fast
implementations on a few thousand values, realistic and extreme, and keeps the first whose
every bit agrees with the scalar loop; where none agrees, that function alone falls back to
its scalar loop and the rest of the kernel stays in NumPy passes. The environment variable
``PLANGYM_SCALAR_MATH=1`` puts every function on its scalar loop (tests force the
fallback with it). :func:`choices` tells what each function runs on this machine.

>>> x = 1.5 + 2.0**-26  # its square lies halfway between two doubles: pow may round it
>>> bool(scalar_square(np.array([x]))[0] == np.float64(x) ** 2)  # as gymnasium squares
True
>>> u = np.array([1.0002441], dtype=np.float32)  # float32: powf, as a float32 scalar's ** 2
>>> scalar_square(u).tobytes() == (u[0] ** 2).tobytes()
True
>>> sorted(choices()) == sorted(CALLS)
True
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

_F64 = np.dtype(np.float64)
_F32 = np.dtype(np.float32)
TWO_PI = 2 * np.pi
SCALAR_LOOP = "scalar loop"


def _each(function: Callable, values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Return ``function`` of every element, given as a NumPy scalar (as gymnasium has it)."""
    flat = values.ravel()
    out = np.fromiter((function(v) for v in flat), dtype=dtype, count=flat.size)
    return out.reshape(values.shape)


def _each_float(function: Callable, values: np.ndarray) -> np.ndarray:
    """Return ``function`` of every element, given as a Python float (as ``math`` gets it)."""
    flat = values.ravel()
    out = np.fromiter(map(function, flat.tolist()), dtype=_F64, count=flat.size)
    return out.reshape(values.shape)


def _powers(values: np.ndarray) -> np.ndarray:
    """Return ``np.power`` with an array of exponents 2: C's pow, on most CPUs."""
    return np.power(values, np.full(values.shape, 2, dtype=values.dtype))


def _float_powers(values: np.ndarray) -> np.ndarray:
    """Return ``np.float_power(values, 2)``: C's pow of each float64, a plain loop."""
    return np.float_power(values, 2.0)


@dataclass(frozen=True)
class ScalarCall:
    """One scalar call of gymnasium's and its array implementations.

    Attributes:
        name: The call, as gymnasium writes it (``"np.cos"``, ``"float64 ** 2"``...).
        scalar_loop: The call applied element by element: exact by construction.
        fast: ``(label, function)`` array implementations to try, fastest first; each is
            used only where it agrees with ``scalar_loop`` on every checked value.
        operand: The dtype the checked values are given as: float64 or float32.
        moderate: Check only values whose square neither overflows nor underflows
            (``math.pow`` raises there).
        more_args: What the call takes after the values (``%``: the modulus it is
            checked with).
    """

    name: str
    scalar_loop: Callable[..., np.ndarray]
    fast: tuple[tuple[str, Callable[..., np.ndarray]], ...]
    operand: np.dtype = _F64
    moderate: bool = False
    more_args: tuple = ()


CALLS: dict[str, ScalarCall] = {
    call.name: call
    for call in (
        ScalarCall("np.cos", lambda x: _each(np.cos, x, _F64), (("np.cos", np.cos),)),
        ScalarCall("np.sin", lambda x: _each(np.sin, x, _F64), (("np.sin", np.sin),)),
        ScalarCall("np.square", lambda x: _each(np.square, x, _F64), (("np.square", np.square),)),
        ScalarCall("math.cos", lambda x: _each_float(math.cos, x), (("np.cos", np.cos),)),
        ScalarCall(
            "float64 ** 2",
            lambda x: _each(lambda v: v**2, x, _F64),
            (("np.float_power", _float_powers), ("np.power", _powers)),
        ),
        ScalarCall(
            "float32 ** 2",
            lambda x: _each(lambda v: v**2, x, _F32),
            (("np.power", _powers),),
            operand=_F32,
        ),
        ScalarCall(
            "math.pow",
            lambda x: _each_float(lambda v: math.pow(v, 2), x),
            (("np.float_power", _float_powers), ("np.power", _powers)),
            moderate=True,
        ),
        ScalarCall(
            "%",
            lambda x, m: _each(lambda v: v % m, x, _F64),
            (("np.remainder", np.remainder),),
            more_args=(TWO_PI,),
        ),
    )
}


@functools.cache
def scalar_math_forced() -> bool:
    """Tell whether ``PLANGYM_SCALAR_MATH`` puts every function on its scalar loop.

    Read once per process, at first use: the kernels call this on every step. (Tests that
    change the variable clear this function's cache.)
    """
    return os.environ.get("PLANGYM_SCALAR_MATH", "").strip() not in ("", "0")


@functools.cache
def _picked(name: str, forced: bool) -> tuple[str, Callable[..., np.ndarray]]:
    call = CALLS[name]
    if not forced:
        args = (_check_values(call), *call.more_args)
        with np.errstate(all="ignore"):  # overflows and underflows of the extreme values
            expected = call.scalar_loop(*args).tobytes()
            for label, function in call.fast:
                if np.asarray(function(*args), dtype=call.operand).tobytes() == expected:
                    return label, function
    return SCALAR_LOOP, call.scalar_loop


def implementation(name: str) -> Callable[..., np.ndarray]:
    """Return the array implementation of the scalar call ``name`` that is exact here.

    The first fast implementation that agrees with the scalar loop bit for bit on the
    checked values, else the scalar loop; chosen at first use, once per process.
    """
    return _picked(name, scalar_math_forced())[1]


def choices() -> dict[str, str]:
    """Return what each scalar call runs on here: a NumPy function's name or "scalar loop"."""
    forced = scalar_math_forced()
    return {name: _picked(name, forced)[0] for name in CALLS}


def scalar_loops() -> tuple[str, ...]:
    """Return the scalar calls computed element by element here (none on most CPUs)."""
    return tuple(name for name, label in choices().items() if label == SCALAR_LOOP)


# What the kernels call --------------------------------------------------------------------------
def np_cos(x: np.ndarray) -> np.ndarray:
    """Return ``np.cos`` of every ``np.float64`` element, as on one scalar."""
    return implementation("np.cos")(x)


def np_sin(x: np.ndarray) -> np.ndarray:
    """Return ``np.sin`` of every ``np.float64`` element, as on one scalar."""
    return implementation("np.sin")(x)


def np_square(x: np.ndarray) -> np.ndarray:
    """Return ``np.square`` of every ``np.float64`` element, as on one scalar."""
    return implementation("np.square")(x)


def remainder(x: np.ndarray, modulus: float) -> np.ndarray:
    """Return ``v % modulus`` of every ``np.float64`` element ``v`` (Pendulum's angle_normalize)."""
    return implementation("%")(x, modulus)


def scalar_square(x: np.ndarray) -> np.ndarray:
    """Return ``x ** 2`` of every element as NumPy computes it on one scalar of ``x.dtype``.

    A NumPy scalar's ``** 2`` calls C's ``pow`` (``powf`` for float32), which rounds a few
    squares in a thousand differently from ``x * x``; an array's ``** 2`` is ``np.square``.
    Other dtypes are squared one NumPy scalar at a time.
    """
    if x.dtype == _F64:
        return implementation("float64 ** 2")(x)
    if x.dtype == _F32:
        return implementation("float32 ** 2")(x)
    return _each(lambda v: v**2, x, x.dtype)


def math_cos(x: np.ndarray) -> np.ndarray:
    """Return ``math.cos`` of every element as a float64 array.

    ``math.cos`` raises ValueError for an infinite value: so does this (NaN gives NaN).
    """
    if np.isinf(x).any():
        raise ValueError("math domain error")
    return implementation("math.cos")(np.asarray(x, dtype=_F64))


def math_square(x: np.ndarray) -> np.ndarray:
    """Return ``math.pow(a, 2)`` of every element as a float64 array (C's ``pow``).

    ``math.pow`` raises OverflowError where a finite value's square overflows: so does this.
    """
    values = np.asarray(x, dtype=_F64)
    if not np.isfinite(values).all() or (np.abs(values) > 1e150).any():
        # Only here can a square overflow; the scalar loop raises as math.pow does.
        return CALLS["math.pow"].scalar_loop(values)
    return implementation("math.pow")(values)


# The self-test ----------------------------------------------------------------------------------
def _check_values(call: ScalarCall) -> np.ndarray:
    """Return the values a fast implementation of ``call`` is checked on."""
    rng = np.random.default_rng(20240516)
    if call.operand == _F32:
        return _float32_values(rng)
    values = _values(rng)
    if call.moderate:
        values = values[(np.abs(values) > 1e-150) & (np.abs(values) < 1e150) | (values == 0)]
    return values


def _values(rng: np.random.Generator) -> np.ndarray:
    """Return the finite float64 values the functions are checked on."""
    pi = math.pi
    edges = [0.0, -0.0, 5e-324, -5e-324, 2.2e-308, 1e-300, 1e-17, 1.0, -1.0, 0.5, 2.0]
    edges += [k * pi / 4 for k in range(-16, 17)]
    edges += [1e22, -1e22, 2.0**52, 2.0**60, 1e100, 1.7e308, -1.7e308]
    # Squares exactly halfway between two doubles: where pow and x * x can differ.
    ties = 1.5 + (2 * np.arange(512) + 1) * 2.0**-26
    signs = rng.choice([-1.0, 1.0], size=3072)
    parts = [
        np.array(edges),
        ties,
        rng.uniform(-4 * pi, 4 * pi, 2048),  # the angles of the envs
        rng.uniform(-60.0, 60.0, 1024),  # and velocities beyond their bounds
        3 * rng.uniform(-1.2, 0.6, 512),  # MountainCar's 3 * position
        signs[:2048] * 10.0 ** rng.uniform(-300, 300, 2048),  # tiny and huge
        signs[2048:] * 10.0 ** rng.uniform(-8, 8, 1024),
    ]
    return np.concatenate(parts)


def _float32_values(rng: np.random.Generator) -> np.ndarray:
    """Return the float32 values ``powf`` is checked on (Pendulum's float32 torques)."""
    ties = (1 + np.arange(1, 2048, 2) * 2.0**-12).astype(np.float32)  # squares halfway
    return np.concatenate(
        [
            ties,
            rng.uniform(-3.0, 3.0, 2048).astype(np.float32),
            (rng.choice([-1.0, 1.0], 512) * 10.0 ** rng.uniform(-18, 18, 512)).astype(np.float32),
            np.array([0.0, -0.0, 2.0, -2.0, 1e-45, 3.4e38], dtype=np.float32),
        ]
    )
