"""What crosses between the caller and a worker: one small type per request and reply.

Every :class:`Request` but :class:`Attach` gets one :class:`Reply`, in the order the
requests were sent, so the shortest replies need no id. A new worker first replies to
:data:`READY_ID`: its env is built (payload: its process id), or why it could not be.

>>> request = Request(7, GetAttr("frameskip"))
>>> reply = Reply(7, ok=True, payload=5)
>>> request.request_id == reply.request_id, type(request.body).__name__
(True, 'GetAttr')
"""

from __future__ import annotations

import enum
from typing import Any, NamedTuple

from plangym.vectorization.packing import PackedActions, PackedStates

READY_ID = 0  # request id of the "worker is ready" reply a worker sends first


# Requests of both faces ----------------------------------------------------------------------
class Call(NamedTuple):
    """Call ``env.name(*args, **kwargs)`` (gymnasium's ``call``: a non-callable is returned)."""

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
    """Step a checked chunk of a batch from the given states.

    With an ``offset``, the outputs go into the caller's shared buffers at that row and the
    new states into the ``(start, capacity)`` bytes of the states arena when they fit;
    without one (Ray, the caller's own process) the reply carries the columns packed.
    """

    actions: PackedActions
    states: PackedStates | None
    dts: list[int]
    want_state: bool
    offset: int | None = None
    states_region: tuple[int, int] | None = None


class Attach(NamedTuple):
    """Map the caller's shared buffers ``{field: spec}`` (fields not named stay mapped).

    Not answered: sent before the request that needs the buffers, and to a restarted
    worker so it knows what to remove should the caller die.
    """

    specs: dict


class Close(NamedTuple):
    """Close the env and exit."""


class Location(NamedTuple):
    """Say where the worker runs (a Ray actor's node, host and process id)."""


# Requests of a gymnasium sub-env -------------------------------------------------------------
class Reset(NamedTuple):
    """Start a new episode: ``env.reset(seed=seed, options=options)``."""

    seed: int | None = None
    options: dict | None = None


class InBuffer(enum.Enum):
    """Marks a step whose action waits in the caller's shared action buffer."""

    IN_BUFFER = "IN_BUFFER"

    def __repr__(self) -> str:
        return self.value


IN_BUFFER = InBuffer.IN_BUFFER


class Step(NamedTuple):
    """One step of the sub-env under the vector env's autoreset mode."""

    action: Any = IN_BUFFER


class Restarted(NamedTuple):
    """Reset a sub-env rebuilt after its worker died; a truncation reports it.

    The caller reports a step its worker died in; after any other call, or a step given up
    on (Ctrl-C, a timeout), the sub-env's next step reports it (``report``).
    """

    report: bool = False

    @classmethod
    def after(cls, label: str) -> Restarted:
        """Return the request for a sub-env whose worker died in a ``label`` call."""
        return cls(report=label != "step")


class CheckSpaces(NamedTuple):
    """Whether the sub-env's spaces match the vector env's (gymnasium's check)."""

    observation_mode: Any
    observation_space: Any
    action_space: Any


class GetState(NamedTuple):
    """Return the sub-env's plangym state."""


class SetState(NamedTuple):
    """Restore a plangym state in the sub-env; its episode goes on from there."""

    state: Any


# Replies -------------------------------------------------------------------------------------
class Request(NamedTuple):
    """One request: its id and what to do."""

    request_id: int
    body: Any


class Reply(NamedTuple):
    """The answer to request ``request_id``: a payload, or an error packed with its traceback.

    (:func:`~plangym.vectorization.wire.pack_error`)
    """

    request_id: int
    ok: bool
    payload: Any


class StepChunkReply(NamedTuple):
    """What a worker answers a :class:`StepChunk` stepped into shared buffers.

    ``fallback`` holds, per output field, None (in shared memory) or the list itself when
    it did not fit; ``times`` are the worker's ``perf_counter`` at the chunk's start and
    end, so the caller can tell compute from transport.
    """

    states: PackedStates | None
    infos: list
    fallback: dict
    times: tuple[float, float]


class PackedChunkReply(NamedTuple):
    """A chunk's columns packed (:func:`~plangym.vectorization.packing.pack_columns`)."""

    columns: tuple
    compute_s: float


class Observed(NamedTuple):
    """A sub-env's reset answer whose observation did not go into shared memory."""

    obs: Any
    info: dict


class Stepped(NamedTuple):
    """A sub-env's step answer whose results did not go into shared memory."""

    obs: Any
    reward: Any
    terminated: Any
    truncated: Any
    info: dict


# Every request body and reply payload type, in the order of their tags on the wire (see
# wire.py): the NamedTuples defined above but Request and Reply, which wrap them.
VOCABULARY: tuple[type, ...] = tuple(
    value
    for value in list(globals().values())
    if isinstance(value, type)
    and issubclass(value, tuple)
    and value.__module__ == __name__
    and value not in (Request, Reply)
)
