"""Single-process overhead of plangym's dm_control envs against a raw dm_control loop.

For each task: a batch of distinct states along one random trajectory, one random action
each, dt=1, states returned.

* ``raw dm_control``: a tight loop over the suite environment itself doing the same work:
  restore the MuJoCo state (``mj_setState`` + ``mj_step1``) and the episode counter, step
  the environment (task, physics, reward, observation), read the flat observation and
  capture the MuJoCo state.
* ``plangym step_batch``: the same batch through the public API, with every input checked
  and exact states (generator, episode model fields, counters) restored and recorded.

The two run side by side, their order rotated each round; the ratio is the median of the
per-round ratios of plangym's rate to the raw rate (1.0: no overhead). Rates are measured
in this process's CPU time (``time.process_time``) by default, which time spent waiting for
a CPU on a shared machine does not inflate; ``--clock wall`` uses ``time.perf_counter``.

Run: ``python benchmarks/dm_control.py [--rounds 7] [--batch 256] [TASK ...]``.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from workloads import positive_int  # before its folder leaves sys.path, below

# Run as a script, this file's folder comes first on sys.path, and this file's name would
# hide the dm_control package itself.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [path for path in sys.path if Path(path or ".").resolve() != _HERE]

import numpy as np  # noqa: E402

from plangym.control.dm_control import DMControlEnv  # noqa: E402
from plangym.control.dm_control.state import STATE_SIG, mujoco  # noqa: E402

CLOCKS: dict[str, Callable[[], float]] = {"cpu": time.process_time, "wall": time.perf_counter}
DEFAULT_TASKS = ("walker-walk", "cheetah-run", "cartpole-balance", "reacher-easy")


def trajectory_states(env: DMControlEnv, n: int, seed: int) -> list[np.ndarray]:
    """``n`` distinct states along a random trajectory of ``env`` (episode ends included)."""
    rng = np.random.default_rng(seed)
    space = env.action_space
    env.reset()
    states = []
    for _ in range(n):
        env.step(rng.uniform(space.low, space.high).astype(np.float32), dt=3)
        states.append(env.get_state())
    return states


def raw_pass(suite_env, raw_states: list, actions: np.ndarray) -> list:
    """The raw loop: restore, step, read the observation, capture the state."""
    physics = suite_env.physics
    model, data = physics.model.ptr, physics.data.ptr
    size = mujoco.mj_stateSize(model, STATE_SIG)
    out = []
    for (physics_state, step_count), action in zip(raw_states, actions, strict=True):
        mujoco.mj_setState(model, data, physics_state, STATE_SIG)
        mujoco.mj_step1(model, data)
        suite_env._step_count, suite_env._reset_next_step = step_count, False
        time_step = suite_env.step(action)
        observation = time_step.observation["observations"]
        new_state = np.empty(size)
        mujoco.mj_getState(model, data, new_state, STATE_SIG)
        out.append((new_state, observation, time_step.reward))
    return out


def bench_task(
    name: str, rounds: int, batch: int, clock: Callable[[], float] = time.process_time
) -> tuple[float, float, float]:
    """Return (raw steps/s, plangym steps/s, median per-round ratio) for one task."""
    env = DMControlEnv(name, seed=0)
    raw_env = DMControlEnv(name, seed=0)  # its suite environment runs the raw loop
    states = trajectory_states(env, batch, seed=1)
    parts = {key: slice(start, stop) for key, start, stop in env.state_layout}
    raw_states = [(s[parts["physics"]].copy(), int(s[parts["step_count"]][0])) for s in states]
    space = env.action_space
    actions = np.random.default_rng(2).uniform(space.low, space.high, (batch, *space.shape))
    actions = actions.astype(np.float32)
    action_list = list(actions)
    suite_env = raw_env.gym_env

    def raw() -> None:
        raw_pass(suite_env, raw_states, actions)

    def plangym_batch() -> None:
        env.step_batch(action_list, states=states, dt=1)

    raw(), plangym_batch()  # warm up both
    raw_rates, plangym_rates, ratios = [], [], []
    for i in range(rounds):
        pair = [(raw, raw_rates), (plangym_batch, plangym_rates)]
        if i % 2:
            pair.reverse()
        rates = {}
        for function, bucket in pair:
            start = clock()
            function()
            rate = batch / (clock() - start)
            bucket.append(rate)
            rates[function] = rate
        ratios.append(rates[plangym_batch] / rates[raw])
    env.close()
    raw_env.close()
    return statistics.median(raw_rates), statistics.median(plangym_rates), statistics.median(ratios)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tasks", nargs="*", default=list(DEFAULT_TASKS))
    parser.add_argument("--rounds", type=positive_int, default=7)
    parser.add_argument("--batch", type=positive_int, default=256)
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="cpu")
    args = parser.parse_args()
    print(
        f"# Python {platform.python_version()}, batch {args.batch}, {args.rounds} rounds, "
        f"dt=1, {args.clock} time"
    )
    print(f"{'task':20s} {'raw steps/s':>12s} {'plangym steps/s':>16s} {'ratio':>6s}")
    for name in args.tasks:
        raw_rate, plangym_rate, ratio = bench_task(
            name, args.rounds, args.batch, CLOCKS[args.clock]
        )
        print(f"{name:20s} {raw_rate:12.0f} {plangym_rate:16.0f} {ratio:6.2f}", flush=True)


if __name__ == "__main__":
    main()
