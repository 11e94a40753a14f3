"""``plangym.make_vec``: a gymnasium vector env of plannable plangym envs.

>>> import plangym
>>> envs = plangym.make_vec("CartPole-v1", num_envs=2, vectorization_mode="sync")
>>> obs, infos = envs.reset(seed=0)
>>> states = envs.get_states()
>>> new_states, observs, rewards, *_ = envs.step_batch([0, 1, 1], [states[0]] * 3)
>>> len(new_states), rewards
(3, [1.0, 1.0, 1.0])
>>> envs.spec.id, envs.spec.kwargs["num_envs"], envs.spec.kwargs["vectorization_mode"]
('CartPole-v1', 2, 'sync')
>>> plangym.make_vec(envs.spec).num_envs
2
>>> envs.close()
"""

from __future__ import annotations

import copy
import dataclasses
import functools
from collections.abc import Callable, Mapping, Sequence
from numbers import Real
from typing import TYPE_CHECKING, Any

import gymnasium
from gymnasium.envs.registration import EnvSpec, VectorizeMode
from gymnasium.vector import AutoresetMode

from plangym.constructor import constructor_defaults
from plangym.core.wrappers import check_wrappers
from plangym.registry import (
    UnknownEnvironmentError,
    get_environment_class,
    has_no_version_of,
    resolve_name,
)
from plangym.validation import check_positive_int, check_process_count, describe
from plangym.vector.async_vector_env import AsyncVectorEnv
from plangym.vector.gym_plan_env import GymPlanEnv
from plangym.vector.sync_vector_env import SyncVectorEnv
from plangym.vector.vector_env import PlanVectorEnv, autoreset_mode_of

if TYPE_CHECKING:  # built only by the vector entry point, imported there on first use
    from plangym.control.classic_control.vector_env import ClassicVectorEnv

MODES = ("sync", "async", "ray", "vector_entry_point")
ASYNC_ONLY_KWARGS = frozenset({"shared_memory", "context", "daemon", "max_concurrency", "worker"})


def build_sub_env(
    name: str, env_kwargs: dict[str, Any], wrappers: tuple = (), plan_env: Any = None
) -> GymPlanEnv | gymnasium.Env:
    """Build one sub-env: ``plangym.make(name, **env_kwargs)`` (or ``plan_env``), gymnasium's."""
    from plangym.registry import make

    face = GymPlanEnv(plan_env if plan_env is not None else make(name, **env_kwargs))
    face.spec = sub_env_spec(name, env_kwargs)
    if wrappers:  # they may draw from the env's generator (StickyAction): states hold it
        getattr(face.plan_env, "generator_shared", lambda: None)()
    env: gymnasium.Env = face
    for wrapper in wrappers:
        env = wrapper(env)
    return env


@dataclasses.dataclass(frozen=True, eq=False)
class SubEnvBuilder:
    """Each ``env_fn`` of a :func:`make_vec` call: called, it builds one sub-env."""

    name: str
    env_kwargs: dict[str, Any]
    wrappers: tuple = ()

    def __call__(self) -> GymPlanEnv | gymnasium.Env:
        """Build one sub-env."""
        return build_sub_env(self.name, self.env_kwargs, self.wrappers)

    def probe(self) -> GymPlanEnv | gymnasium.Env:
        """Build the sub-env the spaces are read from.

        A ``SINGLETON`` family's keeps its simulator in a worker process, so that the
        caller may hold one of its own (one per process).
        """
        from plangym.registry import make
        from plangym.vectorization.worker_env import build_local_env

        _, env_class = get_environment_class(self.name, state=self.env_kwargs.get("state"))
        if not env_class.SINGLETON:
            return self()
        constructor = functools.partial(make, self.name, **self.env_kwargs)
        plan_env = build_local_env(constructor, env_class)
        return build_sub_env(self.name, self.env_kwargs, self.wrappers, plan_env)


