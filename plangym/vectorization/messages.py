"""What crosses the pipe between the caller and a worker process: one small type each.

One vocabulary serves both faces: a :class:`~plangym.vectorization.env.VectorizedEnv`'s
workers get :class:`StepChunk`, :class:`Call`, :class:`GetAttr` and :class:`SetAttr`; a
gymnasium vector env's sub-envs also get :class:`Reset`, :class:`Step`, :class:`Restarted`,
:class:`CheckSpaces`, :class:`GetState` and :class:`SetState`. A request is a
:class:`Request` (an id and one body); every request but :class:`Attach` is answered by one
:class:`Reply` with the same id, in the order the requests were sent. The first reply of a
new worker, id :data:`READY_ID`, says its env is built (payload: its process id) or why it
could not be.

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

from plangym.vectorization.packing import (
    ArrayActions,
    ArrayStates,
    ListActions,
    ObjectStates,
    PackedActions,
    PackedStates,
    SharedStates,
)

READY_ID = 0  # request id of the "worker is ready" reply a worker sends first


# Requests of both faces ----------------------------------------------------------------------
class Call(NamedTuple):
    """Call ``env.name(*args, **kwargs)``; the reply carries the result.

    On a gymnasium sub-env it is gymnasium's ``call``: an attribute that is not callable
    is returned as it is.
    """

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

    With an ``offset``, observations, rewards and flags go into the caller's shared
    buffers at that row, and new states to the ``(start, capacity)`` bytes of the shared
    states arena when they fit; without one (Ray, or the caller's own process) the reply
    carries the columns packed (:func:`~plangym.vectorization.packing.pack_columns`).
    """

    actions: PackedActions
    states: PackedStates | None
    dts: list[int]
    want_state: bool
    offset: int | None = None
    states_region: tuple[int, int] | None = None


class Attach(NamedTuple):
    """Map the caller's shared buffers ``{field: spec}`` (fields not named stay mapped).

    Not answered: it is sent before the request that needs the buffers, and to a
    restarted worker so it knows what to remove should the caller die.
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


class InBuffer:
    """Marks a step whose action waits in the caller's shared action buffer."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, InBuffer)

    def __hash__(self) -> int:
        return hash(InBuffer)

    def __reduce__(self) -> str:
        return "IN_BUFFER"

    def __repr__(self) -> str:
        return "IN_BUFFER"


IN_BUFFER = InBuffer()


class Step(NamedTuple):
    """One step of the sub-env under the vector env's autoreset mode."""

    action: Any = IN_BUFFER


class Restarted(NamedTuple):
    """Reset a sub-env rebuilt after its worker died (its step reports a truncation)."""


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
    """The answer to request ``request_id``: a payload, or an error and its traceback."""

    request_id: int
    ok: bool
    payload: Any
    traceback: str = ""


