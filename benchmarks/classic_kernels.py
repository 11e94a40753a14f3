"""Classic control batches stepped by the vectorized NumPy kernels, against their references.

Everything runs in this one process. The sections:

1. CartPole-v1, B=4096 states taken along a random-action trajectory, random int64 actions:
   the ARRAY form of ``step_batch`` (one record array of states in, arrays out) against
   the RAW gymnasium loop, which for each element sets the unwrapped env's ``state`` and
   ``steps_beyond_terminated`` (and the time limit's ``_elapsed_steps`` when the record
   keeps one) as the record says, calls ``unwrapped.step(action)`` and collects the
   observation, reward and flags. The raw loop gets its inputs as plain Python lists
   converted beforehand (untimed), so it is the tightest element-by-element loop there
   is. Goal >= 50x; from a plain list of states (what a planner may keep) >= 20x. Against
   plangym 0.1.32's sequential ``step_batch`` on 4096 CartPole
   states (``benchmarks/plangym01_driver.py``, workload ``w2_sequential``, run in its own
   virtualenv: ``make bench-baseline`` builds ``.venv-plangym01``). Goal >= 100x.
2. The LIST form (a list of 0-d states in, lists out) with kernels against today's path:
   the same env with ``_kernel = None``, which steps the batch in the element-by-element
   bulk loop. Goal >= 5x.
3. Acrobot-v1 (Discrete(3): int64 actions) and Pendulum-v1 (Box: float32 actions of shape
   (B, 1)), array form against their raw loops. Goal >= 20x.
4. Cost per transition of CartPole-v1 against B = 1, 2, 4, ..., 65536 (array form), and
   of the other four envs up to B = 256: the kernel path (the kernel's ``min_batch``
   lowered to 1 while it is timed) against the bulk loop (``_kernel = None``). It reports
   the crossover (the B from which the kernel is faster at every larger B) and what the
   env's own choice (kernel from its ``min_batch`` up, bulk loop below) costs against the
   faster of the two at each B.
5. UCT (``plangym.planning.UCTPlanner`` with the budget that keeps the pole up: 2 waves
   of 16, rollouts of 30 random actions held 1 step) playing CartPole-v1 with
   ``play(env, planner, max_steps=500, seed=s)`` for seeds 0..9, three ways: BEFORE
   (``_kernel = None`` and an env whose ``step_batch`` takes lists only, so the planner
   uses the list form: the path planners took before the kernels), KERNELS with the list
   form, and KERNELS with the ARRAY form (what ``plangym plan`` does now): wall time per
   game and in total. Every way is exact, so all play the same game; the table says
   whether they did. (The tree search's own Python was also trimmed in the same change;
   BEFORE runs the trimmed tree too, so it isolates what the env side saves.)

Protocol: every contender of a section stays alive for all its rounds and is timed once
per round, in an order that rotates from round to round, so a slow spell of the shared
machine hits all alike. A round's sample of a fast call is the mean over enough calls to
last ``--min-time`` seconds (counted once, at warm-up). Ratios are the MEDIAN OF THE
PER-ROUND RATIOS, with their min..max; rates are medians over the rounds. In section 5 the
games are the rounds: each seed is played once with each path, which goes first
alternating. Before timing, each fast path's results are checked equal to the raw loop's.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import statistics
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import gymnasium
import numpy as np
from workloads import positive_int, states_along

import plangym
from plangym.columns import is_record_block, records_to_states, states_to_records
from plangym.control.classic_control.kernels import kernels_enabled, libm_check
from plangym.planning import UCTPlanner
from plangym.planning.common import play
from plangym.utils import find_time_limit

ROOT = Path(__file__).resolve().parent.parent
BASELINE_PYTHON = ROOT / ".venv-plangym01" / "bin" / "python"
COST_OTHERS = ("Acrobot-v1", "MountainCar-v0", "MountainCarContinuous-v0", "Pendulum-v1")
# The UCT budget that keeps CartPole's pole up for 500 steps (tests/planning/test_planning.py,
# docs/planning.md): plangym plan's defaults (rollouts of 6) let most games end early.
UCT_PARAMS = {"waves": 2, "wave_size": 16, "rollout_depth": 30, "rollout_dt": 1}


# Timing ---------------------------------------------------------------------------------------
def calls_for(function: Callable[[], object], min_time: float) -> int:
    """Warm ``function`` up; return how many calls last at least ``min_time`` seconds."""
    function()
    start = time.perf_counter()
    function()
    once = time.perf_counter() - start
    return max(1, math.ceil(min_time / max(once, 1e-7)))


def seconds_per_call(function: Callable[[], object], calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        function()
    return (time.perf_counter() - start) / calls


@dataclass
class Contest:
    """Named contenders timed in rotating rounds: seconds per call, one sample per round.

    ``functions`` are timed here; ``reported`` ones time themselves and return seconds per
    call (plangym 0.1.32, timed in its own interpreter).
    """

    functions: dict[str, Callable[[], object]]
    min_time: float
    reported: dict[str, Callable[[], float]] = field(default_factory=dict)
    samples: dict[str, list[float]] = field(default_factory=dict)

    def run(self, rounds: int) -> Contest:
        calls = {name: calls_for(f, self.min_time) for name, f in self.functions.items()}
        names = [*self.functions, *self.reported]
        self.samples = {name: [] for name in names}
        for index in range(rounds):
            shift = index % len(names)
            for name in names[shift:] + names[:shift]:
                if name in self.reported:
                    sample = self.reported[name]()
                else:
                    sample = seconds_per_call(self.functions[name], calls[name])
                self.samples[name].append(sample)
        return self

    def median(self, name: str) -> float:
        return statistics.median(self.samples[name])

    def ratio(self, slow: str, fast: str) -> str:
        """How many times faster ``fast`` is: median of the per-round ratios (min..max)."""
        return ratio_cell(self.samples[slow], self.samples[fast])


def ratio_cell(slow: list[float], fast: list[float]) -> str:
    ratios = [s / f for s, f in zip(slow, fast, strict=True)]
    digits = 2 if max(ratios) < 10 else 1
    middle, low, high = statistics.median(ratios), min(ratios), max(ratios)
    return f"{middle:,.{digits}f}x ({low:,.{digits}f}..{high:,.{digits}f})"


def rate(batch: int, seconds: float) -> str:
    return f"{batch / seconds:,.0f}"


def print_table(title: str, header: list[str], rows: list[list[str]]) -> None:
    print(f"\n### {title}\n")
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


# Inputs ---------------------------------------------------------------------------------------
def random_action(env, rng: np.random.Generator):
    space = env.action_space
    if isinstance(space, gymnasium.spaces.Discrete):
        return int(rng.integers(space.n))
    return rng.uniform(space.low, space.high).astype(space.dtype)


def random_actions(env, batch: int, seed: int = 1) -> np.ndarray:
    """int64 ``(B,)`` for a Discrete space, ``(B, *shape)`` of the space's dtype for a Box."""
    rng = np.random.default_rng(seed)
    space = env.action_space
    if isinstance(space, gymnasium.spaces.Discrete):
        return rng.integers(space.n, size=batch, dtype=np.int64)
    low = np.broadcast_to(space.low, (batch, *space.shape))
    high = np.broadcast_to(space.high, (batch, *space.shape))
    return rng.uniform(low, high).astype(space.dtype)


