"""gymnasium's slippery FrozenLake as a plannable env, written as docs/extending.md says.

Its observations are ints (a Discrete space). The state is the cell, the last action and
the words of the env's generator, which decides where the ice slips.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from plangym.core import PlangymEnv
from plangym.rng import N_WORDS, generator_words, restore_generator
from plangym.validation import describe

STATE_SIZE = 2 + N_WORDS


class FrozenLake(PlangymEnv):
    """``FrozenLake-v1``, slippery; a state is ``[cell, last action + 1, *generator words]``."""

    def __init__(self, name: str = "FrozenLake-v1", **kwargs: Any):
        super().__init__(name=name, **kwargs)

    def get_state(self) -> np.ndarray:
        lake = self.gym_env.unwrapped
        state = np.zeros(STATE_SIZE, dtype=np.uint64)
        state[0] = int(lake.s)
        state[1] = 0 if lake.lastaction is None else int(lake.lastaction) + 1
        state[2:] = generator_words(lake.np_random)
        return state

    def set_state(self, state: np.ndarray) -> None:
        self.check_state(state)
        lake = self.gym_env.unwrapped
        lake.s = int(state[0])
        lake.lastaction = None if int(state[1]) == 0 else int(state[1]) - 1
        restore_generator(lake.np_random, state[2:])

    def check_state(self, state: Any, name: str = "state") -> None:
        check_words(state, name, STATE_SIZE)


def check_words(state: Any, name: str, size: int) -> None:
    """Raise TypeError or ValueError naming ``name`` unless ``state`` is ``size`` uint64 words."""
    expected = f"a uint64 array of shape ({size},)"
    if not isinstance(state, np.ndarray):
        raise TypeError(f"{name}: expected {expected}, received {describe(state)}")
    if state.dtype != np.uint64 or state.shape != (size,):
        raise ValueError(f"{name}: expected {expected}, received {describe(state)}")
