"""Single-process overhead of plangym against the raw simulators, measured side by side.

Rows (each the median of several interleaved rounds, so machine noise hits all alike):

* Atari: ALE/MsPacman-v5, a batch of 256 distinct states, 5 frames per step, RGB obs,
  states returned. ``raw ALE`` is a tight loop over the ALE itself: restore, 5 frames,
  clone (without the ALE's generator, as plangym's states), read the screen.
  ``plangym step_batch`` does the same work through the public API, with input checks and
  exact states.
* CartPole-v1: a batch of 4096 states, dt=1, states returned. ``raw gymnasium`` sets the
  physics, steps the unwrapped env and copies the physics out; plangym also restores and
  records the generator, the step counters and checks every input.

Run: ``python benchmarks/single_process.py`` (or ``make bench``). Prints a table of rates
and the ratio of plangym to the raw loop.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time
import warnings

import numpy as np
from workloads import ale_clones, cartpole_states, game_states, positive_int, raw_ale_pass

import plangym


def time_call(function) -> float:
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def side_by_side(first, second, rounds: int, work: int) -> tuple[float, float]:
    """Alternate the two loops ``rounds`` times; return their median rates (work / s)."""
    first_times, second_times = [], []
    for _ in range(rounds):
        first_times.append(time_call(first))
        second_times.append(time_call(second))
    return work / statistics.median(first_times), work / statistics.median(second_times)


def bench_atari(rounds: int, batch: int) -> list[tuple[str, str, float]]:
    env = plangym.make("ALE/MsPacman-v5", frameskip=5)
    states = game_states(env, batch)
    actions = np.random.default_rng(1).integers(env.n_actions, size=batch)
    ale = env.ale
    ale_actions = env.gym_env.unwrapped._action_set
    # The raw loop restores real (distinct) emulator states, like the planner would.
    raw_states = ale_clones(env, states)

    def raw():
        raw_ale_pass(ale, ale_actions, raw_states, actions)

    def ours():
        env.step_batch(actions, states=states)

    raw_rate, our_rate = side_by_side(raw, ours, rounds, work=batch * 5)
    env.close()
    return [
        ("MsPacman 256x5 frames", "raw ALE loop (frames/s)", raw_rate),
        ("MsPacman 256x5 frames", "plangym step_batch (frames/s)", our_rate),
        ("MsPacman 256x5 frames", "ratio plangym / raw", our_rate / raw_rate),
    ]


def bench_cartpole(rounds: int, batch: int) -> list[tuple[str, str, float]]:
    env = plangym.make("CartPole-v1")
    states = cartpole_states(env, batch)
    actions = np.arange(batch) % 2
    unwrapped = env.gym_env.unwrapped
    physics = [state["physics"].copy() for state in states]

    def raw():
        for phys, action in zip(physics, actions, strict=True):
            unwrapped.state = phys
            unwrapped.step(action)
            np.array(unwrapped.state)

    def ours():
        env.step_batch(actions, states=states)

    raw_rate, our_rate = side_by_side(raw, ours, rounds, work=batch)
    env.close()
    return [
        ("CartPole 4096", "raw gymnasium loop (steps/s)", raw_rate),
        ("CartPole 4096", "plangym step_batch (steps/s)", our_rate),
        ("CartPole 4096", "ratio plangym / raw", our_rate / raw_rate),
    ]


def main() -> None:
    # Raw CartPole states include fallen poles; gymnasium warns about stepping those.
    warnings.simplefilter("ignore", UserWarning)
    parser = argparse.ArgumentParser(description="single-process overhead of plangym")
    parser.add_argument("--rounds", type=positive_int, default=7)
    args = parser.parse_args()
    rows = bench_atari(args.rounds, 256) + bench_cartpole(args.rounds, 4096)
    print(
        f"machine: {platform.machine()}, {platform.python_implementation()} "
        f"{platform.python_version()}, plangym {plangym.__version__}"
    )
    print(f"| {'workload':<22} | {'measure':<30} | {'value':>10} |")
    print(f"|{'-' * 24}|{'-' * 32}|{'-' * 12}|")
    for workload, measure, value in rows:
        shown = f"{value:.2f}" if measure.startswith("ratio") else f"{value:,.0f}"
        print(f"| {workload:<22} | {measure:<30} | {shown:>10} |")


if __name__ == "__main__":
    main()
