"""Comparing step results bit for bit, and replaying actions from a state.

Used by the pytest suite in :mod:`plangym.api_tests` and by ``plangym check``
(:mod:`plangym.selfcheck`), which must run without pytest.

>>> import numpy as np
>>> difference([(np.zeros(2), 1.0)], [(np.zeros(2), 1.0)]) is None
True
>>> difference([(np.zeros(2), 1.0)], [(np.ones(2), 1.0)])
'value[0][0]: contents differ'
>>> difference(1, 1.0)
"value: <class 'int'> != <class 'float'>"
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def difference(first: Any, second: Any, path: str = "value") -> str | None:
    """Return where two step results differ, or None when they are bit-identical.

    Arrays must agree in dtype, shape and bytes, containers in type, length and keys, and
    everything else in type and value (two float NaNs count as equal).
    """
    if isinstance(first, np.ndarray) or isinstance(second, np.ndarray):
        if not (isinstance(first, np.ndarray) and isinstance(second, np.ndarray)):
            return f"{path}: {type(first).__name__} != {type(second).__name__}"
        if first.dtype != second.dtype:
            return f"{path}: dtype {first.dtype} != {second.dtype}"
        if first.shape != second.shape:
            return f"{path}: shape {first.shape} != {second.shape}"
        if first.dtype.hasobject:  # its bytes are pointers: compare what they point to
            items = zip(first.ravel().tolist(), second.ravel().tolist(), strict=True)
            return _first_difference((a, b, f"{path}.flat[{i}]") for i, (a, b) in enumerate(items))
        return None if first.tobytes() == second.tobytes() else f"{path}: contents differ"
    if isinstance(first, dict):
        if not isinstance(second, dict):
            return f"{path}: dict != {type(second).__name__}"
        if first.keys() != second.keys():
            return f"{path}: keys {sorted(first)} != {sorted(second)}"
        return _first_difference((first[k], second[k], f"{path}[{k!r}]") for k in first)
    if isinstance(first, list | tuple):
        if type(first) is not type(second) or len(first) != len(second):
            return f"{path}: {type(first).__name__} of {len(first)} != {second!r:.60}"
        items = zip(first, second, strict=True)
        return _first_difference((a, b, f"{path}[{i}]") for i, (a, b) in enumerate(items))
    if type(first) is not type(second):
        return f"{path}: {type(first)} != {type(second)}"
    both_nan = isinstance(first, float) and np.isnan(first) and np.isnan(second)
    return None if first == second or both_nan else f"{path}: {first!r} != {second!r}"


def _first_difference(pairs) -> str | None:
    for first, second, path in pairs:
        found = difference(first, second, path)
        if found:
            return found
    return None


def replay(env: Any, state: Any, actions: Sequence, dt: int = 1) -> list[tuple]:
    """Restore ``state`` in ``env`` and return every step's full result for ``actions``."""
    env.set_state(state)
    return [env.step(action, dt=dt, return_state=True) for action in actions]
