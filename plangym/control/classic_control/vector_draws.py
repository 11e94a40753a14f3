"""The draws of the classic control resets for many sub-envs at once, from their own generators.

Each sub-env of gymnasium's envs draws its reset from its own ``np_random``, a PCG64
``Generator``. Here every generator is six uint64 words (the ``rng`` field of a state
record, :func:`plangym.rng.generator_words`), and :func:`uniform_draws` advances any
rows of them in NumPy passes: PCG64's 128-bit LCG step on 64-bit halves, its XSL-RR
output, ``next_double`` and ``Generator.uniform``'s ``low + (high - low) * u``, the same
operations as NumPy's C code, so the draws and the words after are bit for bit the
generator's.

>>> words, seeds = seeded_words([7])
>>> values = uniform_draws(words, np.array([0]), 3, -0.05, 0.05)
>>> generator = np.random.default_rng(7)
>>> values[0].tobytes() == generator.uniform(-0.05, 0.05, size=3).tobytes()
True
>>> bool((words[0] == generator_words(generator)).all())
True
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium.envs.classic_control.pendulum import DEFAULT_X, DEFAULT_Y
from gymnasium.envs.classic_control.utils import maybe_parse_reset_bounds, verify_number_and_cast

from plangym.control.classic_control.kernels import FLOAT32_ARRAY, FLOAT64_ARRAY
from plangym.rng import N_WORDS, generator_words

_U64 = np.uint64
_MASK32 = _U64(0xFFFFFFFF)
_MASK64 = (1 << 64) - 1
_11, _32, _58, _64 = (_U64(bits) for bits in (11, 32, 58, 64))
_MULTIPLIER = 0x2360ED051FC65DA44385DF649FCCF645  # PCG64's 128-bit LCG multiplier
_MASK128 = (1 << 128) - 1
_TO_DOUBLE = 1.0 / 9007199254740992.0  # next_double: the top 53 bits times 2**-53


def seeded_words(seeds: Sequence[int | None]) -> tuple[np.ndarray, list[int]]:
    """Return the words of gymnasium's generator for each seed, and the seeds.

    The generator ``reset(seed=seed)`` gives an env (``gymnasium.utils.seeding.np_random``);
    for a seed None, one of fresh entropy, whose seed is that entropy (as gymnasium's
    ``np_random_seed`` is then).
    """
    words = np.empty((len(seeds), N_WORDS), dtype=_U64)
    used = []
    for row, seed in enumerate(seeds):
        sequence = np.random.SeedSequence(seed)
        words[row] = generator_words(np.random.Generator(np.random.PCG64(sequence)))
        used.append(int(sequence.entropy))  # type: ignore[arg-type]
    return words, used


def _mulhi(a: np.ndarray, b_lo: np.ndarray, b_hi: np.ndarray) -> np.ndarray:
    """Return the high 64 bits of each ``a * b``, ``b`` given as its 32-bit limbs.

    In place where it can be: at a thousand generators the temporaries cost about as much
    as the arithmetic.
    """
    a_lo, a_hi = a & _MASK32, a >> _32
    low, cross = a_lo * b_lo, a_hi * b_lo
    low >>= _32
    cross += low  # cannot carry out: a product of 32-bit limbs leaves room
    middle = np.bitwise_and(cross, _MASK32, out=low)
    product = a_lo * b_hi
    middle += product
    middle >>= _32
    cross >>= _32
    high = np.multiply(a_hi, b_hi, out=product)
    high += cross
    high += middle
    return high


@functools.cache
def _jumps(k: int) -> tuple[np.ndarray, ...]:
    """Return the LCG's jumps ``state_j = A_j * state + C_j * inc`` for j = 1..k, in parts.

    Returns ``A``'s high and low words, ``A``'s low word's 32-bit limbs, and the same of
    ``C``: arrays of ``k``.
    """
    a, c, parts = 1, 0, []
    for _ in range(k):
        a, c = (a * _MULTIPLIER) & _MASK128, (c * _MULTIPLIER + 1) & _MASK128
        parts.append([a >> 64, a & _MASK64, a & 0xFFFFFFFF, (a >> 32) & 0xFFFFFFFF])
        parts[-1] += [c >> 64, c & _MASK64, c & 0xFFFFFFFF, (c >> 32) & 0xFFFFFFFF]
    # Column vectors: a product with a row of generators is then (k, n) with long inner loops.
    return tuple(np.array(column, dtype=_U64)[:, None] for column in zip(*parts, strict=True))


def _times(hi: np.ndarray, lo: np.ndarray, m: tuple[np.ndarray, ...]) -> tuple:
    """Return ``(hi, lo)`` of ``(hi, lo) * m`` modulo 2**128 (``m``: four parts of _jumps)."""
    m_hi, m_lo, m_lo_low, m_lo_high = m
    high = _mulhi(lo, m_lo_low, m_lo_high)
    part = hi * m_lo
    high += part
    high += np.multiply(lo, m_hi, out=part)
    return high, lo * m_lo


def inc_terms(words: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Return ``C_j * inc`` of each generator for j = 1..k: ``(hi, lo)``, each ``(k, n)``."""
    return _times(words[None, :, 2], words[None, :, 3], _jumps(k)[4:])


