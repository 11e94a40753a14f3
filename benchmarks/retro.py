"""RetroEnv.step_batch against a raw stable-retro loop doing the same work.

Both sides take 256 distinct states and, for each, restore it, play ``frameskip`` frames
(buttons, frame, RAM variables, reward, end), read the screen and save the new state. The
raw loop uses stable-retro's emulator directly with raw 1 MB save states; plangym adds its
input checks and its state encoding (header, volatile bytes zeroed, zero pages dropped).
The order of the two is rotated each round; the figure is the median of per-round ratios
(raw time / plangym time, so 1.0 means plangym costs nothing extra).

Also the cost per state of three encodings of the emulator's save state: raw bytes,
plangym's (non-zero pages) and zlib level 1, with their sizes.

Run: ``python benchmarks/retro.py [--rounds N] [--batch N]``.
"""

from __future__ import annotations

import argparse
import statistics
import time
import zlib

import numpy as np
from workloads import positive_int

from plangym.videogames.retro import RetroEnv
from plangym.videogames.retro.state import decode_state

NAME = "Airstriker-Genesis-v0"


def raw_loop(env: RetroEnv, raw_states: list[bytes], actions: np.ndarray) -> list:
    """What step_batch does, with stable-retro's calls alone."""
    unwrapped = env.retro_env
    em, data = unwrapped.em, unwrapped.data
    out = []
    for raw, action in zip(raw_states, actions, strict=True):
        em.set_state(raw)
        data.update_ram()
        masks = unwrapped.action_to_array(int(action))
        reward = 0.0
        for _ in range(env.frameskip):
            for player, mask in enumerate(masks):
                em.set_button_mask(mask, player)
            em.step()
            data.update_ram()
            reward += data.current_reward()
            if data.is_done():
                break
        out.append((em.get_state(), unwrapped.get_screen(apply_rotation=True), reward))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=positive_int, default=7)
    parser.add_argument("--batch", type=positive_int, default=256)
    args = parser.parse_args()
    env = RetroEnv(NAME)
    env.reset()
    rng = np.random.default_rng(0)
    states = []
    for action in rng.integers(env.n_actions, size=args.batch):
        states.append(env.step(int(action), return_state=True)[0])
    raw_states = [decode_state(state) for state in states]
    actions = rng.integers(env.n_actions, size=args.batch)
    ratios, plangym_times, raw_times = [], [], []
    for round_ in range(args.rounds):
        timings = {}
        for side in ("plangym", "raw") if round_ % 2 == 0 else ("raw", "plangym"):
            start = time.perf_counter()
            if side == "plangym":
                env.step_batch(actions, states=states)
            else:
                raw_loop(env, raw_states, actions)
            timings[side] = time.perf_counter() - start
        plangym_times.append(timings["plangym"])
        raw_times.append(timings["raw"])
        ratios.append(timings["raw"] / timings["plangym"])
    per = 1e3 / args.batch
    print(f"step_batch of {args.batch} states, frameskip {env.frameskip}:")
    print(f"  plangym   {statistics.median(plangym_times) * per:.3f} ms per element")
    print(f"  raw loop  {statistics.median(raw_times) * per:.3f} ms per element")
    print(f"  median ratio raw/plangym over {args.rounds} rounds: {statistics.median(ratios):.3f}")

    raw = raw_states[-1]
    encodings = {
        "raw bytes": (env.em.get_state, env.em.set_state),
        "plangym": (env.get_state, env.set_state),
        "zlib level 1": (
            lambda: zlib.compress(env.em.get_state(), 1),
            lambda s: env.em.set_state(zlib.decompress(s)),
        ),
    }
    print("state encodings (save + restore of one state):")
    for label, (save, restore) in encodings.items():
        env.em.set_state(raw)
        saved = save()
        start = time.perf_counter()
        for _ in range(200):
            saved = save()
        save_ms = (time.perf_counter() - start) * 1e3 / 200
        start = time.perf_counter()
        for _ in range(200):
            restore(saved)
        restore_ms = (time.perf_counter() - start) * 1e3 / 200
        size = len(saved) if isinstance(saved, bytes) else saved.nbytes
        cost = f"save {save_ms:.3f} ms  restore {restore_ms:.3f} ms"
        print(f"  {label:13s} {size / 1024:8.1f} KB  {cost}")
    env.close()


if __name__ == "__main__":
    main()
