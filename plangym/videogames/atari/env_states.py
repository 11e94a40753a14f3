"""How an Atari env reads and restores its states, through its state codec.

:class:`AtariStates` is the state part of :class:`~plangym.videogames.atari.AtariEnv`: the
codec (:mod:`plangym.videogames.atari.state`) turns the ALE's serialization, the last
action and the sticky-action generator (:mod:`~plangym.videogames.atari.sticky`) into one
uint8 vector of one length per env, and back.
"""

from __future__ import annotations

from typing import Any

import ale_py
import numpy as np

from plangym.rng import GeneratorWords
from plangym.videogames.atari.state import StateCodec
from plangym.videogames.env import check_uint8_vector


class AtariStates:
    """``get_state``, ``set_state`` and their checks; :meth:`AtariEnv.setup` sets the fields."""

    _ale: ale_py.ALEInterface  # the emulator, once built
    _codec: StateCodec
    _lossy_save: bool  # the cartridge's saves round part of its state
    _action_numbers: list[int]  # the ALE's number of each action of the env's set
    _action_index: dict[int, int]  # and back
    _sticky_rng: np.random.Generator
    _sticky_words: GeneratorWords
    _last_action: int
    _screen_is_black: bool
    _reset_screen: tuple[np.ndarray, np.ndarray] | None
    clone_seeds: bool
    name: str

    def get_state(self) -> np.ndarray:
        """Return the emulator state plus the sticky-action bookkeeping, as uint8."""
        env: Any = self  # an AtariEnv: its ale property builds the emulator when delayed
        ale = env.ale
        ale_bytes = ale.cloneState(include_rng=self.clone_seeds).serialize()
        if self._lossy_save:
            # Continue from exactly what the state says, as a restored copy would.
            ale.restoreState(ale_py.ALEState(ale_bytes))
        words = self._sticky_words.read(self._sticky_rng)
        last_action = self._action_numbers[self._last_action]
        return self._codec.encode(self._state_prefix(), ale_bytes, last_action, words)

    def _state_prefix(self) -> bytes:
        """Bytes a subclass puts before the Atari state (its own bookkeeping)."""
        return b""

    def set_state(self, state: np.ndarray) -> None:
        """Restore a state returned by :meth:`get_state`."""
        env: Any = self  # an AtariEnv: thawed_state is PlanEnv's
        state = env.thawed_state(state)
        self.check_state(state)
        self._set_checked_state(state)

    def _set_checked_state(self, state: np.ndarray) -> None:
        """Restore the emulator and the sticky-action bookkeeping from a checked state."""
        ale_bytes, last_action, words = self._codec.decode(state)
        try:
            self._ale.restoreState(ale_py.ALEState(ale_bytes))  # checked: the env is built
        except (SystemError, RuntimeError, ValueError) as error:  # what the ALE raises
            raise ValueError(
                f"state: the ALE could not load this state of {self.name} (corrupt bytes); "
                "until the next reset or set_state the emulator is in an undefined state"
            ) from error
        self._last_action = self._action_index[last_action]
        self._sticky_words.write(self._sticky_rng, words)
        # The emulator shows the last frame it drew, as gymnasium's render() does too.
        self._screen_is_black = False
        self._reset_screen = None

    def check_state(self, state: Any, name: str = "state") -> None:
        """Raise unless ``state`` is a state of this game."""
        check_uint8_vector(state, name, self.name)
        env: Any = self  # an AtariEnv: gym_env is PlangymEnv's
        env.gym_env  # noqa: B018 - builds the emulator when setup was delayed
        self._codec.check(state, name)

    def ale_bytes(self, state: np.ndarray) -> bytes:
        """Return the ALE's own serialization inside ``state`` (what ``ale_py.ALEState`` reads).

        >>> from plangym.videogames.atari import AtariEnv
        >>> env = AtariEnv("ALE/Pong-v5")
        >>> state = env.get_state()
        >>> len(env.ale_bytes(state)) > len(state)  # the generators are stored as words
        True
        """
        self.check_state(state)
        return self._codec.decode(state[len(state) - self._codec.size :])[0]
