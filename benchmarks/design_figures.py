"""The measured figures behind small design choices in plangym's code, as ratios.

Comments in the code say why a choice was made; the figures that justify it are measured
here, so they can be checked again on another machine instead of going stale in comments.
Each row times two things side by side in this one process, in an order that rotates from
round to round, and reports the median of the per-round ratios (min..max):

1. ``kernel_batch.int64_column``: converting a list of Python ints to int64, per element,
   against ``list.count`` over the same list (why one repeated ``dt`` is filled in).
2. ``classic_control.env._CheckedActionSpace``: ``Discrete.contains`` of an int against
   one CartPole physics step (why the bulk loop skips the check its actions passed).
3. ``validation.batches.discrete_as_int64``: ``Discrete.contains`` of a NumPy int64
   against that of a Python int (why checked discrete actions travel as int64).
4. ``rng.GeneratorWords``: reading a PCG64 generator's state against one CartPole step
   (why the words are cached between the moments a generator can move).
5. ``vectorization.packing.DtypeChannel``: pickling a classic-control record dtype against
   one CartPole step (why a dtype crosses a pipe only when it changes).
6. ``videogames.retro.state.encode_state``: finding a 1 MB save's non-zero 256-byte pages
   by 8-byte words against byte by byte (the codec tests bytes: 0.81 on the AMD machine of
   RESULTS.md; about 1.0 on an Intel Xeon, where neither way wins).
7. ``classic_control.kernels.Kernel.min_batch``: one NumPy operation on 4 float64 values
   against one scalar float multiplication (why small batches skip the kernels).

Run: ``python benchmarks/design_figures.py [--rounds N]``.
"""

from __future__ import annotations

import argparse
import pickle
import statistics
import time
from collections.abc import Callable

import gymnasium
import numpy as np
from workloads import positive_int

import plangym


def per_call(function: Callable[[], object], calls: int) -> float:
    """Seconds per call of ``function`` over ``calls`` calls."""
    start = time.perf_counter()
    for _ in range(calls):
        function()
    return (time.perf_counter() - start) / calls


def calls_for(function: Callable[[], object], min_time: float) -> int:
    """How many calls last about ``min_time`` seconds."""
    calls = 1
    while per_call(function, calls) * calls < min_time:
        calls *= 2
    return calls


def ratio(a: Callable[[], object], b: Callable[[], object], rounds: int) -> str:
    """Median (min..max) over rounds of time(a) / time(b), the order rotating per round."""
    n_a, n_b = calls_for(a, 0.02), calls_for(b, 0.02)
    ratios = []
    for round_ in range(rounds):
        if round_ % 2:
            tb, ta = per_call(b, n_b), per_call(a, n_a)
        else:
            ta, tb = per_call(a, n_a), per_call(b, n_b)
        ratios.append(ta / tb)
    return f"{statistics.median(ratios):.2f} ({min(ratios):.2f}..{max(ratios):.2f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=positive_int, default=7)
    rounds = parser.parse_args().rounds

    cartpole = gymnasium.make("CartPole-v1").unwrapped
    cartpole.reset(seed=0)
    physics = cartpole.state

    def cartpole_step() -> None:
        cartpole.state = physics
        cartpole.steps_beyond_terminated = None
        cartpole.step(0)

    ints = list(range(1000))
    space = gymnasium.spaces.Discrete(2)
    generator = np.random.default_rng(0)
    dtype = plangym.make("CartPole-v1").get_state().dtype
    raw = np.zeros(1 << 20, dtype=np.uint8)
    raw[::4096] = 1
    pages = raw.reshape(-1, 256)
    small, scalar = np.arange(4.0), 3.0

    rows = [
        (
            "list of 1000 ints -> int64 / list.count",
            ratio(lambda: np.asarray(ints, dtype=np.int64), lambda: ints.count(0), rounds),
        ),
        (
            "Discrete.contains(int) / CartPole step",
            ratio(lambda: space.contains(1), cartpole_step, rounds),
        ),
        (
            "Discrete.contains(np.int64) / contains(int)",
            ratio(lambda: space.contains(np.int64(1)), lambda: space.contains(1), rounds),
        ),
        (
            "PCG64 state read / CartPole step",
            ratio(lambda: generator.bit_generator.state, cartpole_step, rounds),
        ),
        (
            "pickle a CartPole state dtype / CartPole step",
            ratio(lambda: pickle.dumps(dtype), cartpole_step, rounds),
        ),
        (
            "non-zero 256-byte pages of 1 MB: by bytes / by 8-byte words",
            ratio(lambda: pages.any(axis=1), lambda: pages.view(np.uint64).any(axis=1), rounds),
        ),
        (
            "one NumPy op on 4 float64 / one float multiply",
            ratio(lambda: small * 2.0, lambda: scalar * 2.0, rounds),
        ),
    ]
    width = max(len(name) for name, _ in rows)
    print(f"{'measure':<{width}}  ratio: median (min..max) of {rounds} rounds")
    for name, value in rows:
        print(f"{name:<{width}}  {value}")


if __name__ == "__main__":
    main()
