"""DMControlEnv states: flat float64 vectors (as plangym 0.1's), exact against the live run.

Every test runs the real dm_control suite: states are recorded along a live run (across an
episode end and the autoreset's new episode), then restored and replayed in the same
instance, in a fresh one seeded apart, in one batch (a list or one stacked array) and in
gymnasium-style vector envs; bad states are refused with errors naming what was wrong.
"""

import numpy as np
import pytest

import plangym
from plangym.api_tests import assert_identical
from plangym.control.dm_control import DMControlEnv
from tests.control.test_dm_control import part, random_actions, state_before_the_end

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

# reacher-easy and point_mass-hard rewrite a model field at each episode start (the target,
# the wall's wrapping): their states must bring it back.
TASKS = ["cartpole-balance", "walker-walk", "reacher-easy", "point_mass-hard"]


def live_run(env: DMControlEnv, n: int, seed: int) -> tuple[list, list, list, list]:
    """Step ``n`` random actions from near an episode end: states before, actions, dts, results."""
    state_before_the_end(env, margin=6)
    before, actions, dts, results = [], random_actions(env, n, seed=seed), [], []
    for i, action in enumerate(actions):
        before.append(env.get_state())
        dts.append(1 + i % 3)
        results.append(env.step(action, dt=dts[-1], return_state=True))
    assert any(step[4] for step in results), "the run crosses an episode end"
    return before, actions, dts, results


# Form ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("visualize_reward", [True, False])
def test_states_are_flat_float64_vectors_of_one_length(visualize_reward):
    env = DMControlEnv("reacher-easy", seed=0, visualize_reward=visualize_reward)
    state, *_ = env.reset()
    steps = env.step_batch(random_actions(env, 4, seed=0), states=[state] * 4, dt=[1, 2, 3, 4])
    states = [state, env.get_state(), *steps[0]]
    assert all(s.dtype == np.float64 and s.shape == (env.state_size,) for s in states)
    assert not state.flags.writeable  # a state cannot be changed behind a planner's back
    stacked = np.stack(states)
    assert stacked.shape == (6, env.state_size) and stacked.dtype == np.float64
    assert np.allclose(stacked[0], state) and not np.allclose(stacked[2], stacked[3])
    names = [name for name, *_ in env.state_layout]
    assert names[:2] == ["tag", "rng_key"] and names[-2:] == ["step_count", "reset_next_step"]
    assert ("mat_rgba" in names) is visualize_reward and "geom_pos" in names
    starts = [start for _, start, _ in env.state_layout]
    assert starts[0] == 0 and env.state_layout[-1][2] == env.state_size
    assert [stop for *_, stop in env.state_layout][:-1] == starts[1:]  # no gaps
    words = part(env, state, "rng_key")
    assert np.array_equal(words, words.astype(np.uint32))  # exact uint32 words
    assert part(env, steps[0][3], "step_count").tolist() == [4.0]
    env.close()


# Exactness -----------------------------------------------------------------------------------
@pytest.mark.parametrize("name", TASKS)
def test_restores_replay_the_live_run_exactly(name):
    env = DMControlEnv(name, seed=5)
    before, actions, dts, results = live_run(env, 12, seed=1)
    # The whole run again from its first state, in the same instance after playing on.
    env.set_state(before[0])
    assert_identical(
        [env.step(a, dt=d, return_state=True) for a, d in zip(actions, dts, strict=True)], results
    )
    # Each step alone from its recorded state, in an instance seeded apart.
    fresh = env.clone(seed=123)
    for state, action, dt, expected in zip(before, actions, dts, results, strict=True):
        assert_identical(fresh.step(action, state=state, dt=dt), expected)
    # One batch, the states as a list and as one stacked array.
    for states in (before, np.stack(before)):
        batch = fresh.step_batch(actions, states=states, dt=dts)
        assert_identical(batch, tuple(list(column) for column in zip(*results, strict=True)))
    fresh.close()
    env.close()


def test_a_restore_within_the_episode_skips_the_episode_block():
    env = DMControlEnv("reacher-easy", seed=0)
    first, *_ = env.reset()
    later, *_ = env.step(random_actions(env, 1, seed=0)[0], state=first)
    codec = env._codec
    block = codec.episode_bytes
    env.set_state(later)
    assert codec.episode_bytes is block  # the generator and the target were left alone
    env.reset()
    assert codec.episode_bytes is not block
    env.set_state(later)
    assert codec.episode_bytes == block  # another episode's state brought its block back
    env.close()


