"""gymnasium's Box2D games with exact states, restored by replay.

Box2D has no exact world state to read or write (copied bodies drift apart within steps:
contact and joint impulses, the broad-phase tree and the solver's order are not reachable).
It is deterministic, though, so a state here is *how the episode got there*: the random
generator words before the episode's reset and every underlying action since (see
:mod:`plangym.control.box_2d.replay_state` for the bytes). Restoring resets from those words
in a brand-new ``b2World`` and replays the actions; an env that already holds the start of
that history just steps the rest, and a few live envs per process keep recent histories.

Two gymnasium habits would make the future depend on more than the history, so they are
changed: every reset gets a fresh world (gymnasium reuses one ``b2World`` across resets of
BipedalWalker and CarRacing, and a reused world replays differently), and drawing has no
effect on the physics (the simulator runs with ``render_mode=None``, so LunarLander makes no
exhaust particles, which are Box2D bodies that only drawing removes; pictures are drawn on
request, BipedalWalker's lidar sweep following the step count). See ``docs/box2d.md``.

>>> env = Box2DEnv("LunarLander-v3")
>>> state, obs, info = env.reset()
>>> for action in [2, 2, 1, 3]:
...     state, obs, *_ = env.step(action, state=state)
>>> _ = env.step(0, dt=5)
>>> env.set_state(state)
>>> obs = env.step(2)[0]
>>> bool((env.step(2, state=state)[1] == obs).all())
True
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import count
from typing import Any, cast

import gymnasium as gym
import numpy as np
from gymnasium.utils import seeding

from plangym.constructor import read_only, takes_parameters_of
from plangym.control.box_2d.replay_state import HEADER_BYTES, ActionCodec, Cursor, ReplayLayout
from plangym.control.box_2d.state import ReplayState

# world names the missing extra when Box2D is not installed.
from plangym.control.box_2d.world import episode_generator, fresh_world, replaying
from plangym.core import PlangymEnv, wrapper_call
from plangym.extras import extra_for
from plangym.rng import generator_words, restore_generator
from plangym.utils import make_gym_env
from plangym.validation import check_positive_int, check_seed

__all__ = ["DEFAULT_LIVE_ENVS", "Box2DEnv", "ReplayState", "episode_generator", "fresh_world"]

# gymnasium's Env.np_random property itself, called on the raw env (mypy types the class
# attribute as the property's getter, which has no fget or fset).
_ENV_NP_RANDOM: Any = gym.Env.np_random

# Live simulators kept per process. Each holds one history; a restore resumes from the
# one holding the longest start of the target. Measured in benchmarks/box2d.py.
DEFAULT_LIVE_ENVS = 8


@dataclass(eq=False)
class LiveEnv:
    """A gymnasium env and the history it holds (``cursor``); ``last_used`` for eviction."""

    gym_env: gym.Env
    cursor: Cursor | None = None
    last_used: int = 0


def _history(live: LiveEnv) -> Cursor:
    """Return the history ``live`` holds: none after a replay that failed midway."""
    if live.cursor is None:
        raise RuntimeError(
            "Box2DEnv: a restore failed midway and left the env without a state; call "
            "reset() or set_state() first"
        )
    return live.cursor


def _stable_repr(value: Any) -> str:
    """Return a setting as text that is the same in every process (no addresses)."""
    if value is None or isinstance(value, bool | int | float | str):
        return repr(value)
    if isinstance(value, list | tuple):
        return "[" + ",".join(_stable_repr(item) for item in value) + "]"
    return type(value).__qualname__


class Box2DEnv(PlangymEnv):
    """LunarLander, LunarLanderContinuous, BipedalWalker(Hardcore) and CarRacing, exactly.

    A state is an immutable :class:`~plangym.control.box_2d.state.ReplayState` (see
    :mod:`plangym.control.box_2d.replay_state` for its bytes), not an array
    (``STATE_IS_ARRAY`` is False): getting one costs the same at any depth, restoring one
    costs a replay of the steps the env does not already hold. Continuous
    actions are applied as float32 arrays (the action space's type), however they are given.
    Wrappers must be deterministic functions of the resets and steps they see: they are
    replayed too.

    Args:
        name: A gymnasium Box2D id, e.g. ``"LunarLander-v3"``.
        live_envs: Simulators kept alive in this process, each holding a recent history
            that a restore may resume from (more use more memory; see ``docs/box2d.md``).
        Other arguments: see :class:`~plangym.core.PlangymEnv`; extra keyword arguments
            go to ``gymnasium.make`` (e.g. ``enable_wind=True`` for LunarLander).

    >>> env = Box2DEnv("BipedalWalker-v3", frameskip=2)
    >>> state, *_ = env.reset()
    >>> action = np.array([0.5, -0.5, 0.5, -0.5], dtype=np.float32)
    >>> new_state, obs, reward, terminal, truncated, info = env.step(action, state=state, dt=3)
    >>> info["n_step"], new_state.n_steps - state.n_steps, new_state.nbytes - state.nbytes
    (6, 6, 96)
    """

    FAST_PATHS = True
    TIME_LIMIT_IN_STATE = True  # a replay steps through every wrapper again
    DRAWING_EXTRA = "box2d"  # pygame comes with it
    # A replay grows with every step, so states have no fixed shape: not arrays.
    STATE_IS_ARRAY = False

    @takes_parameters_of(PlangymEnv.__init__)
    def __init__(self, *args: Any, live_envs: int = DEFAULT_LIVE_ENVS, **kwargs: Any):
        self._live_envs = check_positive_int("live_envs", live_envs)
        self._live: list[LiveEnv] = []
        self._current: LiveEnv | None = None
        self._layout: ReplayLayout | None = None
        self._clock = count(1)
        super().__init__(*args, **kwargs)

    # Building ---------------------------------------------------------------------------
    live_envs = read_only(
        "_live_envs", "How many simulators this env keeps alive to resume restores from."
    )

    def make_physics_env(self) -> gym.Env:
        """Build the gymnasium env, without a render mode (pictures are drawn on request)."""
        kwargs = {**self._gym_env_kwargs, "render_mode": None}
        with extra_for(self.DRAWING_EXTRA, self.name):  # CarRacing imports pygame
            return make_gym_env(self.name, remove_time_limit=self.remove_time_limit, **kwargs)

    def dynamics_settings(self) -> str:
        """Text naming the settings that change the dynamics: part of every state."""
        items = sorted(self._gym_env_kwargs.items())
        return ",".join(f"{key}={_stable_repr(value)}" for key, value in items)

    def _build_gym_env(self) -> gym.Env:
        env = self.make_physics_env()
        for item in self._wrappers or ():
            wrapper, args, kwargs = wrapper_call(item)
            env = wrapper(env, *args, **kwargs)
        return env

    def setup(self) -> None:
        """Build the first simulator, start its episode and read the spaces (closing any)."""
        self._close_built_env()
        live = LiveEnv(self._build_gym_env())
        codec = ActionCodec(live.gym_env.action_space)
        self._layout = ReplayLayout(self.name, self.dynamics_settings(), codec)
        self._live = [live]
        self._activate(live)
        self._start_episode(live)
        self.init_spaces()

    def close(self) -> None:
        """Close every live simulator; a later use builds the env again."""
        live_envs, self._live, self._current, self._gym_env = self._live, [], None, None
        for live in live_envs:
            live.gym_env.close()

    # States -----------------------------------------------------------------------------
    @property
    def state_layout(self) -> ReplayLayout:
        """The format of this env's states."""
        self.gym_env  # noqa: B018 - builds the env when setup was delayed
        assert self._layout is not None, "setup() lays out the states"
        return self._layout

    def _current_live(self) -> LiveEnv:
        self.gym_env  # noqa: B018 - builds the env when setup was delayed
        assert self._current is not None, "setup() activates a simulator"
        return self._current

    def get_state(self) -> ReplayState:
        """Return the env's history as an immutable :class:`ReplayState` (no copy)."""
        live = self._current_live()
        assert self._layout is not None, "_current_live built the env, which lays out the states"
        return self._layout.state(_history(live))

    def set_state(self, state: ReplayState) -> None:
        """Restore a state from :meth:`get_state` (from any process, any instance).

        A bare 1-D uint8 array is rejected; :meth:`state_from_array` converts one.
        """
        self.check_state(state)
        self._restore(state.array)

    def check_state(self, state: Any, name: str = "state") -> None:
        """Raise TypeError or ValueError unless ``state`` is a state of this env."""
        layout = self.state_layout
        known = isinstance(state, ReplayState) and any(
            live.cursor is not None and live.cursor.owns(state) for live in self._live
        )
        layout.check(state, name=name, values=not known)

    def state_from_array(self, array: np.ndarray) -> ReplayState:
        """Return the state whose bytes are ``array`` (``state.array`` of a saved state).

        Replays kept as bare arrays (``state.array``, or the states of plangym versions
        before :class:`ReplayState`) are checked like any state and copied.

        >>> env = Box2DEnv("LunarLander-v3")
        >>> state, *_ = env.step(1, state=env.reset()[0])
        >>> env.state_from_array(state.array.copy()) == state
        True
        """
        return self.state_layout.from_array(array)

    def _restore(self, state: np.ndarray) -> None:
        """Make the env hold the replay ``state`` (its bytes), stepping as little as it can."""
        layout = self._layout
        assert layout is not None, "check_state built the env, which lays out the states"
        best, held = None, -1
        for live in self._live:
            cursor = live.cursor
            if cursor is None:
                continue
            # On a tie the current env wins: no switch.
            longer = cursor.length > held or (cursor.length == held and live is self._current)
            if longer and cursor.prefix_of(state):
                best, held = live, cursor.length
        if best is None:
            best = self._spare()
            self._start_episode(best, words=layout.words(state))
            held = HEADER_BYTES
        self._activate(best)
        if held == len(state):
            return
        rest = state[held:]
        try:
            with replaying(best.gym_env.unwrapped):
                for action in layout.codec.decode(rest):
                    best.gym_env.step(action)
        except BaseException:
            best.cursor = None  # holds nothing trustworthy; its next use starts over
            raise
        _history(best).append(rest)

    def _spare(self) -> LiveEnv:
        """Return a live env to replay in: a new one while there is room, else the LRU."""
        if len(self._live) < self._live_envs:
            live = LiveEnv(self._build_gym_env())
            self._live.append(live)
            return live
        return min(self._live, key=lambda live: live.last_used)

    def _activate(self, live: LiveEnv) -> None:
        self._current = live
        self._gym_env = live.gym_env
        live.last_used = next(self._clock)

    def _start_episode(self, live: LiveEnv, words: np.ndarray | None = None) -> tuple:
        """Reset ``live`` in a fresh world: from ``words`` (a replay) or its own generator."""
        unwrapped = live.gym_env.unwrapped
        generator = episode_generator(unwrapped)
        live.cursor = None
        if words is None:
            words = generator_words(generator)
            fresh_world(unwrapped)
            data = live.gym_env.reset()
        else:
            restore_generator(generator, words)
            fresh_world(unwrapped)
            with replaying(unwrapped):
                data = live.gym_env.reset()
        assert self._layout is not None, "setup() lays out the states before any episode"
        live.cursor = Cursor.start(self._layout.header(words))
        return data

    # Simulator access -------------------------------------------------------------------
    def apply_reset(self, **kwargs: Any) -> tuple:
        """Start a new episode in a fresh world: ``(obs, info)``."""
        if kwargs:
            raise TypeError(
                f"apply_reset: expected no arguments (use seed() to seed), received {kwargs}"
            )
        current = self._current_live()
        live = self._episode_env(current)
        if live is not current:
            # The new episode draws from the generator the env has been drawing from.
            words = generator_words(episode_generator(current.gym_env.unwrapped))
            restore_generator(episode_generator(live.gym_env.unwrapped), words)
            self._activate(live)
        return self._start_episode(live)

    def _episode_env(self, current: LiveEnv) -> LiveEnv:
        """Return the live env to start an episode in, keeping the histories it can.

        The current history may be a state the caller holds (an autoreset hands out the
        state that ended): starting over in its env would make that state's next restore
        a replay of its whole episode, so an env holding no step goes first, then a spare.
        """
        for live in (current, *self._live):
            if live.cursor is None or live.cursor.length <= HEADER_BYTES:
                return live
        return self._spare()

    def apply_action(self, action: Any) -> tuple:
        """Step the simulator once with ``action`` and record it in the history."""
        live = self._current_live()
        assert self._layout is not None, "_current_live built the env, which lays out the states"
        codec = self._layout.codec
        canonical = codec.canonical(action)
        data = live.gym_env.step(canonical)
        _history(live).append(codec.encode(canonical))
        return data

    def seed(self, seed: int | None = None) -> None:
        """Seed the env's generator and action space, and start a new episode.

        The same as gymnasium's ``reset(seed=seed)``, in a fresh world.
        """
        seed = check_seed(seed)
        live = self._current_live()
        _ENV_NP_RANDOM.fset(live.gym_env.unwrapped, seeding.np_random(seed)[0])
        self._start_episode(live)
        self.action_space.seed(seed)

    # Pictures ---------------------------------------------------------------------------
    def _draw_picture(self) -> np.ndarray:
        return cast("np.ndarray", self._draw("rgb_array"))

    def render(self) -> Any:
        """Draw the env in its render mode (a picture for "rgb_array", a window for "human")."""
        return None if self.render_mode is None else self._draw(self.render_mode)

    def _draw(self, mode: str) -> Any:
        """Draw without touching the simulation, so pictures depend on the state alone."""
        live = self._current_live()
        unwrapped = live.gym_env.unwrapped
        if hasattr(unwrapped, "lidar_render"):
            # BipedalWalker draws one lidar ray per picture, advancing a counter each time;
            # counting the steps instead gives what one picture per step would show.
            steps = self.state_layout.n_steps(_history(live).view())
            unwrapped.lidar_render = (steps - 1) % 100
        unwrapped.render_mode = mode
        try:
            with extra_for(self.DRAWING_EXTRA, f"Drawing {self.name}"):
                return unwrapped.render()
        finally:
            unwrapped.render_mode = None
