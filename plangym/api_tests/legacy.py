"""plangym 0.1's test helpers, for family test files written for 0.1: same names, same signatures.

:func:`generate_test_cases` builds env factories to parametrize an ``env`` fixture with,
:func:`step_tuple_test` and :func:`step_batch_tuple_test` check what a step returns, and the
``batch_size`` and ``display`` fixtures are 0.1's.
"""

from __future__ import annotations

import math
import os
import platform
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import partial
from itertools import product
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import plangym
from plangym.core import PlanEnv, PlangymEnv
from plangym.validation import check_pictures_available


def is_wsl() -> bool:
    """Whether this runs inside the Windows Subsystem for Linux."""
    if platform.system() != "Linux":
        return False
    try:
        return "microsoft" in Path("/proc/version").read_text(encoding="utf-8").lower()
    except OSError:
        return False


def skip_render() -> bool:
    """Whether to skip rendering: ``SKIP_RENDER`` is 1/true/yes, or it is unset under WSL.

    >>> from unittest import mock
    >>> with mock.patch.dict("os.environ", SKIP_RENDER="yes"):
    ...     skip_render()
    True
    """
    flag = os.getenv("SKIP_RENDER", "").lower()
    if flag in {"1", "true", "yes"}:
        return True
    if flag in {"0", "false", "no"}:
        return False
    return is_wsl()


def _default_choices(values: Iterable[str | None]) -> list[str | None]:
    """Sort a class's render modes or obs types, without "human" (see generate_test_cases)."""
    return [None] if skip_render() else sorted(set(values) - {"human"}, key=str)


def _can_draw(env_class: type[PlangymEnv], obs_type: str | None, render_mode: str | None) -> bool:
    """Whether ``env_class`` can be built with this obs_type and render_mode."""
    default = env_class.DEFAULT_OBS_TYPE
    try:
        check_pictures_available(
            render_mode, False, obs_type or default, env_class.SCREEN_FROM_RENDERER, default
        )
    except ValueError:
        return False
    return True


def generate_test_cases(
    names: str | Sequence[str | tuple[str, ...]],
    env_class: type[PlangymEnv],
    n_workers_values: Sequence[int | None] | None = None,
    render_modes: Sequence[str | None] | None = None,
    obs_types: Sequence[str | None] | None = None,
    custom_tests: Iterable[Callable[[], PlanEnv]] | None = None,
) -> Iterator[Callable[[], PlanEnv]]:
    """Yield an env factory per ``(n_workers, obs_type, render_mode)`` case, then ``custom_tests``.

    Each factory takes no argument and calls ``plangym.make(name, n_workers=...,
    obs_type=..., render_mode=...)``. As in plangym 0.1 the names take turns, case ``i``
    building ``names[i % len(names)]`` (a tuple such as ``("walker", "walk")`` is joined with
    "-"); render modes and obs types default to ``env_class``'s (just None when
    :func:`skip_render`), and the cases the class cannot draw are left out.

    Unlike 0.1 the defaults are sorted, so that pytest-xdist workers collect the same cases,
    and leave out "human": gymnasium's human windows share pygame's one display, so closing
    the clones the suite builds would close the env's own window (ask for it by name).

    >>> from plangym.control.classic_control import ClassicControl
    >>> names = ["CartPole-v1", "Pendulum-v1"]
    >>> cases = list(generate_test_cases(names, ClassicControl, obs_types=["coords", "rgb"],
    ...                                  render_modes=[None, "rgb_array"]))
    >>> [case.keywords["obs_type"] for case in cases]  # rgb without rgb_array cannot be drawn
    ['coords', 'coords', 'rgb']
    >>> env = cases[2]()
    >>> env.name, env.obs_type, env.render_mode
    ('CartPole-v1', 'rgb', 'rgb_array')
    """
    names = [names] if isinstance(names, str) else names
    cases = product(
        [None] if n_workers_values is None else n_workers_values,
        _default_choices(env_class.AVAILABLE_OBS_TYPES) if obs_types is None else obs_types,
        _default_choices(env_class.AVAILABLE_RENDER_MODES)
        if render_modes is None
        else render_modes,
    )
    drawable = [case for case in cases if _can_draw(env_class, case[1], case[2])]
    for i, (n_workers, obs_type, render_mode) in enumerate(drawable):
        name = names[i % len(names)]
        name = "-".join(name) if isinstance(name, tuple) else name
        yield partial(
            plangym.make, name, n_workers=n_workers, obs_type=obs_type, render_mode=render_mode
        )
    yield from custom_tests or ()


