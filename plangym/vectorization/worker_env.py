"""A single env kept in a worker process of its own: :class:`WorkerEnv`.

stable-retro runs one emulator per process, so a vectorized env of such a family (its
class says ``SINGLETON``) keeps its local env (single steps, properties, input checks) in a
worker process: the caller may hold an emulator, or build one while it is open.

>>> import functools
>>> from plangym.control.classic_control import ClassicControl
>>> class OnePerProcess(ClassicControl):
...     SINGLETON = True
>>> env = build_local_env(functools.partial(OnePerProcess, "CartPole-v1"), OnePerProcess)
>>> state, obs, info = env.reset()
>>> new_state, obs, reward, terminal, truncated, info = env.step(0, state=state)
>>> reward, env.frameskip, env.action_space
(1.0, 1, Discrete(2))
>>> env.close()
"""

from __future__ import annotations

import contextlib
import inspect
import types
from collections.abc import Callable, Iterator
from typing import Any, cast

import gymnasium

from plangym.core import PlanEnv
from plangym.core.checks import InputChecks
from plangym.vectorization.calls import OnCrash
from plangym.vectorization.errors import ClosedEnvironmentError, WorkerCrashedError
from plangym.vectorization.handler import HandlerFactory
from plangym.vectorization.messages import Call, GetAttr, SetAttr
from plangym.vectorization.plan_handler import PlanEnvHandler
from plangym.vectorization.process_backend import ProcessBackend
from plangym.vectorization.scheduler import Scheduler

SPACES = ("action_space", "observation_space")
# Calls whose answer does not depend on the env's current state: if the worker holding the
# env dies under one, it is asked again of the replacement. Steps and batches are such
# calls when given states (their second argument).
STATE_ARGUMENT = {"step": "state", "step_batch": "states", "run_batch_columns": "states"}
SETS_STATE = ("reset", "apply_reset", "set_state", "step")  # "step" when given a state
STATE_FREE = frozenset({*SETS_STATE, *STATE_ARGUMENT, "seed"})
STATE_FREE_PREFIXES = ("check", "sample_action", "thawed_state", "state_from_array")


def reads_current_state(body: Any) -> bool:
    """Whether ``body``'s answer depends on the env's current state (unknown methods do)."""
    if not isinstance(body, Call):  # attributes are settings
        return False
    name, args, kwargs = body
    if name in STATE_ARGUMENT:
        given = args[1] if len(args) > 1 else (kwargs or {}).get(STATE_ARGUMENT[name])
        return given is None
    return name not in STATE_FREE and not name.startswith(STATE_FREE_PREFIXES)


def sets_state(body: Any) -> bool:
    """Whether ``body``, once answered, leaves the env in a state it does not depend on."""
    return isinstance(body, Call) and body.name in SETS_STATE and not reads_current_state(body)


