"""The exactness self-check behind ``plangym check NAME``.

Four checks, each run without sticky actions and, for games that have them, with sticky
actions (probability 0.25), from a state a few random steps into an episode:

* **replay in the same instance**: restore the state, play random actions, move the env
  elsewhere, restore and play them again: every step's data must be bit-identical.
* **replay in a fresh instance**: the same replay in ``env.clone()``.
* **step_batch equals step**: a batch of (state, action, dt) triples gives what the triples
  give one ``step`` at a time.
* **frame accounting**: ``info["n_step"]`` is ``dt * frameskip`` unless the episode ended
  first; for Atari the emulator's own episode frame counter advances by as much.

Unlike :mod:`plangym.api_tests` this needs no pytest, so it runs on any install.

>>> results = run_checks("CartPole-v1", n_steps=10)
>>> sorted({(r.setting, r.status) for r in results})
[('no sticky actions', 'PASS'), ('sticky p=0.25', 'n/a')]
"""

from __future__ import annotations

import inspect
import multiprocessing
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

import plangym
from plangym.exactness import Step, difference, replay
from plangym.planning.common import ActionSampler, start_episode
from plangym.registry import get_planenv_class

CHECKS = (
    "replay in the same instance",
    "replay in a fresh instance",
    "step_batch equals step",
    "frame accounting",
)
STICKY_PROBABILITY = 0.25
SETTINGS = ("no sticky actions", f"sticky p={STICKY_PROBABILITY}")


@dataclass(frozen=True)
class CheckResult:
    """One cell of the self-check table.

    Attributes:
        check: One of :data:`CHECKS`.
        setting: One of :data:`SETTINGS`.
        status: "PASS", "FAIL" or "n/a" (the env has no sticky actions).
        detail: What differed, for a FAIL.
    """

    check: str
    setting: str
    status: str
    detail: str = ""


def has_sticky_actions(name: str) -> bool:
    """Whether the env called ``name`` takes a ``repeat_action_probability``."""
    parameters = inspect.signature(get_planenv_class(name).__init__).parameters
    return "repeat_action_probability" in parameters


def run_checks(
    name: str,
    n_steps: int = 40,
    seed: int = 0,
    env_kwargs: dict | None = None,
    on_result: Callable[[CheckResult], None] | None = None,
) -> list[CheckResult]:
    """Run every check on the env called ``name``; return one result per check and setting.

    ``on_result`` is called with each result as soon as its check has run (a progress bar).
    """
    env_kwargs = dict(env_kwargs or {})
    sticky = has_sticky_actions(name)
    results = []
    settings: list[tuple[str, dict[str, Any] | None]] = []  # None: the check does not apply
    for setting, probability in zip(SETTINGS, (0.0, STICKY_PROBABILITY), strict=True):
        if sticky:
            settings.append((setting, {**env_kwargs, "repeat_action_probability": probability}))
        elif probability == 0.0:
            settings.append((setting, env_kwargs))
        else:
            settings.append((setting, None))
    for setting, kwargs in settings:
        if kwargs is None:
            results += [CheckResult(check, setting, "n/a") for check in CHECKS]
            continue
        env = plangym.make(name, **kwargs)
        try:
            for check, function in zip(CHECKS, CHECK_FUNCTIONS, strict=True):
                try:
                    problem = function(env, n_steps, seed)
                except MemoryError:  # the check's own arrays: n_steps is too large
                    raise
                except Exception as error:  # a check that crashes has failed
                    problem = f"{type(error).__name__}: {error}"
                status = "FAIL" if problem else "PASS"
                results.append(CheckResult(check, setting, status, problem or ""))
                if on_result is not None:
                    on_result(results[-1])
        finally:
            env.close()
    return results


# Checks: each returns None when it passes, else what went wrong. -------------------------
def check_same_instance(env: Any, n_steps: int, seed: int) -> str | None:
    """Replay random actions twice from one state in ``env``, with other play in between."""
    state, actions = _warm_state(env, seed), _actions(env, n_steps, seed + 1)
    first = replay(env, state, actions)
    for action in _actions(env, 7, seed + 2):  # leave the env somewhere else
        env.step(action)
    return difference(first, replay(env, state, actions), "steps")


