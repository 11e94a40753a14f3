"""ParallelEnv against its references, measured side by side in one run.

Workloads (2 workers):

* W1 Atari planning: ALE/MsPacman-v5, 256 distinct states, 5 frames per step, RGB obs,
  states returned. References: our single-process ``step_batch``; the raw limit, two
  processes each running a tight ALE loop (restore, 5 frames, clone with RNG, screen) on
  half the states at the same time; plangym 0.1.32's ParallelEnv (frameskip=1, dt=5).
* W2 CartPole-v1, batch 4096, dt 1, states returned: against plangym 0.1.32's ParallelEnv
  and our sequential ``step_batch``.
* W3 latency: batch of 8 CartPole states on 2 workers, microseconds per call.
* Cost per transition against batch size (16..4096), CartPole.

plangym 0.1.32 runs in its own virtualenv (``make bench-baseline`` builds
``.venv-plangym01``); pass ``--baseline-python`` to point elsewhere, or leave it missing to
skip those rows. Rates are medians of interleaved rounds; the table reports ratios, which
survive the noise of a shared machine better than absolute times.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import platform
import statistics
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

import plangym

ROOT = Path(__file__).resolve().parent.parent


def median_rate(function, work: int, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return work / statistics.median(times)


def cartpole_states(env, n: int) -> list:
    env.seed(0)
    env.reset()
    states = []
    for i in range(n):
        if env.step(i % 2)[2]:
            env.reset()
        states.append(env.get_state())
    return states


def pacman_states(env, n: int) -> list:
    env.seed(0)
    env.reset()
    rng = np.random.default_rng(0)
    states = []
    for _ in range(n):
        env.step(int(rng.integers(env.n_actions)))
        states.append(env.get_state())
    return states


def raw_ale_loop(states_bytes: list[bytes], actions: list[int], rounds: int, queue) -> None:
    """One process of the raw limit: a tight loop over the ALE itself."""
    import ale_py
    import gymnasium as gym

    gym.register_envs(ale_py)
    env = gym.make("ALE/MsPacman-v5", frameskip=1, repeat_action_probability=0.0)
    env.reset(seed=0)
    ale = env.unwrapped.ale
    action_set = env.unwrapped._action_set
    ale_states = [ale_py.ALEState(blob) for blob in states_bytes]
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        for state, action in zip(ale_states, actions, strict=True):
            ale.restoreState(state)
            for _ in range(5):
                ale.act(action_set[action])
            ale.cloneState(include_rng=True)
            ale.getScreenRGB()
        times.append(time.perf_counter() - start)
    queue.put(statistics.median(times))


def raw_limit(states: list, actions: np.ndarray, rounds: int) -> float:
    """Frames/s of two raw ALE loops running at the same time, each on half the batch."""
    from plangym.videogames.atari import TRAILER_SIZE

    blobs = [state[:-TRAILER_SIZE].tobytes() for state in states]
    half = len(blobs) // 2
    context = mp.get_context("spawn")
    queue = context.Queue()
    processes = [
        context.Process(target=raw_ale_loop, args=(part, acts, rounds, queue))
        for part, acts in (
            (blobs[:half], actions[:half].tolist()),
            (blobs[half:], actions[half:].tolist()),
        )
    ]
    for process in processes:
        process.start()
    slowest = max(queue.get() for _ in processes)
    for process in processes:
        process.join()
    return len(states) * 5 / slowest


def baseline(python: Path | None, rounds: int) -> dict:
    if python is None or not python.exists():
        return {}
    done = subprocess.run(
        [str(python), str(ROOT / "benchmarks" / "plangym01_driver.py"), str(rounds)],
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
        cwd="/",
    )
    if done.returncode != 0:
        print(f"plangym 0.1.32 baseline failed:\n{done.stderr[-2000:]}", file=sys.stderr)
        return {}
    return json.loads(done.stdout.strip().splitlines()[-1])


def transition_cost(parallel, single, states, actions, rounds) -> tuple[str, str, str]:
    """Microseconds per transition for one batch size, parallel against single process."""
    size = len(states)
    ours = median_rate(lambda: parallel.step_batch(actions, states=states), size, rounds)
    alone = median_rate(lambda: single.step_batch(actions, states=states), size, rounds)
    measure = "us per transition: parallel / single"
    return (f"CartPole batch {size}", measure, f"{1e6 / ours:.1f} / {1e6 / alone:.1f}")


def run(rounds: int, baseline_python: Path | None) -> list[tuple[str, str, str]]:
    rows: list[tuple[str, str, str]] = []
    base = baseline(baseline_python, rounds)

    # W1
    parallel = plangym.make("ALE/MsPacman-v5", n_workers=2, frameskip=5)
    single = parallel.plan_env
    states = pacman_states(single, 256)
    actions = np.random.default_rng(1).integers(single.n_actions, size=256)
    parallel.step_batch(actions, states=states)
    ours = median_rate(lambda: parallel.step_batch(actions, states=states), 256 * 5, rounds)
    sequential = median_rate(lambda: single.step_batch(actions, states=states), 256 * 5, rounds)
    parallel.close()
    limit = raw_limit(states, actions, rounds)
    rows += [
        ("W1 MsPacman 256x5", "ParallelEnv frames/s", f"{ours:,.0f}"),
        ("W1 MsPacman 256x5", "single-process frames/s", f"{sequential:,.0f}"),
        ("W1 MsPacman 256x5", "raw limit (2 raw ALE loops) frames/s", f"{limit:,.0f}"),
        ("W1 MsPacman 256x5", "ParallelEnv / raw limit", f"{ours / limit:.2f}"),
        ("W1 MsPacman 256x5", "ParallelEnv / single process", f"{ours / sequential:.2f}"),
    ]
    if base:
        rows += [
            (
                "W1 MsPacman 256x5",
                "plangym 0.1.32 ParallelEnv frames/s",
                f"{base['w1_frames_s']:,.0f}",
            ),
            (
                "W1 MsPacman 256x5",
                "ParallelEnv / plangym 0.1.32",
                f"{ours / base['w1_frames_s']:.2f}",
            ),
        ]

    # W2 and W3
    parallel = plangym.make("CartPole-v1", n_workers=2)
    single = parallel.plan_env
    states = cartpole_states(single, 4096)
    actions = np.arange(4096) % 2
    parallel.step_batch(actions, states=states)
    ours = median_rate(lambda: parallel.step_batch(actions, states=states), 4096, rounds)
    sequential = median_rate(lambda: single.step_batch(actions, states=states), 4096, rounds)
    rows += [
        ("W2 CartPole 4096", "ParallelEnv steps/s", f"{ours:,.0f}"),
        ("W2 CartPole 4096", "single-process steps/s", f"{sequential:,.0f}"),
        ("W2 CartPole 4096", "ParallelEnv / single process", f"{ours / sequential:.2f}"),
    ]
    if base:
        rows += [
            (
                "W2 CartPole 4096",
                "plangym 0.1.32 ParallelEnv steps/s",
                f"{base['w2_parallel_steps_s']:,.0f}",
            ),
            (
                "W2 CartPole 4096",
                "ParallelEnv / plangym 0.1.32",
                f"{ours / base['w2_parallel_steps_s']:.2f}",
            ),
        ]
    small_states, small_actions = states[:8], actions[:8]
    calls = 200
    for _ in range(20):
        parallel.step_batch(small_actions, states=small_states)
    per_call = 1e6 / median_rate(
        lambda: [parallel.step_batch(small_actions, states=small_states) for _ in range(calls)],
        calls,
        rounds,
    )
    rows.append(("W3 CartPole batch 8", "ParallelEnv us per call", f"{per_call:,.0f}"))
    if base:
        rows += [
            ("W3 CartPole batch 8", "plangym 0.1.32 us per call", f"{base['w3_us_per_call']:,.0f}"),
            (
                "W3 CartPole batch 8",
                "plangym 0.1.32 / ParallelEnv",
                f"{base['w3_us_per_call'] / per_call:.2f}",
            ),
        ]
    for size in (16, 64, 256, 1024, 4096):
        rows.append(transition_cost(parallel, single, states[:size], actions[:size], rounds))
    parallel.close()
    return rows


def main() -> None:
    warnings.simplefilter("ignore")
    parser = argparse.ArgumentParser(description="ParallelEnv benchmark")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument(
        "--baseline-python", type=Path, default=ROOT / ".venv-plangym01" / "bin" / "python"
    )
    args = parser.parse_args()
    rows = run(args.rounds, args.baseline_python)
    print(
        f"machine: {platform.machine()}, {mp.cpu_count()} cores, "
        f"{platform.python_implementation()} {platform.python_version()}, "
        f"plangym {plangym.__version__}, {args.rounds} rounds"
    )
    print(f"| {'workload':<20} | {'measure':<38} | {'value':>15} |")
    print(f"|{'-' * 22}|{'-' * 40}|{'-' * 17}|")
    for workload, measure, value in rows:
        print(f"| {workload:<20} | {measure:<38} | {value:>15} |")


if __name__ == "__main__":
    main()
