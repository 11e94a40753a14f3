"""What planners need of a vector env: its sub-envs' exact states, and ``step_batch``.

States are checked first, as ``ParallelEnv`` checks them: a bad state changes no sub-env,
and its error has ``ParallelEnv``'s words. They are checked in this process by the env
built to read the spaces, kept for it (sub-env 0 itself in the sync mode), unless it is
``SINGLETON`` (one emulator per process) or renders to a window: sub-env 0's worker checks
them then, so the caller holds no emulator and shows no extra window.

>>> import plangym
>>> envs = plangym.make_vec("CartPole-v1", num_envs=2, vectorization_mode="async")
>>> _ = envs.reset(seed=0)
>>> states = envs.get_states()
>>> envs.set_states([states[1], "not a state"])
Traceback (most recent call last):
...
TypeError: states[1]: expected a CartPole-v1 state (...), received 'not a state' (str)
>>> bool(envs.get_states()[0] == states[0])  # sub-env 0 was not set either
True
>>> envs.close()
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from gymnasium.spaces import Space
from gymnasium.wrappers import TimeLimit

from plangym.columns import BatchInput, columns_of, empty_arrays
from plangym.core.wrappers import added_wrappers, stateful_wrapper_names
from plangym.validation import (
    check_flag,
    check_indices,
    check_return_state,
    check_space_batch,
    check_states_given,
    check_vector_actions,
    describe,
)
from plangym.vector.gym_plan_env import GymPlanEnv
from plangym.vectorization.backend import BatchInputs
from plangym.vectorization.calls import Batch
from plangym.vectorization.errors import WorkerCrashedError
from plangym.vectorization.lifecycle import CallState, one_thread_at_a_time
from plangym.vectorization.messages import Call, GetState, SetState
from plangym.vectorization.scheduler import OnCrash, Scheduler


class VectorPlanning:
    """The planning calls of :class:`~plangym.vector.vector_env.PlanVectorEnv` (its mixin)."""

    _checker: GymPlanEnv | None = None  # the plangym env that checks states here, if any
    call_state: CallState
    checks_actions: bool
    _wrapper_kinds: tuple[type, ...] = ()  # the wrappers above each sub-env's plangym env
    num_envs: int
    action_space: Space
    single_action_space: Space
    single_observation_space: Space
    _ended: np.ndarray
    _run_now: Callable[[dict[int, Any], str], list]
    _run_batch: Callable[[dict[int, Any], str], Batch]
    _raise_errors: Callable[[Batch], None]
    _to_all: Callable[[Any], dict[int, Any]]

    if TYPE_CHECKING:  # PlanVectorEnv's

        @property
        def _started(self) -> Scheduler:
            """The scheduler of the sub-envs' workers."""
            ...

    @one_thread_at_a_time
    def get_states(self) -> list:
        """Return the exact state of every sub-env (see :func:`plangym.make_vec`)."""
        self.call_state.check_idle("get_states")
        self._warn_of_stateful_wrappers("get_states")
        return self._run_now(self._to_all(GetState()), "get_state")

    @one_thread_at_a_time
    def set_states(
        self, states: Sequence | np.ndarray, indices: Sequence[int] | None = None
    ) -> None:
        """Restore ``states[k]`` in sub-env ``indices[k]`` (default: every sub-env in turn).

        Every state is checked first: a bad one raises and no sub-env changes. The restored
        sub-envs go on from there: their next step steps from the state.
        """
        self.call_state.check_idle("set_states")
        stacked = isinstance(states, np.ndarray) and states.ndim >= 1  # np.stack(states)
        if not (stacked or isinstance(states, Sequence)) or isinstance(states, str | bytes):
            raise TypeError(f"states: expected a list of states, received {describe(states)}")
        indices = check_indices(indices, len(states), self.num_envs)
        self._warn_of_stateful_wrappers("set_states")
        states = self._checked("checked_states", list(states))
        requests = {int(i): SetState(state) for i, state in zip(indices, states, strict=True)}
        batch = self._run_batch(requests, "set_state")
        # Those restored go on from their states; one whose worker died was rebuilt and reset.
        fresh = [t.worker for t in batch.tasks if isinstance(t.error, WorkerCrashedError | None)]
        self._ended[fresh] = False
        self._raise_errors(batch)

    @one_thread_at_a_time
    def step_batch(
        self,
        actions: BatchInput,
        states: BatchInput,
        dt: int | BatchInput = 1,
        return_state: bool | None = None,
        arrays: bool = False,
    ) -> tuple:
        """Step each ``(action, state)`` pair; the sub-envs' own episodes are left alone.

        Checked first, then shared out among the workers as in ``ParallelEnv``. Returns
        ``(new_states, observs, rewards, terminals, truncateds, infos)``, in input order
        (no new states with ``return_state=False``); with ``arrays=True``, as a plangym
        env's ``step_batch(..., arrays=True)`` returns them.
        """
        want_state = check_return_state(return_state) is not False  # None: states passed
        arrays = check_flag("arrays", arrays)
        self.call_state.check_idle("step_batch")
        check_states_given(states)
        self._warn_of_stateful_wrappers("step_batch")
        space = self.single_action_space
        if self.checks_actions and not self._wrapper_kinds:
            checked_actions, checked_states, dts = self._checked("check_batch", actions, states, dt)
        else:  # the wrappers' actions; envs that are not plangym's have no states to check
            checked_actions, checked_states, dts = check_space_batch(space, actions, states, dt)
            if self.checks_actions and checked_states is not None:
                checked_states = self._checked("checked_batch_states", checked_states)
        if arrays and len(checked_actions) == 0:  # no row of each, as a plangym env's
            # Wrappers leave the states as the plangym env's: their dtype is the checker's.
            state_dtype = getattr(self._checker and self._checker.plan_env, "state_dtype", None)
            return empty_arrays(self.single_observation_space, state_dtype, want_state)
        inputs = BatchInputs(checked_actions, checked_states, dts, want_state=want_state)
        columns = columns_of(self._started.run(inputs).columns(), want_state)
        return columns.as_arrays() if arrays else columns.as_lists()

    def _take_wrappers(self, probe: Any) -> None:
        """Note the wrappers above the sub-envs' plangym env: step_batch goes through them."""
        self._wrapper_kinds = tuple(type(w) for w in added_wrappers(probe, probe.unwrapped))

    def _warn_of_stateful_wrappers(self, call: str) -> None:
        """Warn that the states ``call`` uses leave out the sub-envs' wrappers' own state."""
        kinds = self._wrapper_kinds
        if not kinds:  # the usual case, on every step_batch
            return
        names = stateful_wrapper_names(kinds)
        names += ["TimeLimit"] if any(issubclass(kind, TimeLimit) for kind in kinds) else []
        if names:
            warnings.warn(
                f"{call}: the sub-envs' {', '.join(names)} keep state of their own, which "
                "states do not hold: a restored sub-env keeps its wrappers' state, and "
                "step_batch starts each element from that of the sub-env stepping it",
                UserWarning,
                stacklevel=4,  # the caller of get_states & co., past their decorator
            )

    def _checked_actions(self, actions: Any) -> list:
        """Return one action per sub-env, each checked before any sub-env steps.

        Against the action space; and by the plangym env kept here when its own
        ``check_action`` may ask more than the space (a user's env without ``FAST_PATHS``,
        whose ``step_batch`` checks each action that way too).
        """
        space, n = self.single_action_space, self.num_envs
        items = check_vector_actions(self.action_space, space, actions, n, self.checks_actions)
        checker = self._checker
        if checker is not None and not checker.plan_env.has_fast_paths():
            checker.plan_env.check_actions(items)
        return items

    def _checked(self, name: str, *args: Any) -> Any:
        """Return the sub-envs' plangym env's ``name(*args)``: checked inputs.

        Asked here, or of sub-env 0's worker when no plangym env can be kept here.
        """
        if self._checker is not None:
            return getattr(self._checker, name)(*args)
        if not self.checks_actions:  # not plangym envs: their workers say they have no states
            return args[0]
        # Bad input, not a worker's failure: raised without gymnasium's worker-error log. A
        # check changes nothing, so a worker that died under it is replaced and asked again.
        return self._started.broadcast({0: Call(name, args)}, "state check", OnCrash.RERUN)[0]
