"""The state codec of the classic control tasks: the one place that knows their state format.

A state takes three forms, and :class:`ClassicStateCodec` moves it between them:

* **in the env**: the gymnasium env's ``state`` (the physics), CartPole's
  ``steps_beyond_terminated``, Pendulum's ``last_u``, the time limit's step counter and the
  ``np_random`` generator;
* **fields**: the tuple ``(physics, steps_beyond, elapsed, last_u, rng)`` of those values as
  the env holds them, the generator as the bytes of its words; a field this env does not
  have is read as None and never written;
* **a record**: a row of :func:`classic_state_dtype`, the format users save.

``ClassicControl.get_state`` and ``set_state`` move one state (:meth:`~ClassicStateCodec.read`
then :meth:`~ClassicStateCodec.pack`; :meth:`~ClassicStateCodec.unpack` then
:meth:`~ClassicStateCodec.write`). Its bulk batch loop moves a whole record array: it reads
the records as columns (:meth:`~ClassicStateCodec.rows`), puts each state in the env with
the same :meth:`~ClassicStateCodec.write`, appends each new state to columns
(:meth:`~ClassicStateCodec.read_into`, the batch form of :meth:`~ClassicStateCodec.read`)
and writes those as records (:meth:`~ClassicStateCodec.records`).

>>> import gymnasium
>>> gym_env = gymnasium.make("CartPole-v1")
>>> _ = gym_env.reset(seed=0)
>>> codec = ClassicStateCodec(gym_env, cache_rng=True)
>>> codec.dtype == classic_state_dtype(4, "CartPole-v1")
True
>>> fields = codec.read()
>>> record = np.ndarray((), codec.dtype, codec.pack(fields))
>>> int(record["steps_beyond_terminated"])  # None in the env: the episode goes on
-1
>>> codec.unpack(record.tobytes())[1] is None
True
>>> columns = ([], [], [], [], [])
>>> codec.read_into(columns)
>>> codec.read_into(columns)
>>> bool(codec.records(columns)[1] == record)
True
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence
from operator import attrgetter
from typing import Any

import numpy as np

from plangym.columns import intern_dtype
from plangym.rng import N_WORDS, GeneratorWords
from plangym.utils import find_time_limit

# How the physics vector is stored by the gymnasium env, so it is restored the same way.
_FLOAT64_ARRAY, _FLOAT32_ARRAY, _TUPLE = 0, 1, 2
_NONE = -1
# The fields after the physics vector, with the generator's words, as the dtype lays them out.
_TAIL_AND_RNG = struct.Struct(f"<Bqq?d{8 * N_WORDS}s")
_F64 = np.dtype(np.float64)
_dtype = attrgetter("dtype")
# Up to this many states, a batch unpacks and packs each one; beyond, it reads and writes
# whole columns.
FEW_STATES = 32


def classic_state_dtype(n_physics: int, task: str | None = None) -> np.dtype:
    """Record type of the states of a classic control env with ``n_physics`` variables.

    ``task`` (the env's id) names a last field of no bytes, ``"env=<task>"``: the record
    types of two tasks differ, so a state of one is refused by the other (CartPole's and
    Acrobot's both hold four numbers) at no cost in size.

    >>> classic_state_dtype(4, "CartPole-v1") == classic_state_dtype(4, "Acrobot-v1")
    False
    >>> classic_state_dtype(4, "CartPole-v1").itemsize == classic_state_dtype(4).itemsize
    True
    """
    fields = [
        ("physics", "<f8", (n_physics,)),
        ("physics_kind", "u1"),
        ("steps_beyond_terminated", "<i8"),
        ("elapsed_steps", "<i8"),
        ("has_last_u", "?"),
        ("last_u", "<f8"),
        ("rng", "<u8", (N_WORDS,)),
    ]
    if task is not None:
        # A buffer's format string (bytes(state), memoryview) cannot hold ':' in a name.
        fields.append(("env=" + task.replace(":", "|"), "u1", (0,)))
    return intern_dtype(np.dtype(fields))


class ClassicStateCodec:
    """Moves the states of one classic control env between the env, fields and records.

    Args:
        gym_env: The (wrapped) gymnasium env whose states are moved.
        cache_rng: Whether the generator is only drawn from in reset. The built-in dynamics
            draw from ``np_random`` only there, so between resets its words need neither
            reading nor writing (:meth:`forget_rng` marks a reset). Wrappers may draw in
            step: then the generator is read and written with every state. So does Acrobot
            while its ``torque_noise_max`` is set, whenever it was set.
    """

    __slots__ = (
        "_noisy",
        "_noisy_words",
        "_tail",
        "dtype",
        "has_last_u",
        "has_steps_beyond",
        "n_physics",
        "rng_words",
        "time_limit",
        "unwrapped",
    )

    def __init__(self, gym_env: Any, cache_rng: bool):
        unwrapped = gym_env.unwrapped
        self.unwrapped = unwrapped
        self.time_limit = find_time_limit(gym_env)
        self.n_physics = len(unwrapped.state)
        self.has_steps_beyond = hasattr(unwrapped, "steps_beyond_terminated")
        self.has_last_u = hasattr(unwrapped, "last_u")
        spec = getattr(unwrapped, "spec", None)
        task = spec.id if spec is not None else type(unwrapped).__qualname__
        self.dtype = classic_state_dtype(self.n_physics, task)
        fields = self.dtype.fields
        assert fields is not None, "a record dtype has fields"
        self._tail = fields["physics_kind"][1]  # where the fields after physics start
        self.rng_words = GeneratorWords(cache=cache_rng)
        # Acrobot draws random torques in step while torque_noise_max is set (an attribute
        # users may set at any time).
        self._noisy = unwrapped if hasattr(unwrapped, "torque_noise_max") else None
        self._noisy_words = GeneratorWords(cache=False)

    def _words(self) -> GeneratorWords:
        """Return the generator's words: read and written every time while steps draw."""
        noisy = self._noisy
        if noisy is not None and noisy.torque_noise_max:
            self.rng_words.forget()  # read afresh once the noise is off again
            return self._noisy_words
        return self.rng_words

    # The env <-> fields ---------------------------------------------------------------------
    def read(self) -> tuple:
        """Return the fields of the state the env is in."""
        unwrapped, time_limit = self.unwrapped, self.time_limit
        return (
            unwrapped.state,
            unwrapped.steps_beyond_terminated if self.has_steps_beyond else None,
            None if time_limit is None else time_limit._elapsed_steps,
            unwrapped.last_u if self.has_last_u else None,
            self._words().read(unwrapped.np_random),
        )

    def read_into(self, columns: tuple[list, list, list, list, list]) -> None:
        """Append the fields of the state the env is in to ``columns``, one list per field.

        :meth:`read` for a batch (see :meth:`records`): a field this env does not have is
        not appended, and no tuple is left behind per state.
        """
        physics, steps_beyond, elapsed, last_u, rng = columns
        unwrapped, time_limit = self.unwrapped, self.time_limit
        physics.append(unwrapped.state)
        if self.has_steps_beyond:
            steps_beyond.append(unwrapped.steps_beyond_terminated)
        if time_limit is not None:
            elapsed.append(time_limit._elapsed_steps)
        if self.has_last_u:
            last_u.append(unwrapped.last_u)
        rng.append(self._words().read(unwrapped.np_random))

    def write(self, fields: tuple) -> None:
        """Put the env in the state of ``fields`` (from read, unpack or rows)."""
        physics, steps_beyond, elapsed, last_u, rng = fields
        unwrapped, time_limit = self.unwrapped, self.time_limit
        self._words().write(unwrapped.np_random, rng)  # first: corrupt words change nothing
        unwrapped.state = physics
        if self.has_steps_beyond:
            unwrapped.steps_beyond_terminated = steps_beyond
        if time_limit is not None:
            time_limit._elapsed_steps = elapsed
        if self.has_last_u:
            unwrapped.last_u = last_u

    def write_physics(self, physics: np.ndarray) -> None:
        """Set only the physics (a bare vector: plangym 0.1's state format)."""
        self.unwrapped.state = np.array(physics, dtype=np.float64)

    def forget_rng(self) -> None:
        """Note that the generator was drawn from (a reset): read it again next time."""
        self.rng_words.forget()

    # Fields <-> records ---------------------------------------------------------------------
    def pack(self, fields: tuple) -> bytes:
        """Return the bytes of the record of one state's fields."""
        physics, steps_beyond, elapsed, last_u, rng = fields
        if type(physics) is np.ndarray and physics.dtype is _F64:  # the common case, quickly
            physics_bytes, kind = physics.tobytes(), _FLOAT64_ARRAY
        elif isinstance(physics, np.ndarray):
            if physics.dtype == np.float64:
                physics_bytes, kind = physics.tobytes(), _FLOAT64_ARRAY
            else:
                physics_bytes, kind = physics.astype(np.float64).tobytes(), _FLOAT32_ARRAY
        else:
            physics_bytes, kind = np.array(physics, dtype=np.float64).tobytes(), _TUPLE
        tail = _TAIL_AND_RNG.pack(
            kind,
            _NONE if steps_beyond is None else steps_beyond,
            _NONE if elapsed is None else elapsed,
            last_u is not None,
            0.0 if last_u is None else last_u,
            rng,
        )
        return physics_bytes + tail

    def unpack(self, raw: bytes) -> tuple:
        """Return the fields of the record whose bytes are ``raw``."""
        physics = np.frombuffer(raw, dtype=np.float64, count=self.n_physics).copy()
        return _fields(physics, raw, self._tail)

    def rows(self, records: np.ndarray) -> Iterable[tuple]:
        """Return the fields of each record of a 1-D record array, in order."""
        physics = records["physics"].copy()  # writable rows, as unpack gives the env
        if len(records) <= FEW_STATES:  # unpacking each costs less than a column
            blob, size = records.tobytes(), records.dtype.itemsize
            starts = range(self._tail, len(blob), size)
            return [_fields(row, blob, start) for row, start in zip(physics, starts, strict=True)]
        kinds = records["physics_kind"]
        if (kinds == _FLOAT64_ARRAY).all():
            physics_in = list(physics)
        else:
            physics_in = [
                _physics_value(row, kind) for row, kind in zip(physics, kinds.tolist(), strict=True)
            ]
        absent = [None] * len(records)  # for a field this env does not have: write skips it
        steps_beyond = elapsed = last_u = absent
        if self.has_steps_beyond:
            steps_beyond = [
                None if value == _NONE else value
                for value in records["steps_beyond_terminated"].tolist()
            ]
        if self.time_limit is not None:
            elapsed = np.maximum(records["elapsed_steps"], 0).tolist()
        if self.has_last_u:
            last_u = [
                value if has else None
                for value, has in zip(
                    records["last_u"].tolist(), records["has_last_u"].tolist(), strict=True
                )
            ]
        rng = np.ascontiguousarray(records["rng"]).view(f"V{8 * N_WORDS}").ravel().tolist()
        return zip(physics_in, steps_beyond, elapsed, last_u, rng, strict=True)

    def records(self, columns: tuple[list, list, list, list, list]) -> np.ndarray:
        """Return the record array of the states whose fields :meth:`read_into` appended."""
        physics, steps_beyond, elapsed, last_u, rng = columns
        n = len(physics)
        if n <= FEW_STATES:  # packing each costs less than a dozen column writes
            absent = [None] * n
            rows = zip(
                physics,
                steps_beyond if self.has_steps_beyond else absent,
                elapsed if self.time_limit is not None else absent,
                last_u if self.has_last_u else absent,
                rng,
                strict=True,
            )
            return np.frombuffer(b"".join([self.pack(fields) for fields in rows]), self.dtype)
        records = np.zeros(n, self.dtype)
        records["physics"] = np.asarray(physics, dtype=np.float64)
        records["physics_kind"] = _physics_kinds(physics)
        records["steps_beyond_terminated"] = _NONE
        records["elapsed_steps"] = _NONE
        if self.has_steps_beyond:
            records["steps_beyond_terminated"] = [_NONE if v is None else v for v in steps_beyond]
        if self.time_limit is not None:
            records["elapsed_steps"] = [_NONE if v is None else v for v in elapsed]
        if self.has_last_u:
            records["has_last_u"] = [u is not None for u in last_u]
            records["last_u"] = [0.0 if u is None else u for u in last_u]
        records["rng"] = np.frombuffer(b"".join(rng), dtype=np.uint64).reshape(n, -1)
        return records


def _fields(physics: np.ndarray, blob: bytes, start: int) -> tuple:
    """Return the fields of a record: its ``physics`` row, the rest read from ``start`` on."""
    kind, steps_beyond, elapsed, has_last_u, last_u, rng = _TAIL_AND_RNG.unpack_from(blob, start)
    return (
        physics if kind == _FLOAT64_ARRAY else _physics_value(physics, kind),
        None if steps_beyond == _NONE else steps_beyond,
        max(elapsed, 0),
        last_u if has_last_u else None,
        rng,
    )


def _physics_value(values: np.ndarray, kind: int) -> Any:
    """Return the physics as the env held it, from its float64 values and kind."""
    if kind == _FLOAT32_ARRAY:
        return values.astype(np.float32)
    if kind == _TUPLE:
        return tuple(np.float64(value) for value in values)
    return values


def _physics_kinds(physics: Sequence[Any]) -> int | list[int]:
    """Return the kind of each physics value, or the one kind they all have."""
    if set(map(type, physics)) == {np.ndarray} and set(map(_dtype, physics)) == {_F64}:
        return _FLOAT64_ARRAY  # the common case, told without a Python call per value
    return [_physics_kind(value) for value in physics]


def _physics_kind(physics: Any) -> int:
    if isinstance(physics, np.ndarray):
        return _FLOAT64_ARRAY if physics.dtype == np.float64 else _FLOAT32_ARRAY
    return _TUPLE
