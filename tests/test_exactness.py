"""Property tests: restoring a state and replaying actions is bit-exact.

Random action sequences (hypothesis) are replayed from a restored state in the same instance
and in a fresh one; every returned element must match to the bit. Atari games run with
sticky actions (repeat_action_probability=0.25), and frames are counted against the ALE's
own frame counter.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import plangym
from plangym.api_tests import assert_identical, replay
from plangym.environment_names import CLASSIC_CONTROL

ATARI_GAMES = [
    "ALE/MsPacman-v5",
    "ALE/Pong-v5",
    "ALE/Breakout-v5",
    "ALE/Qbert-v5",
    "ALE/SpaceInvaders-v5",
    "ALE/Seaquest-v5",
    "ALE/Asteroids-v5",
    "ALE/Enduro-v5",
    "ALE/Freeway-v5",
    "ALE/MontezumaRevenge-v5",
    "ALE/Boxing-v5",
    "ALE/Skiing-v5",
]

SEEDS = st.integers(0, 2**32 - 1)
ATARI_WARMUPS = st.integers(0, 30)  # steps before the state replayed from

_ENVS: dict = {}


def shared_env(name: str, **kwargs):
    """One env per configuration for the whole module (building an ALE takes ~50 ms)."""
    key = (name, tuple(sorted(kwargs.items())))
    if key not in _ENVS:
        _ENVS[key] = plangym.make(name, **kwargs)
    return _ENVS[key]


@pytest.fixture(scope="module", autouse=True)
def _close_shared_envs():
    yield
    for env in _ENVS.values():
        env.close()
    _ENVS.clear()


def random_actions(env, seed: int, n: int) -> list:
    env.action_space.seed(seed)
    return [env.action_space.sample() for _ in range(n)]


def warm_state(env, seed: int, n_steps: int):
    env.seed(seed)
    env.reset()
    for action in random_actions(env, seed, n_steps):
        env.step(action)
    return env.get_state()


def check_replay(env, seed: int, warmup: int, length: int, dt: int) -> None:
    """Replay random actions from a warm state: twice in ``env``, once in a fresh clone."""
    state = warm_state(env, seed, warmup)
    actions = random_actions(env, seed + 1, length)
    expected = replay(env, state, actions, dt=dt)
    assert_identical(replay(env, state, actions, dt=dt), expected)
    fresh = env.clone()
    assert_identical(replay(fresh, state, actions, dt=dt), expected)
    fresh.close()


@pytest.mark.parametrize("name", CLASSIC_CONTROL)
@pytest.mark.parametrize("remove_time_limit", [True, False])
@settings(max_examples=15)
@given(seed=SEEDS, warmup=st.integers(0, 40), length=st.integers(1, 80), dt=st.integers(1, 3))
def test_classic_control_replay_is_exact(name, remove_time_limit, seed, warmup, length, dt):
    env = shared_env(name, remove_time_limit=remove_time_limit)
    check_replay(env, seed, warmup, length, dt)


@pytest.mark.parametrize("name", ["CartPole-v1", "Acrobot-v1"])
def test_classic_control_replay_through_many_autoresets(name):
    """Terminal steps reset the env from its generator; the replay must follow."""
    env = shared_env(name, remove_time_limit=False)
    state = warm_state(env, 3, 0)
    actions = random_actions(env, 4, 600)
    expected = replay(env, state, actions, dt=3)
    ends = sum(bool(step[3] or step[4]) for step in expected)
    assert ends >= 3
    assert_identical(replay(env.clone(), state, actions, dt=3), expected)


@pytest.mark.parametrize("name", ATARI_GAMES)
@settings(max_examples=6)
@given(seed=SEEDS, warmup=ATARI_WARMUPS, length=st.integers(1, 30), dt=st.integers(1, 3))
def test_atari_replay_with_sticky_actions_is_exact(name, seed, warmup, length, dt):
    env = shared_env(name, repeat_action_probability=0.25)
    check_replay(env, seed, warmup, length, dt)


@pytest.mark.parametrize("name", ATARI_GAMES[:4])
@settings(max_examples=8)
@given(seed=SEEDS, warmup=ATARI_WARMUPS, dt=st.integers(1, 4), frameskip=st.integers(1, 6))
def test_atari_frames_match_the_ale_frame_counter(name, seed, warmup, dt, frameskip):
    env = shared_env(name, repeat_action_probability=0.25, frameskip=frameskip)
    state = warm_state(env, seed, warmup)
    before = env.ale.getEpisodeFrameNumber()
    *_, terminal, truncated, info = env.step(env.sample_action(), state=state, dt=dt)
    if not (terminal or truncated):
        assert env.ale.getEpisodeFrameNumber() - before == dt * frameskip
        assert info["episode_frame_number"] - before == dt * frameskip
    assert info["episode_frame_number"] - before == info["n_step"]
    assert info["n_step"] == dt * frameskip or terminal or truncated


@pytest.mark.parametrize("name", ATARI_GAMES[:3])
@settings(max_examples=6)
@given(seed=SEEDS, dt=st.integers(2, 4))
def test_atari_dt_equals_repeated_single_steps(name, seed, dt):
    """step(a, dt=k) lands in the same state as k steps of dt=1 (frames are not skipped)."""
    env = shared_env(name, repeat_action_probability=0.25)
    state = warm_state(env, seed, 10)
    action = random_actions(env, seed, 1)[0]
    together = env.step(action, state=state, dt=dt)
    env.set_state(state)
    for _ in range(dt):
        apart = env.step(action, return_state=True)
    if not (together[3] or together[4]):
        assert_identical(together[0], apart[0])
        assert_identical(together[1], apart[1])


@pytest.mark.parametrize("name", ["CartPole-v1", "Pendulum-v1", "ALE/MsPacman-v5"])
@settings(max_examples=8)
@given(data=st.data())
def test_step_batch_equals_repeated_step(name, data):
    env = shared_env(name)
    seed = data.draw(SEEDS)
    pool = [warm_state(env, seed + i, 5 * i) for i in range(3)]
    n = data.draw(st.integers(0, 12))
    picks = data.draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))
    dts = data.draw(st.lists(st.integers(1, 3), min_size=n, max_size=n))
    actions = random_actions(env, seed, n)
    states = [pool[i] for i in picks]
    batch = env.step_batch(actions, states=states, dt=dts)
    single = [env.step(a, state=s, dt=d) for a, s, d in zip(actions, states, dts, strict=True)]
    expected = tuple(list(column) for column in zip(*single, strict=True)) or ([],) * 6
    assert_identical(batch, expected)


def test_sticky_actions_are_actually_sticky():
    """With p=0.25 some frames repeat the previous action: trajectories differ from p=0."""
    sticky = shared_env("ALE/Breakout-v5", repeat_action_probability=0.25)
    plain = shared_env("ALE/Breakout-v5", repeat_action_probability=0.0)
    outcomes = []
    for env in (sticky, plain):
        env.seed(0)
        env.reset()
        outcomes.append([env.step(a)[0] for a in [1, 2, 3, 2, 3] * 10])
    assert any(not np.array_equal(a, b) for a, b in zip(*outcomes, strict=True))


def test_states_compare_games_by_value():
    env = shared_env("ALE/Pong-v5")
    state, *_ = env.reset()
    same = env.step(0, state=state)[0]
    again = env.step(0, state=state)[0]
    other = env.step(2, state=state, dt=5)[0]
    assert np.array_equal(same, again)
    assert not np.array_equal(same, other)
