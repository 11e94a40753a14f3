"""FastLunarLander (plangym's own lander, record states) against gymnasium's Box2D lander.

Each round times, in a rotated order:

* ``Box2D raw``: gymnasium's ``LunarLander-v3`` (unwrapped, no render mode) stepped with
  random actions, reset when an episode ends: no states, no restores;
* ``Fast raw``: the same loop on FastLunarLander's simulator (``LanderSim``);
* ``Fast batch``: ``env.step_batch(actions, states)`` on ``--batch`` distinct states (taken
  along random episodes), states returned: every element a restore, a step and a copy,
  discrete and continuous.

The table shows median steps per second and, against Box2D raw, the median of the
per-round ratios (this machine is shared and noisy).
Run: ``python benchmarks/lunar_lander.py [--rounds 9] [--batch 256]``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np
from workloads import positive_int

import plangym
from plangym.utils import make_gym_env


def distinct_states(env, n: int, seed: int = 0) -> tuple[list, list]:
    """``n`` states along random episodes (autoreset), and one random action per state."""
    env.seed(seed)
    env.action_space.seed(seed)
    states = [env.step(env.sample_action(), dt=2, return_state=True)[0] for _ in range(n)]
    return states, [env.sample_action() for _ in range(n)]


def raw_loop(gym_env, n_steps: int, seed: int = 0) -> Callable[[], None]:
    """Step ``gym_env`` ``n_steps`` times with random actions, resetting at episode ends."""
    space = gym_env.action_space
    space.seed(seed)
    actions = [space.sample() for _ in range(n_steps)]

    def loop() -> None:
        gym_env.reset(seed=seed)
        for action in actions:
            if gym_env.step(action)[2]:
                gym_env.reset()

    return loop


def batch_loop(continuous: bool, batch: int) -> Callable[[], None]:
    env = plangym.make("FastLunarLander-v0", continuous=continuous, render_mode=None)
    states, actions = distinct_states(env, batch)
    actions = np.array(actions)
    return lambda: env.step_batch(actions, states=states)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=positive_int, default=9)
    parser.add_argument("--batch", type=positive_int, default=256)
    args = parser.parse_args()
    fast = plangym.make("FastLunarLander-v0", render_mode=None).gym_env
    cases = {  # label: (loop, steps per call)
        "Box2D raw": (raw_loop(make_gym_env("LunarLander-v3", render_mode=None), 1000), 1000),
        "Fast raw": (raw_loop(fast, 1000), 1000),
        "Fast batch": (batch_loop(False, args.batch), args.batch),
        "Fast batch, continuous": (batch_loop(True, args.batch), args.batch),
    }
    labels = list(cases)
    rates: dict[str, list[float]] = {label: [] for label in labels}
    for round_ in range(args.rounds):
        for label in labels[round_ % len(labels) :] + labels[: round_ % len(labels)]:
            loop, steps = cases[label]
            start = time.perf_counter()
            loop()
            rates[label].append(steps / (time.perf_counter() - start))
    print(f"{'case':<26}{'steps/s':>12}{'us/step':>10}{'x Box2D raw':>13}")
    for label in labels:
        ratios = [a / b for a, b in zip(rates[label], rates["Box2D raw"], strict=True)]
        rate = statistics.median(rates[label])
        print(f"{label:<26}{rate:>12,.0f}{1e6 / rate:>10.1f}{statistics.median(ratios):>13.2f}")


if __name__ == "__main__":
    main()
