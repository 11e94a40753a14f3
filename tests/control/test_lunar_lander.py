"""FastLunarLander: plangym's own lander physics, exact record states, no Box2D needed."""

import importlib
import pickle

import numpy as np
import pytest

import plangym
from plangym import api_tests
from plangym.api_tests import assert_identical
from plangym.control.lunar_lander import LunarLander
from plangym.control.lunar_lander.physics import HELIPAD_Y
from plangym.exactness import difference, replay
from plangym.selfcheck import run_checks
from tests.helpers.missing_package import hide_package
from tests.helpers.worker_parity import assert_batch_and_resumption_like_single, single_and_workers

NAME = "FastLunarLander-v0"


class TestConformance(api_tests.TestPlangymEnv):
    @pytest.fixture(params=[{}, {"continuous": True}], ids=["discrete", "continuous"])
    def env(self, request):
        env = plangym.make(NAME, **request.param)
        yield env
        env.close()


def seeded_actions(env, n: int, seed: int) -> list:
    env.action_space.seed(seed)
    return [env.sample_action() for _ in range(n)]


def controller(obs: np.ndarray, continuous: bool):
    """A PD law in the spirit of gymnasium's heuristic: lean to the pad, hover down to it."""
    x, y, vx, vy, angle, spin, left, right = obs.tolist()
    lean = min(max(0.5 * x + vx, -0.4), 0.4)
    turn = (lean - angle) * 0.5 - spin
    lift = (0.55 * abs(x) - y) * 0.5 - vy * 0.5
    if left or right:  # down: just soften the touch
        turn, lift = 0.0, -vy * 0.5
    if continuous:
        return np.clip(np.array([lift * 20 - 1, -turn * 20]), -1, 1).astype(np.float32)
    if lift > abs(turn) and lift > 0.05:
        return 2
    return 3 if turn < -0.05 else 1 if turn > 0.05 else 0


def test_states_are_fixed_layout_records():
    env = LunarLander(autoreset=False)
    state, *_ = env.reset()
    assert state.shape == () and state.dtype is env.state_dtype and not state.flags.writeable
    assert state["terrain"].shape == (11,) and (state["terrain"][4:7] == HELIPAD_Y).all()
    assert int(state["elapsed_steps"]) == 0 and not state["game_over"]
    states = env.step_batch([2, 0, 1], states=[state] * 3)[0]
    assert all(s.dtype is env.state_dtype for s in states)  # one interned dtype: batches
    assert len({s.tobytes() for s in states}) == 3
    assert_identical(pickle.loads(pickle.dumps(state)), state)


@pytest.mark.parametrize("deterministic", [False, True])
def test_replay_is_exact_over_episode_boundaries(deterministic):
    env = plangym.make(NAME, deterministic=deterministic)  # autoreset: new episodes inside
    env.seed(3)
    env.reset()
    for action in seeded_actions(env, 10, seed=4):
        env.step(action)
    state = env.get_state()
    actions = seeded_actions(env, 200, seed=5)
    first = replay(env, state, actions)
    assert sum(step[3] for step in first) >= 1  # random play crashes: episodes end
    for action in seeded_actions(env, 30, seed=6):  # move on, then another episode
        env.step(action)
    env.reset()
    assert difference(first, replay(env, state, actions)) is None
    for other in (env.clone(), pickle.loads(pickle.dumps(env))):
        assert difference(first, replay(other, state, actions)) is None
        other.close()


@pytest.mark.parametrize("backend", ["processes", "ray"])
def test_workers_step_batches_bit_identically(backend, request):
    with single_and_workers(NAME, backend, request) as (single, vectorized):
        single.seed(7)
        states = [single.step(a, dt=3, return_state=True)[0] for a in seeded_actions(single, 8, 8)]
        actions = seeded_actions(single, len(states), seed=9)
        assert_batch_and_resumption_like_single(single, vectorized, actions, states)


@pytest.mark.parametrize("continuous", [False, True])
def test_the_heuristic_lands(continuous):
    env = LunarLander(continuous=continuous, autoreset=False, render_mode=None)
    landed = 0
    for seed in range(10):
        env.seed(seed)
        _, obs, _ = env.reset()
        total = 0.0
        for _ in range(1000):
            obs, reward, terminal, *_ = env.step(controller(obs, continuous))
            total += reward
            if terminal:
                break
        landed += reward == 100.0 and total > 100 and obs[6] == obs[7] == 1.0
    assert landed >= 8


