"""The plangym contract: :class:`PlanEnv`, an environment that can be stepped from any state.

A :class:`PlanEnv` can be stepped from any state it has handed out. ``get_state()`` captures
everything that decides the future of the environment and ``set_state()`` restores it, so
stepping the same actions from a restored state gives bit-identical results.

>>> import plangym
>>> env = plangym.make("CartPole-v1")
>>> state, obs, info = env.reset()
>>> new_state, obs, reward, terminal, truncated, info = env.step(0, state=state)
>>> info["n_step"], info["dt"]
(1, 1)
>>> again = env.step(0, state=state)
>>> bool(again[0] == new_state), bool((again[1] == obs).all())
(True, True)
"""

from __future__ import annotations

import contextlib
import sys
from abc import ABC
from collections.abc import Iterator
from typing import Any

import numpy as np

from plangym.columns import BatchInput, empty_arrays
from plangym.constructor import constructor_call, read_only, show_init_signature
from plangym.core.batch_paths import BatchPaths
from plangym.core.checks import InputChecks
from plangym.core.frame_loop import repeat_frames
from plangym.core.hooks import StepHooks, call_hook
from plangym.rng import space_generators_kept
from plangym.validation import (
    check_dt,
    check_flag,
    check_positive_int,
    check_return_state,
    describe,
)

if sys.version_info >= (3, 11):
    from typing import Self
else:  # gymnasium depends on typing_extensions
    from typing_extensions import Self


def not_implemented(env: Any, name: str) -> NotImplementedError:
    """Return the error of a member that a subclass of :class:`PlanEnv` must write."""
    return NotImplementedError(
        f"{type(env).__name__}.{name} is not implemented: a PlanEnv subclass writes it "
        "(docs/extending.md says which members a new environment needs)"
    )


