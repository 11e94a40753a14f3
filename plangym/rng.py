"""NumPy random generators as plain integer arrays, so they fit inside env states.

>>> generator = np.random.default_rng(7)
>>> words = generator_words(generator)
>>> first = generator.random()
>>> restore_generator(generator, words)
>>> generator.random() == first
True
"""

from __future__ import annotations

import numpy as np

_MASK64 = (1 << 64) - 1
N_WORDS = 6


def generator_words(generator: np.random.Generator) -> np.ndarray:
    """Return the PCG64 state of ``generator`` as six uint64 words."""
    state = generator.bit_generator.state
    if state["bit_generator"] != "PCG64":
        raise NotImplementedError(
            f"np_random: expected a PCG64 generator, received {state['bit_generator']}"
        )
    inner = state["state"]
    return np.array(
        [
            inner["state"] >> 64,
            inner["state"] & _MASK64,
            inner["inc"] >> 64,
            inner["inc"] & _MASK64,
            state["has_uint32"],
            state["uinteger"],
        ],
        dtype=np.uint64,
    )


def restore_generator(generator: np.random.Generator, words: np.ndarray) -> None:
    """Put ``generator`` back in the state that :func:`generator_words` recorded."""
    s_hi, s_lo, inc_hi, inc_lo, has_uint32, uinteger = (int(word) for word in words)
    generator.bit_generator.state = {
        "bit_generator": "PCG64",
        "state": {"state": (s_hi << 64) | s_lo, "inc": (inc_hi << 64) | inc_lo},
        "has_uint32": has_uint32,
        "uinteger": uinteger,
    }