def sub_env_spec(name: str, env_kwargs: dict[str, Any]) -> EnvSpec | None:
    """Return a sub-env's spec as ``gymnasium.make`` gives one (None for unregistered names).

    Its episode limit is ``max_episode_steps`` if given, else the id's, and None once the
    time limit is removed (wrappers such as ``TimeAwareObservation`` read it).

    >>> spec = sub_env_spec("CartPole-v1", {"remove_time_limit": False, "autoreset": False})
    >>> spec.id, spec.max_episode_steps, spec.kwargs
    ('CartPole-v1', 500, {})
    >>> sub_env_spec("walker-walk", {}) is None
    True
    """
    spec = gymnasium.registry.get(name)
    if spec is None:
        return None
    # plangym's switches are not the id's env's arguments; the limit is the spec's field.
    plangyms = ("autoreset", "remove_time_limit", "max_episode_steps")
    kwargs = {k: v for k, v in env_kwargs.items() if k not in plangyms}
    steps = env_kwargs.get("max_episode_steps", spec.max_episode_steps)
    limit = None if env_kwargs.get("remove_time_limit") else steps
    return dataclasses.replace(spec, kwargs={**spec.kwargs, **kwargs}, max_episode_steps=limit)


def same_kind(value: Any, default: Any) -> bool:
    """Whether ``value`` can stand where ``default`` does: a number for a number, and so on.

    >>> same_kind(4, 5), same_kind(0.25, 0.0), same_kind((2, 5), 5), same_kind("rgb", None)
    (True, True, False, True)
    """
    if default is None:
        return True
    if isinstance(default, Real) and not isinstance(default, bool):
        return isinstance(value, Real) and not isinstance(value, bool)
    return isinstance(value, type(default))


def sub_env_kwargs(
    name: str, env_kwargs: dict[str, Any], spec: EnvSpec | None = None
) -> dict[str, Any]:
    """Return the kwargs each sub-env of ``make_vec(name, **env_kwargs)`` is built with.

    gymnasium's dynamics unless the caller says otherwise: the kwargs the id registers (or
    ``spec`` holds) that the plangym env takes, if of the same kind (not the v4 ids'
    ``frameskip`` range), and its time limit; the plangym env's own autoreset is off.

    >>> kwargs = sub_env_kwargs("ALE/Pong-v5", {"frameskip": 2})
    >>> kwargs["frameskip"], kwargs["repeat_action_probability"]
    (2, 0.25)
    >>> "frameskip" in sub_env_kwargs("Pong-v4", {})  # registered as a range: left out
    False
    >>> sorted(sub_env_kwargs("CartPole-v1", {}).items())
    [('autoreset', False), ('remove_time_limit', False)]
    """
    if env_kwargs.get("autoreset"):
        raise ValueError(
            "autoreset: the vector env resets its sub-envs (see autoreset_mode); leave "
            "autoreset out or pass autoreset=False"
        )
    _, env_class = get_environment_class(name, state=env_kwargs.get("state"))
    defaults = constructor_defaults(env_class)
    spec = spec or gymnasium.registry.get(name)
    registered = {
        key: value
        for key, value in (spec.kwargs if spec is not None else {}).items()
        if key in defaults and same_kind(value, defaults[key])
    }
    kwargs = {**registered, **env_kwargs, "autoreset": False}
    if "remove_time_limit" in defaults:
        kwargs.setdefault("remove_time_limit", False)
    return kwargs


