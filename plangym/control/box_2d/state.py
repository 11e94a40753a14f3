"""The state of a Box2D env: an immutable replay (how the episode got where it is).

A :class:`ReplayState` wraps the replay's bytes (see
:mod:`plangym.control.box_2d.replay_state` for their layout). It is deliberately *not* an
array: a replay grows by one record per step, so it has no fixed shape, and
``Box2DEnv.STATE_IS_ARRAY`` is False. It compares and hashes by content, copies as itself
(it cannot change), and pickles as its bytes plus the env's name, so it crosses process
pipes and Ray as compactly as the raw bytes would.

>>> import pickle
>>> from plangym.control.box_2d import Box2DEnv
>>> env = Box2DEnv("LunarLander-v3")
>>> state, *_ = env.reset()
>>> new_state, *_ = env.step(2, state=state, dt=3)
>>> new_state
ReplayState('LunarLander-v3', n_steps=3, nbytes=59)
>>> pickle.loads(pickle.dumps(new_state)) == new_state
True
>>> new_state.array.dtype, new_state.array.shape, new_state.array.flags.writeable
(dtype('uint8'), (59,), False)
>>> bytes(new_state)[56:].hex()  # one byte per underlying step of a 4-action game
'020202'
"""

from __future__ import annotations

from typing import Any

import numpy as np

from plangym.rng import N_WORDS
from plangym.validation import describe

# The replay's header: a fingerprint of the env and its settings, then the generator words.
FINGERPRINT_BYTES = 8
HEADER_BYTES = FINGERPRINT_BYTES + 8 * N_WORDS


def _rebuild(data: bytes, env_name: str, step_bytes: int) -> ReplayState:
    """Unpickle a :class:`ReplayState` (a module-level function, so pickle finds it)."""
    array = np.frombuffer(data, dtype=np.uint8)  # read-only: it views immutable bytes
    return ReplayState._wrap(array, env_name, step_bytes)


class ReplayState:
    """An immutable Box2D replay state: the bytes of a replay and the env they belong to.

    Get one from ``get_state()``, ``reset()``, ``step()`` or ``step_batch()``; restore it
    with ``set_state()`` in any instance, clone or process of an env with the same name
    and dynamics settings.

    Args:
        data: The replay's bytes: ``bytes``, or a 1-D ``uint8`` array (copied, so the
            state owns them and cannot change).
        env_name: The env id the state belongs to (shown by ``repr``).
        step_bytes: Bytes recorded per underlying step (gives :attr:`n_steps`).

    The raw bytes are :attr:`array` (a read-only 1-D ``uint8`` view, no copy) or
    ``bytes(state)`` (a copy). The state does not offer ``__array__`` on purpose: NumPy
    would then unpack a list of states into a 2-D array (``np.array(states,
    dtype=object)``) instead of keeping one object per state.

    >>> state = ReplayState(bytes(58), "Demo-v0", step_bytes=1)
    >>> state.n_steps, state.nbytes, state == ReplayState(bytes(58), "Demo-v0", 1)
    (2, 58, True)
    >>> state.array[0] = 1
    Traceback (most recent call last):
    ...
    ValueError: assignment destination is read-only
    """

    __slots__ = ("_data", "_env_name", "_hash", "_step_bytes")
    _data: np.ndarray
    _env_name: str
    _hash: int  # set by the first hash()
    _step_bytes: int

    def __init__(self, data: bytes | np.ndarray, env_name: str, step_bytes: int):
        if isinstance(data, np.ndarray):
            if data.dtype != np.uint8 or data.ndim != 1 or data.dtype.names is not None:
                raise TypeError(
                    f"data: expected bytes or a 1-D uint8 array, received {describe(data)}"
                )
            data = data.tobytes()
        if not isinstance(data, bytes):
            raise TypeError(f"data: expected bytes or a 1-D uint8 array, received {describe(data)}")
        if not isinstance(env_name, str):
            raise TypeError(f"env_name: expected a str, received {describe(env_name)}")
        if not (isinstance(step_bytes, int) and step_bytes > 0):
            raise ValueError(
                f"step_bytes: expected a positive int, received {describe(step_bytes)}"
            )
        _set_data(self, np.frombuffer(data, dtype=np.uint8))
        _set_env_name(self, env_name)
        _set_step_bytes(self, step_bytes)

    @classmethod
    def _wrap(cls, array: np.ndarray, env_name: str, step_bytes: int) -> ReplayState:
        """Wrap a read-only view whose bytes never change, without copying (no checks)."""
        # get_state runs this on every step: the slots' own setters skip __setattr__.
        state = _new(cls)
        _set_data(state, array)
        _set_env_name(state, env_name)
        _set_step_bytes(state, step_bytes)
        return state

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"ReplayState is immutable: cannot set {name!r}")

    __delattr__ = __setattr__  # type: ignore[assignment]

    # The contents ---------------------------------------------------------------------------
    @property
    def array(self) -> np.ndarray:
        """The replay's bytes as a read-only 1-D ``uint8`` array (a view, no copy)."""
        return self._data

    @property
    def env_name(self) -> str:
        """The id of the env this state belongs to."""
        return self._env_name

    @property
    def step_bytes(self) -> int:
        """Bytes recorded per underlying step."""
        return self._step_bytes

    @property
    def nbytes(self) -> int:
        """Length of the replay in bytes."""
        return len(self._data)

    @property
    def n_steps(self) -> int:
        """Underlying steps since the episode's reset (every frame of every ``dt``)."""
        return max(len(self._data) - HEADER_BYTES, 0) // self._step_bytes

    def __bytes__(self) -> bytes:
        return self._data.tobytes()

    # Value semantics ------------------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ReplayState):
            # Not NotImplemented: the reflected ndarray.__eq__ would answer elementwise.
            return False
        mine, theirs = self._data, other._data
        if len(mine) != len(theirs):
            return False
        # Views of one tape that start at its beginning hold the same bytes up to their end.
        if mine.base is not None and mine.base is theirs.base:
            return True
        return mine.tobytes() == theirs.tobytes()

    def __hash__(self) -> int:
        try:
            return self._hash
        except AttributeError:  # the first hash of this state
            _set_hash(self, hash(self._data.tobytes()))
            return self._hash

    def copy(self) -> ReplayState:
        """Return this state: it cannot change, so it serves as its own copy.

        Code written for plangym 0.1, whose Box2D states were arrays, saves states with
        ``state.copy()``.

        >>> state = ReplayState(bytes(58), "Demo-v0", step_bytes=1)
        >>> state.copy() == state
        True
        """
        return self

    def __copy__(self) -> ReplayState:
        return self

    def __deepcopy__(self, memo: dict) -> ReplayState:
        return self

    def __reduce__(self) -> tuple:
        # Only the state's own bytes: not the rest of the tape it may view.
        return _rebuild, (self._data.tobytes(), self._env_name, self._step_bytes)

    def __repr__(self) -> str:
        return f"ReplayState({self._env_name!r}, n_steps={self.n_steps}, nbytes={self.nbytes})"


_new = object.__new__
# The slots' setters, which bypass ReplayState.__setattr__ (that one refuses every change).
_set_data = ReplayState.__dict__["_data"].__set__
_set_env_name = ReplayState.__dict__["_env_name"].__set__
_set_step_bytes = ReplayState.__dict__["_step_bytes"].__set__
_set_hash = ReplayState.__dict__["_hash"].__set__