def trajectory_states(env, batch: int, seed: int = 0) -> list:
    """``batch`` states along a random-action trajectory, reset when an episode ends."""
    rng = np.random.default_rng(seed)
    return states_along(
        env, batch, lambda _: random_action(env, rng), seed, restart=lambda step: step[2] or step[3]
    )


def array_step(env, actions: np.ndarray, records: np.ndarray) -> Callable[[], tuple]:
    """The array form: record array in, arrays out."""
    return lambda: env.step_batch(actions, records, arrays=True)


# The raw gymnasium loop -----------------------------------------------------------------------
class RawLoop:
    """Set the physics of a bare gymnasium env as each record says and step it, one by one."""

    def __init__(self, name: str, records: np.ndarray, actions: np.ndarray):
        self.env = gymnasium.make(name, disable_env_checker=True)
        self.env.reset(seed=0)
        self.unwrapped = self.env.unwrapped
        # Plain Python inputs, converted here (untimed): the tightest loop there is.
        self.physics = [row.copy() for row in records["physics"]]
        self.beyond = None
        if hasattr(self.unwrapped, "steps_beyond_terminated"):
            self.beyond = [
                None if v < 0 else v for v in records["steps_beyond_terminated"].tolist()
            ]
        elapsed = records["elapsed_steps"]
        self.limit = find_time_limit(self.env) if (elapsed >= 0).any() else None
        self.elapsed = np.maximum(elapsed, 0).tolist()
        self.actions = actions.tolist() if actions.ndim == 1 else list(actions)

    def __call__(self) -> tuple[list, list, list, list]:
        unwrapped, limit, beyond, elapsed = self.unwrapped, self.limit, self.beyond, self.elapsed
        step = unwrapped.step
        observs, rewards, terminals, truncateds = [], [], [], []
        for i, (physics, action) in enumerate(zip(self.physics, self.actions, strict=True)):
            unwrapped.state = physics
            if beyond is not None:
                unwrapped.steps_beyond_terminated = beyond[i]
            if limit is not None:
                limit._elapsed_steps = elapsed[i]
            obs, reward, terminal, truncated, _ = step(action)
            if limit is not None:
                truncated = elapsed[i] + 1 >= limit._max_episode_steps
            observs.append(obs)
            rewards.append(reward)
            terminals.append(terminal)
            truncateds.append(truncated)
        return observs, rewards, terminals, truncateds