def make_vec(
    id: str | EnvSpec | None = None,
    num_envs: int = 1,
    vectorization_mode: str | VectorizeMode | None = None,
    vector_kwargs: dict[str, Any] | None = None,
    wrappers: Sequence[Callable[[gymnasium.Env], gymnasium.Wrapper]] | None = None,
    *,
    autoreset_mode: str | AutoresetMode | None = None,
    domain_name: str | None = None,
    task_name: str | None = None,
    name: str | None = None,
    **env_kwargs: Any,
) -> PlanVectorEnv | ClassicVectorEnv:
    """Return a gymnasium vector env of ``num_envs`` plangym envs called ``id``.

    Called as ``gymnasium.make_vec`` is, and with the same dynamics: the sub-envs take the
    kwargs the id was registered with (e.g. ``frameskip=4`` and
    ``repeat_action_probability=0.25`` for ``ALE/*-v5``) unless ``env_kwargs`` say
    otherwise, and keep its episode time limit.

    Args:
        id: An environment name, as for :func:`plangym.make` (``name=`` works too), or a
            gymnasium ``EnvSpec`` (its id, with its kwargs in place of the registered ones).
        num_envs: Number of sub-envs.
        vectorization_mode: "sync" (this process), "async" (a worker process per sub-env),
            "ray" (a Ray actor per sub-env; the ``ray`` extra), "vector_entry_point" (the
            classic control kernels: every sub-env in one NumPy pass), or a
            ``gymnasium.VectorizeMode``. None, gymnasium's default: the vector entry point
            if the task has one (unless ``wrappers``, ``vector_kwargs`` other than ``copy``
            or settings without a kernel are given), else "sync" ("async" for
            ``vector_kwargs`` only it takes).
        vector_kwargs: Passed to the vector env class (e.g. ``copy``, ``context``,
            ``autoreset_mode`` as gymnasium passes it; only ``copy`` for the vector entry
            point).
        wrappers: gymnasium wrappers applied to each sub-env, in order (each called with
            the env, as in gymnasium); states stay the plangym env's. Not with the vector
            entry point.
        autoreset_mode: gymnasium's :class:`~gymnasium.vector.AutoresetMode` (or its value);
            the same as ``vector_kwargs["autoreset_mode"]``. Default: next step.
        domain_name: With ``task_name``, a dm_control task, as for :func:`plangym.make`.
        task_name: See ``domain_name``.
        name: The name ``id`` had in plangym 0.1; give one of the two.
        env_kwargs: Passed to each plangym env. Episodes end as the env's registration
            says (``remove_time_limit=False`` unless given); resets are the vector env's.

    Returns:
        A ``gymnasium.vector.VectorEnv`` that also has ``get_states``, ``set_states``
        and ``step_batch``.
    """
    spec = id if isinstance(id, EnvSpec) else None
    if spec is not None:  # a vector env's spec: its call's arguments win, as in gymnasium
        spec = copy.copy(spec)
        spec.kwargs = dict(spec.kwargs)
        num_envs = spec.kwargs.pop("num_envs", num_envs)
        vectorization_mode = spec.kwargs.pop("vectorization_mode", vectorization_mode)
        vector_kwargs = spec.kwargs.pop("vector_kwargs", vector_kwargs)
        wrappers = spec.kwargs.pop("wrappers", wrappers)
    num_envs = check_positive_int("num_envs", num_envs)
    mode_name = check_mode(vectorization_mode)
    if vector_kwargs is not None and not isinstance(vector_kwargs, Mapping):
        raise TypeError(
            f"vector_kwargs: expected None or a dict, received {describe(vector_kwargs)}"
        )
    given_vector_kwargs = dict(vector_kwargs or {})
    vector_kwargs = dict(given_vector_kwargs)
    mode = one_autoreset_mode(autoreset_mode, vector_kwargs)
    given = id.id if isinstance(id, EnvSpec) else id
    if given is not None and name is not None and given != name:
        raise ValueError(f"id, name: expected one environment name, got {id=!r} and {name=!r}")
    name = resolve_name(given if given is not None else name, domain_name, task_name)
    try:
        kwargs = sub_env_kwargs(name, env_kwargs, spec)
    except UnknownEnvironmentError as error:
        if given is None:
            raise
        # The caller's parameter is gymnasium's id, not plangym 0.1's name.
        message = str(error).replace("name:", "id:", 1)
        if has_no_version_of(name):
            message += (
                f"; plangym.vector.AsyncVectorEnv([lambda: gymnasium.make({name!r})] * n) "
                "runs gymnasium's env on plangym's workers, without states"
            )
        raise UnknownEnvironmentError(message) from None
    wrappers = tuple(check_wrappers(wrappers) or ())
    envs, built_in = build_vector_env(
        name, num_envs, mode_name, mode, kwargs, wrappers, vector_kwargs
    )
    if autoreset_mode is not None:
        given_vector_kwargs["autoreset_mode"] = autoreset_mode
    envs.spec = None  # for names gymnasium does not register (dm_control, plangym's own)
    registered = spec or gymnasium.registry.get(name)
    if registered is not None:  # gymnasium.make_vec's: make_vec(envs.spec) builds it again
        arguments: dict[str, Any] = {"num_envs": num_envs} if num_envs != 1 else {}
        arguments["vectorization_mode"] = built_in
        for key, value in (("vector_kwargs", given_vector_kwargs), ("wrappers", wrappers)):
            if value:
                arguments[key] = value
        vector_spec = copy.copy(registered)
        vector_spec.kwargs = {**registered.kwargs, **env_kwargs, **arguments}
        envs.spec = vector_spec
    return envs


