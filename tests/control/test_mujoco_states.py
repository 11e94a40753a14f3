"""MuJoCo states are flat float64 vectors (as in plangym 0.1) that restore bit-exactly.

Real gymnasium MuJoCo envs throughout: the form of the states, their integer pieces at
extreme values, exact replays against the live run, batches in every form, workers and
make_vec, and the errors for states that do not fit.
"""

import mujoco
import numpy as np
import pytest

import plangym
from plangym.api_tests import assert_identical
from plangym.control.mujoco.state import join_int64, join_uint64, split_int64, split_uint64
from plangym.utils import find_time_limit

pytestmark = pytest.mark.filterwarnings("ignore:MuJoCo. compiler attribute:RuntimeWarning")
IDS = ["Hopper-v5", "HalfCheetah-v5", "Humanoid-v5", "Ant-v5", "Reacher-v5"]


def walk(env, n: int, seed: int, scale: float = 1.0) -> tuple[list, list]:
    """Seeded states along a live run of ``n`` steps, and the ``n`` actions taken."""
    env.seed(seed)
    env.action_space.seed(seed)
    env.reset()
    states, actions = [], []
    for _ in range(n):
        actions.append((scale * env.sample_action()).astype(np.float32))
        env.step(actions[-1])
        states.append(env.get_state())
    return states, actions


@pytest.mark.parametrize("name", IDS)
def test_states_are_flat_float64_vectors_of_one_length(name):
    env = plangym.make(name, render_mode=None, remove_time_limit=False)
    first, *_ = env.reset()
    states, actions = walk(env, 6, seed=1)
    batch_states = env.step_batch(actions, states=states)[0]
    for state in [first, *states, *batch_states, env.reset()[0]]:
        assert type(state) is np.ndarray and state.dtype == np.float64
        assert state.shape == (env.state_size,) and not state.flags.writeable
    assert all(state.base is None for state in batch_states)  # no batch kept alive
    stacked = np.stack(states)
    assert stacked.shape == (6, env.state_size) and stacked.dtype == np.float64
    assert np.allclose(states[0], stacked[0]) and not np.allclose(states[0], states[1])
    # The integration state comes first: state[:n] is what plangym 0.1 held.
    env.set_state(states[3])
    integration = np.empty(mujoco.mj_stateSize(env.model, mujoco.mjtState.mjSTATE_INTEGRATION))
    mujoco.mj_getState(env.model, env.data, integration, mujoco.mjtState.mjSTATE_INTEGRATION)
    assert np.array_equal(states[3][: len(integration)], integration)
    assert env.state_fields(states[3])["elapsed_steps"] == 4  # 6 steps from the reset at 0
    env.close()


@pytest.mark.parametrize("name", IDS)
def test_restores_and_batches_replay_the_live_run(name):
    """Each live state, restored in a fresh env (alone or in a stacked batch), steps on
    exactly as the live env did."""
    env = plangym.make(name, render_mode=None)
    fresh = plangym.make(name, render_mode=None)
    walk(env, 4, seed=2, scale=0.2)
    states, actions = [env.get_state()], []
    live = []
    for _ in range(10):
        actions.append((0.2 * env.sample_action()).astype(np.float32))
        live.append(env.step(actions[-1], return_state=True))
        states.append(live[-1][0])
    assert not any(step[3] or step[4] for step in live), "the window must not end an episode"
    fresh.set_state(states[0])
    assert_identical([fresh.step(action, return_state=True) for action in actions], live)
    batch = fresh.step_batch(actions, states=np.stack(states[:-1]))
    assert_identical(batch, tuple(list(column) for column in zip(*live, strict=True)))
    env.close()
    fresh.close()


def test_integer_pieces_round_trip_at_extreme_values():
    words = np.array([0, 1, 2**32 - 1, 2**32, 2**63, 2**64 - 1], dtype=np.uint64)
    pieces = split_uint64(words)
    assert pieces.dtype == np.float64 and ((pieces >= 0) & (pieces < 2**32)).all()
    assert np.array_equal(join_uint64(pieces), words)
    for value in [-(2**63), -(2**32) - 1, -(2**32), -1, 0, 2**31, 2**53 + 1, 2**63 - 1]:
        high, low = split_int64(value)
        assert -(2**31) <= high < 2**31 and 0 <= low < 2**32
        assert join_int64(high, low) == value and float(int(high)) == high


# -1 is left out: it marks a state of an env without a time limit (restored as 0 here).
@pytest.mark.parametrize("elapsed", [-(2**63), -2, 0, 2**53 + 1, 2**63 - 1])
def test_extreme_generators_and_step_counts_restore_exactly(elapsed):
    env = plangym.make("Hopper-v5", render_mode=None, remove_time_limit=False)
    fresh = env.clone()
    generator = env.gym_env.unwrapped.np_random
    generator.bit_generator.state = {
        "bit_generator": "PCG64",
        "state": {"state": 2**128 - 1, "inc": 2**128 - 1},
        "has_uint32": 1,
        "uinteger": 2**32 - 1,
    }
    env.generator_moves()  # the generator changed outside the env
    find_time_limit(env.gym_env)._elapsed_steps = elapsed
    state = env.get_state()
    fields = env.state_fields(state)
    assert fields["elapsed_steps"] == elapsed
    assert fields["rng"].tolist() == [2**64 - 1] * 4 + [1, 2**32 - 1]
    fresh.set_state(state)
    assert fresh.gym_env.unwrapped.np_random.bit_generator.state == generator.bit_generator.state
    assert find_time_limit(fresh.gym_env)._elapsed_steps == elapsed
    assert_identical(fresh.get_state(), state)
    env.close()
    fresh.close()