def _unit_draws(hi: np.ndarray, lo: np.ndarray, k: int, terms: Any) -> tuple[np.ndarray, ...]:
    """Return ``k`` ``next_double`` draws of ``m`` generators and their states after.

    ``hi``, ``lo``: the generators' state words (their first two), contiguous ``(m,)``
    arrays (strided ones slow the arithmetic down by a sixth); ``terms``: their
    :func:`inc_terms`. Returns ``(k, m)`` draws in ``[0, 1)`` and the ``(hi, lo)`` words
    of the state after the last draw, ``(2, m)``.
    """
    # Every draw at once from the words before: state_j = A_j * state + C_j * inc.
    s_hi, s_lo = _times(hi[None], lo[None], _jumps(k)[:4])  # (k, m)
    c_hi, c_lo = terms
    s_lo += c_lo
    s_hi += c_hi
    s_hi += s_lo < c_lo  # the carry
    after = np.stack((s_hi[-1], s_lo[-1]))
    # XSL-RR; NumPy shifts a uint64 by 64 to 0, so a rotation by 0 needs no mask.
    mixed, rotation = np.bitwise_xor(s_lo, s_hi, out=s_lo), np.right_shift(s_hi, _58, out=s_hi)
    left = np.left_shift(mixed, np.subtract(_64, rotation))
    mixed >>= rotation
    mixed |= left
    mixed >>= _11
    return mixed * _TO_DOUBLE, after


def _scaled(draws: np.ndarray, low: Any, high: Any) -> np.ndarray:
    """``Generator.uniform``'s ``low + (high - low) * u`` of each ``next_double`` draw ``u``."""
    # Python floats (the checks run at every vector step: type() first, np.ndim is slower)
    if (type(low) is float and type(high) is float) or (np.ndim(low) == 0 and np.ndim(high) == 0):
        low, span = float(low), float(high) - float(low)
        draws *= span
        draws += low
        return draws
    low = np.asarray(low, dtype=np.float64)
    return low + np.subtract(high, low, dtype=np.float64) * draws


def uniform_draws(words: np.ndarray, rows: np.ndarray, k: int, low: Any, high: Any) -> np.ndarray:
    """Draw ``Generator.uniform(low, high, size=k)`` from each generator of ``rows``.

    Args:
        words: ``(n, 6)`` generator words; the rows drawn from are advanced in place.
        rows: Indices of the generators to draw from.
        k: Draws per generator.
        low: The lower bound, a float or ``k`` floats.
        high: The upper bound, a float or ``k`` floats.

    Returns:
        ``(len(rows), k)`` float64 draws, as each generator gives them in order.
    """
    picked = words[rows]
    draws, after = _unit_draws(picked[:, 0].copy(), picked[:, 1].copy(), k, inc_terms(picked, k))
    words[rows, :2] = after.T
    return _scaled(draws.T, low, high)


