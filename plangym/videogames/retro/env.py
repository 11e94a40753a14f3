"""Console games through stable-retro (Genesis, SNES, NES, Game Boy, ...), exactly restorable.

A state is the emulator's save state plus a header naming the game, as a uint8 vector with
value semantics. The emulator's save state is about 1 MB, mostly zero bytes: plangym keeps
only its 256-byte pages that hold a non-zero byte (about 50 KB for Airstriker), which costs
a few percent of a step where zlib would cost most of one (see ``docs/retro.md``). After
restoring the emulator plangym refreshes the game's variables from its RAM
(``data.update_ram()``), without which the first reward after a restore is measured against
the RAM the emulator had before.

stable-retro runs **one emulator per process**: a second ``RetroEnv`` in a process whose
first one is still open raises a RuntimeError saying so. ``plangym.make(name, n_workers=N)``
runs one emulator in each worker process and none in the caller's.

Only ``Airstriker-Genesis-v0`` ships with its ROM; import your own with
``python -m stable_retro.import DIRECTORY``. Examples live in ``docs/retro.md``: building
an emulator in a module docstring would claim this process's only emulator for every other
doctest run after it.
"""

from __future__ import annotations

import gc
import json
import os
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from plangym.constructor import read_only, takes_parameters_of
from plangym.extras import require
from plangym.utils import to_grayscale
from plangym.utils.display import refuse_window_without_display
from plangym.videogames.env import VideogameEnv, check_uint8_vector, render_mode_of
from plangym.videogames.retro.actions import ActionDiscretizer
from plangym.videogames.retro.slot import claim_emulator, release_emulator
from plangym.videogames.retro.state import (
    decode_state,
    encode_state,
    find_ignored_pointers,
    find_written_bytes,
    state_problem,
)

retro = require("stable_retro", extra="retro", family="Retro")


