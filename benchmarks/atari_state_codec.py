"""Fixed-size Atari states against the ALE's raw bytes: set_state + step + get_state rate.

``raw`` keeps states as the ALE's own serialization plus the 56-byte trailer (their length
moves with the generators' decimal text); ``fixed`` is :class:`AtariEnv` (generators as
binary words, one length per game). Both play the same game from pools of states taken in
random play with sticky actions, in rounds that alternate, and the script prints the median
ratio. Pools: ``one run`` (one trajectory, as a single planner sees), ``8 seeds`` (eight
differently seeded runs, as states crossing parallel workers) and ``64 seeds`` (more word
blocks than the codec remembers: every restore converts its generators).

    python benchmarks/atari_state_codec.py [--rounds 7] [--steps 2000] [--game ALE/MsPacman-v5]
"""

from __future__ import annotations

import argparse
import statistics
import struct
import time
from typing import Any

import ale_py
import numpy as np
from workloads import positive_int

from plangym.videogames.atari import AtariEnv
from plangym.videogames.atari.state import TRAILER_SIZE
from plangym.videogames.env import check_uint8_vector

_LAST_ACTION = struct.Struct("<q")


class RawStates(AtariEnv):
    """AtariEnv with the variable-length states it had before: ALE bytes, then the trailer."""

    FAST_PATHS = True  # each class declares its own; without it frames go through gymnasium

    def get_state(self) -> np.ndarray:
        raw = self.ale.cloneState(include_rng=self.clone_seeds).serialize()
        if self._lossy_save:
            self.ale.restoreState(ale_py.ALEState(raw))
        words = self._sticky_words.read(self._sticky_rng)
        parts = (self._state_prefix(), raw, _LAST_ACTION.pack(self._last_action), words)
        return np.frombuffer(b"".join(parts), dtype=np.uint8)

    def check_state(self, state: Any, name: str = "state") -> None:
        check_uint8_vector(state, name, self.name)
        start, md5 = self._codec.cartridge
        if state[start : start + len(md5)].tobytes() != md5:
            raise ValueError(f"{name}: not a state of {self.name}")

    def _set_checked_state(self, state: np.ndarray) -> None:
        trailer = state[-TRAILER_SIZE:].tobytes()
        (self._last_action,) = _LAST_ACTION.unpack_from(trailer)
        self.ale.restoreState(ale_py.ALEState(state[:-TRAILER_SIZE].tobytes()))
        self._sticky_words.write(self._sticky_rng, trailer[_LAST_ACTION.size :])


def pool(env: AtariEnv, seeds: int, size: int) -> list[np.ndarray]:
    """States from random play with sticky actions, ``size // seeds`` per seed."""
    states = []
    rng = np.random.default_rng(0)
    for seed in range(seeds):
        env.seed(seed)
        env.reset()
        for _ in range(size // seeds):
            env.step(int(rng.integers(env.n_actions)))
            states.append(env.get_state())
    return states


def seconds(env: AtariEnv, states: list[np.ndarray], actions: list[int], first: int) -> float:
    """CPU seconds of set_state + step + get_state over ``actions``, from state ``first``.

    CPU time, not wall time: other processes on a shared machine inflate wall time.
    """
    start = time.process_time()
    for i, action in enumerate(actions, first):
        env.set_state(states[i % len(states)])
        env.step(action)
        env.get_state()
    return time.process_time() - start


def round_ratio(envs: dict, pools: dict, actions: list[int], chunk: int = 100) -> float:
    """fixed/raw rate over ``actions``, the two alternating every ``chunk`` steps."""
    spent = dict.fromkeys(envs, 0.0)
    for n, first in enumerate(range(0, len(actions), chunk)):
        part = actions[first : first + chunk]
        for kind in sorted(envs, reverse=bool(n % 2)):  # alternate which goes first
            spent[kind] += seconds(envs[kind], pools[kind], part, first)
    return spent["raw"] / spent["fixed"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=positive_int, default=7)
    parser.add_argument("--steps", type=positive_int, default=2000)
    parser.add_argument("--game", default="ALE/MsPacman-v5")
    args = parser.parse_args()
    envs = {
        kind: cls(args.game, repeat_action_probability=0.25)
        for kind, cls in (("raw", RawStates), ("fixed", AtariEnv))
    }
    actions = np.random.default_rng(1).integers(envs["raw"].n_actions, size=args.steps).tolist()
    for name, seeds in (("one run", 1), ("8 seeds", 8), ("64 seeds", 64)):
        pools = {kind: pool(env, seeds, 256) for kind, env in envs.items()}
        lengths = {kind: sorted({len(s) for s in states}) for kind, states in pools.items()}
        ratios = [round_ratio(envs, pools, actions) for _ in range(args.rounds)]
        print(
            f"{args.game} {name}: fixed/raw rate {statistics.median(ratios):.3f} "
            f"(rounds {' '.join(f'{r:.3f}' for r in ratios)}); "
            f"state bytes raw {lengths['raw'][0]}-{lengths['raw'][-1]}, "
            f"fixed {'/'.join(map(str, lengths['fixed']))}"
        )


if __name__ == "__main__":
    main()
