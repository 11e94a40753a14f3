"""How throughput grows with the batch, the workers and the sub-envs (docs/performance.md).

Writes to ``--out`` (JSON; ``benchmarks/plot_scaling.py`` draws it), with the machine:

* ``batch``: transitions/s and frames/s against B, distinct states, states returned.
  MsPacman (frameskip 5, RGB, B = 16..1024): one process (``env.step_batch``),
  ``ParallelEnv`` (2 workers), ``RayEnv`` (2 actors, if Ray is installed), and the raw
  limit of ``benchmarks/parallel.py``: two bare exact ALE loops at once. CartPole-v1
  (B = 16..4096): the same plus the kernels (``step_batch(records, arrays=True)``); the
  limit is the raw gymnasium loop of ``benchmarks/classic_kernels.py``.
* ``workers``: ParallelEnv on MsPacman, 256 states x 5 frames, 1 and 2 workers, against
  1 and 2 bare ALE loops at once.
* ``vector``: ``plangym.vector.AsyncVectorEnv`` against gymnasium's (CartPole-v1 and
  MsPacman, 2 and 4 sub-envs, as ``benchmarks/vector.py``); ``make_vec(...,
  "vector_entry_point")`` against gymnasium's CartPole (4..4096, as classic_vector.py).

At each point every contender stays alive for all the rounds and runs once per round, in
an order rotated from round to round; every round is kept, the headline is the median.

    python benchmarks/scaling.py [--rounds 7] [--quick] [--envs cartpole] [--no-ray]
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import math
import os
import platform
import statistics
import subprocess
import time
import warnings
from pathlib import Path

import classic_vector
import gymnasium
import numpy as np
import ray_w1
import vector
from classic_kernels import Contest, RawLoop, random_actions
from host import cpu_model
from parallel import RawLimit
from workloads import cartpole_states, game_states, positive_int, raw_ale_pass

import plangym
from plangym.columns import states_to_records

ROOT = Path(__file__).resolve().parent.parent
ATARI, CARTPOLE = "ALE/MsPacman-v5", "CartPole-v1"
FRAMESKIP = 5  # plangym's Atari default, as in W1
VECTOR_FRAMESKIP = 4  # gymnasium's default for ALE/MsPacman-v5 (the vector section)
LIMIT = "raw limit"


def machine() -> dict[str, object]:
    """Where the numbers came from."""
    cpu = cpu_model(platform.processor() or platform.machine())
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = "unknown"
    return {
        "platform": platform.platform(),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "plangym": plangym.__version__,
        "gymnasium": gymnasium.__version__,
        "numpy": np.__version__,
        "git_commit": commit,
    }


def series(per_round: list[list[float]], frames_per_transition: int) -> dict[str, list]:
    """Per-point medians of per-round transitions/s, with frames/s and the rounds kept."""
    medians = [statistics.median(values) for values in per_round]
    return {
        "transitions_per_s": medians,
        "frames_per_s": [value * frames_per_transition for value in medians],
        "rounds_transitions_per_s": per_round,
    }


def contest_rates(contests: list[tuple[int, Contest]], name: str) -> list[list[float]]:
    """Per-round transitions/s of ``name`` at every batch size (samples are s per call)."""
    return [[size / seconds for seconds in contest.samples[name]] for size, contest in contests]


def repeated_rounds(raw: RawLimit, min_time: float):
    """The raw limit's seconds per pass, averaged over enough passes to last ``min_time``."""
    once = raw.round()  # also its warm-up
    passes = max(1, math.ceil(min_time / max(once, 1e-6)))
    return lambda: sum(raw.round() for _ in range(passes)) / passes


def bare_ale(states: list, env) -> tuple:
    """An ALE of its own in this process, with ``states`` as its own ALE states."""
    import ale_py

    gymnasium.register_envs(ale_py)
    bare = gymnasium.make(ATARI, frameskip=1, repeat_action_probability=0.0)
    bare.reset(seed=0)
    ale_states = [ale_py.ALEState(env.ale_bytes(state)) for state in states]
    return bare, bare.unwrapped.ale, bare.unwrapped._action_set, ale_states


# Sections --------------------------------------------------------------------------------------
def make_envs(name: str, use_ray: bool, **kwargs) -> dict[str, object]:
    # On the workers, as the labels say: the cost model could step batches in the caller.
    kwargs = {"inline_small_batches": False, **kwargs}
    envs = {"ParallelEnv (2 workers)": plangym.make(name, n_workers=2, **kwargs)}
    if use_ray:
        envs["RayEnv (2 actors)"] = plangym.make(name, n_workers=2, ray=True, **kwargs)
    return envs


