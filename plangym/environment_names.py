"""Names of the environments plangym can build, one list per family.

Every list is importable whatever extras are installed; :data:`FAMILY_EXTRAS` says which
extra a family needs, and :func:`plangym.make` names it when it is missing.

>>> "CartPole-v1" in CLASSIC_CONTROL
True
>>> "ALE/MsPacman-v5" in ATARI
True
>>> "walker-walk" in DM_CONTROL_NAMES, "Hopper-v5" in MUJOCO, "LunarLander-v3" in BOX_2D
(True, True, True)
>>> ("walker", "walk") in DM_CONTROL  # plangym 0.1's shape: dm_control.suite.ALL_TASKS
True
>>> FAMILY_EXTRAS["dm_control"]
'dm-control'
"""

from __future__ import annotations

import difflib
import functools

import ale_py
import gymnasium as gym

gym.register_envs(ale_py)

CLASSIC_CONTROL = [
    "CartPole-v0",
    "CartPole-v1",
    "MountainCar-v0",
    "MountainCarContinuous-v0",
    "Pendulum-v1",
    "Acrobot-v1",
]


def _ale_ids() -> list[str]:
    """Every id whose entry point is ale-py's AtariEnv, as ale-py registered them."""
    return sorted(
        env_id
        for env_id, spec in gym.registry.items()
        if isinstance(spec.entry_point, str) and spec.entry_point.startswith("ale_py")
    )


ATARI = _ale_ids()

_MUJOCO_GAMES = [
    "Ant",
    "HalfCheetah",
    "Hopper",
    "Humanoid",
    "HumanoidStandup",
    "InvertedDoublePendulum",
    "InvertedPendulum",
    "Pusher",
    "Reacher",
    "Swimmer",
    "Walker2d",
]
# gymnasium's MuJoCo envs on the `mujoco` bindings (v2 and v3 need the retired mujoco-py;
# gymnasium refuses Pusher-v4 on mujoco >= 3, the version the extra installs).
MUJOCO = [
    f"{game}-{version}"
    for game in _MUJOCO_GAMES
    for version in ("v4", "v5")
    if f"{game}-{version}" != "Pusher-v4"
]

# The dm_control suite's tasks as plangym 0.1 lists them, dm_control.suite.ALL_TASKS: the
# (domain, task) pairs of dm-control 1.0.50, written out so that dm_control is not imported.
DM_CONTROL: list[tuple[str, str]] = [
    ("acrobot", "swingup"),
    ("acrobot", "swingup_sparse"),
    ("ball_in_cup", "catch"),
    ("cartpole", "balance"),
    ("cartpole", "balance_sparse"),
    ("cartpole", "swingup"),
    ("cartpole", "swingup_sparse"),
    ("cartpole", "two_poles"),
    ("cartpole", "three_poles"),
    ("cheetah", "run"),
    ("dog", "stand"),
    ("dog", "walk"),
    ("dog", "trot"),
    ("dog", "run"),
    ("dog", "fetch"),
    ("finger", "spin"),
    ("finger", "turn_easy"),
    ("finger", "turn_hard"),
    ("fish", "upright"),
    ("fish", "swim"),
    ("hopper", "stand"),
    ("hopper", "hop"),
    ("humanoid", "stand"),
    ("humanoid", "walk"),
    ("humanoid", "run"),
    ("humanoid", "run_pure_state"),
    ("humanoid_CMU", "stand"),
    ("humanoid_CMU", "walk"),
    ("humanoid_CMU", "run"),
    ("lqr", "lqr_2_1"),
    ("lqr", "lqr_6_2"),
    ("manipulator", "bring_ball"),
    ("manipulator", "bring_peg"),
    ("manipulator", "insert_ball"),
    ("manipulator", "insert_peg"),
    ("pendulum", "swingup"),
    ("point_mass", "easy"),
    ("point_mass", "hard"),
    ("quadruped", "walk"),
    ("quadruped", "run"),
    ("quadruped", "escape"),
    ("quadruped", "fetch"),
    ("reacher", "easy"),
    ("reacher", "hard"),
    ("stacker", "stack_2"),
    ("stacker", "stack_4"),
    ("swimmer", "swimmer6"),
    ("swimmer", "swimmer15"),
    ("walker", "stand"),
    ("walker", "walk"),
    ("walker", "run"),
]
# The same tasks by the names plangym.make takes, "domain-task".
DM_CONTROL_NAMES = [f"{domain}-{task}" for domain, task in DM_CONTROL]

BOX_2D = [
    "LunarLander-v3",
    "LunarLanderContinuous-v3",
    "BipedalWalker-v3",
    "BipedalWalkerHardcore-v3",
    "CarRacing-v3",
    "FastLunarLander-v0",
]

# plangym 0.1's Montezuma's Revenge with Panama Joe's room, level and position (ALE based).
MONTEZUMA = ["PlanMontezuma-v0"]