class StepChunkReply(NamedTuple):
    """What a worker sends back for a :class:`StepChunk` stepped into shared buffers.

    ``fallback`` holds, per output field, None (written to shared memory) or the list
    itself when it did not fit; ``times`` are the worker's ``perf_counter`` at the start
    and the end of the chunk, so the caller can tell compute from transport.
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


# On the pipe every message is a plain tuple: pickle handles tuples in C, while each
# NamedTuple costs it a Python-level reduce (about 10 us a request, measured). The types
# above are what the code builds and reads; only to_wire and from_wire see the tuples.
_WIRE_TYPES: tuple[type, ...] = (
    Call,
    GetAttr,
    SetAttr,
    StepChunk,
    Attach,
    Close,
    Location,
    Reset,
    Step,
    Restarted,
    CheckSpaces,
    GetState,
    SetState,
    StepChunkReply,
    PackedChunkReply,
    Observed,
    Stepped,
    ArrayActions,
    ListActions,
    ArrayStates,
    SharedStates,
    ObjectStates,
)
_TAGS = {cls: tag for tag, cls in enumerate(_WIRE_TYPES)}
# The fields holding packed states or actions, which travel as tuples of their own.
_NESTED = {StepChunk: (0, 1), StepChunkReply: (0,)}


def _flat(value: Any) -> Any:
    """``value`` as ``(tag, *fields)`` when it is one of the wire types, else itself."""
    cls = type(value)
    if cls not in _TAGS:
        return value
    fields = list(value)
    for index in _NESTED.get(cls, ()):
        if fields[index] is not None:
            fields[index] = (_TAGS[type(fields[index])], *fields[index])
    return (_TAGS[cls], *fields)


def _typed(flat: tuple) -> Any:
    """Undo :func:`_flat` for a value known to be of a wire type."""
    cls = _WIRE_TYPES[flat[0]]
    fields = list(flat[1:])
    for index in _NESTED.get(cls, ()):
        if fields[index] is not None:
            nested = fields[index]
            fields[index] = tuple.__new__(_WIRE_TYPES[nested[0]], nested[1:])
    return tuple.__new__(cls, fields)


def to_wire(message: Request | Reply) -> tuple:
    """Flatten a request or reply into the plain tuple it travels as (see :func:`from_wire`).

    >>> from_wire(to_wire(Request(3, GetAttr("name")))) == Request(3, GetAttr("name"))
    True
    """
    if isinstance(message, Request):
        return (message.request_id, _flat(message.body))
    payload = message.payload
    wired = type(payload) in _TAGS
    return (
        message.request_id,
        message.ok,
        _flat(payload) if wired else payload,
        wired,
        message.traceback,
    )


def from_wire(flat: tuple) -> Request | Reply:
    """Rebuild the request or reply that :func:`to_wire` flattened."""
    if len(flat) == 2:
        request_id, body = flat
        return Request(request_id, _typed(body))
    request_id, ok, payload, wired, text = flat
    return Reply(request_id, ok, _typed(payload) if wired else payload, text)


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


# A vector step's hot path pickles nothing: a step whose action waits in the shared action
# buffer travels as one byte, and a reply whose payload is an empty info (the observation
# went to shared memory) as an empty message, which the pipe reads in one system call. No
# pickle is that short. Neither carries an id: replies come in the order of the requests.
STEP_FROM_BUFFER = b"S"
EMPTY_INFO = b""


def encode(message: Request | Reply) -> bytes:
    """Return the bytes a request or reply crosses the pipe as.

    >>> decode(encode(Request(5, Step())))
    Request(request_id=0, body=Step(action=IN_BUFFER))
    >>> decode(encode(Reply(5, True, {})))
    Reply(request_id=0, ok=True, payload={}, traceback='')
    """
    if isinstance(message, Request):
        body = message.body
        if type(body) is Step and type(body.action) is InBuffer:
            return STEP_FROM_BUFFER
    elif message.ok and type(message.payload) is dict and not message.payload:
        return EMPTY_INFO
    return dumps(to_wire(message))


def decode_reply(blob: bytes, request_id: int) -> Reply:
    """Return the reply in ``blob``, known to answer request ``request_id``."""
    if blob == EMPTY_INFO:
        return Reply(request_id, True, {})
    _, ok, payload, wired, text = pickle.loads(blob)
    return Reply(request_id, ok, _typed(payload) if wired else payload, text)


def decode(blob: bytes) -> Request | Reply:
    """Return the request or reply that :func:`encode` turned into ``blob``."""
    if blob == EMPTY_INFO:
        return Reply(0, True, {})
    if blob == STEP_FROM_BUFFER:
        return _STEP_REQUEST
    return from_wire(pickle.loads(blob))


_STEP_REQUEST = Request(0, Step())


def encode_reply(request_id: int, payload: Any) -> bytes:
    """:func:`encode` of ``Reply(request_id, True, payload)``, the worker's hot path."""
    if type(payload) is dict and not payload:
        return EMPTY_INFO
    return dumps(to_wire(Reply(request_id, True, payload)))
