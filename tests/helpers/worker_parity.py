"""Workers against the single env: the same batch must come back bit for bit.

The env test modules check that an env stepped by worker processes (``ParallelEnv``) or by
Ray actors (``RayEnv``) returns exactly what the env returns in the test process. The
workers here never step a small batch inline, so the batch really crosses to them.
"""

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

import plangym
from plangym.api_tests import assert_identical

# dt per element of an 8-state batch: every element of the batch keeps its own dt.
MIXED_DTS = [1, 2, 3, 1, 2, 3, 1, 2]


def make_workers(name: str, backend: str, request: pytest.FixtureRequest, **kwargs: Any):
    """``name`` on 2 workers: Ray actors when ``backend`` is "ray", else processes.

    The Ray backend starts (or reuses) the session's ``ray_cluster`` first.
    """
    ray = backend == "ray"
    if ray:
        request.getfixturevalue("ray_cluster")
    return plangym.make(name, n_workers=2, ray=ray, inline_small_batches=False, **kwargs)


def assert_batch_like_single(single, workers, actions, states, dt: Any = 1) -> tuple:
    """``workers.step_batch`` equals ``single.step_batch`` exactly; the single env's result."""
    expected = single.step_batch(actions, states=states, dt=dt)
    assert_identical(workers.step_batch(actions, states=states, dt=dt), expected)
    return expected


def assert_batch_and_resumption_like_single(single, workers, actions, states) -> None:
    """A batch from ``states`` with :data:`MIXED_DTS`, then one resuming where it ended.

    The second batch starts from the new states the workers handed back (dt 1).
    """
    expected = assert_batch_like_single(single, workers, actions, states, dt=MIXED_DTS)
    assert_batch_like_single(single, workers, actions, expected[0])


@contextmanager
def single_and_workers(
    name: str, backend: str, request: pytest.FixtureRequest, **kwargs: Any
) -> Iterator[tuple[Any, Any]]:
    """``plangym.make(name, **kwargs)`` and its :func:`make_workers` twin, closed at exit."""
    single = plangym.make(name, **kwargs)
    try:
        workers = make_workers(name, backend, request, **kwargs)
        try:
            yield single, workers
        finally:
            workers.close()
    finally:
        single.close()