def same_results(raw: tuple, ours: tuple) -> bool:
    """Whether the array form's (observs, rewards, terminals, truncateds) are the raw loop's."""
    r_obs, r_rew, r_term, r_trunc = raw
    obs, rew, term, trunc = (np.asarray(column) for column in ours)
    return (
        np.stack(r_obs).tobytes() == obs.tobytes()
        and np.array(r_rew, dtype=np.float64).tobytes() == rew.astype(np.float64).tobytes()
        and np.array_equal(np.array(r_term, dtype=bool), term.astype(bool))
        and np.array_equal(np.array(r_trunc, dtype=bool), trunc.astype(bool))
    )


# Sections -------------------------------------------------------------------------------------
def batch_section(name: str, batch: int, rounds: int, min_time: float, baseline) -> None:
    """Sections 1 and 3: array form against the raw loop (and plangym 0.1.32 for CartPole)."""
    env = plangym.make(name)
    listed = trajectory_states(env, batch)  # as a planner may keep them: a list of states
    records = states_to_records(listed, env.state_dtype)
    actions = random_actions(env, batch)
    raw = RawLoop(name, records, actions)
    ours = array_step(env, actions, records)
    from_list = array_step(env, actions, listed)
    exact = same_results(raw(), ours()[1:5]) and same_results(raw(), from_list()[1:5])
    reported = {}
    if baseline is not None and name == "CartPole-v1" and batch == 4096:
        reported["plangym01"] = lambda: batch / baseline.rate("w2_sequential")
    contenders = {"array": ours, "from_list": from_list, "raw": raw}
    contest = Contest(contenders, min_time, reported).run(rounds)
    workload = f"{name} B={batch}"
    differ = "" if exact else " RESULTS DIFFER"
    rows = [
        [workload, "array form (records in, arrays out)", rate(batch, contest.median("array")), ""],
        [
            workload,
            "array form from a list of states (list in, arrays out)",
            rate(batch, contest.median("from_list")),
            "",
        ],
        [workload, "raw gymnasium loop", rate(batch, contest.median("raw")), ""],
        [workload, "array form / raw loop", "", contest.ratio("raw", "array") + differ],
        [workload, "from a list / raw loop", "", contest.ratio("raw", "from_list") + differ],
    ]
    if reported:
        rows += [
            [
                workload,
                "plangym 0.1.32 sequential step_batch",
                rate(batch, contest.median("plangym01")),
                "",
            ],
            [workload, "array form / plangym 0.1.32", "", contest.ratio("plangym01", "array")],
        ]
    goal = 50 if name == "CartPole-v1" else 20
    title = f"{name}, B={batch}: array form vs raw loop (goal >= {goal}x"
    title += ", >= 20x from a list, >= 100x vs plangym 0.1.32)" if name == "CartPole-v1" else ")"
    print_table(
        title, ["workload", "measure", "steps/s", "ratio: median of rounds (min..max)"], rows
    )
    if name == "CartPole-v1" and baseline is None:
        print("\nplangym 0.1.32: not installed (make bench-baseline)")


def list_section(batch: int, rounds: int, min_time: float) -> None:
    """Section 2: the list form with kernels against today's bulk loop."""
    fast, today = plangym.make("CartPole-v1"), plangym.make("CartPole-v1")
    today._kernel = None
    states = trajectory_states(fast, batch)
    actions = random_actions(fast, batch)
    a, b = fast.step_batch(actions, states), today.step_batch(actions, states)
    exact = all(np.array_equal(x, y) for x, y in zip(a[1], b[1], strict=True)) and a[2:5] == b[2:5]
    contest = Contest(
        {
            "kernel": lambda: fast.step_batch(actions, states),
            "today": lambda: today.step_batch(actions, states),
        },
        min_time,
    ).run(rounds)
    rows = [
        ["kernels", rate(batch, contest.median("kernel")), ""],
        ["today's path (_kernel = None)", rate(batch, contest.median("today")), ""],
        [
            "kernels / today",
            "",
            contest.ratio("today", "kernel") + ("" if exact else " RESULTS DIFFER"),
        ],
    ]
    print_table(
        f"CartPole-v1, B={batch}, list form (0-d states in, lists out): "
        "kernels vs today (goal >= 5x)",
        ["path", "steps/s", "ratio: median of rounds (min..max)"],
        rows,
    )


