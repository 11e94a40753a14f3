"""What restoring a Box2D state costs, against the depth of its history.

A Box2D state is replayed (see ``docs/box2d.md``), so a restore costs:

* **cold**: no live env holds any part of the history: a reset in a fresh world and a
  replay of every step;
* **prefix held**: a live env holds the history but for its last 10 steps: those 10;
* **exact hit**: a live env holds the whole history: a comparison of bytes.

Then, per step, plain ``env.step`` (which records the action) against gymnasium's own
``step``, and a planner-like ``step_batch`` of 8 walkers that each continue from the
state the previous batch gave them (every restore an exact hit with 8 live envs).

Last, stepping on from a state whose episode has ended (a crashed lander, a fallen walker),
as tree planners do with terminal leaves: with ``autoreset=True`` each such step also
starts a new episode, which must not cost the held history (a replay of the episode).

Each figure is the median of several rounds, the cases interleaved round by round.
Run: ``python benchmarks/box2d.py [--rounds N] [--games LunarLander-v3 ...]``.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from workloads import positive_int

import plangym
from plangym.utils import make_gym_env

GAMES = ["LunarLander-v3", "BipedalWalker-v3", "CarRacing-v3"]
DEPTHS = [0, 10, 100, 500]


def trajectory(env, depth: int, seed: int = 0) -> list[np.ndarray]:
    """States 0..depth of one episode (no autoreset: planners step past the end too)."""
    env.seed(seed)
    env.action_space.seed(seed)
    state, *_ = env.reset()
    states = [state]
    for _ in range(depth):
        states.append(env.step(env.sample_action(), state=states[-1])[0])
    return states


def timed(function) -> float:
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def restore_costs(name: str, rounds: int) -> dict[tuple[str, int], float]:
    """Median seconds per restore for each (case, depth)."""
    env = plangym.make(name, autoreset=False, live_envs=1)
    states = trajectory(env, max(DEPTHS))
    other = trajectory(env, 3, seed=1)[-1]  # another episode, to leave the env elsewhere
    samples: dict[tuple[str, int], list[float]] = {}
    for round_ in range(rounds):
        depths = DEPTHS[round_ % len(DEPTHS) :] + DEPTHS[: round_ % len(DEPTHS)]
        for depth in depths:
            env.set_state(other)
            samples.setdefault(("cold", depth), []).append(
                timed(lambda d=depth: env.set_state(states[d]))
            )
            samples.setdefault(("exact hit", depth), []).append(
                timed(lambda d=depth: env.set_state(states[d]))
            )
            if depth >= 10:
                env.set_state(states[depth - 10])
                samples.setdefault(("prefix held", depth), []).append(
                    timed(lambda d=depth: env.set_state(states[d]))
                )
    env.close()
    return {key: statistics.median(values) for key, values in samples.items()}


def step_rates(name: str, rounds: int, n_steps: int = 200) -> dict[str, float]:
    """Median seconds per step: gymnasium, plangym ``step``, 8 walkers in ``step_batch``."""
    raw = make_gym_env(name, render_mode=None)
    env = plangym.make(name, autoreset=False, live_envs=8)
    env.action_space.seed(0)
    actions = [env.sample_action() for _ in range(n_steps)]

    def raw_loop():
        raw.reset(seed=0)
        for action in actions:
            raw.step(action)

    def plangym_loop():
        env.seed(0)
        for action in actions:
            env.step(action)

    def walkers():
        env.seed(0)
        states = [env.get_state()] * 8
        for start in range(0, n_steps, 8):  # n_steps / 8 rounds of 8 walkers
            states = env.step_batch(actions[start : start + 8], states=states)[0]

    samples: dict[str, list[float]] = {"gymnasium step": [], "plangym step": [], "walkers": []}
    loops = [("gymnasium step", raw_loop), ("plangym step", plangym_loop), ("walkers", walkers)]
    for round_ in range(rounds):
        for label, loop in loops[round_ % 3 :] + loops[: round_ % 3]:
            samples[label].append(timed(loop) / n_steps)
    raw.close()
    env.close()
    return {label: statistics.median(values) for label, values in samples.items()}


def ended_episode_costs(name: str, rounds: int, n_steps: int = 20) -> dict[str, float]:
    """Median seconds per step from an ended episode's state, with and without autoreset."""
    envs = {reset: plangym.make(name, autoreset=reset) for reset in (True, False)}
    ended = {}
    for reset, env in envs.items():
        env.seed(0)
        env.action_space.seed(0)
        state, *_ = env.reset()
        terminal = truncated = False
        while not (terminal or truncated):
            state, _, _, terminal, truncated, _ = env.step(env.sample_action(), state=state)
        ended[reset] = state

    def step_on(reset: bool) -> None:
        state = ended[reset]
        for _ in range(n_steps):
            state = envs[reset].step(envs[reset].sample_action(), state=state)[0]

    samples: dict[str, list[float]] = {"autoreset": [], "no autoreset": []}
    for round_ in range(rounds):
        for reset in (True, False) if round_ % 2 == 0 else (False, True):
            label = "autoreset" if reset else "no autoreset"
            samples[label].append(timed(lambda r=reset: step_on(r)) / n_steps)
    for env in envs.values():
        env.close()
    return {label: statistics.median(values) for label, values in samples.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=positive_int, default=5)
    parser.add_argument("--games", nargs="*", default=GAMES)
    args = parser.parse_args()
    print("Restore cost (ms, median), by depth of the history (underlying steps)")
    print(f"{'game':<18}{'case':<13}" + "".join(f"{d:>10}" for d in DEPTHS))
    for name in args.games:
        costs = restore_costs(name, args.rounds)
        for case in ("cold", "prefix held", "exact hit"):
            cells = [costs.get((case, d)) for d in DEPTHS]
            text = "".join(f"{c * 1e3:>10.3f}" if c is not None else f"{'-':>10}" for c in cells)
            print(f"{name:<18}{case:<13}{text}")
    print()
    print("Per step (ms, median): gymnasium, plangym step, 8 walkers via step_batch")
    for name in args.games:
        rates = step_rates(name, args.rounds)
        text = "".join(f"{value * 1e3:>16.3f}" for value in rates.values())
        print(f"{name:<18}{text}")
    print()
    print("Per step from an ended episode's state (ms, median): autoreset, no autoreset")
    for name in args.games:
        if name == "CarRacing-v3":  # its random episodes only end at the time limit
            continue
        rates = ended_episode_costs(name, args.rounds)
        text = "".join(f"{value * 1e3:>16.3f}" for value in rates.values())
        print(f"{name:<18}{text}")


if __name__ == "__main__":
    main()
