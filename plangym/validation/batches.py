"""Checks of a ``step_batch``: its actions, states and dts, as both faces check them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from plangym.validation.values import MAX_DT, check_dt, describe, is_integer


def check_batch_dt(dt: Any, n: int) -> list[int]:
    """Return one validated dt per batch element; ``dt`` is a scalar or a sequence of n."""
    one = isinstance(dt, float | np.floating) or (isinstance(dt, np.ndarray) and dt.ndim == 0)
    if one or is_integer(dt):
        return [check_dt(dt)] * n
    if not isinstance(dt, Sequence | np.ndarray) or isinstance(dt, str | bytes):
        raise TypeError(
            f"dt: expected an integer >= 1 or a sequence of {n} of them, received {describe(dt)}"
        )
    if len(dt) != n:
        raise ValueError(f"dt: expected {n} values (one per action), received {len(dt)}")
    if isinstance(dt, np.ndarray) and dt.dtype.kind == "f" and dt.ndim == 1:
        with np.errstate(invalid="ignore"):
            fine = np.isfinite(dt) & (dt % 1 == 0) & (dt >= 1) & (dt <= MAX_DT)
        if not fine.all():  # the element check names the first bad one
            bad = int(np.argmin(fine))
            _check_element(bad, dt[bad])
        dt = dt.astype(np.int64)  # whole numbers as floats, as plangym 0.1 took them
    if isinstance(dt, np.ndarray) and dt.dtype.kind in "iu" and dt.ndim == 1:
        if n and (dt.min() < 1 or dt.max() > MAX_DT):
            bad = int(np.argmax((dt < 1) | (dt > MAX_DT)))
            _check_element(bad, int(dt[bad]))
        return dt.tolist()
    return [_check_element(i, value) for i, value in enumerate(dt)]


def _check_element(index: int, value: Any) -> int:
    """Return ``dt[index]`` checked as a ``dt``; its error names the element."""
    try:
        return check_dt(value)
    except (TypeError, ValueError) as error:
        raise type(error)(f"dt[{index}]: {str(error).split(': ', 1)[1]}") from None


def check_batch_states(states: Any, n: int) -> list | np.ndarray | None:
    """Return the states of a batch as a list, or None when no states were given.

    A 1-D record array of 0-d record states (see :class:`plangym.columns.BatchColumns`)
    is returned whole.

    ``states`` is None, or a sequence of ``n`` states, or a sequence of ``n`` Nones (which
    means "no states"). Mixing states and Nones is ambiguous and rejected.
    """
    if states is None:
        return None
    if isinstance(states, np.ndarray) and states.ndim == 1 and states.dtype.names is not None:
        if len(states) != n:  # one record array of 0-d record states: kept whole
            raise ValueError(
                f"states: expected {n} states (one per action), received {len(states)}"
            )
        return states
    # A 0-d record, or a flat vector of numbers (no batch of states is one): one state.
    if isinstance(states, np.ndarray | np.void) and (
        states.ndim == 0 or (states.ndim == 1 and states.dtype != object)
    ):
        raise TypeError(
            f"states: expected None or a list of {n} states, received one state "
            f"({describe(states)}); pass [state] * {n} to step every action from it"
        )
    if isinstance(states, np.ndarray) and states.dtype != object:
        states = list(states)
    if not isinstance(states, Sequence | np.ndarray) or isinstance(states, str | bytes):
        raise TypeError(
            f"states: expected None or a list of {n} states, received {describe(states)}"
        )
    if len(states) != n:
        raise ValueError(f"states: expected {n} states (one per action), received {len(states)}")
    missing = [i for i, state in enumerate(states) if state is None]
    if missing and len(missing) == n:
        return None
    if missing:
        raise ValueError(
            f"states: expected all states or all None, received None at positions {missing[:10]}"
        )
    return list(states)


def check_batch_actions(actions: Any) -> Sequence | np.ndarray:
    """Return the actions of a batch as a sequence; reject scalars and strings."""
    if isinstance(actions, np.ndarray):
        if actions.ndim == 0:
            raise TypeError(
                f"actions: expected a sequence of actions, received {describe(actions)}"
            )
        return actions
    if not isinstance(actions, Sequence) or isinstance(actions, str | bytes):
        raise TypeError(f"actions: expected a sequence of actions, received {describe(actions)}")
    return actions


def check_action(space: spaces.Space, action: Any, name: str = "action") -> None:
    """Raise unless ``action`` belongs to ``space`` (Discrete, MultiDiscrete or Box).

    >>> check_action(spaces.Discrete(4), 3)
    >>> check_action(spaces.Discrete(4), -1)
    Traceback (most recent call last):
    ...
    ValueError: action: expected an integer in [0, 4) for Discrete(4), received -1
    >>> check_action(spaces.MultiBinary(3), np.array([0, 2, 1]))
    Traceback (most recent call last):
    ...
    ValueError: action: expected an element of MultiBinary(3), received ndarray(...) [0, 2, 1]
    """
    if isinstance(space, spaces.Discrete):
        low, high = int(space.start), int(space.start + space.n)
        if not is_integer(action):
            raise TypeError(
                f"{name}: expected an integer in [{low}, {high}) for {space}, "
                f"received {describe(action)}"
            )
        if not low <= int(action) < high:
            raise ValueError(
                f"{name}: expected an integer in [{low}, {high}) for {space}, "
                f"received {int(action)}"
            )
        return
    if isinstance(space, spaces.Box):
        array = np.asarray(action)
        if array.dtype.kind not in "iuf" or array.shape != space.shape:
            raise TypeError(
                f"{name}: expected a numeric array of shape {space.shape} for {space}, "
                f"received {describe(action)}"
            )
        # Values outside the bounds go to the env, which clips them as gymnasium's envs
        # (and plangym 0.1) do: planners perturb actions. NaN and infinities stop here,
        # and so do values the space's dtype cannot hold (1e300 is inf as float32).
        if not finite_in_dtype(array, space.dtype).all():
            beyond = f" (beyond {space.dtype})" if np.isfinite(array).all() else ""
            raise ValueError(
                f"{name}: expected finite values for {space}, received {array.tolist()}{beyond}"
            )
        return
    if not space.contains(action):
        shown = describe(action)
        if isinstance(action, np.ndarray) and action.size <= 32:  # show a button pad's values
            shown += f" {action.tolist()}"
        raise ValueError(f"{name}: expected an element of {space}, received {shown}")


def finite_in_dtype(array: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Whether each value of ``array`` is finite, and stays so as ``dtype`` (a float type).

    >>> finite_in_dtype(np.array([1.0, 1e300, np.nan]), np.dtype(np.float32)).tolist()
    [True, False, False]
    """
    if np.dtype(dtype).kind != "f":
        return np.isfinite(array)
    with np.errstate(over="ignore"):  # an overflow is what this finds
        return np.isfinite(array.astype(dtype, copy=False))


