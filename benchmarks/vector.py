"""plangym.vector.AsyncVectorEnv against gymnasium.vector.AsyncVectorEnv, side by side.

Both vector envs get the same ``env_fns``, ``shared_memory=True``, ``copy=True`` and
``AutoresetMode.NEXT_STEP``; the measure is vector steps per second (one ``step`` call, all
sub-envs), with env-steps per second (times the number of sub-envs) alongside.

Workloads:

* ``cartpole``: CartPole-v1, 8 sub-envs, 2000 vector steps per round.
* ``mspacman``: ALE/MsPacman-v5 (gymnasium defaults: frameskip 4, sticky actions), 4
  sub-envs, 300 vector steps per round.

Protocol: both vector envs of a workload stay alive for all of its rounds; both are reset
with the same seed and warmed up on the same actions. Each round draws one seeded action
array (steps x sub-envs) that both step through, so their inputs are identical. The order
rotates: ours first on even rounds, gymnasium first on odd ones, so neither always runs
right after the other (this 2-core VM runs faster in a burst after idle time). Reported per
workload: the median steps/s of each side and the MEDIAN OF THE PER-ROUND RATIOS
(plangym / gymnasium), with their min and max. Goal: ratio >= 1.0 on both workloads.

Without an importable ``plangym.vector`` only gymnasium is timed (a note says so).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
import warnings
from dataclasses import dataclass, field

import gymnasium
import numpy as np
from gymnasium.vector import AutoresetMode
from workloads import positive_int

import plangym


def make_cartpole() -> gymnasium.Env:
    return gymnasium.make("CartPole-v1")


def make_mspacman() -> gymnasium.Env:
    import ale_py

    gymnasium.register_envs(ale_py)
    return gymnasium.make("ALE/MsPacman-v5")


@dataclass(frozen=True)
class Workload:
    """One benchmarked configuration: what each sub-env runs and how many there are."""

    label: str
    env_fn: object
    num_envs: int
    default_steps: int


WORKLOADS = {
    "cartpole": Workload("CartPole-v1", make_cartpole, 8, 2000),
    "mspacman": Workload("ALE/MsPacman-v5", make_mspacman, 4, 300),
}


@dataclass
class Result:
    """Per-round rates of one workload (``ours`` empty when plangym.vector is missing)."""

    workload: Workload
    gym: list[float] = field(default_factory=list)
    ours: list[float] = field(default_factory=list)

    def ratios(self) -> list[float]:
        return [mine / theirs for mine, theirs in zip(self.ours, self.gym, strict=True)]


def load_ours():
    """``plangym.vector.AsyncVectorEnv``, or None (with a note) when it does not import."""
    try:
        from plangym.vector import AsyncVectorEnv
    except Exception as error:  # the module may be missing or half-written
        print(f"note: plangym.vector does not import ({error!r}); timing gymnasium only")
        return None
    return AsyncVectorEnv


def build(cls, workload: Workload):
    env = cls(
        [workload.env_fn] * workload.num_envs,
        shared_memory=True,
        autoreset_mode=AutoresetMode.NEXT_STEP,
    )
    env.reset(seed=0)
    return env


def actions_for(env, steps: int, seed: int) -> np.ndarray:
    """A fixed seeded array of discrete actions, one row per vector step."""
    n_actions = int(env.single_action_space.n)
    return np.random.default_rng(seed).integers(n_actions, size=(steps, env.num_envs))


def steps_per_second(env, actions: np.ndarray) -> float:
    step = env.step
    start = time.perf_counter()
    for action in actions:
        step(action)
    return len(actions) / (time.perf_counter() - start)


def measure(workload: Workload, ours_cls, rounds: int, steps: int) -> Result:
    """Time both vector envs of one workload in rotating rounds."""
    result = Result(workload)
    envs = {"gym": build(gymnasium.vector.AsyncVectorEnv, workload)}
    try:
        if ours_cls is not None:
            envs["ours"] = build(ours_cls, workload)
        warm_up = actions_for(envs["gym"], max(steps // 4, 10), seed=12345)
        for env in envs.values():
            steps_per_second(env, warm_up)
        for index in range(rounds):
            actions = actions_for(envs["gym"], steps, seed=index)
            order = ["ours", "gym"] if index % 2 == 0 else ["gym", "ours"]
            for name in order:
                if name in envs:
                    getattr(result, name).append(steps_per_second(envs[name], actions))
    finally:
        for env in envs.values():
            env.close()
    return result


def table(results: list[Result]) -> list[str]:
    lines = [
        "| workload | gymnasium steps/s | plangym steps/s | ratio (median of rounds) | min..max "
        "| gymnasium env-steps/s | plangym env-steps/s |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for result in results:
        workload = result.workload
        gym = statistics.median(result.gym)
        if result.ours:
            ours = statistics.median(result.ours)
            ratios = result.ratios()
            cells = [
                f"{ours:,.0f}",
                f"{statistics.median(ratios):.2f}",
                f"{min(ratios):.2f}..{max(ratios):.2f}",
                f"{ours * workload.num_envs:,.0f}",
            ]
        else:
            cells = ["n/a", "n/a", "n/a", "n/a"]
        name = f"{workload.label} x{workload.num_envs}"
        lines.append(
            f"| {name} | {gym:,.0f} | {cells[0]} | {cells[1]} | {cells[2]} "
            f"| {gym * workload.num_envs:,.0f} | {cells[3]} |"
        )
    return lines


def main() -> None:
    warnings.simplefilter("ignore")
    parser = argparse.ArgumentParser(description="AsyncVectorEnv benchmark: plangym vs gymnasium")
    parser.add_argument(
        "--rounds", type=positive_int, default=9, help="alternating rounds per workload"
    )
    parser.add_argument(
        "--workloads",
        nargs="+",
        choices=sorted(WORKLOADS),
        default=list(WORKLOADS),
        help="which workloads to run (default: all)",
    )
    parser.add_argument(
        "--steps-cartpole",
        type=positive_int,
        default=WORKLOADS["cartpole"].default_steps,
        help="vector steps per CartPole round",
    )
    parser.add_argument(
        "--steps-mspacman",
        type=positive_int,
        default=WORKLOADS["mspacman"].default_steps,
        help="vector steps per MsPacman round",
    )
    args = parser.parse_args()
    steps = {"cartpole": args.steps_cartpole, "mspacman": args.steps_mspacman}
    print(
        f"machine: {platform.platform()}, {os.cpu_count()} cpus, "
        f"{platform.python_implementation()} {platform.python_version()}, "
        f"gymnasium {gymnasium.__version__}, plangym {plangym.__version__}"
    )
    print(
        f"{args.rounds} rotating rounds (plangym first on even rounds), "
        "shared_memory=True, copy=True, NEXT_STEP autoreset"
    )
    ours_cls = load_ours()
    results = [
        measure(WORKLOADS[name], ours_cls, args.rounds, steps[name])
        for name in WORKLOADS
        if name in args.workloads
    ]
    print("\n".join(table(results)))


if __name__ == "__main__":
    main()
