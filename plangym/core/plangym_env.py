"""The gymnasium-backed base of plangym's families: :class:`PlangymEnv`.

It builds a gymnasium env (``gymnasium.make`` plus optional wrappers), reads its spaces,
converts observations to the ``obs_type`` asked for, and pickles as its constructor call
plus its current state.

>>> env = PlangymEnv("CartPole-v1", obs_type="rgb")
>>> env.obs_shape, env.has_fast_paths()
((400, 600, 3), True)
"""

from __future__ import annotations

import warnings
import weakref
from collections.abc import Callable, Iterable
from typing import Any, cast

import gymnasium as gym
import numpy as np
from gymnasium.spaces import Box, Space
from gymnasium.wrappers import TimeLimit

from plangym.constructor import read_only
from plangym.core.plan_env import PlanEnv
from plangym.core.wrappers import (
    added_wrappers,
    check_wrappers,
    stateful_wrapper_names,
    wrap_callable,
    wrapper_call,
)
from plangym.extras import extra_for
from plangym.utils import find_time_limit, make_gym_env, to_grayscale
from plangym.utils.display import draw_off_screen_when_headless
from plangym.utils.gym_envs import find_time_limits, registered_time_limit
from plangym.utils.warning_site import stacklevel_outside_plangym
from plangym.validation import check_choice, check_flag, check_pictures_available, check_seed
from plangym.validation.values import add_note


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

    FAST_PATHS = True
    AVAILABLE_RENDER_MODES = frozenset({"human", "rgb_array", None})
    AVAILABLE_OBS_TYPES = frozenset({"coords", "rgb", "grayscale"})
    DEFAULT_OBS_TYPE = "coords"
    # Whether rgb/grayscale observations are gymnasium's render() output (only drawn with
    # render_mode="rgb_array"); emulators draw their screens whatever the render mode.
    SCREEN_FROM_RENDERER = True
    # Whether states hold the step count of a TimeLimit among the user's wrappers; the
    # families whose states cannot hold it refuse such a wrapper, with this advice. None
    # (a user's own subclass that does not say): a TimeLimit is taken with a warning.
    TIME_LIMIT_IN_STATE: bool | None = None
    # The extra that brings what gymnasium draws with (pygame), named when it is missing.
    DRAWING_EXTRA = "classic-control"
    TIME_LIMIT_ADVICE = "use the env's own episode limit"
    # The env init_gym_env built, under the user's wrappers (a weak reference: an emulator
    # must go when the env is closed), and the registered step limit that build removed.
    _bare_env: weakref.ref[gym.Env] | None = None
    _removed_time_limit: int | None = None
    # True while reset(seed=...) seeds the env: its reset then skips the user's wrappers.
    _seeding_under_wrappers = False

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
        self._wrappers = check_wrappers(wrappers, pairs=True)
        self._remove_time_limit = check_flag("remove_time_limit", remove_time_limit)
        self.episodic_life = check_flag("episodic_life", episodic_life)
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
        """Hooks are identities for the declared families unless observations are converted."""
        return self.has_fast_paths() and self.obs_type == self.DEFAULT_OBS_TYPE

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
        """The wrapped gymnasium env (built on first use when setup was delayed).

        A :attr:`SINGLETON` env (one simulator per process) is never built behind the
        caller's back: until its :meth:`setup` runs, this raises RuntimeError.
        """
        gym_env = self._gym_env
        if gym_env is not None:  # read on every step: the common case first
            return gym_env
        if self.SINGLETON:
            raise RuntimeError(
                f"{self.name}: the env is not built (one simulator per process); call "
                "setup() first (delay_setup=True, or after close())"
            )
        self.setup()
        assert self._gym_env is not None, "setup() builds the gymnasium env"
        return self._gym_env

    obs_type = read_only("_obs_type", "Kind of observation: one of :attr:`AVAILABLE_OBS_TYPES`.")

    @property
    def observation_space(self) -> Space:
        """Space of the observations that ``step`` returns."""
        space = self._obs_space
        return space if space is not None else self._space_once_built("_obs_space")

    @property
    def action_space(self) -> Space:
        """Space of the actions ``step`` accepts."""
        space = self._action_space  # read on every step's action check: no call when kept
        return space if space is not None else self._space_once_built("_action_space")

    def _space_once_built(self, attribute: str) -> Space:
        """Build the env (setup reads its spaces) and return the space kept in ``attribute``."""
        self.gym_env  # noqa: B018 - builds the env and its spaces
        space = getattr(self, attribute)
        assert space is not None, "setup() reads the spaces"
        return space

    # Every family's spaces have a shape; gymnasium's composite spaces (Tuple, Dict) of a
    # plain gymnasium id have None, which these hand on as it is.
    @property
    def obs_shape(self) -> tuple[int, ...]:
        """Shape of the observations that ``step`` returns."""
        return cast("tuple[int, ...]", self.observation_space.shape)

    @property
    def action_shape(self) -> tuple[int, ...]:
        """Shape of the actions (``()`` for discrete actions)."""
        return cast("tuple[int, ...]", self.action_space.shape)

    @property
    def reward_range(self) -> tuple[float, float]:
        """Range of the rewards (gymnasium 1.x dropped it from envs: (-inf, inf) then)."""
        return getattr(self.gym_env.unwrapped, "reward_range", (-float("inf"), float("inf")))

    @property
    def metadata(self) -> dict[str, Any]:
        """Metadata of the gymnasium env."""
        return self.gym_env.metadata

    render_mode = read_only("_render_mode", 'How the env renders: None, "human" or "rgb_array".')

    remove_time_limit = read_only(
        "_remove_time_limit", "Whether the registered episode time limit was dropped."
    )

    # Setup ----------------------------------------------------------------------------------
    def setup(self) -> None:
        """Build the gymnasium env, apply the wrappers and read the spaces.

        An env already built is closed first, as :meth:`close` closes it (plangym 0.1's
        tests call ``setup()`` again; a human-mode ALE emulator dropped unclosed crashed).
        """
        self._close_built_env()
        if self.render_mode == "rgb_array":  # pictures only: no window will be opened
            draw_off_screen_when_headless()
        self._gym_env = self.init_gym_env()
        self._bare_env = weakref.ref(self._gym_env)
        if self._wrappers:
            try:
                self.apply_wrappers(self._wrappers)
            except BaseException:
                self.close()  # an emulator (one per process for stable-retro) is not left open
                raise
            # Wrappers start their bookkeeping in reset (a TimeLimit's step count is None
            # until then): reset through them, as init_gym_env reset the bare env.
            self._gym_env.reset()
        self.init_spaces()

    def _close_built_env(self) -> None:
        """Close the env an earlier :meth:`setup` built (a family's setup calls it first)."""
        if getattr(self, "_gym_env", None) is not None:
            self.close()

    def init_gym_env(self) -> gym.Env:
        """Build and reset the gymnasium env."""
        kwargs = dict(self._gym_env_kwargs)
        kwargs.setdefault("render_mode", self.render_mode)
        with extra_for(self.DRAWING_EXTRA, self.name):  # Box2D's CarRacing imports pygame
            gym_env = make_gym_env(self.name, remove_time_limit=self.remove_time_limit, **kwargs)
        self._removed_time_limit = (
            registered_time_limit(self.name) if self.remove_time_limit else None
        )
        if find_time_limit(gym_env) is not None:
            self._warn_if_time_limit_unsaid("the registered TimeLimit kept")
        gym_env.reset()
        return gym_env

    def apply_wrappers(self, wrappers: Iterable[wrap_callable]) -> None:
        """Wrap the gymnasium env with each item of ``wrappers`` in order.

        What an item adds is checked once applied (:meth:`wrapper_problem`): a lambda
        counts as what it builds.
        """
        for item in wrappers:
            wrapper, args, kwargs = wrapper_call(item)
            inner = self._gym_env
            self._wrap_explained(wrapper, args, kwargs)
            added = list(added_wrappers(self._gym_env, inner))
            problem = self.wrapper_problem(added)
            if problem is not None:
                self._gym_env = inner
                raise ValueError(f"wrappers: {problem}; received {wrapper!r}")
            if any(isinstance(env, TimeLimit) for env in added):
                self._warn_if_time_limit_unsaid(f"the TimeLimit of wrappers ({wrapper!r})")
            for name in stateful_wrapper_names(type(env) for env in added):
                warnings.warn(
                    f"wrappers: {name} keeps state of its own (history, running "
                    "statistics), which states do not hold: steps from a state will depend "
                    "on what the env did before",
                    UserWarning,
                    stacklevel=stacklevel_outside_plangym(),
                )

    def _warn_if_time_limit_unsaid(self, which: str) -> None:
        """Warn that ``which`` TimeLimit may count outside the states (TIME_LIMIT_IN_STATE None)."""
        if self.TIME_LIMIT_IN_STATE is not None:
            return
        name = type(self).__name__
        warnings.warn(
            f"{name}: {which} counts the env's steps, and {name} does not say whether its "
            "states hold that count: if get_state leaves it out, steps from a state truncate "
            "by the env's history. Set the class attribute TIME_LIMIT_IN_STATE = True once "
            "they hold it, or False to refuse TimeLimits",
            UserWarning,
            stacklevel=stacklevel_outside_plangym(),
        )

    def _wrap_explained(self, wrapper: Callable[..., gym.Wrapper], args: tuple, kwargs: dict):
        """Wrap the env; a wrapper that fails to build is told that plangym removed a limit.

        gymnasium's wrappers that need a TimeLimit (TimeAwareObservation) say so without
        knowing that plangym took the registered one out (``remove_time_limit=True``).
        """
        try:
            self.wrap(wrapper, *args, **kwargs)
        except Exception as error:
            # Only an error about a missing limit (gymnasium's TimeAwareObservation's words).
            about_limit = any(word in str(error) for word in ("TimeLimit", "max_episode_steps"))
            if self._removed_time_limit is not None and about_limit:
                add_note(
                    error,
                    f"plangym removed {self.name}'s TimeLimit ({self._removed_time_limit} "
                    "steps) because remove_time_limit=True, the default; pass "
                    "remove_time_limit=False to keep it",
                )
            raise

    def wrapper_problem(self, added: list[gym.Wrapper]) -> str | None:
        """Say why the wrappers one item of ``wrappers`` built cannot be taken (None: they can).

        ``added`` are those wrappers, outermost first, already around the env. A TimeLimit
        is refused where states hold no step count (:attr:`TIME_LIMIT_IN_STATE`) and where
        it would be the env's second (states hold one count). Families add rules of their own.
        """
        if not any(isinstance(env, TimeLimit) for env in added):
            return None
        name = type(self).__name__
        if self.TIME_LIMIT_IN_STATE is False:
            return (
                f"{name} states do not hold a TimeLimit's step count, so steps from a state "
                f"would truncate by the env's history; {self.TIME_LIMIT_ADVICE}"
            )
        count = len(find_time_limits(added[0]))  # added[0] is the whole env now
        if count > 1:
            return (
                f"{name} states hold one TimeLimit's step count (the outermost's) and the env "
                f"would have {count} TimeLimits: the inner ones would truncate by the env's "
                f"history; {self._keep_one()}"
            )
        return None

    def _keep_one(self) -> str:
        """Say how to keep one TimeLimit when the wrappers would give the env a second."""
        bare = self._bare_env() if self._bare_env is not None else None
        if bare is not None and find_time_limit(bare) is not None:
            return (
                "remove_time_limit=False keeps the registered one: pass "
                "remove_time_limit=True to use yours, or drop yours"
            )
        return "keep one TimeLimit in wrappers"

    def wrap(self, wrapper: Callable[..., gym.Wrapper], *args: Any, **kwargs: Any) -> None:
        """Wrap the gymnasium env with one wrapper."""
        self._gym_env = wrapper(self._gym_env, *args, **kwargs)

    def init_spaces(self) -> None:
        """Read the action space and derive the observation space for :attr:`obs_type`."""
        gym_env = self._gym_env
        assert gym_env is not None, "setup() builds the env before reading its spaces"
        self._action_space = gym_env.action_space
        if self.obs_type == self.DEFAULT_OBS_TYPE:
            self._obs_space = gym_env.observation_space
        elif self.obs_type in ("rgb", "grayscale"):
            image = self.get_image()
            assert image is not None, "picture observations are refused without pictures"
            shape = image.shape if self.obs_type == "rgb" else image.shape[:2]
            self._obs_space = Box(0, 255, shape=shape, dtype=np.uint8)
        else:
            self._obs_space = gym_env.observation_space

    # Simulator access -----------------------------------------------------------------------
    def apply_reset(self, **kwargs: Any) -> tuple:
        """Reset the gymnasium env: ``(obs, info)``."""
        self.generator_moves()
        return self.gym_env.reset(**kwargs)

    def generator_moves(self) -> None:
        """Say that the gymnasium env's generator is about to draw (a reset) or be reseeded.

        Families whose states cache the generator's words forget them here.
        """

    def generator_shared(self) -> None:
        """Say that others (wrappers above this env) may draw from its generator at any step.

        Families whose states cache the generator's words between resets read and write
        them with every state from now on, so that states hold what those draws did.
        """

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
        seed = check_seed(seed)
        self.generator_moves()
        self._env_to_seed().reset(seed=seed)
        self.action_space.seed(seed)

    def _env_to_seed(self) -> gym.Env:
        """Return the env :meth:`seed` resets (under the user's wrappers while told so)."""
        gym_env = self.gym_env  # built first when setup was delayed
        bare = self._bare_env() if self._bare_env is not None else None
        return bare if self._seeding_under_wrappers and bare is not None else gym_env

    def seed_under_wrappers(self, seed: int) -> None:
        """Run :meth:`seed`, its reset reaching only the env under the user's wrappers.

        ``reset(seed=seed)`` resets through the wrappers right after seeding: had seeding
        reset through them too, a wrapper that draws in its reset (AtariPreprocessing's
        no-ops) would draw twice, and the episode would not be gymnasium's first of ``seed``.
        """
        self._seeding_under_wrappers = True
        try:
            self.seed(seed)
        finally:
            self._seeding_under_wrappers = False

    def seed_episode(self, seed: int) -> None:
        """Seed every generator, then the gymnasium env's again, as gymnasium's reset does.

        :meth:`seed` starts an episode (here under the user's wrappers: the reset that
        follows goes through them, see :meth:`seed_under_wrappers`); seeding the generator
        the episodes draw from once more makes the next reset draw the first episode of
        ``seed``, as ``gymnasium.make(name).reset(seed=seed)`` does.
        """
        self.seed_under_wrappers(seed)
        owner = getattr(self.gym_env, "unwrapped", None)
        if isinstance(owner, gym.Env):
            self.generator_moves()
            gym.Env.reset(owner, seed=seed)

    def get_image(self) -> np.ndarray | None:
        """Return an RGB picture of the environment (needs ``render_mode="rgb_array"``).

        With ``render_mode="human"`` the frame is drawn in the window and None returned,
        as in plangym 0.1. The emulators and dm_control draw without gymnasium's renderer:
        their ``get_image`` returns the picture in any render mode, as 0.1's did.
        """
        if self.render_mode == "human":
            return self.render()
        if self.render_mode != "rgb_array":
            raise RuntimeError(
                f"get_image: Cannot get image when render_mode={self.render_mode!r}; "
                "create the env with render_mode='rgb_array'"
            )
        return self._draw_picture()

    def _draw_picture(self) -> np.ndarray:
        """Draw one RGB picture for :meth:`get_image`, which checks the render mode first."""
        # gymnasium types render() for every mode; "rgb_array" draws one RGB frame.
        with extra_for(self.DRAWING_EXTRA, f"Drawing {self.name}"):
            return cast("np.ndarray", self.gym_env.render())

    def render(self) -> Any:
        """Render the gymnasium env (an RGB array, or a window for "human").

        With ``render_mode=None`` nothing is drawn and None returned, in every family but
        Mario's (0.1's render() returned its screen): gymnasium's convention, where some
        of its envs raised instead.
        """
        if self.render_mode is None:
            return None
        with extra_for(self.DRAWING_EXTRA, f"Drawing {self.name}"):
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


def _rebuild_env(cls: type[PlanEnv], args: tuple, kwargs: dict[str, Any], state: Any) -> PlanEnv:
    """Unpickle an env: call its constructor again and restore the state it had."""
    env = cls(*args, **kwargs)
    if state is not None:
        env.set_state(state)
    return env
