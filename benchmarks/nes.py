"""MarioEnv.step_batch against a raw nes-py loop doing the same work.

Both sides step 256 distinct states (one action each, 5 frames, the state and the screen
returned): plangym through ``step_batch``, the raw loop through nes-py's ``set_state``,
``step``, ``get_state`` and a copy of the screen. Rounds alternate which side goes first;
the figure is the median of the per-round ratios (raw time / plangym time: 1.0 means
plangym costs nothing on top of nes-py).

    .venv/bin/python benchmarks/nes.py [--rounds 5] [--batch 256]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from workloads import positive_int

from plangym.videogames.nes import MarioEnv

NAME = "SuperMarioBros-1-1-v0"
FRAMESKIP = 5


def distinct_states(env: MarioEnv, n: int, seed: int) -> list[np.ndarray]:
    """States along a right-running trajectory (resets included when Mario dies)."""
    rng = np.random.default_rng(seed)
    env.reset()
    states = []
    for action in rng.choice([1, 3, 2, 4, 0], n):
        states.append(env.get_state())
        env.step(int(action), dt=1)
    return states


def raw_dump(env: MarioEnv, state: np.ndarray) -> np.ndarray:
    """nes-py's own dump of a state (screen included: nes-py restores nothing less)."""
    env.set_state(state)
    return env.nes_env.get_state()


def run_plangym(env: MarioEnv, actions: list[int], states: list[np.ndarray]) -> float:
    start = time.perf_counter()
    env.step_batch(actions, states=states, dt=1, return_state=True)
    return time.perf_counter() - start


def run_raw(env: MarioEnv, actions: list[int], raw_states: list[np.ndarray]) -> float:
    """The same frames straight through nes-py (its info dict built every frame)."""
    nes = env.nes_env
    action_bytes = env.gym_env.action_bytes
    start = time.perf_counter()
    for action, raw_state in zip(actions, raw_states, strict=True):
        nes.set_state(raw_state)
        nes.done = False
        for _ in range(FRAMESKIP):
            _, _, done, _ = nes.step(action_bytes[action])
            if done:
                break
        nes.get_state()
        nes.screen.copy()
        if done:
            nes.reset()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=positive_int, default=5)
    parser.add_argument("--batch", type=positive_int, default=256)
    args = parser.parse_args()
    env = MarioEnv(NAME, frameskip=FRAMESKIP, movement_type="complex")
    states = distinct_states(env, args.batch, seed=0)
    raw_states = [raw_dump(env, state) for state in states]
    actions = np.random.default_rng(1).integers(0, env.n_actions, args.batch).tolist()
    ratios, plangym_times, raw_times = [], [], []
    for round_ in range(args.rounds):
        if round_ % 2 == 0:
            raw = run_raw(env, actions, raw_states)
            ours = run_plangym(env, actions, states)
        else:
            ours = run_plangym(env, actions, states)
            raw = run_raw(env, actions, raw_states)
        ratios.append(raw / ours)
        plangym_times.append(ours)
        raw_times.append(raw)
    steps = args.batch
    print(f"{NAME}, {steps} distinct states x {FRAMESKIP} frames, {args.rounds} rounds")
    print(f"plangym step_batch : {steps / statistics.median(plangym_times):8.1f} steps/s")
    print(f"raw nes-py loop    : {steps / statistics.median(raw_times):8.1f} steps/s")
    print(f"ratio (median of rounds, raw time / plangym time): {statistics.median(ratios):.3f}")
    env.close()


if __name__ == "__main__":
    main()
