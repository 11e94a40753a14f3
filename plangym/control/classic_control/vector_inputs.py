"""What the vector entry point of classic control (``ClassicVectorEnv``) is built from and given.

:func:`vector_entry_point` is ``plangym.make_vec``'s "vector_entry_point" mode; the checks
refuse a batch of actions or states whole, before any sub-env changes.

>>> from gymnasium import spaces
>>> check_actions(spaces.Discrete(2), np.array([0, 2]), 2)
Traceback (most recent call last):
...
ValueError: actions[1]: expected an integer in [0, 2) for Discrete(2), received 2
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from plangym.columns import is_record_block, states_to_records
from plangym.rng import check_words, invalid_words
from plangym.validation.batches import (
    check_action,
    check_batch_action_values,
    check_box_batch,
    check_integer_batch,
    integer_batch,
    items_as_given,
)


def check_actions(space: spaces.Space, actions: Any, n: int) -> np.ndarray:
    """Return ``n`` actions of ``space`` as one array; raise for a batch that is not that."""
    if isinstance(actions, Iterator):  # gymnasium's iterate takes one, as the other modes do
        actions = list(actions)
    if isinstance(space, spaces.Discrete) and not isinstance(actions, np.ndarray):
        array = integer_batch(actions)  # as the other modes: [1, "a"] blames "a"
    else:
        try:
            array = np.asarray(actions)
        except ValueError:  # ragged: [1, [1]]
            array = items_as_given(actions)
    expected = (n, *(space.shape or ()))
    if array.shape != expected:
        if isinstance(actions, list | tuple) and len(actions) == n:
            # n actions of the wrong shape: each one's message, as in the other modes.
            for index, action in enumerate(actions):
                check_action(space, action, name=f"actions[{index}]")
        # A scalar is no batch at all: a TypeError, as on plangym's other faces.
        kind = TypeError if array.ndim == 0 and not isinstance(actions, np.ndarray) else ValueError
        raise kind(
            f"actions: expected an array of shape {expected} (one action per sub-env), "
            f"got shape {array.shape}"
        )
    # A bad action gets step_batch's message, named by its sub-env's index.
    if isinstance(space, spaces.Discrete):
        low, high = int(space.start), int(space.start + space.n)
        if array.dtype.kind not in "iu" or _out_of_range(array, low, high):
            check_integer_batch(space, array)
        # An action is its value (MountainCar's action - 1 wraps around in a uint8).
        return array.astype(np.int64, copy=False)
    if not (isinstance(space, spaces.Box) and check_box_batch(space, array)):
        check_batch_action_values(space, array)
    return array


def _out_of_range(array: np.ndarray, low: int, high: int) -> bool:
    """Whether any integer of ``array`` is outside ``[low, high)``.

    With ``low`` 0 (the usual Discrete space) one pass is enough: as unsigned integers of
    the same width, negative values are larger than any ``high``.
    """
    if not array.size:
        return False
    if low == 0:
        return int(array.view(array.dtype.str.replace("i", "u")).max()) >= high
    return int(array.min()) < low or int(array.max()) >= high


def check_records(states: Any, dtype: np.dtype, kernel: Any, name: str) -> np.ndarray:
    """Return ``states`` as one record array of ``dtype`` that ``kernel`` steps exactly.

    ``states``: a record array, or a sequence of 0-d records (as ``get_state`` returns).
    """
    records = states if is_record_block(states) else None
    if records is None and isinstance(states, Sequence | np.ndarray):
        # No states (for no indices) are no records, as the other modes take them.
        records = states_to_records(states, dtype) if len(states) else np.empty(0, dtype)
    if records is None or records.dtype != dtype:
        raise TypeError(
            f"states: expected a record array of {name} states (from get_states) or a list "
            f"of 0-d records of dtype {dtype}, received {states!r:.120}"
        )
    if not kernel.steps_kinds(records["physics_kind"]):
        raise ValueError(
            "states: physics_kind must be one of the kinds the kernel steps exactly "
            f"({sorted(kernel.exact_kinds)}), received "
            f"{sorted(set(records['physics_kind'].tolist()))}"
        )
    bad = invalid_words(records["rng"])  # the sub-env's resets would repeat one episode
    if bad.any():
        index = int(np.argmax(bad))
        check_words(records["rng"][index], name=f"states[{index}]")
    return records


def vector_entry_point(
    name: str,
    num_envs: int,
    autoreset_mode: Any,
    env_kwargs: dict[str, Any],
    wrappers: tuple,
    vector_kwargs: dict[str, Any],
    asked: bool,
) -> Any:
    """Return the vector env of ``name``'s kernel, for ``plangym.make_vec``.

    ``asked``: the mode was asked for by name, so a task or settings without a kernel
    raise ValueError; otherwise (``vectorization_mode=None``) they give None: use "sync".
    """
    from plangym.control.classic_control.vector_env import (
        KERNEL_TASKS,
        ClassicVectorEnv,
        KernelUnavailableError,
    )
    from plangym.registry import make

    if name not in KERNEL_TASKS:
        if asked:
            raise ValueError(
                f"vectorization_mode: 'vector_entry_point' is for {', '.join(KERNEL_TASKS)}; "
                f"{name!r} has none (vectorization_mode=None picks the mode for it)"
            )
        return None
    if wrappers or set(vector_kwargs) - {"copy"}:
        if asked:
            raise ValueError(
                "vectorization_mode: 'vector_entry_point' takes no wrappers and only 'copy' in "
                f"vector_kwargs, got wrappers={list(wrappers)} and {vector_kwargs=}"
            )
        return None
    plan_env = make(name, **env_kwargs)
    try:
        return ClassicVectorEnv(plan_env, num_envs, autoreset_mode, **vector_kwargs)
    except KernelUnavailableError:
        plan_env.close()
        if asked:
            raise
        return None
