"""The plangym contract: :class:`PlanEnv` and its gymnasium-backed base :class:`PlangymEnv`.

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
import inspect
from abc import ABC
from collections.abc import Callable, Iterable
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.spaces import Box, Space

from plangym.columns import BatchColumns, is_record_block, records_to_states
from plangym.utils import make_gym_env, to_grayscale
from plangym.validation import (
    check_action,
    check_batch_action_values,
    check_batch_actions,
    check_batch_dt,
    check_batch_states,
    check_choice,
    check_dt,
    check_flag,
    check_pictures_available,
    check_positive_int,
    discrete_as_int64,
)

wrap_callable = Callable[..., gym.Wrapper] | tuple[Callable[..., gym.Wrapper], Any]

STEP_HOOKS = (
    "process_obs",
    "process_reward",
    "process_terminal",
    "process_truncated",
    "process_info",
)


class PlanEnv(ABC):
    """Base class of every plannable environment.

    Subclasses implement :meth:`get_state`, :meth:`set_state`, :meth:`apply_action`,
    :meth:`apply_reset`, :attr:`obs_shape`, :attr:`action_shape` and :meth:`sample_action`
    (optionally :meth:`get_image`); this class turns them into the planning API:
    :meth:`step` from any state with ``dt`` repetitions, :meth:`step_batch`, :meth:`reset`,
    :meth:`clone`. See ``docs/extending.md`` for a worked example.

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

    def __new__(cls, *args: Any, **kwargs: Any) -> PlanEnv:  # noqa: D102
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
        self.frameskip = check_positive_int("frameskip", frameskip)
        self.autoreset = autoreset
        self.delay_setup = delay_setup
        self._return_image = return_image
        self._identity_hooks = self.step_hooks_are_identity()
        if not delay_setup:
            self.setup()

    def __del__(self):
        # At interpreter shutdown the modules close() needs may already be gone.
        with contextlib.suppress(Exception):
            self.close()

    # Properties ---------------------------------------------------------------------------
    @property
    def name(self) -> str:
        """Name of the environment."""
        return self._name

    @property
    def obs_shape(self) -> tuple[int, ...]:
        """Shape of the observations."""
        raise NotImplementedError

    @property
    def action_shape(self) -> tuple[int, ...]:
        """Shape of the actions."""
        raise NotImplementedError

    @property
    def unwrapped(self) -> PlanEnv:
        """The plain :class:`PlanEnv` under any vectorisation layer (itself here)."""
        return self

    @property
    def return_image(self) -> bool:
        """Whether ``info["rgb"]`` holds a picture of the environment after each step."""
        return self._return_image

    @property
    def img_shape(self) -> tuple[int, ...] | None:
        """Shape of :meth:`get_image`, or None when the env cannot draw itself."""
        try:
            image = self.get_image()
        except Exception:
            return None
        return None if image is None else image.shape

    # Planning API ---------------------------------------------------------------------------
    def reset(self, return_state: bool = True) -> tuple:
        """Start a new episode.

        Returns:
            ``(state, obs, info)``, or ``(obs, info)`` when ``return_state`` is False.
        """
        data = self.apply_reset()
        obs, info = data if isinstance(data, tuple) and len(data) == 2 else (data, {})
        info = dict(info or {})
        obs = self.process_obs(obs=obs, reward=0.0, terminal=False, truncated=False, info=info)
        info = self.process_info(info=info, obs=obs, reward=0.0, terminal=False, truncated=False)
        if self.return_image:
            info["rgb"] = self.get_image()
        return (self.get_state(), obs, info) if return_state else (obs, info)

    def step(
        self,
        action: Any,
        state: Any = None,
        dt: int = 1,
        return_state: bool | None = None,
    ) -> tuple:
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
        dt = check_dt(dt)
        self.check_action(action)
        if state is not None:
            self.check_state(state)
        want_state = return_state if return_state is not None else state is not None
        return self._step_checked(action, state, dt, want_state)

    def step_batch(
        self,
        actions: Iterable,
        states: Iterable | None = None,
        dt: int | Iterable[int] = 1,
        return_state: bool | None = None,
        arrays: bool = False,
    ) -> tuple[list, ...]:
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
        arrays = check_flag("arrays", arrays)
        actions, states, dts = self.check_batch(actions, states, dt)
        want_state = return_state if return_state is not None else states is not None
        if arrays:
            return self.run_batch_columns(actions, states, dts, want_state).as_arrays()
        return self.run_batch(actions, states, dts, want_state)

    def run_batch(
        self, actions: Any, states: list | None, dts: list[int], want_state: bool
    ) -> tuple[list, ...]:
        """Step a batch whose inputs were already checked (see :meth:`step_batch`)."""
        return self.run_batch_columns(actions, states, dts, want_state).as_lists()

    def run_batch_columns(
        self,
        actions: Any,
        states: list | np.ndarray | None,
        dts: list[int],
        want_state: bool,
        observs_out: np.ndarray | None = None,
    ) -> BatchColumns:
        """Step a checked batch and return its results as :class:`BatchColumns`.

        Args:
            actions: One checked action per element.
            states: None, a list of checked states, or a 1-D record array of them.
            dts: One dt per element.
            want_state: Return the new states.
            observs_out: An array with one row per element that an env may write the
                observations into (then ``observs`` is that array); envs that cannot
                write there in place return a list, as this generic version does.
        """
        if states is None:
            states = [None] * len(actions)
        elif is_record_block(states):
            states = records_to_states(states)
        rows = [
            self._step_checked(action, state, step_dt, want_state)
            for action, state, step_dt in zip(actions, states, dts, strict=True)
        ]
        return BatchColumns.from_rows(rows, want_state)

    def clone(self, **kwargs: Any) -> PlanEnv:
        """Return a new env built with the same constructor parameters, ``kwargs`` overriding.

        The clone starts from its own reset, not from this env's state: use
        ``clone().set_state(env.get_state())`` to copy the state too.
        """
        args, init_kwargs = self._constructor_call()
        init_kwargs.update(kwargs)
        return type(self)(*args, **init_kwargs)

    def sample_action(self) -> Any:
        """Return a random valid action."""
        raise NotImplementedError

    def get_image(self) -> np.ndarray | None:
        """Return an RGB picture (height, width, 3) of the environment."""
        raise NotImplementedError

    def setup(self) -> None:
        """Build whatever cannot be pickled (the simulator). Called by ``__init__``."""

    def close(self) -> None:
        """Release the simulator. The env must not be stepped afterwards."""

    # Input checks -------------------------------------------------------------------------
    def check_action(self, action: Any, name: str = "action") -> None:
        """Raise ValueError or TypeError unless ``action`` is in the action space."""
        space = getattr(self, "action_space", None)
        if isinstance(space, Space):
            check_action(space, action, name=name)

    def check_actions(self, actions: Any) -> None:
        """Check every action of a batch (vectorised where the action space allows)."""
        if type(self).check_action is not PlanEnv.check_action:
            for i, action in enumerate(actions):
                self.check_action(action, name=f"actions[{i}]")
            return
        space = getattr(self, "action_space", None)
        check_batch_action_values(space if isinstance(space, Space) else None, actions)

    def check_batch(self, actions: Any, states: Any, dt: Any) -> tuple[Any, list | None, list]:
        """Check a whole batch; return ``(actions, states or None, one dt per element)``."""
        actions = check_batch_actions(actions)
        n = len(actions)
        dts = check_batch_dt(dt, n)
        states = check_batch_states(states, n)
        self.check_actions(actions)
        if is_record_block(states):
            self.check_record_block(states)
        elif states is not None:
            self.check_states(states)
        return discrete_as_int64(actions, getattr(self, "action_space", None)), states, dts

    def check_state(self, state: Any, name: str = "state") -> None:
        """Raise ValueError or TypeError unless ``state`` can be restored in this env.

        The base class accepts anything; families override it.
        """

    def check_record_block(self, records: np.ndarray) -> None:
        """Check the states of a batch given as one record array (see :meth:`step_batch`)."""
        self.check_states(records_to_states(records))

    def check_states(self, states: list) -> None:
        """Check every state of a batch; the error names the first bad one, ``states[i]``."""
        for i, state in enumerate(states):
            self.check_state(state, name=f"states[{i}]")

    # Stepping internals ---------------------------------------------------------------------
    def _step_checked(self, action: Any, state: Any, dt: int, want_state: bool) -> tuple:
        if state is not None:
            self.set_state(state)
        obs, reward, terminal, truncated, info = self.step_with_dt(action, dt)
        obs, reward, terminal, truncated, info = self.process_step(
            obs=obs, reward=reward, terminal=terminal, truncated=truncated, info=info
        )
        data = (obs, reward, terminal, truncated, info)
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
        obs, reward, terminal, truncated, info = repeat_action(
            self._underlying_step, action, dt * self.frameskip
        )
        info["dt"] = dt
        return obs, reward, terminal, truncated, info

    def _underlying_step(self, action: Any) -> tuple:
        data = self.apply_action(action)
        if len(data) == 4:  # environments written for the old gym API
            obs, reward, terminal, info = data
            data = (obs, reward, terminal, False, info)
        return self.process_apply_action(*data)

    # Hooks for subclasses -------------------------------------------------------------------
    def process_apply_action(self, obs, reward, terminal, truncated, info) -> tuple:
        """Post-process the data of one underlying step."""
        return obs, reward, terminal, truncated, info

    def step_hooks_are_identity(self) -> bool:
        """Whether every ``process_*`` hook returns its input unchanged for this env.

        Then :meth:`process_step` skips calling them, which matters when a step costs a few
        microseconds. Subclasses whose own hooks are identities for some settings say so.
        """
        return inherits_unchanged(type(self), dict.fromkeys(STEP_HOOKS, PlanEnv))

    def process_step(self, obs, reward, terminal, truncated, info) -> tuple:
        """Post-process the data of a whole ``step`` (after ``dt * frameskip`` steps)."""
        if self._identity_hooks:
            if self._return_image:
                info["rgb"] = self.get_image()
            return obs, reward, terminal, truncated, info
        kwargs = {"reward": reward, "terminal": terminal, "truncated": truncated, "info": info}
        obs = self.process_obs(obs=obs, **kwargs)
        reward = self.process_reward(obs=obs, **kwargs)
        kwargs["reward"] = reward
        terminal = self.process_terminal(obs=obs, **kwargs)
        kwargs["terminal"] = terminal
        truncated = self.process_truncated(obs=obs, **kwargs)
        kwargs["truncated"] = truncated
        info = self.process_info(obs=obs, **kwargs)
        if self.return_image:
            info["rgb"] = self.get_image()
        return obs, reward, terminal, truncated, info

    def process_obs(self, obs, **kwargs):
        """Return the observation that ``step`` and ``reset`` hand out."""
        return obs

    def process_reward(self, reward, **kwargs) -> float:
        """Return the reward that ``step`` hands out."""
        return reward

    def process_terminal(self, terminal, **kwargs) -> bool:
        """Return the terminal flag that ``step`` hands out."""
        return terminal

    def process_truncated(self, truncated, **kwargs) -> bool:
        """Return the truncated flag that ``step`` hands out."""
        return truncated

    def process_info(self, info, **kwargs) -> dict[str, Any]:
        """Return the info dictionary that ``step`` and ``reset`` hand out."""
        return info

    # To implement ---------------------------------------------------------------------------
    def apply_action(self, action: Any) -> tuple:
        """Advance one underlying step: ``(obs, reward, terminal, truncated, info)``."""
        raise NotImplementedError

    def apply_reset(self, **kwargs: Any) -> tuple:
        """Start a new episode of the simulator: ``(obs, info)``."""
        raise NotImplementedError

    def get_state(self) -> Any:
        """Return everything that decides the future of the environment."""
        raise NotImplementedError

    def set_state(self, state: Any) -> None:
        """Restore a state returned by :meth:`get_state`."""
        raise NotImplementedError

    # Construction bookkeeping ---------------------------------------------------------------
    def _constructor_call(self) -> tuple[tuple, dict[str, Any]]:
        """Return the (args, kwargs) this env was built with, positional ones named."""
        args = getattr(self, "_init_args", ())
        kwargs = dict(getattr(self, "_init_kwargs", {}))
        parameters = list(inspect.signature(type(self).__init__).parameters.values())[1:]
        named = []
        for parameter, value in zip(parameters, args, strict=False):
            if parameter.kind is inspect.Parameter.VAR_POSITIONAL:
                break
            named.append((parameter.name, value))
        kwargs.update(named)
        return tuple(args[len(named) :]), kwargs