def tampered(state: np.ndarray, index: int, value: float) -> np.ndarray:
    changed = state.copy()
    changed[index] = value
    return changed


RNG, ELAPSED, TAG = 88, 100, 102  # Hopper-v5's integer entries (103 values)
BAD_STATES = {
    "float32": (lambda s: s.astype(np.float32), ValueError, "float64 vector of 103 values"),
    "short": (lambda s: s[:-1], ValueError, r"received ndarray\(shape=\(102,\)"),
    "2-d": (lambda s: s[None], ValueError, r"shape=\(1, 103\)"),
    "record": (lambda s: np.zeros((), [("x", "<f8")]), ValueError, "float64 vector"),
    "list": (lambda s: s.tolist(), TypeError, "float64 vector of 103 values"),
    "rng-2**32": (lambda s: tampered(s, RNG, 2.0**32), ValueError, "88, where .* its generator"),
    "rng-half": (lambda s: tampered(s, RNG + 3, 0.5), ValueError, "0.5 at position 91"),
    "rng-nan": (lambda s: tampered(s, RNG + 1, np.nan), ValueError, "nan at position 89"),
    "rng-negative": (lambda s: tampered(s, RNG, -1.0), ValueError, r"\[0, 4294967296\)"),
    "elapsed-high": (
        lambda s: tampered(s, ELAPSED, 2.0**31),
        ValueError,
        r"elapsed_steps: an integer in \[-2147483648, 2147483648\)",
    ),
    "elapsed-low": (lambda s: tampered(s, ELAPSED + 1, -1.0), ValueError, "elapsed_steps"),
    "tag": (lambda s: tampered(s, TAG, 7.0), ValueError, "another MuJoCo model"),
    # MuJoCo resets the simulation mid-step on a NaN, with only a warning.
    "physics-nan": (lambda s: tampered(s, 1, np.nan), ValueError, "nan at position 1: exp"),
    "physics-inf": (lambda s: tampered(s, 7, np.inf), ValueError, "inf at position 7: exp"),
    # In range, but the words of no generator (rng.words_problem).
    "rng-even": (lambda s: tampered(s, RNG + 7, 0.0), ValueError, r"even increment \(\d+\)"),
    "rng-has-uint32": (lambda s: tampered(s, RNG + 9, 5.0), ValueError, "has_uint32=5"),
}


@pytest.mark.parametrize(("make_bad", "error", "message"), BAD_STATES.values(), ids=BAD_STATES)
def test_bad_states_are_rejected_before_anything_runs(make_bad, error, message):
    env = plangym.make("Hopper-v5", render_mode=None)
    states, actions = walk(env, 3, seed=4)
    assert env.state_size == 103 and env._codec.slices["rng"].start == RNG
    bad = make_bad(states[0])
    with pytest.raises(error, match=rf"^state: expected a Hopper-v5 state.*{message}"):
        env.step(actions[0], state=bad)
    with pytest.raises(error, match=rf"^states\[1\]: .*{message}"):
        env.step_batch(actions[:2], states=[states[1], bad])
    with pytest.raises(error, match=message):
        env.set_state(bad)
    assert_identical(env.get_state(), states[-1])
    env.close()


def test_batches_in_every_form_step_alike():
    env = plangym.make("Hopper-v5", render_mode=None, remove_time_limit=False, frameskip=2)
    states, actions = walk(env, 12, seed=5)
    expected = env.step_batch(actions, states=states, dt=[1, 2, 3] * 4)
    wide = np.zeros((12, 2 * env.state_size))
    wide[:, ::2] = states  # strided rows: not contiguous
    for form in [np.stack(states), list(wide[:, ::2]), [s.copy() for s in states]]:
        assert_identical(env.step_batch(actions, states=form, dt=[1, 2, 3] * 4), expected)
    arrays = env.step_batch(actions, states=states, dt=[1, 2, 3] * 4, arrays=True)
    assert np.array_equal(np.stack(arrays[0]), np.stack(expected[0]))
    env.close()


@pytest.mark.parametrize("mode", ["async", "ray"])
def test_make_vec_steps_and_restores_flat_states_exactly(mode, request):
    if mode == "ray":
        request.getfixturevalue("ray_cluster")
    single = plangym.make("Hopper-v5", render_mode=None, remove_time_limit=False)
    vec = plangym.make_vec("Hopper-v5", num_envs=2, vectorization_mode=mode, render_mode=None)
    try:
        states, actions = walk(single, 6, seed=6)
        expected = single.step_batch(actions, states=states, dt=2)
        assert_identical(vec.step_batch(actions, states, dt=2), expected)
        vec.set_states([states[2], states[4]])
        assert_identical(vec.get_states(), [states[2], states[4]])
    finally:
        vec.close()
        single.close()