class RetroEnv(VideogameEnv):
    """A stable-retro game, plannable and exactly restorable.

    Args:
        name: A stable-retro game ("Airstriker-Genesis-v0"; plangym 0.1's
            "Airstriker-Genesis" works too).
        frameskip: Emulator frames per agent step.
        episodic_life: End the episode as soon as a life is lost (needs a "lives" variable
            in the game's data).
        autoreset: Reset after an episode ends.
        delay_setup: Build the emulator later, in :meth:`setup`.
        remove_time_limit: Accepted for plangym 0.1 compatibility: stable-retro has no
            time limit to remove.
        obs_type: "rgb" (the screen), "grayscale" or "ram" (the game's RAM).
        render_mode: None, "human" or "rgb_array".
        wrappers: gymnasium wrappers (e.g. :class:`ActionDiscretizer`). With wrappers every
            frame goes through ``gym_env.step``; without them frames go straight to the
            emulator (faster, same results).
        state: A save state of the game to start episodes from (its name, e.g. "Level1");
            None is the game's default.
        return_image: Add ``info["rgb"]`` to every step.
        kwargs: Passed to ``stable_retro.make`` (``scenario``, ``info``, ``players``,
            ``inttype``, ``use_restricted_actions``, ...). The default action space is
            stable-retro's ``Actions.DISCRETE`` (every valid button combination), so
            planners can sample it; plangym 0.1 used stable-retro's ``MultiBinary``.
    """

    FAST_PATHS = True
    AVAILABLE_OBS_TYPES = frozenset({"rgb", "grayscale", "ram"})
    AVAILABLE_RENDER_MODES = frozenset({"human", "rgb_array", None})
    SINGLETON = True
    # States hold the emulator alone: no room for a TimeLimit wrapper's count, and the
    # games have no episode limit of their own to use instead.
    TIME_LIMIT_IN_STATE = False
    TIME_LIMIT_ADVICE = "count the steps in your own loop instead"

    @takes_parameters_of(VideogameEnv.__init__)
    def __init__(self, *args: Any, state: str | None = None, **kwargs: Any):
        # The game is checked before anything is built: name is the first parameter.
        self._game = resolve_game(args[0] if args else kwargs.get("name"))
        self._save_state = check_save_state(self._game, state, kwargs.get("inttype"))
        check_not_scripted(self._game, kwargs.get("scenario"), kwargs.get("inttype"))
        refuse_window_without_display(render_mode_of(args, kwargs))  # pyglet's, when built
        super().__init__(*args, **kwargs)

    # Properties -----------------------------------------------------------------------------
    game = read_only("_game", 'stable-retro\'s name of the game ("Airstriker-Genesis-v0").')

    save_state = read_only(
        "_save_state", "The save state episodes start from (None: the game's default)."
    )

    @property
    def retro_env(self) -> Any:
        """The stable-retro env under any wrappers."""
        return self._built().unwrapped

    @property
    def em(self) -> Any:
        """The stable-retro emulator."""
        return self.retro_env.em

    @property
    def data(self) -> Any:
        """The game's variables, reward and end conditions (stable-retro's ``GameData``)."""
        return self.retro_env.data

    def _built(self) -> gym.Env:
        """Return the gymnasium env; a singleton is never built behind the caller's back."""
        if self._gym_env is None:
            raise RuntimeError(
                f"{self.name}: the emulator is not built; call setup() first "
                "(delay_setup=True, or after close())"
            )
        return self._gym_env

    # Setup ----------------------------------------------------------------------------------
    def init_gym_env(self) -> gym.Env:
        """Build the stable-retro env, refusing a second emulator in this process."""
        claim_emulator(self)
        # Planners sample Discrete spaces; ActionDiscretizer needs the buttons themselves.
        discretized = any(
            (item[0] if isinstance(item, tuple) else item) is ActionDiscretizer
            for item in self._wrappers or ()
        )
        default = retro.Actions.FILTERED if discretized else retro.Actions.DISCRETE
        kwargs = {"use_restricted_actions": default}
        kwargs.update(self._gym_env_kwargs)
        if self._save_state is not None:
            kwargs["state"] = self._save_state
        kwargs["obs_type"] = (
            retro.Observations.RAM if self.obs_type == "ram" else retro.Observations.IMAGE
        )
        # stable-retro draws only for "human"; plangym reads the screen itself otherwise.
        kwargs["render_mode"] = "human" if self.render_mode == "human" else None
        try:
            gym_env = retro.make(self._game, **kwargs)
        except BaseException:
            release_emulator(self)
            raise
        gym_env.reset()
        return gym_env

    def setup(self) -> None:
        """Build the emulator and remember the size of its save states.

        A built env closes its emulator first and builds a new one, as in plangym 0.1:
        stable-retro allows one per process.
        """
        if self._gym_env is not None:
            self.close()
        super().setup()
        unwrapped = self.retro_env
        if self.obs_type == "grayscale":
            shape = self._built().observation_space.shape
            assert shape is not None, "stable-retro's screens are Box spaces"
            height, width = shape[:2]
            self._obs_space = spaces.Box(0, 255, shape=(height, width), dtype=np.uint8)
        self._raw_size = len(unwrapped.em.get_state())
        content_size, gaps = find_written_bytes(unwrapped.em)
        pointers = find_ignored_pointers(unwrapped.em, content_size)
        self._content_size = content_size
        self._volatile = np.union1d(gaps, pointers)
        unwrapped.data.update_ram()
        self._has_lives = "lives" in unwrapped.data.list_variables()

    def reset(
        self, return_state: bool = True, seed: int | None = None, options: dict | None = None
    ) -> tuple:
        """Start a new episode (see :meth:`PlanEnv.reset`).

        An env whose emulator is not built (``delay_setup=True``, or closed) builds it
        first, as plangym 0.1's ``reset`` did; nothing else builds it behind your back.
        """
        if self._gym_env is None:
            self.setup()
        return super().reset(return_state=return_state, seed=seed, options=options)

    def close(self) -> None:
        """Release the emulator (and this process's emulator slot)."""
        gym_env = getattr(self, "_gym_env", None)
        if gym_env is None:
            return
        self._gym_env = None
        gym_env.close()
        del gym_env
        gc.collect()  # the emulator goes only when nothing refers to it any more
        release_emulator(self)

    @staticmethod
    def get_win_condition(info: dict[str, Any]) -> bool:
        """Tell whether a step's ``info`` says the end of the level's screen was reached.

        plangym 0.1's test for games whose data has ``x``/``screen_x`` and ``screen_x_end``
        variables; False when the game has none of them.

        >>> RetroEnv.get_win_condition({"x": 10, "screen_x_end": 8})
        True
        """
        end = info.get("screen_x_end", 1e6)
        return info.get("x", 0) >= end or info.get("screen_x", 0) >= end

    # Emulator access ------------------------------------------------------------------------
    def lives(self) -> int:
        """Lives left according to the game's "lives" variable (-1 without one)."""
        if not self._has_lives:
            return -1
        return int(self.data.lookup_value("lives"))

    def get_ram(self) -> np.ndarray:
        """Return the game's RAM as a uint8 vector (64 KB on the Genesis)."""
        return self.retro_env.get_ram()

    def get_image(self) -> np.ndarray:
        """Return the screen as an RGB array, in any render mode (an emulator's screen)."""
        return self.retro_env.get_screen(apply_rotation=True)

    def render(self) -> Any:
        """Return the screen for "rgb_array" (stable-retro is built without it: see setup)."""
        if self.render_mode == "rgb_array":
            return self.get_image()
        return super().render()

    def get_state(self) -> np.ndarray:
        """Return the emulator's save state (its non-zero pages) with a header, as uint8."""
        raw = np.frombuffer(self.em.get_state(), dtype=np.uint8)[: self._content_size].copy()
        # Bytes the save leaves as memory held them, or addresses in this process.
        raw[self._volatile] = 0
        return encode_state(raw, self._game, self._raw_size)

    def set_state(self, state: np.ndarray) -> None:
        """Restore a state returned by :meth:`get_state`."""
        state = self.thawed_state(state)
        self.check_state(state)
        self.em.set_state(decode_state(state))
        # The game's variables are read from RAM: without this the next reward would be the
        # difference between the new RAM and the RAM before the restore.
        self.data.update_ram()

    def check_state(self, state: Any, name: str = "state") -> None:
        """Raise unless ``state`` is a state of this game, from :meth:`get_state`."""
        check_uint8_vector(state, name, self._game)
        self._built()
        problem = state_problem(state, self._game, self._raw_size)
        if problem:
            raise ValueError(f"{name}: expected a state of {self._game}, received {problem}")

    # Stepping -------------------------------------------------------------------------------
    def step_hooks_are_identity(self) -> bool:
        """Say whether hooks are identities: they are unless frames turn grayscale."""
        return self.has_fast_paths() and self.obs_type != "grayscale"

    def process_obs(self, obs: np.ndarray, **kwargs: Any) -> np.ndarray:
        """Return the emulator's observation, in grayscale when asked."""
        if self.obs_type == "grayscale" and obs.ndim == 3:
            return to_grayscale(obs)
        return obs

    def apply_action(self, action: Any) -> tuple:
        """Advance one emulator frame through the gymnasium env."""
        return self.gym_env.step(action)

    def sends_frames_directly(self) -> bool:
        """Frames skip ``gym_env.step`` unless wrappers, a window or a movie must see them."""
        return (
            super().sends_frames_directly()
            and self.render_mode != "human"
            and not self.retro_env.movie
        )

    def direct_frame(self, action: Any) -> tuple:
        """Do what stable-retro's ``step`` does for one frame, without reading the screen."""
        unwrapped = self.retro_env
        em, data = unwrapped.em, unwrapped.data
        for player, mask in enumerate(unwrapped.action_to_array(action)):
            em.set_button_mask(mask, player)
        em.step()
        data.update_ram()
        return None, data.current_reward(), bool(data.is_done()), False, None

    def observe(self, out: np.ndarray | None = None) -> np.ndarray:
        """Read the RAM or the screen (``out`` unused: stable-retro returns new arrays)."""
        unwrapped = self.retro_env
        if self.obs_type == "ram":
            return unwrapped.get_ram()
        return unwrapped.get_screen(apply_rotation=True)

    def frame_info(self) -> dict[str, Any]:
        """Return the game's variables, read from its RAM."""
        return dict(self.data.lookup_all())


