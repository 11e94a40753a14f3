"""States the benchmarks step from: distinct, reproducible, taken along real trajectories."""

from __future__ import annotations

import numpy as np


def cartpole_states(env, n: int) -> list:
    """``n`` CartPole states along an alternating-push trajectory, reset at each fall."""
    env.seed(0)
    env.reset()
    states = []
    for i in range(n):
        if env.step(i % 2)[2]:
            env.reset()
        states.append(env.get_state())
    return states


def game_states(env, n: int, seed: int = 0) -> list:
    """``n`` states of a video game along a random-action trajectory."""
    env.seed(seed)
    env.reset()
    rng = np.random.default_rng(seed)
    states = []
    for _ in range(n):
        env.step(int(rng.integers(env.n_actions)))
        states.append(env.get_state())
    return states
