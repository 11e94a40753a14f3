"""Single-process overhead of plangym's MuJoCo envs against raw loops, measured side by side.

For each env, a batch of distinct states taken along a random trajectory is stepped once
(dt=1, states returned) by three loops doing the same simulation work:

* ``raw exact``: the smallest loop that gives exact states, written against the mujoco
  bindings and gymnasium's unwrapped env: ``mj_setState`` and write back xpos/xipos
  (no ``mj_forward``: ``mj_step`` recomputes everything else), ``step``, ``mj_getState``
  and copy xpos/xipos;
* ``raw qpos/qvel``: what most code does (and plangym 0.1.32 did): gymnasium's own
  ``set_state(qpos, qvel)``, ``step``, copy qpos and qvel. Cheaper, and not exact (15-30 of
  30 steps differ in the issue's measurements);
* ``plangym``: ``env.step_batch(actions, states)`` with input checks, exact states.

Each round runs the three in a rotated order; the table shows median rates and the median
of the per-round ratios (this machine is shared and noisy). The goal is plangym / raw
exact >= 0.8.

Run: ``python benchmarks/mujoco_envs.py [--rounds 9] [--batch 256] [NAME ...]``.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time

import mujoco
import numpy as np
from workloads import positive_int

import plangym

INTEGRATION = mujoco.mjtState.mjSTATE_INTEGRATION
DEFAULT_NAMES = ["Hopper-v5", "HalfCheetah-v5", "Walker2d-v5", "Ant-v5", "Humanoid-v5"]


def trajectory_states(env, n: int, seed: int = 0) -> tuple[list, np.ndarray]:
    """``n`` states along a random trajectory (reset when an episode ends), and n actions."""
    env.seed(seed)
    env.action_space.seed(seed)
    env.reset()
    states = []
    for _ in range(n):
        env.step(env.sample_action())
        states.append(env.get_state())
    actions = np.stack([env.sample_action() for _ in range(n)])
    return states, actions


def loops(env, states: list, actions: np.ndarray) -> dict:
    unwrapped = env.gym_env.unwrapped
    model, data = unwrapped.model, unwrapped.data
    fields = [env.state_fields(s) for s in states]
    exact = [(f["integration"].copy(), f["xpos"].copy(), f["xipos"].copy()) for f in fields]
    nq = model.nq
    nv = model.nv
    qpos_qvel = [
        (f["integration"][1 : 1 + nq].copy(), f["integration"][1 + nq : 1 + nq + nv].copy())
        for f in fields
    ]
    size = mujoco.mj_stateSize(model, INTEGRATION)

    def raw_exact():
        for (integration, xpos, xipos), action in zip(exact, actions, strict=True):
            mujoco.mj_setState(model, data, integration, INTEGRATION)
            data.xpos[:] = xpos
            data.xipos[:] = xipos
            unwrapped.step(action)
            out = np.empty(size)
            mujoco.mj_getState(model, data, out, INTEGRATION)
            data.xpos.copy()
            data.xipos.copy()

    def raw_qpos_qvel():
        for (qpos, qvel), action in zip(qpos_qvel, actions, strict=True):
            unwrapped.set_state(qpos, qvel)
            unwrapped.step(action)
            data.qpos.copy()
            data.qvel.copy()

    def ours():
        env.step_batch(actions, states=states)

    return {"raw exact": raw_exact, "raw qpos/qvel": raw_qpos_qvel, "plangym": ours}


def measure(name: str, rounds: int, batch: int) -> dict[str, float]:
    env = plangym.make(name, render_mode=None)
    states, actions = trajectory_states(env, batch)
    contenders = loops(env, states, actions)
    order = list(contenders)
    times: dict[str, list[float]] = {key: [] for key in order}
    for round_index in range(rounds):
        shift = round_index % len(order)
        for key in order[shift:] + order[:shift]:
            start = time.perf_counter()
            contenders[key]()
            times[key].append(time.perf_counter() - start)
    env.close()
    result = {f"{key} (steps/s)": batch / statistics.median(t) for key, t in times.items()}
    for raw in ("raw exact", "raw qpos/qvel"):
        ratios = [r / p for r, p in zip(times[raw], times["plangym"], strict=True)]
        result[f"plangym / {raw}"] = statistics.median(ratios)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", default=DEFAULT_NAMES)
    parser.add_argument("--rounds", type=positive_int, default=9)
    parser.add_argument("--batch", type=positive_int, default=256)
    args = parser.parse_args()
    print(
        f"machine: {platform.machine()}, {platform.python_implementation()} "
        f"{platform.python_version()}, mujoco {mujoco.__version__}, "
        f"plangym {plangym.__version__}; batch {args.batch}, {args.rounds} rounds, dt=1"
    )
    columns = None
    for name in args.names:
        row = measure(name, args.rounds, args.batch)
        if columns is None:
            columns = list(row)
            print("| env | " + " | ".join(columns) + " |")
            print("|---|" + "---:|" * len(columns))
        shown = [f"{v:.2f}" if k.startswith("plangym /") else f"{v:,.0f}" for k, v in row.items()]
        print(f"| {name} | " + " | ".join(shown) + " |")


if __name__ == "__main__":
    main()