def cost_section(name: str, max_batch: int, rounds: int, min_time: float) -> None:
    """Section 4: cost per transition against B, kernel path against the bulk loop."""
    kernel_env, bulk_env = plangym.make(name), plangym.make(name)
    threshold = kernel_env._kernel.min_batch
    kernel_env._kernel.min_batch = 1  # this env: the kernel path at every B
    bulk_env._kernel = None
    all_records = states_to_records(
        trajectory_states(kernel_env, max_batch), kernel_env.state_dtype
    )
    all_actions = random_actions(kernel_env, max_batch)
    sizes = [2**k for k in range(int(math.log2(max_batch)) + 1)]
    results = []
    for size in sizes:
        records, actions = all_records[:size], all_actions[:size]
        contest = Contest(
            {
                "kernel": array_step(kernel_env, actions, records),
                "bulk": array_step(bulk_env, actions, records),
            },
            min_time,
        ).run(rounds)
        results.append((size, contest))
    rows, faster = [], []
    worst = (1.0, None)
    for size, contest in results:
        kernel, bulk = contest.median("kernel"), contest.median("bulk")
        faster.append(kernel < bulk)
        choice = kernel if size >= threshold else bulk
        penalty = choice / min(kernel, bulk)
        if penalty > worst[0]:
            worst = (penalty, size)
        rows.append(
            [
                str(size),
                f"{kernel / size * 1e6:,.3f}",
                f"{bulk / size * 1e6:,.3f}",
                contest.ratio("bulk", "kernel"),
                "kernel" if size >= threshold else "bulk loop",
                f"{penalty:.2f}",
            ]
        )
    print_table(
        f"{name} cost per transition against B (array form)",
        [
            "B",
            "kernel us/transition",
            "bulk loop us/transition",
            "bulk / kernel: median (min..max)",
            "env's choice",
            "choice / best",
        ],
        rows,
    )
    # The crossover: the smallest B from which the kernel is faster at every larger B.
    crossover = next((sizes[i] for i in range(len(sizes)) if all(faster[i:])), None)
    if crossover is None:
        print(f"\ncrossover: none up to B={max_batch} (the bulk loop is faster at the top)")
    elif crossover == 1:
        print("\ncrossover: the kernel is faster at every B measured")
    else:
        print(
            f"\ncrossover: the bulk loop is faster below B={crossover} (the kernel from there up)"
        )
    if crossover is not None:
        # The crossover moves by a power of two from run to run on a noisy machine: what
        # the threshold costs is the line below.
        where = "above" if threshold > crossover else "below" if threshold < crossover else "at"
        print(f"{name}'s kernel min_batch = {threshold}: {where} this run's crossover")
    at = f" (at B={worst[1]})" if worst[1] else ""
    print(f"env's choice vs the faster path: worst {worst[0]:.2f}x{at}")


class ListsOnly:
    """An env as the planners met it before the array form: ``step_batch`` takes lists.

    The planners then fall back to the list form (see ``plangym.planning.batches``), and
    a record array of states is handed on as the list of states it holds.
    """

    def __init__(self, env):
        self.env = env

    def __getattr__(self, name: str):
        return getattr(self.env, name)

    def step_batch(self, actions, states=None, dt=1, return_state=None):
        if is_record_block(states):
            states = records_to_states(states)
        return self.env.step_batch(actions, states=states, dt=dt, return_state=return_state)


