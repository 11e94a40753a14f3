"""Build any supported environment from its name: :func:`make`.

>>> env = make("CartPole-v1")
>>> type(env).__name__
'ClassicControl'
>>> make("CartPol-v1")
Traceback (most recent call last):
...
plangym.registry.UnknownEnvironmentError: name: unknown environment 'CartPol-v1'; closest ...
"""

from __future__ import annotations

import difflib
import importlib
import re
from typing import TYPE_CHECKING, Any, overload

import gymnasium
from gymnasium.envs.registration import parse_env_id

from plangym import environment_names
from plangym.core import PlangymEnv
from plangym.validation import check_flag

if TYPE_CHECKING:
    from plangym.vectorization.env import VectorizedEnv


class UnknownEnvironmentError(ValueError, gymnasium.error.NameNotFound):
    """A name no family knows: a ``ValueError``, and gymnasium's ``NameNotFound``.

    plangym 0.1 raised gymnasium's error for it, and ``gymnasium.make_vec`` raises it too,
    so code catching either goes on working.
    """


# Where each family's class lives: imported only when the family is asked for, so a
# missing extra costs nothing until then (and its ImportError names the extra).
FAMILY_CLASSES = {
    "classic_control": "plangym.control.classic_control.env:ClassicControl",
    "atari": "plangym.videogames.atari:AtariEnv",
    "mujoco": "plangym.control.mujoco.env:MujocoEnv",
    "dm_control": "plangym.control.dm_control.env:DMControlEnv",
    "box2d": "plangym.control.box_2d.env:Box2DEnv",
    "balloon": "plangym.control.balloon:BalloonEnv",
    "montezuma": "plangym.videogames.montezuma:MontezumaEnv",
    "nes": "plangym.videogames.nes:MarioEnv",
    "retro": "plangym.videogames.retro:RetroEnv",
}
# stable-retro names end with the console: "Airstriker-Genesis-v0" (plangym 0.1: no "-v0").
RETRO_SYSTEMS = re.compile(
    r"-(Atari2600|Genesis|Sms|GameGear|Nes|Snes|GameBoy|GbColor|GbAdvance|PCEngine|Saturn|32x)"
    r"(-v0)?$"
)
# Names whose class is not their family's.
NAME_CLASSES = {"FastLunarLander-v0": "plangym.control.lunar_lander.env:LunarLander"}


def _import_class(path: str) -> type[PlangymEnv]:
    module, _, attribute = path.partition(":")
    return getattr(importlib.import_module(module), attribute)


def get_planenv_class(
    name: str | None, domain_name: str | None = None, state: str | None = None
) -> type[PlangymEnv]:
    """Return the :class:`~plangym.core.PlanEnv` class that runs the environment ``name``.

    As in plangym 0.1, a retro ``state`` makes the class ``RetroEnv`` and a ``domain_name``
    makes it ``DMControlEnv`` (when ``name`` is not another family's):

    >>> get_planenv_class("CartPole-v1").__name__
    'ClassicControl'
    >>> get_planenv_class(None, domain_name="walker").__name__
    'DMControlEnv'

    Raises ImportError naming the extra to install when the family needs one that is missing.
    """
    if isinstance(name, str) and name in NAME_CLASSES:
        return _import_class(NAME_CLASSES[name])
    family = environment_names.family_of(name) if isinstance(name, str) else None
    if family == "montezuma":  # 0.1 checked Montezuma's name before the state
        return _import_class(FAMILY_CLASSES[family])
    if state is not None:
        return _import_class(FAMILY_CLASSES["retro"])
    if family is not None:
        return _import_class(FAMILY_CLASSES[family])
    if domain_name is not None:
        return _import_class(FAMILY_CLASSES["dm_control"])
    if not isinstance(name, str):
        raise TypeError(f"name: expected an environment name (str), received {name!r}")
    if RETRO_SYSTEMS.search(name) and not environment_names.RETRO:
        # A console game's name while stable-retro is missing: say what to install.
        return _import_class(FAMILY_CLASSES["retro"])
    if has_no_version_of(name):  # e.g. FrozenLake-v1: not a near miss of another name
        raise UnknownEnvironmentError(
            f"name: unknown environment {name!r}: gymnasium registers it, but plangym has "
            "no plannable version of it (plangym.environment_names lists those it has; "
            "docs/extending.md writes one)"
        )
    # family_of read stable-retro's games already: they are suggested too.
    known = [*environment_names.ALL, *environment_names.RETRO]
    closest = difflib.get_close_matches(name, known, n=5, cutoff=0.5)
    hint = (
        f"closest known names: {', '.join(closest)}" if closest else "see plangym.environment_names"
    )
    raise UnknownEnvironmentError(f"name: unknown environment {name!r}; {hint}")


def has_no_version_of(name: str) -> bool:
    """Whether gymnasium registers ``name`` and plangym has no version of that env.

    >>> has_no_version_of("FrozenLake-v1"), has_no_version_of("Ant-v2")  # Ant-v4/v5 exist
    (True, False)
    """
    if name not in gymnasium.registry:
        return False
    namespace, base, _ = parse_env_id(name)
    for known in environment_names.ALL:
        try:
            if parse_env_id(known)[:2] == (namespace, base):
                return False
        except gymnasium.error.Error:  # not an id (dm_control's "walker-walk")
            continue
    return True


