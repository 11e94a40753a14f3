"""Box2D: replay states are exact, need a fresh world per reset, and reject bad input.

Everything runs the real Box2D simulator (no mocks). FastLunarLander, plangym's own
lander, is tested in ``tests/control/test_lunar_lander.py``.
"""

import importlib
import pickle
import re

import gymnasium as gym
import numpy as np
import pytest

import plangym
from plangym import api_tests
from plangym.api_tests import assert_identical
from plangym.control.box_2d import Box2DEnv, ReplayState
from plangym.control.box_2d import env as box_2d_env
from plangym.control.box_2d.replay_state import HEADER_BYTES
from plangym.environment_names import BOX_2D
from plangym.exactness import difference, replay
from plangym.selfcheck import run_checks
from tests.helpers.missing_package import hide_package
from tests.helpers.worker_parity import assert_batch_and_resumption_like_single, single_and_workers

GAMES = [
    "LunarLander-v3",
    "LunarLanderContinuous-v3",
    "BipedalWalker-v3",
    "BipedalWalkerHardcore-v3",
    "CarRacing-v3",
]
# CarRacing draws its 96x96 observation every step: fewer steps keep the file fast.
REPLAY_STEPS = {"CarRacing-v3": 40}


class TestBox2DConformance(api_tests.TestPlangymEnv):
    @pytest.fixture(params=["LunarLander-v3", "BipedalWalker-v3"])
    def env(self, request):
        env = plangym.make(request.param)
        env.api_test_steps = 20
        yield env
        env.close()


def seeded_actions(env, n: int, seed: int) -> list:
    env.action_space.seed(seed)
    return [env.sample_action() for _ in range(n)]


def warm_state(env, seed: int, n_steps: int = 10) -> np.ndarray:
    env.seed(seed)
    env.reset()
    for action in seeded_actions(env, n_steps, seed + 1):
        env.step(action)
    return env.get_state()


CASES = [(name, {}) for name in GAMES] + [
    ("LunarLander-v3", {"enable_wind": True, "turbulence_power": 2.0}),
    ("BipedalWalker-v3", {"frameskip": 3, "remove_time_limit": False}),
]


@pytest.mark.parametrize(("name", "kwargs"), CASES, ids=[f"{n}-{k}" for n, k in CASES])
def test_replay_is_exact_in_the_same_and_a_fresh_instance(name, kwargs):
    env = plangym.make(name, autoreset=False, **kwargs)
    state = warm_state(env, seed=3)
    actions = seeded_actions(env, REPLAY_STEPS.get(name, 100), seed=4)
    first = replay(env, state, actions)
    for action in seeded_actions(env, 30, seed=5):  # move on, then another episode
        env.step(action)
    env.reset()
    env.step(env.sample_action())
    assert difference(first, replay(env, state, actions)) is None
    fresh = env.clone()
    assert difference(first, replay(fresh, state, actions)) is None
    rebuilt = pickle.loads(pickle.dumps(env))  # another process would do the same
    assert difference(first, replay(rebuilt, state, actions)) is None
    for instance in (env, fresh, rebuilt):
        instance.close()


def keep_the_world(unwrapped) -> None:
    """What gymnasium does between resets: destroy the bodies, keep the b2World."""
    unwrapped._destroy()


@pytest.mark.parametrize("fresh", [True, False])
def test_replay_needs_a_fresh_world_per_reset(monkeypatch, fresh):
    """With one live env the replay runs in the world of earlier episodes. gymnasium's
    BipedalWalker keeps its world across resets, and a reused world replays differently:
    without fresh_world this test fails."""
    env = Box2DEnv("BipedalWalker-v3", live_envs=1, autoreset=False)
    state = warm_state(env, seed=0, n_steps=1)
    actions = seeded_actions(env, 60, seed=1)
    expected = replay(env.clone(), state, actions)
    if not fresh:
        monkeypatch.setattr(box_2d_env, "fresh_world", keep_the_world)
    env.reset()
    for action in seeded_actions(env, 100, seed=2):  # an episode in between
        env.step(action)
    found = difference(expected, replay(env, state, actions))
    assert (found is None) == fresh, found


def test_gymnasium_reuses_the_world_and_we_do_not():
    env = Box2DEnv("BipedalWalker-v3", live_envs=1)
    unwrapped = env.gym_env.unwrapped
    world = unwrapped.world
    env.reset()
    assert unwrapped.world is not world
    world = unwrapped.world
    unwrapped.reset()  # gymnasium's own reset
    assert unwrapped.world is world


