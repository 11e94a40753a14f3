"""What a :class:`~plangym.core.PlanEnv` accepts: every input checked before any work runs.

A bad action, state or ``dt`` gets a ValueError or TypeError naming the parameter (and the
element of a batch), what was expected and what was received, before the first element of
a batch is stepped.

>>> import plangym
>>> env = plangym.make("CartPole-v1")
>>> env.step_batch(actions=[0, 2], dt=1)
Traceback (most recent call last):
...
ValueError: actions[1]: expected an integer in [0, 2) for Discrete(2), received 2
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from gymnasium.spaces import Space

from plangym.columns import is_record_block, records_to_states
from plangym.core.object_states import is_object_vector, thawed
from plangym.validation import (
    check_action,
    check_batch_action_values,
    check_batch_actions,
    check_batch_dt,
    check_batch_states,
    check_seed,
    discrete_as_int64,
)


class InputChecks:
    """The input checks of :class:`~plangym.core.PlanEnv`; families refine :meth:`check_state`."""

    if TYPE_CHECKING:

        def get_state(self) -> Any:
            """Return the env's state (:class:`~plangym.core.PlanEnv`'s)."""
            ...

    def has_fast_paths(self) -> bool:
        """Whether the env's class declares ``FAST_PATHS`` (:class:`~plangym.core.PlanEnv`)."""
        raise NotImplementedError

    def check_seed(self, seed: Any) -> int | None:
        """Return ``seed`` as this env's generators take it: None or an int >= 0.

        A family whose generators take fewer seeds refuses the others (dm_control's).
        """
        return check_seed(seed)

    def check_action(self, action: Any, name: str = "action") -> None:
        """Raise ValueError or TypeError unless ``action`` is in the action space."""
        space = getattr(self, "action_space", None)
        if isinstance(space, Space):
            check_action(space, action, name=name)

    def check_actions(self, actions: Any) -> None:
        """Check every action of a batch.

        A family that declares ``FAST_PATHS`` checks them all at once against its action
        space; any other env checks each with its own :meth:`check_action`.
        """
        if not self.has_fast_paths():
            for i, action in enumerate(actions):
                self.check_action(action, name=f"actions[{i}]")
            return
        space = getattr(self, "action_space", None)
        check_batch_action_values(space if isinstance(space, Space) else None, actions)

    def check_batch(self, actions: Any, states: Any, dt: Any) -> tuple[Any, list | None, list]:
        """Check a whole batch; return ``(actions, states or None, one dt per element)``."""
        actions = check_batch_actions(actions)
        n = len(actions)
        dts = check_batch_dt(dt, n)
        states = check_batch_states(states, n)
        self.check_actions(actions)
        states = self.checked_batch_states(states)
        return discrete_as_int64(actions, getattr(self, "action_space", None)), states, dts

    def checked_batch_states(self, states: Any) -> Any:
        """Check a batch's states (None, a list or a record array), as :meth:`check_batch` does."""
        if is_record_block(states):
            self.check_record_block(states)
        elif states is not None:
            try:
                states = self.checked_states(states)
            except (TypeError, ValueError):
                # Rows of plangym 0.1 code's object array of states, anywhere in the batch:
                # looked for only once the check failed, to keep large batches fast.
                if not any(is_object_vector(state) for state in states):
                    raise
                like = self.get_state()
                states = self.checked_states([thawed(state, like) for state in states])
        return states

    def checked_states(self, states: list) -> list | np.ndarray:
        """Check a batch's list of states; return them in the form the env steps fastest.

        Here the list itself; a family whose states are 0-d records may return them as one
        record array (which :meth:`check_batch` would also accept as input).
        """
        self.check_states(states)
        return states

    def thawed_state(self, state: Any) -> Any:
        """``state`` with the dtype of this env's states if numpy stored it as Python objects.

        See :mod:`plangym.core.object_states`: a row of plangym 0.1 code's object array of
        states is converted back when its values fit; anything else is returned as it is.
        """
        return thawed(state, self.get_state()) if is_object_vector(state) else state

    def check_state(self, state: Any, name: str = "state") -> None:
        """Raise ValueError or TypeError unless ``state`` can be restored in this env.

        The base class accepts anything; families override it.
        """

    def check_record_block(self, records: np.ndarray) -> None:
        """Check the states of a batch given as one record array (see :meth:`step_batch`)."""
        self.check_states(records_to_states(records))

    def check_states(self, states: list) -> None:
        """Check every state of a batch; the error names the first bad one, ``states[i]``."""
        for i, state in enumerate(states):
            self.check_state(state, name=f"states[{i}]")