def batch_section(env_id: str, sizes, rounds: int, min_time: float, use_ray: bool) -> dict:
    """Every contender at every batch size; the raw limit as one more contender."""
    atari = env_id == ATARI
    envs = make_envs(env_id, use_ray, **({"frameskip": FRAMESKIP} if atari else {}))
    single = envs["ParallelEnv (2 workers)"].plan_env
    if atari:
        states = game_states(single, max(sizes))
        actions = np.random.default_rng(1).integers(single.n_actions, size=max(sizes))
        blobs = [single.ale_bytes(state) for state in states]
    else:
        states = cartpole_states(single, max(sizes))
        records = states_to_records(states, single.state_dtype)
        actions = random_actions(single, max(sizes))
    contests = []
    try:
        for size in sizes:
            s, a = states[:size], actions[:size]
            functions = {"one process": lambda s=s, a=a: single.step_batch(a, states=s)}
            for label, env in envs.items():
                functions[label] = lambda env=env, s=s, a=a: env.step_batch(a, states=s)
            if atari:
                raw = RawLimit(blobs[:size], a)  # processes of their own: a round reports
                try:
                    reported = {LIMIT: repeated_rounds(raw, min_time)}
                    contests.append((size, Contest(functions, min_time, reported).run(rounds)))
                finally:
                    raw.close()
            else:
                r = records[:size]
                functions["kernels (arrays=True)"] = lambda r=r, a=a: single.step_batch(
                    a, r, arrays=True
                )
                functions[LIMIT] = RawLoop(env_id, r, a)
                contests.append((size, Contest(functions, min_time).run(rounds)))
    finally:
        for env in envs.values():
            env.close()
    frames = FRAMESKIP if atari else 1
    return {
        "env": env_id,
        "frameskip": frames,
        "batch_sizes": list(sizes),
        "limit": LIMIT,
        "limit_label": (
            "2 bare ALE loops at once (restore, 5 frames, clone with RNG, screen)"
            if atari
            else "raw gymnasium loop, one process (set state, step, collect)"
        ),
        "series": {n: series(contest_rates(contests, n), frames) for n in contests[0][1].samples},
    }


def workers_section(batch: int, rounds: int, min_time: float) -> dict:
    """ParallelEnv on MsPacman with 1 and 2 workers, next to 1 and 2 bare ALE loops."""
    envs = {
        k: plangym.make(ATARI, n_workers=k, frameskip=FRAMESKIP, inline_small_batches=False)
        for k in (1, 2)
    }
    single = envs[2].plan_env
    states = game_states(single, batch)
    actions = np.random.default_rng(1).integers(single.n_actions, size=batch)
    bare, ale, action_set, ale_states = bare_ale(states, single)
    raw = RawLimit([single.ale_bytes(state) for state in states], actions)
    functions = {"one process": lambda: single.step_batch(actions, states=states)}
    for k, env in envs.items():
        functions[f"ParallelEnv ({k})"] = lambda env=env: env.step_batch(actions, states=states)
    listed = actions.tolist()  # as the raw loops of parallel.py get them
    functions["raw (1)"] = lambda: raw_ale_pass(ale, action_set, ale_states, listed)
    try:
        contest = Contest(functions, min_time, {"raw (2)": repeated_rounds(raw, min_time)})
        contest.run(rounds)
    finally:
        raw.close()
        bare.close()
        for env in envs.values():
            env.close()

    def rates(names: list[str]) -> dict:
        return series([[batch / x for x in contest.samples[n]] for n in names], FRAMESKIP)

    return {
        "env": ATARI,
        "frameskip": FRAMESKIP,
        "batch": batch,
        "workers": [1, 2],
        "limit": LIMIT,
        "limit_label": "1 and 2 bare ALE loops at once (restore, 5 frames, clone, screen)",
        "series": {
            "ParallelEnv": rates(["ParallelEnv (1)", "ParallelEnv (2)"]),
            LIMIT: rates(["raw (1)", "raw (2)"]),
            "one process": rates(["one process"]),
        },
    }


