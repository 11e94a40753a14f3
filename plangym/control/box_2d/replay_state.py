"""Exact states by replay: the random generator an episode started from, and its actions.

Some simulators (Box2D) cannot hand out or take back their full internal state, but are
deterministic: resetting from the same random generator state and applying the same
actions gives bit-identical results. A *replay* records exactly that, as bytes::

    bytes 0-7    fingerprint of the environment and its settings (foreign states fail)
    bytes 8-55   the six words of the PCG64 generator before the episode's reset drew
    bytes 56-    one fixed-size record per underlying step: the action applied

States are :class:`~plangym.control.box_2d.state.ReplayState` objects wrapping those bytes.
A :class:`Tape` holds one growing history; :class:`Cursor` is a position on a tape. The
states handed out wrap read-only views of a tape's first bytes, so ``get_state`` costs the
same at any depth, and states that share a history share its memory until they branch.

>>> from gymnasium import spaces
>>> codec = ActionCodec(spaces.Discrete(4))
>>> layout = ReplayLayout("Demo-v0", "settings", codec)
>>> cursor = Cursor.start(layout.header(np.arange(6, dtype=np.uint64)))
>>> cursor.append(codec.encode(2))
>>> cursor.append(codec.encode(3))
>>> state = layout.state(cursor)
>>> state, codec.decode(state.array[HEADER_BYTES:])
(ReplayState('Demo-v0', n_steps=2, nbytes=58), [2, 3])
>>> layout.words(state.array).tolist()
[0, 1, 2, 3, 4, 5]
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np
from gymnasium import spaces

from plangym.control.box_2d.state import FINGERPRINT_BYTES, HEADER_BYTES, ReplayState
from plangym.rng import words_problem
from plangym.validation import describe
from plangym.validation.values import counted, with_article

__all__ = [
    "FINGERPRINT_BYTES",
    "HEADER_BYTES",
    "ActionCodec",
    "Cursor",
    "ReplayLayout",
    "ReplayState",
    "Tape",
]

FORMAT_VERSION = "plangym-replay-1"


class ActionCodec:
    """Turns checked actions into the values that are stepped, and those into bytes.

    A Discrete action is stepped as a Python int (gymnasium's envs do integer arithmetic
    on it, which a small NumPy integer could overflow) and stored in the smallest integer
    type that holds the space. A Box action is stepped as an array of the space's dtype
    (float32 for Box2D), whatever numeric type it came as: the env then computes with the
    same values however the caller spelled them, and so does every replay.

    >>> codec = ActionCodec(spaces.Box(-1, 1, (2,), dtype=np.float32))
    >>> action = codec.canonical([0.5, 1])
    >>> action.dtype, codec.step_bytes, codec.decode(codec.encode(action))[0].tolist()
    (dtype('float32'), 8, [0.5, 1.0])
    """

    __slots__ = ("discrete", "dtype", "high", "low", "shape", "step_bytes")

    def __init__(self, space: spaces.Space):
        # The bounds: ints for a Discrete space, arrays for a Box.
        self.low: int | np.ndarray
        self.high: int | np.ndarray
        if isinstance(space, spaces.Discrete):
            self.discrete = True
            self.low, self.high = int(space.start), int(space.start + space.n - 1)
            self.dtype = np.result_type(np.min_scalar_type(self.low), np.min_scalar_type(self.high))
            self.shape: tuple[int, ...] = ()
        elif isinstance(space, spaces.Box):
            self.discrete = False
            self.low, self.high = space.low, space.high
            self.dtype = np.dtype(space.dtype)
            self.shape = tuple(space.shape)
        else:
            raise NotImplementedError(
                f"action_space: replay states need a Discrete or Box space, received {space}"
            )
        self.step_bytes = self.dtype.itemsize * int(np.prod(self.shape, dtype=np.int64))

    def describe(self) -> str:
        """Describe the record of one step, for fingerprints and error messages."""
        return f"{self.dtype.str}{list(self.shape)}"

    def canonical(self, action: Any) -> Any:
        """Return the value to step for a checked ``action``."""
        if self.discrete:
            return int(action)
        return np.array(action, dtype=self.dtype).reshape(self.shape)

    def encode(self, canonical: Any) -> bytes:
        """Return the bytes that record a canonical action."""
        if self.discrete:
            return self.dtype.type(canonical).tobytes()
        return canonical.tobytes()

    def decode(self, block: np.ndarray) -> list:
        """Return the canonical actions recorded in ``block`` (bytes of whole steps)."""
        values = np.frombuffer(block, dtype=self.dtype)
        if self.discrete:
            return values.tolist()
        return list(values.reshape(-1, *self.shape))

    def invalid(self, block: np.ndarray) -> str | None:
        """Why the actions recorded in ``block`` could not have been stepped, or None."""
        values = np.frombuffer(block, dtype=self.dtype)
        if self.discrete:
            if values.size and not (self.low <= values.min() and values.max() <= self.high):
                return f"actions outside [{self.low}, {self.high}]"
            return None
        # Out of the Box is fine: the env clips such actions, as step() lets them through.
        if not np.isfinite(values).all():
            return "actions that are not finite"
        return None


class ReplayLayout:
    """The replay-state format of one environment: header, fingerprint, step records.

    Args:
        env_name: Name shown in error messages.
        settings: Text naming every setting that changes the dynamics; two envs whose
            states may be exchanged must give the same text.
        codec: How the env's actions are recorded.
    """

    __slots__ = ("codec", "env_name", "fingerprint", "fingerprint_bytes")

    def __init__(self, env_name: str, settings: str, codec: ActionCodec):
        self.env_name = env_name
        self.codec = codec
        text = f"{FORMAT_VERSION}|{env_name}|{settings}|{codec.describe()}"
        digest = hashlib.blake2b(text.encode(), digest_size=FINGERPRINT_BYTES).digest()
        self.fingerprint = np.frombuffer(digest, dtype=np.uint8)
        self.fingerprint_bytes = digest

    def header(self, words: np.ndarray) -> np.ndarray:
        """Return the first bytes of every state of an episode started from ``words``."""
        words = np.asarray(words, dtype="<u8")
        return np.concatenate([self.fingerprint, words.view(np.uint8)])

    def state(self, cursor: Cursor) -> ReplayState:
        """Return the history ``cursor`` holds as a state (no copy: a view of its tape)."""
        return ReplayState._wrap(cursor.view(), self.env_name, self.codec.step_bytes)

    def words(self, replay: np.ndarray) -> np.ndarray:
        """Return the generator words the episode of a replay's bytes started from."""
        return replay[FINGERPRINT_BYTES:HEADER_BYTES].view("<u8")

    def n_steps(self, replay: np.ndarray) -> int:
        """Underlying steps since the episode's reset, in a replay's bytes."""
        return (len(replay) - HEADER_BYTES) // self.codec.step_bytes

    def expected(self) -> str:
        """Describe this env's states, for error messages."""
        return (
            f"{with_article(self.env_name)} state (a ReplayState from get_state(): a "
            f"{HEADER_BYTES}-byte header, then {counted(self.codec.step_bytes, 'byte')} per step)"
        )

    def check(self, state: Any, name: str = "state", values: bool = True) -> None:
        """Raise TypeError or ValueError unless ``state`` is a replay state of this env.

        Args:
            state: The candidate.
            name: The parameter named in the error.
            values: Also check that every recorded action could have been stepped
                (vectorised, so cheap; a state this process built skips it).
        """
        if not isinstance(state, ReplayState):
            hint = ""
            if _is_replay_array(state):
                hint = (
                    " (a bare replay array, the states of earlier plangym versions: "
                    "convert it with env.state_from_array(array))"
                )
            raise TypeError(f"{name}: expected {self.expected()}, received {describe(state)}{hint}")
        self.check_bytes(state.array, name=name, values=values, owner=state.env_name)

    def from_array(self, replay: Any, name: str = "array") -> ReplayState:
        """Return a state holding a copy of ``replay``, a 1-D uint8 array of its bytes.

        For replays saved as bare arrays; they are checked like any state.
        """
        if not _is_replay_array(replay):
            raise TypeError(
                f"{name}: expected the bytes of {self.expected()} as a 1-D uint8 array, "
                f"received {describe(replay)}"
            )
        self.check_bytes(replay, name=name)
        return ReplayState(replay, self.env_name, self.codec.step_bytes)

    def check_bytes(
        self, replay: np.ndarray, name: str, values: bool = True, owner: str | None = None
    ) -> None:
        """Raise ValueError unless a 1-D uint8 array holds a replay of this env.

        ``owner``: the env the replay says it belongs to (a ReplayState's name), named in
        the error when its fingerprint is not this env's. The fingerprint is compared
        first: a replay of another env is called so whatever its length.
        """
        length = len(replay)
        fingerprint = replay[:FINGERPRINT_BYTES].tobytes()
        if length >= FINGERPRINT_BYTES and fingerprint != self.fingerprint_bytes:
            raise ValueError(f"{name}: expected {self.expected()}, received {self._foreign(owner)}")
        if length < HEADER_BYTES or (length - HEADER_BYTES) % self.codec.step_bytes:
            raise ValueError(
                f"{name}: expected {self.expected()}, received {counted(length, 'byte')}, which "
                "is not a header plus whole steps"
            )
        if values:
            # Checked here, before any env sees them: BipedalWalker's terrain loops forever
            # on a generator that repeats one number.
            words = np.frombuffer(replay[FINGERPRINT_BYTES:HEADER_BYTES].tobytes(), dtype="<u8")
            problem = words_problem(words) or self.codec.invalid(replay[HEADER_BYTES:])
            if problem:
                raise ValueError(f"{name}: expected {self.expected()}, received {problem}")

    def _foreign(self, owner: str | None) -> str:
        """Describe a replay whose fingerprint differs, made by the env named ``owner``."""
        if owner is None:  # bare bytes: nothing says whose they are
            return "a state of another environment or of other settings (its fingerprint differs)"
        if owner != self.env_name:
            return f"a state of another environment, {owner} (its fingerprint differs)"
        return (
            f"{with_article(owner)} state made with other dynamics settings or corrupt bytes "
            "(its fingerprint differs)"
        )


