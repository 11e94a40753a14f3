"""gymnasium's classic control tasks with exact states.

A state is a 0-d NumPy record holding everything that decides the future: the physics
vector (with its dtype: MountainCarContinuous steps in float32), CartPole's
``steps_beyond_terminated``, the time-limit counter when a limit is kept, Pendulum's
``last_u`` (drawn by the renderer) and the ``np_random`` generator that the next reset
draws from.

>>> env = ClassicControl("CartPole-v1")
>>> state, obs, info = env.reset()
>>> state["physics"].shape
(4,)
>>> copy = state.copy()
>>> _ = env.step(1)
>>> env.set_state(copy)
>>> bool(env.get_state() == copy)
True
"""

from __future__ import annotations

import struct
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from plangym.columns import BatchColumns, intern_dtype, is_record_block, states_to_records
from plangym.core import PlanEnv, PlangymEnv, inherits_unchanged, repeat_action
from plangym.rng import N_WORDS, generator_words, restore_generator
from plangym.utils import find_time_limit
from plangym.validation import describe

# How the physics vector is stored by the gymnasium env, so it is restored the same way.
_FLOAT64_ARRAY, _FLOAT32_ARRAY, _TUPLE = 0, 1, 2
_NONE = -1
# The fields after the physics vector, packed as classic_state_dtype lays them out.
_TAIL = struct.Struct("<Bqq?d")
_RNG_BYTES = 8 * N_WORDS
_TAIL_AND_RNG = struct.Struct(f"{_TAIL.format}{_RNG_BYTES}s")
_F64 = np.dtype(np.float64)
# Up to this many new states, a batch packs each one; beyond, it writes whole columns.
_FEW_STATES = 32


def classic_state_dtype(n_physics: int) -> np.dtype:
    """Record type of the states of a classic control env with ``n_physics`` variables."""
    dtype = np.dtype(
        [
            ("physics", "<f8", (n_physics,)),
            ("physics_kind", "u1"),
            ("steps_beyond_terminated", "<i8"),
            ("elapsed_steps", "<i8"),
            ("has_last_u", "?"),
            ("last_u", "<f8"),
            ("rng", "<u8", (N_WORDS,)),
        ]
    )
    return intern_dtype(dtype)


def _physics_bytes(physics: Any) -> tuple[bytes, int]:
    if isinstance(physics, np.ndarray):
        if physics.dtype == np.float64:
            return physics.tobytes(), _FLOAT64_ARRAY
        return physics.astype(np.float64).tobytes(), _FLOAT32_ARRAY
    return np.array(physics, dtype=np.float64).tobytes(), _TUPLE


def _pack_state(
    physics: Any, steps_beyond: int | None, elapsed: int | None, last_u: Any, rng: bytes
) -> bytes:
    """Return the bytes of one state record (see :func:`classic_state_dtype`)."""
    physics_bytes, kind = _physics_bytes(physics)
    tail = _TAIL.pack(
        kind,
        _NONE if steps_beyond is None else steps_beyond,
        _NONE if elapsed is None else elapsed,
        last_u is not None,
        0.0 if last_u is None else last_u,
    )
    return physics_bytes + tail + rng


def _physics_kind(physics: Any) -> int:
    if type(physics) is np.ndarray and physics.dtype is _F64:
        return _FLOAT64_ARRAY
    if isinstance(physics, np.ndarray):
        return _FLOAT64_ARRAY if physics.dtype == np.float64 else _FLOAT32_ARRAY
    return _TUPLE


def _record_columns(records: np.ndarray) -> tuple[list, list, list, list, list]:
    """Read every field of a record array as the values :meth:`ClassicControl.set_state` sets.

    Returns the physics objects, steps_beyond_terminated, time-limit counters, last_u and
    generator bytes, one list each.
    """
    physics = records["physics"].copy()  # writable rows, as set_state gives the env
    if len(records) <= _FEW_STATES:
        return _unpack_rows(records, physics)
    kinds = records["physics_kind"]
    if (kinds == _FLOAT64_ARRAY).all():
        physics_in = list(physics)
    else:
        physics_in = [
            _physics_value(row, kind) for row, kind in zip(physics, kinds.tolist(), strict=True)
        ]
    steps_beyond = [
        None if value == _NONE else value for value in records["steps_beyond_terminated"].tolist()
    ]
    elapsed = np.maximum(records["elapsed_steps"], 0).tolist()
    last_u = [
        value if has else None
        for value, has in zip(
            records["last_u"].tolist(), records["has_last_u"].tolist(), strict=True
        )
    ]
    rng = np.ascontiguousarray(records["rng"]).view(f"V{_RNG_BYTES}").ravel().tolist()
    return physics_in, steps_beyond, elapsed, last_u, rng


