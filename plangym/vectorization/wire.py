"""How the messages of :mod:`plangym.vectorization.messages` cross a pipe: flat tuples.

Every message is flattened into plain tuples before it is pickled: pickle handles tuples
in C, while each NamedTuple costs it a Python-level reduce (about 10 us a request,
measured). A vector step's hot path pickles nothing at all (see :func:`encode`).

>>> from plangym.vectorization.messages import GetAttr
>>> decode(encode(Request(3, GetAttr("name"))))
Request(request_id=3, body=GetAttr(name='name'))
"""

from __future__ import annotations

import pickle
import traceback
from typing import Any

import cloudpickle

from plangym.vectorization.errors import with_remote_traceback
from plangym.vectorization.messages import (
    VOCABULARY,
    InBuffer,
    Reply,
    Request,
    Step,
    StepChunk,
    StepChunkReply,
)
from plangym.vectorization.packing import PACKED_TYPES

# The types the code builds and reads; only encode and decode see the tuples.
_WIRE_TYPES: tuple[type, ...] = (*VOCABULARY, *PACKED_TYPES)
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
    """Undo :func:`_flat`."""
    cls = _WIRE_TYPES[flat[0]]
    fields = list(flat[1:])
    for index in _NESTED.get(cls, ()):
        if fields[index] is not None:
            nested = fields[index]
            fields[index] = tuple.__new__(_WIRE_TYPES[nested[0]], nested[1:])
    return tuple.__new__(cls, fields)


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
        error = RuntimeError(f"{type(error).__name__}: {_message_of(error)}")
    return error, text


def _message_of(error: BaseException) -> str:
    try:
        return str(error)
    except Exception:  # its __str__ fails: the traceback text still tells
        return "<the message could not be read>"


def pack_error(error: BaseException) -> bytes:
    """Pickle the error being handled with its traceback text, for :func:`unpack_error`.

    The error is pickled on its own, next to its class and message in words: a caller that
    cannot import the class (a module only the worker imported) still gets the message.
    """
    error, text = error_payload(error)
    kind = type(error)
    words = f"{kind.__module__}.{kind.__qualname__}: {_message_of(error)}"
    return dumps((dumps(error), words, text))


def unpack_error(blob: bytes) -> BaseException:
    """Return the error :func:`pack_error` pickled, with the worker's traceback as its cause.

    >>> try:
    ...     raise KeyError("x")
    ... except KeyError as error:
    ...     blob = pack_error(error)
    >>> unpack_error(blob)
    KeyError('x')
    """
    error_blob, words, text = pickle.loads(blob)
    try:
        error = pickle.loads(error_blob)
    except Exception as failure:
        reason = f"raised in a worker; its class cannot be unpickled here: {failure}"
        error = RuntimeError(f"{words} ({reason})")
    return with_remote_traceback(error, text)


def error_reply(request_id: int, error: BaseException) -> Reply:
    """Return a reply carrying ``error`` and the traceback of the exception handled."""
    return Reply(request_id, False, pack_error(error))


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
    >>> decode_reply(encode(Reply(5, True, {})), 5)
    Reply(request_id=5, ok=True, payload={})
    """
    if isinstance(message, Request):
        body = message.body
        if type(body) is Step and type(body.action) is InBuffer:
            return STEP_FROM_BUFFER
        return dumps((message.request_id, _flat(body)))
    payload = message.payload
    if message.ok and type(payload) is dict and not payload:
        return EMPTY_INFO
    wired = type(payload) in _TAGS
    flat = _flat(payload) if wired else payload
    return dumps((message.request_id, message.ok, flat, wired))


def decode_reply(blob: bytes, request_id: int) -> Reply:
    """Return the reply in ``blob``, known to answer request ``request_id``."""
    if blob == EMPTY_INFO:
        return Reply(request_id, True, {})
    _, ok, payload, wired = pickle.loads(blob)
    return Reply(request_id, ok, _typed(payload) if wired else payload)


def unwrap_reply(reply: Reply) -> Any:
    """Return the payload of a successful reply; raise the worker's error otherwise."""
    if reply.ok:
        return reply.payload
    raise unpack_error(reply.payload)


def decode(blob: bytes) -> Request:
    """Return the request that :func:`encode` turned into ``blob``."""
    if blob == STEP_FROM_BUFFER:
        return _STEP_REQUEST
    request_id, body = pickle.loads(blob)
    return Request(request_id, _typed(body))


_STEP_REQUEST = Request(0, Step())
