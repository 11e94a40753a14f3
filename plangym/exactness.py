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

Steps from :func:`replay` name their fields, and record states their columns:

>>> state = np.zeros((), dtype=[("physics", "f8", (2,)), ("rng", "u8")])
>>> moved = state.copy()
>>> moved["rng"] = 7
>>> difference([Step(state, 0, 1.0, False, False, {})], [Step(moved, 0, 1.0, False, False, {})])
"value[0].state['rng']: contents differ"
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np


class Step(NamedTuple):
    """One ``step(..., return_state=True)`` result, whose fields a difference names."""

    state: Any
    obs: Any
    reward: Any
    terminal: Any
    truncated: Any
    info: Any


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
        if first.tobytes() == second.tobytes():
            return None
        for name in first.dtype.names or ():  # a record state: which of its columns
            if first[name].tobytes() != second[name].tobytes():
                return f"{path}[{name!r}]: contents differ"
        return f"{path}: contents differ"
    if isinstance(first, dict):
        if not isinstance(second, dict):
            return f"{path}: dict != {type(second).__name__}"
        if first.keys() != second.keys():
            return f"{path}: keys {sorted(first)} != {sorted(second)}"
        return _first_difference((first[k], second[k], f"{path}[{k!r}]") for k in first)
    if isinstance(first, list | tuple):
        # A Step is the tuple step() returns, with names: either compares with the other.
        same_kind = isinstance(second, tuple) if isinstance(first, tuple) else type(second) is list
        if not same_kind or len(first) != len(second):
            return f"{path}: {type(first).__name__} of {len(first)} != {second!r:.60}"
        names = getattr(first, "_fields", None) or getattr(second, "_fields", None)
        places = [f".{name}" for name in names] if names else [f"[{i}]" for i in range(len(first))]
        placed = zip(first, second, places, strict=True)
        return _first_difference((a, b, f"{path}{place}") for a, b, place in placed)
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


def replay(env: Any, state: Any, actions: Sequence, dt: int = 1) -> list[Step]:
    """Restore ``state`` in ``env`` and return every step's full result for ``actions``."""
    env.set_state(state)
    return [Step(*env.step(action, dt=dt, return_state=True)) for action in actions]
