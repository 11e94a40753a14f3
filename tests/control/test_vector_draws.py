"""The reset draws of the classic control vector env against NumPy's own generators.

``Generators`` computes each generator's next draws ahead, a chunk of generators at a time;
every draw and every generator's words must still be what its own ``np.random.Generator``
gives, whatever order the rows are drawn from, restored or reseeded in.
"""

from __future__ import annotations

import numpy as np
import pytest

from plangym.control.classic_control.vector_draws import Generators
from plangym.rng import generator_words, restore_generator


@pytest.mark.parametrize("chunk", [1, 4, 1024])
def test_draws_and_words_are_each_generators_own(monkeypatch, chunk):
    monkeypatch.setattr(Generators, "CHUNK", chunk)
    n, k = 40, 4
    generators = Generators(list(range(n)), k)
    theirs = [np.random.default_rng(seed) for seed in range(n)]
    pick = np.random.default_rng(123)
    for round_ in range(200):
        rows = np.sort(pick.choice(n, size=pick.integers(0, 12), replace=False))
        low, high = (-0.05, 0.05) if round_ % 2 else (np.arange(k) - 5.0, np.arange(k) + 0.5)
        draws = generators.uniform(rows, low, high)
        for row, values in zip(rows, draws, strict=True):
            expected = theirs[row].uniform(low, high, size=k)
            assert values.tobytes() == expected.tobytes(), (round_, row)
        if round_ % 17 == 0:  # some generators restored to another one's words
            source, target = pick.choice(n, size=2, replace=False)
            generators.set_words(np.array([target]), generators.words[[source]].copy())
            restore_generator(theirs[target], generator_words(theirs[source]))
        if round_ % 29 == 0:  # and some reseeded
            row = int(pick.integers(n))
            generators.seed([row], [1_000 + round_])
            theirs[row] = np.random.default_rng(1_000 + round_)
        for row in range(n):
            assert (generators.words[row] == generator_words(theirs[row])).all(), (round_, row)