def vector_async(env_ids: list[str], sizes, steps: dict[str, int], rounds: int) -> dict:
    """plangym's AsyncVectorEnv against gymnasium's, the protocol of benchmarks/vector.py."""
    from plangym.vector import AsyncVectorEnv

    makers = {CARTPOLE: vector.make_cartpole, ATARI: vector.make_mspacman}
    out = {}
    for env_id in env_ids:
        results = [
            vector.measure(
                vector.Workload(env_id, makers[env_id], n, steps[env_id]),
                AsyncVectorEnv,
                rounds,
                steps[env_id],
            )
            for n in sizes
        ]
        frames = VECTOR_FRAMESKIP if env_id == ATARI else 1
        # vector steps/s times the sub-envs: env transitions per second
        per_side = {
            label: [
                [rate * n for rate in getattr(r, side)] for r, n in zip(results, sizes, strict=True)
            ]
            for label, side in (("plangym AsyncVectorEnv", "ours"), ("gymnasium", "gym"))
        }
        out[env_id] = {
            "num_envs": list(sizes),
            "frameskip": frames,
            "steps_per_round": steps[env_id],
            "series": {label: series(values, frames) for label, values in per_side.items()},
        }
    return out


def vector_entry_point(sizes, rounds: int, quick: bool) -> dict:
    """make_vec(..., "vector_entry_point") against gymnasium's, per classic_vector.py."""
    labels = ("plangym make_vec", "gymnasium make_vec")
    per_round: dict[str, list[list[float]]] = {label: [] for label in labels}
    for n in sizes:
        steps = 20 if quick else max(100, 8192 // n)
        envs = {
            labels[0]: plangym.make_vec(CARTPOLE, n, "vector_entry_point"),
            labels[1]: gymnasium.make_vec(CARTPOLE, n, vectorization_mode="vector_entry_point"),
        }
        try:
            contenders = {k: classic_vector.local_round(e, n, steps) for k, e in envs.items()}
            for label, values in classic_vector.measure(contenders, rounds).items():
                per_round[label].append(values)
        finally:
            for env in envs.values():
                env.close()
    return {
        "num_envs": list(sizes),
        "frameskip": 1,
        "series": {label: series(values, 1) for label, values in per_round.items()},
    }


# Main -----------------------------------------------------------------------------------------
def run(args: argparse.Namespace) -> dict:
    quick, rounds = args.quick, args.rounds
    min_time = 0.005 if quick else 0.05
    atari = "mspacman" in args.envs
    result: dict = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": machine(),
        **{"rounds": rounds, "quick": quick, "min_time_s": min_time, "skipped": {}},
    }
    use_ray = not args.no_ray and importlib.util.find_spec("ray") is not None
    if not use_ray:
        why = "--no-ray" if args.no_ray else "ray is not installed (pip install 'plangym[ray]')"
        result["skipped"]["RayEnv"] = why
    if "batch" in args.sections:
        started = use_ray and ray_w1.start_ray(None)  # a local cluster unless RAY_ADDRESS
        try:
            result["batch"] = {}
            if atari:
                sizes = (16, 64) if quick else (16, 64, 256, 1024)
                result["batch"][ATARI] = batch_section(ATARI, sizes, rounds, min_time, use_ray)
            sizes = (16, 64) if quick else (16, 64, 256, 1024, 4096)
            result["batch"][CARTPOLE] = batch_section(CARTPOLE, sizes, rounds, min_time, use_ray)
        finally:
            if started:
                import ray

                ray.shutdown()  # its idle processes would share the cores with what follows
    if "workers" in args.sections and atari:
        result["workers"] = workers_section(16 if quick else 256, rounds, min_time)
    elif "workers" in args.sections:
        result["skipped"]["workers"] = "MsPacman only (--envs without mspacman)"
    if "vector" in args.sections:
        env_ids = [CARTPOLE, ATARI] if atari else [CARTPOLE]
        steps = {CARTPOLE: 20, ATARI: 10} if quick else {CARTPOLE: 2000, ATARI: 300}
        sizes = (4, 64) if quick else (4, 64, 1024, 4096)
        result["vector"] = {
            "async": vector_async(env_ids, (2,) if quick else (2, 4), steps, rounds),
            "entry_point": vector_entry_point(sizes, rounds, quick),
        }
    return result


def main() -> None:
    warnings.simplefilter("ignore")
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=positive_int, default=7, help="rotating rounds per point")
    parser.add_argument("--quick", action="store_true", help="tiny sizes: a smoke test")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/scaling.json")
    parser.add_argument(
        "--envs", nargs="+", choices=["cartpole", "mspacman"], default=["cartpole", "mspacman"]
    )
    sections = ["batch", "workers", "vector"]
    parser.add_argument("--sections", nargs="+", choices=sections, default=sections)
    parser.add_argument("--no-ray", action="store_true", help="leave RayEnv out")
    args = parser.parse_args()
    start = time.perf_counter()
    result = run(args)
    result["duration_s"] = round(time.perf_counter() - start, 1)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {args.out} ({result['duration_s']} s)")


if __name__ == "__main__":
    main()
