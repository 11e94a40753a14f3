"""States through shared memory: layouts, ownership, and the pipe fallback end to end."""

import numpy as np
import pytest

import plangym
from plangym.api_tests import assert_identical
from plangym.columns import states_to_records
from plangym.core import PlanEnv
from plangym.vectorization import ParallelEnv
from plangym.vectorization.shared_states import read_states, states_nbytes, write_states


@pytest.fixture(scope="module")
def cartpole_states():
    env = plangym.make("CartPole-v1")
    env.reset()
    states = []
    for i in range(50):
        env.step(i % 2)
        states.append(env.get_state())
    return env, states


def test_record_states_round_trip_and_own_their_bytes(cartpole_states):
    env, states = cartpole_states
    arena = np.zeros(64 + states_nbytes(states), np.uint8)
    packed = write_states(arena, 64, arena.nbytes - 64, states)
    assert packed.lengths is None  # 0-d states need no lengths
    back = read_states(arena, packed)
    assert_identical(back, states)
    assert not back[0].flags.writeable
    arena[:] = 0  # the caller reuses the arena for the next batch
    assert_identical(back, states)
    records = read_states(arena, packed, as_records=True)
    assert records.shape == (50,)


def test_a_record_block_writes_like_the_states_it_holds(cartpole_states):
    env, states = cartpole_states
    block = states_to_records(states, env.state_dtype)
    arena = np.zeros(block.nbytes, np.uint8)
    packed = write_states(arena, 0, block.nbytes, block)
    assert_identical(read_states(arena, packed), states)


def test_vectors_of_different_lengths_round_trip():
    states = [np.arange(n, dtype=np.uint16) for n in (3, 0, 7, 1)]
    arena = np.zeros(128, np.uint8)
    packed = write_states(arena, 64, 64, states)
    assert_identical(read_states(arena, packed), states)
    views = read_states(arena, packed, copy=False)
    assert np.shares_memory(views[2], arena)


@pytest.mark.parametrize(
    "states",
    [
        [np.zeros(3, np.uint8), np.zeros(3, np.int16)],  # two dtypes
        [np.zeros((2, 2), np.uint8)],  # 2-D
        [(1, 2), (3, 4)],  # not arrays
    ],
)
def test_states_that_cannot_share_memory_are_refused(states):
    assert write_states(np.zeros(1024, np.uint8), 0, 1024, states) is None


def test_states_that_do_not_fit_are_refused_and_nothing_is_written():
    arena = np.zeros(16, np.uint8)
    assert write_states(arena, 8, 8, [np.ones(9, np.uint8)]) is None
    assert not arena.any()


class GrowingCorridor(PlanEnv):
    """States grow by one element per step: outputs outgrow the room reserved for them."""

    STATE_IS_ARRAY = True

    def __init__(self, name: str = "growing", frameskip: int = 1, autoreset: bool = True, **kw):
        self._trail = np.zeros(1, np.int64)
        super().__init__(name=name, frameskip=frameskip, autoreset=autoreset, **kw)

    @property
    def obs_shape(self):
        return (1,)

    def apply_reset(self, **kwargs):
        self._trail = np.zeros(1, np.int64)
        return self._trail[-1:].copy(), {}

    def apply_action(self, action):
        self._trail = np.append(self._trail, self._trail[-1] + int(action))
        return self._trail[-1:].copy(), float(action), False, False, {}

    def get_state(self):
        return self._trail.copy()

    def set_state(self, state):
        self._trail = np.array(state, dtype=np.int64)


def test_new_states_larger_than_reserved_travel_through_the_pipe():
    env = ParallelEnv(GrowingCorridor, name="growing", n_workers=2, inline_small_batches=False)
    try:
        state = env.reset()[0]
        states = [state] * 6
        for dt in (1, 40):  # 40 steps make each state far larger than the inputs
            expected = env.plan_env.step_batch([1] * 6, states=states, dt=dt)
            assert_identical(env.step_batch([1] * 6, states=states, dt=dt), expected)
            states = expected[0]
    finally:
        env.close()