def check_fresh_instance(env: Any, n_steps: int, seed: int) -> str | None:
    """Replay random actions from one state in ``env`` and in ``env.clone()``."""
    state, actions = _warm_state(env, seed), _actions(env, n_steps, seed + 1)
    expected = replay(env, state, actions)
    return difference(expected, replay_in_fresh_instance(env, state, actions), "steps")


def replay_in_fresh_instance(env: Any, state: Any, actions: list, dt: int = 1) -> list[Step]:
    """Replay ``actions`` from ``state`` in a new env built like ``env``.

    A ``SINGLETON`` env (one emulator per process) gets its new instance in a new process,
    unless it is vectorized: its emulators live in worker processes already.
    """
    from plangym.vectorization import VectorizedEnv

    if not env.SINGLETON or isinstance(env, VectorizedEnv):
        fresh = env.clone()
        try:
            return replay(fresh, state, actions, dt=dt)
        finally:
            fresh.close()
    blueprint = env.clone(delay_setup=True)
    return run_in_fresh_process(_replay_in_new_env, blueprint, state, actions, dt)


def run_in_fresh_process(function: Callable, *args: Any) -> Any:
    """Return ``function(*args)`` computed in a new process, spawned so it inherits nothing."""
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        return pool.submit(function, *args).result()


def _replay_in_new_env(blueprint: Any, state: Any, actions: list, dt: int) -> list[Step]:
    blueprint.setup()
    try:
        return replay(blueprint, state, actions, dt=dt)
    finally:
        blueprint.close()


def check_batch(env: Any, n_steps: int, seed: int) -> str | None:
    """Compare ``step_batch`` on distinct states and mixed ``dt`` with single steps."""
    env.reset()
    states = []
    for action in _actions(env, n_steps, seed):
        states.append(env.get_state())
        env.step(action)
    actions = _actions(env, len(states), seed + 3)
    dts = [1 + i % 3 for i in range(len(states))]
    batch = env.step_batch(actions, states=states, dt=dts)
    single = [
        Step(*env.step(action, state=state, dt=dt))
        for action, state, dt in zip(actions, states, dts, strict=True)
    ]
    rows = [Step(*(column[i] for column in batch)) for i in range(len(states))]
    return difference(rows, single, "steps")


def check_frames(env: Any, n_steps: int, seed: int) -> str | None:
    """``n_step`` is ``dt * frameskip`` until the episode ends; the ALE agrees."""
    env.reset()
    ale = getattr(env, "ale", None)
    for i, action in enumerate(_actions(env, n_steps, seed)):
        dt = 1 + i % 4
        before = ale.getEpisodeFrameNumber() if ale is not None else None
        *_, terminal, truncated, info = env.step(action, dt=dt)
        ended = terminal or truncated
        expected = dt * env.frameskip
        if info["n_step"] != expected and not (ended and info["n_step"] < expected):
            return f"step {i}: dt={dt} applied {info['n_step']} steps, expected {expected}"
        if ale is not None and not ended:
            advanced = ale.getEpisodeFrameNumber() - before
            if advanced != info["n_step"]:
                return f"step {i}: the ALE counted {advanced} frames, n_step is {info['n_step']}"
        if ended:
            env.reset()
    return None


CHECK_FUNCTIONS: tuple[Callable[[Any, int, int], str | None], ...] = (
    check_same_instance,
    check_fresh_instance,
    check_batch,
    check_frames,
)


# Helpers -------------------------------------------------------------------------------------
def _actions(env: Any, n: int, seed: int) -> list:
    space = getattr(env, "action_space", None)
    if space is None:  # a PlanEnv without gymnasium spaces draws its own
        return [env.sample_action() for _ in range(n)]
    actions = ActionSampler(space, np.random.default_rng(seed)).sample(n)
    return [a.item() if isinstance(a, np.generic) else a for a in actions]


def _warm_state(env: Any, seed: int, n_steps: int = 10) -> Any:
    """Return a state a few random steps into an episode (more telling than a reset)."""
    # Any start will do for these checks: an env whose seed() is hidden is not seeded.
    start_episode(env, seed if callable(getattr(env, "seed", None)) else None)
    for action in _actions(env, n_steps, seed):
        env.step(action)
    return env.get_state()
