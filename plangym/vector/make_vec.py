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
from typing import Any

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


def make_vec(
    name: str | None = None,
    num_envs: int = 1,
    vectorization_mode: str = "async",
    autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP,
    vector_kwargs: dict[str, Any] | None = None,
    domain_name: str | None = None,
    task_name: str | None = None,
    **env_kwargs: Any,
) -> PlanVectorEnv:
    """Return a gymnasium vector env of ``num_envs`` plangym envs called ``name``.

    Args:
        name: An environment name, as for :func:`plangym.make`.
        num_envs: Number of sub-envs.
        vectorization_mode: "sync" (this process), "async" (one worker process per
            sub-env) or "ray" (one Ray actor per sub-env; the ``ray`` extra).
        autoreset_mode: gymnasium's :class:`~gymnasium.vector.AutoresetMode` (or its value).
        vector_kwargs: Passed to the vector env class (e.g. ``copy``, ``context``).
        domain_name: With ``task_name``, a dm_control task, as for :func:`plangym.make`.
        task_name: See ``domain_name``.
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
    if env_kwargs.get("autoreset"):
        raise ValueError(
            "autoreset: the vector env resets its sub-envs (see autoreset_mode); leave "
            "autoreset out or pass autoreset=False"
        )
    name = resolve_name(name, domain_name, task_name)
    _, env_class = get_environment_class(name, state=env_kwargs.get("state"))
    defaults = constructor_defaults(env_class)
    env_kwargs = {**env_kwargs, "autoreset": False}
    if "remove_time_limit" in defaults:
        env_kwargs.setdefault("remove_time_limit", False)
    env_fns = [functools.partial(build_sub_env, name, env_kwargs)] * num_envs
    vector_kwargs = dict(vector_kwargs or {})
    if vectorization_mode == "sync":
        from plangym.vector.sync_vector_env import SyncVectorEnv

        return SyncVectorEnv(env_fns, autoreset_mode=mode, **vector_kwargs)
    if vectorization_mode == "async":
        from plangym.vector.async_vector_env import AsyncVectorEnv

        return AsyncVectorEnv(env_fns, autoreset_mode=mode, **vector_kwargs)
    from plangym.vector.ray_vector_env import RayVectorEnv

    return RayVectorEnv(env_fns, autoreset_mode=mode, **vector_kwargs)
