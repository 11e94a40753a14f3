"""What ``plangym plan`` plays: the planners' options, presets and resumed games.

A setting comes from the command line if given there, else from ``--preset fmc`` (the
game's published Fractal Monte Carlo parameters, :mod:`plangym.planning.presets`), else
from the planner's default. ``--resume DIR`` takes every setting from the checkpoint;
``--steps`` and the options of :data:`KEPT_ON_RESUME` may be given again to change them.
"""

from __future__ import annotations

import argparse
import inspect
from typing import Any

from plangym.cli.args import (
    Option,
    UsageError,
    agent_steps,
    check_env_name,
    default_frameskip,
    env_settings,
    non_negative_int,
    positive_int,
    probability,
)
from plangym.planning.fmc import FMCPlanner
from plangym.planning.presets import FULL_GAME_STEPS, FMCPreset, fmc_preset
from plangym.planning.swarm import SwarmPlanner
from plangym.planning.uct import UCTPlanner

DEFAULT_STEPS = 300
DEFAULT_OUT = "plangym-out"
# Options of the run, not of the game, with their defaults: a resumed game keeps the
# checkpoint's values unless they are given again (a checkpoint from before plangym saved
# them resumes with these defaults).
KEPT_ON_RESUME = {"baseline_games": 16, "checkpoint_every": 500, "gif_every": 1, "workers": 2}
WALKERS = Option(
    "--walkers", positive_int, None, "swarm, fmc: walkers (default: 32; preset: the game's)"
)
HORIZON = Option(
    "--horizon",
    positive_int,
    None,
    "swarm, fmc: rounds per decision at most (default: swarm 8, fmc 25; preset: the game's)",
)
BUDGET = Option(
    "--budget",
    positive_int,
    None,
    "fmc, uct: agent steps simulated per action at most, counted exactly (default: fmc "
    "walkers x horizon, uct --waves waves; preset: the game's)",
)
SWARM_OPTIONS = {
    "n_walkers": WALKERS,
    "horizon": HORIZON,
    "dt": Option("--dt", agent_steps, None, "swarm: agent steps per walker step (default: 2)"),
    "repeat_probability": Option(
        "--repeat", probability, None, "swarm: chance a walker repeats its last action (0.5)"
    ),
}
UCT_OPTIONS = {
    "waves": Option("--waves", positive_int, None, "waves per decision (default: 2)"),
    "wave_size": Option("--wave-size", positive_int, None, "leaves per wave (default: 32)"),
    "rollout_depth": Option(
        "--rollout-depth", non_negative_int, None, "random actions after each expansion (6)"
    ),
    "rollout_dt": Option(
        "--rollout-dt", agent_steps, None, "agent steps each random action is held for (1)"
    ),
    "budget": BUDGET,
}
# Each planner: its class, the options that set its keywords, and their defaults.
PLANNERS: dict[str, tuple[type, dict[str, Option], dict[str, Any]]] = {
    "swarm": (
        SwarmPlanner,
        SWARM_OPTIONS,
        {"n_walkers": 32, "horizon": 8, "dt": 2, "repeat_probability": 0.5},
    ),
    "fmc": (
        FMCPlanner,
        {"n_walkers": WALKERS, "horizon": HORIZON, "budget": BUDGET},
        {"n_walkers": 32, "horizon": 25, "budget": None},
    ),
    "uct": (
        UCTPlanner,
        UCT_OPTIONS,
        {"waves": 2, "wave_size": 32, "rollout_depth": 6, "rollout_dt": 1, "budget": None},
    ),
}


def env_keywords(name: str, frameskip: int, whole_game: bool = False) -> dict[str, Any]:
    """Return the keywords ``plan`` builds its env with: RAM observations where there are some.

    ``whole_game`` (``--preset fmc``): the episode is gymnasium's ``ALE/<Game>-v5`` episode,
    cut at its frame limit (108,000 frames, 30 minutes of play) if the game is not over
    before; plangym's Atari envs drop that limit by default, and a planner that never loses
    would otherwise play to the step cap.
    """
    env_class = check_env_name(name)
    keywords: dict[str, Any] = {"frameskip": frameskip}
    if "ram" in getattr(env_class, "AVAILABLE_OBS_TYPES", ()):
        keywords["obs_type"] = "ram"
    if whole_game and "remove_time_limit" in inspect.signature(env_class).parameters:
        keywords["remove_time_limit"] = False
    return keywords


