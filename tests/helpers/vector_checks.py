"""Exact comparison of vector env results, shared by the vector test modules."""

import numpy as np


def assert_same(ours, theirs, where="result"):
    """Exact equality, recursively: same types, keys, dtypes, shapes and bytes."""
    assert type(ours) is type(theirs), f"{where}: {type(ours)} is not {type(theirs)}"
    if isinstance(theirs, dict):
        assert set(ours) == set(theirs), f"{where}: keys {sorted(ours)} != {sorted(theirs)}"
        for key in theirs:
            assert_same(ours[key], theirs[key], f"{where}[{key!r}]")
    elif isinstance(theirs, tuple | list):
        assert len(ours) == len(theirs), f"{where}: length {len(ours)} != {len(theirs)}"
        for i, (mine, other) in enumerate(zip(ours, theirs, strict=True)):
            assert_same(mine, other, f"{where}[{i}]")
    elif isinstance(theirs, np.ndarray):
        assert ours.dtype == theirs.dtype, f"{where}: dtype {ours.dtype} != {theirs.dtype}"
        assert ours.shape == theirs.shape, f"{where}: shape {ours.shape} != {theirs.shape}"
        if theirs.dtype == object:
            for index in np.ndindex(theirs.shape):
                assert_same(ours[index], theirs[index], f"{where}[{index}]")
        else:
            assert ours.tobytes() == theirs.tobytes(), f"{where}: {ours} != {theirs}"
    elif isinstance(theirs, np.generic):
        assert ours.tobytes() == theirs.tobytes(), f"{where}: {ours!r} != {theirs!r}"
    else:
        assert ours == theirs, f"{where}: {ours!r} != {theirs!r}"
