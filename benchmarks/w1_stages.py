"""Where a W1 batch's time goes, stage by stage: in one process, and across the workers.

W1 is ``ParallelEnv.step_batch`` of 256 distinct ALE/MsPacman-v5 states x 5 frames, RGB
observations, states returned, 2 workers. Two tables:

1. **Per element, one process** (microseconds, medians of rounds that rotate the rows):
   each stage of plangym's exact step (``set_state``, the frames, the screen drawn into a
   row, ``get_state``) next to the raw ALE call it wraps, the raw limit's loop (restore an
   ``ALEState``, 5 frames, ``cloneState()``, ``getScreenRGB``; the ALE's generator in the
   raw states only with ``--clone-seeds``, as in plangym's).
2. **One batch across the workers** (milliseconds, medians over batches, ``copy=False``):
   the caller's time before the first chunk leaves (input checks, states into shared
   memory), how long the first and the last worker to finish were busy, how far apart
   they finished, the caller's CPU time during the batch, and the batch against the raw
   limit (two raw loops, each on half the states, started together).

``--clone-seeds`` keeps the ALE's own generator in the states and ``--equal-chunks`` cuts
batches into four equal chunks per worker, one sent at a time: two choices of the engine
of before 2026-11-27 (which also waited on the pipes through a selector and checked every
state in full at every batch).

    python benchmarks/w1_stages.py [--rounds 9] [--clone-seeds] [--equal-chunks]
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

import numpy as np
from parallel import RawLimit
from workloads import game_states, positive_int

import plangym

N_STATES, FRAMES = 256, 5


def per_element_rows(env, states, actions, rounds: int) -> list[tuple[str, float, float]]:
    """``(stage, plangym us, raw us)`` per element, one process."""
    import ale_py

    ale = env.ale
    # The raw side's states carry the ALE's generator exactly when plangym's do.
    with_rng = env.clone_seeds
    raw_states = [ale_py.ALEState(env.ale_bytes(state)) for state in states]
    for i, raw in enumerate(raw_states):
        ale.restoreState(raw)
        raw_states[i] = ale.cloneState(include_rng=with_rng)
    row = np.empty(env.obs_shape, np.uint8)
    codes = [env._ale_actions[a] for a in actions]  # what the raw loop feeds the ALE
    stages = {
        "restore": (
            lambda i: env.set_state(states[i]),
            lambda i: ale.restoreState(raw_states[i]),
        ),
        f"{FRAMES} frames": (
            lambda i: env.play(actions[i], 1),
            lambda i: [ale.act(codes[i]) for _ in range(FRAMES)],
        ),
        "screen": (lambda i: env.observe(row), lambda i: ale.getScreenRGB()),
        "clone": (lambda i: env.get_state(), lambda i: ale.cloneState(include_rng=with_rng)),
    }
    sides = ("plangym", "raw")
    restore = dict(zip(sides, stages["restore"], strict=True))
    samples: dict[tuple[str, str], list[float]] = {}
    for r in range(rounds):
        for stage, pair in stages.items():
            step = 1 - 2 * (r % 2)  # odd rounds time the raw side first
            for side, call in zip(sides[::step], pair[::step], strict=True):
                elapsed = 0.0
                for i in range(len(states)):
                    if stage != "restore":  # from each state, restored outside the timing
                        restore[side](i)
                    start = time.perf_counter()
                    call(i)
                    elapsed += time.perf_counter() - start
                samples.setdefault((stage, side), []).append(elapsed / len(states) * 1e6)

    def median_of(side: str, stage: str | None = None) -> float:
        """The median over rounds of one stage, or of the sum of the stages."""
        if stage is not None:
            return statistics.median(samples[stage, side])
        return statistics.median(
            [sum(samples[name, side][k] for name in stages) for k in range(rounds)]
        )

    rows = [(stage, median_of("plangym", stage), median_of("raw", stage)) for stage in stages]
    rows.append(("sum of the stages", median_of("plangym"), median_of("raw")))
    return rows


def batch_rows(parallel, states, actions, raw: RawLimit, rounds: int) -> list[tuple[str, float]]:
    """``(stage, ms)`` of one ``copy=False`` batch on the workers, medians over batches."""
    backend = parallel.scheduler.backend
    submit, result = backend.submit, backend.result
    events: list[tuple[float, str, int]] = []

    def timed_submit(worker, request):
        events.append((time.perf_counter(), "submit", worker))
        return submit(worker, request)

    def timed_result(worker, ticket, request):
        answer = result(worker, ticket, request)
        events.append((time.perf_counter(), "result", worker))
        return answer

    backend.submit, backend.result = timed_submit, timed_result
    rows: dict[str, list[float]] = {}
    try:
        for r in range(rounds):
            order = ("ours", "raw") if r % 2 else ("raw", "ours")
            for side in order:
                if side == "raw":
                    rows.setdefault("raw limit batch", []).append(raw.round() * 1e3)
                    continue
                events.clear()
                cpu, start = time.process_time(), time.perf_counter()
                parallel.step_batch(actions, states=states, copy=False)
                end = time.perf_counter()
                cpu = time.process_time() - cpu
                last_result = {w: t for t, kind, w in events if kind == "result"}
                first_submit = min(t for t, kind, _ in events if kind == "submit")
                finishes = sorted(last_result.values())
                add = rows.setdefault
                add("batch (ours)", []).append((end - start) * 1e3)
                add("before the first chunk leaves", []).append((first_submit - start) * 1e3)
                add("first worker done, from the first chunk", []).append(
                    (finishes[0] - first_submit) * 1e3
                )
                add("last worker done, from the first chunk", []).append(
                    (finishes[-1] - first_submit) * 1e3
                )
                add("gap between the two", []).append((finishes[-1] - finishes[0]) * 1e3)
                add("after the last result", []).append((end - finishes[-1]) * 1e3)
                add("caller CPU during the batch", []).append(cpu * 1e3)
                add("chunks", []).append(sum(kind == "submit" for _, kind, _ in events))
    finally:
        backend.submit, backend.result = submit, result
    table = [(name, statistics.median(values)) for name, values in rows.items()]
    ratios = [b / a for a, b in zip(rows["batch (ours)"], rows["raw limit batch"], strict=True)]
    table.append(("raw limit / ours (per-round median)", statistics.median(ratios)))
    return table


def main() -> None:
    warnings.simplefilter("ignore")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=positive_int, default=9)
    parser.add_argument(
        "--clone-seeds", action="store_true", help="states keep the ALE's generator"
    )
    parser.add_argument("--equal-chunks", action="store_true", help="4 equal chunks per worker")
    args = parser.parse_args()
    # Every batch on the workers: the timeline is theirs (the cost model would run a batch
    # in the caller now and then to measure it).
    parallel = plangym.make(
        "ALE/MsPacman-v5",
        n_workers=2,
        frameskip=FRAMES,
        clone_seeds=args.clone_seeds,
        inline_small_batches=False,
    )
    if args.equal_chunks:
        parallel.scheduler.chunks_per_worker = 4
    single = parallel.plan_env
    states = game_states(single, N_STATES)
    actions = np.random.default_rng(1).integers(single.n_actions, size=N_STATES)
    raw = RawLimit([single.ale_bytes(state) for state in states], actions)
    try:
        for _ in range(3):  # the cost model learns the chunks' cost, the caches fill
            parallel.step_batch(actions, states=states, copy=False)
        per_worker = parallel.scheduler.chunks_per_worker
        setting = f"clone_seeds={args.clone_seeds}, {per_worker} chunk(s) per worker"
        print(f"W1 stages ({setting}), {args.rounds} rounds, rotated")
        print("\n| stage, per element, one process | plangym us | raw ALE us | ratio |")
        print("|---|---|---|---|")
        for stage, ours, bare in per_element_rows(single, states, actions, args.rounds):
            print(f"| {stage} | {ours:.1f} | {bare:.1f} | {ours / bare:.2f} |")
        print("\n| one batch on 2 workers, copy=False | ms |")
        print("|---|---|")
        for stage, value in batch_rows(parallel, states, actions, raw, args.rounds):
            print(f"| {stage} | {value:.2f} |")
    finally:
        raw.close()
        parallel.close()


if __name__ == "__main__":
    main()
