"""States the benchmarks step from: distinct, reproducible, taken along real trajectories."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

import numpy as np


def states_along(
    env,
    n: int,
    act: Callable[[int], Any],
    seed: int = 0,
    restart: Callable[[tuple], bool] = lambda step: False,
) -> list:
    """``n`` states after the steps ``act(0), act(1), ...`` from a reset with ``seed``.

    The env is reset after each step whose result ``restart`` is true for.
    """
    env.seed(seed)
    env.reset()
    states = []
    for i in range(n):
        if restart(env.step(act(i))):
            env.reset()
        states.append(env.get_state())
    return states


def cartpole_states(env, n: int) -> list:
    """``n`` CartPole states along an alternating-push trajectory, reset at each fall."""
    return states_along(env, n, lambda i: i % 2, restart=lambda step: step[2])


def game_states(env, n: int, seed: int = 0) -> list:
    """``n`` states of a video game along a random-action trajectory."""
    rng = np.random.default_rng(seed)
    return states_along(env, n, lambda _: int(rng.integers(env.n_actions)), seed)


def raw_ale_pass(ale, action_set, ale_states: list, actions) -> None:
    """One pass of the raw limit: restore, 5 frames, clone, read the screen.

    Without the ALE's generator, as plangym's states (``clone_seeds=False``): with sticky
    actions off in the ALE nothing reads it, and carrying it cost the loop about 10% more
    work than plangym does (it did until 2026-11-29).
    """
    for state, action in zip(ale_states, actions, strict=True):
        ale.restoreState(state)
        for _ in range(5):
            ale.act(action_set[action])
        ale.cloneState()
        ale.getScreenRGB()


def ale_clones(env, states: list) -> list:
    """The ALE's own states behind the plangym ``states`` of Atari ``env`` (no generator)."""
    clones = []
    for state in states:
        env.set_state(state)
        clones.append(env.ale.cloneState())
    return clones


def rotated_rounds(
    contenders: dict[str, Callable[[], float]], rounds: int
) -> dict[str, list[float]]:
    """Each contender's measure once per round, the order rotated round by round."""
    names = list(contenders)
    samples: dict[str, list[float]] = {name: [] for name in names}
    for r in range(rounds):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            samples[name].append(contenders[name]())
    return samples


def positive_int(text: str) -> int:
    """An argparse type: an integer >= 1 (rounds, batches, steps), else the option's error."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, received {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, received {value}")
    return value
