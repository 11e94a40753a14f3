"""The NES controller: button combinations as discrete actions (:class:`JoypadSpace`).

The action lists are gym-super-mario-bros's, which plangym 0.1 exported from
``plangym.videogames.nes`` (they are importable from there too).

>>> len(RIGHT_ONLY), len(SIMPLE_MOVEMENT), len(COMPLEX_MOVEMENT)
(5, 7, 12)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import gymnasium as gym
from gymnasium.spaces import Discrete

# Button lists of gym-super-mario-bros (plangym 0.1 exported the same names).
RIGHT_ONLY = [
    ["NOOP"],
    ["right"],
    ["right", "A"],
    ["right", "B"],
    ["right", "A", "B"],
]
SIMPLE_MOVEMENT = [*RIGHT_ONLY, ["A"], ["left"]]
COMPLEX_MOVEMENT = [
    *SIMPLE_MOVEMENT,
    ["left", "A"],
    ["left", "B"],
    ["left", "A", "B"],
    ["down"],
    ["up"],
]

# Bit of each button in the byte the NES controller reads.
BUTTONS = {
    "right": 0b10000000,
    "left": 0b01000000,
    "down": 0b00100000,
    "up": 0b00010000,
    "start": 0b00001000,
    "select": 0b00000100,
    "B": 0b00000010,
    "A": 0b00000001,
    "NOOP": 0b00000000,
}


class JoypadSpace(gym.ActionWrapper):
    """Map a discrete action to a controller byte from a list of button combinations.

    >>> JoypadSpace.byte(["right", "A"]), JoypadSpace.buttons()[:2]
    (129, ['right', 'left'])
    """

    def __init__(self, env: gym.Env, actions: Sequence[Sequence[str]]):
        super().__init__(env)
        self.action_space = Discrete(len(actions))
        self._bytes = [self.byte(buttons) for buttons in actions]
        self._meanings = [" ".join(buttons) for buttons in actions]

    @classmethod
    def buttons(cls) -> list[str]:
        """Names of the buttons a combination may hold."""
        return list(BUTTONS)

    @staticmethod
    def byte(buttons: Iterable[str]) -> int:
        """Return the controller byte pressing ``buttons``."""
        value = 0
        for button in buttons:
            if button not in BUTTONS:
                raise ValueError(
                    f"buttons: expected names from {list(BUTTONS)}, received {button!r}"
                )
            value |= BUTTONS[button]
        return value

    @property
    def action_bytes(self) -> list[int]:
        """Controller byte of each discrete action."""
        return list(self._bytes)

    def action(self, action: Any) -> int:
        """Return the controller byte of ``action``."""
        return self._bytes[int(action)]

    def get_keys_to_action(self) -> dict[tuple[int, ...], int]:
        """Return the keyboard keys (sorted character codes) that play each action.

        The keys of each controller byte are the unwrapped env's (nes-py's: d a s w for
        the pad, Enter and Space for start and select, p and o for B and A).
        """
        unwrapped: Any = self.env.unwrapped
        keys_of_byte = {byte: keys for keys, byte in unwrapped.get_keys_to_action().items()}
        return {keys_of_byte[byte]: action for action, byte in enumerate(self._bytes)}

    def get_action_meanings(self) -> list[str]:
        """Return the buttons of each action, as text."""
        return list(self._meanings)
