"""A chunk's observations, rewards and flags through the caller's shared buffers.

What does not fit a buffer exactly travels with the reply, so results stay bit-identical.
"""

from __future__ import annotations

import numpy as np

from plangym.columns import BatchColumns

FIELDS = ("observs", "rewards", "terminals", "truncateds")


def write_outputs(arrays: dict[str, np.ndarray], offset: int, columns: BatchColumns) -> dict:
    """Write a chunk's obs, rewards and flags into shared ``arrays`` at ``offset``.

    Returns, per field, None (written) or the list itself when its elements do not fit the
    shared array exactly (it is pickled with the reply). Observations the env wrote in
    place (a view of the shared array) are not copied again.
    """
    observs, obs_array = columns.observs, arrays["observs"]
    end = offset + len(columns.rewards)
    fallback: dict[str, list | None] = dict.fromkeys(FIELDS)
    row_shape, row_dtype = obs_array.shape[1:], obs_array.dtype
    if isinstance(observs, np.ndarray) and np.shares_memory(observs, obs_array):
        pass  # the env wrote them in place
    elif all(
        isinstance(obs, np.ndarray) and obs.shape == row_shape and obs.dtype == row_dtype
        for obs in observs
    ):
        if len(observs):
            obs_array[offset:end] = observs
    else:
        fallback["observs"] = list(observs)
    for field, values, kind in (
        ("rewards", columns.rewards, float),
        ("terminals", columns.terminals, bool),
        ("truncateds", columns.truncateds, bool),
    ):
        # An array: a batch stepped in NumPy passes.
        if isinstance(values, np.ndarray) or all(type(value) is kind for value in values):
            arrays[field][offset:end] = values
        else:
            fallback[field] = list(values)
    return fallback


def read_outputs(
    arrays: dict[str, np.ndarray], offset: int, count: int, fallback: dict
) -> tuple[list, bool]:
    """Read back ``[observs, rewards, terminals, truncateds]`` from :func:`write_outputs`.

    Also returns whether the observations are rows of the shared array (the next batch
    overwrites them: the caller copies them, or hands them out as views).
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
