"""CartPole-v1 vector envs side by side: plangym's vector entry point against the others.

Rows: gymnasium's ``make_vec(..., vectorization_mode="vector_entry_point")`` (its NumPy
CartPole, one generator for all sub-envs, not exactly restorable), envpool (C++ threads,
when a Python with envpool is given), plangym's "sync" and "async" modes, and plangym's
"vector_entry_point" (the kernels, exact per-env generators); at 4 and 4,096 sub-envs, in
env steps per second with fixed actions (a precomputed random array, the same for every
row). Then ``get_states`` + ``set_states`` of 4,096 sub-envs, in states per second.

Every contender stays alive for the whole run and runs one round in turn, the order
rotated each round, so a slow spell of the shared machine hits all alike; each figure is
the median over rounds and each ratio the median of the per-round ratios. envpool runs in
its own interpreter (``--envpool-python``, e.g. a venv with ``pip install envpool``),
driven round by round over a pipe.

    python benchmarks/classic_vector.py [--rounds 7] [--envpool-python /path/to/python]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
import warnings
from collections.abc import Callable

import numpy as np
from workloads import positive_int, rotated_rounds

SIZES = (4, 4096)
NEW = "plangym vector_entry_point"
ENVPOOL_WORKER = """
import sys, time, numpy as np, envpool
n, steps = int(sys.argv[1]), int(sys.argv[2])
env = envpool.make_gymnasium("CartPole-v1", num_envs=n, batch_size=n, num_threads=2, seed=0)
env.reset()
actions = np.random.default_rng(0).integers(0, 2, (64, n)).astype(np.int32)
print("ready", flush=True)
for line in sys.stdin:
    start = time.perf_counter()
    for i in range(steps):
        env.step(actions[i % 64])
    print(n * steps / (time.perf_counter() - start), flush=True)
"""


def actions_for(n: int) -> np.ndarray:
    return np.random.default_rng(0).integers(0, 2, (64, n))


def local_round(env, n: int, steps: int) -> Callable[[], float]:
    """A round of ``steps`` vector steps of ``env``: returns env steps per second."""
    actions = actions_for(n)
    env.reset(seed=0)

    def run() -> float:
        start = time.perf_counter()
        for i in range(steps):
            env.step(actions[i % 64])
        return n * steps / (time.perf_counter() - start)

    return run


def envpool_round(python: str, n: int, steps: int) -> tuple[Callable[[], float], Callable]:
    """A round of envpool in its own interpreter; returns it and a closer."""
    worker = subprocess.Popen(
        [python, "-c", ENVPOOL_WORKER, str(n), str(steps)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert worker.stdout is not None and worker.stdin is not None
    if worker.stdout.readline().strip() != "ready":
        raise RuntimeError("envpool worker did not start")

    def run() -> float:
        worker.stdin.write("go\n")
        worker.stdin.flush()
        return float(worker.stdout.readline())

    def close() -> None:
        worker.stdin.close()
        worker.wait(timeout=30)

    return run, close


def states_round(env, n: int, repeats: int) -> Callable[[], float]:
    """A round of ``get_states`` + ``set_states`` of every sub-env: states per second."""
    env.reset(seed=0)

    def run() -> float:
        start = time.perf_counter()
        for _ in range(repeats):
            env.set_states(env.get_states())
        return n * repeats / (time.perf_counter() - start)

    return run


measure = rotated_rounds  # every contender once per round, the order rotated each round


def ratio(rates: dict[str, list[float]], name: str) -> float:
    """Median over rounds of the new mode's rate divided by ``name``'s."""
    return statistics.median(a / b for a, b in zip(rates[NEW], rates[name], strict=True))


def main() -> None:
    import gymnasium

    import plangym

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=positive_int, default=7)
    parser.add_argument("--envpool-python", default=os.environ.get("ENVPOOL_PYTHON"))
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    table: dict[str, dict[int, str]] = {}
    closers: list[Callable] = []
    for n in SIZES:
        steps = 2000 if n == 4 else 200
        built = {
            "gymnasium vector_entry_point": gymnasium.make_vec(
                "CartPole-v1", n, vectorization_mode="vector_entry_point"
            ),
            "plangym sync": plangym.make_vec("CartPole-v1", n, "sync"),
            NEW: plangym.make_vec("CartPole-v1", n, "vector_entry_point"),
        }
        if n <= 64:  # one worker process per sub-env
            built["plangym async"] = plangym.make_vec("CartPole-v1", n, "async")
        contenders = {
            name: local_round(env, n, steps if name != "plangym sync" or n <= 64 else 5)
            for name, env in built.items()
        }
        if args.envpool_python:
            contenders["envpool"], close = envpool_round(args.envpool_python, n, steps)
            closers.append(close)
        rates = measure(contenders, args.rounds)
        for name, values in rates.items():
            cell = f"{statistics.median(values):,.0f}"
            if name != NEW:
                cell += f" ({ratio(rates, name):.2f}x)"
            table.setdefault(name, {})[n] = cell
        if n == 4096:
            state_rates = measure(
                {
                    NEW: states_round(built[NEW], n, 50),
                    "plangym sync": states_round(built["plangym sync"], n, 1),
                },
                args.rounds,
            )
        for env in built.values():
            env.close()
    for close in closers:
        close()
    order = ["gymnasium vector_entry_point", "envpool", "plangym sync", "plangym async", NEW]
    print(f"CartPole-v1, env steps/s (new mode's speed-up over the row), {args.rounds} rounds")
    print("| vector env | 4 envs | 4,096 envs |\n|---|---|---|")
    for name in order:
        if name in table:
            cells = [table[name].get(n, "-") for n in SIZES]
            print(f"| {name} | {cells[0]} | {cells[1]} |")
    print("\nget_states + set_states of 4,096 sub-envs, states/s")
    print("| vector env | states/s |\n|---|---|")
    for name, values in state_rates.items():
        extra = "" if name == NEW else f" ({ratio(state_rates, name):.0f}x)"
        print(f"| {name} | {statistics.median(values):,.0f}{extra} |")
    if not args.envpool_python:
        print("\n(no envpool row: pass --envpool-python or set ENVPOOL_PYTHON)", file=sys.stderr)


if __name__ == "__main__":
    main()
