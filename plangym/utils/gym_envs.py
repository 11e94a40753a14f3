"""gymnasium envs built lean, and their episode time limits taken out or found."""

from __future__ import annotations

import dataclasses
import importlib
import threading
from typing import Any

import gymnasium as gym
from gymnasium.envs.registration import EnvSpec, find_highest_version, parse_env_id

# gymnasium's classic_control package, imported by two threads at once (their first make()),
# can hand one of them a half-initialised module (ImportError, KeyError): one at a time here.
_FIRST_IMPORTS = threading.Lock()


def make_gym_env(name: str, remove_time_limit: bool = True, **kwargs: Any) -> gym.Env:
    """Build a gymnasium env without the wrappers that only slow stepping down.

    The passive env checker and the order enforcer are left out; the time limit is kept
    only when ``remove_time_limit`` is False.
    """
    spec = gym.spec(name)
    if isinstance(spec.entry_point, str):
        with _FIRST_IMPORTS:  # two threads importing one package at once may see it half-built
            importlib.import_module(spec.entry_point.split(":")[0])
    warn_if_out_of_date(spec)
    overrides: dict[str, Any] = {"order_enforce": False, "disable_env_checker": True}
    if remove_time_limit:
        overrides["max_episode_steps"] = None
    return gym.make(dataclasses.replace(spec, **overrides), **kwargs)


def warn_if_out_of_date(spec: EnvSpec) -> None:
    """Warn as ``gymnasium.make(id)`` does when a newer version of the env is registered.

    Making an env from its spec (as :func:`make_gym_env` does) skips gymnasium's check.
    """
    namespace, name, version = parse_env_id(spec.id)
    latest = find_highest_version(namespace, name)
    if version is not None and latest is not None and latest > version:
        gym.logger.deprecation(
            f"The environment {spec.id} is out of date. You should consider "
            f"upgrading to version `v{latest}`."
        )


# plangym 0.1's "no limit", 1e100 steps, as the int equal to it: gymnasium's TimeLimit takes ints.
NO_TIME_LIMIT = int(1e100)


def remove_time_limit_from_spec(spec: EnvSpec) -> None:
    """Lift the episode step limit of ``spec`` to :data:`NO_TIME_LIMIT`, in place (plangym 0.1).

    ``spec.max_episode_steps`` becomes 1e100 steps (an int, so ``gymnasium.make(spec)`` works:
    its ``TimeLimit`` never truncates) and the limit it had is kept in
    ``spec._max_episode_steps``. A second call changes nothing, and an object without
    ``max_episode_steps`` is left alone. The spec is modified, not copied: to leave a
    registered spec as it is, pass a copy such as ``dataclasses.replace(gymnasium.spec(name))``.

    Args:
        spec: The ``EnvSpec`` to change.

    Example:
        >>> spec = dataclasses.replace(gym.spec("CartPole-v1"))
        >>> remove_time_limit_from_spec(spec)
        >>> spec.max_episode_steps == 1e100, spec._max_episode_steps
        (True, 500)
        >>> gym.spec("CartPole-v1").max_episode_steps
        500
    """
    if not hasattr(spec, "max_episode_steps"):
        return
    if spec.max_episode_steps != NO_TIME_LIMIT or not hasattr(spec, "_max_episode_steps"):
        # Not a field of EnvSpec: an attribute of its own, where gym's spec kept the limit.
        setattr(spec, "_max_episode_steps", spec.max_episode_steps)  # noqa: B010
    spec.max_episode_steps = NO_TIME_LIMIT


def remove_time_limit(gym_env: gym.Env) -> gym.Env:
    """Return ``gym_env`` with every ``TimeLimit`` wrapper taken out of its chain.

    The wrappers left in the chain are relinked in place; the returned env is ``gym_env``
    itself unless ``gym_env`` is a ``TimeLimit``. Its ``spec`` then says, as plangym 0.1's
    did, ``max_episode_steps == 1e100`` and ``_max_episode_steps`` the limit it had (the
    outermost ``TimeLimit``'s): the base env gets a copy of its spec so changed (the spec it
    had, which may be shared, is left as it is) and the wrappers' cached specs are dropped.

    Example:
        >>> env = remove_time_limit(gym.make("CartPole-v1"))
        >>> env.spec.max_episode_steps == 1e100, env.spec._max_episode_steps
        (True, 500)
    """
    time_limit = find_time_limit(gym_env)
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
    if base_spec is not None and (
        time_limit is not None or base_spec.max_episode_steps != NO_TIME_LIMIT
    ):
        limit = base_spec.max_episode_steps if time_limit is None else time_limit._max_episode_steps
        base_spec = dataclasses.replace(base_spec, max_episode_steps=limit)
        remove_time_limit_from_spec(base_spec)
        current.spec = base_spec
    wrapper = gym_env
    while isinstance(wrapper, gym.Wrapper):
        wrapper._cached_spec = None
        wrapper = wrapper.env
    return gym_env


def find_time_limit(gym_env: gym.Env) -> gym.wrappers.TimeLimit | None:
    """Return the outermost ``TimeLimit`` wrapper of ``gym_env``, if any."""
    limits = find_time_limits(gym_env)
    return limits[0] if limits else None


def find_time_limits(gym_env: gym.Env) -> list[gym.wrappers.TimeLimit]:
    """Return every ``TimeLimit`` wrapper of ``gym_env``, outermost first.

    >>> env = gym.wrappers.TimeLimit(gym.make("CartPole-v1"), max_episode_steps=50)
    >>> [limit._max_episode_steps for limit in find_time_limits(env)]
    [50, 500]
    """
    found = []
    current = gym_env
    while isinstance(current, gym.Wrapper):
        if isinstance(current, gym.wrappers.TimeLimit):
            found.append(current)
        current = current.env
    return found


def registered_time_limit(name: str) -> int | None:
    """Return the episode step limit gymnasium registers for ``name`` (None: none, or no id).

    >>> registered_time_limit("CartPole-v1"), registered_time_limit("no-such-env-v0")
    (500, None)
    """
    try:
        spec = gym.spec(name)
    except gym.error.Error:
        return None
    return spec.max_episode_steps