def _unpack_rows(records: np.ndarray, physics: np.ndarray) -> tuple[list, list, list, list, list]:
    """:func:`_record_columns` for a few records: unpacking each costs less than a column."""
    blob, size = records.tobytes(), records.dtype.itemsize
    tail = records.dtype.fields["physics_kind"][1]  # the fields after physics, with the rng
    physics_in, steps_beyond, elapsed, last_u, rng = [], [], [], [], []
    for row, start in zip(physics, range(tail, len(blob), size), strict=True):
        kind, steps, count, has_last_u, u, words = _TAIL_AND_RNG.unpack_from(blob, start)
        physics_in.append(row if kind == _FLOAT64_ARRAY else _physics_value(row, kind))
        steps_beyond.append(None if steps == _NONE else steps)
        elapsed.append(max(count, 0))
        last_u.append(u if has_last_u else None)
        rng.append(words)
    return physics_in, steps_beyond, elapsed, last_u, rng


def _fill_rows(out: np.ndarray, rows: list) -> bool:
    """Write ``rows`` into ``out`` when each is an array of exactly its row's shape and dtype."""
    shape, dtype = out.shape[1:], out.dtype
    if len(rows) != len(out) or not all(
        type(row) is np.ndarray
        and (row.dtype is dtype or row.dtype == dtype)
        and row.shape == shape
        for row in rows
    ):
        return False
    if rows:
        out[:] = rows
    return True


class _CheckedActionSpace:
    """Stands in for an env's action space while a batch of checked actions is stepped.

    CartPole and MountainCar assert ``action_space.contains(action)`` on every step, and
    for a ``Discrete`` space that check costs about as much as the physics. The bulk loop
    only steps actions that were checked against the real space before the batch was
    dispatched, so the stand-in answers ``contains`` at once and forwards every other
    attribute to the real space.
    """

    __slots__ = ("space",)

    def __init__(self, space: Any):
        self.space = space

    def contains(self, action: Any) -> bool:
        return True

    def __getattr__(self, name: str) -> Any:
        return getattr(self.space, name)


@contextmanager
def _checked_actions(unwrapped: Any) -> Iterator[None]:
    """Let ``unwrapped`` skip its per-step action assertion; restore its space after."""
    space = unwrapped.action_space
    unwrapped.action_space = _CheckedActionSpace(space)
    try:
        yield
    finally:
        unwrapped.action_space = space


def _physics_value(values: np.ndarray, kind: int) -> Any:
    if kind == _FLOAT32_ARRAY:
        return values.astype(np.float32)
    if kind == _TUPLE:
        return tuple(np.float64(value) for value in values)
    return values