def build_vector_env(
    name: str,
    num_envs: int,
    mode_name: str | None,
    mode: AutoresetMode,
    kwargs: dict[str, Any],
    wrappers: tuple,
    vector_kwargs: dict[str, Any],
) -> tuple[PlanVectorEnv | ClassicVectorEnv, str]:
    """Build the vector env of a checked :func:`make_vec` call: it and the mode it runs in."""
    if mode_name in (None, "vector_entry_point"):  # None: there when the task has one
        from plangym.control.classic_control.vector_inputs import vector_entry_point

        asked = mode_name is not None
        envs = vector_entry_point(name, num_envs, mode, kwargs, wrappers, vector_kwargs, asked)
        if envs is not None:
            return envs, "vector_entry_point"
        # Keywords only AsyncVectorEnv takes choose it: SyncVectorEnv would refuse them;
        # so does a family of one simulator per process, whose sub-envs "sync" cannot build.
        one_per_process = num_envs > 1 and is_singleton(name, kwargs)
        async_only = set(vector_kwargs) & ASYNC_ONLY_KWARGS
        mode_name = "async" if async_only or one_per_process else "sync"
    elif mode_name == "sync" and num_envs > 1 and is_singleton(name, kwargs):
        raise ValueError(
            f"vectorization_mode: expected 'async' or 'ray' for {num_envs} sub-envs of "
            f"{name!r}, whose family runs one simulator per process ('sync' builds every "
            "sub-env in this one), received 'sync'"
        )
    vector_class: Callable[..., PlanVectorEnv] = SyncVectorEnv
    if mode_name == "async":
        vector_class = AsyncVectorEnv
        check_process_count(
            "num_envs", num_envs, AsyncVectorEnv.processes_per_cpu, "AsyncVectorEnv"
        )
    elif mode_name == "ray":
        from plangym.vector.ray_vector_env import RayVectorEnv

        vector_class = RayVectorEnv
    env_fns = [SubEnvBuilder(name, kwargs, wrappers)] * num_envs
    return vector_class(env_fns, autoreset_mode=mode, **vector_kwargs), mode_name


def is_singleton(name: str, kwargs: dict[str, Any]) -> bool:
    """Whether the env class of ``name`` runs one simulator per process (stable-retro's)."""
    return get_environment_class(name, state=kwargs.get("state"))[1].SINGLETON


def check_mode(mode: Any) -> str | None:
    """Return the name of a vectorization mode (None: gymnasium's default rule)."""
    value = mode.value if isinstance(mode, VectorizeMode) else mode
    if value is not None and value not in MODES:
        raise ValueError(
            f"vectorization_mode: expected one of {', '.join(map(repr, MODES))}, got {mode!r}"
        )
    return value


def one_autoreset_mode(mode: Any, vector_kwargs: dict[str, Any]) -> AutoresetMode:
    """Return the autoreset mode given as a keyword or in ``vector_kwargs`` (taken out)."""
    in_kwargs = vector_kwargs.pop("autoreset_mode", None)
    given = [autoreset_mode_of(value) for value in (mode, in_kwargs) if value is not None]
    if len(set(given)) > 1:
        raise ValueError(
            "autoreset_mode: given twice with different values: "
            f"{mode!r} and vector_kwargs['autoreset_mode']={in_kwargs!r}"
        )
    return given[0] if given else AutoresetMode.NEXT_STEP
