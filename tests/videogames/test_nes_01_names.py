"""plangym 0.1's names of ``plangym.videogames.nes``: importable, 0.1's calls, exact replay."""

import inspect
from typing import TypeVar

import numpy as np
import pytest

from plangym.videogames.nes.env import entry_points_by_group

with entry_points_by_group():  # the fork's gym reads its plugins the Python 3.11 way
    pytest.importorskip("nes_py", reason="needs the 'nes' extra")

from plangym.exactness import difference
from plangym.videogames.nes import (
    COMPLEX_MOVEMENT,
    SIMPLE_MOVEMENT,
    ActType,
    GymToGymnasiumWrapper,
    JoypadSpace,
    MarioEnv,
    NesEnv,
    NESWrapper,
    ObsType,
    RenderFrame,
)
from plangym.videogames.nes.env import nes_import

NAME = "SuperMarioBros-1-1-v0"
ACTIONS = np.random.default_rng(1).choice([1, 3, 1, 3, 2, 0, 5], 120).tolist()
D, A, S, W = ord("d"), ord("a"), ord("s"), ord("w")
B_KEY, A_KEY = ord("p"), ord("o")


@pytest.fixture
def env():
    env = MarioEnv(NAME, frameskip=4)
    yield env
    env.close()


def run(env, state, actions):
    env.set_state(state)
    return [env.step(action, return_state=True) for action in actions]


def test_names_are_importable_from_the_package():
    from plangym.videogames import nes

    for name in ("ActType", "ObsType", "RenderFrame", "GymToGymnasiumWrapper", "NESWrapper"):
        assert name in nes.__all__
    for alias, name in ((ActType, "ActType"), (ObsType, "ObsType"), (RenderFrame, "RenderFrame")):
        assert isinstance(alias, TypeVar)
        assert alias.__name__ == name


def test_signatures_take_01_calls():
    calls = [
        (NesEnv.get_state, ("self",), {"state": None}),
        (MarioEnv.get_state, ("self", None), {}),
        (NesEnv.render, ("self",), {"mode": "rgb_array"}),
        (MarioEnv.get_coords_obs, ("self", "obs"), {"info": {}}),
        (MarioEnv.process_reward, ("self", 0.0, {}), {"obs": None}),
        (MarioEnv.process_terminal, ("self", False), {"info": {}, "obs": None}),
        (JoypadSpace.get_keys_to_action, ("self",), {}),
        (GymToGymnasiumWrapper.__init__, ("self", "env"), {}),
        (GymToGymnasiumWrapper.reset, ("self",), {"seed": None, "options": None}),
        (NESWrapper.__init__, ("self", "wrapped"), {}),
        (NESWrapper.reset, ("self",), {"seed": 1, "options": None}),
    ]
    for function, args, kwargs in calls:
        inspect.signature(function).bind(*args, **kwargs)
    assert inspect.signature(NesEnv.render).parameters["mode"].default == "rgb_array"


def test_keys_to_action_are_01s_for_simple_movement(env):
    keys = env.gym_env.get_keys_to_action()
    assert keys == {
        (): 0,
        (D,): 1,
        (D, A_KEY): 2,
        (D, B_KEY): 3,
        (D, A_KEY, B_KEY): 4,
        (A_KEY,): 5,
        (A,): 6,
    }
    assert len(SIMPLE_MOVEMENT) == len(keys)


def test_get_state_writes_into_the_array_given(env):
    state, *_ = env.reset()
    env.step(1)
    buffer = np.zeros(env.state_size, dtype=np.uint8)
    written = env.get_state(buffer)
    assert written is buffer
    assert (buffer == env.get_state()).all()
    assert (env.get_state(state=None) == buffer).all()
    for wrong in (
        np.zeros(env.state_size, dtype=np.int8),
        np.zeros(env.state_size - 1, dtype=np.uint8),
        np.zeros(2 * env.state_size, dtype=np.uint8)[::2],
        [0] * env.state_size,
    ):
        with pytest.raises(ValueError, match="state_size"):
            env.get_state(wrong)
    # The state written is exact: replay from it equals replay from a fresh one.
    first = run(env, env.get_state(), ACTIONS)
    again = run(env, buffer.copy(), ACTIONS)
    env.get_state(buffer)
    assert difference(first, again, "steps") is None