class Generators:
    """Every sub-env's generator, as words, drawing ``k`` values a reset.

    Each generator's next ``k`` draws are computed ahead, for many generators in one pass:
    below a thousand or so values NumPy's cost per operation is mostly the call, and a
    vector step resets a few generators at a time. The generators drawn from (or given new
    words) are computed again together once a quarter of them wait (in parts of
    ``CHUNK`` to ``2 * CHUNK`` generators, which stay in the CPU's cache), or one by one
    when drawn from again before. The terms of a generator's increment (:func:`inc_terms`)
    are kept until its words change. (Computing several resets ahead halves the work per
    reset on its own, but its arrays leave the CPU's cache: slower in a vector step.)

    >>> generators = Generators([5, 6], k=2)
    >>> values = generators.uniform(np.array([1]), -1.0, 1.0)
    >>> values[0].tobytes() == np.random.default_rng(6).uniform(-1.0, 1.0, 2).tobytes()
    True
    """

    CHUNK = 1024
    # What a generator's row of the caches holds.
    READY, DRAWN, STALE = 0, 1, 2  # its next draws; the state after them; nothing yet

    def __init__(self, seeds: Sequence[int | None], k: int):
        self.k = k
        self._words, self.seeds = seeded_words(seeds)
        n = len(self._words)
        # A row per generator (a reset gathers a few rows): its next k next_double draws
        # and its state words after them. Once drawn from, the latter are its state until
        # its next draws are computed (a reset does not copy them into _words).
        self._draws = np.empty((n, k))
        self._after = np.empty((n, 2), dtype=_U64)
        self._status = np.full(n, self.STALE, dtype=np.uint8)
        self._waiting = n  # how many are not READY
        # (hi, lo) of inc_terms, (2, k, n): a refresh gathers them as the contiguous
        # (2, k, m) blocks its arithmetic runs on.
        self._terms = np.empty((2, k, n), dtype=_U64)
        self._known = np.zeros(n, dtype=np.bool_)  # whether _terms are its own
        self._refresh_at = min(self.CHUNK, max(1, n // 4))

    @property
    def words(self) -> np.ndarray:
        """Every generator's six words (:func:`plangym.rng.generator_words`), ``(n, 6)``."""
        self._catch_up(np.flatnonzero(self._status == self.DRAWN))
        return self._words

    def seed(self, rows: Sequence[int], seeds: Sequence[int]) -> None:
        """Seed the generators of ``rows`` as gymnasium's ``reset(seed=...)`` does."""
        words, used = seeded_words(seeds)
        self.set_words(np.asarray(rows, dtype=np.intp), words)
        for row, seed in zip(rows, used, strict=True):
            self.seeds[row] = seed

    def set_words(self, where: Any, words: np.ndarray) -> None:
        """Put ``words`` in the generators ``where`` (rows or a slice)."""
        self._words[where] = words
        self._status[where] = self.STALE
        self._known[where] = False
        self._waiting = int(np.count_nonzero(self._status))

    def uniform(self, rows: np.ndarray, low: Any, high: Any) -> np.ndarray:
        """``Generator.uniform(low, high, size=k)`` from the generators of ``rows`` (distinct)."""
        status = self._status[rows]
        if np.count_nonzero(status):  # drawn from again before a refresh, or new words
            self._compute(rows[status != self.READY])
        draws = np.take(self._draws, rows, axis=0)
        self._status[rows] = self.DRAWN
        self._waiting += len(rows)
        if self._waiting >= self._refresh_at:
            waiting = np.flatnonzero(self._status)
            for part in np.array_split(waiting, max(1, len(waiting) // self.CHUNK)):
                self._compute(part)
        return _scaled(draws, low, high)  # (len(rows), k), a column per draw

    def _catch_up(self, drawn: np.ndarray) -> None:
        """Copy the state words of the generators ``drawn`` (all DRAWN) into ``_words``."""
        self._words[drawn, 0], self._words[drawn, 1] = np.take(self._after, drawn, axis=0).T
        self._status[drawn] = self.STALE

    def _compute(self, rows: np.ndarray) -> None:
        """Compute the next draws of the generators ``rows`` (none of them READY)."""
        self._catch_up(rows[self._status[rows] == self.DRAWN])
        known = self._known[rows]
        if not known.all():
            new = rows[~known]
            self._terms[:, :, new] = np.stack(inc_terms(self._words[new], self.k))
            self._known[new] = True
        terms = np.take(self._terms, rows, axis=2)  # (2, k, len(rows))
        draws, after = _unit_draws(self._words[rows, 0], self._words[rows, 1], self.k, terms)
        # A column at a time: scattering the transposed (k, m) blocks row by row is slower.
        for j, column in enumerate(draws):
            self._draws[rows, j] = column
        self._after[rows, 0], self._after[rows, 1] = after
        self._status[rows] = self.READY
        self._waiting -= len(rows)


# What each env's reset draws -------------------------------------------------------------------
@dataclass(frozen=True)
class ResetRule:
    """How one env's ``reset`` draws its state from its generator.

    Attributes:
        n_draws: The values drawn, in order.
        bounds: ``bounds(options)`` gives the ``(low, high)`` of the draws, as the env's reset
            reads them from its reset options.
        kind: How the env holds the state drawn (a physics kind of the state records).
        float32_obs: The observation is computed from a float32 state (Acrobot's trigonometry
            on float32 scalars).
    """

    n_draws: int
    bounds: Callable[[dict | None], tuple[Any, Any]]
    kind: int = FLOAT64_ARRAY
    float32_obs: bool = False

    def physics(self, draws: np.ndarray, n_physics: int) -> np.ndarray:
        """Return the physics the env holds after drawing ``draws`` (one row per env)."""
        if self.kind == FLOAT32_ARRAY:
            return draws.astype(np.float32).astype(np.float64)
        if draws.shape[1] == n_physics:
            return draws
        physics = np.zeros((len(draws), n_physics))  # the mountain cars start at rest
        physics[:, : draws.shape[1]] = draws
        return physics


def _bounds(low: float, high: float) -> Callable[[dict | None], tuple[float, float]]:
    return lambda options: maybe_parse_reset_bounds(options, low, high)


def _pendulum_bounds(options: dict | None) -> tuple[np.ndarray, np.ndarray]:
    x, y = DEFAULT_X, DEFAULT_Y
    if options is not None:
        x = verify_number_and_cast(options.get("x_init", x))
        y = verify_number_and_cast(options.get("y_init", y))
    high = np.array([x, y])
    return -high, high


RESET_RULES = {
    "CartPoleKernel": ResetRule(4, _bounds(-0.05, 0.05)),
    "AcrobotKernel": ResetRule(4, _bounds(-0.1, 0.1), FLOAT32_ARRAY, float32_obs=True),
    "MountainCarKernel": ResetRule(1, _bounds(-0.6, -0.4)),
    "ContinuousMountainCarKernel": ResetRule(1, _bounds(-0.6, -0.4)),
    "PendulumKernel": ResetRule(2, _pendulum_bounds),
}


def float32_trig_obs(physics: np.ndarray) -> np.ndarray:
    """Acrobot's ``_get_ob`` of float32 states: cos and sin of float32 scalars, one by one.

    NumPy's float32 array loops need not give a float32 scalar's bits; Acrobot resets are
    rare (its episodes last 500 steps), so these take the scalar calls the env makes.
    """
    rows = physics.astype(np.float32)
    obs = np.empty((len(rows), 6), dtype=np.float32)
    for i, (theta1, theta2, dtheta1, dtheta2) in enumerate(rows):
        obs[i] = (np.cos(theta1), np.sin(theta1), np.cos(theta2), np.sin(theta2), dtheta1, dtheta2)
    return obs
