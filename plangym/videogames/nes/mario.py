"""Super Mario Bros (and the Lost Levels) from gym-super-mario-bros: :class:`MarioEnv`.

>>> env = MarioEnv("SuperMarioBros-1-1-v0", obs_type="coords", frameskip=4)
>>> state, obs, info = env.reset()
>>> [int(v) for v in obs[:4]], env.movement_type
([40, 79, 1, 1], 'simple')
"""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium as gym
import numpy as np

from plangym.constructor import read_only
from plangym.validation import check_flag, check_seed
from plangym.videogames.nes.env import NesEnv, nes_import
from plangym.videogames.nes.joypad import COMPLEX_MOVEMENT, RIGHT_ONLY, SIMPLE_MOVEMENT, JoypadSpace
from plangym.videogames.nes.state import N_STAGES, NO_STAGE

# Mario's RAM: lives left minus one (0xFF once the game is over), the page and the pixel
# of his horizontal position (the fork's x_pos drops the page, so it wraps at 256).
_LIVES, _X_PAGE, _X_PIXEL, _SCREEN_LEFT = 0x075A, 0x006D, 0x0086, 0x071C
# Observation of obs_type="coords": these info entries, in this order.
COORDS_KEYS = ("x_pos", "y_pos", "world", "stage", "life", "flag_get", "coins")


