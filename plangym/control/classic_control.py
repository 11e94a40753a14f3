"""gymnasium's classic control tasks with exact states.

A state is a 0-d NumPy record holding everything that decides the future: the physics
vector (with its dtype: MountainCarContinuous steps in float32), CartPole's
``steps_beyond_terminated``, the time-limit counter when a limit is kept, Pendulum's
``last_u`` (drawn by the renderer) and the ``np_random`` generator that the next reset
draws from. :mod:`plangym.control.classic_state` defines that record and is the only code
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

import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from plangym.columns import BatchColumns, is_record_block, states_to_records
from plangym.control.classic_state import ClassicStateCodec, classic_state_dtype
from plangym.core import PlanEnv, PlangymEnv, inherits_unchanged, repeat_action
from plangym.validation import describe

__all__ = ["ClassicControl", "classic_state_dtype"]


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
        """Build the gymnasium env and the codec of its states."""
        super().setup()
        # Without wrappers, only reset draws from np_random: the codec may cache its words.
        self._codec = ClassicStateCodec(self._gym_env, cache_rng=not self._wrappers)
        self._batch_in_bulk = self._plain_dynamics()

    def _plain_dynamics(self) -> bool:
        """Whether a batch may run in the bulk loop: it would skip nothing that does work.

        True when there are no user wrappers, no pictures to add, every ``process_*`` hook
        is an identity, and no method in :data:`_BULK_LOOP_REPLACES` is overridden.
        """
        unchanged = inherits_unchanged(type(self), _BULK_LOOP_REPLACES)
        return unchanged and not self._wrappers and not self.return_image and self._identity_hooks

    def apply_action(self, action: Any) -> tuple:
        """Step the gymnasium env once, quietly when it steps on past the episode's end.

        CartPole warns on the first step after ``terminated=True``; planners step such
        states on purpose (a leaf of the tree) and plangym's states make the step exact,
        so the warning is silenced for that step only. The results are gymnasium's own.
        """
        gym_env = self._gym_env  # read directly: the bulk loop calls this once per step
        if gym_env is None:
            gym_env = self.gym_env  # builds the env when setup was delayed
        codec = self._codec
        if codec.has_steps_beyond and codec.unwrapped.steps_beyond_terminated == 0:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return gym_env.step(action)
        return gym_env.step(action)

    @property
    def _state_codec(self) -> ClassicStateCodec:
        """The codec of this env's states, built with the env when setup was delayed."""
        self.gym_env  # noqa: B018 - builds the env when setup was delayed
        return self._codec

    @property
    def state_dtype(self) -> np.dtype:
        """NumPy record type of this env's states."""
        return self._state_codec.dtype

    def apply_reset(self, **kwargs: Any) -> tuple:
        """Reset the gymnasium env, which draws from its generator."""
        self._state_codec.forget_rng()
        return super().apply_reset(**kwargs)

    def seed(self, seed: int | None = None) -> None:
        """Seed the env's generator and action space, and start a new episode."""
        self._state_codec.forget_rng()
        super().seed(seed)

    def get_state(self) -> np.ndarray:
        """Return the exact state of the env as a read-only 0-d record array."""
        codec = self._state_codec
        # A 0-d array over its own bytes object: read-only, and it keeps nothing else alive.
        return np.ndarray((), codec.dtype, codec.pack(codec.read()))

    def set_state(self, state: np.ndarray) -> None:
        """Restore a state from :meth:`get_state` (or a bare physics vector)."""
        self.check_state(state)
        codec = self._state_codec
        if state.dtype.names is None:
            codec.write_physics(state)
        else:
            codec.write(codec.unpack(state.tobytes()))

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
        bit-identical results, without the generic path's chain of calls per element: the
        state codec that :meth:`get_state` and :meth:`set_state` use reads the input states
        as columns of one record array, moves each into and out of the env, and writes the
        new states as one record array.
        """
        records = None
        if self._batch_in_bulk and states is not None:
            records = states if is_record_block(states) else None
            if records is None:
                records = states_to_records(states, self._codec.dtype)
        if records is None or records.dtype != self._codec.dtype:
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
        codec = self._codec
        write, read_into = codec.write, codec.read_into  # set_state's and get_state's moves
        # CartPole's step past the end would warn: apply_action silences it.
        step = self.apply_action if codec.has_steps_beyond else self._gym_env.step
        autoreset = self.autoreset
        repeats = self.frameskip
        observs, rewards, terminals, truncateds, infos = [], [], [], [], []
        new_columns = ([], [], [], [], [])  # the new states, field by field
        for action, dt, fields in zip(actions, dts, codec.rows(records), strict=True):
            write(fields)
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
                read_into(new_columns)
            if autoreset and (terminal or truncated):
                self.reset(return_state=False)
        if observs_out is not None and _fill_rows(observs_out, observs):
            observs = observs_out
        new_states = codec.records(new_columns) if want_state else None
        return BatchColumns(new_states, observs, rewards, terminals, truncateds, infos)

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


# The methods a batch in the bulk loop does not call, or calls in a fixed way, with the class
# whose version the loop reproduces. A subclass that overrides any of them takes the generic
# path (PlanEnv.run_batch_columns), so its override runs.
_BULK_LOOP_REPLACES: dict[str, type] = {
    "_step_checked": PlanEnv,  # restore, step, process, record the state, autoreset
    "step_with_dt": PlanEnv,  # repeat the action dt * frameskip times
    "_underlying_step": PlanEnv,  # one step: apply_action, then process_apply_action
    "process_apply_action": PlanEnv,  # not called: an identity
    "process_step": PlanEnv,  # not called: the process_* hooks are identities (checked apart)
    "apply_action": ClassicControl,  # CartPole's is called; the others step gymnasium's env
    "get_state": ClassicControl,  # both done by the codec, without packing each state
    "set_state": ClassicControl,
    # Called by the loop on autoreset, as by the generic path; listed so that a subclass
    # that changes how episodes start takes the generic path, as it always has.
    "reset": PlanEnv,
    "apply_reset": ClassicControl,
}
