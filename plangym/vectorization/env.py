"""The base of vectorized environments: a local env plus workers that share batches.

A :class:`VectorizedEnv` keeps one local env for single steps, properties and input
checks, and hands batches to its workers in contiguous, similar-sized chunks; results come
back in input order. Subclasses decide what a worker is (processes, Ray actors).

>>> VectorizedEnv.split_similar_chunks(list(range(7)), n_chunks=3)
[[0, 1, 2], [3, 4], [5, 6]]
"""

from __future__ import annotations

import functools
from abc import abstractmethod
from collections.abc import Callable, Sequence
from typing import Any

from plangym.constructor import constructor_defaults
from plangym.core import PlanEnv
from plangym.validation import check_positive_int
from plangym.vectorization.errors import (
    AlreadyPendingCallError,
    ClosedEnvironmentError,
    NoAsyncCallError,
)


def chunk_bounds(n: int, n_chunks: int) -> list[tuple[int, int]]:
    """Split ``range(n)`` into at most ``n_chunks`` contiguous ranges differing by <= 1."""
    n_chunks = max(1, min(n_chunks, n))
    size, extra = divmod(n, n_chunks)
    bounds, start = [], 0
    for i in range(n_chunks):
        stop = start + size + (1 if i < extra else 0)
        bounds.append((start, stop))
        start = stop
    return bounds if n else []