def test_restores_resume_from_the_longest_held_prefix():
    env = Box2DEnv("LunarLander-v3", live_envs=2, autoreset=False)
    root, *_ = env.reset()
    states = [root]
    for action in [2, 2, 1, 3, 0, 2]:
        states.append(env.step(action, state=states[-1])[0])
    steps = []
    original = env.gym_env.step

    def counting(action):
        steps.append(action)
        return original(action)

    env.gym_env.step = counting
    env.set_state(states[-1])  # already held: nothing to step
    env.step(0)
    assert steps == [0]
    steps.clear()
    env.set_state(states[3])  # not a continuation of the held history: another live env
    assert steps == [] and env.gym_env.step is not counting
    env.set_state(states[-1])  # the first env holds states[-1] + one step: replay in the
    assert env.get_state() == states[-1]  # least used one


def test_states_share_history_and_have_value_semantics():
    env = Box2DEnv("LunarLanderContinuous-v3")
    state, *_ = env.reset()
    assert isinstance(state, ReplayState) and state.nbytes == HEADER_BYTES
    assert not state.array.flags.writeable
    action = np.array([0.7, -0.8], dtype=np.float32)
    for _ in range(5):
        state, *_ = env.step(action, state=state)
    assert state.nbytes == HEADER_BYTES + 5 * 8 and state.n_steps == 5
    copy = pickle.loads(pickle.dumps(state))
    assert copy == state and bytes(copy) == bytes(state)
    assert_identical(env.step(action, state=copy), env.step(action, state=state))
    # float64 and int actions are applied as the float32 action space's values
    as_float64 = env.step(action.astype(np.float64), state=state)
    assert_identical(as_float64, env.step(action, state=state))


def test_time_limit_is_replayed():
    env = Box2DEnv("LunarLander-v3", remove_time_limit=False, autoreset=False)
    env.reset()
    for _ in range(998):
        env.step(0)
    near_limit = env.get_state()
    fresh = env.clone()
    *_, truncated, _ = fresh.step(0, state=near_limit)
    assert not truncated
    *_, truncated, info = fresh.step(0)
    assert truncated and info["n_step"] == 1


def test_pictures_depend_on_the_state_only():
    env = Box2DEnv("BipedalWalker-v3", return_image=True, autoreset=False)
    state = warm_state(env, seed=1)
    action = env.sample_action()
    first = env.step(action, state=state)[-1]["rgb"]
    for _ in range(3):
        env.get_image()  # drawing changes nothing
    assert_identical(env.clone().step(action, state=state)[-1]["rgb"], first)
    lander = Box2DEnv("LunarLander-v3", obs_type="rgb")
    _, obs, _ = lander.reset()
    assert obs.shape == (400, 600, 3) and lander.gym_env.unwrapped.particles == []


def bad_actions(space) -> list:
    if isinstance(space, gym.spaces.Discrete):
        return [-1, int(space.n), 1.5, "a", np.array([1, 2])]
    return [
        np.full(space.shape, np.nan, dtype=np.float32),
        np.full(space.shape, -np.inf, dtype=np.float32),
        np.zeros(space.shape[0] + 1, dtype=np.float32),
        0.5,
    ]


@pytest.mark.parametrize("name", ["LunarLander-v3", "BipedalWalker-v3", "CarRacing-v3"])
def test_bad_actions_are_rejected_before_stepping(name):
    env = plangym.make(name)
    state = warm_state(env, seed=0, n_steps=3)
    for bad in bad_actions(env.action_space):
        with pytest.raises((ValueError, TypeError), match="action"):
            env.step(bad, state=state)
        with pytest.raises((ValueError, TypeError), match=r"actions\[1\]"):
            env.step_batch([env.sample_action(), bad], states=[state, state])
        assert env.get_state() == state
    env.close()


@pytest.mark.timeout(60)
@pytest.mark.parametrize("name", ["BipedalWalker-v3", "LunarLander-v3"])
@pytest.mark.parametrize(
    ("words", "message"),
    [(bytes(48), r"even increment \(0\)"), (np.full(6, 3, "<u8").tobytes(), "has_uint32=3")],
)
def test_corrupt_generator_words_are_refused_before_any_env_sees_them(name, words, message):
    # All-zero words made BipedalWalker's terrain generation loop forever; random ones
    # raised numpy's bare OverflowError in the middle of a batch.
    env = plangym.make(name)
    state = warm_state(env, seed=0, n_steps=3)
    raw = bytearray(bytes(state))
    raw[8:HEADER_BYTES] = words
    bad = ReplayState(bytes(raw), name, env.state_layout.codec.step_bytes)
    with pytest.raises(ValueError, match=rf"^state: expected .*{message}"):
        env.set_state(bad)
    with pytest.raises(ValueError, match=rf"^states\[1\]: expected .*{message}"):
        env.step_batch([env.sample_action()] * 2, states=[state, bad])
    assert env.get_state() == state
    env.close()