class PlanEnv(StepHooks, InputChecks, BatchPaths, ABC):
    """Base class of every plannable environment.

    Subclasses implement :meth:`get_state`, :meth:`set_state`, :meth:`apply_action`,
    :meth:`apply_reset`, :attr:`obs_shape`, :attr:`action_shape` and :meth:`sample_action`
    (optionally :meth:`get_image`); this class turns them into the planning API:
    :meth:`step` from any state with ``dt`` repetitions, :meth:`step_batch`, :meth:`reset`,
    :meth:`clone`. See ``docs/extending.md`` for a worked example. Its input checks, step
    hooks and batch paths are in :mod:`.checks`, :mod:`.hooks` and :mod:`.batch_paths`.

    Args:
        name: Name of the environment.
        frameskip: Underlying steps applied per agent step. ``step(..., dt=k)`` applies
            exactly ``k * frameskip`` of them, fewer only when the episode ends first.
        autoreset: Reset the environment after a step that ends the episode. The step
            still returns its own data (and state) unchanged.
        delay_setup: Do not build the simulator in ``__init__``; :meth:`setup` does it
            later. A not-yet-setup env pickles, which is how workers receive it.
        return_image: Add an RGB picture of the environment to every ``info`` as
            ``info["rgb"]``.
    """

    STATE_IS_ARRAY = True
    OBS_IS_ARRAY = True
    SINGLETON = False
    # Whether reset(options=...) reaches the simulator (gymnasium's classic control reads
    # its bounds from them); other families refuse options.
    TAKES_RESET_OPTIONS = False
    # The constructor call, set by __new__ (see _constructor_call).
    _init_args: tuple[Any, ...]
    _init_kwargs: dict[str, Any]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        show_init_signature(cls)

    def __new__(cls, *args: Any, **kwargs: Any) -> Self:  # noqa: D102
        # Remember the constructor call so clone() and pickling can repeat it exactly,
        # whatever parameters a subclass adds.
        env = super().__new__(cls)
        env._init_args = args
        env._init_kwargs = dict(kwargs)
        return env

    def __init__(
        self,
        name: str,
        frameskip: int = 1,
        autoreset: bool = True,
        delay_setup: bool = False,
        return_image: bool = False,
    ):
        self._name = name
        self.frameskip = frameskip
        self.autoreset = check_flag("autoreset", autoreset)
        self.delay_setup = check_flag("delay_setup", delay_setup)
        self._return_image = check_flag("return_image", return_image)
        self._identity_hooks = self.step_hooks_are_identity()
        if not delay_setup:
            self.setup()

    @property
    def frameskip(self) -> int:
        """Underlying steps applied per agent step (``dt=1``); checked when set."""
        return self._frameskip

    @frameskip.setter
    def frameskip(self, value: int) -> None:
        # Set after construction too (0.1 code does, and so does set_attr): a bad value must
        # fail here, not as an error inside the frame loop at the next step.
        self._frameskip = check_positive_int("frameskip", value)

    def __del__(self):
        # At interpreter shutdown the modules close() needs may already be gone.
        with contextlib.suppress(Exception):
            self.close()

    # Properties ---------------------------------------------------------------------------
    name = read_only("_name", "Name of the environment.")

    @property
    def obs_shape(self) -> tuple[int, ...]:
        """Shape of the observations."""
        raise not_implemented(self, "obs_shape")

    @property
    def action_shape(self) -> tuple[int, ...]:
        """Shape of the actions."""
        raise not_implemented(self, "action_shape")

    @property
    def unwrapped(self) -> PlanEnv:
        """The plain :class:`PlanEnv` under any vectorisation layer (itself here)."""
        return self

    return_image = read_only(
        "_return_image",
        'Whether ``info["rgb"]`` holds a picture of the environment after each step.',
    )

    @property
    def img_shape(self) -> tuple[int, ...] | None:
        """Shape of :meth:`get_image`, or None when the env cannot draw itself."""
        try:
            image = self.get_image()
        except Exception:
            return None
        return None if image is None else image.shape

    # Planning API ---------------------------------------------------------------------------
    def reset(
        self, return_state: bool = True, seed: int | None = None, options: dict | None = None
    ) -> tuple[Any, ...]:
        """Start a new episode.

        Args:
            return_state: Return the new state first.
            seed: As in gymnasium's ``reset(seed=seed)``: seed every generator of the env
                first, so the episode is the first one of that seed (see :meth:`seed_episode`);
                the action space's generator is left alone, as gymnasium leaves it.
            options: gymnasium's reset options, a dict: passed to the simulator of an env
                that takes them (:attr:`TAKES_RESET_OPTIONS`: classic control's bounds),
                refused by the others unless empty.

        Returns:
            ``(state, obs, info)``, or ``(obs, info)`` when ``return_state`` is False.

        >>> import plangym
        >>> env = plangym.make("CartPole-v1")
        >>> state, obs, info = env.reset(seed=7)
        >>> bool((env.reset(seed=7)[1] == obs).all()), bool((env.reset()[1] == obs).all())
        (True, False)
        """
        with_state = bool(check_return_state(return_state))  # None: as False (0.1's falsy)
        if options is not None and not isinstance(options, dict):
            raise TypeError(f"options: expected None or a dict, received {describe(options)}")
        if options and not self.TAKES_RESET_OPTIONS:
            raise ValueError(
                f"options: {type(self).__name__} takes no reset options, received {options!r}"
            )
        seed = self.check_seed(seed)
        if seed is not None:
            with space_generators_kept(getattr(self, "_action_space", None)):
                self.seed_episode(seed)
        data = self.apply_reset(options=options) if options else self.apply_reset()
        obs, info = data if isinstance(data, tuple) and len(data) == 2 else (data, {})
        info = dict(info or {})
        ended = {"reward": 0.0, "terminal": False, "truncated": False}
        obs = call_hook(self.process_obs, obs=obs, info=info, **ended)
        info = call_hook(self.process_info, info=info, obs=obs, **ended)
        if self.return_image:
            info["rgb"] = self.get_image()
        return (self.get_state(), obs, info) if with_state else (obs, info)

    def step(
        self,
        action: Any,
        state: Any = None,
        dt: int = 1,
        return_state: bool | None = None,
    ) -> tuple[Any, ...]:
        """Apply ``action`` for ``dt`` agent steps, optionally from ``state``.

        Args:
            action: Action to apply ``dt * frameskip`` times.
            state: State to restore before stepping; None steps from the current state.
            dt: Number of agent steps (an integer >= 1).
            return_state: Return the new state too. None means "when a state was passed".

        Returns:
            ``(new_state, obs, reward, terminal, truncated, info)`` when the state is
            returned, else ``(obs, reward, terminal, truncated, info)``. ``info["n_step"]``
            counts the underlying steps applied and ``info["dt"]`` echoes ``dt``.
        """
        dt, return_state = check_dt(dt), check_return_state(return_state)
        self.check_action(action)
        if type(action) is not int and isinstance(action, np.integer | np.ndarray):
            # An integer action is its value, as step_batch's int64 batches hand it on: as
            # a uint8, MountainCar's action - 1 would wrap around to 255.
            action = action.item() if action.dtype.kind in "iu" and action.ndim == 0 else action
        if state is not None:
            state = self.thawed_state(state)
            self.check_state(state)
        want_state = return_state if return_state is not None else state is not None
        return self._step_checked(action, state, dt, want_state)

    def step_batch(
        self,
        actions: BatchInput,
        states: BatchInput | None = None,
        dt: int | BatchInput = 1,
        return_state: bool | None = None,
        arrays: bool = False,
        copy: bool = True,
    ) -> tuple[Any, ...]:  # lists, or with arrays=True arrays and a dict of infos
        """Step many (state, action, dt) triples; element i equals ``step(actions[i], ...)``.

        Every input is checked before the first element is stepped. Without states the
        elements step one after the other from the env's current state.

        Args:
            actions: One action per element.
            states: None, one state per element (a list of Nones means no states), or, for
                envs whose states are 0-d records, one 1-D record array of them.
            dt: One integer for every element, or one per element.
            return_state: Return the new states too. None means "when states were passed".
            arrays: Return arrays instead of lists (see below).
            copy: False lets an env that steps batches in worker processes
                (``ParallelEnv``) return observations that are views of its shared
                buffers, valid until its next call, as gymnasium's ``copy=False``: no copy
                of each picture. Every observation is otherwise the caller's own.

        Returns:
            A tuple of lists ``(new_states, observs, rewards, terminals, truncateds, infos)``
            or, without states returned, ``(observs, rewards, terminals, truncateds, infos)``.
            With ``arrays=True``: the new states as one record array (when they are
            records), the observations stacked in one array (when they share a shape),
            rewards as float64, terminals and truncateds as bool arrays, and the infos as
            one dict of arrays where the env batches them (classic control), else a list.

        >>> import plangym
        >>> env = plangym.make("CartPole-v1")
        >>> state, *_ = env.reset()
        >>> states, observs, rewards, terminals, truncateds, infos = env.step_batch(
        ...     actions=[0, 1, 1], states=[state] * 3, dt=[1, 2, 3])
        >>> [info["n_step"] for info in infos]
        [1, 2, 3]
        """
        arrays, copy = check_flag("arrays", arrays), check_flag("copy", copy)
        return_state = check_return_state(return_state)
        actions, states, dts = self.check_batch(actions, states, dt)
        want_state = return_state if return_state is not None else states is not None
        if arrays and not dts:  # an empty batch: the env says what its rows would be
            space = getattr(self, "observation_space", None)
            return empty_arrays(space, getattr(self, "state_dtype", None), want_state)
        columns = self.run_batch_columns(actions, states, dts, want_state, copy=copy)
        return columns.as_arrays() if arrays else columns.as_lists()

    def clone(self, **kwargs: Any) -> Self:
        """Return a new env built with the same constructor parameters, ``kwargs`` overriding.

        The clone starts from its own reset, not from this env's state: use
        ``clone().set_state(env.get_state())`` to copy the state too.
        """
        args, init_kwargs = self._constructor_call(**kwargs)
        return type(self)(*args, **init_kwargs)

    def sample_action(self) -> Any:
        """Return a random valid action."""
        raise not_implemented(self, "sample_action")

    def get_image(self) -> np.ndarray | None:
        """Return an RGB picture (height, width, 3) of the environment."""
        raise not_implemented(self, "get_image")

    def setup(self) -> None:
        """Build whatever cannot be pickled (the simulator). Called by ``__init__``."""

    def close(self) -> None:
        """Release the simulator. The env must not be stepped afterwards."""

    # Stepping internals ---------------------------------------------------------------------
    def _step_checked(self, action: Any, state: Any, dt: int, want_state: bool) -> tuple:
        if state is not None:
            self.set_state(state)
        obs, reward, terminal, truncated, info = self.step_with_dt(action, dt)
        obs, reward, terminal, truncated, info = self.process_step(
            obs=obs, reward=reward, terminal=terminal, truncated=truncated, info=info
        )
        data: tuple[Any, ...] = (obs, reward, terminal, truncated, info)
        if want_state:
            data = (self.get_state(), *data)
        if self.autoreset and (terminal or truncated):
            self.reset(return_state=False)
        return data

    def step_with_dt(self, action: Any, dt: int = 1) -> tuple:
        """Apply ``action`` ``dt * frameskip`` times, stopping when the episode ends.

        Returns ``(obs, reward, terminal, truncated, info)`` of the last underlying step with
        the rewards summed, ``info["n_step"]`` (underlying steps applied) and ``info["dt"]``.
        """
        run = repeat_frames(self._underlying_step, action, dt * self.frameskip)
        obs, reward, terminal, truncated, info, n_step, _ = run
        info = dict(info)
        info["n_step"], info["dt"] = n_step, dt
        return obs, reward, terminal, truncated, info

    def _underlying_step(self, action: Any) -> tuple:
        data = self.apply_action(action)
        if len(data) == 4:  # environments written for the old gym API
            obs, reward, terminal, info = data
            data = (obs, reward, terminal, False, info)
        return self.process_apply_action(*data)

    # To implement ---------------------------------------------------------------------------
    def apply_action(self, action: Any) -> tuple:
        """Advance one underlying step: ``(obs, reward, terminal, truncated, info)``."""
        raise not_implemented(self, "apply_action")

    def apply_reset(self, **kwargs: Any) -> tuple:
        """Start a new episode of the simulator: ``(obs, info)``."""
        raise not_implemented(self, "apply_reset")

    def seed_episode(self, seed: int) -> None:
        """Seed the env so that its next episode is the first one of ``seed``.

        What ``reset(seed=seed)`` does first: here ``seed(seed)``, which every family has.
        """
        seed_env = getattr(self, "seed", None)
        if not callable(seed_env):  # none, or an attribute that hides the method
            raise TypeError(
                f"seed: {type(self).__name__} has no seed() method to seed it with (found "
                f"{seed_env!r:.60}); define seed(seed) or override seed_episode(seed)"
            )
        seed_env(seed)

    @contextlib.contextmanager
    def state_kept(self) -> Iterator[None]:
        """Leave the env in the state it is in now, whatever the block does with it.

        >>> import plangym
        >>> env = plangym.make("CartPole-v1")
        >>> state, *_ = env.reset(seed=0)
        >>> with env.state_kept():
        ...     _ = env.step(1)
        >>> bool(env.get_state() == state)
        True
        """
        state = self.get_state()
        try:
            yield
        finally:
            self.set_state(state)

    def get_state(self) -> Any:
        """Return everything that decides the future of the environment."""
        raise not_implemented(self, "get_state")

    def set_state(self, state: Any) -> None:
        """Restore a state returned by :meth:`get_state`."""
        raise not_implemented(self, "set_state")

    # Construction bookkeeping ---------------------------------------------------------------
    def _constructor_call(self, **overrides: Any) -> tuple[tuple, dict[str, Any]]:
        """Return the (args, kwargs) this env was built with, ``overrides`` replacing some."""
        return constructor_call(self, **overrides)


show_init_signature(PlanEnv)