def test_free_fall_crashes_and_the_main_engine_slows_the_fall():
    env = LunarLander(deterministic=True, autoreset=False)
    state, *_ = env.reset()
    falling = replay(env, state, [0] * 200)
    crash = next(i for i, step in enumerate(falling) if step[3])
    assert falling[crash][2] == -100.0 and falling[crash][0]["game_over"]
    burning = replay(env, state, [2] * 40)
    assert burning[-1][1][3] > falling[39][1][3]  # vertical speed, observed
    assert not any(step[3] for step in burning)


def test_deterministic_episodes_are_all_the_same():
    env = LunarLander(deterministic=True)
    runs = []
    for seed in (1, 2):
        env.seed(seed)
        state, *_ = env.reset()
        assert (state["terrain"] == HELIPAD_Y).all()
        runs.append([env.step(2)[:2] for _ in range(30)])
    assert_identical(runs[0], runs[1])


def test_time_limit_is_part_of_the_state():
    env = LunarLander(remove_time_limit=False, deterministic=True, autoreset=False)
    state, *_ = env.reset()
    near_limit = state.copy()
    near_limit["elapsed_steps"] = 999
    assert env.step(2, state=near_limit)[4]  # truncated at 1000, as gymnasium
    assert not env.step(2, state=state)[4]
    assert plangym.make(NAME).remove_time_limit


def bad_actions(space) -> list:
    if hasattr(space, "n"):
        return [-1, 4, 1.5, "a", np.array([1, 2])]
    return [np.full(2, np.nan, np.float32), np.full(2, np.inf, np.float32), np.zeros(3), 0.5]


@pytest.mark.parametrize("continuous", [False, True])
def test_bad_input_is_rejected_before_stepping(continuous):
    env = LunarLander(continuous=continuous)
    state, *_ = env.reset()
    for bad in bad_actions(env.action_space):
        with pytest.raises((ValueError, TypeError), match="action"):
            env.step(bad, state=state)
    record = state.copy()
    foreign = [
        plangym.make("CartPole-v1").get_state(),
        np.zeros((), dtype=[("body", "<f8", (6,))]),
        np.frombuffer(state.tobytes(), dtype=np.uint8),
        record[None],
        "state",
    ]
    message = r"state: expected a FastLunarLander-v0 state \(a 0-d record array.*received"
    for bad in foreign:
        with pytest.raises(TypeError, match=message):
            env.set_state(bad)
        with pytest.raises(TypeError, match=r"states\[1\]"):
            env.step_batch([env.sample_action()] * 2, states=[state, bad])
        assert_identical(env.get_state(), state)
    with pytest.raises(TypeError, match=r"kwargs: .*received \['enable_wind'\]"):
        LunarLander(enable_wind=True)
    with pytest.raises(ValueError, match="gravity: expected"):
        LunarLander(gravity=-20.0, delay_setup=True)


def test_pictures():
    env = LunarLander(obs_type="rgb", autoreset=False)
    state, obs, _ = env.reset()
    assert obs.shape == (400, 600, 3) and obs.dtype == np.uint8
    assert (obs[-1] == 255).all() and (obs[0, :200] == 0).all()  # ground below, sky above
    first = env.step(2, state=state)[1]
    env.get_image()
    assert_identical(env.clone(obs_type="rgb").step(2, state=state)[1], first)
    with pytest.raises(ValueError, match="render_mode"):
        LunarLander(render_mode="human")
    with pytest.raises(RuntimeError, match="render_mode"):
        LunarLander(render_mode=None).get_image()


def test_selfcheck_passes():
    results = run_checks(NAME, n_steps=20)
    assert {result.status for result in results} == {"PASS", "n/a"}, results


def test_runs_without_box2d(monkeypatch):
    lander = "plangym.control.lunar_lander"
    modules = [lander, f"{lander}.env", f"{lander}.fast_gym", f"{lander}.physics"]
    hide_package(monkeypatch, "Box2D", modules)
    module = importlib.import_module("plangym.control.lunar_lander")
    env = module.LunarLander()
    state, *_ = env.reset()
    assert len(env.step(2, state=state)) == 6
    gym_env = module.FastGymLunarLander()  # plangym 0.1's gymnasium env, the same physics
    gym_env.reset()
    assert len(gym_env.step(2)) == 5
