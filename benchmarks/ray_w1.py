"""RayEnv next to ParallelEnv on workload W1, measured side by side in one run.

W1: ALE/MsPacman-v5, frameskip 5, 256 distinct states along a random trajectory, random
actions (``default_rng(1)``), RGB observations, states returned, 2 workers. Both envs stay
alive for the whole run and are timed one round at a time, in turn, so a slow spell of the
shared machine hits both alike; rates are medians over the rounds.

Without ``--address`` (or ``RAY_ADDRESS``) the script starts a local Ray cluster with as
many CPUs as workers, with token authentication and usage reporting off (a throwaway
local cluster), and shuts it down at the end.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import platform
import statistics
import time
import warnings

import numpy as np
from workloads import game_states, positive_int

import plangym
from plangym.api_tests import assert_identical

FRAMESKIP, N_STATES, N_WORKERS = 5, 256, 2


def timed(function) -> float:
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def start_ray(address: str | None) -> bool:
    """Connect to ``address`` or start a local cluster; return whether we started it."""
    import ray

    address = address or os.environ.get("RAY_ADDRESS")
    if address:
        ray.init(address=address)
        return False
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    ray.init(
        address="local",
        num_cpus=N_WORKERS,
        include_dashboard=False,
        log_to_driver=False,
        configure_logging=False,
    )
    return True


def run(rounds: int) -> list[tuple[str, str]]:
    # Both on their workers, as the labels say: the cost model could step in the caller.
    kwargs = {"n_workers": N_WORKERS, "frameskip": FRAMESKIP, "inline_small_batches": False}
    parallel = plangym.make("ALE/MsPacman-v5", **kwargs)
    on_ray = plangym.make("ALE/MsPacman-v5", ray=True, **kwargs)
    states = game_states(parallel.plan_env, N_STATES)
    actions = np.random.default_rng(1).integers(parallel.n_actions, size=N_STATES)
    # Same inputs, same results: a benchmark of the wrong answer would be worthless.
    assert_identical(
        on_ray.step_batch(actions, states=states), parallel.step_batch(actions, states=states)
    )
    frames = N_STATES * FRAMESKIP
    samples: dict[str, list[float]] = {"parallel": [], "ray": []}
    for _ in range(rounds):
        samples["parallel"].append(
            frames / timed(lambda: parallel.step_batch(actions, states=states))
        )
        samples["ray"].append(frames / timed(lambda: on_ray.step_batch(actions, states=states)))
    parallel.close()
    on_ray.close()
    ours = {name: statistics.median(values) for name, values in samples.items()}
    spread = {name: (min(values), max(values)) for name, values in samples.items()}
    return [
        ("ParallelEnv frames/s", f"{ours['parallel']:,.0f}"),
        ("  slowest / fastest round", "{:,.0f} / {:,.0f}".format(*spread["parallel"])),
        ("RayEnv frames/s", f"{ours['ray']:,.0f}"),
        ("  slowest / fastest round", "{:,.0f} / {:,.0f}".format(*spread["ray"])),
        ("RayEnv / ParallelEnv", f"{ours['ray'] / ours['parallel']:.2f}"),
    ]


def main() -> None:
    warnings.simplefilter("ignore")
    parser = argparse.ArgumentParser(description="RayEnv against ParallelEnv on W1")
    parser.add_argument("--rounds", type=positive_int, default=11)
    parser.add_argument("--address", help="Ray cluster to use (default: a new local one)")
    args = parser.parse_args()
    started = start_ray(args.address)
    try:
        rows = run(args.rounds)
    finally:
        if started:
            import ray

            ray.shutdown()
    print(
        f"machine: {platform.machine()}, {mp.cpu_count()} cores, "
        f"{platform.python_implementation()} {platform.python_version()}, "
        f"plangym {plangym.__version__}, {args.rounds} interleaved rounds, "
        f"W1 = MsPacman {N_STATES} states x {FRAMESKIP} frames, RGB, states returned, "
        f"{N_WORKERS} workers"
    )
    print(f"| {'measure':<28} | {'value':>17} |")
    print(f"|{'-' * 30}|{'-' * 19}|")
    for measure, value in rows:
        print(f"| {measure:<28} | {value:>17} |")


if __name__ == "__main__":
    main()
