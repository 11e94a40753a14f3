"""A user's gymnasium env with composite spaces, made plannable as docs/extending.md says.

``Hopscotch-v0``: a stone on a 2-D board, observed as a ``Dict`` (its position and whether it
is on the right half). With ``tuple_actions=True`` an action is a ``Tuple`` (an axis, a
push in [-1, 1]); otherwise a ``Discrete(4)`` move. Each move is blurred by the env's
generator, so a state holds the position, the step count and the generator's words.
"""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium
import numpy as np
from gymnasium import spaces

from plangym.core import PlangymEnv
from plangym.rng import N_WORDS, generator_words, restore_generator
from tests.helpers.frozen_lake_env import check_words

ID = "Hopscotch-v0"
STATE_SIZE = 3 + N_WORDS  # x and y (float64 bits), step count, generator words
MOVES = {0: (0, 1.0), 1: (0, -1.0), 2: (1, 1.0), 3: (1, -1.0)}


class HopscotchGym(gymnasium.Env):
    """The gymnasium env: ends when the stone leaves the 10 x 10 board."""

    metadata: ClassVar[dict] = {"render_modes": ["rgb_array"], "render_fps": 30}

    def __init__(self, tuple_actions: bool = True, render_mode: str | None = None):
        self.render_mode = render_mode
        self.tuple_actions = tuple_actions
        self.observation_space = spaces.Dict(
            {"position": spaces.Box(-10, 10, (2,), np.float64), "right": spaces.Discrete(2)}
        )
        self.action_space: spaces.Space = (
            spaces.Tuple((spaces.Discrete(2), spaces.Box(-1, 1, (1,), np.float32)))
            if tuple_actions
            else spaces.Discrete(4)
        )
        self.position = np.zeros(2)
        self.steps = 0

    def observe(self) -> dict:
        return {"position": self.position.copy(), "right": int(self.position[0] > 0)}

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple:
        super().reset(seed=seed)
        self.position, self.steps = self.np_random.uniform(-1, 1, 2), 0
        return self.observe(), {}

    def step(self, action: Any) -> tuple:
        axis, push = (int(action[0]), float(action[1][0])) if self.tuple_actions else MOVES[action]
        self.position[axis] += push + self.np_random.normal(scale=0.1)
        self.steps += 1
        off_board = bool(np.abs(self.position).max() >= 10)
        return self.observe(), -float(np.abs(self.position).sum()), off_board, False, {}

    def render(self) -> np.ndarray:
        board = np.zeros((20, 20, 3), dtype=np.uint8)
        row, column = np.clip(np.floor(self.position + 10), 0, 19).astype(int)
        board[row, column] = 255
        return board


if ID not in gymnasium.registry:
    gymnasium.register(id=ID, entry_point=HopscotchGym)


class Hopscotch(PlangymEnv):
    """``Hopscotch-v0`` as a plannable env; its observations are dicts, not arrays."""

    def __init__(self, name: str = ID, **kwargs: Any):
        super().__init__(name=name, **kwargs)

    def get_state(self) -> np.ndarray:
        game = self.gym_env.unwrapped
        state = np.zeros(STATE_SIZE, dtype=np.uint64)
        state[:2] = game.position.view(np.uint64)
        state[2] = game.steps
        state[3:] = generator_words(game.np_random)
        return state

    def set_state(self, state: np.ndarray) -> None:
        self.check_state(state)
        game = self.gym_env.unwrapped
        game.position = state[:2].copy().view(np.float64)
        game.steps = int(state[2])
        restore_generator(game.np_random, state[3:])

    def check_state(self, state: Any, name: str = "state") -> None:
        check_words(state, name, STATE_SIZE)