def _is_replay_array(value: Any) -> bool:
    """Whether ``value`` is a 1-D uint8 array, the form of a replay's bytes."""
    return (
        isinstance(value, np.ndarray)
        and value.dtype == np.uint8
        and value.ndim == 1
        and value.dtype.names is None
    )


class Tape:
    """A growing byte history. Bytes below ``size`` are never written again.

    Views handed out cover at most ``size`` bytes, so they never change; a cursor that
    wants to append where another history already continued copies its prefix first.
    """

    __slots__ = ("data", "size")

    def __init__(self, prefix: np.ndarray, capacity: int):
        self.data = np.empty(max(capacity, len(prefix)), dtype=np.uint8)
        self.data[: len(prefix)] = prefix
        self.size = len(prefix)


class Cursor:
    """A position on a tape: the history ``tape.data[:length]``."""

    __slots__ = ("length", "tape")

    def __init__(self, tape: Tape, length: int):
        self.tape = tape
        self.length = length

    @classmethod
    def start(cls, prefix: np.ndarray, spare: int = 512) -> Cursor:
        """Return a cursor on a new tape holding ``prefix``, with ``spare`` bytes free."""
        return cls(Tape(prefix, len(prefix) + spare), len(prefix))

    def view(self) -> np.ndarray:
        """Return the history as a read-only array sharing the tape's memory."""
        view = self.tape.data[: self.length]
        view.flags.writeable = False
        return view

    def owns(self, state: ReplayState) -> bool:
        """Whether ``state`` views this cursor's tape (so its bytes are known good)."""
        return state.array.base is self.tape.data

    def append(self, record: bytes | np.ndarray) -> None:
        """Extend the history by ``record``; copy the prefix first if the tape moved on."""
        size = len(record)
        end = self.length + size
        tape = self.tape
        if tape.size != self.length:  # another history continues here: branch off
            tape = self.tape = Tape(tape.data[: self.length], 2 * end)
        elif end > len(tape.data):  # full: move to a larger array (old views keep theirs)
            grown = np.empty(2 * end, dtype=np.uint8)
            grown[: self.length] = tape.data[: self.length]
            tape.data = grown
        tape.data[self.length : end] = np.frombuffer(record, dtype=np.uint8)
        tape.size = self.length = end

    def prefix_of(self, replay: np.ndarray) -> bool:
        """Whether this history is the beginning of (or equal to) a replay's bytes."""
        length = self.length
        if length > len(replay):
            return False
        if replay.base is self.tape.data:  # a view of this tape: same bytes up to its end
            return True
        return self.tape.data[:length].tobytes() == replay[:length].tobytes()
