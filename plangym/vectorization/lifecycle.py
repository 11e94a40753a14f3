"""The call state of a vectorized env, as gymnasium's ``AsyncVectorEnv`` keeps it.

An env is idle, has one asynchronous batch pending, or is closed. Every public method
checks the state first and, when it must refuse, raises before it changes anything:

* a call while a batch is pending raises :class:`AlreadyPendingCallError`;
* ``step_batch_wait`` with nothing pending raises :class:`NoAsyncCallError`;
* any call after ``close()`` raises :class:`ClosedEnvironmentError`.

>>> class Door:
...     call_state = CallState.IDLE
...     @idle_only
...     def open(self):
...         return "opened"
>>> door = Door()
>>> door.open()
'opened'
>>> door.call_state = CallState.CLOSED
>>> door.open()
Traceback (most recent call last):
...
plangym.vectorization.errors.ClosedEnvironmentError: open: the env is closed
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Callable
from typing import Any, TypeVar

from plangym.vectorization.errors import AlreadyPendingCallError, ClosedEnvironmentError

Method = TypeVar("Method", bound=Callable[..., Any])


class CallState(enum.Enum):
    """Whether an env is idle, waiting for an asynchronous batch, or closed."""

    IDLE = "idle"
    PENDING = "pending"
    CLOSED = "closed"


def check_idle(call_state: CallState, method: str) -> None:
    """Raise unless ``call_state`` lets ``method`` run now."""
    if call_state is CallState.CLOSED:
        raise ClosedEnvironmentError(f"{method}: the env is closed")
    if call_state is CallState.PENDING:
        raise AlreadyPendingCallError(
            f"{method}: a step_batch_async call is pending; collect it with "
            "step_batch_wait() before making another call"
        )


def idle_only(method: Method) -> Method:
    """Make ``method`` check its object's ``call_state`` before it does anything."""

    @functools.wraps(method)
    def checked(self: Any, *args: Any, **kwargs: Any) -> Any:
        check_idle(self.call_state, method.__name__)
        return method(self, *args, **kwargs)

    return checked  # type: ignore[return-value]