def check_discrete_batch(space: spaces.Discrete, actions: Any) -> bool:
    """Vectorised fast path for integer action arrays; False means "check one by one"."""
    low, high = int(space.start), int(space.start + space.n)
    if isinstance(actions, np.ndarray):
        array = actions
    elif all(type(action) is int for action in actions):  # bools are not ints here
        if not actions:
            return False
        if low <= min(actions) and max(actions) < high:
            return True
        # Found in Python: an int beyond int64 would not fit an array.
        bad = next(i for i, action in enumerate(actions) if not low <= action < high)
        check_action(space, actions[bad], name=f"actions[{bad}]")  # raises: check_action's words
    elif all(isinstance(action, np.integer) for action in actions):  # e.g. sampled ones
        array = np.asarray(actions)
    else:
        return False
    if array.ndim != 1 or array.dtype.kind not in "iu" or array.size == 0:
        return False
    # Python's min and max beat two NumPy reductions on the few actions of a small batch.
    values = array.tolist() if array.size <= 64 else (array.min(), array.max())
    if low <= min(values) and max(values) < high:
        return True
    below, above = array < low, array >= high
    if below.any() or above.any():
        bad = int(np.argmax(below | above))
        check_action(space, array[bad], name=f"actions[{bad}]")  # raises: check_action's words
    return True


def check_box_batch(space: spaces.Box, actions: Any) -> bool:
    """Vectorised fast path for a batch of Box actions; False means "check one by one".

    Takes the path when the batch stacks into one numeric array of shape
    ``(n, *space.shape)``; any bad element is then found and reported as the one-by-one
    check would report it.

    >>> box = spaces.Box(-1.0, 1.0, shape=(2,))
    >>> check_box_batch(box, np.zeros((3, 2)))
    True
    >>> check_box_batch(box, [np.zeros(2), np.array([0.5, np.nan])])
    Traceback (most recent call last):
    ...
    ValueError: actions[1]: expected finite values for Box(-1.0, 1.0, (2,), float32), received ...
    """
    array: np.ndarray | None
    if isinstance(actions, np.ndarray):
        array = actions
    else:
        shape = space.shape
        if not all(type(action) is np.ndarray and action.shape == shape for action in actions):
            return False
        array = np.stack(actions) if len(actions) else None
    if array is None or array.dtype.kind not in "iuf" or array.shape[1:] != space.shape:
        return False
    # As check_action: out-of-bounds values are the env's to clip.
    inside = finite_in_dtype(array, space.dtype)
    if inside.all():
        return True
    bad = int(np.argmin(inside.reshape(len(array), -1).all(axis=1)))
    check_action(space, array[bad], name=f"actions[{bad}]")
    return True  # not reached: check_action raised for the bad element