def resolve_game(name: Any) -> str:
    """Return stable-retro's name for ``name`` ("Airstriker-Genesis" gets its "-v0").

    >>> resolve_game("Airstriker-Genesis")
    'Airstriker-Genesis-v0'
    >>> resolve_game("Airstriker-Genesis-v1")
    Traceback (most recent call last):
    ...
    ValueError: name: expected a stable-retro game, received 'Airstriker-Genesis-v1' ...
    """
    if not isinstance(name, str):
        raise TypeError(f"name: expected a stable-retro game name (str), received {name!r}")
    games = set(retro.data.list_games(retro.data.Integrations.ALL))
    for candidate in (name, f"{name}-v0"):
        if candidate in games:
            return candidate
    raise ValueError(
        f"name: expected a stable-retro game, received {name!r} (stable_retro.data."
        "list_games() lists them; only Airstriker-Genesis-v0 ships with its ROM)"
    )


def check_save_state(game: str, state: Any, inttype: Any = None) -> Any:
    """Return ``state`` if it names a save state of ``game`` (or is None or a ``retro.State``).

    >>> check_save_state("Airstriker-Genesis-v0", "Level1")
    'Level1'
    """
    if state is None or isinstance(state, retro.State):
        return state
    inttype = retro.data.Integrations.ALL if inttype is None else inttype
    if isinstance(state, str):
        file = state if state.endswith(".state") else f"{state}.state"
        if os.path.isabs(file) and os.path.exists(file):
            return state
        path = retro.data.get_file_path(game, file, inttype)
        if path and os.path.exists(path):
            return state
    raise ValueError(
        f"state: expected None or one of {game}'s save states "
        f"{retro.data.list_states(game, inttype)}, received {state!r}"
    )


