"""A vector env's spaces and autoreset mode, read and checked as gymnasium does."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import gymnasium
from gymnasium import Space
from gymnasium.error import CustomSpaceError
from gymnasium.spaces import Dict, OneOf, Tuple
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_differing_spaces, batch_space, create_shared_memory


def autoreset_mode_of(value: str | AutoresetMode) -> AutoresetMode:
    """``value`` as an :class:`AutoresetMode` (its name or value), or a clear error.

    >>> autoreset_mode_of("SameStep")
    <AutoresetMode.SAME_STEP: 'SameStep'>
    """
    if isinstance(value, AutoresetMode):
        return value
    for mode in AutoresetMode:
        if value in (mode.value, mode.name):
            return mode
    choices = ", ".join(repr(mode.value) for mode in AutoresetMode)
    raise ValueError(
        f"autoreset_mode: expected an AutoresetMode or one of {choices}, got {value!r}"
    )


def observation_spaces(
    observation_mode: str | tuple,
    first: gymnasium.Env,
    env_fns: Sequence[Callable],
    built: Sequence[gymnasium.Env] = (),
) -> tuple[Space, Space]:
    """``(single, batched)`` observation spaces for ``observation_mode``, as gymnasium.

    Under "different" each sub-env's space is read: off ``built``, the sub-envs when they
    are already built, else off an env each ``env_fns`` builds (and closes) for it.
    """
    if isinstance(observation_mode, tuple) and len(observation_mode) == 2:
        batched, single = observation_mode
        if not isinstance(batched, Space) or not isinstance(single, Space):
            raise TypeError(
                "observation_mode: expected both elements to be Spaces, got "
                f"{type(batched)} and {type(single)}"
            )
        return single, batched
    if observation_mode == "same":
        return first.observation_space, batch_space(first.observation_space, len(env_fns))
    if observation_mode == "different":
        others = [env.observation_space for env in built[1:]] or list(
            map(observation_space_of, env_fns[1:])
        )
        spaces = [first.observation_space, *others]
        return spaces[0], batch_differing_spaces(spaces)
    raise ValueError(  # gymnasium's words (code written for it may match them)
        "Invalid `observation_mode`, expected: 'same' or 'different' or tuple of single and "
        f"batch observation space, actual got {observation_mode}"
    )


def observation_space_of(env_fn: Callable) -> Space:
    """Return the observation space of an env ``env_fn`` builds (its probe, if any), closed."""
    env = getattr(env_fn, "probe", env_fn)()
    try:
        return env.observation_space
    finally:
        env.close()


def space_mismatch(envs: Any, answers: list[tuple[Any, Any]]) -> str:
    """Say what is wrong with the sub-envs' spaces (``CheckSpaces`` answers), or ``""``.

    An answer holds a sub-env's observation and action spaces where they differ from the
    vector env's, else None. The words are gymnasium's ``SyncVectorEnv``'s, plus the index.
    """
    name = type(envs).__name__
    for index, (observation_space, _) in enumerate(answers):
        if observation_space is None:
            continue
        single = f"single_observation_space={envs.single_observation_space}"
        theirs = f"sub-environment observation_space={observation_space} (sub-env {index})"
        if envs.observation_mode == "same":
            return (
                f"{name}(..., observation_mode='same') however the sub-environments "
                f"observation spaces are not equivalent. {single}, {theirs}. If this is "
                "intentional, use `observation_mode='different'` instead."
            )
        return (
            f"{name}(..., observation_mode='different' or custom space) however the "
            "sub-environments observation spaces do not share a common shape and dtype, "
            f"{single}, {theirs}"
        )
    for index, (_, action_space) in enumerate(answers):
        if action_space is not None:
            return (
                "Sub-environment action space doesn't make the `single_action_space`, "
                f"action_space={action_space} (sub-env {index}), "
                f"single_action_space={envs.single_action_space}"
            )
    return ""


def unshareable_space(space: Space) -> Space | None:
    """Return the first (custom) space in ``space`` that gymnasium's shared memory cannot hold.

    >>> from gymnasium.spaces import Box
    >>> class Custom(Space):
    ...     pass
    >>> type(unshareable_space(Tuple([Box(0, 1), Dict({"c": Custom()})]))).__name__
    'Custom'
    >>> unshareable_space(Box(0, 1)) is None
    True
    """
    if create_shared_memory.dispatch(type(space)) is create_shared_memory.dispatch(object):
        return space
    children: Any = ()
    if isinstance(space, Dict):
        children = space.spaces.values()
    elif isinstance(space, Tuple | OneOf):
        children = space.spaces
    found = (unshareable_space(child) for child in children)
    return next((space for space in found if space is not None), None)


def check_shared_memory(space: Space) -> None:
    """Refuse, as gymnasium does, a space that cannot go through shared memory (ValueError)."""
    found = unshareable_space(space)
    if found is not None:
        raise ValueError(
            "AsyncVectorEnv(..., shared_memory=True): gymnasium's shared memory cannot hold "
            f"observations of {type(found).__name__}, a custom space; pass "
            "shared_memory=False (observations are then pickled, which is slower)"
        ) from CustomSpaceError(f"{type(found)} has no shared-memory layout")
