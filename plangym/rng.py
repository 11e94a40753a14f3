"""NumPy random generators as plain integer arrays, so they fit inside env states.

>>> generator = np.random.default_rng(7)
>>> words = generator_words(generator)
>>> first = generator.random()
>>> restore_generator(generator, words)
>>> generator.random() == first
True
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

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


def words_problem(words: np.ndarray | list[int]) -> str | None:
    """Say why six words are no PCG64 state :func:`generator_words` records, or None.

    PCG64's increment is odd (an even one, all zeros say, gives a generator that may repeat
    one number forever), ``has_uint32`` is 0 or 1 and ``uinteger`` a 32-bit word.

    >>> words_problem(generator_words(np.random.default_rng(1))) is None
    True
    >>> words_problem([0] * 6)
    'generator words with an even increment (0), which no PCG64 generator has'
    """
    *_, inc_lo, has_uint32, uinteger = (int(word) for word in words)
    if not inc_lo & 1:
        return f"generator words with an even increment ({inc_lo}), which no PCG64 generator has"
    if has_uint32 > 1 or uinteger >> 32:
        return (
            f"generator words with has_uint32={has_uint32} and uinteger={uinteger} (0 or 1 and "
            "a 32-bit word in any PCG64 generator)"
        )
    return None


def invalid_words(words: np.ndarray) -> np.ndarray:
    """Per row of six uint64 words: whether :func:`words_problem` finds one, in one pass.

    >>> invalid_words(np.array([generator_words(np.random.default_rng(1)), np.zeros(6)], "u8"))
    array([False,  True])
    """
    return ((words[..., 3] & 1) == 0) | (words[..., 4] > 1) | ((words[..., 5] >> 32) != 0)


def check_words(words: np.ndarray | list[int], name: str = "state") -> None:
    """Raise ValueError, naming ``name``, unless ``words`` pass :func:`words_problem`."""
    problem = words_problem(words)
    if problem is not None:
        raise ValueError(
            f"{name}: expected a state from get_state(), received {problem} (corrupt bytes?)"
        )


def restore_generator(generator: np.random.Generator, words: np.ndarray) -> None:
    """Put ``generator`` back in the state that :func:`generator_words` recorded.

    Words no generator has (corrupt bytes) raise ValueError and leave ``generator`` as it was.
    """
    # tolist() turns the six words into Python ints in one call (half the time of six int()).
    s_hi, s_lo, inc_hi, inc_lo, has_uint32, uinteger = values = np.asarray(words).tolist()
    if not inc_lo & 1 or has_uint32 > 1 or uinteger >> 32:
        check_words(values)
    generator.bit_generator.state = {
        "bit_generator": "PCG64",
        "state": {"state": (s_hi << 64) | s_lo, "inc": (inc_hi << 64) | inc_lo},
        "has_uint32": has_uint32,
        "uinteger": uinteger,
    }


class GeneratorWords:
    """A generator's words as bytes, read only when the generator may have moved.

    Reading a generator's state costs a sizeable part of a cheap env's step
    (``benchmarks/design_figures.py``). Envs whose generator is drawn from only at known
    moments (a reset, a sticky-action coin flip) keep its words between those moments;
    :meth:`forget` marks one. Restoring the words the
    generator already holds does nothing. With ``cache=False`` the words are read and
    written every time (a wrapper might draw from the generator at any step).

    >>> generator = np.random.default_rng(3)
    >>> words = GeneratorWords(cache=True)
    >>> saved = words.read(generator)
    >>> first = generator.random()
    >>> words.forget()  # it was drawn from
    >>> words.write(generator, saved)
    >>> generator.random() == first
    True
    """

    __slots__ = ("cache", "words")

    def __init__(self, cache: bool):
        self.cache = cache
        self.words: bytes | None = None  # the generator's words while known

    def forget(self) -> None:
        """Read the generator again next time: it is about to be drawn from or reseeded."""
        self.words = None

    def read(self, generator: np.random.Generator) -> bytes:
        """Return the generator's words (the bytes of :func:`generator_words`)."""
        words = self.words
        if words is None:
            words = generator_words(generator).astype("<u8").tobytes()
            if self.cache:
                self.words = words
        return words

    def write(self, generator: np.random.Generator, words: bytes) -> None:
        """Put ``words`` (from :meth:`read`) in the generator, unless it holds them."""
        if words == self.words:
            return
        restore_generator(generator, np.frombuffer(words, dtype="<u8"))
        if self.cache:
            self.words = words


# numpy.random.RandomState (the legacy generator dm_control's tasks draw from) -------------
MT19937_KEY_WORDS = 624


def random_state_fields(random_state: np.random.RandomState) -> tuple[np.ndarray, int, int, float]:
    """Return the MT19937 state of ``random_state``: ``(key, pos, has_gauss, cached_gaussian)``.

    ``key`` is a fresh uint32 array of :data:`MT19937_KEY_WORDS` words; a cached Gaussian
    (``randn`` draws them in pairs) is part of the state too.

    >>> random_state = np.random.RandomState(3)
    >>> _ = random_state.randn()  # leaves the pair's second Gaussian cached
    >>> key, pos, has_gauss, cached = random_state_fields(random_state)
    >>> key.dtype, key.shape, has_gauss
    (dtype('uint32'), (624,), 1)
    >>> expected = random_state.randn(3)
    >>> restore_random_state(random_state, key, pos, has_gauss, cached)
    >>> bool((random_state.randn(3) == expected).all())
    True
    """
    kind, key, pos, has_gauss, cached_gaussian = random_state.get_state()
    if kind != "MT19937":
        raise NotImplementedError(f"random: expected an MT19937 RandomState, received {kind}")
    return np.array(key, dtype=np.uint32), int(pos), int(has_gauss), float(cached_gaussian)


def restore_random_state(
    random_state: np.random.RandomState,
    key: np.ndarray,
    pos: int,
    has_gauss: int,
    cached_gaussian: float,
) -> None:
    """Put ``random_state`` back in the state :func:`random_state_fields` returned."""
    random_state.set_state(("MT19937", key, int(pos), int(has_gauss), float(cached_gaussian)))


@contextlib.contextmanager
def space_generators_kept(space: Any) -> Iterator[None]:
    """Leave the generators of ``space`` and its subspaces as they are, whatever the block seeds.

    gymnasium's ``reset(seed=...)`` seeds the env, not its action space.

    >>> from gymnasium import spaces
    >>> space = spaces.Discrete(100, seed=1)
    >>> with space_generators_kept(space):
    ...     _ = space.seed(2)
    >>> int(space.sample()) == int(spaces.Discrete(100, seed=1).sample())
    True
    """
    kept = [(each, each._np_random) for each in _spaces_in(space)]
    try:
        yield
    finally:
        for each, generator in kept:
            each._np_random = generator


def _spaces_in(space: Any) -> Iterator[Any]:
    """Yield ``space`` and its subspaces (a Tuple's, a Dict's), if it is a gymnasium Space."""
    from gymnasium import spaces

    if not isinstance(space, spaces.Space):
        return
    yield space
    if isinstance(space, spaces.Tuple | spaces.Dict):
        subspaces = space.spaces.values() if isinstance(space, spaces.Dict) else space.spaces
        for subspace in subspaces:
            yield from _spaces_in(subspace)
