"""The planning API's input checks, and the planners' reprs.

Every input of a planner, :func:`~plangym.planning.common.play` and
:func:`~plangym.planning.common.random_scores` is checked before the env is reset or
stepped; these are the checks that are the planning API's own (numbers go through
:mod:`plangym.validation`).
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium.vector import VectorEnv

from plangym.validation import describe


def check_plan_env(env: Any, needs: Sequence[str] = ("step_batch", "action_space")) -> Any:
    """Return ``env``, or raise TypeError unless it has what planning with it ``needs``.

    Checked by capability, as :func:`play` takes any planner with ``decide``: a plangym
    env, a ``ParallelEnv``, a ``RayEnv`` or a user's env with ``step_batch`` from explicit
    states qualifies. A gymnasium env has no ``step_batch``; a vector env has one, but its
    actions are batched per sub-env, one action space for all of them.

    >>> check_plan_env(None)
    Traceback (most recent call last):
    ...
    TypeError: env: expected a plangym env, with step_batch from explicit states (e.g. ...
    """
    expected = (
        "env: expected a plangym env, with step_batch from explicit states (e.g. "
        "plangym.make(name), with n_workers=2 to step batches on workers)"
    )
    if isinstance(env, VectorEnv):
        raise TypeError(
            f"{expected}, received the vector env {type(env).__name__}, whose action space "
            "holds one action per sub-env"
        )
    missing = [name for name in needs if not _has(env, name)]
    if missing == ["action_space"]:  # a plannable env of the user's own, without the space
        raise TypeError(
            f"env: the planners sample and check actions with a gymnasium action_space; the "
            f"{type(env).__name__} has none (give it one, e.g. gymnasium.spaces.Discrete(2): "
            "see docs/extending.md)"
        )
    if missing:
        if env is None:
            raise TypeError(f"{expected}, received None")
        kind = "gymnasium env " if isinstance(env, gymnasium.Env) else ""
        raise TypeError(
            f"{expected}, received the {kind}{type(env).__name__}, which has no {missing[0]}"
        )
    return env


def _has(env: Any, name: str) -> bool:
    """Whether ``env`` has the attribute ``name`` (callable, for a method)."""
    value = getattr(env, name, None)
    return value is not None if name == "action_space" else callable(value)


def check_planner(planner: Any) -> Any:
    """Return ``planner``, or raise TypeError unless it has a ``decide`` method."""
    if not callable(getattr(planner, "decide", None)):
        raise TypeError(
            "planner: expected an object with a decide(state) method returning a Decision, "
            f"received {describe(planner)}"
        )
    return planner


def check_decide_state(state: Any) -> Any:
    """Return ``state``, or raise TypeError if it is None: a planner plans from a state.

    ``step_batch`` would read a list of Nones as "no states" and step the env's own state.
    """
    if state is None:
        raise TypeError(
            "state: expected a state of the env (from reset(), get_state() or "
            "step(..., state=...)), received None"
        )
    return state


def check_features(features: Any, env: Any, default: Any) -> Any:
    """Return ``features``, or raise TypeError unless it is callable (``features_of``'s kind).

    The ``default`` (``features_of``) reads observations as arrays of numbers: with it, an
    env observed through a ``Dict`` or ``Tuple`` space is refused here, before any game.
    """
    if not callable(features):
        raise TypeError(
            "features: expected a callable turning observations into float rows "
            f"(default: features_of), received {describe(features)}"
        )
    space = getattr(env, "observation_space", None)
    if features is default and isinstance(space, gymnasium.Space) and space.shape is None:
        raise TypeError(
            f"features: the default, features_of, reads observations as arrays of numbers, "
            f"and {type(env).__name__} observes {type(space).__name__} values ({space}): "
            "pass features=, a callable turning a list of its observations into one float "
            "row each"
        )
    return features


def check_feature_rows(rows: Any, count: int, width: int | None = None) -> np.ndarray:
    """Return what a ``features`` callable returned as ``count`` float rows, or raise naming it.

    Anything ``np.asarray`` turns into a numeric array of shape ``(count, k)`` is taken: an
    array, or a list of rows ("one float row per walker"). Integer and boolean rows become
    float64, so that the differences between them cannot wrap around (uint8 RAM bytes).
    ``width``: the ``k`` the rows must have (the swarm's earlier rows), if any. This runs on
    every round of a decision: one ``np.asarray`` (nothing for an array) and a shape check.

    >>> check_feature_rows([[0, 1], [2, 3]], count=2).dtype
    dtype('float64')
    >>> check_feature_rows(np.zeros(3), count=3)
    Traceback (most recent call last):
    ...
    ValueError: features: expected one float row per walker, an array of shape (3, k), ...
    """
    expected = f"features: expected one float row per walker, an array of shape ({count}, k)"
    try:
        array = np.asarray(rows)
    except ValueError:  # rows of different lengths
        raise ValueError(f"{expected}, received rows of different lengths") from None
    received = describe(array) if isinstance(rows, np.ndarray) else _rows_described(rows, array)
    if array.dtype.kind not in "fiub":
        raise TypeError(f"{expected} of numbers, received {received}")
    if array.ndim != 2 or len(array) != count:
        raise ValueError(f"{expected}, received {received}")
    if width is not None and array.shape[1] != width:
        raise ValueError(f"{expected} with k = {width} as before, received {received}")
    return array if array.dtype.kind == "f" else array.astype(np.float64)


def _rows_described(rows: Any, array: np.ndarray) -> str:
    """``list of shape (3, 4), dtype float64``: what a callable returned, as NumPy reads it."""
    return f"{type(rows).__name__} of shape {array.shape}, dtype {array.dtype}"


def planner_repr(planner: Any, main: Sequence[str], extra: Sequence[str]) -> str:
    """Return ``Class(env=NAME, main options, extra options that differ from the defaults)``."""
    defaults = {
        name: parameter.default
        for name, parameter in inspect.signature(type(planner)).parameters.items()
    }
    shown = [("env", env_label(planner.env))] + [(name, getattr(planner, name)) for name in main]
    shown += [
        (name, getattr(planner, name))
        for name in extra
        if getattr(planner, name) != defaults.get(name)
    ]
    return f"{type(planner).__name__}({', '.join(f'{k}={_shown(v)}' for k, v in shown)})"


def env_label(env: Any) -> str:
    """Return the env's name (``CartPole-v1``), else its class's name; never raise (reprs)."""
    try:
        name = getattr(env, "name", None)
    except Exception:  # a repr must not fail on a closed or broken env
        name = None
    return name if isinstance(name, str) else type(env).__name__


def _shown(value: Any) -> str:
    """Show a callable by its name, a name as it is, anything else by its repr."""
    if isinstance(value, str):
        return value
    if callable(value):
        return getattr(value, "__qualname__", type(value).__name__)
    return repr(value)