class PlangymEnv(PlanEnv):
    """A :class:`PlanEnv` wrapping a gymnasium environment.

    Args:
        name: A gymnasium environment id.
        frameskip: Underlying steps per agent step.
        autoreset: Reset after an episode ends.
        wrappers: gymnasium wrappers applied in order; each item is a wrapper class or
            ``(wrapper, kwargs_dict)`` or ``(wrapper, args_tuple)``.
        delay_setup: Build the gymnasium env later, in :meth:`setup`.
        remove_time_limit: Drop the registered episode time limit.
        render_mode: None, "human" or "rgb_array".
        episodic_life: End the episode when a life is lost (video games).
        obs_type: One of :attr:`AVAILABLE_OBS_TYPES`; None picks :attr:`DEFAULT_OBS_TYPE`.
        return_image: Add ``info["rgb"]`` to every step.
        kwargs: Passed to ``gymnasium.make``.
    """

    AVAILABLE_RENDER_MODES = frozenset({"human", "rgb_array", None})
    AVAILABLE_OBS_TYPES = frozenset({"coords", "rgb", "grayscale"})
    DEFAULT_OBS_TYPE = "coords"
    # Whether rgb/grayscale observations are gymnasium's render() output (only drawn with
    # render_mode="rgb_array"); emulators draw their screens whatever the render mode.
    SCREEN_FROM_RENDERER = True

    def __init__(
        self,
        name: str,
        frameskip: int = 1,
        autoreset: bool = True,
        wrappers: Iterable[wrap_callable] | None = None,
        delay_setup: bool = False,
        remove_time_limit: bool = True,
        render_mode: str | None = "rgb_array",
        episodic_life: bool = False,
        obs_type: str | None = None,
        return_image: bool = False,
        **kwargs: Any,
    ):
        if render_mode not in self.AVAILABLE_RENDER_MODES:
            shown = sorted(self.AVAILABLE_RENDER_MODES, key=str)
            raise ValueError(
                f"Invalid render_mode: expected one of {shown}, received {render_mode!r}"
            )
        obs_type = self.DEFAULT_OBS_TYPE if obs_type is None else obs_type
        check_choice("obs_type", obs_type, self.AVAILABLE_OBS_TYPES)
        check_pictures_available(
            render_mode, return_image, obs_type, self.SCREEN_FROM_RENDERER, self.DEFAULT_OBS_TYPE
        )
        self._render_mode = render_mode
        self._obs_type = obs_type
        self._wrappers = list(wrappers) if wrappers is not None else None
        self._remove_time_limit = remove_time_limit
        self.episodic_life = episodic_life
        self._gym_env_kwargs = dict(kwargs)
        self._gym_env: gym.Env | None = None
        self._obs_space: Space | None = None
        self._action_space: Space | None = None
        super().__init__(
            name=name,
            frameskip=frameskip,
            autoreset=autoreset,
            delay_setup=delay_setup,
            return_image=return_image,
        )

    def step_hooks_are_identity(self) -> bool:
        """Hooks are identities when only this class's obs conversion has nothing to do."""
        cls = type(self)
        others_default = inherits_unchanged(cls, dict.fromkeys(STEP_HOOKS[1:], PlanEnv))
        raw_obs = cls.process_obs in IDENTITY_OBS_HOOKS or (
            cls.process_obs is PlangymEnv.process_obs and self.obs_type == self.DEFAULT_OBS_TYPE
        )
        return others_default and raw_obs

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(name={self.name!r}, frameskip={self.frameskip}, "
            f"obs_type={self.obs_type!r}, render_mode={self.render_mode!r}, "
            f"obs_shape={self._obs_space.shape if self._obs_space else None}, "
            f"action_space={self._action_space})"
        )

    def __reduce__(self):
        # An env pickles as its constructor call plus, once built, its current state.
        args, kwargs = self._constructor_call()
        state = self.get_state() if self._gym_env is not None else None
        return _rebuild_env, (type(self), args, kwargs, state)

    # Properties -----------------------------------------------------------------------------
    @property
    def gym_env(self) -> gym.Env:
        """The wrapped gymnasium env (built on first use when setup was delayed)."""
        if self._gym_env is None and not self.SINGLETON:
            self.setup()
        return self._gym_env

    @property
    def obs_type(self) -> str:
        """Kind of observation: one of :attr:`AVAILABLE_OBS_TYPES`."""
        return self._obs_type

    @property
    def observation_space(self) -> Space:
        """Space of the observations that ``step`` returns."""
        if self._obs_space is None:
            self.gym_env  # noqa: B018 - builds the env and its spaces
        return self._obs_space

    @property
    def action_space(self) -> Space:
        """Space of the actions ``step`` accepts."""
        if self._action_space is None:
            self.gym_env  # noqa: B018 - builds the env and its spaces
        return self._action_space

    @property
    def obs_shape(self) -> tuple[int, ...]:
        """Shape of the observations that ``step`` returns."""
        return self.observation_space.shape

    @property
    def action_shape(self) -> tuple[int, ...]:
        """Shape of the actions (``()`` for discrete actions)."""
        return self.action_space.shape

    @property
    def reward_range(self) -> tuple[float, float]:
        """Range of the rewards (gymnasium 1.x dropped it from envs: (-inf, inf) then)."""
        return getattr(self.gym_env.unwrapped, "reward_range", (-float("inf"), float("inf")))

    @property
    def metadata(self) -> dict[str, Any]:
        """Metadata of the gymnasium env."""
        return self.gym_env.metadata

    @property
    def render_mode(self) -> str | None:
        """How the env renders: None, "human" or "rgb_array"."""
        return self._render_mode

    @property
    def remove_time_limit(self) -> bool:
        """Whether the registered episode time limit was dropped."""
        return self._remove_time_limit

    # Setup ----------------------------------------------------------------------------------
    def setup(self) -> None:
        """Build the gymnasium env, apply the wrappers and read the spaces."""
        self._gym_env = self.init_gym_env()
        if self._wrappers:
            self.apply_wrappers(self._wrappers)
        self.init_spaces()

    def init_gym_env(self) -> gym.Env:
        """Build and reset the gymnasium env."""
        kwargs = dict(self._gym_env_kwargs)
        kwargs.setdefault("render_mode", self.render_mode)
        gym_env = make_gym_env(self.name, remove_time_limit=self.remove_time_limit, **kwargs)
        gym_env.reset()
        return gym_env

    def apply_wrappers(self, wrappers: Iterable[wrap_callable]) -> None:
        """Wrap the gymnasium env with each item of ``wrappers`` in order."""
        for item in wrappers:
            wrapper, args, kwargs = wrapper_call(item)
            self.wrap(wrapper, *args, **kwargs)

    def wrap(self, wrapper: Callable[..., gym.Wrapper], *args: Any, **kwargs: Any) -> None:
        """Wrap the gymnasium env with one wrapper."""
        self._gym_env = wrapper(self._gym_env, *args, **kwargs)

    def init_spaces(self) -> None:
        """Read the action space and derive the observation space for :attr:`obs_type`."""
        self._action_space = self._gym_env.action_space
        if self.obs_type == self.DEFAULT_OBS_TYPE:
            self._obs_space = self._gym_env.observation_space
        elif self.obs_type == "rgb":
            self._obs_space = Box(0, 255, shape=self.get_image().shape, dtype=np.uint8)
        elif self.obs_type == "grayscale":
            self._obs_space = Box(0, 255, shape=self.get_image().shape[:2], dtype=np.uint8)
        else:
            self._obs_space = self._gym_env.observation_space

    # Simulator access -----------------------------------------------------------------------
    def apply_reset(self, **kwargs: Any) -> tuple:
        """Reset the gymnasium env: ``(obs, info)``."""
        return self.gym_env.reset(**kwargs)

    def apply_action(self, action: Any) -> tuple:
        """Step the gymnasium env once."""
        return self.gym_env.step(action)

    def sample_action(self) -> Any:
        """Return a random action from the action space."""
        return self.action_space.sample()

    def seed(self, seed: int | None = None) -> None:
        """Seed the env's random generators and the action space, and start a new episode.

        Two envs seeded alike produce identical resets and identical trajectories.
        """
        self.gym_env.reset(seed=seed)
        self.action_space.seed(seed)

    def get_image(self) -> np.ndarray:
        """Return an RGB picture of the environment (needs ``render_mode="rgb_array"``)."""
        if self.render_mode != "rgb_array":
            raise RuntimeError(
                f"get_image: needs render_mode='rgb_array', this env has {self.render_mode!r}"
            )
        return self.gym_env.render()

    def check_can_draw(self) -> None:
        """Raise RuntimeError when the env was built without a render mode.

        Envs whose pictures do not come from gymnasium's renderer call this first in
        their :meth:`get_image`, so every family refuses pictures alike.
        """
        if self.render_mode is None:
            raise RuntimeError(
                "get_image: cannot draw with render_mode=None; build the env with "
                "render_mode='rgb_array' to get pictures"
            )

    def render(self) -> Any:
        """Render the gymnasium env (an RGB array, or a window for "human")."""
        return self.gym_env.render()

    def close(self) -> None:
        """Close the gymnasium env; a later use builds it again."""
        gym_env = getattr(self, "_gym_env", None)
        if gym_env is not None:
            self._gym_env = None
            gym_env.close()

    # Observations ---------------------------------------------------------------------------
    def process_obs(self, obs, **kwargs):
        """Turn the gymnasium observation into one of :attr:`obs_type`."""
        if self.obs_type == self.DEFAULT_OBS_TYPE:
            return obs
        if self.obs_type == "rgb":
            return self.get_rgb_obs(obs, **kwargs)
        if self.obs_type == "grayscale":
            return self.get_grayscale_obs(obs, **kwargs)
        return self.get_coords_obs(obs, **kwargs)

    def get_coords_obs(self, obs, **kwargs):
        """Observation for ``obs_type="coords"``."""
        return obs

    def get_rgb_obs(self, obs, **kwargs):
        """Observation for ``obs_type="rgb"``."""
        return self.get_image()

    def get_grayscale_obs(self, obs, **kwargs):
        """Observation for ``obs_type="grayscale"``."""
        return to_grayscale(self.get_rgb_obs(obs, **kwargs))