def check_not_scripted(game: str, scenario: str | None = None, inttype: Any = None) -> None:
    """Refuse games whose scenario runs a Lua script: its variables live outside the state.

    stable-retro's Lua scenarios (53 games, most of them contributed integrations) keep
    their own counters in the Lua interpreter, which no save state holds, so replay from a
    restored state could differ.

    >>> check_not_scripted("Airstriker-Genesis-v0")
    """
    inttype = retro.data.Integrations.ALL if inttype is None else inttype
    scenario = "scenario" if scenario is None else scenario
    if not isinstance(scenario, str):
        raise TypeError(
            f"scenario: expected None, a scenario name or a .json path, received {scenario!r}"
        )
    path = (
        scenario
        if scenario.endswith(".json")
        else retro.data.get_file_path(game, f"{scenario}.json", inttype)
    )
    if not path or not os.path.exists(path):
        if scenario == "scenario":
            return  # no default scenario: stable-retro's defaults apply
        folder = os.path.dirname(retro.data.get_file_path(game, "data.json", inttype) or "")
        found = sorted(
            name[:-5]
            for name in (os.listdir(folder) if folder else ())
            if name.endswith(".json") and name not in ("data.json", "metadata.json")
        )
        raise ValueError(
            f"scenario: expected one of {game}'s scenarios {found} or the path of a .json "
            f"scenario file, received {scenario!r}"
        )
    with open(path) as file:
        text = file.read()
    if "lua:" in text or '"scripts"' in json.dumps(json.loads(text)):
        raise ValueError(
            f"name: {game}'s scenario ({os.path.basename(path)}) runs a Lua script, whose "
            "state no emulator save state holds, so plangym cannot restore it exactly; "
            "pass a scenario file without 'scripts' (plangym.make(name, scenario=PATH))"
        )
