"""gymnasium's classic control tasks with exact states.

A state is a 0-d NumPy record holding everything that decides the future: the physics vector
(with its dtype: MountainCarContinuous steps in float32), CartPole's
``steps_beyond_terminated``, the time-limit counter when a limit is kept, Pendulum's
``last_u`` (drawn by the renderer) and the ``np_random`` generator that the next reset draws
from. :mod:`plangym.control.classic_control.state` defines that record and is the only code
that moves states into and out of the gymnasium env.

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

from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any

import numpy as np

from plangym.columns import BatchColumns, is_record_block, states_to_records
from plangym.control.classic_control.kernel_batch import kernel_actions, step_records
from plangym.control.classic_control.kernels import FLOAT64_ARRAY, kernel_for
from plangym.control.classic_control.state import ClassicStateCodec, classic_state_dtype
from plangym.control.shared.bulk_loop import fill_rows, runs_in_bulk, step_in_bulk
from plangym.core import PlangymEnv
from plangym.core.batch import Batch
from plangym.validation import describe
from plangym.validation.values import with_article

__all__ = ["ClassicControl", "classic_state_dtype"]


class _CheckedActionSpace:
    """Stands in for an env's action space while checked actions are stepped.

    CartPole and MountainCar assert ``action_space.contains(action)`` on every step, and
    for a ``Discrete`` space that check costs a good part of the physics
    (``benchmarks/design_figures.py``). The bulk loop and ``step`` only step actions
    that were checked against the real space before, so the stand-in answers
    ``contains`` at once and forwards every other attribute to the real space.
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

    FAST_PATHS = True
    TIME_LIMIT_IN_STATE = True  # states carry the TimeLimit's elapsed steps
    TAKES_RESET_OPTIONS = True  # the bounds of the first state: low/high, x_init/y_init
    # Whether a checked step skips gymnasium's action assertion (_CheckedActionSpace):
    # chosen at setup, when no wrapper or override of this class's may read the space.
    _skips_action_assertion = False

    def setup(self) -> None:
        """Build the gymnasium env and the codec of its states."""
        super().setup()
        self._skips_action_assertion = self.has_fast_paths() and not self._wrappers
        # Without wrappers, only reset draws from np_random: the codec may cache its words.
        self._codec = ClassicStateCodec(self._gym_env, cache_rng=not self._wrappers)
        # Whole batches in NumPy passes, when the env is one a kernel reproduces exactly.
        self._kernel = kernel_for(self.gym_env.unwrapped) if runs_in_bulk(self) else None
        bulk = "bulk" if runs_in_bulk(self) else "generic"
        self._batch_path = "kernel" if self._kernel is not None else bulk

    def _step_checked(self, action: Any, state: Any, dt: int, want_state: bool) -> tuple:
        """Step one checked element, without gymnasium's second check of the action.

        ``step`` checked it already; CartPole's own assertion would cost a sixth of a step.
        """
        unwrapped = self._state_codec.unwrapped  # builds the env when setup was delayed
        if not self._skips_action_assertion:
            return super()._step_checked(action, state, dt, want_state)
        space = unwrapped.action_space
        unwrapped.action_space = _CheckedActionSpace(space)
        try:
            return super()._step_checked(action, state, dt, want_state)
        finally:
            unwrapped.action_space = space

    def apply_action(self, action: Any) -> tuple:
        """Step the gymnasium env once, quietly when it steps on past the episode's end.

        CartPole warns on the first step after ``terminated=True``; planners step such
        states on purpose (a leaf of the tree) and plangym's states make the step exact.
        Silencing warnings is not thread-safe (it would silence every thread), so the step
        runs with CartPole's counter past the warning, then the counter is set to the value
        gymnasium gives it: 1 if the step ends terminated, else 0 (untouched). The results
        are gymnasium's own. The counter, not the step's ``terminated``, says which: a
        wrapper may rewrite the flag.
        """
        gym_env = self._gym_env  # read directly: the bulk loop calls this once per step
        if gym_env is None:
            gym_env = self.gym_env  # builds the env when setup was delayed
        codec = self._codec
        unwrapped = codec.unwrapped
        if codec.has_steps_beyond and unwrapped.steps_beyond_terminated == 0:
            unwrapped.steps_beyond_terminated = 1
            try:
                return gym_env.step(action)
            finally:  # counted on from 1 where gymnasium counts from 0
                unwrapped.steps_beyond_terminated = max(unwrapped.steps_beyond_terminated - 1, 0)
        return gym_env.step(action)

    @property
    def _state_codec(self) -> ClassicStateCodec:
        """The codec of this env's states, built with the env when setup was delayed."""
        if self._gym_env is None:  # read several times a step: the attribute, not gym_env
            self.gym_env  # noqa: B018 - builds the env when setup was delayed
        return self._codec

    @property
    def state_dtype(self) -> np.dtype:
        """NumPy record type of this env's states."""
        return self._state_codec.dtype

    def generator_moves(self) -> None:
        """Forget the generator words the state codec caches: a reset draws from it."""
        self._state_codec.forget_rng()

    def generator_shared(self) -> None:
        """Read and write the generator's words with every state (others draw from it)."""
        self._state_codec.rng_words.cache = False
        self._state_codec.forget_rng()

    def get_state(self) -> np.ndarray:
        """Return the exact state of the env as a read-only 0-d record array."""
        codec = self._state_codec
        # A 0-d array over its own bytes object: read-only, and it keeps nothing else alive.
        return np.ndarray((), codec.dtype, codec.pack(codec.read()))

    @contextmanager
    def state_kept(self) -> Iterator[None]:
        """:meth:`PlanEnv.state_kept`, through the codec's fields (no record packed)."""
        codec = self._state_codec
        physics, *rest = codec.read()
        fields = (physics.copy() if isinstance(physics, np.ndarray) else physics, *rest)
        try:
            yield
        finally:
            codec.write(fields)

    def set_state(self, state: np.ndarray) -> None:
        """Restore a state from :meth:`get_state` (or a bare physics vector)."""
        self.check_state(state)
        codec = self._state_codec
        if state.dtype.names is None:
            codec.write_physics(state)
        else:
            codec.write(codec.unpack(state.tobytes()))

    def run_batch_fast(self, batch: Batch) -> BatchColumns:
        """Step a checked batch; with plain dynamics, in one loop over the gymnasium env.

        The bulk loop performs exactly the operations of the generic path (restore, step
        the gymnasium env ``dt * frameskip`` times, record the state, autoreset) and gives
        bit-identical results, without the generic path's chain of calls per element: the
        state codec that :meth:`get_state` and :meth:`set_state` use reads the input states
        as columns of one record array, moves each into and out of the env, and writes the
        new states as one record array.
        """
        states = batch.states
        records = None
        if states is not None:
            records = states if is_record_block(states) else None
            if records is None:
                records = states_to_records(states, self._codec.dtype)
        if records is None or records.dtype != self._codec.dtype:
            return self.run_batch_generic(batch)
        with _checked_actions(self.gym_env.unwrapped):
            return self._run_records(batch, records)

    def _run_records(self, batch: Batch, records: np.ndarray) -> BatchColumns:
        actions, _, dts, want_state, observs_out = batch
        if not len(records):
            return BatchColumns([] if want_state else None, [], [], [], [], [])
        kernel = self._kernel
        # Below the kernel's min_batch, a few states cost less one by one than NumPy passes.
        # A setting changed since setup may rule the kernel out (Acrobot's torque noise).
        if (
            kernel is not None
            and len(records) >= kernel.min_batch
            and kernel.accepts(self._codec.unwrapped)
        ):
            stacked = kernel_actions(actions)
            if stacked is not None and kernel.steps_kinds(records["physics_kind"]):
                return self._run_kernel(batch._replace(actions=stacked), records)
        codec = self._codec
        new_columns: tuple[list, list, list, list, list] = ([], [], [], [], [])  # by field
        observs, rewards, terminals, truncateds, infos = step_in_bulk(
            codec.rows(records),
            actions,
            dts,
            restore=codec.write,  # set_state's and get_state's moves, without packing
            # CartPole's step past the end would warn: apply_action silences it.
            step=self.apply_action if codec.has_steps_beyond else self.gym_env.step,
            record=partial(codec.read_into, new_columns) if want_state else None,
            repeats=self.frameskip,
            autoreset=partial(self.reset, return_state=False) if self.autoreset else None,
        )
        observs_column = fill_rows(observs_out, observs)
        new_states = codec.records(new_columns) if want_state else None
        return BatchColumns(new_states, observs_column, rewards, terminals, truncateds, infos)

    def _run_kernel(self, batch: Batch, records: np.ndarray) -> BatchColumns:
        """Step the batch with the env's kernel; leave the env as the bulk loop leaves it."""
        codec = self._codec
        time_limit = codec.time_limit
        columns = step_records(
            self._kernel,
            records,
            batch.actions,
            batch.dts,
            self.frameskip,
            None if time_limit is None else time_limit._max_episode_steps,
            True,
            batch.observs_out,
        )
        # The bulk loop ends in the last element's new state, reset if its episode ended.
        new_states = columns.states
        assert new_states is not None, "step_records was asked for the states"
        codec.write(codec.unpack(new_states[-1].tobytes()))
        if self.autoreset and (columns.terminals[-1] or columns.truncateds[-1]):
            self.reset(return_state=False)
        if not batch.want_state:
            columns.states = None
        return columns

    def check_record_block(self, records: np.ndarray) -> None:
        """Check a record array of states: it must hold this env's records."""
        expected = self.state_dtype
        if not (records.dtype is expected or records.dtype == expected):
            raise TypeError(
                f"states: expected a record array of {self.name} states (dtype "
                f"{expected}), received one of dtype {records.dtype}"
            )

    def checked_states(self, states: list) -> list | np.ndarray:
        """Check a batch's states; they come back as one record array of this env's.

        The kernels and the bulk loop read records, so a list is stacked once, here. A bare
        physics vector (plangym 0.1's format) becomes this env's current state with those
        physics: every element of the batch takes the rest of its state from where the env
        is when the batch starts, whichever process steps it (set_state's "the rest as it
        is", without elements before it in the batch moving that rest on).
        """
        records = states_to_records(states, self.state_dtype)
        if records is not None:
            return records
        self.check_states(states)  # bare physics vectors, or a bad state to name
        records = np.repeat(self.get_state().reshape(1), len(states))
        for row, state in enumerate(states):
            if state.dtype.names is None:
                records[row]["physics"], records[row]["physics_kind"] = state, FLOAT64_ARRAY
            else:
                records[row] = state
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
        if isinstance(state, np.void) and state.dtype == expected:
            return  # an element of a record array of states (a vector env's get_states())
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
            f"{name}: expected {with_article(self.name)} state (a 0-d record array from "
            f"get_state() or a record of a record array of states, or a float array of shape "
            f"{expected['physics'].shape}), received {describe(state)}"
        )