# Super Mario Bros (NES): gym-super-mario-bros's ids; any name containing "SuperMarioBros"
# is routed to plangym.videogames.nes.MarioEnv, as in plangym 0.1.
_MARIO_VERSIONS = ("v0", "v1", "v2", "v3")
NES = (
    [f"SuperMarioBros-{v}" for v in _MARIO_VERSIONS]
    + [
        f"SuperMarioBros-{world}-{stage}-{v}"
        for world in range(1, 9)
        for stage in range(1, 5)
        for v in _MARIO_VERSIONS
    ]
    + [f"SuperMarioBros2-{v}" for v in _MARIO_VERSIONS]
    + [f"SuperMarioBrosRandomStages-{v}" for v in _MARIO_VERSIONS]
)

# plangym 0.1's Balloon Learning Environment: the name is kept, the package does not import
# on the Pythons plangym supports (see plangym.control.balloon).
BALLOON = ["BalloonLearningEnvironment-v0"]

FAMILIES = {
    "classic_control": CLASSIC_CONTROL,
    "atari": ATARI,
    "montezuma": MONTEZUMA,
    "mujoco": MUJOCO,
    "dm_control": DM_CONTROL_NAMES,
    "box2d": BOX_2D,
    "nes": NES,
    "balloon": BALLOON,
}

# The optional extra (pip install 'plangym[EXTRA]') a family needs; absent: none.
FAMILY_EXTRAS = {
    "mujoco": "mujoco",
    "dm_control": "dm-control",  # as the metadata spells it: any pip finds it
    "box2d": "box2d",
    "retro": "retro",
    "nes": "nes",
}
# Names listed in a family that needs an extra, which run without it (plangym's own physics).
NEED_NO_EXTRA = frozenset({"FastLunarLander-v0"})

ALL = [name for names in FAMILIES.values() for name in names]


@functools.cache
def _retro_games() -> list[str]:
    """stable-retro's games (those it has integration data for), read once; [] without it."""
    try:
        import stable_retro.data as retro_data
    except Exception:  # not installed, or it fails to import: no retro names
        return []
    return sorted(retro_data.list_games())


def __getattr__(name: str) -> list[str]:
    # RETRO is read from stable-retro on first use (importing it costs seconds), as in
    # plangym 0.1; an empty list when the extra is missing.
    if name == "RETRO":
        return _retro_games()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def family_of(name: str) -> str | None:
    """Return the family of the environment called ``name``, or None.

    >>> family_of("Hopper-v5"), family_of("SuperMarioBros-1-2-v0"), family_of("nothing")
    ('mujoco', 'nes', None)
    """
    for family, names in FAMILIES.items():
        if name in names:
            return family
    if "SuperMarioBros" in name:
        return "nes"
    if name in _retro_games() or _retro_spelling(name) in _retro_games():
        return "retro"
    return None


def _retro_spelling(name: str) -> str:
    """stable-retro's name for plangym 0.1's spelling: "Airstriker-Genesis" -> "-v0" added.

    >>> _retro_spelling("Airstriker-Genesis"), _retro_spelling("Airstriker-Genesis-v0")
    ('Airstriker-Genesis-v0', 'Airstriker-Genesis-v0')
    """
    return name if name.endswith("-v0") else f"{name}-v0"


def split_name(name: str | None, domain_name: str | None, task_name: str | None) -> tuple[str, str]:
    """Return ``(domain, task)`` of a suite task; ``domain_name``/``task_name`` win over ``name``.

    An unknown task is reported with the parameters that named it and the values received.

    >>> split_name("cartpole-balance", "walker", "walk")
    ('walker', 'walk')
    >>> split_name("walker-wlak", None, None)
    Traceback (most recent call last):
    ...
    ValueError: name: expected a dm_control task "domain-task", received 'walker-wlak'; ...
    >>> split_name(None, "cartpole", None)
    Traceback (most recent call last):
    ...
    ValueError: domain_name, task_name: expected a dm_control task, received domain_name=...
    """
    if domain_name is None and task_name is None:
        if not isinstance(name, str):
            raise TypeError(
                f'name: expected a dm_control task "domain-task" (str), received {name!r}'
            )
        given = f'name: expected a dm_control task "domain-task", received {name!r}'
    else:
        for label, value in (("domain_name", domain_name), ("task_name", task_name)):
            if value is not None and not isinstance(value, str):
                raise TypeError(f"{label}: expected a str, received {value!r}")
        rest = f" (the rest from name={name!r})" if None in (domain_name, task_name) else ""
        given = (
            "domain_name, task_name: expected a dm_control task, received "
            f"domain_name={domain_name!r}, task_name={task_name!r}{rest}"
        )
    domain, _, task = name.partition("-") if isinstance(name, str) else ("", "", "")
    domain, task = domain_name or domain, task_name or task
    full = f"{domain}-{task}"
    if full not in DM_CONTROL_NAMES:
        closest = ", ".join(difflib.get_close_matches(full, DM_CONTROL_NAMES, n=3, cutoff=0.5))
        raise ValueError(f"{given}; closest known names: {closest or 'none'}")
    return domain, task
