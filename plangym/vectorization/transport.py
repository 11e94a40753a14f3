"""A chunk's observations, rewards and flags through the caller's shared buffers.

What does not fit a buffer exactly travels with the reply, so results stay bit-identical.
"""

from __future__ import annotations

import numpy as np

from plangym.columns import BatchColumns

FIELDS = ("observs", "rewards", "terminals", "truncateds")


def write_outputs(arrays: dict[str, np.ndarray], offset: int, columns: BatchColumns) -> dict:
    """Write a chunk's obs, rewards and flags into shared ``arrays`` at ``offset``.

    Returns, per field, either None (written to shared memory) or the list itself when its
    elements do not fit the shared array exactly (they are then pickled with the reply).
    Observations the env already wrote in place (``columns.observs`` is a view of the
    shared array) are not copied again.
    """
    observs, rewards = columns.observs, columns.rewards
    terminals, truncateds = columns.terminals, columns.truncateds
    end = offset + len(rewards)
    fallback: dict[str, list | None] = {}
    obs_array = arrays["observs"]
    row_shape, row_dtype = obs_array.shape[1:], obs_array.dtype
    if isinstance(observs, np.ndarray) and np.shares_memory(observs, obs_array):
        fallback["observs"] = None
    elif all(
        isinstance(obs, np.ndarray) and obs.shape == row_shape and obs.dtype == row_dtype
        for obs in observs
    ):
        if len(observs):
            obs_array[offset:end] = observs
        fallback["observs"] = None
    else:
        fallback["observs"] = list(observs)
    for field, values, kind in (
        ("rewards", rewards, float),
        ("terminals", terminals, bool),
        ("truncateds", truncateds, bool),
    ):
        # An array: a batch stepped in NumPy passes.
        if isinstance(values, np.ndarray) or all(type(value) is kind for value in values):
            arrays[field][offset:end] = values
            fallback[field] = None
        else:
            fallback[field] = list(values)
    return fallback


def read_outputs(
    arrays: dict[str, np.ndarray], offset: int, count: int, fallback: dict
) -> tuple[list, bool]:
    """Read back what :func:`write_outputs` wrote: ``[observs, rewards, terminals, truncateds]``.

    Returns the columns and whether the observations are rows of the shared array (a view
    the next batch overwrites: the caller copies them, or hands them out as views).
    """
    columns: list = []
    for field in FIELDS:
        if fallback[field] is not None:
            columns.append(fallback[field])
        elif field == "observs":
            columns.append(arrays[field][offset : offset + count])
        else:
            columns.append(arrays[field][offset : offset + count].tolist())
    return columns, fallback["observs"] is None