def test_foreign_states_are_rejected_before_stepping():
    env = Box2DEnv("LunarLander-v3")
    state = warm_state(env, seed=0, n_steps=3)
    walker_state = Box2DEnv("BipedalWalker-v3").get_state()
    windy_state = Box2DEnv("LunarLander-v3", enable_wind=True).get_state()
    corrupt = bytearray(bytes(state))
    corrupt[-1] = 9  # not one of the 4 actions
    raw = state.array.copy()
    cases = [
        (ReplayState(bytes(3), "LunarLander-v3", 1), ValueError, "header plus whole steps"),
        (raw, TypeError, r"received ndarray\(shape=\(59,\), dtype=uint8\) \(a bare replay"),
        (raw.astype(np.float32), TypeError, r"received ndarray\(shape=\(59,\), dtype=float32\)$"),
        (list(raw), TypeError, r"received \[np.uint8"),
        (raw[None], TypeError, r"received ndarray\(shape=\(1, 59\), dtype=uint8\)$"),
        (7, TypeError, r"received 7 \(int\)$"),
        (bytes(state), TypeError, r"\(bytes\)$"),
        (windy_state, ValueError, "fingerprint differs"),
        (walker_state, ValueError, "fingerprint differs"),
        (ReplayState(bytes(corrupt), "x", 1), ValueError, r"actions outside \[0, 3\]"),
    ]
    for bad, error, message in cases:
        expected = "a LunarLander-v3 state (a ReplayState from get_state(): a 56-byte header"
        with pytest.raises(error, match=f"^state: expected {re.escape(expected)}.*{message}"):
            env.step(0, state=bad)
        with pytest.raises(error, match=r"^states\[1\]: expected a LunarLander-v3 state"):
            env.step_batch([0, 0], states=[state, bad])
        with pytest.raises(error, match=r"^state: expected a LunarLander-v3 state"):
            env.set_state(bad)
        assert env.get_state() == state


def distinct_states(env, n: int) -> list:
    env.seed(7)
    env.reset()
    states = []
    for action in seeded_actions(env, n, seed=8):
        env.step(action, dt=3)
        states.append(env.get_state())
    return states


@pytest.mark.parametrize("backend", ["processes", "ray"])
@pytest.mark.parametrize("name", ["LunarLander-v3", "BipedalWalker-v3"])
def test_workers_step_batches_bit_identically(backend, name, request):
    with single_and_workers(name, backend, request) as (single, vectorized):
        states = distinct_states(single, 8)
        actions = seeded_actions(single, len(states), seed=9)
        assert_batch_and_resumption_like_single(single, vectorized, actions, states)


@pytest.mark.parametrize("name", [name for name in BOX_2D if name != "FastLunarLander-v0"])
def test_selfcheck_passes(name):
    results = run_checks(name, n_steps=20)
    assert {result.status for result in results} == {"PASS", "n/a"}, results


def test_a_missing_extra_is_named(monkeypatch):
    box_2d = "plangym.control.box_2d"
    hide_package(monkeypatch, "Box2D", [box_2d, f"{box_2d}.env", f"{box_2d}.world"])
    with pytest.raises(ImportError, match=r"Box2D environments need the 'box2d' extra"):
        importlib.import_module("plangym.control.box_2d")


def test_rewards_are_python_floats_summed_in_double_precision():
    """BipedalWalker's own rewards are float32: a step of several frames summed them in
    float32, and gave a type other families do not."""
    env = plangym.make("BipedalWalker-v3")
    state, *_ = env.reset(seed=0)
    env.action_space.seed(0)
    actions = [env.sample_action() for _ in range(20)]
    for action in actions:
        many = env.step(action, state=state, dt=5)
        assert type(many[2]) is float
        total, current = 0.0, state
        for _ in range(many[-1]["n_step"]):  # as many as the step applied (it may end)
            current, _, reward, *_ = env.step(action, state=current)
            assert type(reward) is float
            total += reward
        assert many[2] == total
        rewards = env.step_batch([action, action], [state, state], dt=[1, 5])[2]
        assert [type(reward) for reward in rewards] == [float, float] and rewards[1] == total
        state = many[0]
    env.close()
