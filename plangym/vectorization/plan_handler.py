"""The handler of a :class:`~plangym.core.PlanEnv` in a worker: chunks, calls, attributes.

A :class:`~plangym.vectorization.messages.StepChunk` with a row ``offset`` answers the new
states' descriptor and the infos (the rest is in shared memory); without one, the columns.

>>> from plangym.control.classic_control import ClassicControl
>>> from plangym.vectorization.messages import GetAttr
>>> from plangym.vectorization.shared_memory import AttachedOutputs
>>> handler = PlanEnvHandler(lambda: ClassicControl("CartPole-v1"), buffers=AttachedOutputs())
>>> handler.handle(GetAttr("frameskip"))
1
>>> handler.close()
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from plangym.vectorization.handler import Handler
from plangym.vectorization.messages import (
    Call,
    GetAttr,
    PackedChunkReply,
    SetAttr,
    StepChunk,
    StepChunkReply,
)
from plangym.vectorization.packing import (
    PackedStates,
    SharedStates,
    pack_columns,
    pack_states,
    unpack_actions,
    unpack_states,
)
from plangym.vectorization.shared_memory import AttachedOutputs
from plangym.vectorization.shared_states import read_states, write_states
from plangym.vectorization.transport import write_outputs

_NO_ARENA = np.zeros(0, np.uint8)  # what a batch of zero-byte states is read from


def step_chunk(
    env: Any, request: StepChunk, buffers: AttachedOutputs
) -> StepChunkReply | PackedChunkReply:
    """Step a checked chunk with ``env.run_batch_columns`` (see the module docstring)."""
    started = time.perf_counter()
    arrays = buffers.arrays
    packed_states, states = request.states, None
    if isinstance(packed_states, SharedStates):
        # Views of the caller's arena: it leaves them alone until this chunk is answered.
        arena = arrays.get("states_in", _NO_ARENA)
        states = read_states(arena, packed_states, as_records=True, copy=False)
    elif packed_states is not None:
        states = unpack_states(packed_states, as_records=True)
    actions, dts, want_state = unpack_actions(request.actions), request.dts, request.want_state
    offset = request.offset
    if offset is None:
        columns = env.run_batch_columns(actions, states, dts, want_state)
        compute_s = time.perf_counter() - started
        lists = columns.as_lists()
        return PackedChunkReply(pack_columns(lists if want_state else (None, *lists)), compute_s)
    observs_out = arrays["observs"][offset : offset + len(dts)]
    # The caller's local env, built by the same constructor, checked these inputs already.
    columns = env.run_batch_columns(actions, states, dts, want_state, observs_out)
    packed_new: PackedStates | None = None
    if want_state:
        if "states_out" in arrays:
            assert request.states_region is not None  # sent with the offset
            start, capacity = request.states_region
            packed_new = write_states(arrays["states_out"], start, capacity, columns.states)
        if packed_new is None:  # no room, or not arrays: through the pipe
            packed_new = pack_states(columns.states)
    fallback = write_outputs(arrays, offset, columns)
    return StepChunkReply(packed_new, columns.info_list(), fallback, (started, time.perf_counter()))


class PlanEnvHandler(Handler):
    """Serves the :class:`~plangym.core.PlanEnv` that ``env_fn`` builds in the worker.

    ``buffers`` are the caller's shared buffers as mapped here. A batch with states moves no
    env: the env's own state is kept when a chunk with states comes, and put back before
    the next request without (a planner never pays for it).
    """

    env: Any
    _home: Any = None  # the env's own state while chunks with states have moved it

    def __init__(self, env_fn: Callable[[], Any], buffers: AttachedOutputs):
        self.env = env_fn()
        self.buffers = buffers

    def handle(self, body: Any) -> Any:
        """Carry out a chunk, a call, or an attribute read or write."""
        kind = type(body)
        if kind is StepChunk and body.states is not None:
            if self._home is None:
                self._home = self.env.get_state()
        elif self._home is not None:
            self.env.set_state(self._home)
            self._home = None
        if kind is StepChunk:
            return step_chunk(self.env, body, self.buffers)
        if kind is Call:
            return getattr(self.env, body.name)(*body.args, **(body.kwargs or {}))
        if kind is GetAttr:
            return getattr(self.env, body.name)
        if kind is SetAttr:
            setattr(self.env, body.name, body.value)
            return None
        raise TypeError(f"request: {kind.__name__} is not a request a plangym env answers")

    def close(self) -> None:
        """Close the env."""
        self.env.close()
