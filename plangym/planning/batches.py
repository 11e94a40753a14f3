"""How the reference planners step a batch: in the array form wherever the env offers it.

A planner steps tens of (state, action) pairs at a time and needs four things back: the new
states, the observations, the rewards and which elements died. :func:`step_states` asks
for them with ``step_batch(..., arrays=True)``: a classic-control batch then goes through
the env's NumPy kernels and back without one Python object per element, where the list
form builds a dict of infos, a reward and a state object for every element.

Two more savings, for envs whose states are 0-d records (classic control): the states
of a batch are handed over as one record array, which is checked in one pass instead of
one state at a time, and the new states come back as one record array, which a swarm keeps
as it is and a tree splits only once.

>>> import plangym
>>> env = plangym.make("CartPole-v1")
>>> state, *_ = env.reset()
>>> stepped = step_states(env, [0, 1, 1], [state] * 3)
>>> stepped.rewards.tolist(), stepped.dead.tolist(), stepped.frames
([1.0, 1.0, 1.0], [False, False, False], 3)
>>> stepped.states.shape, len(split_states(stepped.states))
((3,), 3)
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from plangym.columns import is_record_block, records_to_states, states_to_records


@dataclass(frozen=True)
class SteppedStates:
    """A stepped batch as planners use it.

    Attributes:
        states: The new states: one record array for envs whose states are 0-d records,
            else a list.
        observs: The observations, stacked in one array when they share a shape.
        rewards: float64 rewards.
        ended: Whether each element's episode ended (terminal or truncated).
        dead: Whether each element's episode ended or it lost a life: nothing to plan past.
        frames: Underlying steps simulated (emulator frames for Atari).
        lost: Whether each element lost a life (a game over on the last life included).
    """

    states: np.ndarray | list
    observs: np.ndarray | list
    rewards: np.ndarray
    ended: np.ndarray
    dead: np.ndarray
    frames: int
    lost: np.ndarray | None = None


def step_states(
    env: Any,
    actions: Sequence | np.ndarray,
    states: Sequence | np.ndarray,
    dt: int | Sequence[int] = 1,
) -> SteppedStates:
    """Step ``actions`` from ``states`` in one ``step_batch`` call (arrays where offered)."""
    if not is_record_block(states) and len(states):
        first = states[0]
        if isinstance(first, np.ndarray) and first.dtype.names is not None:
            records = states_to_records(states, first.dtype)
            states = states if records is None else records
    # return_state=True: the new states come back whatever ``states`` holds (a list of
    # Nones would otherwise mean "no states" and leave them out).
    if offers_arrays(env):
        new_states, observs, rewards, terminals, truncateds, infos = env.step_batch(
            actions, states=states, dt=dt, return_state=True, arrays=True
        )
    else:
        new_states, observs, rewards, terminals, truncateds, infos = env.step_batch(
            actions, states=states, dt=dt, return_state=True
        )
        rewards = np.asarray(rewards, dtype=np.float64)
        terminals, truncateds = np.asarray(terminals, bool), np.asarray(truncateds, bool)
    ended = np.logical_or(terminals, truncateds)
    if isinstance(infos, dict):
        lost_column = infos.get("lost_life")
        lost = np.zeros_like(ended) if lost_column is None else lost_column.astype(bool)
        n_step = infos.get("n_step")
        frames = len(ended) if n_step is None else int(n_step.sum())
    else:
        lost = np.array([bool(info.get("lost_life", False)) for info in infos], dtype=bool)
        frames = sum(int(info.get("n_step", 1)) for info in infos)
    dead = ended | lost
    return SteppedStates(new_states, observs, np.asarray(rewards), ended, dead, frames, lost)


def split_states(states: np.ndarray | list) -> list:
    """One state per element: a record array becomes 0-d states that own their bytes."""
    return records_to_states(states) if is_record_block(states) else list(states)


def take_states(states: np.ndarray | list, index: np.ndarray) -> np.ndarray | list:
    """``states[index]`` for a record array or a list of states."""
    if isinstance(states, np.ndarray):
        return states[index]
    return [states[i] for i in index.tolist()]


def put_states(states: np.ndarray | list, index: np.ndarray, new: np.ndarray | list) -> Any:
    """Return a copy of ``states`` with ``states[index[k]] = new[k]`` (record arrays or lists)."""
    if isinstance(states, np.ndarray):
        merged = states.copy()
        merged[index] = new
        return merged
    out = list(states)
    for position, state in zip(index.tolist(), new, strict=True):
        out[position] = state
    return out


def offers_arrays(env: Any) -> bool:
    """Whether ``env.step_batch`` takes ``arrays=`` (every plangym env; maybe not a user's)."""
    method = getattr(type(env), "step_batch", None)
    if method is None:  # an instance attribute (forwarded by __getattr__): not cached
        return "arrays" in inspect.signature(env.step_batch).parameters
    cached = _OFFERS_ARRAYS.get(method)
    if cached is None:
        cached = _OFFERS_ARRAYS[method] = "arrays" in inspect.signature(method).parameters
    return cached


_OFFERS_ARRAYS: dict[Any, bool] = {}
