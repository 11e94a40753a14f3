"""Atari 2600 games through ale-py, with exact states and exact frame accounting.

Every underlying step is one emulator frame: the ALE is built with ``frameskip=1``
(:mod:`~plangym.videogames.atari.emulator`) and plangym repeats the action
``dt * frameskip`` times itself, so the ALE frame counter advances by exactly that much
(plangym 0.1 let the ALE skip frames too, applying ``frameskip`` twice). States are the
ALE's serialized state including its random generator, as a uint8 vector of one length per
env (see :mod:`plangym.videogames.atari.state`), so ``==`` compares games and the states of
many walkers stack into one array.

Sticky actions are applied by plangym, not by the ALE, and kept in the state, so replay is
exact with ``repeat_action_probability > 0`` (see :mod:`~plangym.videogames.atari.sticky`).

>>> env = AtariEnv("ALE/MsPacman-v5", repeat_action_probability=0.25)
>>> state, obs, info = env.reset()
>>> state.dtype, obs.shape
(dtype('uint8'), (210, 160, 3))
>>> first = env.step(3, state=state, dt=2)
>>> again = env.step(3, state=state, dt=2)
>>> bool((first[0] == again[0]).all()), first[-1]["n_step"]
(True, 10)
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any

import ale_py
import gymnasium as gym
import numpy as np
from gymnasium.wrappers import AtariPreprocessing

from plangym.columns import BatchColumns
from plangym.constructor import parent_arguments, read_only
from plangym.core.batch import Batch
from plangym.core.frame_loop import FrameRun
from plangym.core.obs_pool import ObservationPool
from plangym.core.wrappers import wrap_callable
from plangym.utils.fork_safety import note_fork_unsafe
from plangym.validation import check_flag, check_seed
from plangym.videogames.atari.emulator import (
    UnplayedFrameIsBlack,
    ale_env,
    ale_to_ram,
    check_game_setting,
    make_ale_env,
)
from plangym.videogames.atari.env_states import AtariStates
from plangym.videogames.atari.human_mode import keep_until_exit
from plangym.videogames.atari.in_place import rows_for, step_in_place
from plangym.videogames.atari.shown_ale import ShownALE
from plangym.videogames.atari.state import StateCodec, saves_lossily
from plangym.videogames.atari.sticky import StickyActions
from plangym.videogames.env import VideogameEnv


class AtariEnv(AtariStates, StickyActions, VideogameEnv):
    """An Atari 2600 game from ale-py, plannable and exactly restorable.

    Args:
        name: Any id ale-py registers ("ALE/MsPacman-v5", "PongNoFrameskip-v4", ...).
        frameskip: Emulator frames per agent step (ids with a random frameskip get this
            fixed one instead).
        episodic_life: End the episode as soon as a life is lost.
        autoreset: Reset after an episode ends.
        delay_setup: Build the emulator later, in :meth:`setup`.
        remove_time_limit: Drop the ALE's frame limit per episode (108000 for most ids).
        obs_type: "rgb" (210, 160, 3), "grayscale" (210, 160) or "ram" (128,).
        mode: Game mode; None is the game's default.
        difficulty: Game difficulty; None is the game's default.
        repeat_action_probability: Sticky-action probability.
        full_action_space: Use all 18 actions instead of the game's minimal set.
        render_mode: None, "human" or "rgb_array".
        possible_to_win: Accepted for plangym 0.1 compatibility; unused.
        wrappers: gymnasium wrappers. With wrappers every frame goes through
            ``gym_env.step``; without them frames go straight to the ALE (faster).
        array_state: Accepted for plangym 0.1 compatibility; states are always uint8
            arrays (False raises).
        clone_seeds: Also put the ALE's own random generator in states. Nothing reads
            it: plangym draws sticky actions from its own generator (always in the state)
            and runs the ALE with a sticky probability of 0, so the ALE's draws (two a
            frame) never reach the game, nor does a reset read them (checked on all 104
            ``ALE/*-v5`` games). False, the default as in plangym 0.1, gives states half
            the size and steps about 10% faster (restore and clone skip 6,700 bytes of text).
        return_image: Add ``info["rgb"]`` to every step.
        kwargs: Passed to ``gymnasium.make``.
    """

    TIME_LIMIT_IN_STATE = False  # its states have no room for a wrapper's count

    FAST_PATHS = True
    AVAILABLE_RENDER_MODES = frozenset({"human", "rgb_array", None})
    RESET_FRAMES = 0  # frames a reset plays: max_episode_steps counts the steps after them
    # Whether the last step started from a game that was over: see :meth:`play`.
    _screen_is_black = False
    # The reset's screen, RGB and grayscale, until the next step or restore (see
    # :meth:`_settle_after_reset`).
    _reset_screen: tuple[np.ndarray, np.ndarray] | None = None

    def __init__(
        self,
        name: str,
        frameskip: int = 5,
        episodic_life: bool = False,
        autoreset: bool = True,
        delay_setup: bool = False,
        remove_time_limit: bool = True,
        obs_type: str = "rgb",
        mode: int | None = None,
        difficulty: int | None = None,
        repeat_action_probability: float = 0.0,
        full_action_space: bool = False,
        render_mode: str | None = "rgb_array",
        possible_to_win: bool = False,
        wrappers: Iterable[wrap_callable] | None = None,
        array_state: bool = True,
        clone_seeds: bool = False,
        return_image: bool = False,
        **kwargs: Any,
    ):
        self._init_sticky(repeat_action_probability)
        if not array_state:
            raise ValueError(
                "array_state: expected True (states are uint8 arrays with value semantics), "
                "received False"
            )
        self._mode = check_game_setting("mode", mode)
        self._difficulty = check_game_setting("difficulty", difficulty)
        self._full_action_space = check_flag("full_action_space", full_action_space)
        self.possible_to_win = possible_to_win
        self.clone_seeds = clone_seeds
        super().__init__(**parent_arguments(AtariEnv, locals()))

    # Properties -----------------------------------------------------------------------------
    @property
    def ale(self) -> ale_py.ALEInterface:
        """The ALE interface running the game."""
        return ale_env(self.gym_env).ale

    mode = read_only("_mode", "Game mode (None: the game's default).")

    difficulty = read_only("_difficulty", "Game difficulty (None: the game's default).")

    repeat_action_probability = read_only(
        "_repeat_action_probability",
        "Probability that the emulator repeats the previous action (sticky actions).",
    )

    full_action_space = read_only(
        "_full_action_space", "Whether all 18 Atari actions are available."
    )

    # Setup ----------------------------------------------------------------------------------
    @property
    def game_id(self) -> str:
        """The ale-py id this env plays (its name, unless a subclass plays a variant)."""
        return self.name

    def ale_obs_type(self) -> str:
        """Return the observation the ALE itself produces (subclasses derive theirs from it)."""
        return self.obs_type

    def init_gym_env(self) -> gym.Env:
        """Build the ale-py env with one frame per step and the chosen frame limit."""
        gym_env = make_ale_env(
            self.game_id,
            self.ale_obs_type(),
            remove_time_limit=self.remove_time_limit,
            full_action_space=self.full_action_space,
            render_mode=self.render_mode,
            mode=self.mode,
            difficulty=self.difficulty,
            gym_kwargs=self._gym_env_kwargs,
            frames_per_step=self.frameskip,
            reset_frames=self.RESET_FRAMES,
        )
        gym_env.reset()
        # With wrappers, frames go through gym_env.step: the wrappers must see the black
        # screen of a frame the ALE did not play, as the direct path shows it (see play).
        return UnplayedFrameIsBlack(gym_env) if self._wrappers else gym_env

    def setup(self) -> None:
        """Build the emulator, remember what the game's states look like, choose the paths."""
        super().setup()
        if self.render_mode == "human":
            note_fork_unsafe("SDL's threads (Atari render_mode='human')")
        # Read on every frame: kept here rather than looked up through the gymnasium env.
        unwrapped = ale_env(self.gym_env)
        self._ale = unwrapped.ale
        self._ale_actions = list(unwrapped._action_set)
        # States hold the ALE's number of the last action, not its index in this env's action
        # set: a state means the same in an env with the full or the minimal set.
        self._action_numbers = [int(action.value) for action in self._ale_actions]
        self._action_index = {number: i for i, number in enumerate(self._action_numbers)}
        reference = self.ale.cloneState(include_rng=self.clone_seeds).serialize()
        generators = 2 if self.clone_seeds else 1
        self._codec = StateCodec(reference, self.name, generators, actions=self._action_index)
        self._lossy_save = saves_lossily(reference)
        # Observations may be written straight into a caller's rows only when the frames go
        # straight to the ALE and nothing is added to a step (hooks, pictures).
        in_place = self._direct and self.step_hooks_are_identity() and not self.return_image
        self._batch_path = "in_place" if in_place else "generic"
        self._settle_after_reset()

    def close(self) -> None:
        """Close the env; a human-mode emulator stays alive until exit (:mod:`.human_mode`)."""
        if self.render_mode == "human":
            keep_until_exit(getattr(self, "_gym_env", None))
        pool = vars(self).pop("_observation_pool", None)  # screens: up to twice a batch's
        if pool is not None:
            pool.clear()
        super().close()

    def wrapper_problem(self, added: list[gym.Wrapper]) -> str | None:
        """Refuse also an AtariPreprocessing that skips frames on top of ``frameskip``.

        gymnasium's wrapper asks for an env that plays one frame a step, and checks the
        ALE's frameskip, which is 1 here: plangym repeats the frames itself.
        """
        problem = super().wrapper_problem(added)
        if problem is not None or self.frameskip == 1:
            return problem
        for env in added:
            if isinstance(env, AtariPreprocessing) and env.frame_skip > 1:
                return (
                    f"AtariPreprocessing plays frame_skip={env.frame_skip} frames a step and "
                    f"the env frameskip={self.frameskip} frames for each of them "
                    f"({env.frame_skip * self.frameskip} frames a step, while info['n_step'] "
                    f"would count {self.frameskip}); pass frameskip=1 (gymnasium's "
                    "AtariPreprocessing asks for an env playing one frame a step) or "
                    "frame_skip=1 to the wrapper"
                )
        return None

    # Emulator access ------------------------------------------------------------------------
    def get_lifes_from_info(self, info: dict[str, Any]) -> int:  # type: ignore[override]
        """Lives left according to a step's ``info``: gymnasium's ``ale.lives`` key first.

        An instance method over the base's staticmethod, as in plangym 0.1.
        """
        return int(info.get("ale.lives", super().get_lifes_from_info(info)))

    def lives(self) -> int:
        """Lives left in the current game."""
        return int(self.ale.lives())

    def get_ram(self) -> np.ndarray:
        """Return the 128 bytes of the console's RAM."""
        return ale_to_ram(self.ale)

    def get_image(self) -> np.ndarray:
        """Return the screen as an RGB array (210, 160, 3), in any render mode, as in 0.1.

        Black after a step from a game that was over (see :meth:`play`).
        """
        if self._reset_screen is not None:
            return self._reset_screen[0].copy()
        screen = self.ale.getScreenRGB()
        if self._screen_is_black:
            screen.fill(0)
        return screen

    def shown_screen(self, grayscale: bool = False) -> np.ndarray | None:
        """Return the screen the env shows where the emulator's is another, else None.

        The reset's (the emulator shows the frame that settled it), or black (see
        :meth:`play`). Not a copy.
        """
        if self._reset_screen is not None:
            return self._reset_screen[1 if grayscale else 0]
        if self._screen_is_black:
            height, width = self.ale.getScreenDims()
            return np.zeros((height, width) if grayscale else (height, width, 3), np.uint8)
        return None

    def shown_ale(self) -> ShownALE:
        """Return the emulator as gymnasium's Atari wrappers read it: its screen is the env's."""
        return ShownALE(self)

    def render(self) -> Any:
        """Return the screen :meth:`get_image` shows for "rgb_array"; see PlangymEnv.

        Through the user's wrappers, when there are any: they may draw on it or collect it.
        """
        if self.render_mode == "rgb_array" and not self._wrappers:
            return self.get_image()
        return super().render()

    def seed(self, seed: int | None = None) -> None:
        """Seed the emulator, the sticky-action generator and the action space; reset."""
        seed = check_seed(seed)
        self._seed_sticky(seed)
        super().seed(seed)
        self._last_action = 0
        self._settle_after_reset()

    def seed_episode(self, seed: int) -> None:
        """Seed every generator, leaving ale-py's where its ``reset(seed=seed)`` leaves it.

        ale-py seeds its generator from a ``SeedSequence`` of the seed, and its resets draw
        nothing from it: seeding it again with the seed itself, as other families are,
        would change what wrappers draw from it (AtariPreprocessing's no-op resets). The
        seeding reset skips the user's wrappers: they draw once, in the reset that follows.
        """
        self.seed_under_wrappers(seed)

    def apply_reset(self, **kwargs: Any) -> tuple:
        """Start a new game; the emulator forgets the last action, and so does plangym."""
        self._last_action = 0
        self._screen_is_black = False
        data = super().apply_reset(**kwargs)
        self._settle_after_reset()
        return data

    def _settle_after_reset(self) -> None:
        """Leave the emulator in the mode it is in after any emulated frame.

        Until it emulates a frame, an ALE that has just reset its game is in a mode that
        its serialized state does not record: a state restored then evolves differently
        from the same state restored in an ALE that has emulated a frame (Qbert diverges
        at once). One frame, undone by restoring the state taken before it, ends that mode
        without changing the game. Its picture stays in the emulator's screen, so the
        reset's is kept to be shown until the next step or restore.
        """
        ale = self.ale
        state = ale.cloneState(include_rng=True)
        self._reset_screen = (ale.getScreenRGB(), ale.getScreenGrayscale())
        ale.act(self._ale_actions[0])
        ale.restoreState(state)

    # Stepping -------------------------------------------------------------------------------
    def play(self, action: Any, dt: int) -> FrameRun:
        """Play ``action`` for ``dt * frameskip`` frames (fewer when the game ends first).

        From a game that is over (lost, or at its frame limit) the ALE plays no frame, and
        its screen is whatever it drew last: after a restore, a screen of another history.
        Such a step shows a black screen instead, the one screen its state determines,
        and counts no step applied (``info["n_step"]`` 0).
        """
        if self._gym_env is None:  # closed, or setup delayed: build as gym_env does
            self.gym_env  # noqa: B018 - builds the emulator
        over = self._screen_is_black = self._ale.game_over()
        self._reset_screen = None
        run = super().play(action, dt)
        return run._replace(n_step=0) if over else run  # a frame sent, none played

    def apply_action(self, action: Any) -> tuple:
        """Advance one emulator frame through the gymnasium env (with sticky actions)."""
        return self.gym_env.step(self._sticky(action))

    def direct_frame(self, action: Any) -> tuple:
        """Play one frame straight on the ALE (sticky actions applied; screen not read)."""
        ale = self._ale
        reward = ale.act(self._ale_actions[self._sticky(action)])
        terminal = self._after_frame(reward) or ale.game_over(with_truncation=False)
        return None, reward, terminal, ale.game_truncated(), None

    def _after_frame(self, reward: float) -> bool:
        """Account for one frame played straight on the ALE; True ends the episode.

        Games that keep their own bookkeeping (Montezuma's rooms) override it.
        """
        return False

    def frame_info(self) -> dict[str, Any]:
        """Return the ALE's frame counters (what its gymnasium env puts in ``info``)."""
        ale = self.ale
        return {
            "episode_frame_number": ale.getEpisodeFrameNumber(),
            "frame_number": ale.getFrameNumber(),
        }

    def observe(self, out: np.ndarray | None = None) -> np.ndarray:
        """Read the observation from the ALE, into ``out`` when given.

        A screen is black after a step from a game that was over (see :meth:`play`).
        """
        ale = self.ale
        read: Callable[..., Any]  # one of the ALE's readers, each with an optional out array
        if self.obs_type == "ram":
            read = ale.getRAM
        elif self.obs_type == "grayscale":
            read = ale.getScreenGrayscale
        else:
            read = ale.getScreenRGB
        if out is None:
            obs = read()
        else:
            read(out)
            obs = out
        if self._screen_is_black and self.obs_type != "ram":
            obs.fill(0)
        return obs

    def run_batch_fast(self, batch: Batch) -> BatchColumns:
        """Step a checked batch, the emulator writing each observation where it is returned.

        See :func:`~plangym.videogames.atari.in_place.step_in_place`; observations that
        cannot go into the rows given take the generic path.
        """
        rows = rows_for(self, batch)
        if rows is None:
            return self.run_batch_generic(batch)
        return step_in_place(self, batch, rows)

    @functools.cached_property
    def _observation_pool(self) -> ObservationPool:
        """The arrays a batch without ``observs_out`` writes its observations into."""
        return ObservationPool()


class AtariPyEnvironment(AtariEnv):
    """plangym 0.1's name for an Atari env run by atari-py: the same game on ale-py now.

    atari-py is gone (ale-py replaced it); this class keeps 0.1 code that names it working,
    with :class:`AtariEnv`'s exact states.
    """

    FAST_PATHS = True
