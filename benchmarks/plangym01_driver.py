"""Measure plangym 0.1.32 on the parallel workloads; run with ITS interpreter, not ours.

``benchmarks/parallel.py`` starts this script with the Python of a separate virtualenv that
has ``plangym==0.1.32`` (``make bench-baseline`` builds it), then asks it for one timed
round at a time ("w1", "w2", "w2_sequential", "w3" on stdin; a JSON rate on stdout), so its
rounds interleave with ours. Nothing here is imported by plangym or its tests.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
import warnings

import numpy as np


def cartpole_states(env, n: int) -> list:
    state, *_ = env.reset()
    states = []
    for i in range(n):
        data = env.step(i % 2, state=state, return_state=True)
        state = env.reset()[0] if data[3] else data[0]
        states.append(state)
    return states


def rate(function, work: int, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return work / statistics.median(times)


def main() -> None:
    """Set up the three workloads, then time one round of each one named on stdin."""
    warnings.simplefilter("ignore")
    import plangym

    single = plangym.make("CartPole-v1")
    parallel = plangym.make("CartPole-v1", n_workers=2)
    states = cartpole_states(single, 4096)
    actions = np.arange(4096) % 2
    small_states, small_actions = states[:8], actions[:8]
    # W1: frameskip applied once by giving plangym 0.1 frameskip=1 and dt=5.
    atari = plangym.make("ALE/MsPacman-v5", n_workers=2, frameskip=1)
    local = plangym.make("ALE/MsPacman-v5", frameskip=1)
    state, *_ = local.reset()
    pacman_states = []
    rng = np.random.default_rng(0)
    for _ in range(256):
        state = local.step(int(rng.integers(9)), state=state, return_state=True)[0]
        pacman_states.append(state)
    pacman_actions = rng.integers(9, size=256)
    calls = 200
    workloads = {
        "w1": (
            lambda: atari.step_batch(pacman_actions, states=pacman_states, dt=5, return_state=True),
            256 * 5,
        ),
        "w2": (lambda: parallel.step_batch(actions, states=states, return_state=True), 4096),
        "w2_sequential": (
            lambda: single.step_batch(actions, states=states, return_state=True),
            4096,
        ),
        "w3": (
            lambda: [
                parallel.step_batch(small_actions, states=small_states, return_state=True)
                for _ in range(calls)
            ],
            calls,
        ),
    }
    for function, _ in workloads.values():
        function()  # warm up
    print(json.dumps({"version": plangym.__version__}), flush=True)
    for line in sys.stdin:
        function, work = workloads[line.strip()]
        print(json.dumps({"rate": rate(function, work, 1)}), flush=True)
    parallel.close()
    atari.close()


if __name__ == "__main__":
    main()
