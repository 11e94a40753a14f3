"""Every ALE/*-v5 game ale-py ships replays exactly, with sticky actions.

For each game: play a few random steps, take the state mid-game, keep playing (the live
timeline), then replay the same actions from the state in the same instance and in a fresh
one. All three must agree to the bit. This is what caught the ALE's post-reset mode
(Qbert, Tetris) and Pitfall II's lossy cartridge save.
"""

import numpy as np
import pytest

import plangym
from plangym.api_tests import assert_identical, replay
from plangym.environment_names import ATARI

V5_GAMES = [name for name in ATARI if name.startswith("ALE/")]


@pytest.mark.parametrize("name", V5_GAMES)
def test_game_replays_exactly(name):
    env = plangym.make(name, repeat_action_probability=0.25)
    rng = np.random.default_rng(0)
    env.seed(0)
    env.reset()
    for action in rng.integers(env.n_actions, size=15):
        env.step(int(action))
    state = env.get_state()
    actions = [int(a) for a in rng.integers(env.n_actions, size=15)]
    live = [env.step(action, return_state=True) for action in actions]
    assert_identical(replay(env, state, actions), live)
    fresh = env.clone()
    assert_identical(replay(fresh, state, actions), live)
    fresh.close()
    env.close()
