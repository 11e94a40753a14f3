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


def raw_ale_pass(ale, action_set, ale_states: list, actions) -> None:
    """One pass of the raw limit: restore, 5 frames, clone with RNG, read the screen."""
    for state, action in zip(ale_states, actions, strict=True):
        ale.restoreState(state)
        for _ in range(5):
            ale.act(action_set[action])
        ale.cloneState(include_rng=True)
        ale.getScreenRGB()