def uct_section(seeds: int, max_steps: int) -> None:
    """Section 5: UCT games on CartPole-v1 before and after the kernels and array form."""
    before = plangym.make("CartPole-v1")
    before._kernel = None
    lists = plangym.make("CartPole-v1")
    envs = {"before": ListsOnly(before), "kernels, lists": ListsOnly(lists)}
    envs["kernels, arrays"] = plangym.make("CartPole-v1")
    names = list(envs)
    times: dict[str, list[float]] = {name: [] for name in names}
    rows, all_same = [], True
    for seed in range(seeds):
        shift = seed % len(names)
        games = {}
        for name in names[shift:] + names[:shift]:
            env = envs[name]
            planner = UCTPlanner(env, seed=seed, **UCT_PARAMS)
            start = time.perf_counter()
            games[name] = play(env, planner, max_steps=max_steps, seed=seed)
            times[name].append(time.perf_counter() - start)
        reference = games["before"]
        same = all(
            game.actions == reference.actions and game.rewards == reference.rewards
            for game in games.values()
        )
        all_same &= same
        rows.append(
            [
                str(seed),
                str(reference.agent_steps),
                f"{reference.score:g}",
                *(f"{times[name][-1]:.2f}" for name in names),
                f"{times['before'][-1] / times['kernels, arrays'][-1]:.2f}x",
                "yes" if same else "DIFFER",
            ]
        )
    totals = {name: sum(times[name]) for name in names}
    rows.append(
        [
            "total",
            "",
            "",
            *(f"{totals[name]:.2f}" for name in names),
            f"{totals['before'] / totals['kernels, arrays']:.2f}x",
            "yes" if all_same else "DIFFER",
        ]
    )
    rows.append(
        [
            "per-game ratio",
            "",
            "",
            "",
            ratio_cell(times["before"], times["kernels, lists"]),
            ratio_cell(times["before"], times["kernels, arrays"]),
            "",
            "",
        ]
    )
    params = ", ".join(f"{k} {v}" for k, v in UCT_PARAMS.items())
    print_table(
        f"UCT ({params}) on CartPole-v1, max_steps={max_steps}, seeds 0..{seeds - 1}",
        [
            "seed",
            "agent steps",
            "score",
            *(f"{name} s" for name in names),
            "before / after",
            "same game",
        ],
        rows,
    )


# Main -----------------------------------------------------------------------------------------
SECTIONS = ("cartpole", "list", "others", "cost", "uct")


def main() -> None:
    warnings.simplefilter("ignore")
    parser = argparse.ArgumentParser(description="classic control kernels benchmark")
    parser.add_argument(
        "--rounds", type=positive_int, default=7, help="rotating rounds per section"
    )
    parser.add_argument(
        "--quick", action="store_true", help="B up to 4096 in section 4; UCT: 2 seeds, 100 steps"
    )
    parser.add_argument("--batch", type=positive_int, default=4096, help="B of sections 1-3")
    parser.add_argument(
        "--max-batch",
        type=positive_int,
        help="largest B of section 4 (default 65536; 4096 with --quick)",
    )
    parser.add_argument("--seeds", type=positive_int, help="UCT games (default 10; 2 with --quick)")
    parser.add_argument(
        "--steps", type=positive_int, help="UCT max_steps (default 500; 100 with --quick)"
    )
    parser.add_argument(
        "--min-time", type=float, help="seconds per timed sample (default 0.05; 0.01 with --quick)"
    )
    parser.add_argument("--sections", nargs="+", choices=SECTIONS, default=list(SECTIONS))
    parser.add_argument("--baseline-python", type=Path, default=BASELINE_PYTHON)
    args = parser.parse_args()
    max_batch = args.max_batch or (4096 if args.quick else 65536)
    seeds = args.seeds or (2 if args.quick else 10)
    steps = args.steps or (100 if args.quick else 500)
    min_time = args.min_time or (0.01 if args.quick else 0.05)

    probe = plangym.make("CartPole-v1")
    print(
        f"machine: {platform.platform()}, {os.cpu_count()} cpus, "
        f"{platform.python_implementation()} {platform.python_version()}, numpy {np.__version__}, "
        f"gymnasium {gymnasium.__version__}, plangym {plangym.__version__}"
    )
    print(
        f"kernels: {'on' if kernels_enabled() and probe._kernel is not None else 'OFF'}, "
        f"{args.rounds} rotating rounds, "
        f"{min_time:g} s per sample, single process"
    )
    loops = libm_check.scalar_loops()
    print(
        "scalar math: "
        + (f"{', '.join(loops)} element by element (NumPy differs here)" if loops else "NumPy")
    )
    wanted = set(args.sections)
    if "cartpole" in wanted:
        baseline = None
        if args.baseline_python.exists():
            from parallel import Baseline

            baseline = Baseline(args.baseline_python.absolute())  # it runs in /
        try:
            batch_section("CartPole-v1", args.batch, args.rounds, min_time, baseline)
        finally:
            if baseline is not None:
                baseline.close()
    if "list" in wanted:
        list_section(args.batch, args.rounds, min_time)
    if "others" in wanted:
        for name in ("Acrobot-v1", "Pendulum-v1"):
            batch_section(name, args.batch, args.rounds, min_time, None)
    if "cost" in wanted:
        cost_section("CartPole-v1", max_batch, args.rounds, min_time)
        for name in COST_OTHERS:  # where each kernel's min_batch lies: small batches
            cost_section(name, min(max_batch, 256), args.rounds, min_time)
    if "uct" in wanted:
        uct_section(seeds, steps)


if __name__ == "__main__":
    main()