def test_states_from_bytes_restore_like_the_originals():
    """A state rebuilt from its bytes (a worker's, a file's) is as good as the original."""
    env = DMControlEnv("walker-walk", seed=2)
    before, actions, dts, results = live_run(env, 6, seed=3)
    copies = [np.frombuffer(state.tobytes()) for state in before]
    assert_identical(env.step_batch(actions, states=copies, dt=dts)[0], [r[0] for r in results])
    env.close()


@pytest.mark.parametrize("vectorization", ["sync", "async"])
def test_make_vec_plans_from_flat_states_like_the_single_env(vectorization):
    envs = plangym.make_vec("reacher-easy", 2, vectorization, seed=0)
    single = DMControlEnv("reacher-easy", seed=0, autoreset=False)
    try:
        envs.reset(seed=1)
        states = envs.get_states()
        assert [s.shape for s in states] == [(single.state_size,)] * 2
        actions = random_actions(single, 5, seed=2)
        batch_states, dts = [states[k % 2] for k in range(5)], [1, 2, 3, 1, 2]
        expected = single.step_batch(actions, states=batch_states, dt=dts)
        assert_identical(tuple(envs.step_batch(actions, batch_states, dts)), expected)
    finally:
        envs.close()
        single.close()


# Bad states ----------------------------------------------------------------------------------
def corrupt(env: DMControlEnv, state: np.ndarray, name: str, index: int, value: float):
    state = state.copy()
    start = next(start for key, start, _ in env.state_layout if key == name)
    state[start + index] = value
    return state


BAD_STATES = {
    "too-short": (lambda env, s: s[:-1], r"shape=\(\d+,\).*another layout"),
    "too-long": (lambda env, s: np.append(s, 0.0), r"shape=\(\d+,\).*another layout"),
    "float32": (lambda env, s: s.astype(np.float32), "float32"),
    "int64": (lambda env, s: s.astype(np.int64), "int64"),
    "2-D": (lambda env, s: np.stack([s, s]), r"shape=\(2, \d+\)"),
    "another-task": (
        lambda env, s: DMControlEnv("walker-run", seed=0).get_state(),
        "a state of walker-run with visualize_reward=True",
    ),
    "other-visualize": (
        lambda env, s: env.clone(visualize_reward=False).get_state(),
        "a state of walker-walk with visualize_reward=False",
    ),
    "no-tag": (lambda env, s: corrupt(env, s, "tag", 0, 0.0), "without this task's tag"),
    "fractional-word": (lambda env, s: corrupt(env, s, "rng_key", 3, 0.5), "uint32 words"),
    "word-too-big": (lambda env, s: corrupt(env, s, "rng_key", 0, 2.0**32), "uint32 words"),
    "rng-pos": (lambda env, s: corrupt(env, s, "rng_pos", 0, 700.0), "rng_pos 700.0"),
    "negative-count": (lambda env, s: corrupt(env, s, "step_count", 0, -1.0), "step_count -1"),
    "nan-count": (lambda env, s: corrupt(env, s, "step_count", 0, np.nan), "step_count nan"),
    "flag": (lambda env, s: corrupt(env, s, "reset_next_step", 0, 0.5), "reset_next_step 0.5"),
    # MuJoCo resets the physics mid-step on a NaN, with only a warning.
    "nan-physics": (lambda env, s: corrupt(env, s, "step_count", -3, np.nan), "nan at position"),
    "inf-physics": (lambda env, s: corrupt(env, s, "step_count", -3, -np.inf), "-inf at position"),
}


@pytest.mark.parametrize("case", sorted(BAD_STATES))
def test_bad_states_are_refused_before_anything_runs(case):
    make_bad, received = BAD_STATES[case]
    env = DMControlEnv("walker-walk", seed=0)
    state, *_ = env.step(random_actions(env, 1, seed=0)[0], state=env.reset()[0])
    bad = make_bad(env, state)
    expected = rf"expected a walker-walk state \(a float64 vector of {env.state_size} values"
    with pytest.raises(ValueError, match=rf"^state: {expected}.*received .*{received}"):
        env.set_state(bad)
    with pytest.raises(ValueError, match=rf"^states\[1\]: {expected}.*received .*{received}"):
        env.step_batch(random_actions(env, 2, seed=1), states=[state, bad])
    assert_identical(env.get_state(), state)
    env.close()


def test_non_arrays_are_type_errors():
    env = DMControlEnv("cartpole-balance", seed=0)
    state = env.get_state()
    with pytest.raises(TypeError, match=r"state: expected a cartpole-balance state .*list"):
        env.set_state(state.tolist())
    assert_identical(env.get_state(), state)
    env.close()
