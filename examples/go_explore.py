"""Go-Explore on Montezuma's Revenge with plangym's exact states.

An archive maps cells (level, room, objects, x and y cut into a grid) to the best state
that reached them. Each iteration picks cells (rarely chosen ones first), restores their
states and explores from them with random, mostly repeated actions, all elements of one
iteration in a single ``step_batch``; every new cell, or a known cell reached with a
higher score, goes into the archive. Exact restores are what make this work: a cell's
state continues exactly as the run that found it.

Run ``python examples/go_explore.py --steps 20000`` (or ``--steps 300000``) to reproduce
a row of the table in docs/planning.md; ``--workers N`` steps the batches on N processes.

>>> result = go_explore(plangym.make("PlanMontezuma-v0", **ENV_KWARGS), budget=400, seed=0)
>>> result.steps, 1 in result.rooms
(400, True)
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import plangym

# Four frames per step as in Go-Explore; objects are the inventory (keys matter).
ENV_KWARGS: dict[str, Any] = {
    "obs_type": "coords",
    "frameskip": 4,
    "score_objects": True,
    "render_mode": None,
}
CELL_SIZE = 16  # pixels of x and y per cell
BATCH = 16  # cells explored per iteration
EXPLORE_STEPS = 50  # steps of exploration from a chosen cell
REPEAT_PROBABILITY = 0.9  # chance to repeat the previous action (moves Joe further)


@dataclass
class Cell:
    """The best state known for one cell and how often it was chosen."""

    state: np.ndarray
    score: float
    actions: tuple[int, ...]  # from the reset, to replay the path (sticky actions off)
    chosen: int = 0


@dataclass
class Result:
    """What a run found."""

    steps: int
    rooms: set[tuple[int, int]] | set[int] = field(default_factory=set)
    level_rooms: set[tuple[int, int]] = field(default_factory=set)
    cells: int = 0
    best_score: float = 0.0
    seconds: float = 0.0
    archive: dict[tuple, Cell] = field(default_factory=dict)


def cell_of(info: dict[str, Any]) -> tuple[int, int, int, int, int]:
    """Return the cell of a step: level, room, objects and the grid square of Joe."""
    return (
        info["level"],
        info["room"],
        int(info["objects"]),
        info["x"] // CELL_SIZE,
        info["y"] // CELL_SIZE,
    )


def go_explore(env: Any, budget: int, seed: int = 0) -> Result:
    """Explore ``env`` (a PlanMontezuma env) for ``budget`` steps; return what was found."""
    rng = np.random.default_rng(seed)
    start = time.perf_counter()
    # A seeded reset: a cell's actions replayed from it give its state byte for byte.
    state, _, info = env.reset(seed=seed)
    archive = {cell_of(info): Cell(state, 0.0, ())}
    n_actions = env.n_actions
    steps = 0
    while steps < budget:
        keys = list(archive)
        weights = np.array([1.0 / np.sqrt(archive[key].chosen + 1.0) for key in keys])
        picks = rng.choice(len(keys), size=BATCH, p=weights / weights.sum())
        walkers = []  # [state, score, actions, last action]
        for pick in picks:
            cell = archive[keys[pick]]
            cell.chosen += 1
            walkers.append([cell.state, cell.score, cell.actions, int(rng.integers(n_actions))])
        for _ in range(EXPLORE_STEPS):
            if not walkers or steps >= budget:
                break
            walkers = walkers[: budget - steps]
            for walker in walkers:
                if rng.random() >= REPEAT_PROBABILITY:
                    walker[3] = int(rng.integers(n_actions))
            actions = [walker[3] for walker in walkers]
            new_states, _, rewards, terminals, _, infos = env.step_batch(
                actions, states=[walker[0] for walker in walkers]
            )
            steps += len(walkers)
            alive = []
            for walker, new_state, reward, terminal, info in zip(
                walkers, new_states, rewards, terminals, infos, strict=True
            ):
                if terminal:  # Joe died (or entered room 8): the walker stops here
                    continue
                walker[0] = new_state
                walker[1] += reward
                walker[2] = (*walker[2], walker[3])
                key = cell_of(info)
                known = archive.get(key)
                if known is None or walker[1] > known.score:
                    archive[key] = Cell(new_state, walker[1], walker[2])
                alive.append(walker)
            walkers = alive
    level_rooms = {(key[0], key[1]) for key in archive}
    return Result(
        steps=steps,
        rooms={room for _, room in level_rooms},
        level_rooms=level_rooms,
        cells=len(archive),
        best_score=max(cell.score for cell in archive.values()),
        seconds=time.perf_counter() - start,
        archive=archive,
    )


def main() -> None:
    """Run Go-Explore from the command line and print what it found."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=100_000, help="step budget")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=None, help="worker processes")
    args = parser.parse_args()
    env = plangym.make("PlanMontezuma-v0", n_workers=args.workers, **ENV_KWARGS)
    try:
        result = go_explore(env, args.steps, args.seed)
    finally:
        env.close()
    print(
        f"steps={result.steps} frames={result.steps * ENV_KWARGS['frameskip']} "
        f"seconds={result.seconds:.1f} cells={result.cells} "
        f"rooms={sorted(result.rooms)} level_rooms={sorted(result.level_rooms)} "
        f"best_score={result.best_score:g}"
    )
    for key, cell in sorted(result.archive.items(), key=lambda item: len(item[1].actions)):
        if key[1] != 1:
            print(f"first cell outside room 1: {key} after {len(cell.actions)} steps")
            print("actions:", list(cell.actions))
            break


if __name__ == "__main__":
    main()
