"""What planners need of a vector env: its sub-envs' exact states, and ``step_batch``.

States are checked before anything is sent, as ``ParallelEnv`` checks them: a bad state
changes no sub-env, whichever it was meant for, and its error has ``ParallelEnv``'s words
(``states[5]: expected a CartPole-v1 state ...``). A plangym env of the sub-envs' kind
checks them in this process: the env gymnasium's vector envs build to read the spaces,
kept for it (sub-env 0 itself in the sync mode). A ``SINGLETON`` env (one emulator per
process) or one that renders to a window is not kept: sub-env 0's worker checks the
states then, so the caller holds no emulator and shows no extra window.

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

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import gymnasium
import numpy as np
from gymnasium.spaces import Space

from plangym.validation import (
    check_flag,
    check_indices,
    check_return_state,
    check_seed,
    check_seeds,
    check_space_batch,
)
from plangym.validation.values import describe
from plangym.vector.gym_plan_env import GymPlanEnv
from plangym.vectorization.backend import BatchInputs
from plangym.vectorization.calls import OnCrash
from plangym.vectorization.env import columns_of
from plangym.vectorization.lifecycle import one_thread_at_a_time
from plangym.vectorization.messages import Call, GetState, SetState
from plangym.vectorization.scheduler import Scheduler


def local_checker(probe: gymnasium.Env) -> GymPlanEnv | None:
    """Return the plangym env that may check states in this process, if ``probe`` is one."""
    face = probe.unwrapped
    # Not kept: one emulator per process (SINGLETON), or a window left open on the screen.
    if isinstance(face, GymPlanEnv) and not face.plan_env.SINGLETON:
        return face if face.render_mode != "human" else None
    return None


class VectorPlanning:
    """The planning calls of :class:`~plangym.vector.vector_env.PlanVectorEnv`.

    Needs the vector env's ``call_state``, ``num_envs``, ``single_action_space``,
    ``checks_actions`` (its sub-envs are plangym envs), ``_ended``, ``_started``,
    ``_run_now`` and ``_to_all``; ``_checker`` is the env that checks states here.
    """

    _checker: GymPlanEnv | None = None
    checks_actions: bool
    num_envs: int
    single_action_space: Space
    _ended: Any

    if TYPE_CHECKING:  # PlanVectorEnv's

        @property
        def _started(self) -> Scheduler:
            """The scheduler of the sub-envs' workers."""
            ...

    def _checked_seeds(self, seed: Any) -> list[int | None]:
        """One seed per sub-env, each as the plangym env here takes it (dm_control: < 2**32)."""
        check_one = self._checker.plan_env.check_seed if self._checker is not None else check_seed
        return check_seeds(seed, self.num_envs, check_one)

    @one_thread_at_a_time
    def get_states(self) -> list:
        """Return the exact state of every sub-env (see :func:`plangym.make_vec`)."""
        self.call_state.check_idle("get_states")  # type: ignore[attr-defined]
        return self._run_now(self._to_all(GetState()), "get_state")  # type: ignore[attr-defined]

    @one_thread_at_a_time
    def set_states(self, states: Sequence, indices: Sequence[int] | None = None) -> None:
        """Restore ``states[k]`` in sub-env ``indices[k]`` (default: every sub-env in turn).

        Every state is checked first: a bad one raises and no sub-env changes. The restored
        sub-envs go on from there: their next step steps from the state.
        """
        self.call_state.check_idle("set_states")  # type: ignore[attr-defined]
        stacked = isinstance(states, np.ndarray) and states.ndim >= 1  # np.stack(states)
        if not (stacked or isinstance(states, Sequence)) or isinstance(states, str | bytes):
            raise TypeError(f"states: expected a list of states, received {describe(states)}")
        indices = check_indices(indices, len(states), self.num_envs)
        states = self._checked("checked_states", list(states))
        requests = {int(i): SetState(state) for i, state in zip(indices, states, strict=True)}
        self._run_now(requests, "set_state")  # type: ignore[attr-defined]
        self._ended[indices] = False

    @one_thread_at_a_time
    def step_batch(
        self,
        actions: Sequence,
        states: Sequence,
        dt: int | Sequence[int] = 1,
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
        self.call_state.check_idle("step_batch")  # type: ignore[attr-defined]
        if self.checks_actions:
            checked = self._checked("check_batch", actions, states, dt)
        else:  # not plangym envs: their workers say they have no states
            checked = check_space_batch(self.single_action_space, actions, states, dt)
        inputs = BatchInputs(checked[0], checked[1], checked[2], want_state=want_state)
        columns = columns_of(self._started.run(inputs).columns(), want_state)
        return columns.as_arrays() if arrays else columns.as_lists()

    def _checked(self, name: str, *args: Any) -> Any:
        """Return what the sub-envs' plangym env's ``name(*args)`` returns: checked inputs.

        Asked here, or of sub-env 0's worker when no plangym env can be kept here.
        """
        if self._checker is not None:
            return getattr(self._checker, name)(*args)
        if not self.checks_actions:  # not plangym envs: their workers say they have no states
            return args[0]
        # Bad input, not a worker's failure: raised without gymnasium's worker-error log. A
        # check changes nothing, so a worker that died under it is replaced and asked again.
        request = {0: Call(name, args)}
        return self._started.broadcast(request, "state check", OnCrash.RERUN)[0]
