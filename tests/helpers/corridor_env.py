"""A tiny plannable environment written on top of :class:`plangym.core.PlanEnv`.

The same env is built step by step in ``docs/extending.md``. An agent walks a corridor of
``length`` cells, starting in the middle. Action 0 moves left, 1 moves right, but with
probability ``slip`` a gust of wind moves it one cell in a random direction instead. Reaching
the right end pays +1, the left end -1; both end the episode. After ``max_steps`` steps the
episode is truncated.

The wind is drawn from a NumPy generator, so the state holds the generator words next to the
position and the step counter: one flat ``uint64`` array.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from plangym.core import PlanEnv
from plangym.rng import N_WORDS, generator_words, restore_generator
from plangym.validation import describe, is_integer

STATE_SIZE = 2 + N_WORDS  # position, step counter, generator words


class Corridor(PlanEnv):
    """A windy 1-D corridor; exactly restorable because the state holds the generator."""

    def __init__(
        self,
        name: str = "Corridor",
        length: int = 9,
        *,
        slip: float = 0.2,
        max_steps: int = 100,
        seed: int | None = None,
        frameskip: int = 1,
        autoreset: bool = True,
        delay_setup: bool = False,
        return_image: bool = False,
    ):
        if not is_integer(length) or length < 3:
            raise ValueError(f"length: expected an integer >= 3, received {describe(length)}")
        self.length = int(length)
        self.slip = float(slip)
        self.max_steps = int(max_steps)
        self.seed = seed
        self._wind: np.random.Generator | None = None
        self._position = self.length // 2
        self._t = 0
        super().__init__(
            name=name,
            frameskip=frameskip,
            autoreset=autoreset,
            delay_setup=delay_setup,
            return_image=return_image,
        )

    def setup(self) -> None:
        self._wind = np.random.default_rng(self.seed)
        self._actions = np.random.default_rng(None if self.seed is None else self.seed + 1)

    @property
    def obs_shape(self) -> tuple[int, ...]:
        return (self.length,)

    @property
    def action_shape(self) -> tuple[int, ...]:
        return ()

    def sample_action(self) -> int:
        return int(self._actions.integers(2))

    def get_state(self) -> np.ndarray:
        state = np.zeros(STATE_SIZE, dtype=np.uint64)
        state[0], state[1] = self._position, self._t
        state[2:] = generator_words(self._wind)
        return state

    def set_state(self, state: np.ndarray) -> None:
        self.check_state(state)
        self._position, self._t = int(state[0]), int(state[1])
        restore_generator(self._wind, state[2:])

    def apply_reset(self, **kwargs: Any) -> tuple[np.ndarray, dict]:
        self._position, self._t = self.length // 2, 0
        return self._observe(), {}

    def apply_action(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        move = 1 if action == 1 else -1
        if self._wind.random() < self.slip:
            move = int(self._wind.choice([-1, 1]))
        self._position = min(max(self._position + move, 0), self.length - 1)
        self._t += 1
        at_right, at_left = self._position == self.length - 1, self._position == 0
        reward = 1.0 if at_right else -1.0 if at_left else 0.0
        truncated = self._t >= self.max_steps
        return self._observe(), reward, at_left or at_right, truncated, {"position": self._position}

    def get_image(self) -> np.ndarray:
        image = np.full((1, self.length, 3), 255, dtype=np.uint8)
        image[0, self._position] = (255, 0, 0)
        return image

    def check_action(self, action: Any, name: str = "action") -> None:
        if not is_integer(action):
            raise TypeError(f"{name}: expected 0 (left) or 1 (right), received {describe(action)}")
        if int(action) not in (0, 1):
            raise ValueError(f"{name}: expected 0 (left) or 1 (right), received {int(action)}")

    def check_state(self, state: Any, name: str = "state") -> None:
        if not isinstance(state, np.ndarray):
            raise TypeError(
                f"{name}: expected a uint64 array of shape ({STATE_SIZE},), "
                f"received {describe(state)}"
            )
        if state.dtype != np.uint64 or state.shape != (STATE_SIZE,):
            raise ValueError(
                f"{name}: expected a uint64 array of shape ({STATE_SIZE},), "
                f"received {describe(state)}"
            )
        if int(state[0]) >= self.length:
            raise ValueError(
                f"{name}: expected a position in [0, {self.length}), received {int(state[0])}"
            )

    def _observe(self) -> np.ndarray:
        obs = np.zeros(self.length, dtype=np.float32)
        obs[self._position] = 1.0
        return obs


class OldGymCorridor(Corridor):
    """The same corridor written for the old gym API: ``apply_action`` returns 4 values."""

    def apply_action(self, action: int) -> tuple[np.ndarray, float, bool, dict]:
        obs, reward, terminal, truncated, info = super().apply_action(action)
        info["TimeLimit.truncated"] = truncated
        return obs, reward, terminal or truncated, info


class PositionCorridor(Corridor):
    """The corridor observed as its position alone: a 0-d float64 array each step."""

    @property
    def obs_shape(self) -> tuple[int, ...]:
        return ()

    def _observe(self) -> np.ndarray:
        return np.array(float(self._position))
