"""Checks of the gymnasium face: a vector env's seeds, reset mask, indices and actions."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector.utils import iterate

from plangym.validation.batches import (
    check_action,
    check_box_batch,
    check_integer_batch,
    integer_batch,
)
from plangym.validation.values import check_seed, describe, is_integer


def check_seeds(
    seed: Any, n: int, check_one: Callable[[Any], int | None] = check_seed
) -> list[int | None]:
    """One seed per sub-env: None, an int ``s`` (sub-env ``i`` gets ``s + i``) or n seeds.

    The n seeds may be a list, a tuple or a 1-D array, as gymnasium takes them. Each is
    checked with ``check_one`` (the sub-envs' own check: dm_control's takes fewer).

    >>> check_seeds(np.arange(3), 3), check_seeds(5, 2)
    ([0, 1, 2], [5, 6])
    >>> check_seeds([0, -1], 2)
    Traceback (most recent call last):
    ...
    ValueError: seed[1]: expected None or an int >= 0, received -1 (int)
    """
    if seed is None:
        return [None] * n
    if is_integer(seed):
        first = check_seed(seed)
        assert first is not None, "an integer seed"
        seeds = [first + i for i in range(n)]
        names = [f"seed (sub-env {i} gets {first} + {i})" for i in range(n)]
    else:
        is_vector = isinstance(seed, np.ndarray) and seed.ndim == 1
        if not (isinstance(seed, Sequence) or is_vector) or isinstance(seed, str) or len(seed) != n:
            raise ValueError(
                f"seed: expected None, an int or a list of {n} seeds (one per sub-env), "
                f"received {describe(seed)}"
            )
        seeds, names = list(seed), [f"seed[{k}]" for k in range(n)]
    checked = []
    for item, name in zip(seeds, names, strict=True):
        try:
            checked.append(check_one(item))
        except ValueError as error:
            raise ValueError(f"{name}{str(error).removeprefix('seed')}") from None
    return checked


def check_reset_mask(options: dict | None, n: int) -> tuple[np.ndarray | None, dict | None]:
    """Return the ``reset_mask`` in ``options`` (checked, as gymnasium does) and the rest.

    Once checked, the mask is popped from the caller's ``options``, as gymnasium's vector
    envs pop it: its ``RecordEpisodeStatistics`` reads the dict after the reset.
    """
    if options is None or "reset_mask" not in options:
        return None, options
    mask = options["reset_mask"]
    if not isinstance(mask, np.ndarray):
        raise TypeError(f"`options['reset_mask']` must be a numpy array, got {type(mask)}")
    if mask.shape != (n,):
        raise ValueError(f"`options['reset_mask']` must have shape `({n},)`, got {mask.shape}")
    if mask.dtype != np.bool_:
        raise TypeError(f"`options['reset_mask']` must have `dtype=np.bool_`, got {mask.dtype}")
    if not np.any(mask):
        raise ValueError(
            "`options['reset_mask']` must contain a boolean array with at least one True "
            f"value, got reset_mask={mask}"
        )
    del options["reset_mask"]
    return mask, options


def check_values_per_env(values: Any, n: int) -> list:
    """One value per sub-env: a list or tuple of ``n``, or one for all (gymnasium's rule)."""
    if not isinstance(values, list | tuple):
        return [values] * n
    if len(values) != n:
        raise ValueError(
            "Values must be a list or tuple with length equal to the number of "
            f"environments. Got `{len(values)}` values for {n} environments."
        )
    return list(values)


def check_values_per_worker(values: Any, n_workers: int) -> list:
    """``values`` as one value per worker, as :func:`check_values_per_env` takes them."""
    try:
        return check_values_per_env(values, n_workers)
    except ValueError:  # gymnasium's words there; plangym's here
        raise ValueError(
            f"values: expected {n_workers} values (one per worker), got {len(values)}"
        ) from None


def all_alike(values: list) -> bool:
    """Whether every value is the first one, or equal to it."""
    first = values[0]
    try:
        return all(value is first or bool(value == first) for value in values[1:])
    except Exception:  # values that compare to no single bool (arrays)
        return False


def check_indices(indices: Sequence[int] | None, n_states: int, n: int) -> list[int]:
    """Distinct sub-env indices in ``0..n-1``, one per state (default: every sub-env)."""
    if indices is None:
        indices = list(range(n))
    elif isinstance(indices, Sequence | np.ndarray) and not isinstance(indices, str | bytes):
        indices = list(indices)
    else:
        raise TypeError(
            f"indices: expected a sequence of sub-env indices in 0..{n - 1}, "
            f"received {describe(indices)}"
        )
    for index in indices:
        if not is_integer(index) or not 0 <= index < n:
            raise ValueError(f"indices: expected sub-env indices in 0..{n - 1}, got {index!r}")
    if len(set(indices)) != len(indices):
        raise ValueError(f"indices: expected distinct sub-envs, got {indices}")
    if n_states != len(indices):
        raise ValueError(f"states: expected {len(indices)} states (one per index), got {n_states}")
    return [int(index) for index in indices]


INTEGER_SPACES = (spaces.Discrete, spaces.MultiDiscrete, spaces.MultiBinary)
ARRAY_SPACES = (spaces.Box, *INTEGER_SPACES)


def check_vector_actions(
    batch_space: spaces.Space, space: spaces.Space, actions: Any, n: int, check_values: bool = True
) -> list:
    """One action per sub-env, as gymnasium's ``iterate`` yields them.

    A batch that is not ``n`` actions is refused. With ``check_values`` each action is
    checked too (its shape, and the range of an integer space); without, the actions go
    to the sub-envs as they are, as gymnasium hands them on.

    >>> space = spaces.Discrete(2)
    >>> check_vector_actions(spaces.MultiDiscrete([2, 2]), space, [1, 5], 2, check_values=False)
    [1, 5]
    >>> check_vector_actions(spaces.MultiDiscrete([2, 2]), space, [1, 5], 2)
    Traceback (most recent call last):
    ...
    ValueError: actions[1]: expected an integer in [0, 2) for Discrete(2), received 5
    >>> check_vector_actions(spaces.MultiDiscrete([2, 2]), space, 0, 2)
    Traceback (most recent call last):
    ...
    TypeError: actions: expected a batch of 2 actions of Discrete(2), got 0
    """
    if isinstance(actions, np.ndarray) and isinstance(space, ARRAY_SPACES):
        expected = (n, *(space.shape or ()))
        if actions.shape[:1] != (n,) or (check_values and actions.shape != expected):
            raise ValueError(
                f"actions: expected an array of shape {expected} (one action per "
                f"sub-env), got shape {actions.shape}"
            )
        items = list(actions)
    else:
        try:
            items = list(iterate(batch_space, actions))
        except Exception as error:
            # What gymnasium's iterate cannot iterate at all (a scalar) is its TypeError.
            kind = TypeError if isinstance(error, TypeError) else ValueError
            raise kind(
                f"actions: expected a batch of {n} actions of {space}, got {actions!r:.200}"
            ) from error
        if len(items) != n:
            raise ValueError(f"actions: expected {n} actions (one per sub-env), got {len(items)}")
    return checked_values(space, actions, items) if check_values else items


def checked_values(space: spaces.Space, actions: Any, items: list) -> list:
    """Check every action as a plangym sub-env will: one bad action stops the whole batch.

    A bad action gets ``step_batch``'s message, named by its sub-env's index.

    Returns the actions to send. Integer actions given in a list go as the elements of one
    integer array, so that a ``True`` among them is 1, as gymnasium's spaces take it.

    >>> box = spaces.Box(-1.0, 1.0, shape=(1,))
    >>> checked_values(box, None, [np.zeros(1), np.array([np.nan])])
    Traceback (most recent call last):
    ...
    ValueError: actions[1]: expected finite values for Box(...), received [nan]
    >>> [int(action) for action in checked_values(spaces.Discrete(2), None, [0, True])]
    [0, 1]
    """
    if isinstance(space, INTEGER_SPACES):
        batch = actions if isinstance(actions, np.ndarray) else integer_batch(items)
        check_integer_batch(space, batch)
        return items if batch is actions else list(batch)
    if isinstance(space, spaces.Box) and check_box_batch(
        space, actions if isinstance(actions, np.ndarray) else items
    ):
        return items
    for index, item in enumerate(items):
        check_action(space, item, name=f"actions[{index}]")
    return items


def check_states_given(states: Any) -> None:
    """Raise unless every element of a vector env's ``step_batch`` comes with its state.

    A plangym env steps a None state from its current one; a vector env has one current
    state per sub-env, none of them the batch's, so it takes given states only.

    >>> check_states_given([b"s0", None])
    Traceback (most recent call last):
    ...
    ValueError: states[1]: expected a state (get_states() gives them), received None: a ...
    """
    advice = (
        "a vector env's step_batch steps each action from the state given with it "
        "(step() steps the sub-envs from their own)"
    )
    if states is None:
        raise TypeError(f"states: expected one state per action, received None: {advice}")
    if isinstance(states, np.ndarray) and states.dtype != object:
        return  # a record array or an array of states: no None in it
    if isinstance(states, Sequence | np.ndarray):
        for index, state in enumerate(states):
            if state is None:
                raise ValueError(
                    f"states[{index}]: expected a state (get_states() gives them), received "
                    f"None: {advice}"
                )
