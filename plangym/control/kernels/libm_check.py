"""The self-test telling whether NumPy's array loops give the bits of gymnasium's scalar math.

The kernels compute over whole arrays what gymnasium computes one scalar at a time:
``np.cos`` and ``np.sin`` of a ``np.float64`` (CartPole, Acrobot, Pendulum), ``math.cos``
of a float (the mountain cars), ``x ** 2`` of a NumPy scalar (Acrobot, Pendulum: C's
``pow``, which is not always ``x * x``), ``math.pow(a, 2)`` (MountainCarContinuous),
``np.square`` and ``%`` (Pendulum's ``angle_normalize``). On most CPUs NumPy's array loops
give the same bits as the scalar calls; where NumPy dispatches to other SIMD code (such as
AVX-512 builds using SVML) they may not. :func:`mismatches` runs each function on a few
thousand values, realistic ones and extreme ones, both ways, once per process; the kernels
are used only when every one agrees bit for bit.

:func:`scalar_square` is ``x ** 2`` computed element by element as NumPy scalars compute it:
the kernels use it wherever gymnasium squares a NumPy scalar.

>>> x = 1.5 + 2.0**-26  # its square lies halfway between two doubles: pow may round it
>>> bool(scalar_square(np.array([x]))[0] == np.float64(x) ** 2)  # as gymnasium squares
True
>>> numpy_matches_scalars() == (not mismatches())
True
>>> numpy_matches_scalars("np.cos") == ("np.cos" not in mismatches())
True
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numpy as np

_F64 = np.dtype(np.float64)
_F32 = np.dtype(np.float32)
# What mismatches checks: each array loop against the scalar calls gymnasium makes.
CHECK_NAMES = (
    "np.cos",  # np.cos of np.float64 scalars
    "np.sin",
    "math.cos",  # math.cos of floats
    "math.sin",
    "np.square",  # np.square of np.float64 scalars
    "x * x",
    "float64 ** 2",  # ** 2 of np.float64 scalars: C's pow
    "math.pow",  # math.pow(v, 2)
    "float32 ** 2",  # ** 2 of np.float32 scalars: C's powf
    "%",  # % of np.float64 scalars
)


def scalar_square(x: np.ndarray) -> np.ndarray:
    """Return ``x ** 2`` of every element as NumPy computes it on one scalar of ``x.dtype``.

    A NumPy scalar's ``** 2`` calls C's ``pow`` (``powf`` for float32), which rounds a few
    squares in a thousand differently from ``x * x``; an array's ``** 2`` (or ``np.power``
    with the scalar exponent 2) is ``np.square``. ``np.power`` with an array of exponents
    calls ``pow`` for each element (checked by :func:`mismatches`). Other dtypes are squared
    one NumPy scalar at a time.
    """
    if x.dtype in (_F64, _F32):
        return np.power(x, np.full(x.shape, 2, dtype=x.dtype))
    return np.array([value**2 for value in x.ravel()], dtype=x.dtype).reshape(x.shape)


def math_cos(x: np.ndarray) -> np.ndarray:
    """Return ``math.cos`` of every element: ``np.cos``, checked by :func:`mismatches`.

    ``math.cos`` raises ValueError for an infinite value: so does this (NaN gives NaN).
    """
    if np.isinf(x).any():
        raise ValueError("math domain error")
    return np.cos(x)


def math_square(x: np.ndarray) -> np.ndarray:
    """Return ``math.pow(a, 2)`` of every element as a float64 array (C's ``pow``).

    ``math.pow`` raises OverflowError where a finite value's square overflows: so does this.
    """
    values = np.asarray(x, dtype=np.float64)
    with np.errstate(over="ignore"):
        squares = np.power(values, np.full(values.shape, 2.0))
    if np.isinf(squares).any() and (np.isinf(squares) & np.isfinite(values)).any():
        raise OverflowError("math range error")
    return squares


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


def _same_bits(ours: np.ndarray, theirs: list, dtype: np.dtype) -> bool:
    return np.asarray(ours, dtype=dtype).tobytes() == np.array(theirs, dtype=dtype).tobytes()


def _checks(x: np.ndarray, u: np.ndarray) -> dict[str, Callable[[], bool]]:
    """Return each check by name: array loop against scalar calls, run lazily."""
    scalars = list(x)  # np.float64 scalars, as gymnasium unpacks them from its state
    floats = x.tolist()
    moderate = [v for v in floats if 1e-150 < abs(v) < 1e150 or v == 0.0]  # math.pow(v, 2) ok
    scalars32 = list(u)
    two_pi = 2 * np.pi

    def same(name: str) -> bool:
        if name == "np.cos":
            return _same_bits(np.cos(x), [np.cos(v) for v in scalars], _F64)
        if name == "np.sin":
            return _same_bits(np.sin(x), [np.sin(v) for v in scalars], _F64)
        if name == "math.cos":
            return _same_bits(math_cos(x), [math.cos(v) for v in floats], _F64)
        if name == "math.sin":
            return _same_bits(np.sin(x), [math.sin(v) for v in floats], _F64)
        if name == "np.square":
            return _same_bits(np.square(x), [np.square(v) for v in scalars], _F64)
        if name == "x * x":
            return _same_bits(np.square(x), [v * v for v in floats], _F64)
        if name == "float64 ** 2":
            return _same_bits(scalar_square(x), [v**2 for v in scalars], _F64)
        if name == "math.pow":
            squares = math_square(np.array(moderate))
            return _same_bits(squares, [math.pow(v, 2) for v in moderate], _F64)
        if name == "float32 ** 2":
            return _same_bits(scalar_square(u), [v**2 for v in scalars32], _F32)
        return _same_bits(x % two_pi, [v % two_pi for v in scalars], _F64)  # "%"

    return {name: functools.partial(same, name) for name in CHECK_NAMES}


@functools.cache
def mismatches() -> tuple[str, ...]:
    """Return the names of the functions whose array loops differ from their scalar calls.

    Runs once per process (a few tens of milliseconds); empty where the kernels are exact.
    """
    rng = np.random.default_rng(20240516)
    x, u = _values(rng), _float32_values(rng)
    failed = []
    with np.errstate(all="ignore"):  # overflows and underflows of the extreme values
        for name, check in _checks(x, u).items():
            try:
                same = check()
            except (ArithmeticError, ValueError):
                same = False
            if not same:
                failed.append(name)
    return tuple(failed)


def numpy_matches_scalars(*names: str) -> bool:
    """Tell whether the functions ``names`` (all of them by default) agree bit for bit.

    Each kernel names the ones it uses (its module's ``NEEDS``): CartPole, which calls no
    ``math`` function, is exact on a CPU where only ``math.cos`` differs from ``np.cos``.
    """
    unknown = set(names) - set(CHECK_NAMES)
    if unknown:
        raise KeyError(f"no such check: {sorted(unknown)}")
    failed = mismatches()
    return not any(name in failed for name in names or CHECK_NAMES)