def live_envs_keyword(name: str, n_walkers: int | None) -> dict[str, Any]:
    """Return ``live_envs`` for a Box2D env planned with ``n_walkers`` walkers, else nothing.

    A Box2D state is a replay: a walker that no live simulator continues is replayed from
    its episode's start (box2d.md). One simulator per walker of a batch (which may run in
    the caller: not per worker), plus one for the episodes autoresets start, keeps each
    step one step.

    >>> live_envs_keyword("BipedalWalker-v3", 32), live_envs_keyword("CartPole-v1", 32)
    ({'live_envs': 33}, {})
    """
    parameters = inspect.signature(check_env_name(name)).parameters
    if n_walkers is None or "live_envs" not in parameters:
        return {}
    return {"live_envs": max(n_walkers + 1, parameters["live_envs"].default)}


def resolve_settings(
    args: argparse.Namespace, resumed: dict[str, Any] | None
) -> tuple[type, dict[str, Any], int]:
    """Fill in ``args`` (planner, steps, out, ...); return the planner, its keywords, frameskip.

    A value given on the command line wins, then the preset's, then the default. With
    ``--resume`` the checkpoint's settings are used and the planner options must be left out.
    """
    if resumed is not None:
        return resume_settings(args, resumed)
    env_class, _ = env_settings(args)
    preset = fmc_preset_of(args)
    if preset is not None and args.planner == "swarm":  # given: the default is None
        raise UsageError(
            "--planner swarm: --preset fmc plays the fmc planner (FMC's published walkers, "
            "horizon and budget), or uct with the game's budget; leave out --planner for fmc"
        )
    args.planner = args.planner or ("fmc" if preset else "swarm")
    args.steps = args.steps or (FULL_GAME_STEPS if preset else DEFAULT_STEPS)
    args.seed = 0 if args.seed is None else args.seed
    args.out = args.out or DEFAULT_OUT
    keep_given(args, KEPT_ON_RESUME)
    frameskip = args.frameskip or (preset.frameskip if preset else default_frameskip(env_class))
    return (*planner_settings(args, preset), frameskip)


def resume_settings(
    args: argparse.Namespace, resumed: dict[str, Any]
) -> tuple[type, dict[str, Any], int]:
    """Return the settings of a resumed game (see :func:`resolve_settings`)."""
    saved = resumed["settings"]
    if args.name != saved["env"]:
        raise UsageError(f"--resume: the checkpoint plays {saved['env']!r}, not {args.name!r}")
    given = [
        option.flag
        for option in {*SWARM_OPTIONS.values(), *UCT_OPTIONS.values()}
        if getattr(args, option.dest) is not None
    ]
    given += [flag for flag in ("--planner", "--preset", "--frameskip") if getattr(args, flag[2:])]
    given += ["--seed"] if args.seed is not None else []
    if given:
        raise UsageError(
            "--resume: the game goes on with its saved settings; leave out "
            + ", ".join(sorted(given))
        )
    check_env_name(args.name)
    played = len(resumed["actions"])
    if args.steps is not None and args.steps < played:
        raise UsageError(
            f"--steps: the checkpoint in {args.resume!r} has {played} agent steps played "
            f"already; give at least {played}, or leave out --steps (its limit: "
            f"{saved['steps']})"
        )
    args.planner, args.seed, args.preset = saved["planner"], saved["seed"], saved["preset"]
    args.steps = args.steps or saved["steps"]
    args.out = args.out or args.resume
    keep_given(args, {key: saved.get(key, default) for key, default in KEPT_ON_RESUME.items()})
    params = used_params(args.planner, dict(saved["params"]))
    return PLANNERS[args.planner][0], params, int(saved["frameskip"])


