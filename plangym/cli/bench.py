"""``plangym bench NAME``: step_batch throughput, one process against ``ParallelEnv``.

Both envs step the same batch of distinct states (taken along a random trajectory) with
the same random actions, in alternating rounds so that machine noise hits both alike; the
table shows the median round.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import plangym
from plangym.cli.args import (
    Command,
    Option,
    agent_steps,
    check_env_builds,
    env_settings,
    positive_int,
    print_table,
    worker_count,
)
from plangym.cli.memory import check_fits_in_memory
from plangym.core import PlanEnv
from plangym.planning.common import ActionSampler, start_episode
from plangym.planning.progress import progress_bar

COMMAND = Command(
    "bench",
    help="step_batch throughput: one process against ParallelEnv",
    description="Time step_batch on a batch of distinct states in one process and on a "
    "ParallelEnv, round by round; print steps/s and frames/s.",
    options=(
        Option.env_name("environment name"),
        Option("--workers", worker_count, 2, "ParallelEnv workers (default: 2)"),
        Option("--batch", positive_int, 256, "states per batch (default: 256)"),
        Option("--rounds", positive_int, 5, "timed rounds (default: 5)"),
        Option("--dt", agent_steps, 1, "agent steps per element (default: 1)"),
        Option.frameskip(),
        Option.seed("seed of states and actions (default: 0)"),
    ),
)


def run(args: argparse.Namespace) -> int:
    """Measure and print the table."""
    _, frameskip = env_settings(args)
    check_env_builds(args.name, frameskip=frameskip)
    # Each setup (one process, ParallelEnv) steps one untimed round and the timed ones.
    with progress_bar(2 * (args.rounds + 1), desc=f"bench {args.name}", unit="round") as bar:
        rows = measure(
            args.name,
            args.workers,
            args.batch,
            args.rounds,
            args.dt,
            frameskip,
            args.seed,
            on_round=bar.update,
        )
    print(
        f"bench {args.name}: batch of {args.batch} distinct states, dt {args.dt}, "
        f"frameskip {frameskip}, median of {args.rounds} rounds"
    )
    single_rate = rows[0][1]
    print_table(
        ["setup", "steps/s", "frames/s", "vs one process"],
        [[label, rate, frames, f"{rate / single_rate:.2f}x"] for label, rate, frames in rows],
    )
    return 0


def measure(
    name: str,
    workers: int,
    batch: int,
    rounds: int,
    dt: int,
    frameskip: int,
    seed: int,
    on_round: Callable[[], Any] | None = None,
) -> list[tuple[str, float, float]]:
    """``(label, steps/s, frames/s)`` for one process and for ``ParallelEnv(workers)``.

    The two are timed round by round, in turn, so machine noise hits both alike; an env
    that allows one simulator per process (``SINGLETON``, e.g. stable-retro) is timed alone
    first and closed before the workers start. ``on_round`` is called after each round of
    each env (a progress bar's ``update``), warm-up rounds included.
    """
    single = plangym.make(name, frameskip=frameskip)
    parallel_label = f"ParallelEnv, {workers} worker{'s' if workers > 1 else ''}"
    try:
        check_fits_in_memory("--batch", batch, single)
        states = distinct_states(single, batch, seed)
        actions = ActionSampler(single.action_space, np.random.default_rng(seed)).sample(batch)
        if single.SINGLETON:
            timed = time_rounds(
                {"one process": single}, actions, states, dt, frameskip, rounds, on_round
            )
            single.close()
            parallel = plangym.make(name, n_workers=workers, frameskip=frameskip)
            envs: dict[str, PlanEnv] = {parallel_label: parallel}
        else:
            timed = {}
            parallel = plangym.make(name, n_workers=workers, frameskip=frameskip)
            envs = {"one process": single, parallel_label: parallel}
        try:
            timed.update(time_rounds(envs, actions, states, dt, frameskip, rounds, on_round))
        finally:
            parallel.close()
    finally:
        single.close()
    rows = []
    for label, (measured, frames) in timed.items():
        median = statistics.median(measured)
        # Agent steps: dt of them per element (fewer where an episode ended), not elements.
        rows.append((label, frames / frameskip / median, frames / median))
    return rows


def time_rounds(
    envs: dict[str, Any],
    actions: Any,
    states: list,
    dt: int,
    frameskip: int,
    rounds: int,
    on_round: Callable[[], Any] | None = None,
) -> dict[str, tuple[list[float], int]]:
    """Step the batch on each env in turn, ``rounds`` times after one untimed warm-up round.

    Returns ``{label: (seconds of each round, frames of one batch)}``; ``on_round`` is
    called, outside the timing, after each env's round.
    """
    times: dict[str, list[float]] = {label: [] for label in envs}
    frames: dict[str, int] = {}
    for round_index in range(rounds + 1):
        for label, env in envs.items():
            start = time.perf_counter()
            *_, infos = env.step_batch(actions, states=states, dt=dt)
            elapsed = time.perf_counter() - start
            frames[label] = sum(int(info.get("n_step", dt * frameskip)) for info in infos)
            if round_index:
                times[label].append(elapsed)
            if on_round is not None:
                on_round()
    return {label: (times[label], frames[label]) for label in envs}


def distinct_states(env: Any, n: int, seed: int) -> list:
    """``n`` states along a random trajectory (a new episode whenever one ends)."""
    sampler = ActionSampler(env.action_space, np.random.default_rng(seed))
    start_episode(env, seed)
    states = []
    for action in sampler.sample(n):
        *_, terminal, truncated, _ = env.step(action)
        if terminal or truncated:
            env.reset()
        states.append(env.get_state())
    return states