class ClassicControl(PlangymEnv):
    """CartPole, Pendulum, MountainCar, MountainCarContinuous and Acrobot, exactly restorable.

    A bare physics vector of the right length (the state format of plangym 0.1) is accepted
    by :meth:`set_state` too; it sets the physics and leaves the rest as it is.

    >>> env = ClassicControl("Pendulum-v1")
    >>> env.action_space
    Box(-2.0, 2.0, (1,), float32)
    >>> state, *_ = env.reset()
    >>> new_state, obs, reward, terminal, truncated, info = env.step(
    ...     np.array([0.5], dtype=np.float32), state=state, dt=3)
    >>> info["n_step"]
    3
    """

    def setup(self) -> None:
        """Build the gymnasium env and derive what its states look like."""
        super().setup()
        unwrapped = self._gym_env.unwrapped
        self._n_physics = len(unwrapped.state)
        self._state_dtype = classic_state_dtype(self._n_physics)
        self._time_limit = find_time_limit(self._gym_env)
        self._has_steps_beyond = hasattr(unwrapped, "steps_beyond_terminated")
        self._unwrapped = unwrapped
        self._has_last_u = hasattr(unwrapped, "last_u")
        # The built-in dynamics draw from np_random only in reset, so between resets the
        # generator words need neither reading nor writing. Wrappers may draw in step: then
        # the generator is read and written on every get_state / set_state.
        self._cache_rng = not self._wrappers
        self._rng_bytes: bytes | None = None
        self._batch_in_bulk = self._plain_dynamics()

    def _plain_dynamics(self) -> bool:
        """Whether a batch may skip the per-step hooks: nothing would run in them.

        True when there are no user wrappers, no pictures to add, every ``process_*`` hook
        is an identity, and no stepping or state method is overridden by a subclass.
        """
        own = {
            "apply_action": ClassicControl,
            "apply_reset": ClassicControl,
            "process_apply_action": PlanEnv,
            "step_with_dt": PlanEnv,
            "_step_checked": PlanEnv,
            "get_state": ClassicControl,
            "set_state": ClassicControl,
            "reset": PlanEnv,
        }
        unchanged = inherits_unchanged(type(self), own)
        return unchanged and not self._wrappers and not self.return_image and self._identity_hooks

    def apply_action(self, action: Any) -> tuple:
        """Step the gymnasium env once, quietly when it steps on past the episode's end.

        CartPole warns on the first step after ``terminated=True``; planners step such
        states on purpose (a leaf of the tree) and plangym's states make the step exact,
        so the warning is silenced for that step only. The results are gymnasium's own.
        """
        gym_env = self.gym_env  # builds the env when setup was delayed
        if self._has_steps_beyond and self._unwrapped.steps_beyond_terminated == 0:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return gym_env.step(action)
        return gym_env.step(action)

    @property
    def state_dtype(self) -> np.dtype:
        """NumPy record type of this env's states."""
        self.gym_env  # noqa: B018 - builds the env when setup was delayed
        return self._state_dtype

    def apply_reset(self, **kwargs: Any) -> tuple:
        """Reset the gymnasium env, which draws from its generator."""
        self._rng_bytes = None
        return super().apply_reset(**kwargs)

    def seed(self, seed: int | None = None) -> None:
        """Seed the env's generator and action space, and start a new episode."""
        self._rng_bytes = None
        super().seed(seed)

    def get_state(self) -> np.ndarray:
        """Return the exact state of the env as a read-only 0-d record array."""
        unwrapped = self.gym_env.unwrapped
        steps_beyond = unwrapped.steps_beyond_terminated if self._has_steps_beyond else None
        elapsed = None if self._time_limit is None else self._time_limit._elapsed_steps
        last_u = unwrapped.last_u if self._has_last_u else None
        rng = self._rng_bytes
        if rng is None:
            rng = generator_words(unwrapped.np_random).tobytes()
            if self._cache_rng:
                self._rng_bytes = rng
        raw = _pack_state(unwrapped.state, steps_beyond, elapsed, last_u, rng)
        # A 0-d array over its own bytes object: read-only, and it keeps nothing else alive.
        return np.ndarray((), self._state_dtype, raw)

    def set_state(self, state: np.ndarray) -> None:
        """Restore a state from :meth:`get_state` (or a bare physics vector)."""
        self.check_state(state)
        unwrapped = self.gym_env.unwrapped
        if state.dtype.names is None:
            unwrapped.state = np.array(state, dtype=np.float64)
            return
        raw = state.tobytes()
        split = 8 * self._n_physics
        kind, steps_beyond, elapsed, has_last_u, last_u = _TAIL.unpack_from(raw, split)
        physics = np.frombuffer(raw, dtype=np.float64, count=self._n_physics).copy()
        unwrapped.state = _physics_value(physics, kind)
        if self._has_steps_beyond:
            unwrapped.steps_beyond_terminated = None if steps_beyond == _NONE else steps_beyond
        if self._time_limit is not None:
            self._time_limit._elapsed_steps = max(elapsed, 0)
        if self._has_last_u:
            unwrapped.last_u = last_u if has_last_u else None
        rng = raw[-_RNG_BYTES:]
        if rng != self._rng_bytes:
            restore_generator(unwrapped.np_random, np.frombuffer(rng, dtype=np.uint64))
            self._rng_bytes = rng if self._cache_rng else None

    def run_batch_columns(
        self,
        actions: Any,
        states: list | np.ndarray | None,
        dts: list[int],
        want_state: bool,
        observs_out: np.ndarray | None = None,
    ) -> BatchColumns:
        """Step a checked batch; with plain dynamics, in one loop over the gymnasium env.

        The bulk loop performs exactly the operations of the generic path (restore, step
        the gymnasium env ``dt * frameskip`` times, record the state, autoreset) and gives
        bit-identical results, without per-element method dispatch: input states are read
        as columns of one record array and new states are written as one.
        """
        records = None
        if self._batch_in_bulk and states is not None:
            records = states if is_record_block(states) else None
            if records is None:
                records = states_to_records(states, self._state_dtype)
        if records is None or records.dtype != self._state_dtype:
            return super().run_batch_columns(actions, states, dts, want_state, observs_out)
        with _checked_actions(self._gym_env.unwrapped):
            return self._run_records(actions, records, dts, want_state, observs_out)

    def _run_records(
        self,
        actions: Any,
        records: np.ndarray,
        dts: list[int],
        want_state: bool,
        observs_out: np.ndarray | None,
    ) -> BatchColumns:
        if not len(records):
            return BatchColumns([] if want_state else None, [], [], [], [], [])
        unwrapped = self._gym_env.unwrapped
        # CartPole's step past the end would warn: apply_action silences it.
        step = self.apply_action if self._has_steps_beyond else self._gym_env.step
        time_limit = self._time_limit
        has_steps_beyond, has_last_u = self._has_steps_beyond, self._has_last_u
        autoreset = self.autoreset
        repeats = self.frameskip
        observs, rewards, terminals, truncateds, infos = [], [], [], [], []
        physics_out, steps_beyond_out, elapsed_out, last_u_out, rng_out = [], [], [], [], []
        rows = zip(actions, dts, *_record_columns(records), strict=True)
        for action, dt, physics, steps_beyond, elapsed, last_u, rng in rows:
            unwrapped.state = physics
            if has_steps_beyond:
                unwrapped.steps_beyond_terminated = steps_beyond
            if time_limit is not None:
                time_limit._elapsed_steps = elapsed
            if has_last_u:
                unwrapped.last_u = last_u
            if rng != self._rng_bytes:
                restore_generator(unwrapped.np_random, np.frombuffer(rng, dtype=np.uint64))
                self._rng_bytes = rng
            if dt * repeats == 1:  # repeat_action's work without the call: the same values
                obs, reward, terminal, truncated, info = step(action)
                reward = 0.0 + reward
                info = {**info, "n_step": 1, "dt": dt}
            else:
                obs, reward, terminal, truncated, info = repeat_action(step, action, dt * repeats)
                info["dt"] = dt
            observs.append(obs)
            rewards.append(reward)
            terminals.append(terminal)
            truncateds.append(truncated)
            infos.append(info)
            if want_state:
                physics_out.append(unwrapped.state)
                if has_steps_beyond:
                    steps_beyond_out.append(unwrapped.steps_beyond_terminated)
                if time_limit is not None:
                    elapsed_out.append(time_limit._elapsed_steps)
                if has_last_u:
                    last_u_out.append(unwrapped.last_u)
                if self._rng_bytes is None:
                    self._rng_bytes = generator_words(unwrapped.np_random).tobytes()
                rng_out.append(self._rng_bytes)
            if autoreset and (terminal or truncated):
                self.reset(return_state=False)
        new_states = None
        if want_state:
            new_states = self._records_from_columns(
                physics_out, steps_beyond_out, elapsed_out, last_u_out, rng_out
            )
        if observs_out is not None and _fill_rows(observs_out, observs):
            observs = observs_out
        return BatchColumns(new_states, observs, rewards, terminals, truncateds, infos)

    def _records_from_columns(
        self, physics: list, steps_beyond: list, elapsed: list, last_u: list, rng: list
    ) -> np.ndarray:
        """Build the record array of the states :meth:`get_state` would have returned."""
        n = len(physics)
        if n <= _FEW_STATES:  # packing each state costs less than a dozen column writes
            missing = [None] * n
            columns = zip(
                physics,
                steps_beyond or missing,
                elapsed or missing,
                last_u or missing,
                rng,
                strict=True,
            )
            return np.frombuffer(
                b"".join([_pack_state(*values) for values in columns]), self._state_dtype
            )
        records = np.zeros(n, self._state_dtype)
        records["physics"] = np.asarray(physics, dtype=np.float64)
        records["physics_kind"] = [_physics_kind(value) for value in physics]
        records["steps_beyond_terminated"] = _NONE
        records["elapsed_steps"] = _NONE
        if steps_beyond:
            records["steps_beyond_terminated"] = [_NONE if v is None else v for v in steps_beyond]
        if elapsed:
            records["elapsed_steps"] = [_NONE if v is None else v for v in elapsed]
        if last_u:
            records["has_last_u"] = [u is not None for u in last_u]
            records["last_u"] = [0.0 if u is None else u for u in last_u]
        records["rng"] = np.frombuffer(b"".join(rng), dtype=np.uint64).reshape(len(rng), -1)
        return records

    def check_states(self, states: list) -> None:
        """Check a batch of states: a glance when they are all this env's own records."""
        expected = self.state_dtype
        for state in states:
            if not (type(state) is np.ndarray and state.dtype is expected and not state.shape):
                super().check_states(states)  # the careful check, naming the bad element
                return

    def check_state(self, state: Any, name: str = "state") -> None:
        """Raise unless ``state`` is a state of this env (or its bare physics vector)."""
        expected = self.state_dtype
        if isinstance(state, np.ndarray):
            if state.shape == () and (state.dtype is expected or state.dtype == expected):
                return
            physics_shape = expected["physics"].shape
            if (
                state.dtype.names is None
                and state.dtype.kind == "f"
                and (state.shape == physics_shape)
            ):
                return
        raise TypeError(
            f"{name}: expected a {self.name} state (a 0-d record array from get_state(), or "
            f"a float array of shape {expected['physics'].shape}), received {describe(state)}"
        )
