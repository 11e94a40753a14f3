"""Vector states that numpy stored as Python objects, turned back into the env's states.

Code written for plangym 0.1 keeps its walkers' states in object arrays
(``np.asarray(states, dtype=object)``). When every state is a vector of one length (an
Atari, MuJoCo or dm_control state), numpy makes that a 2-D array of Python numbers: each
row holds a state's values but no longer its dtype. plangym 0.1 restored such rows; plangym
converts them back to the dtype of the env's own states when every value survives the trip
exactly, and leaves anything else to the env's state check, which refuses it as usual.

>>> states = [np.arange(3, dtype=np.uint8), np.arange(3, 6, dtype=np.uint8)]
>>> rows = np.asarray(states, dtype=object)
>>> rows.shape, rows[1].dtype
((2, 3), dtype('O'))
>>> thawed(rows[1], like=states[0])
array([3, 4, 5], dtype=uint8)
>>> thawed(np.array([1, 300], dtype=object), like=states[0]).dtype  # 300 is no uint8
dtype('O')
"""

from __future__ import annotations

from typing import Any, TypeGuard

import numpy as np


def is_object_vector(value: Any) -> TypeGuard[np.ndarray]:
    """Whether ``value`` is a 1-D array of Python objects (a row of an object array)."""
    return type(value) is np.ndarray and value.dtype.kind == "O" and value.ndim == 1


def is_object_rows(value: Any) -> TypeGuard[np.ndarray]:
    """Whether ``value`` is a 2-D object array: vector states stacked as Python objects."""
    return type(value) is np.ndarray and value.dtype.kind == "O" and value.ndim == 2


def thawed(state: Any, like: Any) -> Any:
    """``state`` as a vector of ``like``'s dtype, if it is an object vector whose values fit.

    Returns ``state`` itself when it is not an object vector, when ``like`` is no numeric
    vector of its length, or when a value would change on conversion.
    """
    if not is_object_vector(state):
        return state
    if not (isinstance(like, np.ndarray) and like.dtype.kind in "biuf"):
        return state
    if like.shape != state.shape:
        return state
    try:
        values = state.astype(like.dtype)
    except (TypeError, ValueError, OverflowError):
        return state
    # A float cut to an integer, or an integer wrapped around, compares unequal.
    return values if values.tolist() == state.tolist() else state