class MarioEnv(NesEnv):
    """Super Mario Bros (and the Lost Levels) from gym-super-mario-bros.

    Args:
        name: A gym-super-mario-bros id: "SuperMarioBros-v0", "SuperMarioBros-1-1-v0",
            "SuperMarioBros2-v0", "SuperMarioBrosRandomStages-v0", ...
        movement_type: "right" (5 actions), "simple" (7) or "complex" (12). plangym 0.1
            used the 12 complex ones whatever this said.
        original_reward: Use gym-super-mario-bros's reward (x progress, clock, death).
            False: plangym 0.1's score ``25000 * world + 5000 * stage + x_pos
            + 10 * in_pipe + 100 * flag_get``, with the true x position.
        obs_type: "rgb", "grayscale", "ram" or "coords" (``COORDS_KEYS`` of the info).
        kwargs: Passed to :class:`NesEnv` (frameskip, episodic_life, ...).

    ``info["x_pos"]`` is Mario's true position in the level (the fork wraps it at 256).
    The game ends when the env's id says it does: at a death or the flag for a single
    stage, at game over for the whole game (``episodic_life=True``: at any lost life).
    """

    FAST_PATHS = True
    COORDS_KEYS = COORDS_KEYS
    AVAILABLE_OBS_TYPES = frozenset({"coords", "rgb", "grayscale", "ram"})
    MOVEMENTS: ClassVar[dict[str, list[list[str]]]] = {
        "complex": COMPLEX_MOVEMENT,
        "simple": SIMPLE_MOVEMENT,
        "right": RIGHT_ONLY,
    }

    def __init__(
        self,
        name: str,
        movement_type: str = "simple",
        original_reward: bool = False,
        **kwargs: Any,
    ):
        if movement_type not in self.MOVEMENTS:
            raise ValueError(
                f"movement_type: expected one of {sorted(self.MOVEMENTS)}, "
                f"received {movement_type!r}"
            )
        self._movement_type = movement_type
        self._original_reward = check_flag("original_reward", original_reward)
        super().__init__(name=name, **kwargs)

    movement_type = read_only(
        "_movement_type",
        'Which button combinations the actions are: "right", "simple" or "complex".',
    )

    original_reward = read_only(
        "_original_reward", "Whether rewards are gym-super-mario-bros's own."
    )

    @property
    def random_stages(self) -> bool:
        """Whether each game plays a random stage."""
        return "RandomStages" in self.name

    def build_emulator(self, stage: int) -> Any:
        """Build the Mario env of this id (of ``stage`` for random-stage ids)."""
        smb = nes_import("gym_super_mario_bros")
        from gym.envs.registration import spec  # the fork's gym, where smb registers ids

        try:
            kwargs = dict(spec(self.name)._kwargs)
        except Exception as error:
            raise ValueError(
                f"name: expected a gym-super-mario-bros id such as 'SuperMarioBros-1-1-v0', "
                f"received {self.name!r}"
            ) from error
        kwargs.update(self._gym_env_kwargs)
        if stage != NO_STAGE:
            kwargs.pop("stages", None)
            kwargs["target"] = (stage // 4 + 1, stage % 4 + 1)
        return smb.SuperMarioBrosEnv(**kwargs)

    def first_stage(self) -> int:
        """Return the stage of a new game, drawn by plangym for random-stage ids."""
        if not self.random_stages:
            return NO_STAGE
        return int(self._stage_rng.integers(N_STAGES))

    def seed(self, seed: int | None = None) -> None:
        """Seed the stage draw and the action space, and start a new game."""
        seed = check_seed(seed)
        self._stage_rng = np.random.default_rng(seed)
        super().seed(seed)

    def action_bytes(self) -> list[int]:
        """Return the controller byte of each action of :attr:`movement_type`."""
        return [JoypadSpace.byte(buttons) for buttons in self.MOVEMENTS[self.movement_type]]

    def wrap_actions(self, base: gym.Env) -> gym.Env:
        """Discrete actions over the button combinations of :attr:`movement_type`."""
        return JoypadSpace(base, self.MOVEMENTS[self.movement_type])

    def get_action_meanings(self) -> list[str]:
        """Return the buttons each action presses."""
        return [" ".join(buttons) for buttons in self.MOVEMENTS[self.movement_type]]

    def lives(self) -> int:
        """Lives left: 0 once the game is over."""
        return (int(self.nes_env.ram[_LIVES]) + 1) & 0xFF

    def x_position(self) -> int:
        """Mario's true horizontal position in the level (page * 256 + pixel)."""
        ram = self.nes_env.ram
        return int(ram[_X_PAGE]) * 256 + int(ram[_X_PIXEL])

    def left_x_position(self) -> int:
        """Mario's distance in pixels from the left edge of the screen."""
        ram = self.nes_env.ram
        # Python ints: the fork's uint64 arithmetic warns when the difference wraps.
        return (int(ram[_X_PIXEL]) - int(ram[_SCREEN_LEFT])) % 256

    def describe_step(self) -> dict[str, Any]:
        """gym-super-mario-bros's info with the true x_pos, plus plangym 0.1's entries."""
        mario = self.nes_env
        info = mario._get_info()
        info["x_pos"] = self.x_position()
        player_state = int(mario._player_state)
        info.update(
            {
                "life": int(info["life"]),
                "world": int(info["world"]),
                "stage": int(info["stage"]),
                "y_pos": int(info["y_pos"]),
                "player_state": player_state,
                "area": int(mario._area),
                "left_x_position": self.left_x_position(),
                "is_stage_over": bool(mario._is_stage_over),
                "is_dying": bool(mario._is_dying),
                "is_dead": bool(mario._is_dead),
                "y_pixel": int(mario._y_pixel),
                "y_viewport": int(mario._y_viewport),
                "x_position_last": int(mario._x_position_last),
                "in_pipe": player_state in (0x02, 0x03),
            }
        )
        info.update(super().describe_step())
        return info

    def coords(self) -> np.ndarray:
        """Mario's x, y, world, stage, life, flag and coins (``COORDS_KEYS``)."""
        info = self.describe_step()
        return np.array([int(info[key]) for key in COORDS_KEYS], dtype=np.int64)

    def step_reward(self, reward: float, info: dict[str, Any]) -> float:
        """Return the frames' summed reward, or plangym 0.1's position score."""
        if self._original_reward:
            return reward
        return float(
            25000 * info["world"]
            + 5000 * info["stage"]
            + info["x_pos"]
            + 10 * int(info["in_pipe"])
            + 100 * int(info["flag_get"])
        )

    # plangym 0.1's hooks. The step already does what they did (they are skipped while
    # stepping MarioEnv itself; a subclass that does not declare FAST_PATHS calls them,
    # and they then return what they receive).
    def get_coords_obs(
        self,
        obs: np.ndarray,
        info: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> np.ndarray:
        """Return ``obs``, or for obs_type="coords" the ``COORDS_KEYS`` entries of ``info``.

        Without an info (or with an empty one) the coordinates are read from the emulator.
        """
        if self.obs_type != "coords":
            return obs
        if not info:
            return self.coords()
        return np.array([int(info.get(key, 0)) for key in COORDS_KEYS], dtype=np.int64)

    def process_reward(
        self, reward: float, info: dict[str, Any] | None = None, **kwargs: Any
    ) -> float:
        """Return ``reward``, or plangym 0.1's position score of ``info`` (missing keys: 0)."""
        if self._original_reward:
            return reward
        info = info or {}
        return float(
            25000 * int(info.get("world", 0))
            + 5000 * int(info.get("stage", 0))
            + int(info.get("x_pos", 0))
            + 10 * int(bool(info.get("in_pipe", False)))
            + 100 * int(bool(info.get("flag_get", False)))
        )

    def process_terminal(
        self, terminal: bool, info: dict[str, Any] | None = None, **kwargs: Any
    ) -> bool:
        """Return ``terminal``, also True when a single stage's Mario is dying or dead.

        plangym 0.1 ended every game at Mario's death. Here a whole game ends at game
        over (``episodic_life=True``: at a lost life), so ``info`` ends single stages only,
        which the step had already ended.
        """
        info = info or {}
        dying = bool(info.get("is_dying", False) or info.get("is_dead", False))
        if not terminal and dying and self.nes_env.is_single_stage_env:
            return True
        return terminal
