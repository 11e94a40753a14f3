"""Classic-control batches through the workers: where they run, and how they travel.

The companion of ``benchmarks/classic_kernels.py`` (which times one process). CartPole-v1
states taken along a random-action trajectory, random actions, states returned:

1. ``ParallelEnv`` with 2 worker processes, B = 32 (a planner's batch) and 4096: every
   batch on the workers (``inline_small_batches=False``) against the default, where the
   cost model (``plangym.vectorization.costs``) keeps a batch in the caller when that is
   faster (after a warm-up, so it has measured both ways).
2. The same for ``RayEnv`` with 2 actors on a local Ray cluster (skipped without Ray).
3. ``plangym.make_vec(..., vectorization_mode="async")`` with 2 sub-envs,
   ``step_batch`` of B = 4096 states: sub-envs whose workers step with the kernels,
   against sub-envs built with ``PLANGYM_NO_KERNELS=1``. Each worker's share travels
   packed (one blob of states, stacked observations) either way.

Protocol as in ``classic_kernels.py``: contenders timed once per round in an order that
rotates, a sample is the mean over enough calls to last ``--min-time`` seconds, ratios are
medians of the per-round ratios (min..max). Every contender's results are checked equal to
the single env's before timing.
"""

from __future__ import annotations

import argparse
import os
import warnings
from collections.abc import Callable

from classic_kernels import Contest, print_table, rate, trajectory_states
from workloads import positive_int

import plangym
from plangym.control.classic_control import ClassicControl

SIZES = (32, 4096)


def same_columns(result: tuple, expected: tuple) -> bool:
    """Bit-equal ``step_batch`` columns (states, observations, rewards, flags)."""
    states, observs = result[0], result[1]
    return (
        [s.tobytes() for s in states] == [s.tobytes() for s in expected[0]]
        and [o.tobytes() for o in observs] == [o.tobytes() for o in expected[1]]
        and list(result[2:5]) == list(expected[2:5])
    )


def stepper(env, actions: list, states: list) -> Callable[[], tuple]:
    """A call that steps this batch in ``env``."""
    return lambda: env.step_batch(actions, states)


def dispatch_section(title: str, make: Callable[..., object], rounds: int, min_time: float):
    """Sections 1 and 2: every batch on the workers, against the cost model's choice."""
    single = plangym.make("CartPole-v1")
    envs = {"workers only": make(inline_small_batches=False), "cost model": make()}
    rows = []
    try:
        for size in SIZES:
            states = trajectory_states(single, size)
            actions = [int(a) for a in (list(range(2)) * size)[:size]]
            expected = single.step_batch(actions, states)
            calls = {}
            exact = True
            for name, env in envs.items():
                for _ in range(12):  # the cost model measures both ways first
                    exact &= same_columns(env.step_batch(actions, states), expected)
                calls[name] = stepper(env, actions, states)
            contest = Contest(calls, min_time).run(rounds)
            rows.append(
                [
                    str(size),
                    rate(size, contest.median("workers only")),
                    rate(size, contest.median("cost model")),
                    contest.ratio("workers only", "cost model") + ("" if exact else " DIFFER"),
                ]
            )
    finally:
        for env in envs.values():
            env.close()
    print_table(
        title,
        ["B", "workers only steps/s", "cost model steps/s", "cost model / workers only"],
        rows,
    )


def vector_section(rounds: int, min_time: float, size: int = 4096) -> None:
    """Section 3: make_vec's step_batch with and without kernels in its workers."""
    single = ClassicControl("CartPole-v1", autoreset=False, remove_time_limit=False)
    states = trajectory_states(single, size)
    actions = [k % 2 for k in range(size)]
    expected = single.step_batch(actions, states, return_state=True)
    envs = {"kernels": plangym.make_vec("CartPole-v1", 2, vectorization_mode="async")}
    os.environ["PLANGYM_NO_KERNELS"] = "1"  # read by each worker as it builds its env
    try:
        envs["no kernels"] = plangym.make_vec("CartPole-v1", 2, vectorization_mode="async")
    finally:
        del os.environ["PLANGYM_NO_KERNELS"]
    try:
        exact = True
        for env in envs.values():
            env.reset(seed=0)
            exact &= same_columns(env.step_batch(actions, states), expected)
        calls = {name: stepper(env, actions, states) for name, env in envs.items()}
        contest = Contest(calls, min_time).run(rounds)
    finally:
        for env in envs.values():
            env.close()
    print_table(
        f"make_vec('CartPole-v1', 2, 'async').step_batch, B={size}",
        ["workers step", "steps/s", "ratio: median of rounds (min..max)"],
        [
            ["with kernels", rate(size, contest.median("kernels")), ""],
            ["PLANGYM_NO_KERNELS=1", rate(size, contest.median("no kernels")), ""],
            [
                "kernels / no kernels",
                "",
                contest.ratio("no kernels", "kernels") + ("" if exact else " DIFFER"),
            ],
        ],
    )


def ray_section(rounds: int, min_time: float) -> None:
    try:
        import ray
    except ImportError:
        print("\nRayEnv: Ray is not installed (pip install 'plangym[ray]'), skipped")
        return
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        dispatch_section(
            "RayEnv, 2 actors: CartPole-v1 batches",
            lambda **kw: plangym.make("CartPole-v1", n_workers=2, ray=True, **kw),
            rounds,
            min_time,
        )
    finally:
        ray.shutdown()


SECTIONS = ("parallel", "ray", "vector")


def main() -> None:
    warnings.simplefilter("ignore")
    parser = argparse.ArgumentParser(description="classic control batches through workers")
    parser.add_argument(
        "--rounds", type=positive_int, default=7, help="rotating rounds per section"
    )
    parser.add_argument("--min-time", type=float, default=0.2, help="seconds per sample")
    parser.add_argument("--sections", nargs="+", choices=SECTIONS, default=list(SECTIONS))
    args = parser.parse_args()
    if "parallel" in args.sections:
        dispatch_section(
            "ParallelEnv, 2 worker processes: CartPole-v1 batches",
            lambda **kw: plangym.make("CartPole-v1", n_workers=2, **kw),
            args.rounds,
            args.min_time,
        )
    if "ray" in args.sections:
        ray_section(args.rounds, args.min_time)
    if "vector" in args.sections:
        vector_section(args.rounds, args.min_time)


if __name__ == "__main__":
    main()