def discrete_as_int64(actions: Any, space: Any) -> Any:
    """Return checked integer actions as one int64 array, anything else as it came.

    One int64 array crosses to the workers as raw bytes and is read by the kernels as it
    is; the values, and so the results, are the same.
    """
    if isinstance(actions, np.ndarray):
        if actions.ndim == 1 and actions.dtype.kind in "iu":
            return actions.astype(np.int64, copy=False)
        return actions
    if (
        isinstance(space, spaces.Discrete)
        and actions
        and all(type(action) is int or _is_integer_value(action) for action in actions)
    ):  # bools stay bools
        return np.fromiter(actions, dtype=np.int64, count=len(actions))
    return actions


def _is_integer_value(action: Any) -> bool:
    # 0-d arrays too: as the batch's own array, no env can change them in place (stable-retro
    # divides its action in place) and a read-only one (from Ray) is not refused.
    if isinstance(action, np.ndarray):
        return action.ndim == 0 and action.dtype.kind in "iu"
    return isinstance(action, np.integer)


def items_as_given(items: Sequence) -> np.ndarray:
    """``items`` as a 1-D object array, each element the very object given.

    What a batch check gets for actions that are not all integers, so that the bad one is
    named with its own value: as one array, ``[1, "a"]`` would be strings and ``[1, 1.5]``
    floats, blaming ``actions[0]``, and ``[1, [1]]`` no array at all.

    >>> items_as_given([1, [1]])
    array([1, list([1])], dtype=object)
    """
    given = np.empty(len(items), dtype=object)
    for index, item in enumerate(items):
        given[index] = item
    return given


def integer_batch(items: Sequence) -> np.ndarray:
    """Return a list of integer actions as one array, for :func:`check_integer_batch`.

    Python bools count as the ints they are (as gymnasium's spaces take them); items that
    are not all integers come as given (:func:`items_as_given`), so the bad one is named.

    >>> integer_batch([True, 0]).tolist(), integer_batch([1, "a"]).dtype
    ([1, 0], dtype('O'))
    """
    try:
        batch = np.asarray(items)
    except ValueError:  # ragged, [1, [1]]
        return items_as_given(items)
    if batch.dtype == np.bool_ and all(type(item) is bool for item in items):
        return batch.astype(np.int64)
    return batch if batch.dtype.kind in "biu" else items_as_given(items)


def check_integer_batch(space: spaces.Space, actions: np.ndarray) -> None:
    """Check an array of actions of a Discrete, MultiDiscrete or MultiBinary space at once.

    A bad action is reported as :func:`check_action` reports it, by its index, so a batch
    gets the same message on every face.

    >>> check_integer_batch(spaces.Discrete(2), np.array([0, 1, 2]))
    Traceback (most recent call last):
    ...
    ValueError: actions[2]: expected an integer in [0, 2) for Discrete(2), received 2
    """
    if isinstance(space, spaces.Discrete):
        if check_discrete_batch(space, actions):  # integers: in range, or the bad one raised
            return
    elif actions.dtype.kind in "iub":  # MultiDiscrete and MultiBinary take booleans too
        low, high = (
            (space.start, space.start + space.nvec)
            if isinstance(space, spaces.MultiDiscrete)
            else (0, 2)
        )
        bad = (actions < low) | (actions >= high)
        if not bad.any():
            return
        first = int(np.argmax(bad.reshape(len(actions), -1).any(axis=1)))
        check_action(space, actions[first], name=f"actions[{first}]")
    for index, action in enumerate(actions):  # each as check_action takes it
        check_action(space, action, name=f"actions[{index}]")


def check_batch_action_values(space: spaces.Space | None, actions: Sequence | np.ndarray) -> None:
    """Check every action of a batch against ``space`` (no-op when the env has no space)."""
    if space is None:
        return
    if isinstance(space, spaces.Discrete) and check_discrete_batch(space, actions):
        return
    if isinstance(space, spaces.Box) and check_box_batch(space, actions):
        return
    for i, action in enumerate(actions):
        check_action(space, action, name=f"actions[{i}]")


def check_space_batch(
    space: spaces.Space, actions: Any, states: Any, dt: Any
) -> tuple[Any, list | np.ndarray | None, list[int]]:
    """Check a ``step_batch`` against an action space: ``(actions, states, dts)``."""
    actions = check_batch_actions(actions)
    states, dts = check_batch_states(states, len(actions)), check_batch_dt(dt, len(actions))
    check_batch_action_values(space, actions)
    return discrete_as_int64(actions, space), states, dts
