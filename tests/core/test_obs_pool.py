"""Recycled observation arrays: reused only when nobody else holds them."""

import gc

import numpy as np
import pytest

import plangym
from plangym.api_tests import assert_identical
from plangym.core.obs_pool import ObservationPool
from plangym.vectorization.transport import read_outputs


def screens(value: int, n: int = 4) -> np.ndarray:
    return np.full((n, 64, 64, 3), value, dtype=np.uint8)


def test_dropped_arrays_are_reused_and_kept_ones_are_not():
    pool = ObservationPool()
    first = pool.copies(screens(1))
    kept, dropped_ids = first[0], {id(a) for a in first[1:]}
    del first
    gc.collect()
    second = pool.copies(screens(2))
    assert {id(a) for a in second} & dropped_ids  # recycled
    assert all(a is not kept for a in second)
    assert (kept == 1).all()
    assert all((a == 2).all() for a in second)


def test_a_view_keeps_its_array_from_reuse():
    pool = ObservationPool()
    first = pool.copies(screens(1, n=1))
    view = first[0][::2]
    del first
    second = pool.copies(screens(2, n=1))
    assert (view == 1).all()
    assert not np.shares_memory(view, second[0])


def test_copies_own_their_memory_and_small_rows_are_plain_copies():
    pool = ObservationPool()
    rows = screens(3)
    copies = pool.copies(rows)
    assert all(a.flags.owndata and a.flags.writeable for a in copies)
    small = np.arange(8, dtype=np.float32).reshape(4, 2)
    assert [a.tolist() for a in pool.copies(small)] == small.tolist()


def test_the_pool_holds_at_most_twice_the_largest_batch():
    pool = ObservationPool()
    kept = [pool.copies(screens(i)) for i in range(5)]  # all kept: nothing to reuse
    assert len(pool) == 8
    assert [int(batch[0][0, 0, 0]) for batch in kept] == [0, 1, 2, 3, 4]


@pytest.mark.timeout(120)
def test_observations_kept_from_a_parallel_batch_survive_later_batches():
    env = plangym.make("ALE/Pong-v5", n_workers=2, inline_small_batches=False)
    try:
        state, *_ = env.reset()
        states = env.step_batch([0] * 6, states=[state] * 6)[0]
        first = env.step_batch([2] * 6, states=states)
        kept = [obs.copy() for obs in first[1]]
        held = first[1][::2]
        for action in (3, 4, 5):
            later = env.step_batch([action] * 6, states=states)
            assert_identical(later, env.plan_env.step_batch([action] * 6, states=states))
        assert_identical(held, kept[::2])
    finally:
        env.close()


def test_read_outputs_gives_the_shared_rows_to_copy_or_hand_out():
    arrays = {
        "observs": screens(7),
        "rewards": np.zeros(4),
        "terminals": np.zeros(4, bool),
        "truncateds": np.zeros(4, bool),
    }
    (observs, *_), shared = read_outputs(arrays, 1, 2, dict.fromkeys(arrays))
    assert shared and np.shares_memory(observs, arrays["observs"]) and len(observs) == 2
    fallback = {**dict.fromkeys(arrays), "observs": [np.ones(3)] * 2}  # did not fit
    (observs, *_), shared = read_outputs(arrays, 1, 2, fallback)
    assert not shared and observs is fallback["observs"]


@pytest.mark.parametrize("face", ["single", "parallel", "make_vec"])
def test_close_lets_go_of_the_arrays_kept_for_reuse(face):
    """A 4,000-screen batch kept up to twice its memory for the env's life, past close()."""
    if face == "single":
        env = plangym.make("ALE/MsPacman-v5")
    elif face == "parallel":
        env = plangym.make("ALE/MsPacman-v5", n_workers=2, inline_small_batches=False)
    else:
        env = plangym.make_vec("ALE/MsPacman-v5", 2, vectorization_mode="async")
    states = [env.get_state()] * 8 if face != "make_vec" else env.get_states() * 4
    kept = env.step_batch([0] * 8, states=states)[1]
    pool = env._observation_pool if face == "single" else env._scheduler.obs_pool
    assert len(pool) >= 8
    env.close()
    assert len(pool) == 0 and (face != "single" or "_observation_pool" not in vars(env))
    assert all(obs.shape == (210, 160, 3) for obs in kept)  # what the user kept stays
