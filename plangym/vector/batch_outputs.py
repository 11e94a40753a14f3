"""Where a vector step's observations, rewards and flags are gathered, one row per sub-env.

The arrays are laid out as gymnasium's ``create_empty_array`` lays out a batch (a dict or
tuple of arrays for Dict and Tuple spaces). Through shared memory a worker writes its row
itself. Otherwise (and for spaces whose batches are not arrays: Text, Graph, Sequence,
custom spaces) the last observations are batched by gymnasium's ``concatenate`` when read.

>>> from gymnasium.spaces import Box, Dict, Discrete
>>> space = Dict({"pos": Box(-1, 1, (2,)), "count": Discrete(5)})
>>> outputs = BatchOutputs(space, 3, in_place=True)
>>> outputs.write_obs(1, {"pos": np.ones(2, np.float32), "count": 4})
>>> outputs.observations()["count"].tolist()
[0, 4, 0]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from gymnasium import Space
from gymnasium.spaces import Box, Dict, Discrete, MultiBinary, MultiDiscrete, Tuple
from gymnasium.vector.utils import concatenate, create_empty_array

from plangym.vectorization.messages import Observed, Stepped

Allocate = Callable[..., np.ndarray]
ARRAY_SPACES = (Box, Discrete, MultiDiscrete, MultiBinary)


def rows_are_arrays(space: Space) -> bool:
    """Whether a batch of ``space`` is an array, or a dict/tuple tree of arrays."""
    if isinstance(space, Dict | Tuple):
        subspaces = space.spaces.values() if isinstance(space, Dict) else space.spaces
        return all(rows_are_arrays(sub) for sub in subspaces)
    return isinstance(space, ARRAY_SPACES)


def write_row(tree: Any, index: int, value: Any) -> None:
    """Write one sub-env's ``value`` into row ``index`` of a batch ``tree``."""
    if isinstance(tree, np.ndarray):
        tree[index] = value
    elif isinstance(tree, dict):
        for key, branch in tree.items():
            write_row(branch, index, value[key])
    else:
        for branch, item in zip(tree, value, strict=True):
            write_row(branch, index, item)


class BatchOutputs:
    """The observations, rewards, terminations and truncations of one vector step.

    Args:
        space: The single observation space.
        n: Number of sub-envs.
        allocate: Makes the arrays (of observations only ``in_place``), called as
            ``allocate(shape, dtype=dtype)``; a shared-memory one lets workers write rows.
        in_place: Write each observation into its row as it arrives; else keep the last
            ones and batch them with gymnasium's ``concatenate`` when read.
    """

    def __init__(self, space: Space, n: int, allocate: Allocate = np.zeros, in_place: bool = False):
        self.space, self.n = space, n
        self.in_place = in_place and rows_are_arrays(space)
        if self.in_place:
            self.obs = create_empty_array(space, n=n, fn=allocate)
        else:  # batched by gymnasium when read: it owns that layout
            self.obs = create_empty_array(space, n=n, fn=np.zeros)
            self._items: list = [None] * n
        self.rewards = allocate((n,), dtype=np.float64)
        self.terminations = allocate((n,), dtype=np.bool_)
        self.truncations = allocate((n,), dtype=np.bool_)

    def write_obs(self, index: int, obs: Any) -> None:
        """Put sub-env ``index``'s observation in the batch."""
        if self.in_place:
            write_row(self.obs, index, obs)
        else:
            self._items[index] = obs

    def absorb(self, index: int, answer: Observed | Stepped | dict) -> dict:
        """Write what sub-env ``index`` answered rather than wrote itself; return its info."""
        if isinstance(answer, Stepped):
            self.rewards[index] = answer.reward
            self.terminations[index] = answer.terminated
            self.truncations[index] = answer.truncated
        if isinstance(answer, Observed | Stepped):
            self.write_obs(index, answer.obs)
            return answer.info
        return answer

    def observations(self) -> Any:
        """Return the batch of observations (the buffer itself: copy it to keep it)."""
        if not self.in_place:
            # gymnasium's signature leaves out the None that create_empty_array returns
            # for a custom space, which its concatenate takes.
            self.obs = concatenate(self.space, self._items, self.obs)  # type: ignore[arg-type]
        return self.obs
