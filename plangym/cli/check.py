"""``plangym check NAME``: the exactness self-check as a PASS/FAIL table.

While the checks run, a progress bar (tqdm, the ``viz`` extra) counts them on a terminal;
without tqdm they run without one.
"""

from __future__ import annotations

import argparse

from plangym.cli.args import (
    Command,
    Option,
    agent_steps,
    check_env_builds,
    env_settings,
    print_table,
)
from plangym.planning.progress import progress_bar
from plangym.selfcheck import CHECKS, SETTINGS, has_sticky_actions, run_checks

COMMAND = Command(
    "check",
    help="exactness self-check of one environment",
    description="Restore and replay in the same and in a fresh instance, compare "
    "step_batch with step, count frames; with and without sticky actions. Exits with "
    "status 1 if any check fails.",
    options=(
        Option.env_name("environment name, e.g. ALE/Pong-v5 or CartPole-v1"),
        Option("--steps", agent_steps, 40, "steps per check (default: 40)"),
        Option.seed("seed of the random actions (default: 0)"),
        Option.frameskip(),
    ),
)


def run(args: argparse.Namespace) -> int:
    """Run the checks and print the table; 1 if any check failed."""
    _, frameskip = env_settings(args)
    check_env_builds(args.name, frameskip=frameskip)
    settings = len(SETTINGS) if has_sticky_actions(args.name) else 1
    with progress_bar(len(CHECKS) * settings, desc=f"check {args.name}", unit="check") as bar:
        results = run_checks(
            args.name,
            n_steps=args.steps,
            seed=args.seed,
            env_kwargs={"frameskip": frameskip},
            on_result=lambda result: bar.update(1),
        )
    status = {(r.check, r.setting): r.status for r in results}
    print(
        f"check {args.name}: frameskip {frameskip}, {args.steps} steps per check, seed {args.seed}"
    )
    print_table(["check", *SETTINGS], [[c, *(status[c, s] for s in SETTINGS)] for c in CHECKS])
    failures = [r for r in results if r.status == "FAIL"]
    for failure in failures:
        print(f"FAIL {failure.check} ({failure.setting}): {failure.detail}")
    print("all checks passed" if not failures else f"{len(failures)} checks failed")
    return 1 if failures else 0