class WorkerEnv:
    """Answers as the :class:`~plangym.core.PlanEnv` held by the one worker of ``scheduler``.

    The methods of ``env_class`` are called there (``Call``), other public attributes read
    (``GetAttr``) or set (``SetAttr``) there. The spaces are read once, and again after
    ``seed()``. A gymnasium env is never sent here (see :class:`SimulatorKeeper`).
    """

    def __init__(self, scheduler: Scheduler, env_class: type[PlanEnv]):
        self._scheduler: Scheduler | None = scheduler
        self._env_class = env_class
        # Its worker died since the last reset() or set_state(): the replacement's env
        # started afresh, so what depends on the current state is refused.
        self._state_lost = False

    def __repr__(self) -> str:
        pids = self._scheduler.backend.worker_pids if self._scheduler else (None,)
        return f"{type(self).__name__}({self._env_class.__name__}, pid={pids[0]})"

    @contextlib.contextmanager
    def state_kept(self) -> Iterator[None]:
        """As PlanEnv's: the block's calls leave the env in the state it is in now.

        A state lost with the worker (before or while it is read) is not kept: the block
        runs all the same, as it needs none (a batch from given states).
        """
        kept = None
        if not self._state_lost:
            with contextlib.suppress(WorkerCrashedError):  # lost: marked by _request
                kept = self.get_state()
        try:
            yield
        finally:
            if kept is not None:
                self.set_state(kept)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        member = inspect.getattr_static(self._env_class, name, None)
        if inspect.isfunction(member) or isinstance(member, staticmethod | classmethod):
            return types.MethodType(_remote_method(name), self)
        value = self._request(GetAttr(name), name)
        if name in SPACES:  # kept: every batch's checks read them
            vars(self)[name] = value
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        if name.startswith("_"):
            object.__setattr__(self, name, value)
            return
        # Set again on a replacement of the worker, as the workers' settings are.
        scheduler = self._live_scheduler(name)
        batch = scheduler.set_attributes({0: SetAttr(name, value)}, name)
        self._state_lost |= batch.tasks[0].reruns > 0  # set on a replacement: a fresh env
        scheduler.raise_first(batch)

    def _live_scheduler(self, label: str) -> Scheduler:
        if self._scheduler is None:  # a request would start a new worker
            raise ClosedEnvironmentError(f"{self!r}: {label} after close()")
        return self._scheduler

    def _request(self, body: Any, label: str) -> Any:
        scheduler = self._live_scheduler(label)
        reads_state = reads_current_state(body)
        if reads_state and self._state_lost:
            raise WorkerCrashedError(f"{label}: {self._lost()}")
        batch = scheduler.send({0: body}, label, OnCrash.RAISE if reads_state else OnCrash.RERUN)
        try:
            scheduler.gather(batch)
        except WorkerCrashedError as crash:
            self._state_lost = True
            raise WorkerCrashedError(f"{crash}; {self._lost()}") from crash
        finally:
            self._state_lost |= batch.tasks[0].reruns > 0
        if sets_state(body):
            self._state_lost = False
        return batch.tasks[0].result

    def _lost(self) -> str:
        return (
            f"the worker process holding the env's {self._env_class.__name__} died, and "
            "its current state went with it: reset() or set_state() first (steps and "
            "batches from given states work as ever)"
        )

    def __reduce__(self) -> Any:
        # As the env it holds pickles: its constructor call and its current state.
        return self._request(Call("__reduce__"), "pickle")

    @property
    def unwrapped(self) -> WorkerEnv:
        """Itself: the env it holds cannot be brought into this process."""
        return self

    def check_batch(self, actions: Any, states: Any, dt: Any) -> tuple[Any, list | None, list]:
        """Check a batch as :meth:`~plangym.core.PlanEnv.check_batch` does.

        Its actions and states are checked in the worker: the states go there once.
        """
        return InputChecks.check_batch(cast("InputChecks", self), actions, states, dt)

    def close(self) -> None:
        """Close the env and stop its worker."""
        if self._scheduler is not None:
            self._scheduler.close()
            self._scheduler = None


def _remote_method(name: str) -> Callable[..., Any]:
    """Return a method calling the env's method ``name`` in its worker."""

    def method(env: WorkerEnv, *args: Any, **kwargs: Any) -> Any:
        result = env._request(Call(name, args, kwargs), name)
        if name == "seed":  # the worker's spaces were reseeded: read them again
            for space in SPACES:
                vars(env).pop(space, None)
        return result

    method.__name__ = method.__qualname__ = name
    return method


class SimulatorKeeper(PlanEnvHandler):
    """A :class:`PlanEnvHandler` that sends the caller no gymnasium env (``gym_env``).

    Unpickled there, stable-retro's env would build an emulator in the caller's process.
    """

    def handle(self, body: Any) -> Any:
        """Answer ``body``; raise AttributeError instead of answering with a gymnasium env."""
        payload = super().handle(body)
        if isinstance(payload, gymnasium.Env):
            raise AttributeError(
                f"{body.name}: a gymnasium env stays in the worker process that holds it "
                "(one simulator per process); call the env's methods instead"
            )
        return payload


def build_local_env(
    constructor: Callable[[], PlanEnv], env_class: type[PlanEnv], context: str | None = None
) -> PlanEnv:
    """Return ``constructor()``, or for a ``SINGLETON`` class a :class:`WorkerEnv`.

    ``context`` is the start method of its process (None: multiprocessing's default).
    """
    if not env_class.SINGLETON:
        return constructor()
    backend = ProcessBackend()
    backend.start([HandlerFactory(SimulatorKeeper, (constructor,))], context)
    return cast("PlanEnv", WorkerEnv(Scheduler(backend), env_class))
