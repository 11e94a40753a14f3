"""Every ALE/*-v5 game ale-py ships replays exactly, with sticky actions, across a reset.

For each game: play a few random steps, take the state mid-game, keep playing, reset and
play on (the live timeline), then replay the same from the state in the same instance and
in a fresh one whose ALE has drawn its own generator elsewhere. All three must agree to
the bit. This is what caught the ALE's post-reset mode (Qbert, Tetris) and Pitfall II's
lossy cartridge save, and it is what lets states leave the ALE's generator out
(``clone_seeds=False``, the default): the ALE draws from it every frame, but with plangym
applying sticky actions itself nothing, not even a reset, reads what it draws.
"""

import numpy as np
import pytest

import plangym
from plangym.api_tests import assert_identical
from plangym.environment_names import ATARI

V5_GAMES = [name for name in ATARI if name.startswith("ALE/")]


def play_through_a_reset(env, state, actions: list[int]) -> list[tuple]:
    """Restore ``state``, step half the actions, reset, step the rest: every result."""
    env.set_state(state)
    half = len(actions) // 2
    results = [env.step(action, return_state=True) for action in actions[:half]]
    results.append(env.reset())
    results += [env.step(action, return_state=True) for action in actions[half:]]
    return results


@pytest.mark.parametrize("name", V5_GAMES)
def test_game_replays_exactly(name):
    env = plangym.make(name, repeat_action_probability=0.25)
    assert not env.clone_seeds  # the ALE's own generator is not in the states
    rng = np.random.default_rng(0)
    env.seed(0)
    env.reset()
    for action in rng.integers(env.n_actions, size=15):
        env.step(int(action))
    state = env.get_state()
    actions = [int(a) for a in rng.integers(env.n_actions, size=20)]
    live = play_through_a_reset(env, state, actions)
    assert_identical(play_through_a_reset(env, state, actions), live)
    fresh = env.clone()
    ale = fresh.ale
    for _ in range(1 + V5_GAMES.index(name) % 7):  # moves the ALE's generator: 2 draws a frame
        ale.act(ale.getMinimalActionSet()[0])
    assert_identical(play_through_a_reset(fresh, state, actions), live)
    fresh.close()
    env.close()