def get_environment_class(
    name: str | None = None,
    n_workers: int | None = None,
    ray: bool = False,
    domain_name: str | None = None,
    state: str | None = None,
) -> tuple[type[VectorizedEnv] | None, type[PlangymEnv]]:
    """Return ``(vectorized_class_or_None, env_class)`` for a :func:`make` call.

    ``domain_name`` and ``state`` choose the class as in :func:`get_planenv_class`.
    """
    env_class = get_planenv_class(name, domain_name, state)
    return vectorized_class(n_workers, ray), env_class


def vectorized_class(n_workers: int | None, ray: bool) -> type[VectorizedEnv] | None:
    """Return the class that runs an env on workers for these :func:`make` arguments."""
    if check_flag("ray", ray):
        if n_workers is None:
            raise ValueError(
                "n_workers: ray=True runs the env on Ray actors; say how many, "
                "e.g. make(name, n_workers=4, ray=True)"
            )
        from plangym.vectorization.ray import RayEnv

        return RayEnv
    if n_workers is not None:
        from plangym.vectorization.parallel import ParallelEnv

        return ParallelEnv
    return None


def resolve_name(name: str | None, domain_name: str | None, task_name: str | None) -> str:
    """Return the environment name of a :func:`make` call (dm_control's names included).

    As in plangym 0.1, ``name`` may be a dm_control domain whose task is ``task_name``.

    >>> resolve_name(None, "walker", "walk"), resolve_name("cartpole-swingup", None, None)
    ('walker-walk', 'cartpole-swingup')
    >>> resolve_name("walker", None, "run"), resolve_name("walker-run", "walker", None)
    ('walker-run', 'walker-run')
    >>> resolve_name(None, None, None)
    Traceback (most recent call last):
    ...
    ValueError: name: expected an environment name, or domain_name and task_name ...
    """
    if domain_name is None and task_name is None:
        if name is None:
            raise ValueError(
                "name: expected an environment name, or domain_name and task_name "
                "(dm_control), received neither"
            )
        return name
    given = domain_name, task_name
    if name is not None:  # "domain-task", or the domain alone
        name_domain, _, name_task = name.partition("-")
        domain_name = name_domain if domain_name is None else domain_name
        task_name = (name_task or None) if task_name is None else task_name
    if domain_name is None or task_name is None:
        raise ValueError(
            "domain_name, task_name: expected both (a dm_control task, e.g. "
            f"domain_name='walker', task_name='walk'), received domain_name={given[0]!r}, "
            f"task_name={given[1]!r}"
        )
    joined = f"{domain_name}-{task_name}"
    if name is not None and name not in (joined, domain_name):
        raise ValueError(
            f"name: {name!r} contradicts domain_name={domain_name!r}, task_name={task_name!r}"
        )
    if joined not in environment_names.DM_CONTROL_NAMES:  # named by the parameters given
        try:
            environment_names.split_name(name, *given)
        except ValueError as error:  # an unknown environment, as for any name
            raise UnknownEnvironmentError(str(error)) from None
    return joined


# For type checkers: make(name) is one env, make(name, n_workers=k) its vectorized env.
@overload
def make(
    name: str | None = None,
    n_workers: None = None,
    ray: bool = False,
    domain_name: str | None = None,
    state: str | None = None,
    *,
    task_name: str | None = None,
    **kwargs: Any,
) -> PlangymEnv: ...
@overload
def make(
    name: str | None,
    n_workers: int,
    ray: bool = False,
    domain_name: str | None = None,
    state: str | None = None,
    *,
    task_name: str | None = None,
    **kwargs: Any,
) -> VectorizedEnv: ...
@overload
def make(
    name: str | None = None,
    *,
    n_workers: int,
    ray: bool = False,
    domain_name: str | None = None,
    state: str | None = None,
    task_name: str | None = None,
    **kwargs: Any,
) -> VectorizedEnv: ...
def make(
    name: str | None = None,
    n_workers: int | None = None,
    ray: bool = False,
    domain_name: str | None = None,
    state: str | None = None,
    *,
    task_name: str | None = None,
    **kwargs: Any,
) -> PlangymEnv | VectorizedEnv:
    """Create the environment called ``name``.

    Args:
        name: An environment name from :mod:`plangym.environment_names`.
        n_workers: Number of worker processes (a ``ParallelEnv``); None for one process.
        ray: Run the workers as Ray actors (a ``RayEnv``; needs ``n_workers`` and the
            ``ray`` extra). Pass ``address="HOST:PORT"`` to use a running cluster.
        domain_name: With ``task_name``, a dm_control suite task instead of ``name``:
            ``make(domain_name="walker", task_name="walk")`` is ``make("walker-walk")``.
        state: A stable-retro save state to start from (as in plangym 0.1, it makes the
            env a ``RetroEnv`` whatever the name).
        task_name: See ``domain_name`` (keyword only).
        kwargs: Passed to the environment's constructor.
    """
    name = resolve_name(name, domain_name, task_name)
    workers_class, env_class = get_environment_class(name, n_workers, ray, state=state)
    if state is not None:
        kwargs["state"] = state
    if workers_class is not None:
        assert n_workers is not None  # vectorized_class returns a class only with n_workers
        return workers_class(env_class=env_class, name=name, n_workers=n_workers, **kwargs)
    return env_class(name=name, **kwargs)
