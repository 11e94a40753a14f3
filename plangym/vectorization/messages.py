"""What crosses the pipe between the caller and a worker process: one small type each.

A request is a :class:`Request` (an id and one body below); every request but
:class:`Attach` is answered by one :class:`Reply` with the same id, in the order the
requests were sent. The first reply of a new worker, id :data:`READY_ID`, says its env is
built (payload: its process id) or why it could not be.

>>> request = Request(7, GetAttr("frameskip"))
>>> reply = Reply(7, ok=True, payload=5)
>>> request.request_id == reply.request_id, type(request.body).__name__
(True, 'GetAttr')
"""

from __future__ import annotations

import pickle
import traceback
from typing import Any, NamedTuple

import cloudpickle

from plangym.vectorization.packing import PackedActions, PackedStates

READY_ID = 0  # request id of the "env is built" reply a worker sends first


class Call(NamedTuple):
    """Call ``env.name(*args, **kwargs)``; the reply carries the result."""

    name: str
    args: tuple = ()
    kwargs: dict | None = None


class GetAttr(NamedTuple):
    """Read ``env.name``."""

    name: str


class SetAttr(NamedTuple):
    """Set ``env.name = value``."""

    name: str
    value: Any


class StepChunk(NamedTuple):
    """Step a checked chunk of a batch.

    Observations, rewards and flags go into the caller's shared buffers (``specs`` names
    them, None when unchanged since the last chunk) at row ``offset``; new states go to
    the ``(start, capacity)`` bytes of the shared states arena when they fit.
    """

    actions: PackedActions
    states: PackedStates | None
    dts: list[int]
    want_state: bool
    offset: int
    states_region: tuple[int, int]
    specs: dict | None


class Attach(NamedTuple):
    """Map the caller's shared buffers now (sent to a restarted worker; not answered)."""

    specs: dict


class Close(NamedTuple):
    """Close the env and exit."""


class Request(NamedTuple):
    """One request: its id and what to do."""

    request_id: int
    body: Call | GetAttr | SetAttr | StepChunk | Attach | Close


class Reply(NamedTuple):
    """The answer to request ``request_id``: a payload, or an error and its traceback."""

    request_id: int
    ok: bool
    payload: Any
    traceback: str = ""


class StepChunkReply(NamedTuple):
    """What a worker sends back for a :class:`StepChunk` besides the shared buffers.

    ``fallback`` holds, per output field, None (written to shared memory) or the list
    itself when it did not fit; ``times`` are the worker's ``perf_counter`` at the start
    and the end of the chunk, so the caller can tell compute from transport.
    """

    states: PackedStates | None
    infos: list
    fallback: dict
    times: tuple[float, float]


def dumps(message: Any) -> bytes:
    """Pickle a message, falling back to cloudpickle for lambdas and local classes."""
    try:
        return pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, AttributeError, TypeError):
        return cloudpickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)


def error_payload(error: BaseException) -> tuple[BaseException, str]:
    """Return the error (or a picklable stand-in) with the current traceback text."""
    text = traceback.format_exc()
    try:
        pickle.loads(dumps(error))
    except Exception:
        error = RuntimeError(f"{type(error).__name__}: {error}")
    return error, text


def error_reply(request_id: int, error: BaseException) -> Reply:
    """Return a reply carrying ``error`` and the traceback of the exception handled."""
    return Reply(request_id, False, *error_payload(error))
