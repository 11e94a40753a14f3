"""States as 0-d NumPy records with named fields: one layout per env, shared by the families.

A physics family describes what its state holds as named arrays (their dtype and shape
fixed when the env is built); :class:`RecordLayout` turns those into one read-only 0-d
record (what ``get_state`` returns), reads the fields back for ``set_state``, and checks
that a state handed in fits before anything is touched. Records move between processes
as raw bytes and batch into one record array, like the classic control states.

>>> layout = RecordLayout("Demo-v0", {"qpos": (np.float64, (3,)), "steps": (np.int64, ())})
>>> state = layout.pack(qpos=np.arange(3.0), steps=7)
>>> state["qpos"], int(state["steps"]), state.flags.writeable
(array([0., 1., 2.]), 7, False)
>>> layout.check(state)
>>> layout.check(np.stack([state, state])[1])  # a row of an archive of states: np.void
>>> layout.check(np.zeros(3))
Traceback (most recent call last):
...
TypeError: state: expected a Demo-v0 state (a 0-d record array from get_state() or a record ...
"""

from __future__ import annotations

from typing import Any

import numpy as np

from plangym.columns import intern_dtype
from plangym.validation import describe
from plangym.validation.values import with_article


class RecordLayout:
    """The record type of one env's states, with packing and checking.

    Args:
        env_name: Name shown in error messages.
        fields: ``{field_name: (dtype, shape)}`` in the order the record stores them.
    """

    __slots__ = ("dtype", "env_name", "names")

    def __init__(self, env_name: str, fields: dict[str, tuple[Any, tuple[int, ...]]]):
        self.env_name = env_name
        layout = [(name, np.dtype(kind), tuple(shape)) for name, (kind, shape) in fields.items()]
        self.dtype = intern_dtype(np.dtype(layout))
        self.names = tuple(fields)

    def pack(self, **values: Any) -> np.ndarray:
        """Return a read-only 0-d record holding ``values`` (one per field, all given)."""
        record = np.zeros((), self.dtype)
        for name in self.names:
            record[name] = values[name]
        record.flags.writeable = False
        return record

    def check(self, state: Any, name: str = "state") -> None:
        """Raise TypeError unless ``state`` is a record of this layout.

        A 0-d record array (what ``get_state`` returns) or a record of a record array of
        states (``np.void``: a row of ``np.stack`` or ``np.load`` of them), which holds the
        same bytes.
        """
        if (
            isinstance(state, np.ndarray | np.void)
            and state.shape == ()
            and (state.dtype is self.dtype or state.dtype == self.dtype)
        ):
            return
        raise TypeError(
            f"{name}: expected {with_article(self.env_name)} state (a 0-d record array from "
            f"get_state() or a record of a record array of states), received {describe(state)}"
        )

    def check_all(self, states: list) -> None:
        """Check a batch; a glance when every state has this layout's own dtype object."""
        dtype = self.dtype
        for i, state in enumerate(states):
            if not (type(state) is np.ndarray and state.dtype is dtype and not state.shape):
                self.check(state, name=f"states[{i}]")
