"""PlanMontezuma-v0: single-process ``step_batch`` against a raw ALE loop, and ``set_state``.

* ``step_batch``: 256 distinct states, coords observations, states returned, through the
  public API (input checks, sticky-action bookkeeping, Joe's tracker after every frame).
  The raw loop does the same emulator work by hand: restore the serialized state, play the
  frames, clone the state (with the ALE's generator when the env's states hold it:
  ``clone_seeds=True``, the default) and serialize it, read the RAM for the coords, and
  keep the new states and coords (as ``step_batch`` returns them).
  The two alternate for several rounds, the first starting in turn, and the ratio is the
  median of the per-round ratios, so machine noise hits both alike. Goal: >= 0.8.
* ``set_state``: plangym 0.1.32 reset the env in every restore (7.5 ms, measured by the
  issue's author); here a restore is the ALE's restore plus the bookkeeping header.

Run: ``python benchmarks/montezuma.py [--rounds 7] [--frameskip 1 4]``.
"""

from __future__ import annotations

import argparse
import statistics
import time

import ale_py
import numpy as np
from workloads import ale_clones, positive_int

import plangym

BATCH = 256
PLANGYM_01_SET_STATE_MS = 7.5


def walk_states(env, n: int, seed: int) -> list[np.ndarray]:
    """``n`` distinct states along a random walk, restarting when Joe dies."""
    rng = np.random.default_rng(seed)
    env.reset()
    states = []
    while len(states) < n:
        *_, terminal, _, _ = env.step(int(rng.integers(env.n_actions)))
        if terminal:
            env.reset()
        states.append(env.get_state())
    return states


def bench_step_batch(frameskip: int, rounds: int, batch: int) -> tuple[float, float, float]:
    """Return (plangym steps/s, raw steps/s, median per-round ratio)."""
    # No autoreset: a reset (about 20 ms for this game) is work the raw loop does not do.
    env = plangym.make("PlanMontezuma-v0", obs_type="coords", frameskip=frameskip, autoreset=False)
    states = walk_states(env, batch, seed=frameskip)
    actions = np.random.default_rng(1).integers(env.n_actions, size=batch)
    ale = env.ale
    ale_actions = env.gym_env.unwrapped._action_set
    raw_states = [clone.serialize() for clone in ale_clones(env, states)]
    clone_seeds = env.clone_seeds  # True by default: the states hold the ALE's generator

    def raw() -> list:
        # The new states and observations are kept, as a planner keeps them (and as
        # step_batch returns them): dropping them would let the loop reuse hot memory.
        kept = []
        for state, action in zip(raw_states, actions, strict=True):
            ale.restoreState(ale_py.ALEState(state))
            ale_action = ale_actions[action]
            for _ in range(frameskip):
                ale.act(ale_action)
            new_state = ale.cloneState(include_rng=clone_seeds).serialize()  # as the env's
            ram = ale.getRAM()
            coords = np.array([ram[42], ram[43], ram[3], ram[65]], dtype=np.float32)
            kept.append((new_state, coords))
        return kept

    def ours() -> None:
        env.step_batch(actions, states=states)

    ratios, ours_times, raw_times = [], [], []
    for round_ in range(rounds):
        pair = (ours, raw) if round_ % 2 == 0 else (raw, ours)
        times = {}
        for function in pair:
            start = time.perf_counter()
            function()
            times[function] = time.perf_counter() - start
        ours_times.append(times[ours])
        raw_times.append(times[raw])
        ratios.append(times[raw] / times[ours])
    env.close()
    return (
        batch / statistics.median(ours_times),
        batch / statistics.median(raw_times),
        statistics.median(ratios),
    )


def bench_set_state(n: int = 2000) -> float:
    """Median microseconds of one ``set_state`` of distinct states."""
    env = plangym.make("PlanMontezuma-v0", obs_type="coords", frameskip=4)
    states = walk_states(env, 64, seed=0)
    times = []
    for i in range(n):
        start = time.perf_counter()
        env.set_state(states[i % len(states)])
        times.append(time.perf_counter() - start)
    env.close()
    return statistics.median(times) * 1e6


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=positive_int, default=7)
    parser.add_argument("--frameskip", type=positive_int, nargs="+", default=[1, 4])
    parser.add_argument("--batch", type=positive_int, default=BATCH)
    args = parser.parse_args()
    print(f"{'workload':<42} {'plangym':>10} {'raw ALE':>10} {'ratio':>6}")
    for frameskip in args.frameskip:
        ours, raw, ratio = bench_step_batch(frameskip, args.rounds, args.batch)
        label = f"step_batch {args.batch} states, frameskip={frameskip} (steps/s)"
        print(f"{label:<42} {ours:>10.0f} {raw:>10.0f} {ratio:>6.2f}")
    micro = bench_set_state()
    print(
        f"set_state: {micro:.0f} us (plangym 0.1.32: {PLANGYM_01_SET_STATE_MS} ms, "
        f"{PLANGYM_01_SET_STATE_MS * 1000 / micro:.0f}x slower)"
    )


if __name__ == "__main__":
    main()
