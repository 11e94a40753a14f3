"""``plangym.make_vec``: a gymnasium vector env of plannable plangym envs.

>>> import plangym
>>> envs = plangym.make_vec("CartPole-v1", num_envs=2, vectorization_mode="sync")
>>> obs, infos = envs.reset(seed=0)
>>> states = envs.get_states()
>>> new_states, observs, rewards, *_ = envs.step_batch([0, 1, 1], [states[0]] * 3)
>>> len(new_states), rewards
(3, [1.0, 1.0, 1.0])
>>> envs.close()
"""

from __future__ import annotations

import functools
from numbers import Real
from typing import Any

import gymnasium
from gymnasium.vector import AutoresetMode

from plangym.constructor import constructor_defaults
from plangym.registry import get_environment_class, resolve_name
from plangym.validation import check_positive_int
from plangym.vector.gym_plan_env import GymPlanEnv
from plangym.vector.vector_env import PlanVectorEnv, autoreset_mode_of

MODES = ("sync", "async", "ray")


def build_sub_env(name: str, env_kwargs: dict[str, Any]) -> GymPlanEnv:
    """Build one sub-env: ``plangym.make(name, **env_kwargs)`` behind gymnasium's API."""
    from plangym.registry import make

    return GymPlanEnv(make(name, **env_kwargs))


def registered_kwargs(name: str, defaults: dict[str, Any]) -> dict[str, Any]:
    """Return the kwargs gymnasium registered for ``name`` that the plangym env takes too.

    ``defaults`` are the plangym env's (``{parameter: default}``); a registered value of
    another kind (an Atari ``frameskip`` range of the v4 ids) is left out.

    >>> registered_kwargs("ALE/Pong-v5", {"frameskip": 5, "repeat_action_probability": 0.0})
    {'repeat_action_probability': 0.25, 'frameskip': 4}
    >>> registered_kwargs("Pong-v4", {"frameskip": 5}), registered_kwargs("walker-walk", {})
    ({}, {})
    """
    spec = gymnasium.registry.get(name)
    if spec is None:
        return {}
    return {
        key: value
        for key, value in spec.kwargs.items()
        if key in defaults and same_kind(value, defaults[key])
    }


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


def sub_env_kwargs(name: str, env_kwargs: dict[str, Any]) -> dict[str, Any]:
    """Return the kwargs each sub-env of ``make_vec(name, **env_kwargs)`` is built with.

    gymnasium's dynamics unless the caller says otherwise: the kwargs the id was
    registered with (frameskip, sticky actions, ...) and its episode time limit; the
    plangym env's own autoreset is off (the vector env resets its sub-envs).

    >>> sub_env_kwargs("ALE/Pong-v5", {"frameskip": 2})["frameskip"]
    2
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
    kwargs = {**registered_kwargs(name, defaults), **env_kwargs, "autoreset": False}
    if "remove_time_limit" in defaults:
        kwargs.setdefault("remove_time_limit", False)
    return kwargs


def make_vec(
    id: str | None = None,
    num_envs: int = 1,
    vectorization_mode: str = "async",
    autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP,
    vector_kwargs: dict[str, Any] | None = None,
    domain_name: str | None = None,
    task_name: str | None = None,
    *,
    name: str | None = None,
    **env_kwargs: Any,
) -> PlanVectorEnv:
    """Return a gymnasium vector env of ``num_envs`` plangym envs called ``id``.

    Called as ``gymnasium.make_vec`` is, and with the same dynamics: the sub-envs take the
    kwargs the id was registered with (e.g. ``frameskip=4`` and
    ``repeat_action_probability=0.25`` for ``ALE/*-v5``) unless ``env_kwargs`` say
    otherwise, and keep its episode time limit.

    Args:
        id: An environment name, as for :func:`plangym.make` (``name=`` works too).
        num_envs: Number of sub-envs.
        vectorization_mode: "sync" (this process), "async" (one worker process per
            sub-env) or "ray" (one Ray actor per sub-env; the ``ray`` extra).
        autoreset_mode: gymnasium's :class:`~gymnasium.vector.AutoresetMode` (or its value).
        vector_kwargs: Passed to the vector env class (e.g. ``copy``, ``context``).
        domain_name: With ``task_name``, a dm_control task, as for :func:`plangym.make`.
        task_name: See ``domain_name``.
        name: The name ``id`` had in plangym 0.1; give one of the two.
        env_kwargs: Passed to each plangym env. Episodes end as the env's registration
            says (``remove_time_limit=False`` unless given); resets are the vector env's.

    Returns:
        A ``gymnasium.vector.VectorEnv`` that also has ``get_states``, ``set_states``
        and ``step_batch``.
    """
    num_envs = check_positive_int("num_envs", num_envs)
    if vectorization_mode not in MODES:
        raise ValueError(
            f"vectorization_mode: expected one of {', '.join(map(repr, MODES))}, got "
            f"{vectorization_mode!r}"
        )
    mode = autoreset_mode_of(autoreset_mode)
    if id is not None and name is not None and id != name:
        raise ValueError(f"id, name: expected one environment name, got {id=!r} and {name=!r}")
    name = resolve_name(id if id is not None else name, domain_name, task_name)
    env_fns = [functools.partial(build_sub_env, name, sub_env_kwargs(name, env_kwargs))] * num_envs
    vector_kwargs = dict(vector_kwargs or {})
    if vectorization_mode == "sync":
        from plangym.vector.sync_vector_env import SyncVectorEnv

        return SyncVectorEnv(env_fns, autoreset_mode=mode, **vector_kwargs)
    if vectorization_mode == "async":
        from plangym.vector.async_vector_env import AsyncVectorEnv

        return AsyncVectorEnv(env_fns, autoreset_mode=mode, **vector_kwargs)
    from plangym.vector.ray_vector_env import RayVectorEnv

    return RayVectorEnv(env_fns, autoreset_mode=mode, **vector_kwargs)
