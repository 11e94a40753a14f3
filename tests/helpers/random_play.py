"""Random play of a video game env: where it got to, and what to play from there."""

from typing import Any

import numpy as np


def state_after_random_play(
    env: Any, rng: np.random.Generator, n_steps: int, n_next: int
) -> tuple[Any, list[int]]:
    """Reset ``env``, play ``n_steps`` random actions and return its state then.

    Returned with it: ``n_next`` further random actions, drawn from ``rng`` after the
    played ones, to step from that state.
    """
    env.reset()
    for action in rng.integers(env.n_actions, size=n_steps):
        env.step(int(action))
    state = env.get_state()
    return state, [int(a) for a in rng.integers(env.n_actions, size=n_next)]