class VectorizedEnv(PlanEnv):
    """A :class:`PlanEnv` that steps batches on several workers.

    The local env and every worker's env are built with the keywords given here and
    nothing else: a parameter left out takes the env class's default, exactly as in
    ``env_class(name, **kwargs)``.

    Args:
        env_class: The :class:`PlanEnv` class every worker builds.
        name: Environment name passed to ``env_class``.
        frameskip: Passed to ``env_class``; None leaves its default (5 for Atari, 1 for
            classic control).
        autoreset: Passed to ``env_class``; None leaves its default.
        delay_setup: Build the local env and the workers later, in :meth:`setup`.
        n_workers: Number of workers.
        kwargs: Passed to ``env_class``.
    """

    def __init__(
        self,
        env_class: type[PlanEnv],
        name: str,
        frameskip: int | None = None,
        autoreset: bool | None = None,
        delay_setup: bool = False,
        n_workers: int = 8,
        **kwargs: Any,
    ):
        self._env_class = env_class
        self._n_workers = check_positive_int("n_workers", n_workers)
        self._pending: Any = None  # the batch of a step_batch_async call, until collected
        self._closed = False
        # Only what the caller passed: the env class fills in everything else, so the
        # workers' envs are the env that make(name, **kwargs) builds in one process.
        self._env_kwargs = dict(kwargs)
        if frameskip is not None:
            self._env_kwargs["frameskip"] = frameskip
        if autoreset is not None:
            self._env_kwargs["autoreset"] = autoreset
        self._env_kwargs.pop("delay_setup", None)
        self._plan_env: PlanEnv | None = None
        # Until the local env exists (delay_setup), its values as its signature gives them.
        expected = {**constructor_defaults(env_class), **self._env_kwargs}
        super().__init__(
            name=name,
            frameskip=expected.get("frameskip", 1),
            autoreset=expected.get("autoreset", True),
            delay_setup=delay_setup,
            return_image=bool(expected.get("return_image", False)),
        )

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(name={self.name!r}, n_workers={self.n_workers}, "
            f"env_class={self._env_class.__name__})"
        )

    def __getattr__(self, name: str) -> Any:
        # Anything else (ale, gym_env, obs_type, ...) is the local env's.
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.plan_env, name)

    # Construction ---------------------------------------------------------------------------
    def create_env_callable(self, **kwargs: Any) -> Callable[[], PlanEnv]:
        """Return a picklable callable that builds one env like this one's.

        The env gets the keywords this vectorized env was given (``kwargs`` overriding
        them) and nothing else, so every default is the env class's own.
        """
        env_kwargs = {**self._env_kwargs, **kwargs, "delay_setup": False}
        return functools.partial(self._env_class, name=self.name, **env_kwargs)

    def setup(self) -> None:
        """Build the local env, then the workers."""
        plan_env = self.create_env_callable()()
        self._plan_env = plan_env
        # The built env's own values: a subclass may set them whatever its signature says.
        self.frameskip, self.autoreset = plan_env.frameskip, plan_env.autoreset
        self._return_image = plan_env.return_image
        self.setup_workers()

    @abstractmethod
    def setup_workers(self) -> None:
        """Start the workers."""

    # Properties ---------------------------------------------------------------------------
    @property
    def n_workers(self) -> int:
        """Number of workers."""
        return self._n_workers

    @property
    def plan_env(self) -> PlanEnv:
        """The local env used for single steps, properties and input checks."""
        if self._plan_env is None:
            self.setup()
        return self._plan_env

    @property
    def unwrapped(self) -> PlanEnv:
        """The local :class:`PlanEnv`."""
        return self.plan_env.unwrapped

    @property
    def obs_shape(self) -> tuple[int, ...]:
        """Shape of the observations."""
        return self.plan_env.obs_shape

    @property
    def action_shape(self) -> tuple[int, ...]:
        """Shape of the actions."""
        return self.plan_env.action_shape

    @property
    def action_space(self) -> Any:
        """Action space of the env."""
        return self.plan_env.action_space

    @property
    def observation_space(self) -> Any:
        """Observation space of the env."""
        return self.plan_env.observation_space

    # Class attributes of single envs, answered for the env class wrapped (PlanEnv's own
    # values would otherwise shadow them). Anything else public comes from __getattr__.
    @property
    def STATE_IS_ARRAY(self) -> bool:  # noqa: N802
        """Whether states are arrays, as in the wrapped env."""
        return self._wrapped_attribute("STATE_IS_ARRAY")

    @property
    def OBS_IS_ARRAY(self) -> bool:  # noqa: N802
        """Whether observations are arrays, as in the wrapped env."""
        return self._wrapped_attribute("OBS_IS_ARRAY")

    @property
    def SINGLETON(self) -> bool:  # noqa: N802
        """Whether only one env of the wrapped class may live in a process."""
        return self._wrapped_attribute("SINGLETON")

    def _wrapped_attribute(self, name: str) -> Any:
        # The local env once built (an instance may override its class), else the class.
        return getattr(self._plan_env if self._plan_env is not None else self._env_class, name)

    # Single-env API, served by the local env --------------------------------------------------
    def step(self, action: Any, state: Any = None, dt: int = 1, return_state: bool | None = None):
        """Step the local env (see :meth:`PlanEnv.step`)."""
        return self.plan_env.step(action, state=state, dt=dt, return_state=return_state)

    def reset(self, return_state: bool = True) -> tuple:
        """Reset the local env and put every worker in the same state."""
        state, obs, info = self.plan_env.reset(return_state=True)
        self.sync_states(state)
        return (state, obs, info) if return_state else (obs, info)

    def get_state(self) -> Any:
        """State of the local env."""
        return self.plan_env.get_state()

    def set_state(self, state: Any) -> None:
        """Set the local env and every worker to ``state``."""
        self.plan_env.set_state(state)
        self.sync_states(state)

    def sample_action(self) -> Any:
        """Return a random action from the local env."""
        return self.plan_env.sample_action()

    def get_image(self) -> Any:
        """Picture of the local env."""
        return self.plan_env.get_image()

    def check_action(self, action: Any, name: str = "action") -> None:
        """Check an action with the local env."""
        self.plan_env.check_action(action, name=name)

    def check_actions(self, actions: Any) -> None:
        """Check a batch of actions with the local env."""
        self.plan_env.check_actions(actions)

    def check_state(self, state: Any, name: str = "state") -> None:
        """Check a state with the local env."""
        self.plan_env.check_state(state, name=name)

    def check_batch(self, actions: Any, states: Any, dt: Any) -> tuple[Any, list | None, list]:
        """Check a batch with the local env (its own fast paths included)."""
        return self.plan_env.check_batch(actions, states, dt)

    # Call state, as in gymnasium's AsyncVectorEnv ---------------------------------------------
    def _check_open(self) -> None:
        if self._closed:
            raise ClosedEnvironmentError(f"{self!r} is closed")

    def _check_idle(self) -> None:
        """Raise unless the env is open and no asynchronous batch is pending."""
        self._check_open()
        if self._pending is not None:
            raise AlreadyPendingCallError(
                "step_batch_async: a batch is already pending; collect it with "
                "step_batch_wait() before starting another call"
            )

    # Batches --------------------------------------------------------------------------------
    def step_batch(
        self,
        actions: Sequence,
        states: Sequence | None = None,
        dt: int | Sequence[int] = 1,
        return_state: bool | None = None,
    ) -> tuple[list, ...]:
        """Step a batch on the workers; same contract as :meth:`PlanEnv.step_batch`.

        With states, results are bit-identical to the single env's ``step_batch``. Without
        states, each worker steps its chunk from its own current state: after
        :meth:`reset`, :meth:`set_state` or :meth:`sync_states` that is the same state for
        every worker, and the chunks step on from where each worker's last one ended.
        """
        self._check_idle()
        actions, states, dts = self.check_batch(actions, states, dt)
        want_state = return_state if return_state is not None else states is not None
        return self.run_batch(actions, states, dts, want_state)

    def make_transitions(
        self,
        actions: Sequence,
        states: Sequence | None = None,
        dt: int | Sequence[int] = 1,
        return_state: bool | None = None,
    ) -> tuple[list, ...]:
        """Step a batch: plangym 0.1's name for :meth:`step_batch`, with the same checks."""
        return self.step_batch(actions, states=states, dt=dt, return_state=return_state)

    def run_batch(
        self, actions: Sequence, states: list | None, dts: list[int], want_state: bool
    ) -> tuple[list, ...]:
        """Step an already checked batch on the workers (see :meth:`PlanEnv.run_batch`)."""
        return self.wait_batch(self.dispatch_batch(actions, states, dts, want_state))

    def step_batch_async(
        self,
        actions: Sequence,
        states: Sequence | None = None,
        dt: int | Sequence[int] = 1,
        return_state: bool | None = None,
    ) -> None:
        """Check a batch and send it to the workers; collect it with :meth:`step_batch_wait`.

        Any other call before :meth:`step_batch_wait` raises :class:`AlreadyPendingCallError`.
        """
        self._check_idle()
        actions, states, dts = self.check_batch(actions, states, dt)
        want_state = return_state if return_state is not None else states is not None
        self._pending = self.dispatch_batch(actions, states, dts, want_state)

    def step_batch_wait(self, timeout: float | None = None) -> tuple[list, ...]:
        """Wait for the pending batch and return its results.

        Raises :class:`NoAsyncCallError` when nothing is pending and :class:`TimeoutError`
        after ``timeout`` seconds, in which case the batch is abandoned and the workers
        still on it are replaced, so the env stays usable.
        """
        self._check_open()
        if self._pending is None:
            raise NoAsyncCallError("step_batch_wait: no step_batch_async call is pending")
        pending, self._pending = self._pending, None
        return self.wait_batch(pending, timeout)

    def wait_batch(self, pending: Any, timeout: float | None = None) -> tuple[list, ...]:
        """Gather a dispatched batch; on Ctrl-C abandon it, so the env stays usable."""
        try:
            return self.gather_batch(pending, timeout)
        except KeyboardInterrupt:
            self.abandon_batch(pending)
            raise

    @abstractmethod
    def dispatch_batch(
        self, actions: Sequence, states: list | None, dts: list[int], return_state: bool
    ) -> Any:
        """Send a checked batch to the workers; return what :meth:`gather_batch` collects."""

    @abstractmethod
    def gather_batch(self, pending: Any, timeout: float | None = None) -> tuple[list, ...]:
        """Collect a dispatched batch's results in input order."""

    @abstractmethod
    def abandon_batch(self, pending: Any) -> None:
        """Forget a dispatched batch (interrupted) so the next call works."""

    @abstractmethod
    def sync_states(self, state: Any = None) -> None:
        """Put every worker in ``state`` (default: the local env's state)."""

    @staticmethod
    def values_per_worker(values: Any, n_workers: int) -> list:
        """``values`` as one value per worker: a list or tuple of them, or one for all."""
        if isinstance(values, list | tuple):
            if len(values) != n_workers:
                raise ValueError(
                    f"values: expected {n_workers} values (one per worker), got {len(values)}"
                )
            return list(values)
        return [values] * n_workers

    @staticmethod
    def split_similar_chunks(vector: Sequence, n_chunks: int) -> list:
        """Split ``vector`` into at most ``n_chunks`` contiguous chunks of similar size."""
        return [vector[start:stop] for start, stop in chunk_bounds(len(vector), n_chunks)]

    def clone(self, **kwargs: Any) -> VectorizedEnv:
        """Return a new vectorized env with the same parameters, ``kwargs`` overriding."""
        return super().clone(**kwargs)
