"""What a sub-env's wrappers keep, saved so that it can be put back into the very same objects.

``step_batch`` through a sub-env's wrappers (:mod:`plangym.vector.wrapped_steps`) must give
the sub-env its wrappers back as they were: a frame stack's frames, running statistics, a
TimeLimit's count. A copy is not enough, since a wrapper may hold objects others hold too
(a model it shares with the training loop, MuJoCo's data, a log): those must stay the same
objects. So :class:`SavedWrappers` deep-copies what the wrappers reach and, to restore,
writes each copy's contents back into its original (arrays, lists, deques, dicts, sets,
generators, objects' attributes), then rebinds each wrapper's attributes to the originals.
The envs beneath the wrappers are shared, never copied; what cannot be copied (a file, a
renderer) is kept as it is, and what cannot be written back (an opaque extension object)
keeps what planning did to it.

>>> import collections
>>> class Kept:
...     def __init__(self):
...         self.frames, self.shared = collections.deque([1, 2]), object()
>>> kept = Kept()
>>> frames, shared = kept.frames, kept.shared
>>> saved = SavedWrappers([kept], shared=[])
>>> kept.frames.append(3); kept.count = 1; kept.shared = None
>>> saved.restore()
>>> kept.frames is frames, list(kept.frames), kept.shared is shared, hasattr(kept, "count")
(True, [1, 2], True, False)
"""

from __future__ import annotations

import array
import collections
import copy
import random
from collections.abc import Iterable
from typing import Any

import gymnasium
import numpy as np

_ATOMIC = (type(None), bool, int, float, complex, str, bytes, type)
# Kept, not copied: simulators, and spaces, which steps leave alone.
_SHARED = (gymnasium.Env, gymnasium.vector.VectorEnv, gymnasium.spaces.Space)


class SavedWrappers:
    """A snapshot of ``wrappers``' attributes; ``shared`` objects are never copied."""

    def __init__(self, wrappers: Iterable[Any], shared: Iterable[Any]):
        self.wrappers = list(wrappers)
        # deepcopy's memo: an object found here is not copied again. The wrappers and the
        # envs beneath them stand for themselves.
        memo: dict[int, Any] = {id(obj): obj for obj in (*self.wrappers, *shared)}
        self.attributes = [
            {name: _copy(value, memo) for name, value in vars(w).items()} for w in self.wrappers
        ]
        originals = memo.get(id(memo), [])  # deepcopy keeps each object it copied alive here
        # (original, its copy) for every object copied, and each copy's original.
        self.pairs = [(obj, memo[id(obj)]) for obj in originals if memo.get(id(obj)) is not obj]
        self.original_of = {id(twin): obj for obj, twin in self.pairs}

    def restore(self) -> None:
        """Put every copied object's contents back, then the wrappers' attributes."""
        for original, twin in self.pairs:
            self._refill(original, twin)
        for wrapper, attributes in zip(self.wrappers, self.attributes, strict=True):
            kept = vars(wrapper)
            kept.clear()
            kept.update({name: self._back(value) for name, value in attributes.items()})

    def _back(self, value: Any) -> Any:
        """Return the original of a copy (anything else as it is)."""
        return self.original_of.get(id(value), value)

    def _refill(self, original: Any, twin: Any) -> None:
        """Write ``twin``'s contents (its copies as their originals) into ``original``."""
        back = self._back
        if isinstance(original, np.ndarray):
            if not original.flags.writeable or original.shape != twin.shape:
                return
            if original.dtype.hasobject:  # its items are objects: the originals go back
                for index, item in enumerate(twin.flat):
                    original.flat[index] = back(item)
            else:
                original[...] = twin
        elif isinstance(original, bytearray | array.array):
            original[:] = twin
        elif isinstance(original, collections.deque):
            original.clear()
            original.extend(back(item) for item in twin)
        elif isinstance(original, list):
            original[:] = [back(item) for item in twin]
        elif isinstance(original, dict):
            items = [(back(key), back(value)) for key, value in twin.items()]
            original.clear()
            original.update(items)
        elif isinstance(original, set):
            original.clear()
            original.update(back(item) for item in twin)
        elif isinstance(original, np.random.Generator):
            original.bit_generator.state = twin.bit_generator.state
        elif isinstance(original, np.random.RandomState):
            original.set_state(twin.get_state())
        elif isinstance(original, random.Random):
            original.setstate(twin.getstate())
        elif not isinstance(original, tuple | frozenset):
            self._refill_attributes(original, twin)

    def _refill_attributes(self, original: Any, twin: Any) -> None:
        """Write back an object's attributes, in its ``__dict__`` and its slots."""
        back = self._back
        if hasattr(original, "__dict__"):
            attributes = {name: back(value) for name, value in vars(twin).items()}
            vars(original).clear()
            vars(original).update(attributes)
        for kind in type(original).__mro__:
            slots = kind.__dict__.get("__slots__", ())
            for name in [slots] if isinstance(slots, str) else slots:
                if name in ("__dict__", "__weakref__"):
                    continue
                if hasattr(twin, name):
                    setattr(original, name, back(getattr(twin, name)))
                elif hasattr(original, name):
                    delattr(original, name)


def _copy(value: Any, memo: dict[int, Any]) -> Any:
    """Deep-copy ``value`` through ``memo``; what cannot be copied is kept as it is.

    An object with a finalizer holds a resource (a file, a renderer): it is kept, not
    copied (a half-made copy's finalizer would complain); so is a read-only array. A
    container that cannot be copied whole is copied item by item, keeping only those items.
    """
    if isinstance(value, (*_ATOMIC, *_SHARED)) or hasattr(type(value), "__del__"):
        return value
    if isinstance(value, np.ndarray) and not value.flags.writeable:
        return value  # a table only read (nothing could write it back anyway): free

    if id(value) in memo:
        return memo[id(value)]
    known, alive = set(memo), list(memo.get(id(memo), []))
    try:
        return copy.deepcopy(value, memo)
    except Exception:  # ctypes (ValueError), a lock (TypeError), a module, ...
        # A half-made copy must not be written back later: forget what this attempt made.
        for key in set(memo) - known:
            del memo[key]
        if alive:
            memo[id(memo)] = alive
    if isinstance(value, dict | list | collections.deque | tuple):
        return _copy_items(value, memo)
    return value


def _copy_items(value: Any, memo: dict[int, Any]) -> Any:
    """Copy a container item by item (see :func:`_copy`), and remember it as copied."""
    twin: Any
    if isinstance(value, tuple):
        items = [_copy(item, memo) for item in value]
        # A namedtuple is rebuilt from its fields, a plain tuple from its items.
        twin = value._make(items) if hasattr(value, "_make") else type(value)(items)
    else:
        try:
            twin = copy.copy(value)
        except Exception:
            return value
    memo[id(value)] = twin  # so that the copy maps back to the original
    memo.setdefault(id(memo), []).append(value)  # as deepcopy keeps what it copied
    if isinstance(value, tuple):
        return twin
    if isinstance(value, dict):
        twin.update({key: _copy(item, memo) for key, item in value.items()})
    elif isinstance(value, list):
        twin[:] = [_copy(item, memo) for item in value]
    else:
        twin.clear()
        twin.extend(_copy(item, memo) for item in value)
    return twin
