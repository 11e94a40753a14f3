"""The rules ``plangym.make`` applies to ``wrappers=``: which are refused, which warn, and how.

A TimeLimit is taken only where states hold its count (one count: a second is refused);
AtariPreprocessing may not skip frames on top of an Atari env's frameskip; wrappers that
keep state of their own (subclasses too) warn; a wrapper that needs the TimeLimit plangym
removed is told so; ``reset(seed=...)`` resets through the wrappers once, as gymnasium does.
"""

import functools
import importlib.util

import gymnasium
import numpy as np
import pytest
from gymnasium.wrappers import FrameStackObservation, TimeAwareObservation, TimeLimit

import plangym
from plangym.core.wrappers import STATEFUL_WRAPPERS, stateful_wrapper_names


def installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def needs(module: str):
    return pytest.mark.skipif(not installed(module), reason=f"{module} is not installed")


def time_limit(steps: int) -> tuple:
    return (TimeLimit, {"max_episode_steps": steps})


def still(env):
    """An action of ``env``: 0, or zeros for continuous actions."""
    space = env.action_space
    return np.zeros(space.shape, space.dtype) if space.shape else 0


def truncations_from(env, state, n: int) -> list[bool]:
    """The truncated flags of ``n`` steps from ``state``, all with the action :func:`still`."""
    flags = [env.step(still(env), state=state)[4]]
    return flags + [env.step(still(env))[3] for _ in range(n - 1)]


# A TimeLimit where states have no room for its count ---------------------------------------
@pytest.mark.parametrize(
    ("name", "module", "family"),
    [
        pytest.param("Airstriker-Genesis", "stable_retro", "RetroEnv", id="retro"),
        pytest.param("SuperMarioBros-v0", "nes_py", "MarioEnv", id="mario"),
    ],
)
def test_retro_and_nes_refuse_a_time_limit_and_free_their_emulator(name, module, family):
    if not installed(module):
        pytest.skip(f"{module} is not installed")
    for wrapper in (time_limit(8), lambda env: TimeLimit(env, 8)):
        with pytest.raises(ValueError, match=rf"wrappers: {family} states do not hold a TimeLim"):
            plangym.make(name, wrappers=[wrapper])
    # The refused env closed its emulator: stable-retro allows one per process.
    plangym.make(name).close()


# A second TimeLimit where states hold one count --------------------------------------------
ONE_COUNT = [
    pytest.param("CartPole-v1", id="classic"),
    pytest.param("Pendulum-v1", id="pendulum"),
    pytest.param("Hopper-v5", id="mujoco", marks=needs("mujoco")),
]


@pytest.mark.parametrize("name", ONE_COUNT)
def test_a_time_limit_on_top_of_the_registered_one_is_refused(name):
    with pytest.raises(ValueError, match=r"pass remove_time_limit=True to use yours, or drop"):
        plangym.make(name, remove_time_limit=False, wrappers=[time_limit(5000)])


@pytest.mark.parametrize("name", ONE_COUNT)
def test_two_time_limits_in_wrappers_are_refused(name):
    with pytest.raises(ValueError, match=r"would have 2 TimeLimits.*keep one TimeLimit"):
        plangym.make(name, wrappers=[time_limit(8), time_limit(100)])
    with pytest.raises(ValueError, match=r"would have 2 TimeLimits"):  # one item building both
        plangym.make(name, wrappers=[lambda env: TimeLimit(TimeLimit(env, 8), 100)])


@pytest.mark.parametrize("name", ONE_COUNT)
def test_one_time_limit_either_way_is_taken_and_held_in_the_state(name):
    plangym.make(name, remove_time_limit=False).close()
    env = plangym.make(name, autoreset=False, wrappers=[time_limit(8)])
    state, *_ = env.reset(seed=0)
    for _ in range(5):
        state, *_ = env.step(still(env), state=state)
    first = truncations_from(env, state, 5)
    env.reset(seed=1)
    assert truncations_from(env, state, 5) == first == [False, False, True, True, True]
    env.close()


@needs("Box2D")
def test_box2d_takes_two_time_limits_and_replays_both():
    env = plangym.make("LunarLander-v3", autoreset=False, wrappers=[time_limit(8), time_limit(100)])
    state, *_ = env.reset(seed=0)
    for _ in range(5):
        state, *_ = env.step(0, state=state)
    first = truncations_from(env, state, 5)
    env.step(0)
    env.reset(seed=1)
    assert truncations_from(env, state, 5) == first == [False, False, True, True, True]


# AtariPreprocessing and Atari's frameskip ----------------------------------------------------
KEEPS_STATE = pytest.mark.filterwarnings("ignore:wrappers. AtariPreprocessing keeps state")


@needs("cv2")
@KEEPS_STATE
def test_atari_preprocessing_is_refused_on_top_of_frameskip():
    preprocess = gymnasium.wrappers.AtariPreprocessing
    with pytest.raises(ValueError, match=r"frame_skip=4 .* frameskip=5 .*20 frames a step"):
        plangym.make("ALE/MsPacman-v5", wrappers=[preprocess])
    # Either skip alone is taken, and info["n_step"] counts the frames played.
    for frameskip, frame_skip in ((1, 4), (5, 1)):
        env = plangym.make(
            "ALE/MsPacman-v5",
            frameskip=frameskip,
            autoreset=False,
            wrappers=[functools.partial(preprocess, frame_skip=frame_skip)],
        )
        env.reset(seed=0)
        before = env.ale.getEpisodeFrameNumber()
        *_, info = env.step(0)
        assert env.ale.getEpisodeFrameNumber() - before == frameskip * frame_skip
        assert info["n_step"] == frameskip
        env.close()