@pytest.fixture(scope="class")
def batch_size() -> int:
    """How many actions the batch checks step at once."""
    return 10


@pytest.fixture(scope="module")
def display() -> Iterator[Any]:
    """Start a virtual X display (pyvirtualdisplay) for the module's rendering tests.

    Yields None when :func:`skip_render`, or when pyvirtualdisplay or its Xvfb is missing: plangym's
    pictures are drawn off-screen ("rgb_array", or SDL's dummy driver), needing no display.
    """
    if skip_render():
        yield None
        return
    try:
        from pyvirtualdisplay import Display  # optional: 0.1 imported it at module level

        os.environ["PYVIRTUALDISPLAY_DISPLAYFD"] = "0"
        virtual = Display(visible=False, size=(400, 400))
        virtual.start()
    except (ImportError, OSError):  # OSError: Xvfb is not installed
        yield None
        return
    try:
        yield virtual
    finally:
        virtual.stop()


def step_tuple_test(
    env: PlanEnv, obs: Any, reward: Any, terminal: Any, info: Any, dt: int | None = None
) -> None:
    """Assert that ``obs, reward, terminal, info`` of ``env.step(action, dt=dt)`` are well formed.

    As plangym 0.1 checked: ``obs`` is an array exactly when ``env.OBS_IS_ARRAY``, of shape
    ``env.obs_shape``; ``reward`` is a number, not NaN; ``terminal`` is a bool; ``info`` is
    a dict with ``"dt"`` (equal to ``dt`` when given) and ``"n_step"``, the underlying steps
    applied: 1 to ``dt * env.frameskip``; with ``env.return_image``, ``info["rgb"]`` is an
    array.

    >>> env = plangym.make("CartPole-v1")
    >>> _ = env.reset()
    >>> obs, reward, terminal, _truncated, info = env.step(env.sample_action(), dt=2)
    >>> step_tuple_test(env, obs, reward, terminal, info, dt=2)
    >>> step_tuple_test(env, obs[:2], reward, terminal, info, dt=2)
    Traceback (most recent call last):
    ...
    AssertionError: obs.shape: expected (4,), received (2,)...
    """
    assert isinstance(obs, np.ndarray) == env.OBS_IS_ARRAY, f"obs: received {type(obs)}"
    if env.OBS_IS_ARRAY:
        assert obs.shape == env.obs_shape, (
            f"obs.shape: expected {env.obs_shape}, received {obs.shape}"
        )
    assert not math.isnan(float(reward)), f"reward: received {reward!r}"
    assert isinstance(terminal, bool), f"terminal: expected a bool, received {terminal!r}"
    assert isinstance(info, dict), f"info: expected a dict, received {info!r}"
    assert "dt" in info and "n_step" in info, f"info: lacks dt or n_step: {info}"
    if dt is not None:
        assert info["dt"] == dt, f"info['dt']: expected {dt}, received {info['dt']}"
    most = int(info["dt"]) * env.frameskip
    assert 1 <= info["n_step"] <= most, f"info['n_step']: expected 1 to {most}, got {info}"
    if env.return_image:
        assert isinstance(info.get("rgb"), np.ndarray), "info['rgb']: expected an image"


def step_batch_tuple_test(
    env: PlanEnv,
    batch_size: int,
    observs: Sequence[Any],
    rewards: Sequence[Any],
    terminals: Sequence[Any],
    infos: Sequence[Any],
    dt: int | Sequence[int] | np.ndarray,
) -> None:
    """Assert that the columns of ``env.step_batch`` hold ``batch_size`` well formed steps.

    Each step is checked by :func:`step_tuple_test`, with its own ``dt`` when ``dt`` is a
    list or an array.
    """
    for column in (observs, rewards, terminals, infos):
        assert len(column) == batch_size, f"expected {batch_size} items, received {len(column)}"
    dts = dt if isinstance(dt, list | np.ndarray) else [dt] * batch_size
    for obs, reward, terminal, info, dt_ in zip(
        observs, rewards, terminals, infos, dts, strict=True
    ):
        step_tuple_test(env, obs, reward, terminal, info, dt=dt_)
