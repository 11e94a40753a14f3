"""Atari's sticky actions, applied by plangym so that replay from a state stays exact.

The ALE keeps the last action it applied (the one a sticky frame repeats) outside its
serialized state, so a restored state could repeat the wrong action. plangym runs the ALE
without sticky actions and applies them itself: it draws the sticky coin from its own
generator and keeps that generator and the last applied action in the state (the last 56
bytes, :data:`~plangym.videogames.atari.state.TRAILER_SIZE`), which makes replay exact with
``repeat_action_probability > 0``. The distribution is the ALE's (Machado et al., 2018); the
random stream is plangym's.

>>> always, never = StickyActions(), StickyActions()
>>> always._init_sticky(1.0)
>>> never._init_sticky(0.0)
>>> [always._sticky(a) for a in (2, 3)], [never._sticky(a) for a in (2, 3)]
([0, 0], [2, 3])
"""

from __future__ import annotations

import numpy as np

from plangym.rng import GeneratorWords
from plangym.validation import check_number


class StickyActions:
    """Sticky actions of :class:`~plangym.videogames.atari.AtariEnv`: the draw and its state.

    ``_last_action`` is the index, in the env's action set, of the action the console
    received last; ``_sticky_rng`` draws the coin and ``_sticky_words`` caches its words
    for states.
    """

    _repeat_action_probability: float
    _sticky_rng: np.random.Generator
    _sticky_words: GeneratorWords
    _last_action: int

    def _init_sticky(self, repeat_action_probability: float) -> None:
        """Check the probability; start with an unseeded generator and action 0 as the last."""
        self._repeat_action_probability = check_number(
            "repeat_action_probability", repeat_action_probability, 0.0, 1.0
        )
        self._sticky_rng = np.random.default_rng()
        # Without sticky actions the generator never draws: its words are read once.
        self._sticky_words = GeneratorWords(cache=True)
        self._last_action = 0

    def _seed_sticky(self, seed: int | None) -> None:
        """Start the sticky-action generator afresh from ``seed``."""
        self._sticky_rng = np.random.default_rng(seed)
        self._sticky_words.forget()

    def _sticky(self, action: int) -> int:
        """Return the action the console receives: the previous one with probability p."""
        p = self._repeat_action_probability
        if p > 0.0:
            self._sticky_words.forget()  # the generator moves: read it again for a state
            if self._sticky_rng.random() < p:
                return self._last_action
        self._last_action = int(action)
        return self._last_action