@needs("cv2")
@KEEPS_STATE
@pytest.mark.parametrize("seed", [0, 1, 3])
def test_atari_reset_seed_through_atari_preprocessing_is_gymnasiums_episode(seed):
    """The no-ops are drawn once, from the seeded generator, as gymnasium's reset draws them."""
    preprocess = gymnasium.wrappers.AtariPreprocessing
    settings = {"frameskip": 1, "repeat_action_probability": 0.0}
    ours = plangym.make("ALE/MsPacman-v5", wrappers=[preprocess], autoreset=False, **settings)
    theirs = preprocess(gymnasium.make("ALE/MsPacman-v5", **settings))
    try:
        _, obs, _ = ours.reset(seed=seed)
        their_obs, _ = theirs.reset(seed=seed)
        frames = ours.ale.getEpisodeFrameNumber()
        assert frames == theirs.unwrapped.ale.getEpisodeFrameNumber()
        assert np.array_equal(obs, their_obs)
        for action in (3, 1, 4, 2):
            obs, reward, *_ = ours.step(action)
            their_obs, their_reward, *_ = theirs.step(action)
            assert np.array_equal(obs, their_obs) and reward == their_reward
    finally:
        ours.close()
        theirs.close()


def test_a_public_seed_still_resets_through_the_wrappers():
    """seed() starts an episode for the wrappers too (only reset(seed=) resets them later)."""
    env = plangym.make("CartPole-v1", wrappers=[time_limit(8)], autoreset=False)
    env.reset(seed=0)
    for _ in range(6):
        env.step(0)
    env.seed(3)
    assert not any(env.step(0)[3] for _ in range(7))


# Wrappers that keep state of their own -------------------------------------------------------
class PaddedStack(FrameStackObservation):
    """A user's frame stack: it keeps the frames its base keeps."""


def test_stateful_wrapper_names_follow_the_mro():
    kinds = [PaddedStack, gymnasium.wrappers.ClipReward, TimeLimit, gymnasium.wrappers.Autoreset]
    assert stateful_wrapper_names(kinds) == ["Autoreset", "FrameStackObservation"]
    assert stateful_wrapper_names([]) == []
    assert {"Autoreset", "RenderCollection"} <= STATEFUL_WRAPPERS


@pytest.mark.parametrize(
    ("wrapper", "name"),
    [
        pytest.param(gymnasium.wrappers.Autoreset, "Autoreset", id="autoreset"),
        pytest.param(gymnasium.wrappers.RenderCollection, "RenderCollection", id="render"),
        pytest.param((PaddedStack, {"stack_size": 3}), "FrameStackObservation", id="subclass"),
    ],
)
def test_wrappers_that_keep_state_warn(wrapper, name):
    with pytest.warns(UserWarning, match=rf"wrappers: {name} keeps state of its own"):
        plangym.make("CartPole-v1", wrappers=[wrapper]).close()


# A wrapper that needs the TimeLimit plangym removed --------------------------------------------
def test_a_wrapper_needing_the_removed_time_limit_is_told_why():
    with pytest.raises(ValueError, match=r"must be wrapped by a TimeLimit") as caught:
        plangym.make("CartPole-v1", wrappers=[TimeAwareObservation])
    (note,) = caught.value.__notes__
    assert "plangym removed CartPole-v1's TimeLimit (500 steps)" in note
    assert "remove_time_limit=False to keep it" in note
    with pytest.warns(UserWarning, match="TimeAwareObservation keeps state"):
        env = plangym.make("CartPole-v1", remove_time_limit=False, wrappers=[TimeAwareObservation])
    assert env.observation_space.shape == (5,)


def broken_wrapper(env):
    raise TypeError("broken_wrapper: no env suits me")


def wrapper_wanting_a_limit(env):
    raise ValueError("wrapper_wanting_a_limit: wrap the env in a TimeLimit first")


def test_a_failing_wrapper_keeps_its_error_and_gets_the_note_only_where_a_limit_was_removed():
    with pytest.raises(ValueError, match="TimeLimit first") as caught:
        plangym.make("CartPole-v1", wrappers=[wrapper_wanting_a_limit])
    assert "remove_time_limit=False" in caught.value.__notes__[0]
    with pytest.raises(ValueError, match="TimeLimit first") as caught:
        plangym.make("CartPole-v1", remove_time_limit=False, wrappers=[wrapper_wanting_a_limit])
    assert not hasattr(caught.value, "__notes__")


def test_an_error_that_is_not_about_a_limit_gets_no_note():
    with pytest.raises(TypeError, match="no env suits me") as caught:
        plangym.make("CartPole-v1", wrappers=[broken_wrapper])
    assert not hasattr(caught.value, "__notes__")


# Retro's screen after a restore (documented in retro.md and states.md) ------------------------
@needs("stable_retro")
def test_retro_screen_is_black_right_after_set_state_and_exact_after_a_step():
    env = plangym.make("Airstriker-Genesis", return_image=True, autoreset=False)
    try:
        state, *_ = env.reset(seed=0)
        for t in range(30):
            state, _, _, _, _, info = env.step(t % env.n_actions, state=state)
        reference = env.step(0, state=state)[-1]["rgb"]
        env.set_state(state)
        assert not env.get_image().any() and not env.render().any()
        assert np.array_equal(env.step(0, state=state)[-1]["rgb"], reference)
    finally:
        env.close()
