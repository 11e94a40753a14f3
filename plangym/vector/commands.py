"""What a vector env asks of one sub-env: one small type per request.

The same commands run in the caller (``SyncVectorEnv``), in a worker process
(``AsyncVectorEnv``) or in a Ray actor (``RayVectorEnv``), through
:class:`~plangym.vector.sub_env.SubEnv`, so all three behave alike.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from plangym.vectorization.packing import PackedStates


class InBuffer:
    """Marks a step whose action waits in the caller's shared action buffer."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, InBuffer)

    def __hash__(self) -> int:
        return hash(InBuffer)


IN_BUFFER = InBuffer()


class Reset(NamedTuple):
    """Start a new episode: ``env.reset(seed=seed, options=options)``."""

    seed: int | None = None
    options: dict | None = None


class Step(NamedTuple):
    """One step of the sub-env under the vector env's autoreset mode."""

    action: Any = IN_BUFFER


class CallCommand(NamedTuple):
    """Call a method of the sub-env, or read an attribute (gymnasium's ``call``)."""

    name: str
    args: tuple = ()
    kwargs: dict | None = None


class SetAttr(NamedTuple):
    """Set an attribute of the sub-env (gymnasium's ``set_attr``)."""

    name: str
    value: Any


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


class StepStates(NamedTuple):
    """Step each ``(action, state, dt)`` and restore the sub-env's own state afterwards.

    The states travel packed (one blob for array states) and so do the results
    (:func:`~plangym.vectorization.packing.pack_columns`): pickling thousands of small
    arrays one by one would cost far more than stepping them.
    """

    actions: list
    states: PackedStates
    dts: list[int]


class Restarted(NamedTuple):
    """Reset a sub-env rebuilt after its worker died (its step reports a truncation)."""


class AttachActions(NamedTuple):
    """Map the caller's shared action buffer (a process worker; not answered)."""

    spec: tuple
