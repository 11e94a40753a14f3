"""The gymnasium wrappers a :class:`~plangym.core.PlangymEnv` applies: items, checks, kinds.

An item of a ``wrappers`` list is a wrapper (a callable taking an env), or, as in
plangym 0.1, ``(wrapper, kwargs_dict)``, ``(wrapper, args_tuple_or_list)`` or
``(wrapper, single_argument)``.

>>> check_wrappers([5], pairs=True)
Traceback (most recent call last):
...
TypeError: wrappers[0]: expected a callable taking an env (...), received 5 (int)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

import gymnasium as gym

from plangym.validation import describe

wrap_callable = Callable[..., gym.Wrapper] | tuple[Callable[..., gym.Wrapper], Any]

# gymnasium's wrappers that keep state of their own between steps (Autoreset: whether the
# next step resets; RenderCollection: the frames render() returns).
STATEFUL_WRAPPERS = frozenset(
    {
        "AtariPreprocessing",
        "Autoreset",
        "DelayObservation",
        "FrameStackObservation",
        "NormalizeObservation",
        "NormalizeReward",
        "RecordEpisodeStatistics",
        "RenderCollection",
        "StickyAction",
        "TimeAwareObservation",
    }
)


def stateful_wrapper_names(kinds: Iterable[type]) -> list[str]:
    """Return the sorted names of the :data:`STATEFUL_WRAPPERS` that ``kinds`` are or derive from.

    A subclass keeps the state its base keeps, so each class's whole MRO is looked at.

    >>> from gymnasium.wrappers import ClipAction, FrameStackObservation, TimeLimit
    >>> class PaddedStack(FrameStackObservation):
    ...     pass
    >>> stateful_wrapper_names([PaddedStack, ClipAction, TimeLimit])
    ['FrameStackObservation']
    >>> stateful_wrapper_names([ClipAction])
    []
    """
    return sorted({base.__name__ for kind in kinds for base in kind.__mro__} & STATEFUL_WRAPPERS)


def check_wrappers(wrappers: Any, pairs: bool = False) -> list | None:
    """Return ``wrappers`` as a list (None stays None), or raise naming what is no wrapper.

    Each item must be a callable taking an env; with ``pairs`` (plangym's ``wrappers``)
    also ``(wrapper, arguments)``. What a wrapper does with the env is seen when it runs.
    """
    if wrappers is None:
        return None
    if not isinstance(wrappers, Iterable) or isinstance(wrappers, str | bytes):
        raise TypeError(
            f"wrappers: expected None or a list of wrappers, received {describe(wrappers)}"
        )
    wrappers = list(wrappers)
    for index, item in enumerate(wrappers):
        paired = pairs and isinstance(item, tuple) and len(item) == 2
        if not callable(item[0] if paired else item):
            raise TypeError(
                f"wrappers[{index}]: expected a callable taking an env (a gymnasium wrapper "
                f"class){', or (wrapper, arguments)' if pairs else ''}, received {describe(item)}"
            )
    return wrappers


def wrapper_call(item: wrap_callable) -> tuple[Callable[..., gym.Wrapper], tuple, dict]:
    """Read one item of a ``wrappers`` list as ``(wrapper, args, kwargs)``.

    >>> wrapper_call((dict, {"a": 1})), wrapper_call((list, [2]))[1:], wrapper_call(set)[1:]
    ((<class 'dict'>, (), {'a': 1}), ((2,), {}), ((), {}))
    """
    if not isinstance(item, tuple):
        return item, (), {}
    wrapper, params = item
    if isinstance(params, dict):
        return wrapper, (), params
    if isinstance(params, list | tuple):
        return wrapper, tuple(params), {}
    return wrapper, (params,), {}


def added_wrappers(env: Any, inner: Any) -> Iterator[gym.Wrapper]:
    """Yield the wrappers from ``env`` down to ``inner``, which they wrap."""
    while env is not inner and isinstance(env, gym.Wrapper):
        yield env
        env = env.env
