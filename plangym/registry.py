"""Build any supported environment from its name: :func:`make`.

>>> env = make("CartPole-v1")
>>> type(env).__name__
'ClassicControl'
>>> make("CartPol-v1")
Traceback (most recent call last):
...
ValueError: name: unknown environment 'CartPol-v1'; closest known names: CartPole-v1, ...
"""

from __future__ import annotations

import difflib
from typing import Any

from plangym import environment_names
from plangym.core import PlanEnv


def get_planenv_class(name: str) -> type[PlanEnv]:
    """Return the :class:`PlanEnv` class that runs the environment ``name``."""
    if name in environment_names.CLASSIC_CONTROL:
        from plangym.control.classic_control import ClassicControl

        return ClassicControl
    if name in environment_names.ATARI:
        from plangym.videogames.atari import AtariEnv

        return AtariEnv
    if not isinstance(name, str):
        raise TypeError(f"name: expected an environment name (str), received {name!r}")
    closest = difflib.get_close_matches(name, environment_names.ALL, n=5, cutoff=0.5)
    hint = (
        f"closest known names: {', '.join(closest)}" if closest else "see plangym.environment_names"
    )
    raise ValueError(f"name: unknown environment {name!r}; {hint}")


def get_environment_class(
    name: str, n_workers: int | None = None, ray: bool = False
) -> tuple[type | None, type[PlanEnv]]:
    """Return ``(vectorized_class_or_None, env_class)`` for a :func:`make` call."""
    env_class = get_planenv_class(name)
    if ray:
        if n_workers is None:
            raise ValueError(
                "n_workers: ray=True runs the env on Ray actors; say how many, "
                "e.g. make(name, n_workers=4, ray=True)"
            )
        from plangym.vectorization.ray import RayEnv

        return RayEnv, env_class
    if n_workers is not None:
        from plangym.vectorization.parallel import ParallelEnv

        return ParallelEnv, env_class
    return None, env_class


def make(name: str, n_workers: int | None = None, ray: bool = False, **kwargs: Any) -> PlanEnv:
    """Create the environment called ``name``.

    Args:
        name: An environment name from :mod:`plangym.environment_names`.
        n_workers: Number of worker processes (a ``ParallelEnv``); None for one process.
        ray: Run the workers as Ray actors (a ``RayEnv``; needs ``n_workers`` and the
            ``ray`` extra). Pass ``address="HOST:PORT"`` to use a running cluster.
        kwargs: Passed to the environment's constructor.
    """
    vectorized_class, env_class = get_environment_class(name, n_workers=n_workers, ray=ray)
    if vectorized_class is not None:
        return vectorized_class(env_class=env_class, name=name, n_workers=n_workers, **kwargs)
    return env_class(name=name, **kwargs)