def keep_given(args: argparse.Namespace, fallbacks: dict[str, Any]) -> None:
    """Set each option of ``fallbacks`` left out of the command line (None) to its fallback."""
    for key, fallback in fallbacks.items():
        if getattr(args, key) is None:
            setattr(args, key, fallback)


def fmc_preset_of(args: argparse.Namespace) -> FMCPreset | None:
    """Return the published parameters of the game for ``--preset fmc`` (None without a preset)."""
    if args.preset is None:
        return None
    try:
        return fmc_preset(args.name)
    except ValueError as error:
        raise UsageError(str(error)) from None


def planner_settings(
    args: argparse.Namespace, preset: FMCPreset | None = None
) -> tuple[type, dict[str, Any]]:
    """Return the planner class chosen on the command line, and its keyword arguments."""
    planner_class, options, defaults = PLANNERS[args.planner]
    from_preset: dict[str, Any] = {}
    if preset is not None:
        from_preset = {"n_walkers": preset.walkers, "horizon": preset.horizon}
        from_preset["budget"] = preset.budget
    params = {}
    for keyword, option in options.items():
        given = getattr(args, option.dest)
        fallback = from_preset.get(keyword, defaults[keyword])
        params[keyword] = given if given is not None else fallback
    if getattr(args, BUDGET.dest) is not None and "budget" not in options:
        raise UsageError(f"--budget: the {args.planner} planner has none; use fmc or uct")
    own = {option.flag for option in options.values()}
    others = {option.flag: option for option in {*SWARM_OPTIONS.values(), *UCT_OPTIONS.values()}}
    ignored = sorted(
        flag
        for flag, option in others.items()
        if flag not in own and getattr(args, option.dest) is not None
    )
    if ignored:  # an option of another planner would be silently ignored
        raise UsageError(
            f"{', '.join(ignored)}: not options of the {args.planner} planner "
            f"(its options: {', '.join(sorted(own))})"
        )
    if args.planner == "uct" and params["budget"] is not None and args.waves is not None:
        # With a budget UCT runs waves until it is spent: the waves given would be ignored.
        budget = "--budget" if getattr(args, BUDGET.dest) is not None else "--preset fmc"
        raise UsageError(
            f"--waves: uct with a budget ({budget}) runs waves until the budget is spent; "
            "give one of --waves and the budget"
        )
    if args.planner == "fmc" and params["budget"] is None:
        params["budget"] = params["n_walkers"] * params["horizon"]
    if params.get("budget", 0) is None:
        del params["budget"]  # uct without a budget: its waves
    return planner_class, used_params(args.planner, params)


def used_params(planner: str, params: dict[str, Any]) -> dict[str, Any]:
    """Return ``params`` without what the planner ignores: UCT's ``waves`` with a budget.

    They are what ``plan`` prints and ``summary.json`` records: with a budget, UCT runs
    waves until it is spent, whatever ``waves`` says.

    >>> used_params("uct", {"waves": 2, "wave_size": 8, "budget": 50})
    {'wave_size': 8, 'budget': 50}
    >>> used_params("uct", {"waves": 2, "wave_size": 8})
    {'waves': 2, 'wave_size': 8}
    """
    if planner == "uct" and params.get("budget") is not None:
        return {keyword: value for keyword, value in params.items() if keyword != "waves"}
    return params


def planner_problem(planner: str, message: str) -> str:
    """Name the flag behind a planner's refusal of its keywords (``budget: ...``).

    >>> planner_problem("fmc", "budget: expected at least n_walkers = 8, received 3")
    '--budget: expected at least n_walkers = 8, received 3'
    >>> planner_problem("uct", "env: UCT needs a Discrete action space, received Box")
    '--planner uct: UCT needs a Discrete action space, received Box'
    """
    keyword, _, rest = message.partition(": ")
    option = PLANNERS[planner][1].get(keyword)
    if option is not None:
        return f"{option.flag}: {rest}"
    return f"--planner {planner}: {rest if keyword == 'env' else message}"
