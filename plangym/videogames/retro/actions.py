"""Small discrete action sets for stable-retro games: :class:`ActionDiscretizer`.

>>> len(SONIC_ACTIONS), SONIC_ACTIONS[5]
(7, ('DOWN', 'B'))
"""

from __future__ import annotations

from collections.abc import Sequence

import gymnasium as gym
import numpy as np
from gymnasium import spaces

GENESIS_BUTTONS = ("B", "A", "MODE", "START", "UP", "DOWN", "LEFT", "RIGHT", "C", "Y", "X", "Z")
SONIC_ACTIONS = (
    ("LEFT",),
    ("RIGHT",),
    ("LEFT", "DOWN"),
    ("RIGHT", "DOWN"),
    ("DOWN",),
    ("DOWN", "B"),
    ("B",),
)


class ActionDiscretizer(gym.ActionWrapper):
    """Give a stable-retro env a small discrete action set: each action presses some buttons.

    Args:
        env: A stable-retro env (possibly wrapped) built with a MultiBinary action space,
            or a RetroEnv's default Discrete one: the wrapper then drives the buttons.
        actions: One list of button names per action (the console's names, e.g.
            ``["LEFT", "B"]``); the default is plangym 0.1's seven Sonic actions.

    Use it as ``RetroEnv(name, wrappers=[ActionDiscretizer])`` or with
    ``(ActionDiscretizer, {"actions": [["LEFT"], ["RIGHT", "B"]]})``.
    """

    def __init__(self, env: gym.Env, actions: Sequence[Sequence[str]] | None = None):
        super().__init__(env)
        unwrapped = env.unwrapped
        buttons = list(getattr(unwrapped, "buttons", GENESIS_BUTTONS))
        actions = SONIC_ACTIONS if actions is None else actions
        masks = []
        for i, combo in enumerate(actions):
            unknown = [button for button in combo if button not in buttons]
            if unknown:
                raise ValueError(
                    f"actions[{i}]: expected button names among {buttons}, received {unknown}"
                )
            mask = np.zeros(len(buttons), dtype=np.uint8)
            mask[[buttons.index(button) for button in combo]] = 1
            masks.append(mask)
        if not masks:
            raise ValueError("actions: expected at least one list of buttons, received none")
        if not isinstance(env.action_space, spaces.MultiBinary):
            raise TypeError(
                "env: expected a stable-retro env with button actions (MultiBinary, "
                f"use_restricted_actions=FILTERED), received {env.action_space}"
            )
        self._actions = masks
        self.action_space = spaces.Discrete(len(masks))

    def action(self, a: int) -> np.ndarray:  # 0.1's parameter name (gymnasium: action)
        """Return the button mask of discrete action ``a``."""
        return self._actions[int(a)].copy()
