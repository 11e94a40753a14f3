"""gymnasium envs built lean, and their episode time limits taken out or found."""

from __future__ import annotations

import dataclasses
from typing import Any

import gymnasium as gym
from gymnasium.envs.registration import EnvSpec


def make_gym_env(name: str, remove_time_limit: bool = True, **kwargs: Any) -> gym.Env:
    """Build a gymnasium env without the wrappers that only slow stepping down.

    The passive env checker and the order enforcer are left out; the time limit is kept
    only when ``remove_time_limit`` is False.
    """
    spec = gym.spec(name)
    overrides: dict[str, Any] = {"order_enforce": False, "disable_env_checker": True}
    if remove_time_limit:
        overrides["max_episode_steps"] = None
    return gym.make(dataclasses.replace(spec, **overrides), **kwargs)


def remove_time_limit_from_spec(spec: EnvSpec) -> None:
    """Take the episode step limit out of ``spec``, in place.

    ``spec.max_episode_steps`` becomes None, so ``gymnasium.make(spec)`` adds no
    ``TimeLimit`` wrapper, and the limit it had is kept in ``spec._max_episode_steps``. A
    second call changes nothing, and an object without ``max_episode_steps`` is left alone.
    The spec is modified, not copied: to leave a registered spec as it is, pass a copy such
    as ``dataclasses.replace(gymnasium.spec(name))``.

    Args:
        spec: The ``EnvSpec`` to change.

    Example:
        >>> spec = dataclasses.replace(gym.spec("CartPole-v1"))
        >>> remove_time_limit_from_spec(spec)
        >>> spec.max_episode_steps is None, spec._max_episode_steps
        (True, 500)
        >>> gym.spec("CartPole-v1").max_episode_steps
        500
    """
    if not hasattr(spec, "max_episode_steps"):
        return
    if spec.max_episode_steps is not None or not hasattr(spec, "_max_episode_steps"):
        # Not a field of EnvSpec: an attribute of its own, where gym's spec kept the limit.
        setattr(spec, "_max_episode_steps", spec.max_episode_steps)  # noqa: B010
    spec.max_episode_steps = None


def remove_time_limit(gym_env: gym.Env) -> gym.Env:
    """Return ``gym_env`` with every ``TimeLimit`` wrapper taken out of its chain.

    The wrappers left in the chain are relinked in place; the returned env is ``gym_env``
    itself unless ``gym_env`` is a ``TimeLimit``. Its ``spec`` then reports no step limit:
    the wrappers' cached specs are dropped, and if the base env's spec has a limit, the base
    env gets a copy without it (the spec it had, which may be shared, is left as it is).

    Example:
        >>> env = remove_time_limit(gym.make("CartPole-v1"))
        >>> env.spec.max_episode_steps is None
        True
    """
    outer: gym.Wrapper | None = None
    current = gym_env
    while isinstance(current, gym.Wrapper):
        if isinstance(current, gym.wrappers.TimeLimit):
            if outer is None:
                gym_env = current = current.env
                continue
            outer.env = current.env
            current = current.env
            continue
        outer, current = current, current.env
    base_spec = getattr(current, "spec", None)
    if base_spec is not None and base_spec.max_episode_steps is not None:
        base_spec = dataclasses.replace(base_spec)
        remove_time_limit_from_spec(base_spec)
        current.spec = base_spec
    wrapper = gym_env
    while isinstance(wrapper, gym.Wrapper):
        wrapper._cached_spec = None
        wrapper = wrapper.env
    return gym_env


def find_time_limit(gym_env: gym.Env) -> gym.wrappers.TimeLimit | None:
    """Return the outermost ``TimeLimit`` wrapper of ``gym_env``, if any."""
    current = gym_env
    while isinstance(current, gym.Wrapper):
        if isinstance(current, gym.wrappers.TimeLimit):
            return current
        current = current.env
    return None