def test_render_takes_01s_mode():
    env = MarioEnv(NAME, frameskip=4, render_mode=None)
    env.reset()
    frame = env.render(mode="rgb_array")
    assert frame.shape == (240, 256, 3)
    assert frame.dtype == np.uint8
    assert (env.render() == frame).all()
    assert (env.render("rgb_array") == frame).all()
    with pytest.raises(ValueError, match="mode"):
        env.render(mode="ansi")
    env.close()


def test_hooks_take_info_and_agree_with_the_step():
    env = MarioEnv(NAME, frameskip=4, obs_type="coords")
    state, obs, info = env.reset()
    assert (env.get_coords_obs(obs, info) == obs).all()
    assert (env.get_coords_obs(obs) == obs).all()
    for action in ACTIONS:
        obs, reward, terminal, _, info = env.step(action)
        assert (env.get_coords_obs(None, info=info) == obs).all()
        assert env.process_reward(0.0, info) == reward
        assert env.process_terminal(terminal, info) == terminal
        # plangym 0.1's end of a single stage: Mario dying or dead.
        assert env.process_terminal(terminal, info) == bool(
            terminal or info["is_dying"] or info["is_dead"]
        )
        if terminal:
            break
    assert env.process_terminal(False, {"is_dying": True}) is True
    assert env.process_reward(7.0, {"world": 1, "stage": 2, "x_pos": 3}) == 35003.0
    env.close()
    rgb = MarioEnv(NAME, frameskip=4, original_reward=True)
    _, obs, info = rgb.reset()
    assert rgb.get_coords_obs(obs, info) is obs
    assert rgb.process_reward(7.0, info) == 7.0
    rgb.close()
    whole = MarioEnv("SuperMarioBros-v0", frameskip=4)
    whole.reset()
    assert whole.process_terminal(False, {"is_dying": True}) is False  # ends at game over
    whole.close()


class SlowMario(MarioEnv):
    """No FAST_PATHS: every step goes through the process_* hooks."""


@pytest.mark.parametrize("obs_type", ["coords", "rgb"])
def test_hooks_change_nothing_on_the_slow_path(obs_type):
    actions = np.random.default_rng(3).choice([1, 3, 1, 3, 2, 0, 5], 300).tolist()
    fast = MarioEnv(NAME, frameskip=4, obs_type=obs_type)
    slow = SlowMario(NAME, frameskip=4, obs_type=obs_type)
    assert not slow.step_hooks_are_identity()
    state, *_ = fast.reset()
    first = run(fast, state, actions)
    assert any(row[2] for row in first)  # Mario died at least once (autoreset went on)
    assert difference(first, run(slow, state, actions), "steps") is None
    fast.close()
    slow.close()


def test_01_wrapper_chain_around_gym_super_mario_bros():
    smb = nes_import("gym_super_mario_bros").make(NAME)
    compat = GymToGymnasiumWrapper(smb.unwrapped)
    assert compat.unwrapped is smb.unwrapped
    assert compat.action_space == smb.unwrapped.action_space
    chain = NESWrapper(JoypadSpace(compat, COMPLEX_MOVEMENT))
    obs, info = chain.reset(seed=0)
    assert obs.shape == (240, 256, 3)
    assert isinstance(info, dict)
    obs, reward, terminal, truncated, info = chain.step(1)
    assert truncated is False
    assert "x_pos" in info
    assert chain.get_action_meanings()[:2] == ["NOOP", "right"]  # forwarded inward
    assert chain.get_keys_to_action()[(D,)] == 1
    assert chain.observation(obs) is obs
    assert compat.render_mode is None
    compat.close()


def test_replay_stays_exact_after_the_01_calls(env):
    state, *_ = env.reset()
    first = run(env, state, ACTIONS)
    env.render(mode="rgb_array")
    env.get_state(np.empty(env.state_size, dtype=np.uint8))
    env.gym_env.get_keys_to_action()
    env.process_reward(0.0, first[-1][-1])
    env.process_terminal(False, first[-1][-1])
    assert difference(first, run(env, state, ACTIONS), "steps") is None
    assert difference(first, run(env.clone(), state, ACTIONS), "steps") is None
