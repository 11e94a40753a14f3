"""Input checks shared by every environment.

Each check raises before any work is dispatched, with a message naming the parameter,
what was expected and what was received, so a bad call never leaves an env half-stepped.

>>> check_dt(3)
3
>>> check_dt(0)
Traceback (most recent call last):
...
ValueError: dt: expected an integer >= 1, received 0
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector.utils import iterate


def describe(value: Any) -> str:
    """Return a short description of ``value`` for error messages.

    >>> describe(np.zeros((3,), dtype=np.float32))
    'ndarray(shape=(3,), dtype=float32)'
    >>> describe(1.5)
    '1.5 (float)'
    """
    if isinstance(value, np.ndarray):
        return f"ndarray(shape={value.shape}, dtype={value.dtype})"
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{text} ({type(value).__name__})"


def is_integer(value: Any) -> bool:
    """Return True for Python and NumPy integers (booleans excluded)."""
    if isinstance(value, bool | np.bool_):
        return False
    if isinstance(value, int | np.integer):
        return True
    return isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iu"


def check_positive_int(name: str, value: Any) -> int:
    """Return ``value`` as an int, or raise if it is not an integer >= 1."""
    if not is_integer(value):
        raise TypeError(f"{name}: expected an integer >= 1, received {describe(value)}")
    if int(value) < 1:
        raise ValueError(f"{name}: expected an integer >= 1, received {int(value)}")
    return int(value)


def check_flag(name: str, value: Any) -> bool:
    """Return ``value`` as a bool, or raise if it is not True or False (NumPy's too).

    >>> check_flag("arrays", np.True_)
    True
    >>> check_flag("arrays", "yes")
    Traceback (most recent call last):
    ...
    TypeError: arrays: expected True or False, received 'yes' (str)
    """
    if not isinstance(value, bool | np.bool_):
        raise TypeError(f"{name}: expected True or False, received {describe(value)}")
    return bool(value)


def check_dt(dt: Any) -> int:
    """Validate the number of agent steps of one ``step`` call."""
    return check_positive_int("dt", dt)


def check_choice(name: str, value: Any, choices: set | frozenset) -> Any:
    """Raise ValueError unless ``value`` is one of ``choices``."""
    if value not in choices:
        shown = sorted(choices, key=str)
        raise ValueError(f"{name}: expected one of {shown}, received {value!r}")
    return value


def check_pictures_available(
    render_mode: str | None,
    return_image: bool,
    obs_type: str,
    screen_from_renderer: bool,
    default_obs_type: str,
) -> None:
    """Raise ValueError when the env would be asked for pictures it cannot draw.

    ``return_image=True`` needs a render mode; an observation drawn by gymnasium's
    renderer (``screen_from_renderer``) needs ``render_mode="rgb_array"``, and so does
    ``return_image`` for such an env, whose "human" mode draws in a window only.

    >>> check_pictures_available(None, True, "ram", False, "rgb")
    Traceback (most recent call last):
    ...
    ValueError: render_mode: expected 'rgb_array' or 'human' because return_image=True ...
    """
    renders_obs = screen_from_renderer and obs_type != default_obs_type
    if screen_from_renderer and (return_image or renders_obs):
        allowed: tuple = ("rgb_array",)
    elif return_image:
        allowed = ("rgb_array", "human")
    else:
        return
    if render_mode not in allowed:
        needs = "return_image=True" if return_image else f"obs_type={obs_type!r}"
        raise ValueError(
            f"render_mode: expected {' or '.join(map(repr, allowed))} because {needs} "
            f"needs pictures, received {render_mode!r}"
        )


def check_batch_dt(dt: Any, n: int) -> list[int]:
    """Return one validated dt per batch element; ``dt`` is a scalar or a sequence of n."""
    if is_integer(dt):
        return [check_dt(dt)] * n
    if not isinstance(dt, Sequence | np.ndarray) or isinstance(dt, str | bytes):
        raise TypeError(
            f"dt: expected an integer >= 1 or a sequence of {n} of them, received {describe(dt)}"
        )
    if len(dt) != n:
        raise ValueError(f"dt: expected {n} values (one per action), received {len(dt)}")
    if isinstance(dt, np.ndarray) and dt.dtype.kind in "iu" and dt.ndim == 1:
        if n and dt.min() < 1:
            bad = int(np.argmax(dt < 1))
            raise ValueError(f"dt[{bad}]: expected an integer >= 1, received {int(dt[bad])}")
        return dt.tolist()
    for i, value in enumerate(dt):
        try:
            check_dt(value)
        except (TypeError, ValueError) as error:
            raise type(error)(f"dt[{i}]: {str(error).split(': ', 1)[1]}") from None
    return [int(value) for value in dt]


def check_batch_states(states: Any, n: int) -> list | None:
    """Return the states of a batch as a list, or None when no states were given.

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


def check_batch_actions(actions: Any) -> list:
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
        if not (
            np.all(np.isfinite(array))
            and np.all(array >= space.low)
            and np.all(array <= space.high)
        ):
            raise ValueError(
                f"{name}: expected values within [{space.low}, {space.high}] for {space}, "
                f"received {array.tolist()}"
            )
        return
    if not space.contains(action):
        raise ValueError(f"{name}: expected an element of {space}, received {describe(action)}")


def check_discrete_batch(space: spaces.Discrete, actions: Any) -> bool:
    """Vectorised fast path for integer action arrays; False means "check one by one"."""
    low, high = int(space.start), int(space.start + space.n)
    if isinstance(actions, np.ndarray):
        array = actions
    elif all(type(action) is int for action in actions):  # bools are not ints here
        if actions and low <= min(actions) and max(actions) < high:
            return True
        array = np.fromiter(actions, dtype=np.int64, count=len(actions))
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
        raise ValueError(
            f"actions[{bad}]: expected an integer in [{low}, {high}) for {space}, "
            f"received {int(array[bad])}"
        )
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
    ValueError: actions[1]: expected values within [[-1. -1.], [1. 1.]] for Box(...), received ...
    """
    if isinstance(actions, np.ndarray):
        array = actions
    else:
        shape = space.shape
        if not all(type(action) is np.ndarray and action.shape == shape for action in actions):
            return False
        array = np.stack(actions) if len(actions) else None
    if array is None or array.dtype.kind not in "iuf" or array.shape[1:] != space.shape:
        return False
    inside = np.isfinite(array) & (array >= space.low) & (array <= space.high)
    if inside.all():
        return True
    bad = int(np.argmin(inside.reshape(len(array), -1).all(axis=1)))
    check_action(space, array[bad], name=f"actions[{bad}]")
    return True  # not reached: check_action raised for the bad element


def discrete_as_int64(actions: Any, space: Any) -> Any:
    """Return checked integer actions as one int64 array, anything else as it came.

    gymnasium's ``Discrete.contains`` (asserted in every classic-control step) checks a
    NumPy integer in about 60% of the time it takes for a Python int, for which it builds
    ``np.iinfo``; an array also crosses to the workers as raw bytes. The values, and so
    the results, are the same.
    """
    if isinstance(actions, np.ndarray):
        if actions.ndim == 1 and actions.dtype.kind in "iu":
            return actions.astype(np.int64, copy=False)
        return actions
    if (
        isinstance(space, spaces.Discrete)
        and actions
        and all(type(action) is int or isinstance(action, np.integer) for action in actions)
    ):  # bools stay bools
        return np.fromiter(actions, dtype=np.int64, count=len(actions))
    return actions


def check_batch_action_values(space: spaces.Space | None, actions: Sequence) -> None:
    """Check every action of a batch against ``space`` (no-op when the env has no space)."""
    if space is None:
        return
    if isinstance(space, spaces.Discrete) and check_discrete_batch(space, actions):
        return
    if isinstance(space, spaces.Box) and check_box_batch(space, actions):
        return
    for i, action in enumerate(actions):
        check_action(space, action, name=f"actions[{i}]")


# The gymnasium face: a vector env's seeds, reset mask and batch of actions ---------------------
def check_seeds(seed: Any, n: int) -> list[int | None]:
    """One seed per sub-env: None, an int ``s`` (sub-env ``i`` gets ``s + i``) or n seeds."""
    if seed is None:
        return [None] * n
    if is_integer(seed):
        if seed < 0:
            raise ValueError(f"seed: expected an int >= 0, got {seed}")
        return [int(seed) + i for i in range(n)]
    if not isinstance(seed, Sequence) or len(seed) != n:
        raise ValueError(
            f"seed: expected None, an int or a list of {n} seeds (one per sub-env), got {seed!r}"
        )
    for k, item in enumerate(seed):
        if item is not None and (not is_integer(item) or item < 0):
            raise ValueError(f"seed: expected None or an int >= 0 at seed[{k}], got {item!r}")
    return list(seed)


def check_reset_mask(options: dict | None, n: int) -> tuple[np.ndarray | None, dict | None]:
    """Return the ``reset_mask`` in ``options`` (checked, as gymnasium does) and the rest."""
    if options is None or "reset_mask" not in options:
        return None, options
    mask = options["reset_mask"]
    options = {key: value for key, value in options.items() if key != "reset_mask"}
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
    return mask, options


def check_space_batch(space: spaces.Space, actions: Any, states: Any, dt: Any) -> tuple:
    """Check a ``step_batch`` against an action space: ``(actions, states, dts)``."""
    actions = check_batch_actions(actions)
    states, dts = check_batch_states(states, len(actions)), check_batch_dt(dt, len(actions))
    check_batch_action_values(space, actions)
    return discrete_as_int64(actions, space), states, dts


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


def check_indices(indices: Sequence[int] | None, n_states: int, n: int) -> list[int]:
    """Distinct sub-env indices in ``0..n-1``, one per state (default: every sub-env)."""
    indices = list(range(n)) if indices is None else list(indices)
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


def check_vector_actions(batch_space: spaces.Space, space: spaces.Space, actions: Any, n: int):
    """One action per sub-env, as gymnasium's ``iterate`` yields them; checked first."""
    if isinstance(actions, np.ndarray) and isinstance(space, ARRAY_SPACES):
        if actions.shape != (n, *space.shape):
            raise ValueError(
                f"actions: expected an array of shape {(n, *space.shape)} (one action per "
                f"sub-env), got shape {actions.shape}"
            )
        if isinstance(space, INTEGER_SPACES):
            check_integer_actions(space, actions)
        return list(actions)
    try:
        items = list(iterate(batch_space, actions))
    except Exception as error:
        raise ValueError(
            f"actions: expected a batch of {n} actions of {space}, got {actions!r:.200}"
        ) from error
    if len(items) != n:
        raise ValueError(f"actions: expected {n} actions (one per sub-env), got {len(items)}")
    if isinstance(space, INTEGER_SPACES):
        check_integer_actions(space, np.asarray(items))
    return items


def check_integer_actions(
    space: spaces.Space, actions: np.ndarray, where: str = "sub-env {}'s action"
) -> None:
    """Check a batch of actions of a Discrete, MultiDiscrete or MultiBinary space."""
    if actions.dtype.kind not in "iub":
        raise ValueError(
            f"actions: expected integers for {space}, got an array of dtype {actions.dtype}"
        )
    if isinstance(space, spaces.Discrete):
        low, high = int(space.start), int(space.start + space.n)
    elif isinstance(space, spaces.MultiDiscrete):
        low, high = space.start, space.start + space.nvec
    else:
        low, high = 0, 2
    bad = (actions < low) | (actions >= high)
    if bad.any():
        first = np.argwhere(bad)[0].tolist()
        place = where.format(first[0])
        raise ValueError(f"actions: {place} = {actions[first[0]].tolist()!r} is not in {space}")