def wrapper_call(item: wrap_callable) -> tuple[Callable[..., gym.Wrapper], tuple, dict]:
    """Read one item of a ``wrappers`` list as ``(wrapper, args, kwargs)``.

    An item is a wrapper, or ``(wrapper, kwargs_dict)``, ``(wrapper, args_tuple_or_list)``
    or ``(wrapper, single_argument)``.

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


def inherits_unchanged(cls: type, methods: dict[str, type]) -> bool:
    """Whether ``cls`` still uses each named method as defined in the class given for it.

    Fast paths that skip per-step method dispatch use this to step aside as soon as a
    subclass overrides one of the methods they would otherwise bypass.

    >>> inherits_unchanged(PlangymEnv, {"step": PlanEnv, "process_obs": PlanEnv})
    False
    """
    return all(getattr(cls, name) is getattr(base, name) for name, base in methods.items())


def repeat_action(step: Callable[[Any], tuple], action: Any, times: int) -> tuple:
    """Call ``step(action)`` up to ``times`` times, stopping when the episode ends.

    Returns the last ``(obs, reward, terminal, truncated, info)`` with the rewards summed
    and ``info["n_step"]``, the number of calls made.
    """
    reward, n_step = 0.0, 0
    for _ in range(times):
        obs, step_reward, terminal, truncated, info = step(action)
        reward += step_reward
        n_step += 1
        if terminal or truncated:
            break
    info = dict(info)
    info["n_step"] = n_step
    return obs, reward, terminal, truncated, info


# process_obs implementations known to return the observation unchanged.
IDENTITY_OBS_HOOKS: set[Callable] = {PlanEnv.process_obs}


def _rebuild_env(cls: type[PlanEnv], args: tuple, kwargs: dict[str, Any], state: Any) -> PlanEnv:
    """Unpickle an env: call its constructor again and restore the state it had."""
    env = cls(*args, **kwargs)
    if state is not None:
        env.set_state(state)
    return env
